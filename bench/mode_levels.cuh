/* dreduce-bench, --levels: the tutorial's levels end to end (bench/dreduce_bench.cu describes it). Needs harness.cuh. */
#ifndef DREDUCE_BENCH_MODE_LEVELS_CUH
#define DREDUCE_BENCH_MODE_LEVELS_CUH

#include "harness.cuh"

namespace {

/* ---------------------------------------------------------------------------------------------------------- */
/* Mode: --levels */

struct Tutorial {
    const char *name;
    double ms, speedup;
};
/* The tutorial's numbers (RTX 3080, 16M elements). */
const Tutorial kTutorial[] = {
    {"neighbored", 12.45, 1.0}, {"interleaved", 9.23, 1.35}, {"smem", 4.87, 2.55}, {"smem2", 3.41, 3.65},
    {"unroll", 2.78, 4.48},     {"shuffle", 2.15, 5.79},     {"complete system", 1.67, 7.46},
    {"cuBLAS Sasum", 1.23, 10.12},
};

const Tutorial *tutorial(const char *name)
{
    for (const Tutorial &t : kTutorial)
        if (strcmp(t.name, name) == 0) return &t;
    return nullptr;
}

int mode_levels(const Options &o)
{
    Ctx c = init_device(o);
    print_header(c, "--levels: the tutorial's kernel levels, end to end");
    const Case &cs = *case_by_id("int32-sum"); /* accumulates in int64 */
    const size_t n = o.levels_n;
    const int warmup = o.warmup >= 0 ? o.warmup : o.quick ? 2 : 5;
    const int reps = o.reps > 0 ? o.reps : o.quick ? 10 : 100;
    const int block = 256;

    Inputs in;
    const int nbuf = rotation_buffers(n * dr_dtype_size(cs.dtype), warmup + reps);
    if (!alloc_inputs(in, cs, n, nbuf)) return 1;
    make_data(c, in);
    const double bytes = (double)in.bytes;
    printf("int32 sum (accumulator %s), n = %zu (%.1f MB), block %d, %d buffer(s) rotating, median of %d reps\n\n",
           dr_acc_kind_name(in.acc), n, bytes / 1e6, block, nbuf, reps);

    const dr_kernel_t kernels[] = {DR_KERNEL_NEIGHBORED, DR_KERNEL_INTERLEAVED, DR_KERNEL_SMEM,
                                   DR_KERNEL_SMEM2,      DR_KERNEL_UNROLL,      DR_KERNEL_SHUFFLE,
                                   DR_KERNEL_MULTIPASS};
    Workspace ws;
    std::vector<OursResult> res;
    /* The tutorial's levels at its block size; multipass at dreduce's default (it is our default kernel as run). */
    for (dr_kernel_t k : kernels) res.push_back(run_ours(c, in, k, k == DR_KERNEL_MULTIPASS ? 0 : block, warmup, reps, ws));
    const CubResult cub = run_cub(c, in, warmup, reps);
    free_inputs(in);

    const double base = res[0].st.median;
    const double t_shuffle = res[5].st.median, t_multi = res[6].st.median;
    printf("%-34s %6s %10s %9s %8s | %12s %9s\n", "level (this GPU)", "passes", "ms", "GB/s", "speedup",
           "tutorial ms", "tut.speed");
    printf("------------------------------------------------------------------------------------------------\n");
    auto row = [&](const char *label, const char *tut_name, int passes, double ms) {
        const Tutorial *t = tut_name ? tutorial(tut_name) : nullptr;
        char tms[32] = "-", tsp[32] = "-";
        if (t) {
            snprintf(tms, sizeof tms, "%.2f", t->ms);
            snprintf(tsp, sizeof tsp, "%.2fx", t->speedup);
        }
        char p[16] = "-";
        if (passes > 0) snprintf(p, sizeof p, "%d", passes);
        printf("%-34s %6s %10.4f %9.1f %7.2fx | %12s %9s\n", label, p, ms, gbs_of(bytes, ms), base / ms, tms, tsp);
    };
    for (size_t i = 0; i < res.size(); ++i) {
        const char *name = dr_kernel_name(kernels[i]);
        row(name, kernels[i] == DR_KERNEL_MULTIPASS ? nullptr : name, res[i].plan.passes, res[i].st.median);
        if (kernels[i] == DR_KERNEL_SHUFFLE)
            row("complete system (= shuffle level)", "complete system", res[i].plan.passes, res[i].st.median);
    }
    row("CUB DeviceReduce::Sum (int64 acc)", nullptr, 0, cub.st.median);
    const Tutorial *blas = tutorial("cuBLAS Sasum");
    printf("%-34s %6s %10s %9s %8s | %12.2f %8.2fx\n", "cuBLAS Sasum (not measured)", "-", "-", "-", "-", blas->ms,
           blas->speedup);
    printf("\nnotes: the tutorial's numbers are its claims for an RTX 3080, not measured here; its \"complete "
           "system\" is the\nshuffle level applied again to its partials until one value is left, which is exactly "
           "our shuffle level\n(all passes). cuBLAS Sasum is a sum of ABSOLUTE values of float32, a different "
           "reduction, so it is not measured.\nspeedup = neighbored ms / row ms on this GPU.\n\n");
    const double x = t_multi > 0 ? t_shuffle / t_multi : 0;
    printf("multipass vs tutorial complete system: %.2fx (target >= 2x)  [same GPU: shuffle level %.4f ms / "
           "multipass %.4f ms]\n",
           x, t_shuffle, t_multi);
    printf("(for orientation only, across GPUs: tutorial's 1.67 ms on an RTX 3080 / our multipass here = %.1fx)\n",
           t_multi > 0 ? 1.67 / t_multi : 0);

    Json j;
    j.obj();
    json_header(j, c, o, "levels");
    j.key("n").u64(n);
    j.key("dtype").str("int32");
    j.key("op").str("sum");
    j.key("acc").str(dr_acc_kind_name(in.acc));
    j.key("block").i64(block);
    j.key("buffers").i64(nbuf);
    j.key("warmup").i64(warmup);
    j.key("levels").arr();
    for (size_t i = 0; i < res.size(); ++i) {
        j.obj();
        j.key("level").str(dr_kernel_name(kernels[i]));
        j.key("passes").i64(res[i].plan.passes);
        j.key("grid").arr();
        for (int p = 0; p < res[i].plan.passes; ++p) j.u64(res[i].plan.grid[p]);
        j.end_arr();
        json_stats(j, res[i].st, bytes);
        j.key("speedup_vs_neighbored").num(base / res[i].st.median);
        const Tutorial *t = tutorial(dr_kernel_name(kernels[i]));
        if (kernels[i] != DR_KERNEL_MULTIPASS && t) {
            j.key("tutorial_ms").num(t->ms);
            j.key("tutorial_speedup").num(t->speedup);
        }
        j.end_obj();
    }
    j.end_arr();
    j.key("cub").obj();
    j.key("api").str(cs.cub_api.c_str());
    json_stats(j, cub.st, bytes);
    j.end_obj();
    j.key("tutorial_rtx3080").arr();
    for (const Tutorial &t : kTutorial) {
        j.obj();
        j.key("name").str(t.name);
        j.key("ms").num(t.ms);
        j.key("speedup").num(t.speedup);
        j.end_obj();
    }
    j.end_arr();
    j.key("complete_system_is").str("shuffle level (all passes)");
    j.key("multipass_vs_complete_system").num(x);
    j.key("target").num(2.0);
    j.key("hold_timeouts").i64(c.hold_timeouts);
    j.end_obj();
    write_json(o, j);
    return 0;
}

} // namespace

#endif
