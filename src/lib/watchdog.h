/* A watchdog for collectives, one per context: a rank that waits in one of the context's MPI collectives longer than
 * the context's timeout (cfg.timeout, --timeout) prints which level it was in and exits, and the launcher then ends
 * the job, so a dead or stuck rank never hangs a 512-node job. Compute phases are not watched (they may legitimately
 * take long), and nothing is watched outside a library call: every call that enters a phase leaves it on every
 * return path. Each context has its own timeout and its own thread, so two contexts used from two threads
 * (MPI_THREAD_MULTIPLE) are watched independently.
 *
 * Two ways of watching. Any collective between dr_watchdog_enter() and dr_watchdog_leave() is watched by the
 * context's thread, which may not call MPI and so can only name the level. A nonblocking collective waited for with
 * dr_watchdog_wait() (or a dr_watchdog_barrier()) is watched by the calling thread itself, which can still ask MPI
 * who answers: past the timeout it pings every rank of the run and names, by node, those that do not answer (dead,
 * stuck outside MPI, or cut off from it). So that such a line comes first, the thread gives up a grace period later
 * (1 s, or half the timeout when that is under 2 s). */
#ifndef DREDUCE_WATCHDOG_H
#define DREDUCE_WATCHDOG_H

#include <mpi.h>

#include "status.h"

typedef struct dr_watchdog dr_watchdog_t;

/* A watchdog with a timeout of `seconds` (<= 0: never fires, and no thread is started). Returns DR_OK, or
 * DR_ERR_RUNTIME (printed) if the memory or the thread could not be had; *out is NULL then. */
dr_status_t dr_watchdog_create(dr_watchdog_t **out, double seconds);

/* Stop the thread and release the ping state (dr_watchdog_prepare). Call before MPI_Finalize. NULL is ignored. */
void dr_watchdog_destroy(dr_watchdog_t *w);

/* 1 when the watchdog fires at all (a timeout > 0). */
int dr_watchdog_armed(const dr_watchdog_t *w);

/* Entering a collective phase named `what` (a string literal, e.g. "node (MPI_Reduce over the node)"). */
void dr_watchdog_enter(dr_watchdog_t *w, const char *what);

/* The phase is over (also when none was entered). */
void dr_watchdog_leave(dr_watchdog_t *w);

/* Collective over run, the communicator whose ranks the report names (later calls return at once): gather every
 * rank's node name and post the receives for pings. Only needed with a timeout; released by dr_watchdog_destroy.
 * Returns DR_OK, or DR_ERR_RUNTIME (printed). */
dr_status_t dr_watchdog_prepare(dr_watchdog_t *w, MPI_Comm run, const char *node_name);

/* Wait for *req, a nonblocking collective (on run or on any communicator of its ranks), inside the current phase
 * (dr_watchdog_enter). Past the timeout: ping every rank of run, print "no answer from node X (ranks ...)" naming
 * those that do not answer within half the grace period, and exit (status 3) for the launcher to end the job.
 * Without a timeout, a phase, or a prepared run it is MPI_Wait (and the thread watches). Returns DR_OK, or
 * DR_ERR_RUNTIME after an MPI error (printed). */
dr_status_t dr_watchdog_wait(dr_watchdog_t *w, MPI_Request *req);

/* MPI_Ibarrier over comm, then dr_watchdog_wait. */
dr_status_t dr_watchdog_barrier(dr_watchdog_t *w, MPI_Comm comm);

#endif
