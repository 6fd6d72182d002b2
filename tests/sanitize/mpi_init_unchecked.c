/* Linked into every executable of a DREDUCE_SANITIZE=ON build (cmake/Sanitize.cmake), nowhere else.
 *
 * MPI_Init and MPI_Init_thread through the MPI profiling interface, with LeakSanitizer off for the call: Open MPI 4.1
 * keeps what it allocates while initialising (component selection, predefined ops, ORTE/PMIx start-up) until the
 * process ends. No code of ours runs inside MPI_Init, so nothing of ours is hidden; MPI objects we create later
 * (communicators, ops) and forget to free are still reported. This replaces a suppression that had to find
 * ompi_mpi_init in every such allocation's stack, which needs slow (DWARF) unwinding of every malloc and free: three
 * times the run time of a sanitized MPI test.
 *
 * PMPI_Init and PMPI_Init_thread are weak references: executables without MPI (the unit tests) link too; they never
 * call these. Prototypes as in mpi.h, which is not needed (nor on the include path of every target). */
#include <sanitizer/lsan_interface.h>

int PMPI_Init(int *argc, char ***argv) __attribute__((weak));
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided) __attribute__((weak));
int MPI_Init(int *argc, char ***argv);
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);

int MPI_Init(int *argc, char ***argv)
{
    __lsan_disable();
    const int rc = PMPI_Init(argc, argv);
    __lsan_enable();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    __lsan_disable();
    const int rc = PMPI_Init_thread(argc, argv, required, provided);
    __lsan_enable();
    return rc;
}
