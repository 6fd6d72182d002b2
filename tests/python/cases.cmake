# The Python package (python/, issue 36; docs/python.md): the scripts of tests/python under mpiexec through
# run_mpi.py (a time limit: a hang fails; the package from python/, this build's libdreduce as DREDUCE_LIBRARY), one
# mpiexec per rank count running its whole matrix. Label python, not mpi: CI's MPICH stage reruns the mpi label
# against MPICH, which Debian's mpi4py is not built for (run_mpi.py skips such a pairing, saying so). Include from
# tests/CMakeLists.txt before the loop that gives gpu tests their RESOURCE_LOCK.
#
# They need a Python with numpy and mpi4py (Debian's python3-numpy and python3-mpi4py serve /usr/bin/python3; a
# pyenv python3 on PATH may lack them): DR_PY_PYTHON, or found here; the install test also needs its pip
# (python3-pip). The GPU tests want one that also imports torch or CuPy (DR_PY_GPU_PYTHON, found here: python3 on
# PATH first, the GPU machine's), else they use DR_PY_PYTHON and skip. Without any such Python every python test
# is skipped, saying why.
set(DR_PY_PYTHON "" CACHE FILEPATH "A Python with numpy and mpi4py, for the python tests (found when empty)")
set(DR_PY_GPU_PYTHON "" CACHE FILEPATH "A Python with numpy, mpi4py and torch or CuPy, for the GPU python tests")
# stats, argmin, argmax (issue 37) in the matrices; OFF leaves them out (--without-new-ops)
option(DR_PY_NEW_OPS "python tests: include stats, argmin and argmax" ON)

function(dr_py_find var code)
  foreach(candidate ${ARGN})
    find_program(dr_py_candidate NAMES ${candidate} NO_CACHE)
    if(dr_py_candidate)
      execute_process(COMMAND ${dr_py_candidate} -c "${code}" RESULT_VARIABLE dr_py_rc OUTPUT_QUIET ERROR_QUIET
                      TIMEOUT 120)
      if(dr_py_rc EQUAL 0)
        set(${var} ${dr_py_candidate} CACHE FILEPATH "A Python for the python tests" FORCE)
        return()
      endif()
    endif()
    unset(dr_py_candidate)
  endforeach()
endfunction()
if(NOT DR_PY_PYTHON)
  dr_py_find(DR_PY_PYTHON "import numpy, mpi4py" /usr/bin/python3 python3)
endif()
if(NOT DR_PY_GPU_PYTHON)
  set(dr_py_gpu_probe "import numpy, mpi4py, importlib.util as u, sys")
  string(APPEND dr_py_gpu_probe "; sys.exit(not (u.find_spec('torch') or u.find_spec('cupy')))")
  dr_py_find(DR_PY_GPU_PYTHON "${dr_py_gpu_probe}" python3 /usr/bin/python3)
endif()

set(DR_PY ${CMAKE_CURRENT_SOURCE_DIR}/python)
set(dr_py_args)
if(NOT DR_PY_NEW_OPS)
  set(dr_py_args --without-new-ops)
endif()
if(DR_PY_PYTHON)
  set(dr_py_run ${DR_PY_PYTHON} ${DR_PY}/run_mpi.py --mpiexec ${MPIEXEC_EXECUTABLE} --library $<TARGET_FILE:libdreduce>)
  # Every dtype x op against NumPy, the errors (one rank or all; ranks disagreeing), inputs, context, timings.
  foreach(np 1 2 3 4)
    add_test(NAME python_cpu_np${np} COMMAND ${dr_py_run} --np ${np} --python ${DR_PY_PYTHON} --timeout 240
                                             ${DR_PY}/test_cpu.py ${dr_py_args})
    set_tests_properties(python_cpu_np${np} PROPERTIES LABELS python TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT "${DR_TEST_ENV}")
  endforeach()
  # pip install of python/ into a temporary --target, the demo on 2 ranks from there, the library lookup.
  add_test(NAME python_install COMMAND ${DR_PY_PYTHON} ${DR_PY}/test_install.py --mpiexec ${MPIEXEC_EXECUTABLE}
                                       --python ${DR_PY_PYTHON} --library $<TARGET_FILE:libdreduce>)
  set_tests_properties(python_install PROPERTIES LABELS python TIMEOUT 300 SKIP_RETURN_CODE 77
                       ENVIRONMENT "${DR_TEST_ENV}")
  # GPU (labels python and gpu): CuPy and torch device arrays, every dtype x op, streams; 1 rank, and 2 ranks that
  # share a GPU where there is only one. Skipped without a GPU (run_if_gpu.sh) or without CuPy and torch.
  if(NOT DR_PY_GPU_PYTHON)
    set(DR_PY_GPU_PYTHON ${DR_PY_PYTHON})
  endif()
  foreach(np 1 2)
    add_test(NAME gpu_python_np${np}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/run_if_gpu.sh ${DR_PY_GPU_PYTHON} ${DR_PY}/run_mpi.py
                     --mpiexec ${MPIEXEC_EXECUTABLE} --library $<TARGET_FILE:libdreduce> --np ${np}
                     --python ${DR_PY_GPU_PYTHON} --timeout 500 ${DR_PY}/test_gpu.py ${dr_py_args})
    set_tests_properties(gpu_python_np${np} PROPERTIES LABELS "python;gpu" TIMEOUT 600 SKIP_RETURN_CODE 77
                         ENVIRONMENT "${DR_TEST_ENV}")
  endforeach()
else()
  message(STATUS "dreduce: no Python with numpy and mpi4py (set DR_PY_PYTHON): the python tests are skipped")
  set(dr_py_why "no Python with numpy and mpi4py (install python3-numpy python3-mpi4py, or set DR_PY_PYTHON)")
  add_test(NAME python_skipped COMMAND sh -c "echo '${dr_py_why}: python tests skipped'; exit 77")
  set_tests_properties(python_skipped PROPERTIES LABELS python SKIP_RETURN_CODE 77)
endif()

# Histograms, quantiles and medians (include/dreduce.h, "Distributions"; docs/python.md): test_distrib.py on the CPU
# backend at 1-4 ranks, every dtype x bins x range x data set against NumPy 2's np.histogram and np.quantile
# exactly, their errors on every rank and on one; test_distrib_gpu.py with CuPy and torch device arrays on a GPU
# (labels python and gpu; skipped without a GPU, or without CuPy and torch).
if(DR_PY_PYTHON)
  foreach(np 1 2 3 4)
    add_test(NAME python_distrib_np${np} COMMAND ${dr_py_run} --np ${np} --python ${DR_PY_PYTHON} --timeout 240
                                                 ${DR_PY}/test_distrib.py)
    set_tests_properties(python_distrib_np${np} PROPERTIES LABELS python TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT "${DR_TEST_ENV}")
  endforeach()
  # The NaN policy (nan="omit": NumPy's nan* functions; issue "the nan* family across ranks"): test_nan.py on the
  # CPU backend at 1-4 ranks, every op x float dtype x NaN data set against NumPy's nan* on the whole array, the NaN
  # counts, NumPy's warnings and errors for NaN only, a bad or disagreeing policy on every rank and on one.
  foreach(np 1 2 3 4)
    add_test(NAME python_nan_np${np} COMMAND ${dr_py_run} --np ${np} --python ${DR_PY_PYTHON} --timeout 240
                                             ${DR_PY}/test_nan.py)
    set_tests_properties(python_nan_np${np} PROPERTIES LABELS python TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT "${DR_TEST_ENV}")
  endforeach()
  foreach(np 1 2)
    add_test(NAME gpu_python_distrib_np${np}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/run_if_gpu.sh ${DR_PY_GPU_PYTHON} ${DR_PY}/run_mpi.py
                     --mpiexec ${MPIEXEC_EXECUTABLE} --library $<TARGET_FILE:libdreduce> --np ${np}
                     --python ${DR_PY_GPU_PYTHON} --timeout 500 ${DR_PY}/test_distrib_gpu.py)
    set_tests_properties(gpu_python_distrib_np${np} PROPERTIES LABELS "python;gpu" TIMEOUT 600 SKIP_RETURN_CODE 77
                         ENVIRONMENT "${DR_TEST_ENV}")
  endforeach()
endif()
