/* Counts the MPI calls a dreduce_reduce makes (issue #16), through the MPI profiling interface: this program defines
 * the MPI functions libdreduce could call, counts them and forwards to PMPI_ (the executable exports them, so the
 * library's calls land here). After dreduce_create and dreduce_prepare, each of --calls calls (same shape, then a
 * changing dtype and op) must make
 *   - at P=1: no MPI call at all;
 *   - at P=2 on one node: exactly one collective per rank (hier, flat, allreduce), with or without a timeout;
 *   - anywhere: no barrier.
 * Every result is checked. CPU backend. Usage: count_calls [--combine hier|flat] [--allreduce] [--timeout S]
 * [--calls N]. Exit 0 when every rank passes, 1 otherwise. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dreduce.h"

static long n_any, n_coll, n_barrier;
static int counting;

#define COUNT_ANY() (counting ? ++n_any : 0)
#define COUNT_COLL() (counting ? (++n_any, ++n_coll) : 0)
#define COUNT_BARRIER() (counting ? (++n_any, ++n_coll, ++n_barrier) : 0)

int MPI_Barrier(MPI_Comm c) { COUNT_BARRIER(); return PMPI_Barrier(c); }
int MPI_Ibarrier(MPI_Comm c, MPI_Request *r) { COUNT_BARRIER(); return PMPI_Ibarrier(c, r); }
int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c) { COUNT_COLL(); return PMPI_Bcast(b, n, t, root, c); }
int MPI_Ibcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *r)
{
    COUNT_COLL();
    return PMPI_Ibcast(b, n, t, root, c, r);
}
int MPI_Reduce(const void *s, void *d, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c)
{
    COUNT_COLL();
    return PMPI_Reduce(s, d, n, t, o, root, c);
}
int MPI_Ireduce(const void *s, void *d, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c, MPI_Request *r)
{
    COUNT_COLL();
    return PMPI_Ireduce(s, d, n, t, o, root, c, r);
}
int MPI_Allreduce(const void *s, void *d, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c)
{
    COUNT_COLL();
    return PMPI_Allreduce(s, d, n, t, o, c);
}
int MPI_Iallreduce(const void *s, void *d, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Request *r)
{
    COUNT_COLL();
    return PMPI_Iallreduce(s, d, n, t, o, c, r);
}
int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *d, int dn, MPI_Datatype dt, int root, MPI_Comm c)
{
    COUNT_COLL();
    return PMPI_Gather(s, sn, st, d, dn, dt, root, c);
}
int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *d, int dn, MPI_Datatype dt, MPI_Comm c)
{
    COUNT_COLL();
    return PMPI_Allgather(s, sn, st, d, dn, dt, c);
}
int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *d, int dn, MPI_Datatype dt, MPI_Comm c)
{
    COUNT_COLL();
    return PMPI_Alltoall(s, sn, st, d, dn, dt, c);
}
int MPI_Scan(const void *s, void *d, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c)
{
    COUNT_COLL();
    return PMPI_Scan(s, d, n, t, o, c);
}
int MPI_Send(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c) { COUNT_ANY(); return PMPI_Send(b, n, t, d, tag, c); }
int MPI_Recv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st)
{
    COUNT_ANY();
    return PMPI_Recv(b, n, t, s, tag, c, st);
}
int MPI_Isend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *r)
{
    COUNT_ANY();
    return PMPI_Isend(b, n, t, d, tag, c, r);
}
int MPI_Issend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *r)
{
    COUNT_ANY();
    return PMPI_Issend(b, n, t, d, tag, c, r);
}
int MPI_Irecv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request *r)
{
    COUNT_ANY();
    return PMPI_Irecv(b, n, t, s, tag, c, r);
}
int MPI_Wait(MPI_Request *r, MPI_Status *s) { COUNT_ANY(); return PMPI_Wait(r, s); }
int MPI_Test(MPI_Request *r, int *f, MPI_Status *s) { COUNT_ANY(); return PMPI_Test(r, f, s); }
int MPI_Waitall(int n, MPI_Request r[], MPI_Status s[]) { COUNT_ANY(); return PMPI_Waitall(n, r, s); }
double MPI_Wtime(void) { COUNT_ANY(); return PMPI_Wtime(); }
int MPI_Comm_rank(MPI_Comm c, int *r) { COUNT_ANY(); return PMPI_Comm_rank(c, r); }
int MPI_Comm_size(MPI_Comm c, int *s) { COUNT_ANY(); return PMPI_Comm_size(c, s); }
int MPI_Comm_get_attr(MPI_Comm c, int k, void *v, int *f) { COUNT_ANY(); return PMPI_Comm_get_attr(c, k, v, f); }
int MPI_Comm_dup(MPI_Comm c, MPI_Comm *n) { COUNT_ANY(); return PMPI_Comm_dup(c, n); }
int MPI_Comm_split(MPI_Comm c, int col, int key, MPI_Comm *n) { COUNT_ANY(); return PMPI_Comm_split(c, col, key, n); }
int MPI_Op_create(MPI_User_function *f, int commute, MPI_Op *o) { COUNT_ANY(); return PMPI_Op_create(f, commute, o); }
int MPI_Type_contiguous(int n, MPI_Datatype old, MPI_Datatype *t) { COUNT_ANY(); return PMPI_Type_contiguous(n, old, t); }
int MPI_Type_commit(MPI_Datatype *t) { COUNT_ANY(); return PMPI_Type_commit(t); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    dreduce_config_t cfg;
    dreduce_config_init(&cfg);
    cfg.device = DR_DEVICE_CPU;
    cfg.cpu_threads = 1;
    int calls = 200;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--combine") && i + 1 < argc) cfg.combine = !strcmp(argv[++i], "flat") ? DR_COMBINE_FLAT
                                                                                                    : DR_COMBINE_HIER;
        else if (!strcmp(argv[i], "--allreduce")) cfg.allreduce = 1;
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) cfg.timeout = atof(argv[++i]);
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc) calls = atoi(argv[++i]);
    }
    int failures = 0;
    dreduce_context_t *ctx = NULL;
    if (dreduce_create(MPI_COMM_WORLD, &cfg, &ctx) != DR_OK) {
        fprintf(stderr, "FAIL rank %d: dreduce_create\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    enum { N = 1000 };
    static int64_t a64[N];
    static int32_t a32[N];
    static float f32[N];
    for (int i = 0; i < N; ++i) a64[i] = a32[i] = i + 1000 * rank, f32[i] = (float)(i % 7) + (float)rank;
    if (dreduce_prepare(ctx, DR_INT64, DR_SUM, N) != DR_OK) failures++;
    /* Expected results over the ranks. */
    const double sum_i = (double)nranks * (N - 1) * N / 2 + 1000.0 * N * nranks * (nranks - 1) / 2;
    double sum_f = 0;
    for (int r = 0; r < nranks; ++r)
        for (int i = 0; i < N; ++i) sum_f += (float)(i % 7) + (float)r;
    const double max_i = N - 1 + 1000.0 * (nranks - 1);
    const int root_only = !cfg.allreduce;
    long worst_coll = 0, best_coll = 1L << 40, any_total = 0, barriers = 0;
    for (int c = 0; c < calls; ++c) {
        /* The first half repeats one shape; the second changes dtype and op every call. */
        const int k = c < calls / 2 ? 0 : c % 3;
        dreduce_result_t res;
        n_any = n_coll = n_barrier = 0;
        counting = 1;
        dr_status_t s = k == 0   ? dreduce_reduce(ctx, a64, N, DR_INT64, DR_SUM, &res)
                        : k == 1 ? dreduce_reduce(ctx, f32, N, DR_FLOAT32, DR_SUM, &res)
                                 : dreduce_reduce(ctx, a32, N, DR_INT32, DR_MAX, &res);
        counting = 0;
        const double want = k == 0 ? sum_i : k == 1 ? sum_f : max_i;
        if (s != DR_OK) {
            ++failures;
            fprintf(stderr, "FAIL rank %d call %d: status %d\n", rank, c, (int)s);
        } else if (res.valid != (rank == 0 || !root_only)) {
            ++failures;
            fprintf(stderr, "FAIL rank %d call %d: valid %d\n", rank, c, res.valid);
        } else if (res.valid && dreduce_result_double(&res) != want) {
            ++failures;
            fprintf(stderr, "FAIL rank %d call %d: %.17g, want %.17g\n", rank, c, dreduce_result_double(&res), want);
        }
        if (n_coll > worst_coll) worst_coll = n_coll;
        if (n_coll < best_coll) best_coll = n_coll;
        any_total += n_any;
        barriers += n_barrier;
    }
    const long want_coll = nranks == 1 ? 0 : 1;
    if (nranks == 1 && any_total != 0) {
        ++failures;
        fprintf(stderr, "FAIL rank %d: %ld MPI calls in %d calls at P=1 (want none)\n", rank, any_total, calls);
    }
    if (worst_coll != want_coll || best_coll != want_coll) {
        ++failures;
        fprintf(stderr, "FAIL rank %d: %ld..%ld collectives per call (want %ld)\n", rank, best_coll, worst_coll,
                want_coll);
    }
    if (barriers) {
        ++failures;
        fprintf(stderr, "FAIL rank %d: %ld barriers in %d calls (want none)\n", rank, barriers, calls);
    }
    printf("rank %d: P=%d combine %s%s timeout %g: %d calls, %ld..%ld collectives per call, %ld barriers, %ld MPI "
           "calls in all\n", rank, nranks, cfg.combine == DR_COMBINE_FLAT ? "flat" : "hier",
           cfg.allreduce ? " allreduce" : "", cfg.timeout, calls, best_coll, worst_coll, barriers, any_total);
    dreduce_destroy(ctx);
    int all = 0;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%s: %d failures\n", all ? "FAILED" : "passed", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
