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

# stats, argmin, argmax (issue #37) at 1..4 ranks across int8, int16, int32, int64, uint64, float16, float32 and
# float64: uneven shards, fewer elements than ranks, none, flat and hier, emulated nodes, --allreduce, weak scaling;
# argmin/argmax exactly (value and global index: the same element at every rank count), stats' count, sum, min, max
# and integer/exact means exactly, float moments within 1e-9 of the model's exact ones.
dr_mpi_test(stats --suite stats)

# histogram, quantile, median (np.histogram and np.quantile, method linear, of NumPy 2) at 1..4 ranks across int8 (iota
# wrapping), int16, int32, int64, uint64, float16, float32 and float64: given and automatic ranges, a constant, none,
# NaN, uneven shards, fewer elements than ranks, flat and hier, emulated nodes, --allreduce, weak scaling; counts,
# edges, quantiles' ranks, weights and values exactly, from the global array built by the script; bad --bins, --q of
# nothing, --bins that differ across ranks (MPMD).
dr_mpi_test(distrib --suite distrib)

# Usage errors under mpiexec: options that differ across ranks (MPMD launch), bad options; exit 2, one message,
# no hang.
dr_mpi_test(errors --suite errors)

# Each rank's share of this machine's CPUs (tests/mpi/shares.py) at 1, 2 and 4 ranks, the launcher binding each to one
# core: --bind auto gives disjoint shares covering the machine (more ranks than CPUs: one each, shared and said), the
# rank bound to its share, widened past the launcher's core (and said so), one thread per CPU of it; --bind none keeps
# the launcher's mask exactly, workers keeps it too with the share's threads; a Slurm task allocation
# (SLURM_CPUS_PER_TASK) is never exceeded; unbound ranks divide the machine. Exit 77 under an unknown launcher.
add_test(NAME mpi_shares COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/mpi/shares.py --mpiexec ${DR_MPIEXEC}
                                 --dreduce $<TARGET_FILE:dreduce> --np 1,2,4)
set_tests_properties(mpi_shares PROPERTIES LABELS mpi TIMEOUT 600 SKIP_RETURN_CODE 77 ENVIRONMENT "${DR_TEST_ENV}")

# Faults: a rank crashes, is killed, hangs (the others' --timeout watchdog names the level), corrupts its partial
# (verification names the rank and the level), or cannot allocate (the error names rank, host and bytes).
# dreduce-faults: the program and library with fault injection compiled in (src/common/fault.h; the installed ones
# have none). Its own copies of the two files that inject (main.c, context.c) come first on the link line, so the
# archives' copies of them are never pulled in; everything else is the library's archives, as libdreduce holds them.
add_executable(dreduce-faults ${PROJECT_SOURCE_DIR}/src/cli/main.c ${PROJECT_SOURCE_DIR}/src/lib/context.c
                              ${PROJECT_SOURCE_DIR}/tests/fault/fault.c)
target_compile_definitions(dreduce-faults PRIVATE DR_FAULT_INJECTION)
target_link_libraries(dreduce-faults PRIVATE dreduce_cli dreduce_lib dreduce_datagen dreduce_common)
if(DR_HDF5)
  target_link_libraries(dreduce-faults PRIVATE dr_hdf5)
endif()
target_compile_options(dreduce-faults PRIVATE ${DR_C_WARNINGS})
add_test(NAME mpi_faults COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpi/faults.sh ${DR_MPIEXEC} $<TARGET_FILE:dreduce-faults>)
set_tests_properties(mpi_faults PROPERTIES LABELS mpi TIMEOUT 600 ENVIRONMENT "${DR_TEST_ENV}")

# Determinism (docs/reliability.md): every row of the reduction table (src/common/table.h), 3 ranks, 100
# repetitions in one job: the same bits every time (dreduce compares each repetition's result with the first and
# exits 4 if one differs; the JSON report must say deterministic). Two CPU threads per rank, so the CPU backend
# splits its shard too.
add_test(NAME mpi_determinism
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/mpi/determinism.py --mpiexec ${DR_MPIEXEC}
                 --dreduce $<TARGET_FILE:dreduce> --np 3 --device cpu --sizes 400003 --reps 100 --jobs 4
                 --extra "--threads 2")
set_tests_properties(mpi_determinism PROPERTIES LABELS mpi TIMEOUT 600 ENVIRONMENT "${DR_TEST_ENV}")
# ...and the same at any scale (issue #37): argmin/argmax of four types and stats where its sum and mean are exact, on
# random data at 1, 2, 3 and 4 ranks (three CPU threads each): the same element (value and global index) at every
# rank count, and stats' count, min, max, sum and mean to the bit.
add_test(NAME mpi_determinism_across_np
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/mpi/determinism.py --mpiexec ${DR_MPIEXEC}
                 --dreduce $<TARGET_FILE:dreduce> --across-np 1,2,3,4 --device cpu --sizes 300007 --reps 3 --jobs 2
                 --extra "--threads 3")
set_tests_properties(mpi_determinism_across_np PROPERTIES LABELS mpi TIMEOUT 600 ENVIRONMENT "${DR_TEST_ENV}")

# ...and the check can fail: dreduce_flaky_combine is the program with tests/mpi/flaky_combine.c linked in, which
# flips the lowest bit of one repetition's combined result (DREDUCE_TEST_FLIP_CALL: which MPI_Reduce call of rank
# 0; on one node each repetition makes one, flat or hier, so 2 is the second repetition). --timeout 0: the combine
# stays a blocking MPI_Reduce (under a timeout it is an MPI_Ireduce, waited for by the watchdog). Exit 4 and the
# determinism message, while verification (of the last repetition) passes; unset, the same program passes.
add_executable(dreduce_flaky_combine ${PROJECT_SOURCE_DIR}/src/cli/main.c ${CMAKE_CURRENT_SOURCE_DIR}/mpi/flaky_combine.c)
target_link_libraries(dreduce_flaky_combine PRIVATE libdreduce dreduce_cli dreduce_datagen dreduce_common)
target_include_directories(dreduce_flaky_combine PRIVATE ${PROJECT_SOURCE_DIR}/src/lib) # the combine's record
target_compile_options(dreduce_flaky_combine PRIVATE ${DR_C_WARNINGS})
set(DR_FLAKY_DIFFERS "repetitions of the same reduction gave different results")
foreach(combine flat hier)
  add_test(NAME mpi_determinism_can_fail_${combine}
           COMMAND bash ${DR_EXPECT} --also "determinism: FAILED" --also "verification: passed" --not "verification failed"
                   4 ${DR_FLAKY_DIFFERS} ${DR_MPIEXEC} -np 2
                   $<TARGET_FILE:dreduce_flaky_combine> --device cpu -n 100003 --type int64 --iters 3 --warmup 0
                   --combine ${combine} --timeout 0)
endforeach()
add_test(NAME mpi_determinism_flaky_unset
         COMMAND bash ${DR_EXPECT} --not "${DR_FLAKY_DIFFERS}" --not "determinism: FAILED" 0 "verification: passed"
                 ${DR_MPIEXEC} -np 2 $<TARGET_FILE:dreduce_flaky_combine> --device cpu -n 100003 --type int64
                 --iters 3 --warmup 0 --timeout 0)
# The variable reaches the ranks from the launcher's environment (both Open MPI and Hydra pass it on to local ranks;
# `-x VAR` is Open MPI's flag only).
set_tests_properties(mpi_determinism_can_fail_flat mpi_determinism_can_fail_hier PROPERTIES LABELS mpi TIMEOUT 120
                     ENVIRONMENT "${DR_TEST_ENV};DREDUCE_TEST_FLIP_CALL=2")
set_tests_properties(mpi_determinism_flaky_unset PROPERTIES LABELS mpi TIMEOUT 120 ENVIRONMENT "${DR_TEST_ENV}")

# A hung MPI_Finalize does not hang the program: dreduce_stuck_finalize is the program with tests/mpi/stuck_finalize.c
# linked in, whose MPI_Finalize never returns. After --timeout seconds in it, the run (already verified and reported)
# exits with its own status and one warning. A singleton, as the one hang CI has seen.
add_executable(dreduce_stuck_finalize ${PROJECT_SOURCE_DIR}/src/cli/main.c ${CMAKE_CURRENT_SOURCE_DIR}/mpi/stuck_finalize.c)
target_link_libraries(dreduce_stuck_finalize PRIVATE libdreduce dreduce_cli dreduce_datagen dreduce_common)
target_compile_options(dreduce_stuck_finalize PRIVATE ${DR_C_WARNINGS})
add_test(NAME mpi_finalize_stuck
         COMMAND bash ${DR_EXPECT} --also "^dreduce: warning: MPI_Finalize did not return within 2 s" 0
                 "verification: passed" $<TARGET_FILE:dreduce_stuck_finalize> --device cpu -n 1000 --timeout 1.5)
# ...and with the run's own status: a usage error (2; its message and the warning are two lines, so not expect.sh)
add_test(NAME mpi_finalize_stuck_usage
         COMMAND sh -c "\"$0\" --timeout 1 --type float32 --data const:1.5x 2>&1 | grep -q 'MPI_Finalize did not return within 1 s' && \"$0\" --timeout 1 --type float32 --data const:1.5x 2>/dev/null; test $? -eq 2"
                 $<TARGET_FILE:dreduce_stuck_finalize>)
set_tests_properties(mpi_finalize_stuck mpi_finalize_stuck_usage PROPERTIES LABELS mpi TIMEOUT 120
                     ENVIRONMENT "${DR_TEST_ENV}")

# Bad input that needs several ranks (docs/reliability.md, "Bad input"): options that differ across ranks (MPMD,
# both values named), a bad option on one rank or on every rank, weak-scaling overflow, an unwritable --output on
# rank 0. Every rank exits 2, the message is printed exactly once, no report.
add_test(NAME mpi_bad_input COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpi/bad_input.sh ${DR_MPIEXEC} $<TARGET_FILE:dreduce>)
set_tests_properties(mpi_bad_input PROPERTIES LABELS mpi TIMEOUT 300 ENVIRONMENT "${DR_TEST_ENV}")

# The calls libdreduce makes (issue #16), counted through the MPI profiling interface (tests/mpi/count_calls.c, CPU
# backend): per dreduce_reduce, no MPI call at P=1; one collective per rank at P=2 on one node (hier, flat,
# allreduce; blocking, and nonblocking under a timeout); no barrier anywhere. Every result checked.
add_executable(count_calls ${CMAKE_CURRENT_SOURCE_DIR}/mpi/count_calls.c)
target_link_libraries(count_calls PRIVATE libdreduce)
target_compile_options(count_calls PRIVATE ${DR_C_WARNINGS})
set_target_properties(count_calls PROPERTIES ENABLE_EXPORTS ON) # the library's MPI calls resolve to ours
set(DR_COUNT_CASES "np1_hier:1:--combine hier" "np1_timeout:1:--timeout 5" "np2_hier:2:--combine hier"
    "np2_flat:2:--combine flat" "np2_hier_allreduce:2:--combine hier --allreduce"
    "np2_flat_allreduce:2:--combine flat --allreduce" "np2_hier_timeout:2:--combine hier --timeout 5"
    "np2_flat_allreduce_timeout:2:--combine flat --allreduce --timeout 5")
foreach(case ${DR_COUNT_CASES})
  string(REPLACE ":" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 np)
  list(GET parts 2 args)
  separate_arguments(args)
  add_test(NAME mpi_count_calls_${name} COMMAND ${DR_MPIEXEC} -np ${np} $<TARGET_FILE:count_calls> ${args})
  set_tests_properties(mpi_count_calls_${name} PROPERTIES LABELS mpi TIMEOUT 120 ENVIRONMENT "${DR_TEST_ENV}")
endforeach()

# Misuse the combine catches (issues #21 and #16; docs/reliability.md, "Library misuse"): different dtypes, ops or
# accumulators across ranks (an error naming the field, values and ranks; never a value), one rank's NULL buffer with
# a count (every receiving rank fails naming it; the next call is right), the watchdog disarmed after an error, two
# contexts with their own timeouts (also from two threads).
add_executable(combine_misuse ${CMAKE_CURRENT_SOURCE_DIR}/mpi/combine_misuse.c)
target_link_libraries(combine_misuse PRIVATE libdreduce Threads::Threads)
target_compile_options(combine_misuse PRIVATE ${DR_C_WARNINGS})
add_test(NAME mpi_combine_misuse COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpi/combine_misuse.sh ${DR_MPIEXEC}
                                         $<TARGET_FILE:combine_misuse>)
set_tests_properties(mpi_combine_misuse PROPERTIES LABELS mpi TIMEOUT 600 ENVIRONMENT "${DR_TEST_ENV}")
# The same cases with GPU contexts (host arrays through the GPU, ranks sharing the GPUs), where there is one.
add_test(NAME gpu_combine_misuse COMMAND bash ${PROJECT_SOURCE_DIR}/tests/gpu/run_if_gpu.sh bash
                                         ${CMAKE_CURRENT_SOURCE_DIR}/mpi/combine_misuse.sh ${DR_MPIEXEC}
                                         $<TARGET_FILE:combine_misuse> --gpu)
set_tests_properties(gpu_combine_misuse PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 900
                     ENVIRONMENT "${DR_TEST_ENV}")
