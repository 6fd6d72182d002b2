/* A watchdog for collectives: a rank that waits in one MPI collective (or barrier) longer than --timeout seconds
 * prints which level it was in and exits, and the launcher then ends the job, so a dead or stuck rank never hangs
 * a 512-node job. Compute phases are not watched (they may legitimately take long). */
#ifndef DREDUCE_WATCHDOG_H
#define DREDUCE_WATCHDOG_H

/* Start the watchdog thread (seconds <= 0: never fires). Returns 0, or -1 if the thread could not start. */
int dr_watchdog_start(double seconds);

/* Entering a collective phase named `what` (a string literal, e.g. "node (MPI_Reduce over the node)"). */
void dr_watchdog_enter(const char *what);

/* The phase is over. */
void dr_watchdog_leave(void);

#endif
