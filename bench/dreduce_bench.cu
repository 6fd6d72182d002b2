/* dreduce-bench: single-GPU performance of dreduce's kernels against CUB and a device-to-device copy.
 *
 * Modes
 *   (default)  the performance table: for every row the tool offers (src/common/table.h: each type, op and
 *              accumulator, 122 rows: the 82 of the reduction and exact tables, and issue #37's stats, argmin and
 *              argmax of every type and exact stats of the float types; --cases picks some) and each n (2^16, 2^20,
 *              2^24, 2^28, 2^30, 2^31; --sizes for others), our `multipass` kernel (dr_gpu_plan + dr_gpu_reduce;
 *              for stats/argmin/argmax that is kernels/fused.cu) against cub::DeviceReduce doing the same work,
 *              next to the copy ceiling of the same bytes; then a summary, a line per row grouped by type
 *              (print_summary). bench/row_costs.py splits each row's loss against int32 sum into its streaming rate
 *              and its fixed cost, from the JSON.
 *   --levels   the tutorial comparison: each teaching level end to end (all of its passes) on 16M int32, plus
 *              multipass, next to the numbers the tutorial claims for an RTX 3080.
 *   --small    latency for small n: time per reduction in a batch of back-to-back reductions, launched from the
 *              host and replayed as a CUDA graph.
 *
 * What is timed (default and --levels)
 *   Every repetition ("rep") is bracketed by CUDA events on one stream, so a rep's time is GPU time: from the end of
 *   the previous rep to the end of this one, all passes included (for ours: every kernel of the plan; for CUB:
 *   its one or two kernels, and for a stats row all four of its calls; for the copy: one cudaMemcpyAsync). To keep host launch overhead out of those
 *   intervals, reps are enqueued in chunks of kChunk behind a "hold" kernel that spins until the host has enqueued
 *   the whole chunk; the GPU then runs the chunk back to back. (If the hold ever times out the run says so and
 *   the JSON records it: the intervals of that chunk may then include host gaps.)
 *   Before the timed reps come `warmup` untimed reps (default 5). The reported time is the median of the timed
 *   reps (default 200 reps for n <= 2^20, 50 above); min, max and mean are in the JSON.
 *
 * Rotation of inputs
 *   When the input is at most 120 MiB, rep i reads buffer i mod k of k = ceil(240 MiB / bytes) buffers (capped at
 *   the number of reps, since more could never be touched), each holding different data, so a rep does not simply
 *   re-read what the previous one left in the 50-60 MB L2. For sizes whose buffers together fit in L2 the data is
 *   L2-resident anyway (as it is right after the kernel that produced it); those sizes measure latency, not DRAM.
 *   Larger inputs use one buffer (it does not fit in L2).
 *
 * Data and checking
 *   Inputs are generated on the device by dr_gpu_generate (DR_DATA_RANDOM, or DR_DATA_SPREAD with --data spread; a
 *   fresh seed per run, printed; --seed repeats a run); buffer b holds elements [b*n, (b+1)*n) of the generator's
 *   array, so each has its own host reference (dr_reference_compute; for stats also its second pass, about the
 *   buffer's mean, for m2). Every result, warm-up reps included, of ours and of CUB is copied back and checked with
 *   dr_reference_check (dr_reference_check_stats for stats, on what dr_stats_result makes of the partial): ours
 *   with the plan's serial_depth, CUB with depth n (its tree is unknown to us, so its float bound is loose: for
 *   float32 accumulation beyond 2^24 elements it only rejects NaN/inf; the measured errors are in the JSON).
 *   argmin/argmax: ours reports global indices (first_index = the buffer's first element), CUB's offsets are made
 *   global the same way; both must be the reference's element, and CUB's must be ours (the data has no NaN, where
 *   CUB's comparisons would differ). A wrong result aborts the run (exit 1).
 *
 * Numbers
 *   GB/s of a reduction = bytes read (n * element size) / time, 1 GB = 1e9 bytes.
 *   copy GB/s           = (bytes read + bytes written) / time of cudaMemcpyAsync device-to-device of n * size
 *                         bytes (same rotation); the "copy ceiling". If a second buffer of that size does not fit,
 *                         half of the input is copied onto its other half instead (noted).
 *   % copy              = (reduction GB/s) / (copy GB/s) * 100: a reduction reading at the rate the copy moves
 *                         bytes in both directions is at 100%.
 *   ratio               = CUB time / our time: >= 1 means we are faster.
 *
 * CUB does the same work as ours (bench/cub_rows.cuh): where dreduce widens (int32 sum into int64, float32 sum into
 * float64, every 16-bit float row, ...) TransformReduce with the same widening, else Sum/Min/Max or Reduce with the
 * op; an exact sum (CUB has none) beside CUB's float64 sum. Min/max compare with CUB's Min/Max on random data without
 * NaN (CUB's float min/max NaN semantics differ from ours). argmin/argmax: CUB's ArgMin/ArgMax. stats: what a user
 * writes with CUB, four calls timed as one rep: Sum (widened as ours), Min, Max, then TransformReduce of
 * (x - mean)^2 in float64 with the mean read on the device from the Sum; exact stats beside the same four calls.
 * Where CUB's 64-bit integer sum cannot hold the exact sum (int64/uint64 data over the full range: it wraps), its
 * count, min, max and sum modulo 2^64 are checked, and its mean and variance, about a wrapped mean, are not.
 *
 * --small: per n, 10 batches of 1000 back-to-back reductions (no hold kernel, so host launch cost counts), events
 * around each batch; the median batch time / 1000 is the time per reduction. The same 1000 reductions captured in a
 * CUDA graph and replayed give the graph figure. Kernel launches per reduction are counted from a captured graph
 * of one reduction (for ours it should equal plan.passes; a difference is printed).
 *
 * Exit: 0 ok, 1 CUDA error or wrong result, 2 bad command line, 77 no GPU visible.
 *
 * Files: harness.cuh (the command line, the JSON writer, CUB's rows, the timing of reps with the hold kernel, the
 * inputs and their references, one measurement each of ours, CUB and the copy) and one file per mode: mode_perf.cuh
 * (the table), mode_levels.cuh (--levels), mode_small.cuh (--small). They are one translation unit, included here:
 * the harness's templates are instantiated once, which keeps nvcc's time down (CUB's rows, the slow part, build
 * in parallel shards of their own: bench/cub_rows.cuh). */
#include "harness.cuh"
#include "mode_perf.cuh"
#include "mode_levels.cuh"
#include "mode_small.cuh"

int main(int argc, char **argv)
{
    const Options o = parse_options(argc, argv);
    validate_cases(o);
    if (o.levels) return mode_levels(o);
    if (o.small) return mode_small(o);
    return mode_perf(o);
}
