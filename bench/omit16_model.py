#!/usr/bin/env python3
"""Host model of the OMIT stats batch of the 16-bit floats (omit_batch16 in kernels/fused.cu).

Replays the kernel's double arithmetic in its order (d = x - c, s += d, q = fma(d, d, q), the batch's sum
fma(k, c, s) and m2 fma(-s, s / k, q), as nvcc contracts it) with c the point of the batch's range [lo, hi]
nearest 0, on batches of 32 elements, and compares with exact rationals. Prints, for bfloat16 and float16, the
worst batch-sum error in units of u sum|x| (u = 2^-53) beside the plain serial sum's on the same batches, the worst
m2 error relative to m2 (in u), and how many batches of m2 = 0 came out nonzero. Not modelled: the mean
(c + s / k), the one-vector batches (omit_batch16<1>), infinities and batches of NaN only; the GPU tests gpu_nan
and gpu_run_bfloat16_stats_omit_wide_* check those against the CPU backend and the sum's bound.
Batches: random over the whole range, clustered, clustered with far outliers, the adversarial values of
tests/cli/bf16_wide_batch.sh; half of them with 0-31 NaN.

Usage: python3 bench/omit16_model.py [--batches N] [--seed S]   (needs numpy, for float16's rounding)
"""
import argparse
import math
import random
import struct
from fractions import Fraction

import numpy as np

U = 2.0 ** -53


def to_bf16(x):  # truncation to bfloat16 (the data only needs to be bfloat16 values)
    b = struct.unpack('<I', struct.pack('<f', x))[0] & 0xffff0000
    return struct.unpack('<f', struct.pack('<I', b))[0]


def to_f16(x):
    with np.errstate(over='ignore'):
        return float(np.float16(x))


def fma(a, b, c):
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def batch(kind):
    rnd, big = (to_bf16, 3.0e38) if kind == 'bfloat16' else (to_f16, 65504.0)
    mode = random.random()
    base = random.uniform(-1, 1) * 2.0 ** random.randint(-30, 30 if kind == 'bfloat16' else 15)
    xs = []
    for _ in range(32):
        if kind == 'bfloat16':
            if mode < 0.25:
                v = random.uniform(-1, 1) * 2.0 ** random.randint(-133, 127)
            elif mode < 0.45:
                v = random.uniform(0.5, 1) * 2.0 ** random.randint(-20, 20) * random.choice([1, -1])
            elif mode < 0.6:
                v = base * (1 + random.uniform(-1, 1) * 2.0 ** -random.randint(3, 8))
            elif mode < 0.75:
                v = abs(base) * (1 + random.uniform(0, 1) * 2.0 ** -random.randint(3, 8)) + \
                    random.choice([0, 0, 2.0 ** random.randint(40, 120)])
            else:
                v = random.choice([-2.0 ** 56, 7.97, 23.9, 40, 39.75, 1e30, -1e-30, 3.0, 2.0 ** 100, -2.0 ** -100])
        else:
            if mode < 0.3:
                v = random.uniform(-1, 1) * 2.0 ** random.randint(-24, 15)
            elif mode < 0.6:
                v = base * (1 + random.uniform(-1, 1) * 2.0 ** -random.randint(3, 8))
            else:
                v = random.choice([65504.0, -65504.0, 2.0 ** -24, -2.0 ** -24, 1.0, -3.5, 1000.0])
        v = rnd(v)
        xs.append(big if math.isinf(v) else v)
    nan = set(random.sample(range(32), random.randint(0, 31))) if random.random() < 0.5 else set()
    return xs, nan


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--batches', type=int, default=30000)
    ap.add_argument('--seed', type=int, default=1)
    a = ap.parse_args()
    random.seed(a.seed)
    for kind in ('bfloat16', 'float16'):
        worst_sum = worst_plain = worst_m2 = 0.0
        not_rounded = zero_m2_missed = 0
        for _ in range(a.batches):
            xs, nan = batch(kind)
            vals = [x for i, x in enumerate(xs) if i not in nan]
            k = len(vals)
            # min.bf16x2 / min.f16x2 order -0.0 below +0.0; c by the sign bits, as the kernel picks it
            lo = min(vals, key=lambda v: (v, math.copysign(1.0, v)))
            hi = max(vals, key=lambda v: (v, math.copysign(1.0, v)))
            c = lo if math.copysign(1.0, lo) > 0 else (hi if math.copysign(1.0, hi) < 0 else 0.0)
            s = q = plain = 0.0
            for i, x in enumerate(xs):
                d = (c if i in nan else x) - c
                s += d
                q = fma(d, d, q)
                plain += 0.0 if i in nan else x
            total = fma(float(k), c, s)
            sk = s * (1.0 / 32) if k == 32 else s / k
            m2 = max(fma(-s, sk, q), 0.0)  # nvcc contracts q - s * sk into one DFMA
            exact = [Fraction(v) for v in vals]
            S, A = sum(exact), sum(abs(v) for v in exact)
            mean = S / k
            M2 = sum((v - mean) ** 2 for v in exact)
            if A:
                worst_sum = max(worst_sum, float(abs(Fraction(total) - S) / A) / U)
                worst_plain = max(worst_plain, float(abs(Fraction(plain) - S) / A) / U)
            if kind == 'float16' and total != float(S):
                not_rounded += 1
            if M2:
                worst_m2 = max(worst_m2, float(abs(Fraction(m2) - M2) / M2))
            elif m2 != 0:
                zero_m2_missed += 1
        extra = ', float16 sums not correctly rounded: %d' % not_rounded if kind == 'float16' else ''
        print('%-8s %d batches: sum within %.2f u sum|x| (plain serial sum %.2f); m2 within %.1f u m2, '
              'nonzero where it is 0: %d%s' % (kind, a.batches, worst_sum, worst_plain, worst_m2 / U, zero_m2_missed,
                                               extra))


if __name__ == '__main__':
    main()
