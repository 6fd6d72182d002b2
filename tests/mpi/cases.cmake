# The mpi label: dreduce under mpiexec on the CPU backend, each run checked by tests/mpi/run_cases.py against an
# answer computed there in closed form (not by the program's own reference). One test per suite of the script; list
# the cases with `python3 tests/mpi/run_cases.py --list`. Every mpiexec run has a 60 s limit of its own.

# 1..4 ranks x strong/weak scaling x hierarchical/flat combine: int64 and float32 sums of iota (and an odd n, and the
# largest index under weak scaling).
dr_mpi_test(scaling_np1 --suite scaling-np1)
dr_mpi_test(scaling_np2 --suite scaling-np2)
dr_mpi_test(scaling_np3 --suite scaling-np3)
dr_mpi_test(scaling_np4 --suite scaling-np4)

# Every type x every op defined for it, 3 ranks, hierarchical, strong; iota, ones and const data, wrapping 64-bit
# accumulators, the 32-bit types widened for sum/prod; --acc native for the float types.
dr_mpi_test(types_int --suite types-int)
dr_mpi_test(types_float --suite types-float)

# Emulated nodes: 2 x 2 ranks, uneven 2 + 1, 3 + 1, one rank per node, one node larger than the job.
dr_mpi_test(nodes --suite nodes)

# Fewer elements than ranks (n = 2, 3 at 4 ranks) and empty arrays (n = 0), both combines.
dr_mpi_test(small --suite small)

# --allreduce, hierarchical (with its bcast level) and flat, with and without emulated nodes.
dr_mpi_test(allreduce --suite allreduce)

# Usage errors under mpiexec: options that differ across ranks (MPMD launch), bad options; exit 2, one message,
# no hang.
dr_mpi_test(errors --suite errors)

# Faults: a rank crashes, is killed, hangs (the others' --timeout watchdog names the level), corrupts its partial
# (verification names the rank and the level), or cannot allocate (the error names rank, host and bytes).
add_test(NAME mpi_faults COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpi/faults.sh ${DR_MPIEXEC} $<TARGET_FILE:dreduce>)
set_tests_properties(mpi_faults PROPERTIES LABELS mpi TIMEOUT 600 ENVIRONMENT "${DR_TEST_ENV}")
