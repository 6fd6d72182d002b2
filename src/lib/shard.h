/* Which global elements a rank reduces. Strong scaling splits n into near-equal contiguous shards (the first n % P
 * ranks get one more); weak scaling gives every rank n elements of its own. Every global index belongs to exactly
 * one shard; shards may be empty. */
#ifndef DREDUCE_SHARD_H
#define DREDUCE_SHARD_H

#include <stdint.h>

#include "dreduce/types.h"

/* Rank `rank` of `nranks`: its first global index and element count. Returns 0, or -1 if weak scaling's global
 * array (n * nranks) would pass 2^64 - 1 elements. */
int dr_shard(uint64_t n, dr_scaling_t scaling, int rank, int nranks, uint64_t *first, uint64_t *count);

#endif
