#define _POSIX_C_SOURCE 200809L
#include "watchdog.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { PING_TAG = 7405, NAME_LEN = 64 };

/* The ping state of a prepared run communicator (see "Watched collectives" below). */
typedef struct {
    MPI_Comm pings;          /* dup of the run's communicator: pings never match anyone else's messages */
    int me, size;            /* in it */
    char (*node)[NAME_LEN];  /* every rank's node name */
    int *ping_in;            /* one receive buffer per rank */
    MPI_Request *rx;         /* the posted receives for pings: rx[i] from rank i (rx[me] unused) */
} watch_state_t;

struct dr_watchdog {
    double timeout_s;                /* > 0, or the watchdog never fires */
    _Atomic(const char *) phase;     /* NULL: not in a collective */
    _Atomic double phase_deadline;   /* CLOCK_MONOTONIC seconds */
    watch_state_t *st;               /* dr_watchdog_prepare's, or NULL */
    pthread_t thread;
    int has_thread;
    pthread_mutex_t lock;            /* with `wake`: the thread's naps, cut short by destroy */
    pthread_cond_t wake;
    int stop;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* How much later than a watched collective the thread gives up (watchdog.h): time for the watched collective's
 * pings and line, and for the launcher to end the job. */
static double grace_s(const dr_watchdog_t *w) { return w->timeout_s < 2 ? w->timeout_s / 2 : 1; }

/* How long a rank that gives up waits for the answers to its pings. */
static double ping_window_s(const dr_watchdog_t *w) { return grace_s(w) / 2; }

/* Ends this process with DR_ERR_RUNTIME; the launcher then ends the others. mpirun and srun report the first non-zero
 * exit status, but Hydra's mpiexec (the MPICH family) ORs every process's wait status, so its SIGKILL of the others
 * would turn an _exit(3) into 9; it returns MPI_Abort's code as given, so there the job is aborted instead. */
static _Noreturn void end_job(void)
{
#if defined(MPICH_VERSION)
    /* Hydra forwards each rank's stderr through its proxy, and an abort right after the line can cut it off (seen:
     * a timeout ending the job with no "timed out" line); give the line a moment to travel. */
    fflush(stderr);
    struct timespec drain = {0, 200 * 1000 * 1000};
    nanosleep(&drain, NULL);
    MPI_Abort(MPI_COMM_WORLD, DR_ERR_RUNTIME);
#endif
    _exit(DR_ERR_RUNTIME);
}

static void *watch(void *arg)
{
    dr_watchdog_t *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000L) until.tv_sec += 1, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&w->wake, &w->lock, &until);
        if (w->stop) break;
        const char *what = atomic_load(&w->phase);
        if (what && now_s() > atomic_load(&w->phase_deadline) && atomic_load(&w->phase) == what) {
            dr_error("timed out after %g s waiting in the %s level: another rank died or is stuck there (raise "
                     "%s if it is only slow); ending the job",
                     w->timeout_s, what, DR_NAME("cfg.timeout", "--timeout"));
            end_job();
        }
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

dr_status_t dr_watchdog_create(dr_watchdog_t **out, double seconds)
{
    *out = NULL;
    dr_watchdog_t *w = calloc(1, sizeof *w);
    if (!w) {
        dr_error("cannot allocate %zu bytes for the watchdog", sizeof *w);
        return DR_ERR_RUNTIME;
    }
    w->timeout_s = seconds > 0 ? seconds : 0;
    atomic_store(&w->phase, (const char *)NULL);
    atomic_store(&w->phase_deadline, 0.0);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    if (w->timeout_s > 0) {
        if (pthread_create(&w->thread, NULL, watch, w) != 0) {
            dr_error("could not start the timeout watchdog's thread");
            pthread_mutex_destroy(&w->lock);
            pthread_cond_destroy(&w->wake);
            free(w);
            return DR_ERR_RUNTIME;
        }
        w->has_thread = 1;
    }
    *out = w;
    return DR_OK;
}

int dr_watchdog_armed(const dr_watchdog_t *w) { return w && w->timeout_s > 0; }

void dr_watchdog_enter(dr_watchdog_t *w, const char *what)
{
    if (!dr_watchdog_armed(w)) return;
    atomic_store(&w->phase_deadline, now_s() + w->timeout_s + grace_s(w));
    atomic_store(&w->phase, what);
}

void dr_watchdog_leave(dr_watchdog_t *w)
{
    if (w) atomic_store(&w->phase, (const char *)NULL);
}

/* ---- Watched collectives -------------------------------------------------------------------------------------
 * Without MPI_THREAD_MULTIPLE only the thread in the collective may ask MPI anything, so the collective is a
 * nonblocking one that this thread polls until it completes or the time is up. Then it pings every rank of the run:
 * a synchronous send (MPI_Issend) completes only once the receiver's MPI has matched it, and every rank keeps one
 * receive for pings posted per other rank, so a ping is answered by any rank whose MPI makes progress (waiting in a
 * collective, any collective), with no code of ours running there. Who does not answer within the ping window is
 * dead, stuck outside MPI (still computing, or stopped) or cut off from here, and is named by node. All ranks are
 * pinged, not only the collective's members: a rank cut off from the others often leaves its peers stuck in a
 * different collective than the one this rank waits in. This costs nothing while collectives complete in time: the
 * posted receives are never matched, and each is used at most once, since a rank that pings exits. */

static void state_free(watch_state_t *st)
{
    for (int i = 0; st->rx && i < st->size; ++i)
        if (st->rx[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&st->rx[i]);
            MPI_Wait(&st->rx[i], MPI_STATUS_IGNORE);
        }
    if (st->pings != MPI_COMM_NULL) MPI_Comm_free(&st->pings);
    free(st->node);
    free(st->ping_in);
    free(st->rx);
    free(st);
}

dr_status_t dr_watchdog_prepare(dr_watchdog_t *w, MPI_Comm run, const char *node_name)
{
    if (!w || w->st) return DR_OK;
    int me = 0, size = 0;
    DR_MPI_CHECK(MPI_Comm_rank(run, &me));
    DR_MPI_CHECK(MPI_Comm_size(run, &size));
    watch_state_t *st = calloc(1, sizeof *st);
    if (!st) {
        dr_error("cannot allocate %zu bytes to watch collectives", sizeof *st);
        return DR_ERR_RUNTIME;
    }
    st->pings = MPI_COMM_NULL;
    st->me = me;
    st->size = size;
    st->node = calloc((size_t)size, sizeof *st->node);
    st->ping_in = calloc((size_t)size, sizeof *st->ping_in);
    MPI_Request *rx = malloc((size_t)size * sizeof *rx);
    if (!st->node || !st->ping_in || !rx) {
        dr_error("cannot allocate the node names of %d ranks to watch collectives", size);
        free(rx);
        state_free(st);
        return DR_ERR_RUNTIME;
    }
    for (int i = 0; i < size; ++i) rx[i] = MPI_REQUEST_NULL;
    st->rx = rx;
    char mine[NAME_LEN];
    snprintf(mine, sizeof mine, "%s", node_name);
    int ok = MPI_Allgather(mine, NAME_LEN, MPI_CHAR, st->node, NAME_LEN, MPI_CHAR, run) == MPI_SUCCESS &&
             MPI_Comm_dup(run, &st->pings) == MPI_SUCCESS &&
             MPI_Comm_set_errhandler(st->pings, MPI_ERRORS_RETURN) == MPI_SUCCESS;
    for (int i = 0; ok && i < size; ++i)
        if (i != me) ok = MPI_Irecv(&st->ping_in[i], 1, MPI_INT, i, PING_TAG, st->pings, &rx[i]) == MPI_SUCCESS;
    if (!ok) {
        dr_error("preparing the watch of collectives over %d ranks failed (MPI_Allgather, MPI_Comm_dup or MPI_Irecv)",
                 size);
        state_free(st);
        return DR_ERR_RUNTIME;
    }
    w->st = st;
    return DR_OK;
}

/* Ping every other rank synchronously; silent[i] = 1 for those whose MPI did not match the ping within the ping
 * window. Keeps driving *req meanwhile. The pings left unanswered are abandoned: the caller exits. */
static void ping_all(const dr_watchdog_t *w, char *silent, MPI_Request *req)
{
    static const int token = 1;
    const watch_state_t *st = w->st;
    MPI_Request *q = malloc((size_t)st->size * sizeof *q);
    if (!q) return;
    int left = 0;
    for (int i = 0; i < st->size; ++i) {
        q[i] = MPI_REQUEST_NULL;
        silent[i] = 0;
        if (i == st->me) continue;
        silent[i] = 1;
        if (MPI_Issend(&token, 1, MPI_INT, i, PING_TAG, st->pings, &q[i]) == MPI_SUCCESS) ++left;
    }
    const double until = now_s() + ping_window_s(w);
    while (left > 0 && now_s() < until) {
        for (int i = 0; i < st->size; ++i) {
            if (q[i] == MPI_REQUEST_NULL) continue;
            int flag = 0;
            if (MPI_Test(&q[i], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) q[i] = MPI_REQUEST_NULL, --left;
            else if (flag) silent[i] = 0, --left; /* MPI_Test set q[i] to MPI_REQUEST_NULL */
        }
        int flag = 0;
        if (*req != MPI_REQUEST_NULL) MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    }
    free(q);
}

/* Append "a-b" or "a" ranges of the sorted ranks[0..n) to buf. */
static void append_ranges(char *buf, size_t len, const int *ranks, int n)
{
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s", n == 1 ? "rank " : "ranks ");
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && ranks[j + 1] == ranks[j] + 1) ++j;
        used = strlen(buf);
        if (j == i) snprintf(buf + used, len - used, "%s%d", i ? ", " : "", ranks[i]);
        else snprintf(buf + used, len - used, "%s%d-%d", i ? ", " : "", ranks[i], ranks[j]);
        i = j + 1;
    }
}

/* "node A (ranks 2-3), node B (rank 5)" for the ranks i with silent[i] (ranks in order, so each node's list is
 * sorted); past half of buf the remaining nodes are only counted, to keep the line short. */
static void name_by_node(const watch_state_t *st, const char *silent, char *buf, size_t len)
{
    buf[0] = '\0';
    char *done = calloc((size_t)st->size, 1);
    int *ranks = calloc((size_t)st->size, sizeof *ranks);
    if (!done || !ranks) {
        snprintf(buf, len, "(no memory to name them)");
        free(done);
        free(ranks);
        return;
    }
    int nodes = 0, shown = 0;
    for (int i = 0; i < st->size; ++i) {
        if (done[i] || !silent[i]) continue;
        int n = 0; /* the silent ranks on i's node */
        for (int j = i; j < st->size; ++j)
            if (!done[j] && silent[j] && strcmp(st->node[j], st->node[i]) == 0) {
                done[j] = 1;
                ranks[n++] = j;
            }
        ++nodes;
        if (strlen(buf) > len / 2) continue;
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%snode %s (", shown ? ", " : "", st->node[i]);
        append_ranges(buf, len, ranks, n);
        used = strlen(buf);
        snprintf(buf + used, len - used, ")");
        ++shown;
    }
    if (nodes > shown) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, " and %d more node%s", nodes - shown, nodes - shown > 1 ? "s" : "");
    }
    free(done);
    free(ranks);
}

/* Past the deadline: ping, name who does not answer, exit. (Every rank that gives up speaks: deferring to one of
 * them would delay the first line by as much as their deadlines differ.) */
static void give_up(dr_watchdog_t *w, MPI_Request *req, const char *what)
{
    const watch_state_t *st = w->st;
    atomic_store(&w->phase_deadline, now_s() + 2 * grace_s(w)); /* the thread keeps quiet meanwhile */
    char *silent = calloc((size_t)st->size, 1);
    char names[640] = "";
    if (silent) {
        ping_all(w, silent, req);
        name_by_node(st, silent, names, sizeof names);
    }
    if (names[0])
        dr_error("timed out after %g s waiting in the %s level: no answer from %s: dead, stuck or cut off (raise "
                 "%s if they are only slow); ending the job",
                 w->timeout_s, what, names, DR_NAME("cfg.timeout", "--timeout"));
    else
        dr_error("timed out after %g s waiting in the %s level: every rank answers, yet the collective does not "
                 "complete; ending the job",
                 w->timeout_s, what);
    end_job(); /* as the watchdog thread: the launcher ends the other ranks */
}

dr_status_t dr_watchdog_wait(dr_watchdog_t *w, MPI_Request *req)
{
    const char *what = w ? atomic_load(&w->phase) : NULL;
    if (!dr_watchdog_armed(w) || !what || !w->st) {
        DR_MPI_CHECK(MPI_Wait(req, MPI_STATUS_IGNORE));
        return DR_OK;
    }
    const double deadline = now_s() + w->timeout_s;
    atomic_store(&w->phase_deadline, deadline + grace_s(w)); /* the thread only backs this loop up */
    for (;;) {
        int done = 0;
        DR_MPI_CHECK(MPI_Test(req, &done, MPI_STATUS_IGNORE));
        if (done) return DR_OK;
        if (now_s() >= deadline) give_up(w, req, what);
    }
}

dr_status_t dr_watchdog_barrier(dr_watchdog_t *w, MPI_Comm comm)
{
    MPI_Request req;
    DR_MPI_CHECK(MPI_Ibarrier(comm, &req));
    return dr_watchdog_wait(w, &req);
}

void dr_watchdog_destroy(dr_watchdog_t *w)
{
    if (!w) return;
    if (w->has_thread) {
        pthread_mutex_lock(&w->lock);
        w->stop = 1;
        pthread_cond_signal(&w->wake);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->thread, NULL);
    }
    if (w->st) state_free(w->st);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    free(w);
}
