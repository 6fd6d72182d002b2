/* A tiny assertion helper for the unit tests: CHECK counts every check and prints one line per failure (the
 * condition, the source line and a printf-style message naming the input, the expected and the actual value);
 * check_summary prints the summary line and gives main's return value. Seeds come from the clock, printed, and
 * are overridable with the environment variable DREDUCE_TEST_SEED. */
#ifndef DREDUCE_TEST_CHECK_H
#define DREDUCE_TEST_CHECK_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int check_failures, check_count;

#define CHECK(cond, ...)                                                                                       \
    do {                                                                                                       \
        check_count++;                                                                                         \
        if (!(cond)) {                                                                                         \
            check_failures++;                                                                                  \
            if (check_failures <= 200) {                                                                       \
                printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                        \
                printf(__VA_ARGS__);                                                                           \
                printf("\n");                                                                                  \
                fflush(stdout);                                                                                \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)

/* The test's random seed: DREDUCE_TEST_SEED if set (decimal or 0x hex), else from the clock. Printed. */
static inline uint64_t check_seed(const char *test)
{
    const char *env = getenv("DREDUCE_TEST_SEED");
    uint64_t seed;
    if (env && *env) {
        seed = strtoull(env, NULL, 0);
    } else {
        struct timespec ts;
        timespec_get(&ts, TIME_UTC);
        seed = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec;
    }
    printf("%s: seed %" PRIu64 " (rerun with DREDUCE_TEST_SEED=%" PRIu64 ")\n", test, seed, seed);
    return seed;
}

/* xorshift64* for test inputs (independent of the code under test). */
static inline uint64_t check_rand(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

static inline int check_summary(const char *test)
{
    if (check_failures > 200) printf("(%d more failures not shown)\n", check_failures - 200);
    printf("%s: %d checks, %d failed: %s\n", test, check_count, check_failures, check_failures ? "FAIL" : "PASS");
    return check_failures ? 1 : 0;
}

#endif
