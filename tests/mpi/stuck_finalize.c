/* Test-only: linked into dreduce_stuck_finalize (tests/mpi/cases.cmake), a copy of the dreduce program, and into
 * nothing else. Its MPI_Finalize (through the MPI profiling interface) never returns, as a hung finalize would not:
 * the program must still end, by its --timeout alarm (src/cli/main.c, finalize_within), with one warning and the run's
 * status. */
#include <mpi.h>
#include <unistd.h>

int MPI_Finalize(void)
{
    for (;;) pause(); /* until a signal's handler exits the process */
}
