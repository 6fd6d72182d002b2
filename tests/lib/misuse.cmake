# libdreduce under misuse (issue 21; docs/reliability.md, "Library misuse"): one test per row of that table, each a
# run of test_misuse CASE under mpiexec through tests/lib/misuse.py (CPU backend, a 60 s limit: a hang fails). The
# program checks every rank's status, *out and context pointer; the script the exit status, the messages (REGEX:
# some stderr line must match) and the number of "dreduce: error:" lines (ERRORS; omit for any).
# gpu_misuse_CASE runs the same case with contexts on GPUs (exit 77, skipped, where there is none).

add_executable(test_misuse lib/misuse.c)
target_link_libraries(test_misuse PRIVATE libdreduce Threads::Threads)
target_compile_options(test_misuse PRIVATE ${DR_C_WARNINGS})

set(DR_MISUSE ${CMAKE_CURRENT_SOURCE_DIR}/lib/misuse.py)
# dr_misuse_case(CASE NP [RC code] [ERRORS n] [TEST name] [EXPECT regex...])
# TEST: the test's name when it is not the case's (one case at several rank counts).
function(dr_misuse_case name np)
  cmake_parse_arguments(M "" "RC;ERRORS;TEST" "EXPECT" ${ARGN})
  set(args --mpiexec ${MPIEXEC_EXECUTABLE} --exe $<TARGET_FILE:test_misuse> --case ${name} --np ${np})
  if(DEFINED M_TEST)
    set(name ${M_TEST})
  endif()
  if(DEFINED M_RC)
    list(APPEND args --rc ${M_RC})
  endif()
  if(DEFINED M_ERRORS)
    list(APPEND args --errors ${M_ERRORS})
  endif()
  foreach(rx IN LISTS M_EXPECT)
    list(APPEND args --expect ${rx})
  endforeach()
  add_test(NAME mpi_misuse_${name} COMMAND python3 ${DR_MISUSE} ${args})
  add_test(NAME gpu_misuse_${name} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/run_if_gpu.sh python3 ${DR_MISUSE}
                                            ${args} --gpu)
  set_tests_properties(mpi_misuse_${name} PROPERTIES LABELS mpi TIMEOUT 120 SKIP_RETURN_CODE 77
                       ENVIRONMENT "${DR_TEST_ENV}")
  set_tests_properties(gpu_misuse_${name} PROPERTIES LABELS gpu TIMEOUT 120 SKIP_RETURN_CODE 77
                       ENVIRONMENT "${DR_TEST_ENV}")
endfunction()

# dreduce_create: a local problem on one rank, or fields that must agree and do not: every rank DR_ERR_USAGE, in
# bounded time, one line.
dr_misuse_case(create_bad_block 3 ERRORS 1 EXPECT "^dreduce: error: rank 1 .*cfg\\.block is 33: must be")
dr_misuse_case(create_chunk_zero 3 ERRORS 1 EXPECT "^dreduce: error: rank 2 .*cfg\\.chunk_bytes is 0: must be")
dr_misuse_case(create_nan_timeout 2 ERRORS 1 EXPECT "^dreduce: error: rank 1 .*cfg\\.timeout is -?nan: must be")
dr_misuse_case(create_bad_enum 2 ERRORS 1
               EXPECT "^dreduce: error: rank 0 .*cfg\\.combine is 7: not a dr_combine_mode_t \\(0\\.\\.1\\)")
dr_misuse_case(create_null_cfg 3 ERRORS 1 EXPECT "^dreduce: error: rank 1 .*dreduce_create: cfg is NULL")
dr_misuse_case(create_null_out 2 ERRORS 1 EXPECT "^dreduce: error: rank 0 .*dreduce_create: out is NULL")
dr_misuse_case(create_gpu_missing 2 ERRORS 1
               EXPECT "^dreduce: error: rank 1 .*cfg\\.device DR_DEVICE_GPU: no GPU is visible")
dr_misuse_case(create_combine_differs 3 ERRORS 1
               EXPECT "^dreduce: error: rank 0 .*cfg\\.combine differs: HIER on rank 0, FLAT on rank 1")
dr_misuse_case(create_allreduce_differs 3 ERRORS 1
               EXPECT "^dreduce: error: rank 0 .*cfg\\.allreduce differs: 0 on rank 0, 1 on rank 2")
dr_misuse_case(create_rpn_differs 4 ERRORS 1
               EXPECT "^dreduce: error: rank 0 .*cfg\\.ranks_per_node differs: 0 on rank 3, 2 on rank 0")
dr_misuse_case(create_acc_differs 2 ERRORS 1
               EXPECT "^dreduce: error: rank 0 .*cfg\\.acc_mode differs: wide on rank 0, native on rank 1")
dr_misuse_case(create_own_fields_differ 4 ERRORS 0)
dr_misuse_case(create_comm_null 2 ERRORS 2 EXPECT "^dreduce: error: dreduce_create: comm is MPI_COMM_NULL")
dr_misuse_case(create_comm_null_split 3 ERRORS 1 EXPECT "dreduce_create: comm is MPI_COMM_NULL")

# Arguments: each named, DR_ERR_USAGE, *out valid = 0; prepare refuses what reduce refuses, on every rank alike.
dr_misuse_case(reduce_bad_dtype 2 ERRORS 2 EXPECT "dtype 99 is not a dr_dtype_t \\(0\\.\\.11: int32,")
dr_misuse_case(reduce_bad_op 2 ERRORS 2 EXPECT "op 42 is not a dr_op_t \\(0\\.\\.9: sum,")
dr_misuse_case(reduce_null_args 2 EXPECT "dreduce_reduce: out is NULL" "dreduce_reduce: ctx is NULL"
               "dreduce_prepare: ctx is NULL" "dreduce_local_partial: ctx is NULL" "dreduce_reduce_file: out is NULL")
dr_misuse_case(out_after_error 2 EXPECT "NULL buffer with count 5" "/nonexistent/misuse\\.npy")
dr_misuse_case(prepare_huge_count 3 EXPECT "count 4611686018427387904: that many elements of 4 bytes do not fit"
               "rank 1 .*dtype 99 is not a dr_dtype_t" "op bxor is not defined for type float32")
dr_misuse_case(result_format_short 1 ERRORS 0)

# Per call (the signature record of each combine): mismatched dtype, op, accumulator; a rank's own error.
dr_misuse_case(reduce_dtype_differs 2 EXPECT "rank 0 .*dtype")
dr_misuse_case(reduce_dtype_differs_allreduce 2 EXPECT "rank 0 .*dtype" "rank 1 .*dtype")
dr_misuse_case(reduce_f64_f32_max 2 EXPECT "rank 0 .*dtype")
dr_misuse_case(reduce_f32_f64_native 2 EXPECT "rank 0 .*dtype")
dr_misuse_case(reduce_op_differs 2 EXPECT "rank 0 .*op")
dr_misuse_case(reduce_empty_placeholder 2)
dr_misuse_case(reduce_rpn2_one_f64 4 EXPECT "rank 0 .*dtype")
dr_misuse_case(reduce_null_buffer_one_rank 2 EXPECT "rank 1 .*NULL buffer with count 3")
dr_misuse_case(reduce_null_out_one_rank 2 EXPECT "rank 1 .*dreduce_reduce: out is NULL")
dr_misuse_case(reduce_argmax_unplaced 3 EXPECT "argmax on 3 ranks needs each rank's place in the whole array"
               "rank 1 .*argmin on 3 ranks needs .*dreduce_prepare saw another count")
dr_misuse_case(reduce_fail_one_rank 3 EXPECT "rank 1 failed in this call")

# The watchdog belongs to the context.
dr_misuse_case(watchdog_disarmed_after_error 2)
dr_misuse_case(two_contexts_timeouts 2 ERRORS 0)
dr_misuse_case(two_contexts_threads 2 RC 3 EXPECT "timed out after 2 s" "cfg\\.timeout")


# One rank's bad argument to each collective call (dtype, op, op for the dtype, count past PTRDIFF_MAX, buffer,
# first; the file calls' file, dtype, op, out, info and fn), with no timeout: every rank ends in bounded time with
# the header's status, at 2 and 4 ranks, reduce to rank 0 and allreduce.
foreach(np 2 4)
  math(EXPR last "${np} - 1")
  dr_misuse_case(reduce_bad_arg_one_rank ${np} TEST reduce_bad_arg_one_rank_np${np}
                 EXPECT "rank ${last} .*dtype 99 is not a dr_dtype_t" "rank ${last} .*op 42 is not a dr_op_t"
                 "rank ${last} .*op band is not defined for type float32"
                 "rank ${last} .*count 4611686018427387904: that many elements of 2 bytes do not fit"
                 "rank ${last} .*first index 18446744073709551613 \\+ count 3 passes"
                 "rank ${last} failed in this call")
  dr_misuse_case(file_bad_arg_one_rank ${np} TEST file_bad_arg_one_rank_np${np}
                 EXPECT "rank ${last} .*file->dtype 99 is not a dr_dtype_t" "rank ${last} .*dreduce_reduce_file: out is NULL"
                 "rank ${last} .*dreduce_file_inspect: info is NULL" "rank ${last} .*dreduce_file_scan: fn is NULL")
endforeach()
# min, max, band, bor, bxor, argmax of an array with no element: no value (NumPy raises); sum 0, prod 1, stats count 0.
dr_misuse_case(empty_no_value 3 ERRORS 0)
dr_misuse_case(result_bad_kind 1 ERRORS 0)
