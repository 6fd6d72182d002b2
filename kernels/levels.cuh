/* The multi-pass driver shared by the teaching levels (kernels/level_*.cu). A level is a struct with
 *   kLoads    input elements each thread loads (so one block covers block * kLoads elements),
 *   kScratch  whether its kernel needs a global scratch of one accumulator per thread (the global-memory levels),
 *   launch<In, Acc, Op>(grid, block, stream, in, n, out, scratch), which reduces each block's slice to out[block].
 * Pass 1 reduces the input to one partial per block; each further pass reduces the previous partials the same way,
 * ping-ponging between two buffers (the tutorial reduces in place, racing blocks that read what others write),
 * until one block remains, which writes the result. */
#ifndef DREDUCE_KERNELS_LEVELS_CUH
#define DREDUCE_KERNELS_LEVELS_CUH

#include <limits.h>

#include "common.cuh"
#include "internal.h"

namespace dr_levels {

inline size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
inline size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }
inline uint64_t log2_ceil(uint64_t x)
{
    uint64_t lg = 0;
    while ((1ull << lg) < x) ++lg;
    return lg;
}

template <class Level, class In, class Acc, class Op> cudaError_t plan(const dr_gpu_reduce_t *r, dr_gpu_plan_t *p)
{
    const size_t per_block = (size_t)r->block * Level::kLoads;
    size_t m = r->n;
    p->passes = 0;
    p->serial_depth = 0;
    for (;;) {
        size_t grid = m == 0 ? 1 : ceil_div(m, per_block);
        if (grid > (size_t)INT_MAX || p->passes == DR_GPU_MAX_PASSES) return cudaErrorInvalidValue;
        p->grid[p->passes++] = grid;
        p->serial_depth += Level::kLoads + log2_ceil((uint64_t)r->block);
        if (grid == 1) break;
        m = grid;
    }
    const size_t grid0 = p->grid[0], grid1 = p->passes > 1 ? p->grid[1] : 0;
    p->work_bytes = align256(grid0 * sizeof(Acc)) + align256(grid1 * sizeof(Acc));
    if (Level::kScratch) p->work_bytes += align256(grid0 * (size_t)r->block * sizeof(Acc));
    return cudaSuccess;
}

template <class Level, class In, class Acc, class Op>
cudaError_t run(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *p, cudaStream_t s, cudaEvent_t *ev)
{
    char *work = static_cast<char *>(r->d_work);
    Acc *buf[2] = {reinterpret_cast<Acc *>(work), reinterpret_cast<Acc *>(work + align256(p->grid[0] * sizeof(Acc)))};
    const size_t grid1 = p->passes > 1 ? p->grid[1] : 0;
    Acc *scratch = Level::kScratch ? reinterpret_cast<Acc *>(work + align256(p->grid[0] * sizeof(Acc)) +
                                                              align256(grid1 * sizeof(Acc)))
                                   : nullptr;
    cudaError_t err;
    size_t m = r->n;
    for (int pass = 0; pass < p->passes; ++pass) {
        if (ev && (err = cudaEventRecord(ev[pass], s)) != cudaSuccess) return err;
        Acc *out = pass == p->passes - 1 ? static_cast<Acc *>(r->d_result) : buf[pass % 2];
        if (pass == 0)
            Level::template launch<In, Acc, Op>(p->grid[0], r->block, s, static_cast<const In *>(r->d_in), m, out,
                                                scratch);
        else
            Level::template launch<Acc, Acc, Op>(p->grid[pass], r->block, s, buf[(pass - 1) % 2], m, out, scratch);
        if ((err = cudaGetLastError()) != cudaSuccess) return err;
        m = p->grid[pass];
    }
    if (ev) return cudaEventRecord(ev[p->passes], s);
    return cudaSuccess;
}

} // namespace dr_levels

/* Defines dr_gpu_<name>_plan and dr_gpu_<name>_run (kernels/internal.h) for Level over every table row. */
#define DR_DEFINE_LEVEL(name, Level)                                                                           \
    namespace {                                                                                                \
    struct name##_plan_fn {                                                                                    \
        const dr_gpu_reduce_t *r;                                                                              \
        dr_gpu_plan_t *p;                                                                                      \
        template <class In, class Acc, class Op> cudaError_t call() const                                      \
        {                                                                                                      \
            return dr_levels::plan<Level, In, Acc, Op>(r, p);                                                  \
        }                                                                                                      \
    };                                                                                                         \
    struct name##_run_fn {                                                                                     \
        const dr_gpu_reduce_t *r;                                                                              \
        const dr_gpu_plan_t *p;                                                                                \
        cudaStream_t s;                                                                                        \
        cudaEvent_t *ev;                                                                                       \
        template <class In, class Acc, class Op> cudaError_t call() const                                      \
        {                                                                                                      \
            return dr_levels::run<Level, In, Acc, Op>(r, p, s, ev);                                            \
        }                                                                                                      \
    };                                                                                                         \
    }                                                                                                          \
    cudaError_t dr_gpu_##name##_plan(const dr_gpu_reduce_t *r, dr_gpu_plan_t *p)                               \
    {                                                                                                          \
        return dr_dispatch(r, name##_plan_fn{r, p});                                                           \
    }                                                                                                          \
    cudaError_t dr_gpu_##name##_run(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *p, cudaStream_t s,          \
                                    cudaEvent_t *ev)                                                           \
    {                                                                                                          \
        return dr_dispatch(r, name##_run_fn{r, p, s, ev});                                                     \
    }

#endif
