/* The CPU backend's statistics loops over a block of float64 or float32 values (cpu_backend.c, "Statistics"), one
 * version per x86-64 vector width, chosen once at run time by what the CPU supports.
 *
 * Every version computes the same DR_CPU_LANES (8) lanes in the same order (lane j takes v[j], v[j + 8], ...; the
 * k % 8 tail elements go to lanes 0, 1, ...; then the tree j + 4, j + 2, j + 1), so the bits of a result never depend
 * on the machine; only the speed does. The baseline's stats are compute-bound where a core reads fast (float32 stats
 * 13 GB/s against a 28 GB/s read loop on 2 cores of an AVX-512 EPYC; 26 GB/s with AVX), which is why the wider
 * version exists. The AVX version also widens float16, and rounds to it, by F16C, and runs where the CPU has both;
 * and it takes a histogram's estimate eight floats or four doubles a step (hist_fast_f32, hist_fast_f64). */
#ifndef DREDUCE_CPU_LANES_H
#define DREDUCE_CPU_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "distrib.h"

typedef struct {
    const char *name; /* "portable", "sse2", "avx" */
    /* The block's sum, min and max of v[0..k), k >= 1: *sum exact in lanes of float64 adds; *lo and *hi by plain
     * compares (x < lo, x > hi), which are the rules only where the block holds no NaN and neither extreme is a
     * zero (the caller checks: a NaN sum, or a zero extreme, and takes those from the rules). */
    void (*sum_min_max_f64)(const double *v, size_t k, double *sum, double *lo, double *hi);
    void (*sum_min_max_f32)(const float *v, size_t k, double *sum, double *lo, double *hi); /* widened exactly */
    /* The block's sum of (v[i] - mean)^2 in the same lanes and tree. */
    double (*m2_f64)(const double *v, size_t k, double mean);
    double (*m2_f32)(const float *v, size_t k, double mean);
    /* m2 of one block u[0..ku) and the sum, min and max of the next, v[0..k), in one loop: two independent chains of
     * adds side by side (a block's m2 waits for its mean, which waits for its sum, so one block at a time leaves the
     * core idle between them). The bits of m2 and sum_min_max called apart. */
    double (*m2_smm_f64)(const double *u, size_t ku, double mean, const double *v, size_t k, double *sum, double *lo,
                         double *hi);
    double (*m2_smm_f32)(const float *u, size_t ku, double mean, const float *v, size_t k, double *sum, double *lo,
                         double *hi);
    /* float16 bits p[0..m) widened as dr_f16_to_f32 widens each (exact; a NaN the canonical one), to float and to
     * double: the 16-bit floats' blocks go through these before the loops above. */
    void (*widen_f16_f32)(const uint16_t *p, size_t m, float *out);
    void (*widen_f16_f64)(const uint16_t *p, size_t m, double *out);
    /* v[0..m) each rounded to float16's grid as dr_round_f16 rounds it (to nearest, ties to even; past 65504 to
     * infinity), in place: a float16 histogram's estimate in NumPy's own arithmetic (cpu_count.c). */
    void (*round_f16)(float *v, size_t m);
    /* The fast estimate of a histogram's bins (dr_hist_bin_f16/f32's first step) for v[0..m), h's plan in float:
     * slot[i] the bin where the estimate's fraction lies farther than h->margin from a whole number, -1 where it does
     * not (the edges decide: cpu_count.c), bins, bins + 1 and bins + 2 for an element below, above and NaN. */
    void (*hist_fast_f32)(const dr_hist_plan_t *h, const float *v, size_t m, int32_t *slot);
    /* The same for the double bin type (dr_hist_bin_f64: float64 and the integers, widened). */
    void (*hist_fast_f64)(const dr_hist_plan_t *h, const double *v, size_t m, int32_t *slot);
} dr_cpu_lanes_t;

/* The widest version this CPU runs (chosen on the first call), or the one dr_cpu_lanes_use chose. */
const dr_cpu_lanes_t *dr_cpu_lanes(void);

/* Versions compiled in, narrowest first (index 0 is the portable C); NULL past the last. Some may not run here:
 * dr_cpu_lanes_runs says which. */
const dr_cpu_lanes_t *dr_cpu_lanes_at(int i);
int dr_cpu_lanes_runs(const dr_cpu_lanes_t *lanes);

/* Make `lanes` the one dr_cpu_lanes returns (tests and benchmarks compare the versions; not while a reduction runs).
 * Returns 0, or -1 (nothing changed) where this CPU cannot run it. */
int dr_cpu_lanes_use(const dr_cpu_lanes_t *lanes);

#endif
