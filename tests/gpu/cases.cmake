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
dr_gpu_run(host_staging --staging host)
dr_gpu_run(mapped_staging --staging mapped)

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
add_test(NAME gpu_run_json
         COMMAND bash ${DR_RUN_IF_GPU} bash ${DR_EXPECT} 0 "\"pass\": true" $<TARGET_FILE:dreduce> --device gpu
                 --format json)
set_tests_properties(gpu_run_json PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300 ENVIRONMENT "${DR_TEST_ENV}")
