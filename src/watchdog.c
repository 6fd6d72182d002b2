#define _POSIX_C_SOURCE 200809L
#include "watchdog.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "status.h"

static double timeout_s;
static _Atomic(const char *) phase;  /* NULL: not in a collective */
static _Atomic double phase_deadline; /* CLOCK_MONOTONIC seconds */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *watch(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec nap = {0, 100 * 1000 * 1000};
        nanosleep(&nap, NULL);
        const char *what = atomic_load(&phase);
        if (what && now_s() > atomic_load(&phase_deadline) && atomic_load(&phase) == what) {
            dr_error("timed out after %g s waiting in the %s level: another rank died or is stuck there (raise "
                     "--timeout if it is only slow); ending the job",
                     timeout_s, what);
            _exit(DR_ERR_RUNTIME); /* mpirun / srun then end the other ranks */
        }
    }
    return NULL;
}

int dr_watchdog_start(double seconds)
{
    timeout_s = seconds;
    if (seconds <= 0) return 0;
    pthread_t t;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return -1;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, watch, NULL);
    pthread_attr_destroy(&attr);
    return rc == 0 ? 0 : -1;
}

void dr_watchdog_enter(const char *what)
{
    if (timeout_s <= 0) return;
    atomic_store(&phase_deadline, now_s() + timeout_s);
    atomic_store(&phase, what);
}

void dr_watchdog_leave(void) { atomic_store(&phase, (const char *)NULL); }
