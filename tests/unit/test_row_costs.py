#!/usr/bin/env python3
"""bench/row_costs.py on a made-up dreduce-bench run whose times follow t = c + bytes / R at 2^28, 2^30 and 2^31 (and
not at 2^29, so a fit from the wrong sizes shows): it must give back each row's GB/s, % of int32 sum, R and c, a c
max at which the row would read exactly 98% at 2^28, the verdict on each side of its thresholds, the spread note on
each side of 5% (taken from the best block, not the first), and refuse a run without int32 sum.
usage: test_row_costs.py PATH/TO/row_costs.py"""
import json
import os
import subprocess
import sys
import tempfile

N = [1 << 28, 1 << 29, 1 << 30, 1 << 31]
OFF_LINE = {1 << 29: 3e-6}  # seconds added at 2^29: a fit through it is wrong
BASE_R, BASE_C = 4.6e12, 8e-6  # int32 sum: bytes/s, s

# case: (element bytes, R, c, slowest / fastest rep of the best block), and the verdict
ROWS = {
    "int32-sum": (4, BASE_R, BASE_C, 1.01, "meets"),
    "int64-sum": (8, BASE_R, BASE_C, 1.04, "meets"),  # twice the bytes: c weighs half as much
    "int8-sum": (1, BASE_R, BASE_C, 1.01, "fixed cost"),  # int32 sum's R and c, a quarter of the bytes
    "int16-sum": (2, 0.985 * BASE_R, BASE_C, 1.01, "fixed cost"),  # R 1.5% short: still within 2%
    "float32-sum-exact": (4, 0.97 * BASE_R, BASE_C, 1.01, "per element"),  # R 3% short
    "float16-sum-exact": (2, 0.96 * BASE_R, BASE_C, 1.01, "per element"),
    "uint64-bor": (8, BASE_R, BASE_C, 1.06, "meets"),  # bimodal reps
}


def seconds(case, n):
    size, rate, c = ROWS[case][:3]
    return c + n * size / rate + OFF_LINE.get(n, 0.0)


def make_run(path, cases):
    results = []
    for case in cases:
        spread = ROWS[case][3]
        for n in N:
            ms = 1e3 * seconds(case, n)
            # the best block: its median is the row's; fastest 1% below it. A slower first block spreads by 1.3.
            best = {"block": 256, "ms_median": ms, "ms_min": 0.99 * ms, "ms_max": 0.99 * ms * spread}
            worse = {"block": 1024, "ms_median": 1.2 * ms, "ms_min": ms, "ms_max": 1.3 * ms}
            results.append({"case": case, "n": n, "bytes_read": n * ROWS[case][0],
                            "ours": {"ms_median": ms, "by_block": [worse, best]}})
    with open(path, "w") as f:
        json.dump({"results": results}, f)


def main():
    script = sys.argv[1]
    failures = 0

    def fail(what):
        nonlocal failures
        print(f"FAIL {what}")
        failures += 1

    with tempfile.TemporaryDirectory() as tmp:
        run = os.path.join(tmp, "run.json")
        make_run(run, ROWS)
        out = subprocess.run([sys.executable, script, run], capture_output=True, text=True, check=True).stdout
        no_base = os.path.join(tmp, "no_base.json")
        make_run(no_base, ["int8-sum"])
        refused = subprocess.run([sys.executable, script, no_base], capture_output=True, text=True)
    if refused.returncode == 0 or "no int32-sum row" not in refused.stderr:
        fail(f"a run without int32-sum: exit {refused.returncode}, stderr {refused.stderr!r}")

    lines = {line.split()[0]: line for line in out.splitlines() if line.split() and line.split()[0] in ROWS}
    base_t = {n: seconds("int32-sum", n) for n in N}
    for case, (size, rate, c, spread, verdict_want) in ROWS.items():
        line = lines.get(case)
        if line is None:
            fail(f"{case}: no line in\n{out}")
            continue
        fields, verdict = line.split("|")
        f = fields.split()
        gbs = [float(x) for x in f[1:5]]
        got_rate, got_rate_pct, got_c, got_cmax = float(f[6]), float(f[7]), float(f[8]), float(f[9])
        want_gbs = [n * size / seconds(case, n) / 1e9 for n in N]
        want_pct = "/".join(f"{100 * (n * size / seconds(case, n)) / (n * 4 / base_t[n]):.1f}" for n in N)
        # at c = c max the row reads 98% of int32 sum's GB/s at 2^28, whatever formula gave it (c max printed to 0.1 us)
        n0 = N[0]
        pct_at_cmax = 100 * (n0 * size / (got_cmax * 1e-6 + n0 * size / rate)) / (n0 * 4 / base_t[n0])
        checks = [
            (all(abs(g - w) <= 0.05 for g, w in zip(gbs, want_gbs)), f"GB/s {gbs}, want {want_gbs}"),
            (f[5] == want_pct, f"% int32 sum {f[5]}, want {want_pct}"),
            (abs(got_rate - rate / 1e9) <= 1, f"R {got_rate} GB/s, want {rate / 1e9:.0f}"),
            (abs(got_rate_pct - 100 * rate / BASE_R) <= 0.05, f"% R {got_rate_pct}, want {100 * rate / BASE_R:.1f}"),
            (abs(got_c - c * 1e6) <= 0.05, f"c {got_c} us, want {c * 1e6:.1f}"),
            (abs(pct_at_cmax - 98.0) <= 0.1, f"c max {got_cmax} us reads {pct_at_cmax:.3f}% at 2^28, want 98"),
            (verdict.split("(")[0].strip() == verdict_want, f"verdict '{verdict.strip()}', want {verdict_want}"),
            (("reps spread x1.06" in verdict) == (spread > 1.05) and "x1.30" not in verdict,
             f"spread note in '{verdict.strip()}' (best block's spread {spread})"),
        ]
        for ok, what in checks:
            if not ok:
                fail(f"{case}: {what}\n  {line}")
    print(f"{len(ROWS)} rows, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
