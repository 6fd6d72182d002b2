# The program end to end on a GPU (skipped without one): every kernel level, the 16-bit and 64-bit types, both
# accumulator modes, a misaligned input, host staging, and the JSON report.
set(DR_RUN_IF_GPU ${CMAKE_CURRENT_SOURCE_DIR}/gpu/run_if_gpu.sh)
function(dr_gpu_run name)
  add_test(NAME gpu_run_${name}
           COMMAND bash ${DR_RUN_IF_GPU} bash ${DR_EXPECT} 0 "verification: passed" $<TARGET_FILE:dreduce>
                   --device gpu ${ARGN})
  set_tests_properties(gpu_run_${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300
                       ENVIRONMENT "${DR_TEST_ENV}")
endfunction()
dr_gpu_run(default)
foreach(kernel neighbored interleaved smem smem2 unroll shuffle multipass)
  dr_gpu_run(${kernel} -k ${kernel} -n 16Mi --type int32)
endforeach()
dr_gpu_run(float16_sum -n 100Mi --type float16)
dr_gpu_run(bfloat16_max -n 100Mi --type bfloat16 --op max)
dr_gpu_run(float64_prod -n 10Mi --type float64 --op prod)
dr_gpu_run(float32_native -n 256Mi --type float32 --acc native)
dr_gpu_run(uint64_bxor -n 64Mi --type uint64 --op bxor)
dr_gpu_run(misaligned -n 10000019 --type float32 --misalign 3)
dr_gpu_run(empty -n 0)
dr_gpu_run(one -n 1 --type int64 --op min)
dr_gpu_run(float32_stats -n 100Mi --type float32 --op stats)
dr_gpu_run(float16_stats_exact -n 10000019 --type float16 --op stats --acc exact --misalign 3)
dr_gpu_run(int8_stats -n 100Mi --type int8 --op stats)
dr_gpu_run(uint64_stats -n 10Mi --type uint64 --op stats)
dr_gpu_run(float32_argmax -n 100Mi --type float32 --op argmax)
dr_gpu_run(float64_argmin -n 10000019 --type float64 --op argmin --misalign 1)
dr_gpu_run(bfloat16_argmax_host -n 10Mi --type bfloat16 --op argmax --staging host)
dr_gpu_run(host_staging --staging host)
# Distributions (--op histogram, quantile, median): the counting kernel's passes, checked by the program's reference
# (src/cli/reference.h), past the L2 and with a misaligned start and host staging.
dr_gpu_run(float32_histogram -n 256Mi --op histogram --bins 1000)
dr_gpu_run(bfloat16_histogram_range -n 100Mi --type bfloat16 --op histogram --bins 4096 --range -1,2 --staging host)
dr_gpu_run(int64_quantile -n 100Mi --type int64 --op quantile --q 0.01,0.5,0.99)
dr_gpu_run(float16_median -n 10000019 --type float16 --op median --misalign 3)
dr_gpu_run(mapped_staging --staging mapped)
# bfloat16 OMIT stats over batches whose exponents lie 51-54 apart (tests/cli/bf16_wide_batch.sh), checked against the
# sum's bound: 128 elements with blocks of 32 (a vector a thread: omit_batch16<1>, serial depth 12) and 4096 (a round
# of four vectors a thread: omit_batch16<4>, depth 47). Summed about the least element alone, they are 25 and 117
# u sum|x| off, past bounds of 13 and 48.
foreach(shape "vector;2" "round;7")
  list(GET shape 0 name)
  list(GET shape 1 doublings)
  add_test(NAME gpu_run_bfloat16_stats_omit_wide_${name}
           COMMAND bash ${DR_RUN_IF_GPU} bash ${DR_BF16_WIDE} ${DR_EXPECT} $<TARGET_FILE:dreduce> ${doublings}
                   --device gpu --block 32)
  set_tests_properties(gpu_run_bfloat16_stats_omit_wide_${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300
                       ENVIRONMENT "${DR_TEST_ENV}")
endforeach()

# Two ranks on two GPUs (skipped with fewer): both combine levels, each staging path this MPI offers.
function(dr_gpu2_run name)
  add_test(NAME gpu2_run_${name}
           COMMAND bash ${DR_RUN_IF_GPU} --min 2 bash ${DR_EXPECT} 0 "verification: passed" ${MPIEXEC_EXECUTABLE}
                   -np 2 $<TARGET_FILE:dreduce> --device gpu ${ARGN})
  set_tests_properties(gpu2_run_${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300
                       ENVIRONMENT "${DR_TEST_ENV}")
endfunction()
dr_gpu2_run(strong -n 1Gi --type float32)
dr_gpu2_run(weak_flat -n 256Mi --type int64 --scaling weak --combine flat)
dr_gpu2_run(emulated_nodes -n 100Mi --type float64 --op max --ranks-per-node 1 --allreduce)
dr_gpu2_run(mapped -n 100Mi --staging mapped)
dr_gpu2_run(host -n 100Mi --staging host --kernel shuffle)
dr_gpu2_run(argmax -n 100Mi --type float32 --op argmax --ranks-per-node 1)
dr_gpu2_run(stats -n 100Mi --type int16 --op stats --allreduce)
dr_gpu2_run(histogram -n 100Mi --type float64 --op histogram --bins 65536 --ranks-per-node 1)
dr_gpu2_run(quantile -n 100Mi --type float32 --op quantile --q 0,0.25,0.5,0.75,1 --allreduce)
add_test(NAME gpu_run_json
         COMMAND bash ${DR_RUN_IF_GPU} bash ${DR_EXPECT} 0 "\"pass\": true" $<TARGET_FILE:dreduce> --device gpu
                 --format json)
set_tests_properties(gpu_run_json PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300 ENVIRONMENT "${DR_TEST_ENV}")

# Determinism (docs/reliability.md): multipass, every table row, 100 runs of one input on each launch shape (cluster,
# last-block-done, grid-stride wrap); then the program, every row, 100 repetitions in one job (dreduce exits 4 if one
# differs), at a size where each rank's grid is a cluster (20000) and one where it is last-block-done (1000003), on
# one GPU and on two ranks with a GPU each; and the check can fail (tests/mpi/flaky_combine.c).
add_test(NAME gpu_kernels_determinism COMMAND test_kernels --determinism --reps 100)
set(DR_DETERMINISM python3 ${CMAKE_CURRENT_SOURCE_DIR}/mpi/determinism.py --mpiexec ${MPIEXEC_EXECUTABLE}
    --dreduce $<TARGET_FILE:dreduce> --device gpu --sizes 20000,1000003 --reps 100 --jobs 0)
add_test(NAME gpu_determinism_np1 COMMAND bash ${DR_RUN_IF_GPU} ${DR_DETERMINISM} --np 1)
add_test(NAME gpu2_determinism_np2 COMMAND bash ${DR_RUN_IF_GPU} --min 2 ${DR_DETERMINISM} --np 2)
add_test(NAME gpu_determinism_can_fail
         COMMAND bash ${DR_RUN_IF_GPU} bash ${DR_EXPECT} --also "determinism: FAILED" --also "verification: passed"
                 4 "repetitions of the same reduction gave different results" ${MPIEXEC_EXECUTABLE}
                 -x DREDUCE_TEST_FLIP_CALL=2 -np 2 $<TARGET_FILE:dreduce_flaky_combine> --device gpu --staging host
                 --share-gpus -n 1000003 --type float32 --iters 3 --warmup 0 --combine flat --timeout 0)
set_tests_properties(gpu_kernels_determinism gpu_determinism_np1 gpu2_determinism_np2 gpu_determinism_can_fail
                     PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 900 ENVIRONMENT "${DR_TEST_ENV}")

# Bad input that needs a GPU (docs/reliability.md, "Bad input"). --staging device where MPI is not CUDA-aware
# (skipped where it is); more ranks on the node than GPUs (and the same with --share-gpus passes); an input larger
# than the device's memory.
add_test(NAME gpu_bad_staging_device
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/unless_cuda_aware.sh $<TARGET_FILE:dreduce>
                 bash ${DR_EXPECT} 2 "^dreduce: error: --staging device needs a CUDA-aware MPI, and this one is not .*use --staging host or auto"
                 $<TARGET_FILE:dreduce> --device gpu --staging device -n 1000 --iters 1)
add_test(NAME gpu_bad_ranks_over_gpus
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/over_gpus.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:dreduce>)
add_test(NAME gpu_bad_device_memory
         COMMAND bash ${DR_RUN_IF_GPU} bash ${DR_EXPECT}
                 3 "^dreduce: error: cannot allocate 343597383680 bytes [(]320[.]00 GiB[)] of device memory for the input shard"
                 $<TARGET_FILE:dreduce> --device gpu -n 40Gi --type float64 --iters 1)
set_tests_properties(gpu_bad_staging_device gpu_bad_ranks_over_gpus gpu_bad_device_memory
                     PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300 ENVIRONMENT "${DR_TEST_ENV}")
