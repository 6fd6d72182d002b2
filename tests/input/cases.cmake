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
  # COST: with ctest -j, the longest tests start first (a fresh build has no timings of its own), so they do not
  # end the run alone; about their seconds on CI's 2 cores.
  set_tests_properties(mpi_input_${suite} PROPERTIES LABELS "${labels}" TIMEOUT 900 FIXTURES_REQUIRED dr_input_files
                       ENVIRONMENT "${DR_TEST_ENV}" COST 60)
endforeach()

# The bad files again, four cases at once (--jobs 4): each concurrent mpiexec with a session root of its own, every
# rank's exit status and message still checked. `long`: the README's run only (the MPICH and sanitized CI stages have
# the one-at-a-time run above).
add_test(NAME mpi_input_errors_4_at_once
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/input/run_inputs.py --mpiexec ${MPIEXEC_EXECUTABLE}
                 --dreduce $<TARGET_FILE:dreduce> --inputs ${DR_INPUTS} --suite errors --jobs 4)
set_tests_properties(mpi_input_errors_4_at_once PROPERTIES LABELS "mpi;long" TIMEOUT 900
                     FIXTURES_REQUIRED dr_input_files ENVIRONMENT "${DR_TEST_ENV}")

# The same on the GPU backend (label gpu; skipped without a GPU): 1 and 2 ranks, bad files too. A rank per GPU where
# there are enough; on a one-GPU machine the two ranks share it (run_inputs.py passes --share-gpus), so the np2
# suite (GPU partials combined across ranks: the exact sums' words too) runs wherever a GPU is.
# DREDUCE_TEST_JOBS=N in the environment runs N cases of a suite at once (run_inputs.py --jobs). A case is one short
# mpiexec job whose time goes mostly to starting its ranks, so on an otherwise idle machine they overlap well (Open
# MPI, CPU backend, 2 cores, the suite alone: np2 64 -> 24 s, np3 92 -> 40 s with 4 at once); under ctest -j2 on 2
# cores, where two suites already share the cores, it gained nothing, so the default stays one at a time. Meant for
# machines with cores to spare, such as the GPU machine, where the gpu label's tests take turns on the GPU and
# gpu_input_np2 is the longest of them; not yet timed there.
foreach(suite np1 np2 errors)
  add_test(NAME gpu_input_${suite}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/run_if_gpu.sh
                   python3 ${CMAKE_CURRENT_SOURCE_DIR}/input/run_inputs.py --mpiexec ${MPIEXEC_EXECUTABLE}
                   --dreduce $<TARGET_FILE:dreduce> --inputs ${DR_INPUTS} --suite ${suite} --device gpu)
  set_tests_properties(gpu_input_${suite} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 900
                       FIXTURES_REQUIRED dr_input_files ENVIRONMENT "${DR_TEST_ENV}")
endforeach()

# HDF5 input (issue 18): files written by h5py with their answers from NumPy (make_h5.py), through the same runner
# and suites. Needs a build with parallel HDF5 and a Python that imports h5py and numpy (Debian's python3-h5py and
# python3-numpy serve /usr/bin/python3; a pyenv `python3` on PATH may not see them): the tests are left out, with a
# message, where either is missing.
if(DR_HDF5)
  set(DR_H5_PYTHON "" CACHE FILEPATH "A Python with h5py and numpy, for the HDF5 input tests (found when empty)")
  if(NOT DR_H5_PYTHON)
    foreach(candidate /usr/bin/python3 python3)
      find_program(dr_py_candidate NAMES ${candidate} NO_CACHE)
      if(dr_py_candidate)
        execute_process(COMMAND ${dr_py_candidate} -c "import h5py, numpy" RESULT_VARIABLE dr_py_rc
                        OUTPUT_QUIET ERROR_QUIET)
        if(dr_py_rc EQUAL 0)
          set(DR_H5_PYTHON ${dr_py_candidate} CACHE FILEPATH "A Python with h5py and numpy" FORCE)
          break()
        endif()
      endif()
      unset(dr_py_candidate)
    endforeach()
  endif()
  if(DR_H5_PYTHON)
    set(DR_H5_INPUTS ${CMAKE_CURRENT_BINARY_DIR}/inputs_h5)
    add_test(NAME input_h5_files COMMAND ${DR_H5_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/input/make_h5.py ${DR_H5_INPUTS})
    set_tests_properties(input_h5_files PROPERTIES LABELS mpi TIMEOUT 120 FIXTURES_SETUP dr_h5_files)
    foreach(suite np1 np2 np3 np4 errors)
      add_test(NAME mpi_h5_${suite}
               COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/input/run_inputs.py --mpiexec ${MPIEXEC_EXECUTABLE}
                       --dreduce $<TARGET_FILE:dreduce> --inputs ${DR_H5_INPUTS} --suite ${suite})
      set(labels mpi)
      if(NOT suite STREQUAL errors)
        set(labels mpi long)
      endif()
      set_tests_properties(mpi_h5_${suite} PROPERTIES LABELS "${labels}" TIMEOUT 900 FIXTURES_REQUIRED dr_h5_files
                           ENVIRONMENT "${DR_TEST_ENV}" COST 30) # COST: as mpi_input_*
    endforeach()
    foreach(suite np1 np2) # as gpu_input_*: the two ranks of np2 share a GPU where there is one
      add_test(NAME gpu_h5_${suite}
               COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/run_if_gpu.sh
                       python3 ${CMAKE_CURRENT_SOURCE_DIR}/input/run_inputs.py --mpiexec ${MPIEXEC_EXECUTABLE}
                       --dreduce $<TARGET_FILE:dreduce> --inputs ${DR_H5_INPUTS} --suite ${suite} --device gpu)
      set_tests_properties(gpu_h5_${suite} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 900
                           FIXTURES_REQUIRED dr_h5_files ENVIRONMENT "${DR_TEST_ENV}")
    endforeach()
  else()
    message(STATUS "dreduce: no Python with h5py and numpy (set DR_H5_PYTHON): the HDF5 input tests are left out")
  endif()
endif()
