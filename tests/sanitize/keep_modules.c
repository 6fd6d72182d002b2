/* Linked into every executable of a DREDUCE_SANITIZE=ON build (cmake/Sanitize.cmake), nowhere else.
 *
 * dlclose() that keeps the module loaded. Open MPI unloads its MCA components and hwloc its plugins before the
 * process exits; LeakSanitizer then (1) no longer sees the pointers those modules' static data held, and reports the
 * blocks they pointed to as leaks, and (2) cannot name the module of any stack frame that was in one, so a
 * suppression cannot be matched to it, and every such frame makes the sanitizer re-read /proc/self/maps (about half
 * of a sanitized MPI run's time). Defined in the executable, this dlclose takes precedence over libc's (and the
 * sanitizer's interceptor) for every library in the process; the link exports it (--export-dynamic-symbol). */
#include <dlfcn.h>

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
