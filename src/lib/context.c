/* libdreduce (include/dreduce.h): a context is one rank's device (GPU or CPU backend), its place in the node layout
 * and its combine buffers; a reduction is the local reduction (device array, host array in chunks, or a file) then
 * the combine across ranks. */
#define _GNU_SOURCE /* pause, _exit */
#include "dreduce.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "context.h"
#include "cpu_backend.h"
#include "fault.h"
#include "input.h"
#include "parallel.h"
#include "shard.h"
#include "stats.h"
#include "timing.h"
#include "watchdog.h"

_Static_assert(DREDUCE_MAX_PASSES == DR_GPU_MAX_PASSES, "dreduce.h and kernels/launch.h disagree on passes");

void dreduce_config_init(dreduce_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->device = DR_DEVICE_AUTO;
    cfg->gpu = -1;
    cfg->bind = DR_BINDOPT_WORKERS;
    cfg->kernel = DR_KERNEL_MULTIPASS;
    cfg->acc_mode = DR_ACC_WIDE;
    cfg->combine = DR_COMBINE_HIER;
    cfg->staging = DR_STAGING_AUTO;
    cfg->chunk_bytes = (size_t)64 << 20;
}

dr_status_t dr_context_agree(dreduce_context_t *ctx, dr_status_t s, const char *phase)
{
    int mine = (int)s, worst = (int)DR_ERR_RUNTIME;
    dr_watchdog_enter(ctx->wd, phase);
    const int rc = MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, ctx->topo.comm);
    dr_watchdog_leave(ctx->wd);
    return rc == MPI_SUCCESS ? (dr_status_t)worst : DR_ERR_RUNTIME;
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

/* This rank's GPU among the ngpus visible: cfg.gpu, the one the launcher gave the task, or by local rank. */
static dr_status_t open_gpu(dreduce_context_t *ctx, int ngpus, int per_task)
{
    const dreduce_config_t *cfg = &ctx->cfg;
    const dr_topology_t *t = &ctx->topo;
    char err[256];
    int gpu = cfg->gpu;
    if (gpu >= ngpus) {
        dr_error("%s %d requested but only %d GPUs are visible (0..%d)", DR_NAME("cfg.gpu", "--gpu"), gpu, ngpus,
                 ngpus - 1);
        return DR_ERR_USAGE;
    }
    if (gpu < 0)
        gpu = dr_binding_choose_gpu(t->host_local_rank, t->host_local_size, ngpus, per_task, cfg->share_gpus, err,
                                    sizeof err);
    if (gpu < 0) {
        if (t->host_local_rank == 0) dr_error("%s", err); /* every rank of the host sees it: say it once */
        return DR_ERR_USAGE;
    }
    ctx->binding.gpu_index = gpu;
    return dr_gpu_open(&ctx->gpu, gpu);
}

/* The gathered CPU sets are hwloc's hex masks ("0xffffffff,0x0000ffff"), 11 characters per 32 CPUs: 2048 bytes hold
 * a machine of 5,900 CPUs. A set that does not fit is sent as "", and that rank takes no part in the division. */
#define DR_WANT_STR 2048

/* Every rank of the host learns what CPUs each local rank wants (dr_binding_want; "" from a rank without a topology,
 * whose setup failed) in one MPI_Allgather over host_comm, and computes its own share of the node into share
 * (dr_binding_share; empty when it has none). note: how the division degraded. */
static dr_status_t divide_host(const dr_topology_t *t, hwloc_topology_t topo, const char *pci_bus_id,
                               hwloc_bitmap_t share, char *note, size_t notelen)
{
    const int n = t->host_local_size;
    char mine[DR_WANT_STR] = "";
    hwloc_bitmap_t want = topo ? hwloc_bitmap_alloc() : NULL;
    if (want && dr_binding_want(topo, pci_bus_id, dr_binding_env_task_cpus(), want) == 0) {
        const int len = hwloc_bitmap_snprintf(mine, sizeof mine, want);
        if (len < 0 || (size_t)len >= sizeof mine) mine[0] = '\0';
    }
    hwloc_bitmap_free(want);
    char *all = calloc((size_t)n, DR_WANT_STR);
    hwloc_bitmap_t *wants = calloc((size_t)n, sizeof *wants);
    /* A rank without the memory for the gather says so first, so that no rank waits in a gather it skips. */
    const int short_here = !all || !wants;
    int short_any = 1;
    if (MPI_Allreduce(&short_here, &short_any, 1, MPI_INT, MPI_MAX, t->host_comm) != MPI_SUCCESS || short_any) {
        free(all);
        free(wants);
        if (short_here) dr_error("dreduce_create: out of memory for the CPU sets of this host's %d ranks", n);
        else dr_error("dreduce_create: another rank of this host could not take part in dividing its CPUs");
        return DR_ERR_RUNTIME;
    }
    const int rc = MPI_Allgather(mine, DR_WANT_STR, MPI_CHAR, all, DR_WANT_STR, MPI_CHAR, t->host_comm);
    dr_status_t s = DR_OK;
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", rc);
        dr_error("dreduce_create: the ranks of this host could not exchange the CPUs they want (MPI_Allgather over "
                 "the host's communicator: %s)", msg);
        s = DR_ERR_RUNTIME;
    }
    for (int i = 0; s == DR_OK && i < n; ++i) {
        char *set = all + (size_t)i * DR_WANT_STR;
        set[DR_WANT_STR - 1] = '\0';
        if (!(wants[i] = hwloc_bitmap_alloc())) {
            dr_error("dreduce_create: out of memory for the CPU sets of this host's %d ranks", n);
            s = DR_ERR_RUNTIME;
        } else if (set[0] && hwloc_bitmap_sscanf(wants[i], set) != 0) {
            hwloc_bitmap_zero(wants[i]); /* unreadable: that rank takes no part */
        }
    }
    if (s == DR_OK && topo && mine[0])
        (void)dr_binding_share(topo, (hwloc_const_bitmap_t const *)wants, n, t->host_local_rank, share, note, notelen);
    for (int i = 0; i < n; ++i) hwloc_bitmap_free(wants[i]);
    free(wants);
    free(all);
    return s;
}

/* Choose GPU or CPU, pick the GPU for this rank, give it its share of the node's CPUs, and bind as cfg.bind says. */
static dr_status_t setup_device(dreduce_context_t *ctx)
{
    const dreduce_config_t *cfg = &ctx->cfg;
    const dr_topology_t *t = &ctx->topo;
    dr_binding_t *b = &ctx->binding;
    const int ngpus = cfg->device == DR_DEVICE_CPU ? 0 : dr_gpu_count();
    dr_binding_init(b);
    /* A rank's own failure (no GPU, a bad cfg.gpu, its GPU not opening) is its alone: it still joins the host's
     * gathers below, then returns its error (every rank learns it in dreduce_create's agreement, instead of waiting
     * in a gather for this one). */
    dr_status_t s = DR_OK;
    if (cfg->device == DR_DEVICE_GPU && ngpus == 0) {
        dr_error("%s: no GPU is visible to this process (check the driver and CUDA_VISIBLE_DEVICES); use %s",
                 DR_NAME("cfg.device DR_DEVICE_GPU", "--device gpu"),
                 DR_NAME("DR_DEVICE_CPU or DR_DEVICE_AUTO", "--device cpu or auto"));
        s = DR_ERR_USAGE;
    }
    ctx->is_gpu = s == DR_OK && cfg->device != DR_DEVICE_CPU && ngpus > 0;
    char err[256] = "", busid0[32] = "";
    if (ctx->is_gpu && ngpus == 1 && cudaDeviceGetPCIBusId(busid0, sizeof busid0, 0) != cudaSuccess) busid0[0] = 0;
    int per_task = 0;
    DR_CHECK(one_gpu_per_task(t, ctx->is_gpu ? ngpus : 0, busid0, &per_task));
    if (s == DR_OK && ctx->is_gpu) s = open_gpu(ctx, ngpus, per_task);

    hwloc_topology_t topo = NULL;
    if (s == DR_OK && dr_binding_topology_load(&topo, dr_binding_env_xml(), err, sizeof err) != 0) topo = NULL;
    hwloc_bitmap_t share = hwloc_bitmap_alloc();
    const char *busid = ctx->is_gpu ? ctx->gpu.pci_bus_id : NULL;
    char share_note[DR_BINDING_STR] = "";
    const dr_status_t divided = divide_host(t, share ? topo : NULL, busid, share, share_note, sizeof share_note);
    if (s == DR_OK) s = divided;
    if (s == DR_OK && !topo) snprintf(b->note, sizeof b->note, "no hwloc topology (%.200s): not bound", err);
    if (s == DR_OK && topo) {
        const dr_bind_mode_t mode = cfg->bind == DR_BINDOPT_AUTO   ? DR_BIND_AUTO
                                    : cfg->bind == DR_BINDOPT_NONE ? DR_BIND_NONE
                                                                   : DR_BIND_WORKERS;
        /* A rank left out of the division (its set did not fit the gather) is alone: its share is all it wants. */
        if (share && hwloc_bitmap_iszero(share))
            (void)dr_binding_want(topo, busid, dr_binding_env_task_cpus(), share);
        const int gpu_index = b->gpu_index;
        dr_binding_apply(topo, hwloc_topology_is_thissystem(topo), busid, mode, share, b);
        b->gpu_index = gpu_index;
        if (share_note[0] && mode != DR_BIND_NONE) dr_binding_note_add(b, "%s", share_note);
        /* The share is in effect where the process is now bound to it (AUTO) or the workers will be (WORKERS); a
         * dry run's share is another machine's. */
        if (share && !b->dry_run && b->share[0] && (mode == DR_BIND_WORKERS || strcmp(b->affinity, b->share) == 0))
            ctx->share_cpus = hwloc_bitmap_weight(share);
        ctx->cache_bytes = dr_binding_cache_bytes(
            topo, share && !hwloc_bitmap_iszero(share) ? share : hwloc_topology_get_allowed_cpuset(topo));
        /* Under AUTO too the workers are placed on the share, not left to inherit the caller's thread: a caller may
         * narrow its own thread while the context lives. */
        if ((mode == DR_BIND_WORKERS || mode == DR_BIND_AUTO) && ctx->share_cpus > 0) {
            int cpu, placed = 1;
            hwloc_bitmap_foreach_begin(cpu, share)
            if (dr_parallel_cpus_add(&ctx->workers, cpu) != 0) placed = 0;
            hwloc_bitmap_foreach_end();
            if (!placed) {
                dr_parallel_cpus_clear(&ctx->workers);
                ctx->share_cpus = 0;
                dr_binding_note_add(b, "its share has CPUs past %d: worker threads not placed", DR_PARALLEL_MAX_CPUS);
            }
        }
    }
    if (topo) hwloc_topology_destroy(topo);
    hwloc_bitmap_free(share);
    return s;
}

/* The CPU backend's threads: cfg.cpu_threads when given; else one per CPU of the rank's share where it is in effect
 * (cfg.bind AUTO bound the process there; under both AUTO and WORKERS the workers are placed there); else one per
 * CPU of the process's affinity, divided among the host's ranks when each sees every CPU (unbound ranks would
 * oversubscribe them). */
static int choose_threads(const dreduce_context_t *ctx)
{
    if (ctx->cfg.cpu_threads > 0) return ctx->cfg.cpu_threads;
    if (ctx->share_cpus > 0) return ctx->share_cpus;
    const int mine = dr_parallel_default_threads(), ranks = ctx->topo.host_local_size;
    if (mine >= dr_parallel_online_cpus() && ranks > 1) return mine / ranks > 0 ? mine / ranks : 1;
    return mine;
}

/* One line per bad field, naming it; DR_ERR_USAGE if any. */
static dr_status_t check_config(const dreduce_config_t *c)
{
    dr_status_t s = DR_OK;
#define DR_BAD_ENUM(field, option, type, count)                                                                 \
    if ((unsigned)c->field >= (unsigned)(count)) {                                                             \
        dr_error("%s is %d: not a " #type " (0..%d)", DR_NAME("cfg." #field, option), (int)c->field, (count) - 1); \
        s = DR_ERR_USAGE;                                                                                      \
    }
    DR_BAD_ENUM(device, "--device", dr_device_choice_t, DR_DEVICE_CPU + 1)
    DR_BAD_ENUM(bind, "--bind", dr_bind_choice_t, DR_BINDOPT_WORKERS + 1)
    DR_BAD_ENUM(kernel, "--kernel", dr_kernel_t, DR_KERNEL_COUNT)
    DR_BAD_ENUM(acc_mode, "--acc", dr_acc_mode_t, DR_ACC_MODE_COUNT)
    DR_BAD_ENUM(combine, "--combine", dr_combine_mode_t, DR_COMBINE_FLAT + 1)
    DR_BAD_ENUM(staging, "--staging", dr_staging_t, DR_STAGING_MAPPED + 1)
    DR_BAD_ENUM(nan, "--nan", dr_nan_policy_t, DR_NAN_POLICY_COUNT)
    DR_BAD_ENUM(host_path, "--host-path", dr_host_path_t, DR_HOST_PATH_COUNT)
#undef DR_BAD_ENUM
    if (c->acc_mode == DR_ACC_MODE_EXACT && c->kernel != DR_KERNEL_MULTIPASS) {
        dr_error("%s exact sums with the multipass kernel only, and %s is %s (the teaching levels accumulate in one "
                 "register)",
                 DR_NAME("cfg.acc_mode", "--acc"), DR_NAME("cfg.kernel", "--kernel"), dr_kernel_name(c->kernel));
        s = DR_ERR_USAGE;
    }
    if (c->block != 0 && (c->block < 32 || c->block > 1024 || (c->block & (c->block - 1)))) {
        dr_error("%s is %d: must be 0 (automatic) or a power of two in 32..1024", DR_NAME("cfg.block", "--block"),
                 c->block);
        s = DR_ERR_USAGE;
    }
    if (c->ranks_per_node < 0) {
        dr_error("%s is %d: must be >= 0", DR_NAME("cfg.ranks_per_node", "--ranks-per-node"), c->ranks_per_node);
        s = DR_ERR_USAGE;
    }
    if (c->cpu_threads < 0) {
        dr_error("%s is %d: must be >= 0", DR_NAME("cfg.cpu_threads", "--threads"), c->cpu_threads);
        s = DR_ERR_USAGE;
    }
    if (!(c->timeout >= 0)) { /* NaN too */
        dr_error("%s is %g: must be >= 0 (0: never)", DR_NAME("cfg.timeout", "--timeout"), c->timeout);
        s = DR_ERR_USAGE;
    }
    if (c->chunk_bytes < 4096) {
        dr_error("%s is %zu: must be >= 4096", "cfg.chunk_bytes", c->chunk_bytes);
        s = DR_ERR_USAGE;
    }
    if (c->allreduce != 0 && c->allreduce != 1) {
        dr_error("%s is %d: must be 0 or 1", DR_NAME("cfg.allreduce", "--allreduce"), c->allreduce);
        s = DR_ERR_USAGE;
    }
    return s;
}

/* The fields every rank must set alike, and why: they decide which collectives run (combine, allreduce), over
 * which communicators (ranks_per_node), and in which MPI datatype the partials travel (acc_mode). Ranks that
 * differed there would wait in different collectives or combine unlike bits. The other fields are each rank's own
 * (device, gpu, share_gpus, bind, kernel, block, staging, cpu_threads, timeout, chunk_bytes): they change where and
 * how a rank reduces its part, not what the ranks exchange. */
#define DR_AGREED_FIELDS 4
static int agreed_value(const dreduce_config_t *c, int f)
{
    switch (f) {
    case 0: return (int)c->combine;
    case 1: return c->allreduce;
    case 2: return c->ranks_per_node;
    default: return (int)c->acc_mode;
    }
}

static const char *agreed_name(int f)
{
    static const char *const fields[] = {"cfg.combine", "cfg.allreduce", "cfg.ranks_per_node", "cfg.acc_mode"};
    static const char *const options[] = {"--combine", "--allreduce", "--ranks-per-node", "--acc"};
    return DR_NAME(fields[f], options[f]);
}

static void agreed_text(int f, int v, char *buf, size_t len)
{
    if (f == 0) snprintf(buf, len, "%s", v == DR_COMBINE_FLAT ? "FLAT" : "HIER");
    else if (f == 3) snprintf(buf, len, "%s", dr_acc_mode_name((dr_acc_mode_t)v));
    else snprintf(buf, len, "%d", v);
}

/* dreduce_create's agreement, one MPI_Allreduce (MAXLOC) over the duplicate: every rank learns the worst local
 * status (a NULL cfg or out, a bad field, no memory) and, for each agreed field, its largest and smallest value
 * and the lowest rank holding each. A rank with a local error returns it; every other rank returns the same
 * status silently (the failing rank said why). When the agreed fields differ, rank 0 prints one line naming each
 * field, two values and two ranks, and every rank returns DR_ERR_USAGE. */
static dr_status_t agree_config(const dr_topology_t *t, dr_status_t mine, const dreduce_config_t *cfg)
{
    struct { int v, rank; } rec[1 + 2 * DR_AGREED_FIELDS], all[1 + 2 * DR_AGREED_FIELDS];
    rec[0].v = (int)mine;
    rec[0].rank = t->rank;
    for (int f = 0; f < DR_AGREED_FIELDS; ++f) {
        const int v = mine == DR_OK ? agreed_value(cfg, f) : 0; /* checked: >= 0 */
        rec[1 + 2 * f].v = mine == DR_OK ? v : INT_MIN;          /* the largest value */
        rec[2 + 2 * f].v = mine == DR_OK ? -v : INT_MIN;         /* minus the smallest */
        rec[1 + 2 * f].rank = rec[2 + 2 * f].rank = t->rank;
    }
    DR_MPI_CHECK(MPI_Allreduce(rec, all, 1 + 2 * DR_AGREED_FIELDS, MPI_2INT, MPI_MAXLOC, t->comm));
    if (all[0].v != DR_OK) return (dr_status_t)all[0].v;
    char line[768] = "";
    size_t used = 0;
    for (int f = 0; f < DR_AGREED_FIELDS; ++f) {
        const int hi = all[1 + 2 * f].v, lo = -all[2 + 2 * f].v;
        if (hi == lo) continue;
        char a[32], b[32];
        agreed_text(f, lo, a, sizeof a);
        agreed_text(f, hi, b, sizeof b);
        const int n = snprintf(line + used, sizeof line - used, "%s%s differs: %s on rank %d, %s on rank %d",
                               used ? "; " : "", agreed_name(f), a, all[2 + 2 * f].rank, b, all[1 + 2 * f].rank);
        if (n > 0 && (size_t)n < sizeof line - used) used += (size_t)n;
    }
    if (!used) return DR_OK;
    if (t->rank == 0) dr_error("dreduce_create: %s (these must be the same on every rank)", line);
    return DR_ERR_USAGE;
}

/* Collective, after every rank's device is known: settle how the combine's collectives run, and choose how GPU
 * partials reach MPI, once per context. cfg.timeout, cfg.staging and the device are each rank's own, but what
 * follows from them must be alike on every rank, so it is decided from all of them in one MPI_Allreduce:
 *  - a rank under a timeout: every rank prepares the watchdog's pings (collective) and answers them;
 *  - a rank on device buffers (forced, or measured below): every rank's collectives stay blocking (Open MPI's
 *    nonblocking collectives do not take device buffers, and a blocking collective does not match a nonblocking
 *    one); with no rank under a timeout they are blocking too (nothing needs to watch them);
 *  - every rank on a GPU with staging auto, on a CUDA-aware MPI: both paths are measured (dr_combine_measure). */
static dr_status_t choose_path(dreduce_context_t *ctx)
{
    const dr_topology_t *t = &ctx->topo;
    dr_status_t s = DR_OK;
    dr_cuda_awareness_t aware;
    dr_combine_cuda_awareness(&aware);
    const int auto_gpu = ctx->is_gpu && ctx->cfg.staging == DR_STAGING_AUTO;
    int mine[3] = {dr_watchdog_armed(ctx->wd), ctx->is_gpu && ctx->cfg.staging == DR_STAGING_DEVICE, !auto_gpu};
    int any[3] = {mine[0], mine[1], mine[2]};
    if (t->nranks > 1) {
        dr_watchdog_enter(ctx->wd, "setup (every rank reporting its timeout, staging and device)");
        const int rc = MPI_Allreduce(mine, any, 3, MPI_INT, MPI_MAX, t->comm);
        dr_watchdog_leave(ctx->wd);
        if (rc != MPI_SUCCESS) return DR_ERR_RUNTIME;
    }
    const int any_watched = any[0], any_device = any[1], all_auto_gpu = !any[2];
    if (t->nranks > 1 && any_watched) s = dr_watchdog_prepare(ctx->wd, t->comm, t->node_name);
    if (s == DR_OK && t->nranks > 1 && all_auto_gpu && aware.compile_time && aware.run_time)
        s = dr_combine_measure(t, ctx->cfg.combine, ctx->cfg.allreduce, ctx->wd, ctx->path_us);
    /* path_us are every rank's slowest, so a measured choice is the same everywhere. */
    ctx->blocking = any_device || !any_watched || (isfinite(ctx->path_us[0]) && ctx->path_us[0] <= ctx->path_us[1]);
    if (s != DR_OK || !ctx->is_gpu) return s;
    return dr_combine_choose_path(ctx->cfg.staging, t->nranks, ctx->path_us, &ctx->path, ctx->path_text,
                                  sizeof ctx->path_text);
}

dr_status_t dreduce_create(MPI_Comm comm, const dreduce_config_t *cfg, dreduce_context_t **out)
{
    if (out) *out = NULL;
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (!up || down) {
        dr_error("dreduce_create: MPI is %s: call it between MPI_Init and MPI_Finalize",
                 down ? "finalized" : "not initialized");
        return DR_ERR_USAGE;
    }
    /* Checked before any MPI call on it: MPI's own error handler would end the job. */
    if (comm == MPI_COMM_NULL) {
        dr_error("dreduce_create: comm is MPI_COMM_NULL (pass a communicator this process belongs to)");
        return DR_ERR_USAGE;
    }
    /* Every rank reaches the agreement below whatever its own problem, so that no rank returns while the others
     * wait for it in a collective. */
    dr_topology_t topo;
    dr_status_t s = dr_topology_open(&topo, comm);
    if (s != DR_OK) {
        dr_topology_free(&topo);
        return s;
    }
    dr_log_set_rank(topo.rank, topo.nranks, topo.host);
    dr_status_t mine = DR_OK;
    if (!out) {
        dr_error("dreduce_create: out is NULL (pass the address of a dreduce_context_t *)");
        mine = DR_ERR_USAGE;
    }
    if (!cfg) {
        dr_error("dreduce_create: cfg is NULL (fill a dreduce_config_t with dreduce_config_init)");
        mine = DR_ERR_USAGE;
    } else if (check_config(cfg) != DR_OK) {
        mine = DR_ERR_USAGE;
    }
    dreduce_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        dr_error("dreduce_create: out of memory for the context (%zu bytes)", sizeof *ctx);
        mine = DR_ERR_RUNTIME;
    }
    if ((s = agree_config(&topo, mine, cfg)) != DR_OK) {
        free(ctx);
        dr_topology_free(&topo);
        return s;
    }
    ctx->cfg = *cfg;
    ctx->topo = topo;
    if ((s = dr_topology_split(&ctx->topo, cfg->ranks_per_node)) != DR_OK) {
        dr_topology_free(&ctx->topo);
        free(ctx);
        return s;
    }
    dr_log_set_rank(ctx->topo.rank, ctx->topo.nranks, ctx->topo.host);
    for (int i = 0; i < 2; ++i) ctx->path_us[i] = NAN;
    if (dr_watchdog_create(&ctx->wd, cfg->timeout) != DR_OK)
        dr_warn("could not start the timeout watchdog: collectives unwatched");
    s = setup_device(ctx);
    ctx->threads = choose_threads(ctx); /* after the binding, which sets the share the threads run on */
    if (s == DR_OK && !ctx->is_gpu && (cfg->host_path == DR_HOST_PATH_GPU || cfg->host_path == DR_HOST_PATH_SPLIT)) {
        dr_error("%s is %s: it needs a GPU, and this rank runs on the CPU backend (%s): use auto or cpu",
                 DR_NAME("cfg.host_path", "--host-path"), dr_host_path_name(cfg->host_path),
                 cfg->device == DR_DEVICE_CPU ? "device cpu" : "no GPU visible");
        s = DR_ERR_USAGE;
    }
    if (s == DR_OK && !ctx->is_gpu && cfg->staging != DR_STAGING_AUTO && ctx->topo.rank == 0)
        dr_warn("no GPU: the CPU backend's partials are host memory, the staging choice has no effect");
    if ((s = dr_context_agree(ctx, s, "setup (every rank reporting its device)")) == DR_OK)
        s = dr_context_agree(ctx, choose_path(ctx), "setup (every rank reporting its combine path)");
    if (s != DR_OK) {
        dreduce_destroy(ctx);
        return s;
    }
    for (int p = 0; p < DREDUCE_MAX_PASSES; ++p) ctx->timings.pass_ms[p] = NAN;
    *out = ctx;
    return DR_OK;
}

/* Same (dtype, op) checks on every rank, before any communication (acc_mode is alike on every rank). */
static dr_status_t check_shape(dr_dtype_t dtype, dr_op_t op, dr_acc_mode_t mode)
{
    if ((unsigned)dtype >= DR_DTYPE_COUNT) {
        dr_error("dtype %d is not a dr_dtype_t (0..%d: %s)", (int)dtype, DR_DTYPE_COUNT - 1, dr_dtype_names());
        return DR_ERR_USAGE;
    }
    if ((unsigned)op >= DR_OP_COUNT) {
        dr_error("op %d is not a dr_op_t (0..%d: %s)", (int)op, DR_OP_COUNT - 1, dr_op_names());
        return DR_ERR_USAGE;
    }
    if (!dr_op_valid(dtype, op)) {
        dr_error("op %s is not defined for type %s (bitwise ops need an integer type)", dr_op_name(op),
                 dr_dtype_name(dtype));
        return DR_ERR_USAGE;
    }
    if (!dr_acc_mode_valid(dtype, op, mode) && mode == DR_ACC_NATIVE) {
        dr_error("%s native means nothing for op %s (%s): use %s wide or exact", DR_NAME("cfg.acc_mode", "--acc"),
                 dr_op_name(op),
                 op == DR_STATS ? "its moments are float64, its sums exact or float64"
                                : "it compares the values themselves, exactly",
                 DR_NAME("cfg.acc_mode", "--acc"));
        return DR_ERR_USAGE;
    }
    if (!dr_acc_mode_valid(dtype, op, mode)) {
        dr_error("op %s of %s has no exact mode (%s exact: sums exactly; min and max are exact anyway): use %s wide "
                 "or native for products",
                 dr_op_name(op), dr_dtype_name(dtype), DR_NAME("cfg.acc_mode", "--acc"),
                 DR_NAME("cfg.acc_mode", "--acc"));
        return DR_ERR_USAGE;
    }
    return DR_OK;
}

/* stats, argmin and argmax reduce on a GPU with the multipass kernel only (kernels/fused.cu: the teaching levels
 * accumulate one register). cfg.kernel is each rank's own: a rank's error of its own. */
static dr_status_t check_kernel(const dreduce_context_t *ctx, dr_dtype_t dtype, dr_op_t op)
{
    if (!ctx->is_gpu || ctx->cfg.kernel == DR_KERNEL_MULTIPASS) return DR_OK;
    if (ctx->cfg.nan == DR_NAN_OMIT && dr_dtype_is_float(dtype)) {
        dr_error("%s omit runs on the multipass kernel only, and %s is %s (the teaching levels read every element "
                 "as a value)",
                 DR_NAME("cfg.nan", "--nan"), DR_NAME("cfg.kernel", "--kernel"), dr_kernel_name(ctx->cfg.kernel));
        return DR_ERR_USAGE;
    }
    if (op != DR_STATS && !dr_op_is_arg(op)) return DR_OK;
    dr_error("op %s runs with the multipass kernel only, and %s is %s (the teaching levels accumulate one register)",
             dr_op_name(op), DR_NAME("cfg.kernel", "--kernel"), dr_kernel_name(ctx->cfg.kernel));
    return DR_ERR_USAGE;
}

/* The count checks of dreduce_reduce, for dreduce_prepare (dtype already checked). */
static dr_status_t check_count(dr_dtype_t dtype, uint64_t count)
{
    const size_t esize = dr_dtype_size(dtype);
    /* PTRDIFF_MAX, not SIZE_MAX: no object is larger (C11 6.5.6: the difference of two pointers into it must be a
     * ptrdiff_t), so a larger count cannot describe a real buffer. */
    if (count > (uint64_t)PTRDIFF_MAX / esize) {
        dr_error("count %llu: that many elements of %zu bytes do not fit in this process's address space (at most "
                 "%llu bytes, PTRDIFF_MAX)", (unsigned long long)count, esize, (unsigned long long)PTRDIFF_MAX);
        return DR_ERR_USAGE;
    }
    return DR_OK;
}

/* The combine's records for (acc, op). Records have one size whatever the type (dr_record_t; MPI moves the bytes
 * the context's acc_mode needs), so they are allocated once per context (on the path chosen at create) and a new
 * (acc, op) only changes what the record says: no allocation, no driver call. */
static dr_status_t ensure_combine(dreduce_context_t *ctx, dr_acc_kind_t acc, dr_op_t op)
{
    if (ctx->comb_ready) {
        if (ctx->comb.acc != acc || ctx->comb.op != op) ctx->have_partial = 0;
        ctx->comb.acc = acc;
        ctx->comb.op = op;
        ctx->comb.size = dr_acc_kind_size(acc);
        return DR_OK;
    }
    ctx->have_partial = 0;
    DR_CHECK(dr_combine_setup(&ctx->comb, ctx->cfg.acc_mode, acc, op, ctx->path, ctx->path_text,
                              ctx->is_gpu ? ctx->gpu.d_result : NULL, ctx->topo.rank));
    ctx->comb_ready = 1;
    /* The kernels write the partial straight into the record MPI reads (its value), except when it is copied there
     * (STAGED). */
    if (ctx->is_gpu && ctx->comb.path == DR_PATH_MAPPED)
        dr_gpu_set_partial_target(&ctx->gpu, ctx->comb.mapped_partial, &ctx->comb.partial->value);
    else if (ctx->is_gpu && ctx->comb.path == DR_PATH_DEVICE)
        dr_gpu_set_partial_target(&ctx->gpu, &ctx->comb.partial->value, NULL);
    return DR_OK;
}

dr_status_t dreduce_prepare(dreduce_context_t *ctx, dr_dtype_t dtype, dr_op_t op, uint64_t count)
{
    if (!ctx) {
        dr_error("dreduce_prepare: ctx is NULL");
        return DR_ERR_USAGE;
    }
    /* Every check is folded into the one agreement, so a rank whose own arguments are bad (they may differ: counts
     * do) still meets the others there, and every rank returns the same status. */
    dr_status_t s = check_shape(dtype, op, ctx->cfg.acc_mode);
    if (s == DR_OK) s = check_count(dtype, count);
    if (s == DR_OK) s = check_kernel(ctx, dtype, op);
    if (s == DR_OK && ctx->is_gpu) s = dr_gpu_use(&ctx->gpu);
    if (s == DR_OK) {
        const dr_acc_kind_t acc = dr_acc_select(dtype, op, ctx->cfg.acc_mode);
        s = ensure_combine(ctx, acc, op);
        if (s == DR_OK && ctx->is_gpu)
            s = dr_gpu_set_shape(&ctx->gpu, ctx->cfg.kernel, ctx->cfg.block, dtype, op, acc, ctx->cfg.nan, NULL,
                                 count, 0, 0);
    }
    s = dr_context_agree(ctx, s, "prepare (every rank reporting its plan)");
    if (s != DR_OK || ctx->topo.nranks == 1) return s;
    /* Where this rank's part starts, the parts in rank order (argmin/argmax use it). Made for every op: a rank whose op
     * differs from the others' must not leave them in a collective it skips. */
    uint64_t before = 0;
    dr_watchdog_enter(ctx->wd, "prepare (MPI_Exscan of the ranks' counts)");
    const int rc = MPI_Exscan(&count, &before, 1, MPI_UINT64_T, MPI_SUM, ctx->topo.comm);
    dr_watchdog_leave(ctx->wd);
    if (rc != MPI_SUCCESS) {
        dr_error("dreduce_prepare: MPI_Exscan of the ranks' counts failed");
        return DR_ERR_RUNTIME;
    }
    ctx->have_first = dr_op_is_arg(op);
    ctx->first_count = count;
    ctx->first_index = ctx->topo.rank == 0 ? 0 : before; /* MPI_Exscan leaves rank 0's undefined */
    return DR_OK;
}

/* Where buf lives, for a GPU context: *on_device 1 device-accessible (device or managed memory of our GPU), 0 host;
 * *managed 1 for managed memory; *pinned 1 for page-locked or registered host memory. */
static dr_status_t classify(dreduce_context_t *ctx, const void *buf, int *on_device, int *managed, int *pinned)
{
    *on_device = *managed = *pinned = 0;
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, buf) != cudaSuccess) { /* no driver, or an old one for pageable memory */
        (void)cudaGetLastError();
        return DR_OK;
    }
    if (a.type == cudaMemoryTypeDevice && (!ctx->is_gpu || a.device != ctx->gpu.device)) {
        if (ctx->is_gpu)
            dr_error("the buffer is in the memory of GPU %d but this rank's context uses GPU %d: pass a buffer of "
                     "GPU %d or host memory", a.device, ctx->gpu.device, ctx->gpu.device);
        else
            dr_error("the buffer is in GPU %d's memory but this context uses the CPU backend: pass host memory or "
                     "create the context with a GPU", a.device);
        return DR_ERR_USAGE;
    }
    *on_device = ctx->is_gpu && (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged);
    *managed = a.type == cudaMemoryTypeManaged;
    *pinned = a.type == cudaMemoryTypeHost;
    return DR_OK;
}

/* DREDUCE_FAULT (src/common/fault.h, tests only): make this rank crash, hang or corrupt its partial. */
static void inject_faults(dreduce_context_t *ctx)
{
    const int rank = ctx->topo.rank;
    if (dr_fault("exit", rank)) {
        dr_error("injected fault (DREDUCE_FAULT=exit@%d): exiting in the local level", rank);
        _exit(9);
    }
    if (dr_fault("corrupt", rank)) {
        /* The top byte's lowest bit: an exponent bit of a float, far outside any bound; of an exact sum, a bit of
         * its top word (2^2144 and more). */
        const size_t size = ctx->comb.acc == DR_ACC_EXACT ? 8 * DR_EXACT_WORDS : ctx->comb.size;
        if (ctx->is_gpu) {
            dr_partial_t v;
            uint64_t nan = 0;
            if (dr_gpu_read_partial(&ctx->gpu, ctx->comb.acc, &v, &nan) != DR_OK) return;
            ((unsigned char *)&v)[size - 1] ^= 1;
            if (dr_gpu_write_partial(&ctx->gpu, ctx->comb.acc, &v, nan) != DR_OK) return;
        } else {
            ((unsigned char *)&ctx->partial)[size - 1] ^= 1;
            memcpy(&ctx->comb.partial->value, &ctx->partial, size);
        }
    }
    if (dr_fault("hang", rank)) {
        dr_error("injected fault (DREDUCE_FAULT=hang@%d): stopping before the combine", rank);
        for (;;) pause();
    }
}

/* The signature of a call (combine.h): what every rank must pass alike, and whether this rank's part is empty.
 * shape_ok 0: (dtype, op) failed check_shape on this rank, whose record then says it failed; its accumulator kind
 * is not looked up. */
static void make_signature(const dreduce_context_t *ctx, dr_dtype_t dtype, dr_op_t op, int shape_ok, uint64_t count,
                           dr_signature_t *sig)
{
    memset(sig, 0, sizeof *sig);
    sig->v[DR_SIG_DTYPE] = (int32_t)dtype;
    sig->v[DR_SIG_OP] = (int32_t)op;
    sig->v[DR_SIG_ACC_MODE] = (int32_t)ctx->cfg.acc_mode;
    sig->v[DR_SIG_ACC_KIND] = shape_ok ? (int32_t)dr_acc_select(dtype, op, ctx->cfg.acc_mode) : -1;
    sig->v[DR_SIG_EMPTY] = count == 0;
    sig->v[DR_SIG_COMBINE] = (int32_t)ctx->cfg.combine;
    sig->v[DR_SIG_ALLREDUCE] = ctx->cfg.allreduce != 0;
    sig->v[DR_SIG_RANKS_PER_NODE] = ctx->cfg.ranks_per_node;
    sig->v[DR_SIG_NAN] = (int32_t)ctx->cfg.nan;
}

/* The ops that have no value for an array with no element (dreduce_result_t.no_value): their identity is not data.
 * sum and prod are 0 and 1 as NumPy's; stats says so with count 0. */
static int op_has_no_empty_value(dr_op_t op)
{
    return op == DR_MIN || op == DR_MAX || op == DR_BAND || op == DR_BOR || op == DR_BXOR || dr_op_is_arg(op);
}

/* NaN policy OMIT, an array of NaN only: min and max are NaN, as np.nanmin/np.nanmax give (every element was
 * replaced by the op's identity, which is not data); argmin/argmax have no value (np.nanargmin raises). */
static void all_nan_result(dr_acc_kind_t acc, dr_op_t op, dreduce_result_t *out)
{
    if (dr_op_is_arg(op)) {
        out->no_value = 1;
        out->value.arg.value.f64 = dr_bits_to_f64(0x7fffffffffffffffull);
        out->value.arg.index = DR_ARG_NONE;
    } else if (op == DR_MIN || op == DR_MAX) {
        if (acc == DR_ACC_F32) out->value.f32 = dr_bits_to_f32(0x7fffffffu);
        else if (acc == DR_ACC_F64) out->value.f64 = dr_bits_to_f64(0x7fffffffffffffffull);
    }
}

/* Whether a call with signature sig leaves NaN out: the policy OMIT and a float type. Only then did the local level
 * write the record's NaN count (the kernels of PROPAGATE and of the integer rows leave it as an earlier call did),
 * so only then is it read; elsewhere the count is 0. */
static int omits_nan(const dreduce_context_t *ctx, const dr_signature_t *sig)
{
    return ctx->cfg.nan == DR_NAN_OMIT && dr_dtype_is_float((dr_dtype_t)sig->v[DR_SIG_DTYPE]);
}

/* This rank's NaN count of the last reduction, from its partial record (on the DEVICE path, in device memory). */
static dr_status_t read_nan_count(const dreduce_context_t *ctx, uint64_t *out)
{
    if (ctx->comb.path == DR_PATH_DEVICE)
        DR_CUDA_CHECK(cudaMemcpy(out, &ctx->comb.partial->nan_count, sizeof *out, cudaMemcpyDeviceToHost));
    else *out = ctx->comb.partial->nan_count;
    return DR_OK;
}

/* With a reduce to rank 0 under a timeout (nonblocking collectives), the other ranks never wait for the root: they
 * could run ahead by any number of calls, and MPI buffers their messages at the root (Open MPI: tens of MB after
 * 10^5 calls). Every DR_SYNC_EVERY-th combine is an allreduce instead, still one collective per level, which bounds
 * the lead. Blocking MPI_Reduce needs none of this (the MPI's own flow control bounds it). */
#define DR_SYNC_EVERY 256

/* After the local level, whatever its status: the combine (one collective per level with >= 2 ranks), the result
 * where it is valid, the times. A rank whose local level failed (`local`) still joins the combine, with a host
 * record flagged failed, so that no other rank gets a value mixed from two calls and the collectives stay matched
 * for the next call; it then returns its own error. */
static dr_status_t finish(dreduce_context_t *ctx, dr_status_t local, const dr_signature_t *sig, uint64_t count,
                          dreduce_result_t *out, double t0)
{
    dreduce_timings_t *tm = &ctx->timings;
    dr_combine_times_t ct;
    dr_record_t *final = NULL;
    dr_status_t s = local;
    const int sync = !ctx->cfg.allreduce && !ctx->blocking &&
                     ++ctx->calls % DR_SYNC_EVERY == 0;
    const int allreduce = ctx->cfg.allreduce || ctx->force_allreduce || sync;
    if (s == DR_OK) s = dr_combine_set_signature(&ctx->comb, sig, count);
    if (s == DR_OK) {
        inject_faults(ctx);
        s = dr_combine_run(&ctx->comb, &ctx->topo, ctx->cfg.combine, allreduce, ctx->wd, ctx->blocking, &final, &ct);
        if (s != DR_OK) return s; /* MPI failed: nothing to join any more */
    } else {
        dr_record_t *f = ctx->fail_rec;
        dr_record_init(&f[0], sig, ctx->topo.rank, s);
        f[0].count = count;
        ct.stage_ms = NAN;
        if (dr_combine_levels(&ctx->topo, ctx->cfg.combine, allreduce, ctx->wd, ctx->blocking, ctx->cfg.acc_mode,
                              &f[0], &f[1], &f[2], &final, &ct) != DR_OK)
            return s;
        final = NULL; /* our own error stands, whatever the others sent */
    }
    if (sync && !ctx->force_allreduce && ctx->topo.rank != 0) final = NULL; /* rank 0's, as configured */
    const int omit = omits_nan(ctx, sig);
    if (s == DR_OK && omit) DR_CHECK(read_nan_count(ctx, &tm->nan_count));
    tm->stage_ms = ct.stage_ms;
    tm->node_ms = ct.node_ms;
    tm->global_ms = ct.global_ms;
    tm->bcast_ms = ct.bcast_ms;
    if (final) {
        dr_record_t rec;
        DR_CHECK(dr_combine_read_record(&ctx->comb, final, &rec));
        DR_CHECK(dr_record_check(&rec));
        out->kind = dr_acc_result_kind(ctx->comb.acc);
        out->valid = 1;
        out->no_value = rec.sig[DR_SIG_EMPTY].min == 1 && op_has_no_empty_value(ctx->comb.op);
        dr_partial_result(ctx->comb.acc, &rec.value, &out->value);
        if (dr_acc_kind_is_stats(ctx->comb.acc)) dr_stats_result(ctx->comb.acc, &rec.value, &out->stats);
        out->count = rec.count;
        out->nan_count = omit ? rec.nan_count : 0;
        if (omit && rec.count > 0 && rec.nan_count == rec.count) all_nan_result(ctx->comb.acc, ctx->comb.op, out);
    }
    tm->total_ms = dr_now_ms() - t0;
    return s;
}

void dr_timings_reset(dreduce_timings_t *tm)
{
    memset(tm, 0, sizeof *tm);
    tm->local_ms = tm->load_ms = tm->read_ms = tm->stage_ms = tm->node_ms = tm->global_ms = tm->bcast_ms =
        tm->total_ms = tm->launch_ms = tm->wait_ms = tm->host_cpu_ms = tm->host_gpu_ms = NAN;
    tm->host_path = tm->host_pinned = -1;
    for (int p = 0; p < DREDUCE_MAX_PASSES; ++p) tm->pass_ms[p] = NAN;
}

static void record_chunks(dreduce_timings_t *tm, const dr_chunk_stats_t *st, size_t esize, int reads)
{
    tm->passes = 1;
    tm->pass_ms[0] = st->local_ms;
    tm->local_ms = st->local_ms;
    tm->load_ms = st->load_ms;
    tm->read_ms = reads ? st->read_ms : NAN;
    tm->chunks = st->chunks;
    tm->bytes = st->elems * esize;
    tm->depth = st->depth;
}

/* This rank's local level of dreduce_reduce: its partial into the combine's record. Errors here are this rank's
 * alone (its buffer, its count, its GPU); the caller still joins the combine. */
static dr_status_t reduce_local(dreduce_context_t *ctx, const void *buf, uint64_t count, uint64_t first,
                                dr_dtype_t dtype, dr_op_t op)
{
    if (!buf && count > 0) {
        dr_error("NULL buffer with count %llu (NULL is allowed only for count 0)", (unsigned long long)count);
        return DR_ERR_USAGE;
    }
    DR_CHECK(check_count(dtype, count));
    DR_CHECK(check_kernel(ctx, dtype, op));
    if (dr_op_is_arg(op) && count > DR_ARG_NONE - first) {
        dr_error("first index %llu + count %llu passes the largest index argmin/argmax can report (2^64 - 2)",
                 (unsigned long long)first, (unsigned long long)count);
        return DR_ERR_USAGE;
    }
    if (ctx->is_gpu) DR_CHECK(dr_gpu_use(&ctx->gpu));
    const size_t esize = dr_dtype_size(dtype);
    const dr_acc_kind_t acc = dr_acc_select(dtype, op, ctx->cfg.acc_mode);
    DR_CHECK(ensure_combine(ctx, acc, op));
    int on_device = 0, managed = 0, pinned = 0;
    if (count > 0 && ctx->is_gpu) DR_CHECK(classify(ctx, buf, &on_device, &managed, &pinned));
    dreduce_timings_t *tm = &ctx->timings;
    if (ctx->is_gpu && (on_device || count == 0)) {
        DR_CHECK(dr_gpu_set_shape(&ctx->gpu, ctx->cfg.kernel, ctx->cfg.block, dtype, op, acc, ctx->cfg.nan, buf, count,
                                  first, managed));
        const double l0 = dr_now_ms();
        DR_CHECK(dr_gpu_reduce_once(&ctx->gpu, ctx->cfg.time_passes ? tm->pass_ms : NULL));
        const double host_ms = dr_now_ms() - l0;
        tm->passes = ctx->gpu.plan.passes;
        if (ctx->cfg.time_passes) {
            tm->local_ms = 0;
            for (int p = 0; p < tm->passes; ++p) tm->local_ms += tm->pass_ms[p];
            tm->launch_ms = host_ms - tm->local_ms;
        } else {
            tm->local_ms = host_ms; /* launches, kernels and the synchronization, seen from the host */
        }
        tm->chunks = 1;
        tm->bytes = count * esize;
        tm->depth = ctx->gpu.plan.serial_depth;
    } else if (ctx->is_gpu) {
        DR_CHECK(dr_host_reduce(ctx, buf, count, first, dtype, op, acc, pinned, tm));
    } else {
        if (count > 0) DR_CHECK(classify(ctx, buf, &on_device, &managed, &pinned));
        const double l0 = dr_now_ms();
        uint64_t depth = 0;
        uint64_t nans = 0;
        DR_CHECK(dr_cpu_reduce_checked(dtype, op, acc, ctx->cfg.nan, buf, (size_t)count, first, ctx->threads,
                                       &ctx->workers, &ctx->partial, &depth, &nans));
        memcpy(&ctx->comb.partial->value, &ctx->partial, ctx->comb.size);
        ctx->comb.partial->nan_count = nans;
        tm->local_ms = tm->pass_ms[0] = dr_now_ms() - l0;
        tm->passes = 1;
        tm->chunks = 1;
        tm->bytes = count * esize;
        tm->depth = depth;
    }
    ctx->have_partial = 1;
    ctx->part_empty = count == 0;
    return DR_OK;
}

/* dreduce_reduce and dreduce_reduce_at: first_given 0 takes the index dreduce_prepare found (argmin/argmax). */
static dr_status_t reduce_call(dreduce_context_t *ctx, const void *buf, uint64_t count, int first_given,
                               uint64_t first, dr_dtype_t dtype, dr_op_t op, dreduce_result_t *out)
{
    const double t0 = dr_now_ms();
    /* A NULL out is this rank's own error: it still joins the combine (with a result nobody reads), so the other
     * ranks are not left waiting. A NULL ctx has nothing to communicate over. */
    dreduce_result_t unread;
    dreduce_result_t *res = out ? out : &unread;
    memset(res, 0, sizeof *res); /* valid = 0 whatever error follows */
    if (!ctx) {
        dr_error("dreduce_reduce: ctx is NULL");
        return DR_ERR_USAGE;
    }
    /* A bad dtype or op may be one rank's alone: like every other argument error it joins the combine flagged as
     * failed (include/dreduce.h, "Collectives"), so the other ranks return an error naming it instead of waiting. */
    const dr_status_t shape = check_shape(dtype, op, ctx->cfg.acc_mode);
    dr_timings_reset(&ctx->timings);
    ctx->have_partial = 0;
    dr_signature_t sig;
    make_signature(ctx, dtype, op, shape == DR_OK, count, &sig);
    dr_status_t local = shape != DR_OK ? shape : DR_ERR_USAGE; /* until reduce_local runs */
    int placed = 1;
    if (shape != DR_OK) {
        out = NULL; /* said already */
        placed = 0;
    } else if (!first_given && dr_op_is_arg(op)) {
        if (ctx->topo.nranks == 1) {
            first = 0;
        } else if (ctx->have_first && ctx->first_count == count) {
            first = ctx->first_index;
        } else {
            placed = 0;
            dr_error("%s on %d ranks needs each rank's place in the whole array: call dreduce_prepare(ctx, dtype, "
                     "op, %llu) first (it learns it from the ranks' counts), or dreduce_reduce_at with the index of "
                     "this rank's first element%s", dr_op_name(op), ctx->topo.nranks, (unsigned long long)count,
                     ctx->have_first ? " (dreduce_prepare saw another count on this rank)" : "");
            out = NULL; /* this rank's error: it joins the combine flagged as failed */
        }
    }
    if (out) local = reduce_local(ctx, buf, count, first, dtype, op);
    else if (placed) dr_error("dreduce_reduce: out is NULL");
    const dr_status_t s = finish(ctx, local, &sig, count, res, t0);
    dr_watchdog_leave(ctx->wd); /* disarmed on every return path */
    return s;
}

dr_status_t dreduce_reduce(dreduce_context_t *ctx, const void *buf, uint64_t count, dr_dtype_t dtype, dr_op_t op,
                           dreduce_result_t *out)
{
    return reduce_call(ctx, buf, count, 0, 0, dtype, op, out);
}

dr_status_t dreduce_reduce_at(dreduce_context_t *ctx, const void *buf, uint64_t count, uint64_t first,
                              dr_dtype_t dtype, dr_op_t op, dreduce_result_t *out)
{
    return reduce_call(ctx, buf, count, 1, first, dtype, op, out);
}

dr_status_t dr_context_stats_all(dreduce_context_t *ctx, const void *buf, uint64_t count, const dreduce_file_t *file,
                                 dr_dtype_t dtype, dreduce_result_t *out)
{
    const dr_acc_mode_t mode = ctx->cfg.acc_mode;
    const dr_kernel_t kernel = ctx->cfg.kernel;
    ctx->cfg.acc_mode = DR_ACC_WIDE; /* every rank alike: the records' size is the wide mode's, which fits */
    ctx->cfg.kernel = DR_KERNEL_MULTIPASS;
    ctx->force_allreduce = 1;
    const dr_status_t s = file ? dreduce_reduce_file(ctx, file, DR_STATS, out, NULL)
                               : reduce_call(ctx, buf, count, 1, 0, dtype, DR_STATS, out);
    ctx->force_allreduce = 0;
    ctx->cfg.acc_mode = mode;
    ctx->cfg.kernel = kernel;
    return s;
}

dr_status_t dreduce_reduce_fail(dreduce_context_t *ctx, dr_dtype_t dtype, dr_op_t op, dr_status_t why,
                                dreduce_result_t *out)
{
    const double t0 = dr_now_ms();
    dreduce_result_t unread;
    dreduce_result_t *res = out ? out : &unread;
    memset(res, 0, sizeof *res);
    if (!ctx) {
        dr_error("dreduce_reduce_fail: ctx is NULL");
        return DR_ERR_USAGE;
    }
    if (why == DR_OK) why = DR_ERR_USAGE; /* a failure it must be */
    /* Whatever dtype and op say (the caller's reason may be that they are bad), this rank joins the combine. */
    const int shape_ok = (unsigned)dtype < DR_DTYPE_COUNT && (unsigned)op < DR_OP_COUNT && dr_op_valid(dtype, op) &&
                         dr_acc_mode_valid(dtype, op, ctx->cfg.acc_mode);
    dr_timings_reset(&ctx->timings);
    ctx->have_partial = 0;
    dr_signature_t sig;
    make_signature(ctx, dtype, op, shape_ok, 0, &sig);
    const dr_status_t s = finish(ctx, why, &sig, 0, res, t0);
    dr_watchdog_leave(ctx->wd);
    return s == DR_OK ? why : s;
}

dr_status_t dreduce_create_f(MPI_Fint comm, const dreduce_config_t *cfg, dreduce_context_t **out)
{
    int up = 0;
    MPI_Initialized(&up);
    if (!up) return dreduce_create(MPI_COMM_WORLD, cfg, out); /* which says MPI is not initialized */
    return dreduce_create(MPI_Comm_f2c(comm), cfg, out);
}

size_t dreduce_struct_size(const char *name)
{
    static const struct {
        const char *name;
        size_t size;
    } sizes[] = {{"dreduce_config_t", sizeof(dreduce_config_t)},   {"dreduce_result_t", sizeof(dreduce_result_t)},
                 {"dreduce_timings_t", sizeof(dreduce_timings_t)}, {"dreduce_stats_t", sizeof(dreduce_stats_t)},
                 {"dreduce_file_t", sizeof(dreduce_file_t)},       {"dreduce_file_info_t", sizeof(dreduce_file_info_t)},
                 {"dreduce_context_info_t", sizeof(dreduce_context_info_t)},
                 {"dreduce_dist_info_t", sizeof(dreduce_dist_info_t)},
                 {"dreduce_host_rates_t", sizeof(dreduce_host_rates_t)},
                 {"dreduce_order_stat_t", sizeof(dreduce_order_stat_t)}};
    for (size_t i = 0; name && i < sizeof sizes / sizeof sizes[0]; ++i)
        if (strcmp(name, sizes[i].name) == 0) return sizes[i].size;
    return 0;
}

void dreduce_file_init(dreduce_file_t *f, const char *path)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    f->dtype = DR_DTYPE_COUNT;
}

void dr_file_spec(const dreduce_file_t *file, dr_op_t op, dr_acc_mode_t acc_mode, dr_input_spec_t *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->format = file->raw ? DR_INPUT_RAW : DR_INPUT_AUTO;
    spec->type_given = file->dtype != DR_DTYPE_COUNT;
    spec->dtype = spec->type_given ? file->dtype : DR_INT32;
    spec->offset_given = file->has_offset;
    spec->offset = file->offset;
    spec->op = op;
    spec->acc_mode = acc_mode;
    spec->dataset = file->dataset;
}

/* A file as a chunk source: each call is one collective MPI-IO read into the pinned slot. */
static dr_status_t file_next(void *state, void *slot, size_t max_elems, const void **ptr, size_t *elems, int *done)
{
    (void)max_elems; /* the stream was begun with the slot size */
    uint64_t got = 0;
    DR_CHECK(dr_input_stream_next(state, slot, &got, done));
    *ptr = slot;
    *elems = (size_t)got;
    return DR_OK;
}

/* The arguments of a file call that this rank alone can get wrong. */
static dr_status_t check_file_args(const dreduce_file_t *file, dr_op_t op)
{
    if (!file || !file->path) {
        dr_error("%s is NULL", file ? "file->path" : "file");
        return DR_ERR_USAGE;
    }
    if (file->dtype != DR_DTYPE_COUNT && (unsigned)file->dtype >= DR_DTYPE_COUNT) {
        dr_error("file->dtype %d is not a dr_dtype_t (0..%d: %s; or DR_DTYPE_COUNT: from the .npy header)",
                 (int)file->dtype, DR_DTYPE_COUNT - 1, dr_dtype_names());
        return DR_ERR_USAGE;
    }
    if ((unsigned)op >= DR_OP_COUNT) {
        dr_error("op %d is not a dr_op_t (0..%d: %s)", (int)op, DR_OP_COUNT - 1, dr_op_names());
        return DR_ERR_USAGE;
    }
    return DR_OK;
}

/* Open a file for the context (collective; the same status on every rank) and find this rank's share of it.
 * `mine` is this rank's own verdict on the call's other arguments: every rank's argument errors are agreed before
 * the file is opened (one MPI_Allreduce), so a rank with a bad argument never leaves the others in the open's
 * collectives. */
dr_status_t dr_context_open_file(dreduce_context_t *ctx, dr_status_t mine, const dreduce_file_t *file, dr_op_t op,
                             dr_input_t *in, dreduce_file_info_t *info)
{
    if (mine == DR_OK) mine = check_file_args(file, op);
    DR_CHECK(dr_context_agree(ctx, mine, "opening a file (every rank checking its arguments)"));
    dr_input_spec_t spec;
    dr_file_spec(file, op, ctx->cfg.acc_mode, &spec);
    DR_CHECK(dr_input_open(ctx->topo.comm, file->path, &spec, in));
    info->dtype = in->dtype;
    info->count = in->count;
    dr_shard(in->count, DR_SCALING_STRONG, ctx->topo.rank, ctx->topo.nranks, &info->first, &info->mine);
    return DR_OK;
}

dr_status_t dreduce_file_inspect(dreduce_context_t *ctx, const dreduce_file_t *file, dr_op_t op,
                                 dreduce_file_info_t *info)
{
    if (!ctx) {
        dr_error("dreduce_file_inspect: ctx is NULL");
        return DR_ERR_USAGE;
    }
    dreduce_file_info_t unread;
    if (!info) dr_error("dreduce_file_inspect: info is NULL");
    dr_input_t in;
    DR_CHECK(dr_context_open_file(ctx, info ? DR_OK : DR_ERR_USAGE, file, op, &in, info ? info : &unread));
    dr_input_close(&in);
    return DR_OK;
}

dr_status_t dreduce_reduce_file(dreduce_context_t *ctx, const dreduce_file_t *file, dr_op_t op,
                                dreduce_result_t *out, dreduce_file_info_t *info)
{
    if (out) memset(out, 0, sizeof *out); /* valid = 0 whatever error follows */
    if (!ctx) {
        dr_error("dreduce_reduce_file: ctx is NULL");
        return DR_ERR_USAGE;
    }
    const double t0 = dr_now_ms();
    /* This rank's own problems (a NULL out, its GPU) are agreed with the arguments before the file is opened. */
    dr_status_t mine = DR_OK;
    if (!out) {
        dr_error("dreduce_reduce_file: out is NULL");
        mine = DR_ERR_USAGE;
    }
    if (mine == DR_OK && ctx->is_gpu) mine = dr_gpu_use(&ctx->gpu);
    dr_input_t in;
    dreduce_file_info_t fi;
    DR_CHECK(dr_context_open_file(ctx, mine, file, op, &in, &fi));
    const size_t esize = dr_dtype_size(fi.dtype);
    dr_status_t s = check_shape(fi.dtype, op, ctx->cfg.acc_mode);
    if (s == DR_OK) s = check_kernel(ctx, fi.dtype, op);
    const dr_acc_kind_t acc = dr_acc_select(fi.dtype, op, ctx->cfg.acc_mode);
    if (s == DR_OK) s = ensure_combine(ctx, acc, op);
    if ((s = dr_context_agree(ctx, s, "read (every rank ready to read its share)")) != DR_OK) {
        dr_input_close(&in);
        return s;
    }
    dreduce_timings_t *tm = &ctx->timings;
    dr_timings_reset(tm);
    ctx->have_partial = 0;
    memset(out, 0, sizeof *out);
    dr_signature_t sig;
    make_signature(ctx, fi.dtype, op, 1, fi.mine, &sig);
    const size_t slot = ctx->cfg.chunk_bytes / esize;
    dr_input_stream_t stream;
    dr_chunk_stats_t st;
    s = dr_input_stream_begin(&in, fi.first, fi.mine, slot, &stream);
    if (s == DR_OK && ctx->is_gpu) {
        dr_partial_t v;
        s = dr_chunks_reduce_gpu(&ctx->gpu, &ctx->chunks, ctx->cfg.kernel, ctx->cfg.block, fi.dtype, op, acc,
                                 ctx->cfg.nan, slot, 1, fi.first, file_next, &stream, &v, &st);
        if (s == DR_OK) s = dr_gpu_write_partial(&ctx->gpu, acc, &v, st.nan_count);
    } else if (s == DR_OK) {
        s = dr_chunks_reduce_cpu(&ctx->chunks, ctx->threads, &ctx->workers, fi.dtype, op, acc, ctx->cfg.nan, slot,
                                 fi.first, file_next, &stream, &ctx->partial, &st);
        if (s == DR_OK) memcpy(&ctx->comb.partial->value, &ctx->partial, ctx->comb.size);
        if (s == DR_OK) ctx->comb.partial->nan_count = st.nan_count;
    }
    dr_input_close(&in);
    if (s == DR_OK) {
        record_chunks(tm, &st, esize, 1);
        ctx->have_partial = 1;
        ctx->part_empty = fi.mine == 0;
        if (info) *info = fi;
    }
    s = finish(ctx, s, &sig, fi.mine, out, t0);
    dr_watchdog_leave(ctx->wd);
    return s;
}

dr_status_t dreduce_file_scan(dreduce_context_t *ctx, const dreduce_file_t *file, dr_op_t op, size_t chunk_bytes,
                              dreduce_chunk_fn fn, void *user)
{
    if (!ctx) {
        dr_error("dreduce_file_scan: ctx is NULL");
        return DR_ERR_USAGE;
    }
    if (!fn) dr_error("dreduce_file_scan: fn is NULL");
    dr_input_t in;
    dreduce_file_info_t info;
    DR_CHECK(dr_context_open_file(ctx, fn ? DR_OK : DR_ERR_USAGE, file, op, &in, &info));
    uint64_t chunk = chunk_bytes / in.elem_size;
    if (chunk == 0) chunk = 1;
    void *buf = malloc((size_t)chunk * in.elem_size);
    dr_input_stream_t st;
    dr_status_t s = buf ? DR_OK : DR_ERR_RUNTIME;
    if (!buf) dr_error("cannot allocate %zu bytes to read '%s' back", (size_t)chunk * in.elem_size, file->path);
    /* Every rank begins the stream, so a rank short of memory still takes part in its collective reads. */
    dr_status_t b = dr_input_stream_begin(&in, info.first, buf ? info.mine : 0, chunk, &st);
    if (s == DR_OK) s = b;
    uint64_t at = info.first;
    for (int done = 0; b == DR_OK && !done;) {
        uint64_t got = 0;
        const dr_status_t r = dr_input_stream_next(&st, buf, &got, &done);
        if (r != DR_OK) {
            s = r;
            break;
        }
        if (got && s == DR_OK) fn(buf, got, at, user);
        at += got;
    }
    free(buf);
    dr_input_close(&in);
    return dr_context_agree(ctx, s, "reading a file back (dreduce_file_scan)");
}

dr_status_t dreduce_local_partial(dreduce_context_t *ctx, dreduce_result_t *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!ctx || !out) {
        dr_error("dreduce_local_partial: %s is NULL", ctx ? "out" : "ctx");
        return DR_ERR_USAGE;
    }
    if (!ctx->have_partial || !ctx->comb_ready) {
        dr_error("dreduce_local_partial: no reduction has completed on this context yet");
        return DR_ERR_USAGE;
    }
    if (ctx->is_gpu) {
        dr_partial_t p;
        DR_CHECK(dr_gpu_use(&ctx->gpu));
        DR_CHECK(dr_gpu_read_partial(&ctx->gpu, ctx->comb.acc, &p, NULL));
        dr_partial_result(ctx->comb.acc, &p, &out->value);
        if (dr_acc_kind_is_stats(ctx->comb.acc)) dr_stats_result(ctx->comb.acc, &p, &out->stats);
    } else {
        dr_partial_result(ctx->comb.acc, &ctx->partial, &out->value);
        if (dr_acc_kind_is_stats(ctx->comb.acc)) dr_stats_result(ctx->comb.acc, &ctx->partial, &out->stats);
    }
    out->kind = dr_acc_result_kind(ctx->comb.acc);
    out->no_value = ctx->part_empty && op_has_no_empty_value(ctx->comb.op);
    out->valid = 1; /* only once the value is in hand */
    return DR_OK;
}

void dreduce_timings(const dreduce_context_t *ctx, dreduce_timings_t *out)
{
    if (!out) return;
    if (ctx) *out = ctx->timings;
    else dr_timings_reset(out);
}

dr_status_t dreduce_set_nan(dreduce_context_t *ctx, dr_nan_policy_t nan)
{
    if (!ctx) {
        dr_error("dreduce_set_nan: ctx is NULL");
        return DR_ERR_USAGE;
    }
    if ((unsigned)nan >= DR_NAN_POLICY_COUNT) {
        dr_error("%s is %d: not a dr_nan_policy_t (0 propagate, 1 omit)", DR_NAME("cfg.nan", "--nan"), (int)nan);
        return DR_ERR_USAGE;
    }
    ctx->cfg.nan = nan;
    return DR_OK;
}

int dreduce_gpu(const dreduce_context_t *ctx) { return ctx && ctx->is_gpu ? ctx->gpu.device : -1; }

const char *dreduce_combine_path(const dreduce_context_t *ctx)
{
    if (!ctx) return "";
    if (ctx->comb_ready) return ctx->comb.path_text;
    return ctx->is_gpu ? ctx->path_text : "host buffers (CPU backend)";
}

int dreduce_combine_costs(const dreduce_context_t *ctx, double *device_us, double *mapped_us)
{
    const double d = ctx ? ctx->path_us[0] : NAN, m = ctx ? ctx->path_us[1] : NAN;
    if (device_us) *device_us = d;
    if (mapped_us) *mapped_us = m;
    return isfinite(d) && isfinite(m);
}

double dreduce_result_double(const dreduce_result_t *r)
{
    if (!r || !r->valid || r->no_value || (unsigned)r->kind >= DR_ACC_KIND_COUNT || dr_acc_kind_is_stats(r->kind))
        return NAN;
    switch (dr_acc_kind_is_arg(r->kind) ? dr_acc_scalar_kind(r->kind) : r->kind) {
    case DR_ACC_I32: return (double)r->value.i32;
    case DR_ACC_U32: return (double)r->value.u32;
    case DR_ACC_I64: return (double)r->value.i64;
    case DR_ACC_U64: return (double)r->value.u64;
    case DR_ACC_F32: return (double)r->value.f32;
    case DR_ACC_F64: return r->value.f64;
    default: return NAN; /* no kind a result is read in (an exact sum's result kind is F64) */
    }
}

int dreduce_result_format(const dreduce_result_t *r, char *buf, size_t len)
{
    if (!r || !r->valid || (unsigned)r->kind >= DR_ACC_KIND_COUNT) return snprintf(buf, len, "%s", "invalid");
    if (r->no_value) return snprintf(buf, len, "%s", "none");
    char a[64], b[64], sum[64];
    if (dr_acc_kind_is_arg(r->kind)) {
        if (r->value.arg.index == DR_ARG_NONE) return snprintf(buf, len, "%s", "none");
        dr_value_t v;
        memset(&v, 0, sizeof v);
        memcpy(&v, &r->value.arg.value, sizeof r->value.arg.value);
        dr_value_format(dr_acc_scalar_kind(r->kind), &v, a, sizeof a);
        return snprintf(buf, len, "%s at %llu", a, (unsigned long long)r->value.arg.index);
    }
    if (dr_acc_kind_is_stats(r->kind)) {
        const dreduce_stats_t *st = &r->stats;
        dr_value_t lo, hi;
        memset(&lo, 0, sizeof lo);
        memset(&hi, 0, sizeof hi);
        memcpy(&lo, &st->min, sizeof st->min);
        memcpy(&hi, &st->max, sizeof st->max);
        if (st->count == 0) { /* min and max of nothing: the identities are not data */
            snprintf(a, sizeof a, "none");
            snprintf(b, sizeof b, "none");
        } else {
            dr_value_format(st->kind, &lo, a, sizeof a);
            dr_value_format(st->kind, &hi, b, sizeof b);
        }
        if (st->sum_is_int) dr_int128_format(st->sum_int, r->kind == DR_ACC_STATS_I64, sum, sizeof sum);
        else snprintf(sum, sizeof sum, "%.17g", st->sum);
        return snprintf(buf, len, "count=%llu sum=%s mean=%.17g var=%.17g min=%s max=%s",
                        (unsigned long long)st->count, sum, st->mean, st->var_pop, a, b);
    }
    return dr_value_format(r->kind, &r->value, buf, len);
}

void dreduce_destroy(dreduce_context_t *ctx)
{
    if (!ctx) return;
    if (ctx->is_gpu && dr_gpu_use(&ctx->gpu) != DR_OK) (void)cudaGetLastError(); /* free what can be freed */
    if (ctx->is_gpu) dr_gpu_drain(&ctx->gpu); /* the last kernel may still be exiting into the mapped partial */
    if (ctx->comb_ready) dr_combine_free(&ctx->comb);
    dr_chunks_free(&ctx->chunks);
    dr_dist_free(ctx);
    if (ctx->is_gpu) dr_gpu_close(&ctx->gpu);
    dr_watchdog_destroy(ctx->wd);
    dr_topology_free(&ctx->topo);
    free(ctx);
}
