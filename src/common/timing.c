#define _POSIX_C_SOURCE 200809L
#include "timing.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double dr_median(const double *v, int n)
{
    double *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    int m = 0;
    if (!c) return NAN;
    for (int i = 0; i < n; ++i)
        if (!isnan(v[i])) c[m++] = v[i];
    double med = NAN;
    if (m > 0) {
        qsort(c, (size_t)m, sizeof *c, cmp_double);
        med = m % 2 ? c[m / 2] : 0.5 * (c[m / 2 - 1] + c[m / 2]);
    }
    free(c);
    return med;
}

double dr_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}
