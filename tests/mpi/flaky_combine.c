/* Test-only: linked into dreduce_flaky_combine (tests/mpi/cases.cmake), a copy of the dreduce program, and into
 * nothing else. It makes one repetition's result differ from the others, so the determinism tests can show that the
 * program notices (exit 4, "repetitions of the same reduction gave different results") instead of only ever seeing
 * identical repetitions.
 *
 * MPI_Reduce through the MPI profiling interface: after the real reduction, on world rank 0 acting as the root, the
 * call numbered DREDUCE_TEST_FLIP_CALL (counting from 1 this process's MPI_Reduce calls where it is the root; unset or
 * 0: never) gets the lowest bit of its result flipped: one unit in the last place of a float, one of an integer.
 * dreduce calls MPI_Reduce only to combine partials (src/lib/combine.c), once per level with two ranks or more: on one
 * node once per repetition, flat or hier (run with --timeout 0: under a timeout the combine is an MPI_Ireduce). The last repetition must stay untouched, so verification (which checks the last result) still passes and
 * the determinism check is the only one to fail. Prototypes as in mpi.h. */
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>

#include "combine.h"

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm)
{
    static long calls;
    const int rc = PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    int world_rank = -1, rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_rank(comm, &rank);
    const char *flip = getenv("DREDUCE_TEST_FLIP_CALL");
    if (rc == MPI_SUCCESS && world_rank == 0 && rank == root && count > 0 && ++calls == (flip ? atol(flip) : 0))
        ((unsigned char *)recvbuf)[offsetof(dr_record_t, value)] ^= 1; /* little-endian: the value's lowest bit */
    return rc;
}
