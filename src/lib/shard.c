#include "shard.h"

int dr_shard(uint64_t n, dr_scaling_t scaling, int rank, int nranks, uint64_t *first, uint64_t *count)
{
    const uint64_t r = (uint64_t)rank, p = (uint64_t)nranks;
    if (scaling == DR_SCALING_WEAK) {
        uint64_t total;
        if (__builtin_mul_overflow(n, p, &total)) return -1;
        *first = r * n;
        *count = n;
        return 0;
    }
    const uint64_t q = n / p, rem = n % p;
    *first = r * q + (r < rem ? r : rem);
    *count = q + (r < rem ? 1 : 0);
    return 0;
}
