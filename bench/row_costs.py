#!/usr/bin/env python3
"""Why a row of dreduce-bench's table reads below int32 sum's bandwidth: its streaming rate or its fixed cost.

A reduction of B bytes takes about t = c + B / R: a fixed cost c (the launch, the first bytes' latency, the last
blocks, the partials' combine) and a streaming rate R. From a row's two largest sizes (both past the L2),
R = (B2 - B1) / (t2 - t1) and c = t2 - B2 / R. Issue #20's target compares a row's GB/s with int32 sum's at the same
n (>= 98% at every n >= 2^28). At the same n an 8-bit row reads a quarter of int32 sum's bytes, so its c weighs four
times as much, and a row can stream as fast as int32 sum and still miss. The verdict column tells the two apart:

    meets        >= 98% of int32 sum's GB/s at every n >= 2^28
    fixed cost   misses, but R is within 2% of int32 sum's: the loss is c's weight at the same n
    per element  R is more than 2% below int32 sum's

c max is the largest fixed cost with which the row, at its R, would reach 98% at its smallest n >= 2^28. A row whose
timed repetitions at some size spread by more than 5% (slowest / fastest) says so: its median may sit in a slow mode.

    bench/row_costs.py RUN.json [RUN.json ...]

Each file is one `dreduce-bench --json` run with an int32-sum row (its rows are compared with that one). Sizes below
2^28 are left out. docs/performance.md quotes the output."""
import json
import sys

TARGET = 98.0  # % of int32 sum's GB/s at the same n (issue #20)
BIG = 1 << 28  # the target's sizes start here, past the L2


def timings(path):
    """{case: {n: (seconds, bytes, slowest / fastest rep)}} of the sizes >= 2^28, in the file's order."""
    with open(path) as f:
        run = json.load(f)
    rows = {}
    for r in run["results"]:
        if r["n"] >= BIG:
            best = min(r["ours"]["by_block"], key=lambda b: b["ms_median"])
            rows.setdefault(r["case"], {})[r["n"]] = (r["ours"]["ms_median"] * 1e-3, r["bytes_read"],
                                                      best["ms_max"] / best["ms_min"])
    return rows


def fit(sizes):
    """(R in bytes/s, c in s) from the two largest sizes, or a string saying why there is none."""
    if len(sizes) < 2:
        return "fewer than two sizes >= 2^28: no fit"
    (t1, b1, _), (t2, b2, _) = (sizes[n] for n in sorted(sizes)[-2:])
    if t2 <= t1:
        return "the larger size took no longer: no fit"
    rate = (b2 - b1) / (t2 - t1)
    return rate, t2 - b2 / rate


def report(path, out):
    rows = timings(path)
    if "int32-sum" not in rows:
        raise SystemExit(f"row_costs: {path}: no int32-sum row at n >= 2^28 to compare with")
    base = rows["int32-sum"]
    base_fit = fit(base)
    if isinstance(base_fit, str):
        raise SystemExit(f"row_costs: {path}: int32-sum: {base_fit}")
    ns = sorted(base)
    out.write(f"{path}\n")
    out.write(f"{'row':22s} " + " ".join(f"{'GB/s 2^' + str(n.bit_length() - 1):>12s}" for n in ns) +
              "  % int32 sum         R GB/s  % R   c us  c max | verdict\n")
    for case, sizes in rows.items():
        pct = {n: 100.0 * (b / t) / (base[n][1] / base[n][0]) for n, (t, b, _) in sizes.items() if n in base}
        spread = [f"x{s:.2f} at 2^{n.bit_length() - 1}" for n, (_, _, s) in sorted(sizes.items()) if s > 1.05]
        note = f" (reps spread {', '.join(spread)})" if spread else ""
        gbs = " ".join(f"{sizes[n][1] / sizes[n][0] / 1e9:12.1f}" if n in sizes else f"{'-':>12s}" for n in ns)
        pcts = "/".join(f"{pct[n]:.1f}" if n in pct else "-" for n in ns)
        f = fit(sizes)
        if not pct:
            f = "no size in common with int32-sum"
        if isinstance(f, str):
            out.write(f"{case:22s} {gbs}  {pcts:17s}  ({f}){note}\n")
            continue
        rate, c = f
        rate_pct = 100.0 * rate / base_fit[0]
        n0 = min(n for n in sizes if n in base)
        t_base, b_base, _ = base[n0]
        b_row = sizes[n0][1]
        # the row at 98% of int32 sum's GB/s at n0 takes b_row / (0.98 * b_base / t_base); less b_row / R is c's room
        c_max = b_row * t_base / (TARGET / 100.0 * b_base) - b_row / rate
        if min(pct.values()) >= TARGET:
            verdict = "meets"
        elif rate_pct >= TARGET:
            verdict = "fixed cost"
        else:
            verdict = "per element"
        out.write(f"{case:22s} {gbs}  {pcts:17s} {rate / 1e9:8.0f} {rate_pct:5.1f} {c * 1e6:6.1f} {c_max * 1e6:6.1f} | "
                  f"{verdict}{note}\n")
    out.write("\n")


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        sys.stdout.write(__doc__ + "\n")
        return 0 if len(argv) >= 2 else 2
    for path in argv[1:]:
        report(path, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
