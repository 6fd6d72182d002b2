# Sanitizer settings for running a DREDUCE_SANITIZE=ON build's tests: source it, then run ctest.
#   . tests/sanitize/env.sh && ctest --test-dir build-asan -L 'unit|cli|mpi'
# Every report ends the process with a non-zero status (halt_on_error; the build also has
# -fno-sanitize-recover=all), so a test with a report fails even where its script checks only the exit code.
# Leak checks stay on; Open MPI's own leaks are kept out as tests/sanitize/lsan.supp says. protect_shadow_gap=0: the
# CUDA runtime maps memory in the range ASan protects by default. print_suppressions=0: the "Suppressions used" table
# would add lines to stderr, which the cli tests count. Settings already in the environment are kept and win (later
# flags override earlier ones).
# intercept_tls_get_addr=0: the sanitizer runtime of GCC <= 13 (Debian 12: GCC 12) takes a dynamic-TLS block whose
# address is 16 bytes into a page for a glibc-2.19 block with a header, reads the "header" before it, and at exit
# LeakSanitizer's tracer scans that bogus range and dies ("Tracer caught signal 11 ... LeakSanitizer has encountered
# a fatal error", exit 1; google/sanitizers#1322). Open MPI's dlopened components allocate such blocks, so whether a
# run hits it depends on heap layout: in CI the same two cli tests died this way, every attempt. Off, dynamic TLS is
# not scanned for pointers; our code has no thread-local pointers to heap memory.
_dr_sanitize_dir=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)
export ASAN_OPTIONS="halt_on_error=1:intercept_tls_get_addr=0:abort_on_error=0:detect_leaks=1:protect_shadow_gap=0:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$_dr_sanitize_dir/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# Open MPI: open only the components a one-host CPU run uses (shared memory and self; no network transports, no RMA
# besides sm), as in an unsanitized run on one host, where the others are probed and then not selected. Probing them
# is most of MPI_Init's work, and under ASan (every allocation's stack unwound) most of a test's time.
export OMPI_MCA_btl="${OMPI_MCA_btl:-self,vader}" OMPI_MCA_pml="${OMPI_MCA_pml:-ob1}" OMPI_MCA_osc="${OMPI_MCA_osc:-sm}"
unset _dr_sanitize_dir
