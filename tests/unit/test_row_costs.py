#!/usr/bin/env python3
"""bench/row_costs.py on a made-up dreduce-bench run whose times follow t = c + bytes / R exactly: it must give back
each row's R and c, the % of int32 sum's GB/s, c max and the verdict, and flag a row whose reps spread.
usage: test_row_costs.py PATH/TO/row_costs.py"""
import json
import os
import subprocess
import sys
import tempfile

N = [1 << 28, 1 << 30, 1 << 31]
BASE_R, BASE_C = 4.6e12, 8e-6  # int32 sum: bytes/s, s

# case: (element bytes, R, c, slowest / fastest rep), and what the script must say
ROWS = {
    "int32-sum": (4, BASE_R, BASE_C, 1.01),
    "int64-sum": (8, BASE_R, BASE_C, 1.01),  # twice the bytes: c weighs half as much
    "int8-sum": (1, BASE_R, BASE_C, 1.01),  # int32 sum's R and c, a quarter of the bytes
    "float16-sum-exact": (2, 0.96 * BASE_R, BASE_C, 1.01),  # 4% slower per byte
    "uint64-bor": (8, BASE_R, BASE_C, 1.15),  # bimodal reps
}
VERDICT = {"int32-sum": "meets", "int64-sum": "meets", "int8-sum": "fixed cost",
           "float16-sum-exact": "per element", "uint64-bor": "meets"}


def make_run(path):
    results = []
    for case, (size, rate, c, spread) in ROWS.items():
        for n in N:
            ms = 1e3 * (c + n * size / rate)
            results.append({"case": case, "n": n, "bytes_read": n * size,
                            "ours": {"ms_median": ms, "by_block": [{"ms_median": ms, "ms_min": ms,
                                                                    "ms_max": ms * spread}]}})
    with open(path, "w") as f:
        json.dump({"results": results}, f)


def main():
    script = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        run = os.path.join(tmp, "run.json")
        make_run(run)
        out = subprocess.run([sys.executable, script, run], capture_output=True, text=True, check=True).stdout
    lines = {line.split()[0]: line for line in out.splitlines() if line.split() and line.split()[0] in ROWS}
    for case, (size, rate, c, spread) in ROWS.items():
        line = lines.get(case)
        if line is None:
            print(f"FAIL {case}: no line in\n{out}")
            failures += 1
            continue
        fields, verdict = line.split("|")
        f = fields.split()
        got_rate, got_rate_pct, got_c, got_cmax = float(f[5]), float(f[6]), float(f[7]), float(f[8])
        t = [c + n * size / rate for n in N]
        tb = [BASE_C + n * 4 / BASE_R for n in N]
        pct = "/".join(f"{100 * (n * size / ti) / (n * 4 / tbi):.1f}" for n, ti, tbi in zip(N, t, tb))
        cmax = 1e6 * (N[0] * size * tb[0] / (0.98 * N[0] * 4) - N[0] * size / rate)
        checks = [
            (abs(got_rate - rate / 1e9) <= 1, f"R {got_rate} GB/s, want {rate / 1e9:.0f}"),
            (abs(got_rate_pct - 100 * rate / BASE_R) <= 0.05, f"% R {got_rate_pct}, want {100 * rate / BASE_R:.1f}"),
            (abs(got_c - c * 1e6) <= 0.05, f"c {got_c} us, want {c * 1e6:.1f}"),
            (abs(got_cmax - cmax) <= 0.05, f"c max {got_cmax} us, want {cmax:.1f}"),
            (f[4] == pct, f"% int32 sum {f[4]}, want {pct}"),
            (verdict.split("(")[0].strip() == VERDICT[case], f"verdict '{verdict.strip()}', want {VERDICT[case]}"),
            (("reps spread x1.15 at 2^28" in verdict) == (spread > 1.05), f"spread note in '{verdict.strip()}'"),
        ]
        for ok, what in checks:
            if not ok:
                print(f"FAIL {case}: {what}\n  {line}")
                failures += 1
    print(f"{len(ROWS)} rows, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
