# The --input reader on its own (src/lib/input.c over src/lib/npy.c), before it drives the program: test_input_read under
# mpiexec with 1..4 ranks on fresh files written by make_inputs.py (the fixture input_files), comparing every
# rank's bytes with the file and the merged host reference with the exact answers (see the program's opening
# comment). Included from tests/CMakeLists.txt; label mpi. src/lib/input.c is compiled in here until a library holds it.
add_executable(test_input_read input/test_input_read.c ${PROJECT_SOURCE_DIR}/src/lib/input.c
                               ${PROJECT_SOURCE_DIR}/src/lib/input_hdf5.c)
target_link_libraries(test_input_read PRIVATE dreduce_host MPI::MPI_C)
if(DR_HDF5)
  target_link_libraries(test_input_read PRIVATE dr_hdf5)
endif()
target_compile_options(test_input_read PRIVATE ${DR_C_WARNINGS})
target_compile_definitions(test_input_read PRIVATE DR_TEST_HOOKS) # src/lib/input.c honours DREDUCE_IO_MAX_BYTES here

set(DR_INPUTS ${CMAKE_CURRENT_BINARY_DIR}/inputs)
# make_inputs.py needs only Python's standard library, but writes its numpy_* files (stats, argmin, argmax: written by
# numpy.save, answered by NumPy) only where NumPy imports: a Python with NumPy runs it where there is one (Debian's
# python3-numpy serves /usr/bin/python3; a pyenv `python3` on PATH may not see it).
set(DR_NUMPY_PYTHON "" CACHE FILEPATH "A Python with numpy, for the --input files NumPy writes (found when empty)")
if(NOT DR_NUMPY_PYTHON)
  foreach(candidate /usr/bin/python3 python3)
    find_program(dr_np_candidate NAMES ${candidate} NO_CACHE)
    if(dr_np_candidate)
      execute_process(COMMAND ${dr_np_candidate} -c "import numpy" RESULT_VARIABLE dr_np_rc OUTPUT_QUIET ERROR_QUIET)
      if(dr_np_rc EQUAL 0)
        set(DR_NUMPY_PYTHON ${dr_np_candidate} CACHE FILEPATH "A Python with numpy" FORCE)
        break()
      endif()
    endif()
    unset(dr_np_candidate)
  endforeach()
endif()
if(DR_NUMPY_PYTHON)
  set(dr_inputs_python ${DR_NUMPY_PYTHON})
else()
  set(dr_inputs_python python3)
  message(STATUS "dreduce: no Python with numpy (set DR_NUMPY_PYTHON): the NumPy-written --input files are left out")
endif()
add_test(NAME input_files COMMAND ${dr_inputs_python} ${CMAKE_CURRENT_SOURCE_DIR}/input/make_inputs.py ${DR_INPUTS})
set_tests_properties(input_files PROPERTIES LABELS mpi TIMEOUT 120 FIXTURES_SETUP dr_input_files)
# MPICH's ranks poll while they wait, so with more ranks than cores each collective read waits for a rank that is
# not running: np 3 on CI's 2 cores takes about 40 s under MPICH (1924 reads) and 0.6 s under Open MPI, whose idle
# ranks yield. Such runs are also labelled `long`, which CI's MPICH stage leaves out; mpi_input_read_large_count_np3
# still reads with 3 ranks there, through the same reader and MPICH's large-count calls.
cmake_host_system_information(RESULT dr_cores QUERY NUMBER_OF_LOGICAL_CORES)
foreach(np 1 2 3 4)
  add_test(NAME mpi_input_read_np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:test_input_read> ${MPIEXEC_POSTFLAGS} ${DR_INPUTS})
  set(labels mpi)
  if(DR_MPI_FLAVOR STREQUAL mpich AND np GREATER dr_cores)
    set(labels mpi long)
  endif()
  set_tests_properties(mpi_input_read_np${np} PROPERTIES LABELS "${labels}" TIMEOUT 300
                       FIXTURES_REQUIRED dr_input_files ENVIRONMENT "${DR_TEST_ENV}")
endforeach()

# The same reads with the per-call limit lowered to 64 KiB (DREDUCE_IO_MAX_BYTES, honoured in this test build only):
# every read of more than 64 KiB takes several collective calls, the MPI 4 large-count ones (MPI_File_read_at_all_c)
# on an MPI-4 library such as MPICH 4, MPI_File_read_at_all on Open MPI 4.1 (MPI 3.1); the program counts the calls
# of each kind (it wraps both) and checks that every read took the calls the limit implies, of the kind MPI_VERSION
# implies; the answers are the same exact ones on both MPIs.
# FindMPI's version says which kind to expect, independently of the program's mpi.h.
if(MPI_C_VERSION VERSION_GREATER_EQUAL 4)
  set(DR_READ_CALL MPI_File_read_at_all_c)
else()
  set(DR_READ_CALL MPI_File_read_at_all)
endif()
add_test(NAME mpi_input_read_large_count_np3
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3 ${MPIEXEC_PREFLAGS}
                 $<TARGET_FILE:test_input_read> ${MPIEXEC_POSTFLAGS} ${DR_INPUTS} ${DR_READ_CALL})
set_tests_properties(mpi_input_read_large_count_np3 PROPERTIES LABELS mpi TIMEOUT 300 FIXTURES_REQUIRED dr_input_files
                     ENVIRONMENT "${DR_TEST_ENV};DREDUCE_IO_MAX_BYTES=65536")
