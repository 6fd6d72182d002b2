/* dreduce: the pipeline of one run, in order: parse options, pick and open the GPU, MPI_Init, check that every rank
 * got the same options, build the node topology, bind, generate the shard, time local reduction + combine over the
 * repetitions, verify against the host reference, gather and report. Each phase ends with a collective agreement
 * on its status, so a failure on one rank ends every rank with a non-zero exit instead of a hang; a failure inside
 * the timed loop aborts the job after naming the rank. */
#define _GNU_SOURCE /* pause, _exit */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binding.h"
#include "check.h"
#include "combine.h"
#include "cpu_backend.h"
#include "fault.h"
#include "gpu_backend.h"
#include "options.h"
#include "parallel.h"
#include "reference.h"
#include "report.h"
#include "shard.h"
#include "timing.h"
#include "topology.h"
#include "watchdog.h"

/* Every rank learns the worst status of any rank. */
static dr_status_t agree(dr_status_t s, const char *phase)
{
    int mine = (int)s, worst = (int)DR_ERR_RUNTIME;
    dr_watchdog_enter(phase);
    const int rc = MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    dr_watchdog_leave();
    return rc == MPI_SUCCESS ? (dr_status_t)worst : DR_ERR_RUNTIME;
}

/* Abort the job from inside the timed loop, where the other ranks may be waiting in a collective. */
static void abort_job(dr_status_t s)
{
    dr_error("aborting the job");
    MPI_Abort(MPI_COMM_WORLD, (int)s);
    exit((int)s);
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; ++s) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* The key=value words where two canonical option lines differ: "a=1 b=2" then, after the NUL, "a=3 b=4". */
static void options_diff(const char *a, const char *b, char *out, size_t len)
{
    char left[512] = "", right[512] = "", wa[128], wb[128];
    const char *pa = a, *pb = b;
    int na, nb;
    while (sscanf(pa, "%127s%n", wa, &na) == 1 && sscanf(pb, "%127s%n", wb, &nb) == 1) {
        if (strcmp(wa, wb) != 0) {
            snprintf(left + strlen(left), sizeof left - strlen(left), "%s%s", left[0] ? " " : "", wa);
            snprintf(right + strlen(right), sizeof right - strlen(right), "%s%s", right[0] ? " " : "", wb);
        }
        pa += na;
        pb += nb;
    }
    snprintf(out, len / 2, "'%s'", left);
    snprintf(out + strlen(out) + 1, len - strlen(out) - 1, "'%s'", right);
}

/* All ranks must run the same reduction: compare a hash of the canonical options; on a mismatch rank 0 names the
 * first differing rank and both option lines. */
static dr_status_t check_options_agree(const dr_options_t *o, int rank)
{
    char mine[1024];
    dr_options_canonical(o, mine, sizeof mine);
    uint64_t h = fnv1a(mine), h0 = h;
    DR_MPI_CHECK(MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD));
    int differ = h != h0 ? rank : 1 << 30, first = 0;
    DR_MPI_CHECK(MPI_Allreduce(&differ, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (first == 1 << 30) return DR_OK;
    if (rank == first) DR_MPI_CHECK(MPI_Send(mine, (int)sizeof mine, MPI_CHAR, 0, 7, MPI_COMM_WORLD));
    if (rank == 0) {
        char theirs[1024];
        DR_MPI_CHECK(MPI_Recv(theirs, (int)sizeof theirs, MPI_CHAR, first, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        char diff[1024];
        options_diff(mine, theirs, diff, sizeof diff);
        dr_error("options differ across ranks: rank 0 has %s but rank %d has %s (every rank must run the same "
                 "reduction)", diff, first, diff + strlen(diff) + 1);
    }
    return DR_ERR_USAGE;
}

/* With one visible GPU per rank and distinct PCI bus ids across the host, the launcher gave each task its own
 * GPU (Slurm --gpu-bind, CUDA_VISIBLE_DEVICES per rank): use it rather than indexing by local rank. */
static dr_status_t one_gpu_per_task(const dr_topology_t *t, int ngpus, const char *bus_id0, int *yes)
{
    char *all = calloc((size_t)t->host_local_size, 32);
    char mine[32] = "";
    if (!all) return DR_ERR_RUNTIME;
    if (ngpus == 1) snprintf(mine, sizeof mine, "%s", bus_id0);
    int rc = MPI_Allgather(mine, 32, MPI_CHAR, all, 32, MPI_CHAR, t->host_comm);
    *yes = rc == MPI_SUCCESS && t->host_local_size > 1;
    for (int i = 0; i < t->host_local_size && *yes; ++i) {
        if (all[i * 32] == '\0') *yes = 0;
        for (int j = 0; j < i && *yes; ++j)
            if (strcmp(all + i * 32, all + j * 32) == 0) *yes = 0;
    }
    free(all);
    return rc == MPI_SUCCESS ? DR_OK : DR_ERR_RUNTIME;
}

typedef struct {
    int is_gpu;
    dr_gpu_t gpu;
    void *h_base; /* CPU backend: the shard (misaligned by opt->misalign elements) */
    void *h_in;
    int threads;
} backend_t;

/* Choose GPU or CPU, pick the GPU for this rank, bind CPUs and memory next to it. */
static dr_status_t setup_backend(const dr_options_t *o, const dr_topology_t *t, int ngpus, backend_t *be,
                                 dr_binding_t *b)
{
    dr_binding_init(b);
    if (o->device == DR_DEVICE_GPU && ngpus == 0) {
        dr_error("--device gpu: no GPU is visible to this process (check the driver and CUDA_VISIBLE_DEVICES); "
                 "use --device cpu or auto");
        return DR_ERR_USAGE;
    }
    be->is_gpu = o->device != DR_DEVICE_CPU && ngpus > 0;
    char err[256], busid0[32] = "";
    if (be->is_gpu && ngpus == 1 && cudaDeviceGetPCIBusId(busid0, sizeof busid0, 0) != cudaSuccess) busid0[0] = 0;
    int per_task = 0;
    DR_CHECK(one_gpu_per_task(t, be->is_gpu ? ngpus : 0, busid0, &per_task));
    if (be->is_gpu) {
        int gpu = dr_binding_choose_gpu(t->host_local_rank, t->host_local_size, ngpus, per_task, o->share_gpus, err,
                                        sizeof err);
        if (gpu < 0) {
            dr_error("%s", err);
            return DR_ERR_USAGE;
        }
        b->gpu_index = gpu;
        DR_CHECK(dr_gpu_open(&be->gpu, gpu));
    }
    hwloc_topology_t topo = NULL;
    if (dr_binding_topology_load(&topo, dr_binding_env_xml(), err, sizeof err) != 0) {
        snprintf(b->note, sizeof b->note, "no hwloc topology (%.200s): not bound", err);
        return DR_OK;
    }
    int gpu_index = b->gpu_index;
    dr_binding_apply(topo, hwloc_topology_is_thissystem(topo), be->is_gpu ? be->gpu.pci_bus_id : NULL,
                     o->bind == DR_BINDOPT_AUTO ? DR_BIND_AUTO : DR_BIND_NONE, b);
    b->gpu_index = gpu_index;
    hwloc_topology_destroy(topo);
    return DR_OK;
}

static dr_status_t prepare_shard(const dr_options_t *o, backend_t *be, dr_acc_kind_t acc, uint64_t first,
                                 uint64_t count, double *gen_ms)
{
    if (be->is_gpu) {
        const int block = o->block > 0 ? o->block : dr_gpu_default_block(o->kernel, (size_t)count);
        return dr_gpu_prepare(&be->gpu, &o->gen, o->kernel, block, acc, o->misalign, first, count, gen_ms);
    }
    const size_t esize = dr_dtype_size(o->dtype);
    if (count > (SIZE_MAX - 64 - 16 * esize) / esize) {
        dr_error("%" PRIu64 " elements of %zu bytes do not fit in this process's address space", count, esize);
        return DR_ERR_USAGE;
    }
    const size_t bytes = (size_t)count * esize + (size_t)o->misalign * esize;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    be->h_base = dr_fault("alloc", rank) ? NULL : aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (!be->h_base) {
        dr_error("cannot allocate %zu bytes (%.2f GiB) of host memory for the input shard", bytes,
                 (double)bytes / (1u << 30));
        return DR_ERR_RUNTIME;
    }
    be->h_in = (char *)be->h_base + (size_t)o->misalign * esize;
    double t0 = MPI_Wtime();
    dr_cpu_generate(&o->gen, first, be->h_in, (size_t)count, be->threads);
    *gen_ms = (MPI_Wtime() - t0) * 1e3;
    return DR_OK;
}

/* One local reduction: the partial ends up where the combine reads it. */
static dr_status_t reduce_local(const dr_options_t *o, backend_t *be, dr_acc_kind_t acc, uint64_t count,
                                dr_combine_t *c, double *pass_ms, double *local_ms, uint64_t *depth)
{
    if (be->is_gpu) {
        DR_CHECK(dr_gpu_reduce_once(&be->gpu, pass_ms));
        *local_ms = 0;
        for (int p = 0; p < be->gpu.plan.passes; ++p) *local_ms += pass_ms[p];
        *depth = be->gpu.plan.serial_depth;
        return DR_OK;
    }
    dr_value_t v;
    double t0 = MPI_Wtime();
    if (dr_cpu_reduce(o->dtype, o->op, acc, be->h_in, (size_t)count, be->threads, &v, depth) != 0) {
        dr_error("the CPU backend has no reduction for %s %s accumulating in %s", dr_dtype_name(o->dtype),
                 dr_op_name(o->op), dr_acc_kind_name(acc));
        return DR_ERR_RUNTIME;
    }
    *local_ms = pass_ms[0] = (MPI_Wtime() - t0) * 1e3;
    memcpy(c->partial, &v, c->size);
    return DR_OK;
}

/* DREDUCE_FAULT (src/fault.h): make this rank crash, hang or corrupt its partial, for the fault tests. */
static void inject_faults(int rank, backend_t *be, dr_combine_t *c)
{
    if (dr_fault("exit", rank)) {
        dr_error("injected fault (DREDUCE_FAULT=exit@%d): exiting in the local level", rank);
        _exit(9);
    }
    if (dr_fault("corrupt", rank)) {
        dr_value_t v;
        if (be->is_gpu) {
            if (dr_gpu_read_partial(&be->gpu, &v) != DR_OK) return;
            v.bytes[c->size - 1] ^= 1; /* the top byte: an exponent bit of a float, far outside any bound */
            if (cudaMemcpy(be->gpu.req.d_result, &v, c->size, cudaMemcpyDefault) != cudaSuccess) return;
        } else {
            ((unsigned char *)c->partial)[c->size - 1] ^= 1;
        }
    }
    if (dr_fault("hang", rank)) {
        dr_error("injected fault (DREDUCE_FAULT=hang@%d): stopping before the combine", rank);
        for (;;) pause();
    }
}

/* The rank's own partial (after the last repetition), for the per-rank check. */
static dr_status_t read_partial(backend_t *be, const dr_combine_t *c, dr_value_t *out)
{
    if (be->is_gpu) return dr_gpu_read_partial(&be->gpu, out);
    memset(out, 0, sizeof *out);
    memcpy(out, c->partial, c->size);
    return DR_OK;
}

static void first_line(char *s)
{
    char *nl = strchr(s, '\n');
    if (nl) *nl = '\0';
}

static int env_world_rank(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i) {
        const char *v = getenv(vars[i]);
        if (v && *v) return atoi(v);
    }
    return 0;
}

static dr_status_t run(dr_options_t *o, dr_parse_result_t parsed, const char *parse_err, int ngpus, int env_local,
                       const char *env_source)
{
    dr_topology_t topo;
    int rank = 0, nranks = 1;
    DR_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    DR_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));

    /* Phase 1: options. The lowest failing rank reports its parse error; everyone exits 2. */
    int bad = parsed == DR_PARSE_ERROR ? rank : 1 << 30, first_bad = 0;
    DR_MPI_CHECK(MPI_Allreduce(&bad, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (first_bad != 1 << 30) {
        if (rank == first_bad) dr_error("%s", parse_err);
        return DR_ERR_USAGE;
    }
    DR_CHECK(check_options_agree(o, rank));
    DR_CHECK(dr_topology_init(&topo, o->ranks_per_node));
    dr_log_set_rank(rank, nranks, topo.host);
    if (dr_watchdog_start(o->timeout) != 0) dr_warn("could not start the --timeout watchdog: collectives unwatched");
    if (env_local >= 0 && env_local != topo.host_local_rank)
        dr_warn("%s=%d but MPI places this rank %d on its host: using %d to choose the GPU", env_source, env_local,
                topo.host_local_rank, topo.host_local_rank);

    /* Phase 2: the report file (rank 0), backend, binding, shard. */
    dr_status_t s = DR_OK;
    FILE *out = stdout;
    if (rank == 0 && o->output[0]) {
        out = fopen(o->output, o->format == DR_FORMAT_CSV ? "a" : "w");
        if (!out) {
            dr_error("cannot write --output '%s': %s", o->output, strerror(errno));
            s = DR_ERR_USAGE;
        }
    }
    backend_t be;
    memset(&be, 0, sizeof be);
    be.threads = o->threads > 0 ? o->threads : dr_parallel_default_threads();
    /* Unbound ranks each see every core: share them among this host's ranks rather than oversubscribe. */
    if (o->threads <= 0 && be.threads >= dr_parallel_online_cpus() && topo.host_local_size > 1)
        be.threads = be.threads / topo.host_local_size > 0 ? be.threads / topo.host_local_size : 1;
    dr_binding_t binding;
    const dr_acc_kind_t acc = dr_acc_select(o->dtype, o->op, o->acc_mode);
    uint64_t first = 0, count = 0;
    if (s == DR_OK) s = setup_backend(o, &topo, ngpus, &be, &binding);
    if (s == DR_OK && dr_shard(o->n, o->scaling, rank, nranks, &first, &count) != 0) {
        if (rank == 0) /* every rank sees the same overflow: say it once */
            dr_error("--scaling weak with -n %" PRIu64 " on %d ranks makes more than 2^64 - 1 elements", o->n,
                     nranks);
        s = DR_ERR_USAGE;
    }
    double gen_ms = NAN;
    if (s == DR_OK) s = prepare_shard(o, &be, acc, first, count, &gen_ms);
    dr_combine_t comb;
    memset(&comb, 0, sizeof comb);
    if (s == DR_OK) s = dr_combine_setup(&comb, acc, o->op, o->staging, be.is_gpu ? be.gpu.d_result : NULL);
    if (s == DR_OK && comb.path == DR_PATH_MAPPED) dr_gpu_set_partial_target(&be.gpu, comb.mapped_partial);
    if ((s = agree(s, "setup (every rank reporting its setup)")) != DR_OK) {
        /* Some rank failed to set up (it said why): release what this rank holds, and every rank exits. */
        dr_combine_free(&comb);
        if (be.is_gpu) dr_gpu_close(&be.gpu);
        free(be.h_base);
        if (out != stdout && out) fclose(out);
        dr_topology_free(&topo);
        return s;
    }

    /* Phase 3: the timed repetitions. */
    const int reps = o->warmup + o->iters;
    double *samples = calloc((size_t)o->iters * (DR_LEVEL_COUNT + DR_GPU_MAX_PASSES), sizeof *samples);
    if (!samples) abort_job(DR_ERR_RUNTIME);
    double *level_samples[DR_LEVEL_COUNT], *pass_samples[DR_GPU_MAX_PASSES];
    for (int l = 0; l < DR_LEVEL_COUNT; ++l) level_samples[l] = samples + (size_t)l * o->iters;
    for (int p = 0; p < DR_GPU_MAX_PASSES; ++p)
        pass_samples[p] = samples + (size_t)(DR_LEVEL_COUNT + p) * o->iters;
    dr_value_t result, first_result;
    memset(&first_result, 0, sizeof first_result);
    int deterministic = 1, passes = 1;
    uint64_t depth = 0;
    const int has_result = rank == 0 || o->allreduce;
    for (int it = 0; it < reps; ++it) {
        double pass_ms[DR_GPU_MAX_PASSES], local_ms;
        dr_combine_times_t ct;
        dr_watchdog_enter("start (the barrier that begins a repetition)");
        if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS) abort_job(DR_ERR_RUNTIME);
        dr_watchdog_leave();
        const double t0 = MPI_Wtime();
        if ((s = reduce_local(o, &be, acc, count, &comb, pass_ms, &local_ms, &depth)) != DR_OK) abort_job(s);
        inject_faults(rank, &be, &comb);
        if ((s = dr_combine_run(&comb, &topo, o->combine, o->allreduce, &ct)) != DR_OK) abort_job(s);
        const double total_ms = (MPI_Wtime() - t0) * 1e3;
        if (has_result) {
            if ((s = dr_combine_read_result(&comb, &result)) != DR_OK) abort_job(s);
            if (it == 0) first_result = result;
            else if (memcmp(&result, &first_result, comb.size) != 0) deterministic = 0;
        }
        if (it < o->warmup) continue;
        const int k = it - o->warmup;
        passes = be.is_gpu ? be.gpu.plan.passes : 1;
        for (int p = 0; p < passes; ++p) pass_samples[p][k] = pass_ms[p];
        level_samples[DR_LEVEL_LOCAL][k] = local_ms;
        level_samples[DR_LEVEL_STAGE][k] = ct.stage_ms;
        level_samples[DR_LEVEL_NODE][k] = ct.node_ms;
        level_samples[DR_LEVEL_GLOBAL][k] = ct.global_ms;
        level_samples[DR_LEVEL_BCAST][k] = ct.bcast_ms;
        level_samples[DR_LEVEL_TOTAL][k] = total_ms;
    }

    /* Phase 4: verification against the host reference, merged on rank 0. */
    dr_check_t check;
    memset(&check, 0, sizeof check);
    uint64_t max_depth = depth;
    DR_MPI_CHECK(MPI_Allreduce(&depth, &max_depth, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD));
    int local_bad = 0, any_local_bad = 0;
    if (o->verify) {
        dr_reference_t ref, *refs = NULL;
        dr_reference_compute(&o->gen, acc, first, count, be.threads, &ref);
        /* Each rank checks its own partial first, so a wrong result names the rank and level that made it. */
        dr_value_t partial;
        dr_check_t local_check;
        if (read_partial(&be, &comb, &partial) != DR_OK) abort_job(DR_ERR_RUNTIME);
        dr_reference_check(&ref, &partial, depth, &local_check);
        if (!local_check.pass) {
            local_bad = 1;
            dr_error("verification failed at level local (this rank's shard, elements %" PRIu64 "..%" PRIu64
                     "): %s", first, first + count, local_check.detail);
        }
        dr_watchdog_enter("verify (gathering the ranks' checks)");
        DR_MPI_CHECK(MPI_Allreduce(&local_bad, &any_local_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        dr_watchdog_leave();
        if (rank == 0 && !(refs = malloc((size_t)nranks * sizeof *refs))) abort_job(DR_ERR_RUNTIME);
        dr_watchdog_enter("verify (gathering the references)");
        DR_MPI_CHECK(MPI_Gather(&ref, (int)sizeof ref, MPI_BYTE, refs, (int)sizeof ref, MPI_BYTE, 0, MPI_COMM_WORLD));
        dr_watchdog_leave();
        if (rank == 0) {
            dr_reference_t total = refs[0];
            for (int i = 1; i < nranks; ++i) dr_reference_merge(&total, &refs[i]);
            /* The combine adds at most one rounding per rank (a linear chain, whatever algorithm MPI picks). */
            dr_reference_check(&total, &result, max_depth + (uint64_t)nranks, &check);
            free(refs);
        }
    }

    /* Phase 5: gather the per-rank records and report. */
    dr_rank_record_t rec, *recs = NULL;
    memset(&rec, 0, sizeof rec);
    rec.rank = rank;
    rec.node = topo.node;
    rec.local_rank = topo.local_rank;
    rec.is_gpu = be.is_gpu;
    rec.block = be.is_gpu ? be.gpu.req.block : 0;
    rec.passes = passes;
    snprintf(rec.host, sizeof rec.host, "%s", topo.host);
    snprintf(rec.node_name, sizeof rec.node_name, "%s", topo.node_name);
    snprintf(rec.device_name, sizeof rec.device_name, "%s", be.is_gpu ? be.gpu.name : "cpu");
    rec.first = first;
    rec.count = count;
    rec.depth = depth;
    rec.generate_ms = gen_ms;
    for (int p = 0; p < DR_GPU_MAX_PASSES; ++p) rec.pass_ms[p] = p < passes ? dr_median(pass_samples[p], o->iters) : NAN;
    for (int l = 0; l < DR_LEVEL_COUNT; ++l) rec.level_ms[l] = dr_median(level_samples[l], o->iters);
    rec.binding = binding;
    free(samples);
    if (rank == 0 && !(recs = calloc((size_t)nranks, sizeof *recs))) abort_job(DR_ERR_RUNTIME);
    dr_watchdog_enter("report (gathering the ranks' records)");
    DR_MPI_CHECK(MPI_Gather(&rec, (int)sizeof rec, MPI_BYTE, recs, (int)sizeof rec, MPI_BYTE, 0, MPI_COMM_WORLD));
    dr_watchdog_leave();
    int verdict = DR_OK;
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        first_line(lib);
        dr_binding_t *bs = malloc((size_t)nranks * sizeof *bs);
        char(*hosts)[64] = malloc((size_t)nranks * sizeof *hosts);
        int *shared = malloc((size_t)nranks * sizeof *shared);
        if (!bs || !hosts || !shared) abort_job(DR_ERR_RUNTIME);
        for (int i = 0; i < nranks; ++i) {
            bs[i] = recs[i].binding;
            memcpy(hosts[i], recs[i].host, 64);
        }
        dr_binding_mark_shared(bs, (const char(*)[64])hosts, nranks, shared);
        for (int i = 0; i < nranks; ++i) recs[i].shared_gpu = shared[i];
        free(bs);
        free(hosts);
        free(shared);
        dr_report_t rep = {
            .opt = o, .nranks = nranks, .nnodes = topo.nnodes, .emulated = topo.emulated,
            .n_total = o->scaling == DR_SCALING_WEAK ? o->n * (uint64_t)nranks : o->n, .acc = acc,
            .path_text = comb.path_text, .mpi_library = lib, .result = result, .deterministic = deterministic,
            .check = check, .ranks = recs,
        };
        if (dr_report_write(&rep, out) != 0 || (out != stdout && fclose(out) != 0)) {
            dr_error("writing the report to '%s' failed: %s", o->output[0] ? o->output : "stdout", strerror(errno));
            verdict = DR_ERR_RUNTIME;
        }
        fflush(stdout);
        if (any_local_bad) {
            dr_error("verification failed at level local on at least one rank (named above); the combined result "
                     "is %s", o->verify && check.pass ? "right all the same" : "wrong too");
            verdict = DR_ERR_VERIFY;
        } else if (o->verify && !check.pass) {
            dr_error("verification failed at level %s: every rank's partial was right, the combined result is not: "
                     "%s", o->combine == DR_COMBINE_FLAT ? "global" : "node or global", check.detail);
            verdict = DR_ERR_VERIFY;
        } else if (!deterministic) {
            dr_error("repetitions of the same reduction gave different results (a race?)");
            verdict = DR_ERR_VERIFY;
        }
        free(recs);
    }
    dr_watchdog_enter("report (the verdict from rank 0)");
    DR_MPI_CHECK(MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD));
    dr_watchdog_leave();
    dr_combine_free(&comb);
    if (be.is_gpu) dr_gpu_close(&be.gpu);
    free(be.h_base);
    dr_topology_free(&topo);
    return (dr_status_t)verdict;
}

int main(int argc, char **argv)
{
    dr_options_t opt;
    char parse_err[512];
    dr_options_default(&opt);
    dr_parse_result_t parsed = dr_options_parse(argc, argv, &opt, parse_err, sizeof parse_err);
    if (parsed == DR_PARSE_HELP || parsed == DR_PARSE_VERSION) {
        if (env_world_rank() == 0) {
            if (parsed == DR_PARSE_HELP) fputs(dr_options_usage(), stdout);
            else printf("dreduce %s\n", DR_VERSION);
        }
        return 0;
    }
    /* CUDA-aware Open MPI wants the device chosen before MPI_Init: use the launcher's local rank if it gave one
     * (the same choice is made again, and checked, once MPI's own node split is known). */
    int ngpus = parsed == DR_PARSE_OK && opt.device != DR_DEVICE_CPU ? dr_gpu_count() : 0;
    const char *source = NULL;
    int env_local = dr_binding_env_local_rank(&source);
    if (ngpus > 0 && env_local >= 0 && cudaSetDevice(env_local % ngpus) != cudaSuccess) (void)cudaGetLastError();

    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "dreduce: error: MPI_Init failed\n");
        return DR_ERR_RUNTIME;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    dr_status_t s = run(&opt, parsed, parse_err, ngpus, env_local, source);
    MPI_Finalize();
    return (int)s;
}
