/* A watchdog for collectives: a rank that waits in one MPI collective (or barrier) longer than --timeout seconds
 * prints which level it was in and exits, and the launcher then ends the job, so a dead or stuck rank never hangs
 * a 512-node job. Compute phases are not watched (they may legitimately take long).
 *
 * Two ways of watching. Any collective between dr_watchdog_enter() and dr_watchdog_leave() is watched by a thread,
 * which may not call MPI and so can only name the level. A nonblocking collective waited for with dr_watchdog_wait()
 * (or a dr_watchdog_barrier()) is watched by the calling thread itself, which can still ask MPI who answers: past
 * the timeout it pings every rank of the run and names, by node, those that do not answer (dead, stuck outside MPI,
 * or cut off from it). So that such a line comes first, the thread gives up a grace period later (1 s, or half the
 * timeout when that is under 2 s). */
#ifndef DREDUCE_WATCHDOG_H
#define DREDUCE_WATCHDOG_H

#include <mpi.h>

#include "status.h"

/* Start the watchdog thread (seconds <= 0: never fires). Returns 0, or -1 if the thread could not start. */
int dr_watchdog_start(double seconds);

/* Entering a collective phase named `what` (a string literal, e.g. "node (MPI_Reduce over the node)"). */
void dr_watchdog_enter(const char *what);

/* The phase is over. */
void dr_watchdog_leave(void);

/* Collective over run, the communicator whose ranks the report names (later calls return at once): gather every
 * rank's node name and post the receives for pings (watchdog.c). Kept with run as an MPI attribute and released
 * when run is freed, which must happen before MPI_Finalize. Returns DR_OK, or DR_ERR_RUNTIME (printed). */
dr_status_t dr_watchdog_prepare(MPI_Comm run, const char *node_name);

/* Wait for *req, a nonblocking collective (on run or on any communicator of its ranks), inside the current phase
 * (dr_watchdog_enter). Past --timeout: ping every rank of run, print "no answer from node X (ranks ...)" naming
 * those that do not answer within half the grace period, and exit (status 3) for the launcher to end the
 * job. Without a timeout, a phase, or a prepared run it is MPI_Wait (and the thread watches). Returns DR_OK, or
 * DR_ERR_RUNTIME after an MPI error (printed). */
dr_status_t dr_watchdog_wait(MPI_Request *req, MPI_Comm run);

/* MPI_Ibarrier over comm, then dr_watchdog_wait. */
dr_status_t dr_watchdog_barrier(MPI_Comm comm, MPI_Comm run);

#endif
