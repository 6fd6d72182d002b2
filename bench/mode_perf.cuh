/* dreduce-bench, the performance table (the default mode) (bench/dreduce_bench.cu describes it). Needs harness.cuh. */
#ifndef DREDUCE_BENCH_MODE_PERF_CUH
#define DREDUCE_BENCH_MODE_PERF_CUH

#include "harness.cuh"

namespace {

/* ---------------------------------------------------------------------------------------------------------- */
/* Mode: performance table */

std::vector<size_t> perf_sizes(const Options &o)
{
    if (!o.sizes.empty()) return o.sizes;
    if (o.quick) return {(size_t)1 << 10, (size_t)1 << 20, (size_t)1 << 24};
    /* Every row at the sizes past the L2 that the targets name, and a few smaller ones. */
    if (!o.exp_given)
        return {(size_t)1 << 16, (size_t)1 << 20, (size_t)1 << 24, (size_t)1 << 28, (size_t)1 << 30, (size_t)1 << 31};
    std::vector<size_t> v;
    int e = o.min_exp;
    for (; e <= o.max_exp; e += 2) v.push_back((size_t)1 << e);
    if (v.empty() || v.back() != ((size_t)1 << o.max_exp)) v.push_back((size_t)1 << o.max_exp);
    return v;
}

/* One measured (case, n), for the summary. */
struct Measured {
    const Case *cs;
    size_t n;
    double gbs, ratio, pct_copy;
};

/* One line per row (type, op, accumulator), grouped by type (in the order of the cases' first row of each type):
 * GB/s at each size; then, over the sizes from 2^28 (past the L2, where the targets are set), the lowest ratio to CUB
 * and the lowest bandwidth as a percentage of int32 sum's at the same size in this run; and % of the copy ceiling
 * at the largest size. A stats row's ratio is to CUB's four calls together. */
void print_summary(const std::vector<Measured> &m, const std::vector<size_t> &sizes)
{
    const size_t big = (size_t)1 << 28;
    std::map<size_t, double> int32_sum; /* GB/s by n */
    for (const Measured &x : m)
        if (x.cs->id == "int32-sum") int32_sum[x.n] = x.gbs;
    printf("summary: GB/s per row and size; over n >= 2^28: lowest ratio to CUB (CUB ms / ours ms) and lowest GB/s "
           "as %% of int32 sum's at that n; %% of the copy ceiling at the largest n\n");
    printf("%-22s %-14s", "row", "acc");
    for (size_t n : sizes) {
        char h[16];
        int e = 0;
        while (((size_t)1 << e) < n) ++e;
        if (((size_t)1 << e) == n) snprintf(h, sizeof h, "2^%d", e);
        else snprintf(h, sizeof h, "%zu", n);
        printf(" %8s", h);
    }
    printf(" | %8s %9s %7s\n", "minCUBx", "%int32sum", "%copy");
    std::vector<const Case *> rows;
    for (const Case &c : all_cases()) {
        bool any = false;
        for (const Measured &x : m) any = any || x.cs == &c;
        if (any) rows.push_back(&c);
    }
    std::vector<dr_dtype_t> types;
    for (const Case *c : rows)
        if (std::find(types.begin(), types.end(), c->dtype) == types.end()) types.push_back(c->dtype);
    std::stable_sort(rows.begin(), rows.end(), [&](const Case *a, const Case *b) {
        return std::find(types.begin(), types.end(), a->dtype) < std::find(types.begin(), types.end(), b->dtype);
    });
    dr_dtype_t last = DR_DTYPE_COUNT;
    for (const Case *cp : rows) {
        const Case &c = *cp;
        if (last != DR_DTYPE_COUNT && c.dtype != last) printf("\n");
        last = c.dtype;
        printf("%-22s %-14s", c.id.c_str(), dr_acc_kind_name(c.acc));
        double min_ratio = INFINITY, min_rel = INFINITY, pct_copy = NAN;
        for (size_t n : sizes) {
            const Measured *hit = nullptr;
            for (const Measured &x : m)
                if (x.cs == &c && x.n == n) hit = &x;
            if (!hit) {
                printf(" %8s", "-");
                continue;
            }
            printf(" %8.1f", hit->gbs);
            pct_copy = hit->pct_copy;
            if (n >= big) {
                min_ratio = std::min(min_ratio, hit->ratio);
                if (int32_sum.count(n) && int32_sum[n] > 0) min_rel = std::min(min_rel, 100.0 * hit->gbs / int32_sum[n]);
            }
        }
        if (std::isfinite(min_ratio)) printf(" | %8.3f", min_ratio);
        else printf(" | %8s", "-");
        if (std::isfinite(min_rel)) printf(" %8.1f%%", min_rel);
        else printf(" %9s", "-");
        printf(" %6.1f%%\n", pct_copy);
    }
    printf("\n");
}

int mode_perf(const Options &o)
{
    Ctx c = init_device(o);
    print_header(c, "performance table (ours = multipass)");
    const std::vector<const Case *> cases = selected_cases(o);
    const std::vector<size_t> sizes = perf_sizes(o);
    const int warmup = o.warmup >= 0 ? o.warmup : o.quick ? 2 : 5;

    Json j;
    j.obj();
    json_header(j, c, o, "perf");
    j.key("method").obj();
    j.key("warmup").i64(warmup);
    j.key("reps_n_le_2^20").i64(o.reps > 0 ? o.reps : o.quick ? 20 : 200);
    j.key("reps_n_gt_2^20").i64(o.reps > 0 ? o.reps : o.quick ? 10 : 50);
    j.key("statistic").str("median of per-rep CUDA event intervals, reps queued behind a hold kernel");
    j.key("rotate_below_bytes").u64(kRotateBelow);
    j.key("rotate_total_bytes").u64(kRotateTotal);
    j.key("gbs").str("bytes read / median time, 1e9 bytes per GB; copy: (read + written) / time");
    j.key("ratio").str("CUB median time / ours median time (>= 1: ours faster)");
    j.key("pct_copy").str("100 * (reduction GB/s) / (copy GB/s)");
    j.key("cub_check_depth").str("n (loose bound for CUB float sums)");
    j.key("max_abs_error").str("float sums and products: |result - reference|; stats: of m2");
    j.key("cub_stats").str("four calls per rep, timed together: Sum, Min, Max, TransformReduce((x - sum/n)^2)");
    j.end_obj();
    j.key("blocks").arr();
    for (int b : o.blocks) j.i64(b);
    j.end_arr();

    std::map<size_t, CopyResult> copies; /* by bytes */
    std::vector<Measured> summary;
    j.key("results").arr();

    printf("%-8s %-6s %-14s %11s | %10s %8s %5s | %10s %8s | %6s | %7s %7s | %8s\n", "type", "op", "acc", "n",
           "ours ms", "GB/s", "block", "CUB ms", "GB/s", "ratio", "ours%cp", "CUB%cp", "copyGB/s");
    printf("---------------------------------------------------------------------------------------------------------"
           "------------------\n");
    for (const Case *cs : cases) {
        for (size_t n : sizes) {
            const int reps = o.reps > 0 ? o.reps : n <= ((size_t)1 << 20) ? (o.quick ? 20 : 200) : (o.quick ? 10 : 50);
            const int slots = warmup + reps;
            const size_t bytes = n * dr_dtype_size(cs->dtype);
            Inputs in;
            const int nbuf = rotation_buffers(bytes, slots);
            if (!alloc_inputs(in, *cs, n, nbuf)) {
                j.obj();
                j.key("case").str(cs->id.c_str());
                j.key("n").u64(n);
                j.key("skipped").str("does not fit in free device memory");
                j.end_obj();
                continue;
            }
            if (!copies.count(bytes)) copies[bytes] = run_copy(c, in, warmup, reps);
            const CopyResult &cp = copies[bytes];
            make_data(c, in);

            Workspace ws;
            std::vector<OursResult> ours;
            size_t best = 0;
            for (int b : o.blocks) {
                ours.push_back(run_ours(c, in, DR_KERNEL_MULTIPASS, b, warmup, reps, ws));
                if (ours.back().st.median < ours[best].st.median) best = ours.size() - 1;
            }
            const CubResult cub = run_cub(c, in, warmup, reps);
            free_inputs(in);

            const OursResult &ob = ours[best];
            const double ours_gbs = gbs_of((double)bytes, ob.st.median);
            const double cub_gbs = gbs_of((double)bytes, cub.st.median);
            const double ratio = ob.st.median > 0 ? cub.st.median / ob.st.median : 0;
            const double pct_ours = cp.gbs > 0 ? 100.0 * ours_gbs / cp.gbs : 0;
            const double pct_cub = cp.gbs > 0 ? 100.0 * cub_gbs / cp.gbs : 0;
            summary.push_back({cs, n, ours_gbs, ratio, pct_ours});
            printf("%-8s %-6s %-14s %11zu | %10.4f %8.1f %5d | %10.4f %8.1f | %6.2f | %6.1f%% %6.1f%% | %8.1f%s\n",
                   dr_dtype_name(cs->dtype), dr_op_name(cs->op), dr_acc_kind_name(in.acc), n, ob.st.median,
                   ours_gbs, ob.block, cub.st.median, cub_gbs, ratio, pct_ours, pct_cub, cp.gbs,
                   cp.half ? " (half copy)" : "");
            fflush(stdout);

            j.obj();
            j.key("case").str(cs->id.c_str());
            j.key("dtype").str(dr_dtype_name(cs->dtype));
            j.key("op").str(dr_op_name(cs->op));
            j.key("acc_mode").str(dr_acc_mode_name(cs->mode));
            j.key("acc").str(dr_acc_kind_name(in.acc));
            j.key("n").u64(n);
            j.key("bytes_read").u64(bytes);
            j.key("buffers").i64(nbuf);
            j.key("warmup").i64(warmup);
            j.key("ours").obj();
            j.key("kernel").str("multipass");
            j.key("best_block").i64(ob.block);
            j.key("ms_median").num(ob.st.median);
            j.key("gbs").num(ours_gbs);
            j.key("by_block").arr();
            for (const OursResult &r : ours) json_ours(j, r, (double)bytes);
            j.end_arr();
            j.end_obj();
            j.key("cub").obj();
            j.key("api").str(cs->cub_api.c_str());
            j.key("calls_per_rep").i64(cs->cub_calls);
            j.key("temp_bytes").u64(cub.temp_bytes);
            json_stats(j, cub.st, (double)bytes);
            j.key("max_abs_error").num(cub.max_err);
            j.key("check").str(cub.partial ? "partial: count, min, max, sum mod 2^64 (CUB's 64-bit sum wraps)"
                                           : "full");
            j.end_obj();
            j.key("copy").obj();
            j.key("bytes_copied").u64(cp.copied);
            j.key("half_copy").boolean(cp.half);
            j.key("buffers").i64(cp.nbuf);
            json_stats(j, cp.st, 2.0 * (double)cp.copied);
            j.end_obj();
            j.key("ratio_cub_over_ours").num(ratio);
            j.key("pct_copy_ours").num(pct_ours);
            j.key("pct_copy_cub").num(pct_cub);
            j.end_obj();
        }
        printf("\n");
    }
    j.end_arr();

    j.key("copy_ceiling").arr();
    for (const auto &kv : copies) {
        j.obj();
        j.key("bytes").u64(kv.first);
        j.key("bytes_copied").u64(kv.second.copied);
        j.key("half_copy").boolean(kv.second.half);
        j.key("buffers").i64(kv.second.nbuf);
        json_stats(j, kv.second.st, 2.0 * (double)kv.second.copied);
        j.end_obj();
    }
    j.end_arr();
    j.key("hold_timeouts").i64(c.hold_timeouts);
    j.end_obj();

    print_summary(summary, sizes);
    printf("columns: ms = median GPU time per reduction; GB/s = bytes read / time; block = our best block size;\n"
           "ratio = CUB ms / ours ms (>= 1: ours faster); %%cp = GB/s / copy GB/s; copy GB/s = (read + written) / "
           "time of a device-to-device copy of the same bytes. All results checked against the host reference.\n");
    if (c.hold_timeouts) printf("note: %d hold-kernel timeouts (see stderr)\n", c.hold_timeouts);
    write_json(o, j);
    return 0;
}

} // namespace

#endif
