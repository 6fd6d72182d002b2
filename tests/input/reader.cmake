# The --input reader on its own (src/input.c over src/npy.c), before it drives the program: test_input_read under
# mpiexec with 1..4 ranks on fresh files written by make_inputs.py (the fixture input_files), comparing every
# rank's bytes with the file and the merged host reference with the exact answers (see the program's opening
# comment). Included from tests/CMakeLists.txt; label mpi. src/input.c is compiled in here until a library holds it.
add_executable(test_input_read input/test_input_read.c ${PROJECT_SOURCE_DIR}/src/input.c
                               ${PROJECT_SOURCE_DIR}/src/input_hdf5.c)
target_link_libraries(test_input_read PRIVATE dreduce_host MPI::MPI_C)
if(DR_HDF5)
  target_link_libraries(test_input_read PRIVATE dr_hdf5)
endif()
target_compile_options(test_input_read PRIVATE ${DR_C_WARNINGS})

set(DR_INPUTS ${CMAKE_CURRENT_BINARY_DIR}/inputs)
add_test(NAME input_files COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/input/make_inputs.py ${DR_INPUTS})
set_tests_properties(input_files PROPERTIES LABELS mpi TIMEOUT 120 FIXTURES_SETUP dr_input_files)
foreach(np 1 2 3 4)
  add_test(NAME mpi_input_read_np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:test_input_read> ${MPIEXEC_POSTFLAGS} ${DR_INPUTS})
  set_tests_properties(mpi_input_read_np${np} PROPERTIES LABELS mpi TIMEOUT 300 FIXTURES_REQUIRED dr_input_files
                       ENVIRONMENT "${DR_TEST_ENV}")
endforeach()
