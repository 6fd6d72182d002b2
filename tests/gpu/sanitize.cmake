# Label sanitize (docs/reliability.md, "GPU side"): the kernels under each compute-sanitizer tool, driven by
# `test_kernels --boundary` (every kernel level x table row x block size at each size and start where the kernel
# changes behaviour), and one small run of the program under memcheck. Each test exits 77 (skipped) where there is no
# GPU or no compute-sanitizer (tests/gpu/sanitize.sh). Kept out of the gpu label: it takes minutes.
#   ctest --test-dir build -L sanitize --output-on-failure
set(DR_SANITIZE bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/sanitize.sh)
add_test(NAME sanitize_memcheck COMMAND ${DR_SANITIZE} --leaks memcheck $<TARGET_FILE:test_kernels> --boundary)
# racecheck: the 16-row subset (every type, op and accumulator; the other 62 rows would take about 20 minutes more).
add_test(NAME sanitize_racecheck COMMAND ${DR_SANITIZE} racecheck $<TARGET_FILE:test_kernels> --boundary --subset)
add_test(NAME sanitize_synccheck COMMAND ${DR_SANITIZE} synccheck $<TARGET_FILE:test_kernels> --boundary)
add_test(NAME sanitize_initcheck COMMAND ${DR_SANITIZE} initcheck $<TARGET_FILE:test_kernels> --boundary)
# The program: generation, multipass with a misaligned float16 input, the automatic staging, the report.
add_test(NAME sanitize_memcheck_dreduce
         COMMAND ${DR_SANITIZE} memcheck $<TARGET_FILE:dreduce> --device gpu -n 1000003 --type float16 --misalign 3
                 --iters 3 --warmup 1)
# The same with the partial copied to pinned host memory (--staging host; auto takes mapped memory or device buffers).
add_test(NAME sanitize_memcheck_dreduce_staged
         COMMAND ${DR_SANITIZE} memcheck $<TARGET_FILE:dreduce> --device gpu -n 1000003 --type float16 --misalign 3
                 --iters 3 --warmup 1 --staging host)
# The library: device, pinned and pageable arrays of every row, host arrays in 64 KiB chunks (the overlapped
# copy/reduce pipeline of src/lib/chunks.c, many chunks per call, slots reused).
add_test(NAME sanitize_memcheck_library
         COMMAND ${DR_SANITIZE} --leaks memcheck $<TARGET_FILE:test_library> --require-gpu)
set_tests_properties(sanitize_memcheck sanitize_racecheck sanitize_synccheck sanitize_initcheck
                     sanitize_memcheck_dreduce sanitize_memcheck_dreduce_staged sanitize_memcheck_library
                     PROPERTIES LABELS sanitize SKIP_RETURN_CODE 77 TIMEOUT 3600 ENVIRONMENT "${DR_TEST_ENV}")
# The checks can fail: a contract broken on purpose must be reported (a result buffer one byte short: memcheck; a
# workspace never zeroed, so multipass reads an uninitialised done-counter: initcheck).
add_test(NAME sanitize_memcheck_detects
         COMMAND ${DR_SANITIZE} --expect-errors memcheck $<TARGET_FILE:test_kernels> --plant short-result)
add_test(NAME sanitize_initcheck_detects
         COMMAND ${DR_SANITIZE} --expect-errors initcheck $<TARGET_FILE:test_kernels> --plant unzeroed-work)
set_tests_properties(sanitize_memcheck_detects sanitize_initcheck_detects
                     PROPERTIES LABELS sanitize SKIP_RETURN_CODE 77 TIMEOUT 300)
# test_library checks that repeated calls allocate nothing by the GPU's free memory: alone on the machine.
set_tests_properties(sanitize_memcheck_library PROPERTIES RUN_SERIAL ON)
