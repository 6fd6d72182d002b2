/* What programs built on libdreduce use beside the reductions (include/dreduce.h): the context's layout, device
 * and binding for their reports, their own collectives under the context's timeout, the launcher's local rank
 * before MPI_Init, and the vocabulary they need to read a result. */
#include <stdio.h>
#include <string.h>

#include "binding.h"
#include "context.h"
#include "dreduce.h"
#include "dtype.h"
#include "input_hdf5.h"
#include "shard.h"
#include "watchdog.h"

#define DR_COPY(dst, src) snprintf((dst), sizeof(dst), "%s", (src))

dr_status_t dreduce_context_info(const dreduce_context_t *ctx, dreduce_context_info_t *out)
{
    if (!ctx || !out) {
        dr_error("dreduce_context_info: %s is NULL", ctx ? "out" : "ctx");
        return DR_ERR_USAGE;
    }
    memset(out, 0, sizeof *out);
    const dr_topology_t *t = &ctx->topo;
    const dr_binding_t *b = &ctx->binding;
    out->rank = t->rank;
    out->nranks = t->nranks;
    out->node = t->node;
    out->nnodes = t->nnodes;
    out->local_rank = t->local_rank;
    out->local_size = t->local_size;
    out->host_local_rank = t->host_local_rank;
    out->emulated = t->emulated;
    DR_COPY(out->host, t->host);
    DR_COPY(out->node_name, t->node_name);
    out->gpu = ctx->is_gpu ? ctx->gpu.device : -1;
    DR_COPY(out->device_name, ctx->is_gpu ? ctx->gpu.name : "cpu");
    out->block = ctx->is_gpu ? ctx->gpu.req.block : 0;
    out->threads = ctx->threads;
    DR_COPY(out->pci_bus_id, b->pci_bus_id);
    out->numa_node = b->numa_node;
    DR_COPY(out->gpu_cpuset, b->gpu_cpuset);
    DR_COPY(out->affinity, b->affinity);
    out->bound_cpu = b->bound_cpu;
    out->bound_mem = b->bound_mem;
    out->dry_run = b->dry_run;
    out->affinity_outside_gpu = b->affinity_outside_gpu;
    DR_COPY(out->note, b->note);
    DR_COPY(out->share, b->share);
    out->widened = b->widened;
    return DR_OK;
}

dr_status_t dreduce_agree(dreduce_context_t *ctx, dr_status_t mine, const char *what)
{
    if (!ctx) {
        dr_error("dreduce_agree: ctx is NULL");
        return DR_ERR_USAGE;
    }
    return dr_context_agree(ctx, mine, what ? what : "dreduce_agree");
}

dr_status_t dreduce_barrier(dreduce_context_t *ctx, const char *what)
{
    if (!ctx) {
        dr_error("dreduce_barrier: ctx is NULL");
        return DR_ERR_USAGE;
    }
    dr_watchdog_enter(ctx->wd, what ? what : "dreduce_barrier");
    const dr_status_t s = dr_watchdog_barrier(ctx->wd, ctx->topo.comm);
    dr_watchdog_leave(ctx->wd);
    return s;
}

void dreduce_watch_begin(dreduce_context_t *ctx, const char *what)
{
    if (ctx) dr_watchdog_enter(ctx->wd, what ? what : "a collective of the caller's");
}

void dreduce_watch_end(dreduce_context_t *ctx)
{
    if (ctx) dr_watchdog_leave(ctx->wd);
}

int dreduce_launcher_local_rank(const char **source) { return dr_binding_env_local_rank(source); }

void dreduce_messages_name_options(int yes) { dr_log_use_option_names(yes); }

const char *dreduce_hdf5_description(void) { return dr_h5_description(); }

dr_acc_kind_t dreduce_acc_select(dr_dtype_t dtype, dr_op_t op, dr_acc_mode_t acc_mode)
{
    if ((unsigned)dtype >= DR_DTYPE_COUNT || (unsigned)op >= DR_OP_COUNT || (unsigned)acc_mode >= DR_ACC_MODE_COUNT ||
        !dr_op_valid(dtype, op) || !dr_acc_mode_valid(dtype, op, acc_mode))
        return DR_ACC_KIND_COUNT;
    return dr_acc_select(dtype, op, acc_mode);
}

dr_acc_kind_t dreduce_acc_result_kind(dr_acc_kind_t kind)
{
    return (unsigned)kind < DR_ACC_KIND_COUNT ? dr_acc_result_kind(kind) : DR_ACC_KIND_COUNT;
}

size_t dreduce_dtype_size(dr_dtype_t dtype) { return (unsigned)dtype < DR_DTYPE_COUNT ? dr_dtype_size(dtype) : 0; }

const char *dreduce_dtype_name(dr_dtype_t dtype) { return (unsigned)dtype < DR_DTYPE_COUNT ? dr_dtype_name(dtype) : "?"; }

const char *dreduce_op_name(dr_op_t op) { return (unsigned)op < DR_OP_COUNT ? dr_op_name(op) : "?"; }

const char *dreduce_acc_kind_name(dr_acc_kind_t kind)
{
    return (unsigned)kind < DR_ACC_KIND_COUNT ? dr_acc_kind_name(kind) : "?";
}

dr_status_t dreduce_shard(uint64_t n, dr_scaling_t scaling, int rank, int nranks, uint64_t *first, uint64_t *count)
{
    if (!first || !count || nranks < 1 || rank < 0 || rank >= nranks ||
        (scaling != DR_SCALING_STRONG && scaling != DR_SCALING_WEAK))
        return DR_ERR_USAGE;
    return dr_shard(n, scaling, rank, nranks, first, count) == 0 ? DR_OK : DR_ERR_USAGE;
}
