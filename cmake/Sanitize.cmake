# Reliability builds of the host code (issue 6; what runs and what it found: docs/reliability.md). Included from the
# top-level CMakeLists.txt before any target is defined, so the flags reach every C target (libraries, the program,
# the tests) through the directory's compile and link options.
#
#   -DDREDUCE_SANITIZE=ON  AddressSanitizer (with LeakSanitizer) and UndefinedBehaviorSanitizer on every C target;
#                          any report aborts the process (-fno-sanitize-recover=all). The CUDA sources are compiled
#                          as before: nvcc has no ASan, and the kernels' host stubs need none. Executables linked by
#                          the CUDA toolchain (dreduce-bench) get the link flags too, so they still link. Use the
#                          default compiler (gcc): CUDA executables are linked by nvcc's host compiler (g++), whose
#                          sanitizer runtime must match the one the C objects were built for.
#   -DDREDUCE_FUZZ=ON      the libFuzzer targets of tests/fuzz (CMAKE_C_COMPILER=clang). Implies the sanitizers; the
#                          C code is also built with -fsanitize=fuzzer-no-link, so the parsers under test carry the
#                          coverage instrumentation libFuzzer steers by. Build only the fuzz targets in such a tree
#                          (`cmake --build B --target dr_fuzz_targets`): nothing else is meant to run from it.
if(NOT DREDUCE_SANITIZE AND NOT DREDUCE_FUZZ)
  return()
endif()

set(DR_SANITIZE_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
set(dr_sanitize_compile ${DR_SANITIZE_FLAGS})
if(DREDUCE_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "DREDUCE_FUZZ needs clang (libFuzzer): configure with -DCMAKE_C_COMPILER=clang "
                        "(Debian: clang and libclang-rt-<version>-dev)")
  endif()
  list(APPEND dr_sanitize_compile -fsanitize=fuzzer-no-link)
endif()

# -g even in Release trees: sanitizer reports need file:line.
add_compile_options("$<$<COMPILE_LANGUAGE:C>:${dr_sanitize_compile};-g>")
add_link_options(${DR_SANITIZE_FLAGS})

# Every executable of a sanitized tree gets (each file says why):
#   tests/sanitize/keep_modules.c         a dlclose() that keeps modules loaded (Open MPI's components, hwloc's
#                                         plugins), so that LeakSanitizer still sees their data and can name frames;
#   tests/sanitize/mpi_init_unchecked.c   MPI_Init/MPI_Init_thread with leak checking off (Open MPI keeps what it
#                                         allocates there until exit).
if(DREDUCE_SANITIZE)
  add_library(dr_sanitize_runtime OBJECT ${PROJECT_SOURCE_DIR}/tests/sanitize/keep_modules.c
                                         ${PROJECT_SOURCE_DIR}/tests/sanitize/mpi_init_unchecked.c)
  # Executables only: in a library the objects would be linked twice (libdreduce.so holds its archives whole).
  link_libraries("$<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:dr_sanitize_runtime>")
  add_link_options(LINKER:--export-dynamic-symbol=dlclose)
endif()
message(STATUS "dreduce: host C code built with ${dr_sanitize_compile}")
