/* Unit test of src/lib/shard.c: strong shards are contiguous, disjoint, cover [0, n) and differ in size by at most one
 * (the first n % P ranks get the extra element); weak shards are n elements at rank * n; a weak global array past
 * 2^64 - 1 elements is refused. */
#include "check.h"
#include "shard.h"

static void check_strong(uint64_t n, int p)
{
    uint64_t expect_first = 0, min_count = UINT64_MAX, max_count = 0;
    const uint64_t q = n / (uint64_t)p, rem = n % (uint64_t)p;
    int bad = 0;
    for (int r = 0; r < p && bad < 3; ++r) {
        uint64_t first = 0xdeadbeef, count = 0xdeadbeef;
        int rc = dr_shard(n, DR_SCALING_STRONG, r, p, &first, &count);
        const int ok = rc == 0 && first == expect_first && count <= n - first &&
                       count == q + ((uint64_t)r < rem ? 1 : 0);
        CHECK(ok, "dr_shard(n=%" PRIu64 ", strong, rank %d of %d): got rc=%d first=%" PRIu64 " count=%" PRIu64
              ", expected first=%" PRIu64 " count=%" PRIu64, n, r, p, rc, first, count, expect_first,
              q + ((uint64_t)r < rem ? 1 : 0));
        if (!ok) ++bad;
        expect_first = first + count; /* the next shard starts where this one ends: contiguous and disjoint */
        if (count < min_count) min_count = count;
        if (count > max_count) max_count = count;
    }
    if (bad) return;
    CHECK(expect_first == n, "dr_shard(n=%" PRIu64 ", strong, %d ranks): shards cover [0, %" PRIu64 "), not [0, n)", n,
          p, expect_first);
    CHECK(max_count - min_count <= 1, "dr_shard(n=%" PRIu64 ", strong, %d ranks): sizes range %" PRIu64 "..%" PRIu64, n,
          p, min_count, max_count);
}

static void check_weak(uint64_t n, int p)
{
    for (int r = 0; r < p; ++r) {
        uint64_t first = 0xdeadbeef, count = 0xdeadbeef;
        int rc = dr_shard(n, DR_SCALING_WEAK, r, p, &first, &count);
        CHECK(rc == 0 && first == (uint64_t)r * n && count == n, "dr_shard(n=%" PRIu64 ", weak, rank %d of %d): got "
              "rc=%d first=%" PRIu64 " count=%" PRIu64 ", expected first=%" PRIu64 " count=%" PRIu64, n, r, p, rc,
              first, count, (uint64_t)r * n, n);
        if (rc != 0 || first != (uint64_t)r * n) return;
    }
}

static void check_weak_overflow(uint64_t n, int p, int want_rc)
{
    for (int r = 0; r < p; r += (p > 8 ? p / 4 : 1)) {
        uint64_t first = 0, count = 0;
        int rc = dr_shard(n, DR_SCALING_WEAK, r, p, &first, &count);
        CHECK(rc == want_rc, "dr_shard(n=%" PRIu64 ", weak, rank %d of %d): n * P %s 2^64 - 1: expected rc=%d, got %d "
              "(first=%" PRIu64 " count=%" PRIu64 ")", n, r, p, want_rc ? "passes" : "fits in", want_rc, rc, first,
              count);
    }
}

int main(void)
{
    uint64_t rng = check_seed("test_shard");
    static const uint64_t ns[] = {0, 1, 2, 5, 1000, (1ull << 40) + 3, UINT64_MAX, UINT64_MAX - 1, 1ull << 63};
    static const int ps[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 64, 1000};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; ++i)
        for (size_t j = 0; j < sizeof ps / sizeof ps[0]; ++j) {
            check_strong(ns[i], ps[j]);
            /* weak: only where n * P fits */
            uint64_t total;
            if (!__builtin_mul_overflow(ns[i], (uint64_t)ps[j], &total)) check_weak(ns[i], ps[j]);
        }
    /* Random n and P. */
    for (int rep = 0; rep < 300; ++rep) {
        const uint64_t n = check_rand(&rng) >> (check_rand(&rng) % 64);
        const int p = 1 + (int)(check_rand(&rng) % 4096);
        check_strong(n, p);
        uint64_t total;
        if (!__builtin_mul_overflow(n, (uint64_t)p, &total)) check_weak(n, p);
        else check_weak_overflow(n, p, -1);
    }
    /* Weak overflow: n * P past 2^64 - 1 is refused; exactly up to it is fine. */
    check_weak_overflow(1ull << 63, 3, -1);
    check_weak_overflow(1ull << 63, 2, -1);          /* 2^64 elements: one too many */
    check_weak_overflow(UINT64_MAX, 2, -1);
    check_weak_overflow((1ull << 62) + 1, 4, -1);
    check_weak_overflow(1ull << 40, 1 << 24, -1);
    check_weak_overflow((1ull << 63) - 1, 2, 0);     /* 2^64 - 2 elements */
    check_weak_overflow(UINT64_MAX / 3, 3, 0);       /* exactly 2^64 - 1 */
    check_weak_overflow(UINT64_MAX, 1, 0);
    check_weak_overflow(0, 1000000, 0);
    /* The last weak shard of a maximal array ends exactly at 2^64 - 1. */
    {
        uint64_t first, count;
        int rc = dr_shard(UINT64_MAX / 3, DR_SCALING_WEAK, 2, 3, &first, &count);
        CHECK(rc == 0 && first == 2 * (UINT64_MAX / 3) && count == UINT64_MAX / 3,
              "dr_shard(2^64-1 / 3, weak, rank 2 of 3): rc=%d first=%" PRIu64 " count=%" PRIu64, rc, first, count);
    }
    return check_summary("test_shard");
}
