/* dreduce-bench, --small: the latency of small reductions (bench/dreduce_bench.cu describes it). Needs harness.cuh. */
#ifndef DREDUCE_BENCH_MODE_SMALL_CUH
#define DREDUCE_BENCH_MODE_SMALL_CUH

#include "harness.cuh"

namespace {

/* ---------------------------------------------------------------------------------------------------------- */
/* Mode: --small */

/* Kernel nodes in a graph captured from one call of enqueue(). */
template <class F> int count_kernels(Ctx &c, F enqueue)
{
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(c.s, cudaStreamCaptureModeThreadLocal));
    enqueue();
    CK(cudaStreamEndCapture(c.s, &g));
    size_t nn = 0;
    CK(cudaGraphGetNodes(g, nullptr, &nn));
    std::vector<cudaGraphNode_t> nodes(nn);
    if (nn) CK(cudaGraphGetNodes(g, nodes.data(), &nn));
    int k = 0;
    for (cudaGraphNode_t node : nodes) {
        cudaGraphNodeType t;
        CK(cudaGraphNodeGetType(node, &t));
        if (t == cudaGraphNodeTypeKernel) ++k;
    }
    CK(cudaGraphDestroy(g));
    return k;
}

struct Latency {
    double stream_us = 0, graph_us = 0;
    std::vector<double> stream_batches_us, graph_batches_us; /* per reduction, each batch */
    int kernels = 0;
};

/* enqueue() issues one reduction into slot 0. Batches of `batch` reductions: from the host, then as a graph. */
template <class F> Latency measure_latency(Ctx &c, int batch, int batches, F enqueue)
{
    Latency L;
    L.kernels = count_kernels(c, enqueue);
    for (int i = 0; i < std::min(batch, 100); ++i) enqueue(); /* warm-up */
    CK(cudaStreamSynchronize(c.s));
    std::vector<double> v;
    for (int b = 0; b < batches; ++b) {
        CK(cudaEventRecord(c.ev[0], c.s));
        for (int i = 0; i < batch; ++i) enqueue();
        CK(cudaEventRecord(c.ev[1], c.s));
        CK(cudaStreamSynchronize(c.s));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, c.ev[0], c.ev[1]));
        v.push_back(1e3 * ms / batch);
    }
    L.stream_batches_us = v;
    L.stream_us = stats_of(v).median;

    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(c.s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < batch; ++i) enqueue();
    CK(cudaStreamEndCapture(c.s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphLaunch(ge, c.s)); /* warm-up (uploads the graph) */
    CK(cudaStreamSynchronize(c.s));
    v.clear();
    for (int b = 0; b < batches; ++b) {
        CK(cudaEventRecord(c.ev[0], c.s));
        CK(cudaGraphLaunch(ge, c.s));
        CK(cudaEventRecord(c.ev[1], c.s));
        CK(cudaStreamSynchronize(c.s));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, c.ev[0], c.ev[1]));
        v.push_back(1e3 * ms / batch);
    }
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    L.graph_batches_us = v;
    L.graph_us = stats_of(v).median;
    return L;
}

void json_latency(Json &j, const Latency &L)
{
    j.key("kernels_per_reduction").i64(L.kernels);
    j.key("stream_us_median").num(L.stream_us);
    j.key("graph_us_median").num(L.graph_us);
    j.key("stream_us_batches").arr();
    for (double x : L.stream_batches_us) j.num(x);
    j.end_arr();
    j.key("graph_us_batches").arr();
    for (double x : L.graph_batches_us) j.num(x);
    j.end_arr();
}

int mode_small(const Options &o)
{
    Ctx c = init_device(o);
    print_header(c, "--small: latency per reduction for small n");
    const std::vector<const Case *> cases = selected_cases(o);
    const int batch = 1000;
    const int batches = o.reps > 0 ? o.reps : o.quick ? 3 : 10;
    const double target_us = 5.0;
    std::vector<size_t> sizes;
    if (!o.sizes.empty()) sizes = o.sizes;
    else if (o.quick) sizes = {(size_t)1 << 6, (size_t)1 << 10, (size_t)1 << 16};
    else
        for (int e = 6; e <= 16; ++e) sizes.push_back((size_t)1 << e);
    const int block_option = o.blocks.empty() ? 0 : o.blocks[0];

    printf("us per reduction = median over %d batches of (batch time / %d); a batch is %d back-to-back reductions on "
           "one stream,\nlaunched from the host (\"stream\", host launch cost included) or replayed as one CUDA "
           "graph (\"graph\").\nours = multipass, block %s; launches = kernels per reduction (counted in a captured "
           "graph).\n\n",
           batches, batch, batch, block_option ? std::to_string(block_option).c_str() : "dreduce's default for n");
    printf("%-8s %-6s %-14s %7s | %4s %9s %9s | %4s %9s %9s | %6s %6s | %s\n", "type", "op", "acc", "n", "ours",
           "stream us", "graph us", "CUB", "stream us", "graph us", "ratio", "ratioG", "ours <= 5 us (stream)");
    printf("---------------------------------------------------------------------------------------------------------"
           "-----------------------\n");

    Json j;
    j.obj();
    json_header(j, c, o, "small");
    j.key("batch").i64(batch);
    j.key("batches").i64(batches);
    j.key("block").i64(block_option); /* 0: dreduce's default for each n */
    j.key("target_us").num(target_us);
    j.key("results").arr();
    int misses = 0;
    for (const Case *cs : cases) {
        for (size_t n : sizes) {
            Inputs in;
            if (!alloc_inputs(in, *cs, n, 1)) continue;
            make_data(c, in);
            ensure_slots(c, 1);

            Workspace ws;
            const int block = block_option ? block_option
                                           : dr_gpu_default_block_op(DR_KERNEL_MULTIPASS, cs->op, cs->dtype, n,
                                                                     c.device);
            dr_gpu_reduce_t r = make_request(c, in, DR_KERNEL_MULTIPASS, block);
            dr_gpu_plan_t plan;
            CK(dr_gpu_plan(&r, &plan));
            ws.ensure(std::max<size_t>(plan.work_bytes, 256), c.s);
            r.d_work = ws.d;
            r.d_result = slot(c, 0);
            poison_slots(c, 1);
            const Latency ours =
                measure_latency(c, batch, batches, [&] { CK(dr_gpu_reduce(&r, &plan, c.s, nullptr)); });
            check_slots(c, in, 1, plan.serial_depth, "ours (small)");
            if (ours.kernels != plan.passes)
                printf("note: %s n=%zu: a captured reduction has %d kernel nodes, plan.passes is %d\n",
                       cs->id.c_str(), n,
                       ours.kernels, plan.passes);

            size_t tb = 0;
            CK(cs->cub(nullptr, &tb, in.buf(0), slot(c, 0), n, cs->cub_acc, c.s));
            Workspace temp;
            temp.ensure(std::max<size_t>(tb, 256), c.s);
            poison_slots(c, 1);
            const Latency cub = measure_latency(c, batch, batches, [&] {
                size_t t = tb;
                CK(cs->cub(temp.d, &t, in.buf(0), slot(c, 0), n, cs->cub_acc, c.s));
            });
            check_slots(c, in, 1, (uint64_t)n, "CUB (small)", true);
            free_inputs(in);

            const bool ok = ours.stream_us <= target_us;
            misses += !ok;
            printf("%-8s %-6s %-14s %7zu | %4d %9.2f %9.2f | %4d %9.2f %9.2f | %6.2f %6.2f | %s\n",
                   dr_dtype_name(cs->dtype), dr_op_name(cs->op), dr_acc_kind_name(case_acc(*cs)), n, plan.passes,
                   ours.stream_us, ours.graph_us, cub.kernels, cub.stream_us, cub.graph_us,
                   ours.stream_us > 0 ? cub.stream_us / ours.stream_us : 0,
                   ours.graph_us > 0 ? cub.graph_us / ours.graph_us : 0, ok ? "ok" : "MISS");
            fflush(stdout);

            j.obj();
            j.key("case").str(cs->id.c_str());
            j.key("dtype").str(dr_dtype_name(cs->dtype));
            j.key("op").str(dr_op_name(cs->op));
            j.key("acc").str(dr_acc_kind_name(case_acc(*cs)));
            j.key("n").u64(n);
            j.key("ours").obj();
            j.key("passes").i64(plan.passes);
            j.key("grid").arr();
            for (int p = 0; p < plan.passes; ++p) j.u64(plan.grid[p]);
            j.end_arr();
            json_latency(j, ours);
            j.end_obj();
            j.key("cub").obj();
            j.key("api").str(cs->cub_api.c_str());
            j.key("temp_bytes").u64(tb);
            json_latency(j, cub);
            j.end_obj();
            j.key("meets_target").boolean(ok);
            j.end_obj();
        }
        printf("\n");
    }
    j.end_arr();
    j.key("misses").i64(misses);
    j.end_obj();
    printf("ratio = CUB us / ours us (>= 1: ours faster), ratioG the same for graph replay. Target: ours <= %.0f us "
           "per reduction for n <= 2^16: %s (%d miss%s).\n",
           target_us, misses ? "NOT MET" : "met", misses, misses == 1 ? "" : "es");
    write_json(o, j);
    return 0;
}

} // namespace

#endif
