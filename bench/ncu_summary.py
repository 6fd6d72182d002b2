#!/usr/bin/env python3
"""One line per kernel from Nsight Compute's raw page: launch shape, registers, duration, DRAM bytes and rate,
occupancy, instructions, and the four largest stall reasons (warp cycles stalled per issued instruction).

    ncu --clock-control none --set full -k regex:multipass --launch-count 1 -o ours \\
        build/bench/dreduce-bench --warmup 1 --reps 1 --sizes 16M --cases float32-min
    ncu -i ours.ncu-rep --page raw > ours.raw.txt
    bench/ncu_summary.py ours.raw.txt [more.raw.txt ...]

docs/performance.md ("The kernel against CUB, by row": what ncu shows at 2^28) quotes its output."""
import os
import re
import sys

METRICS = {
    "regs": "launch__registers_per_thread",
    "dur": "gpu__time_duration.sum",
    "dram_bytes": "dram__bytes_read.sum",
    "dram_rate": "dram__bytes_read.sum.per_second",
    "occupancy": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "occupancy_max": "sm__maximum_warps_per_active_cycle_pct",
    "inst": "smsp__inst_executed.sum",
    "issue": "smsp__issue_active.avg.pct_of_peak_sustained_active",
}
STALL = re.compile(r"smsp__average_warps_issue_stalled_(.*)_per_issue_active\.ratio$")
KERNEL = re.compile(r"^  (?:void )?(.*?)\((.*)\) \((\d+), \d+, \d+\)x\((\d+), \d+, \d+\), Context")


def kernels(path):
    """[(name, grid, block, {metric: (unit, value)})] in the order of the file."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            m = KERNEL.match(line)
            if m:
                name = re.sub(r"<.*", "", m.group(1).replace("<unnamed>::", ""))
                out.append((name, m.group(3), m.group(4), {}))
                continue
            parts = line.split()
            if out and len(parts) >= 2 and "__" in parts[0]:
                unit = parts[1] if len(parts) >= 3 else ""
                out[-1][3][parts[0]] = (unit, parts[-1])
    return out


def main(paths):
    for path in paths:
        tag = os.path.basename(path).replace(".raw.txt", "")
        for name, grid, block, m in kernels(path):
            def get(key):
                unit, value = m.get(METRICS[key], ("", "?"))
                return f"{value} {unit}".strip()

            stalls = []
            for metric, (_, value) in m.items():
                s = STALL.match(metric)
                if s and value not in ("", "n/a"):
                    stalls.append((float(value.replace(",", "")), s.group(1)))
            stalls.sort(reverse=True)
            top = ", ".join(f"{n} {v:.1f}" for v, n in stalls[:4])
            print(f"{tag}: {name} {grid}x{block}, {get('regs')}, {get('dur')}, DRAM read {get('dram_bytes')} at "
                  f"{get('dram_rate')}, occupancy {get('occupancy')} of {get('occupancy_max')}, {get('inst')} "
                  f"(warp), issue active {get('issue')}; stalls per issue {sum(v for v, _ in stalls):.1f}: {top}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
