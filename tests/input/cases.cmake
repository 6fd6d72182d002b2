# End-to-end --input runs of the program (tests/input/run_inputs.py; list the cases with
# `python3 tests/input/run_inputs.py --list`): mpiexec, 1..4 ranks, CPU backend, each result compared exactly with
# make_inputs.py's answer; bad files exit 2 on every rank with one message naming the file. Include from
# tests/CMakeLists.txt after input/reader.cmake (it uses that file's fixture dr_input_files and DR_INPUTS).
foreach(suite np1 np2 np3 np4 errors)
  add_test(NAME mpi_input_${suite}
           COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/input/run_inputs.py --mpiexec ${MPIEXEC_EXECUTABLE}
                   --dreduce $<TARGET_FILE:dreduce> --inputs ${DR_INPUTS} --suite ${suite})
  # `long`: the sanitized CI stage leaves these out (hundreds of launches at ASan speed); test_input_read and the
  # errors suite run there and cover the same reader and parser code.
  set(labels mpi)
  if(NOT suite STREQUAL errors)
    set(labels mpi long)
  endif()
  set_tests_properties(mpi_input_${suite} PROPERTIES LABELS "${labels}" TIMEOUT 900 FIXTURES_REQUIRED dr_input_files
                       ENVIRONMENT "${DR_TEST_ENV}")
endforeach()

# The same on the GPU backend (label gpu; skipped without a GPU): one rank per GPU, 1 and 2 GPUs; bad files too.
foreach(suite np1 np2 errors)
  set(gpus 1)
  if(suite STREQUAL np2)
    set(gpus 2)
  endif()
  add_test(NAME gpu_input_${suite}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/run_if_gpu.sh --min ${gpus}
                   python3 ${CMAKE_CURRENT_SOURCE_DIR}/input/run_inputs.py --mpiexec ${MPIEXEC_EXECUTABLE}
                   --dreduce $<TARGET_FILE:dreduce> --inputs ${DR_INPUTS} --suite ${suite} --device gpu)
  set_tests_properties(gpu_input_${suite} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 900
                       FIXTURES_REQUIRED dr_input_files ENVIRONMENT "${DR_TEST_ENV}")
endforeach()
