#!/usr/bin/env python3
"""Markdown tables for docs/performance.md from the benchmarks' JSON files.

    python3 bench/perf_tables.py [--table KIND] [--sizes LIST] [--cases LIST] FILE.json [FILE.json ...]

Reads what these write, and knows each by its contents:

    dreduce-bench --json FILE            (mode perf: the kernel against CUB; mode levels: the tutorial's levels;
                                          mode small: latency of small inputs)
    bench/python_bench.py --json FILE    (the Python call against torch, CuPy and NCCL)

Tables (--table; the default is the first one listed for the file's kind):

    perf    rows     one line per row (type, op, accumulator): GB/s at each size, the lowest ratio to CUB, and the %
                     of int32 sum's GB/s at each size (where the file has an int32-sum row; each file is compared
                     with its own int32 sum, so give the files of one run together)
            sizes    one line per row and size: ours ms, GB/s, block, CUB ms, CUB GB/s, ratio
            ratios   one line per row: the ratio to CUB at each size (for the small sizes, where time, not
                     bandwidth, is the figure)
            copy     the device-to-device copy ceiling by bytes
    levels  levels   ms, GB/s and speedup per level beside the tutorial's claims, and the multipass line
    small   small    µs per reduction launched from the host (stream) and replayed as a graph, ours and CUB
    python  python   µs per call, the result in hand, beside torch, CuPy + mpi4py and NCCL

Ratios are CUB's time over ours (>= 1: ours faster). The numbers are the files' own (medians); nothing is averaged
across files. A file that is not one of the above, or lacks a field a table needs, stops the script with a message
naming the file and the field (exit 1); bad usage exits 2. Python 3 standard library only."""
import argparse
import json
import sys


class Malformed(Exception):
    pass


def need(obj, key, kind, where):
    """obj[key], which must be of type kind (a type or a tuple of types)."""
    if not isinstance(obj, dict):
        raise Malformed(f"{where}: expected an object, found {type(obj).__name__}")
    if key not in obj:
        raise Malformed(f"{where}: no field '{key}'")
    v = obj[key]
    if kind is float:
        kind = (int, float)
    if isinstance(v, bool) and kind is not bool:
        raise Malformed(f"{where}.{key}: expected {kind}, found a boolean")
    if not isinstance(v, kind):
        raise Malformed(f"{where}.{key}: expected {getattr(kind, '__name__', kind)}, found {type(v).__name__}")
    return v


def kind_of(doc, path):
    if isinstance(doc, dict) and doc.get("tool") == "dreduce-bench":
        mode = need(doc, "mode", str, path)
        if mode not in ("perf", "levels", "small"):
            raise Malformed(f"{path}: dreduce-bench mode '{mode}' is not one this script reads")
        return mode
    if isinstance(doc, dict) and "runs" in doc and "argv" in doc:
        return "python"
    raise Malformed(f"{path}: neither a dreduce-bench JSON (field tool) nor a python_bench.py JSON (runs, argv)")


def size_label(n):
    """2^k for powers of two, else the number."""
    if n > 0 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return str(n)


def parse_sizes(text):
    out = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.add(1 << int(part[2:]) if part.startswith("2^") else int(part))
        except ValueError:
            raise SystemExit(f"perf_tables.py: bad size '{part}' (use 2^28 or 268435456)")
    return out


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def row_name(r, where):
    """'int32 sum → int64', 'float32 sum exact', 'float32 stats', as the docs write them."""
    dtype, op, acc = need(r, "dtype", str, where), need(r, "op", str, where), need(r, "acc", str, where)
    mode = r.get("acc_mode", "")
    if mode == "exact" or acc == "exact":
        return f"{dtype} {op} exact"
    if op in ("stats", "argmin", "argmax") or acc == dtype:
        return f"{dtype} {op}"
    return f"{dtype} {op} → {acc}"


def perf_results(doc, path, sizes, cases):
    """The file's measured results, in its order: (case, name, n, ours ms, ours GB/s, block, CUB ms, CUB GB/s, ratio)."""
    res = need(doc, "results", list, path)
    out = []
    for i, r in enumerate(res):
        where = f"{path}: results[{i}]"
        case = need(r, "case", str, where)
        n = need(r, "n", int, where)
        if "skipped" in r:
            continue
        if (sizes and n not in sizes) or (cases and case not in cases):
            continue
        ours = need(r, "ours", dict, where)
        cub = need(r, "cub", dict, where)
        out.append({
            "case": case, "name": row_name(r, where), "n": n,
            "ours_ms": need(ours, "ms_median", float, where + ".ours"),
            "ours_gbs": need(ours, "gbs", float, where + ".ours"),
            "block": need(ours, "best_block", int, where + ".ours"),
            "cub_ms": need(cub, "ms_median", float, where + ".cub"),
            "cub_gbs": need(cub, "gbs", float, where + ".cub"),
            "ratio": need(r, "ratio_cub_over_ours", float, where),
        })
    return out


def perf_sizes_table(results):
    rows = [[r["name"], size_label(r["n"]), f"{r['ours_ms']:.4f}", f"{r['ours_gbs']:.1f}", str(r["block"]),
             f"{r['cub_ms']:.4f}", f"{r['cub_gbs']:.1f}", f"{r['ratio']:.3f}"] for r in results]
    return table(["row", "n", "ours ms", "ours GB/s", "block", "CUB ms", "CUB GB/s", "× CUB"], rows)


def perf_rows_table(per_file):
    """per_file: a list of result lists, one per file; each compared with its own int32-sum row."""
    all_sizes = sorted({r["n"] for results in per_file for r in results})
    base_any = False
    body = []
    seen = set()
    for results in per_file:
        base = {r["n"]: r["ours_gbs"] for r in results if r["case"] == "int32-sum"}
        base_any = base_any or bool(base)
        order = []
        by_case = {}
        for r in results:
            if r["case"] not in by_case:
                order.append(r["case"])
                by_case[r["case"]] = []
            by_case[r["case"]].append(r)
        for case in order:
            if case in seen:  # int32 sum is in every file of a split run: the first one's is shown
                continue
            seen.add(case)
            rs = {r["n"]: r for r in by_case[case]}
            gbs = [f"{rs[n]['ours_gbs']:.0f}" if n in rs else "—" for n in all_sizes]
            pct = [f"{100 * rs[n]['ours_gbs'] / base[n]:.1f}" if n in rs and base.get(n) else "—" for n in all_sizes]
            low = min(r["ratio"] for r in by_case[case])
            body.append([by_case[case][0]["name"], " / ".join(gbs), f"{low:.3f}", " / ".join(pct)])
    sz = " / ".join(size_label(n) for n in all_sizes)
    header = ["row", f"GB/s at {sz}", "lowest × CUB", f"% of int32 sum at {sz}"]
    if not base_any:
        header = header[:3]
        body = [b[:3] for b in body]
    return table(header, body)


def perf_ratios_table(results):
    all_sizes = sorted({r["n"] for r in results})
    order, by_case = [], {}
    for r in results:
        if r["case"] not in by_case:
            order.append(r["case"])
            by_case[r["case"]] = {}
        by_case[r["case"]][r["n"]] = r
    body = [[by_case[c][min(by_case[c])]["name"]] +
            [f"{by_case[c][n]['ratio']:.2f}" if n in by_case[c] else "—" for n in all_sizes] for c in order]
    return table(["row"] + [f"× CUB, {size_label(n)}" for n in all_sizes], body)


def perf_copy_table(doc, path):
    rows = []
    for i, c in enumerate(need(doc, "copy_ceiling", list, path)):
        where = f"{path}: copy_ceiling[{i}]"
        rows.append([str(need(c, "bytes", int, where)), f"{need(c, 'ms_median', float, where):.4f}",
                     f"{need(c, 'gbs', float, where):.1f}", "yes" if need(c, "half_copy", bool, where) else "no"])
    return table(["bytes", "copy ms", "GB/s (read + written)", "half copy"], rows)


def levels_table(doc, path):
    levels = need(doc, "levels", list, path)
    rows = []
    for i, lv in enumerate(levels):
        where = f"{path}: levels[{i}]"
        name = need(lv, "level", str, where)
        claim = "—"
        if "tutorial_ms" in lv:
            claim = f"{need(lv, 'tutorial_ms', float, where):g} ms, {need(lv, 'tutorial_speedup', float, where):.2f}×"
        rows.append([name, f"{need(lv, 'ms_median', float, where):.4f}", f"{need(lv, 'gbs', float, where):.1f}",
                     f"{need(lv, 'speedup_vs_neighbored', float, where):.2f}×", claim])
    base = need(levels[0], "ms_median", float, f"{path}: levels[0]") if levels else 0
    cub = need(doc, "cub", dict, path)
    cub_ms = need(cub, "ms_median", float, path + ": cub")
    rows.append(["CUB " + need(cub, "api", str, path + ": cub").split("(")[0].strip(), f"{cub_ms:.4f}",
                 f"{need(cub, 'gbs', float, path + ': cub'):.1f}", f"{base / cub_ms:.2f}×" if cub_ms else "—", "—"])
    x = need(doc, "multipass_vs_complete_system", float, path)
    n = need(doc, "n", int, path)
    return (table(["level", "ms", "GB/s", "speedup", "tutorial's claim (RTX 3080)"], rows) +
            f"\n\nn = {size_label(n)} int32 → {need(doc, 'acc', str, path)}, block {need(doc, 'block', int, path)};"
            f" multipass / the tutorial's complete system (shuffle level): {x:.2f}×")


def small_table(doc, path, sizes, cases):
    rows = []
    for i, r in enumerate(need(doc, "results", list, path)):
        where = f"{path}: results[{i}]"
        case = need(r, "case", str, where)
        n = need(r, "n", int, where)
        if (sizes and n not in sizes) or (cases and case not in cases):
            continue
        o = need(r, "ours", dict, where)
        c = need(r, "cub", dict, where)
        rows.append([row_name(r, where), str(n),
                     f"{need(o, 'stream_us_median', float, where + '.ours'):.2f}",
                     f"{need(o, 'graph_us_median', float, where + '.ours'):.2f}",
                     f"{need(c, 'stream_us_median', float, where + '.cub'):.2f}",
                     f"{need(c, 'graph_us_median', float, where + '.cub'):.2f}",
                     f"{need(o, 'kernels_per_reduction', int, where)} / {need(c, 'kernels_per_reduction', int, where)}"])
    return table(["row", "n", "ours, stream µs", "ours, graph µs", "CUB, stream µs", "CUB, graph µs",
                  "launches (ours / CUB)"], rows)


def python_table(doc, path, sizes):
    out = []
    for k, run in enumerate(need(doc, "runs", list, path)):
        where = f"{path}: runs[{k}]"
        P = need(run, "P", int, where)
        rows = []
        for i, r in enumerate(need(run, "rows", list, where)):
            w = f"{where}.rows[{i}]"
            n = need(r, "n", int, w)
            if sizes and n not in sizes:
                continue
            d = need(r, "dreduce_us", float, w)
            t = need(r, "torch_us", float, w)

            def opt(key):
                v = r.get(key)
                if v is None:
                    return "—"
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise Malformed(f"{w}.{key}: expected a number or null")
                return f"{v:.1f}"
            rows.append([size_label(n), f"{d:.1f}", f"{need(r, 'overhead_us', float, w):.1f}", f"{t:.1f}",
                         opt("cupy_us"), opt("nccl_us"), f"{t / d:.2f}" if d else "—"])
        out.append(f"P = {P} ({need(run, 'device', str, where)}; combine: {need(run, 'combine', str, where)})\n\n" +
                   table(["n", "dreduce µs", "of which Python", "torch.sum().item() µs", "cupy.sum + mpi4py µs",
                          "NCCL reduce µs", "× torch"], rows))
    return "\n\n".join(out)


TABLES = {"perf": ("rows", "sizes", "ratios", "copy"), "levels": ("levels",), "small": ("small",), "python": ("python",)}


def main(argv):
    ap = argparse.ArgumentParser(prog="perf_tables.py", description=__doc__.split("\n")[0],
                                 epilog="Tables by kind: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in TABLES.items()))
    ap.add_argument("files", nargs="+", metavar="FILE.json", help="JSON written by dreduce-bench or python_bench.py")
    ap.add_argument("--table", help="which table (default: the first of the files' kind); see the list below")
    ap.add_argument("--sizes", help="only these n, e.g. 2^28,2^30 (perf, small, python)")
    ap.add_argument("--cases", help="only these rows, e.g. int32-sum,float32-sum (perf, small)")
    a = ap.parse_args(argv)
    sizes = parse_sizes(a.sizes) if a.sizes else set()
    cases = {c.strip() for c in a.cases.split(",") if c.strip()} if a.cases else set()
    try:
        docs = []
        for path in a.files:
            try:
                with open(path) as f:
                    doc = json.load(f)
            except OSError as e:
                raise Malformed(f"{path}: {e.strerror}")
            except json.JSONDecodeError as e:
                raise Malformed(f"{path}: not JSON ({e})")
            docs.append((path, kind_of(doc, path), doc))
        kinds = {k for _, k, _ in docs}
        if len(kinds) > 1:
            ap.error("the files are of different kinds (" + ", ".join(sorted(kinds)) + "): give one kind at a time")
        kind = kinds.pop()
        which = a.table or TABLES[kind][0]
        if which not in TABLES[kind]:
            ap.error(f"--table {which} is not a table of {kind} files (they have: {', '.join(TABLES[kind])})")
        if which == "rows":
            per_file = [perf_results(d, p, sizes, cases) for p, _, d in docs]
            if not any(per_file):
                raise Malformed("no measured rows (check --sizes and --cases)")
            print(perf_rows_table(per_file))
        elif which in ("sizes", "ratios"):
            results = [r for p, _, d in docs for r in perf_results(d, p, sizes, cases)]
            if not results:
                raise Malformed("no measured rows (check --sizes and --cases)")
            print(perf_sizes_table(results) if which == "sizes" else perf_ratios_table(results))
        else:
            parts = []
            for p, _, d in docs:
                if which == "copy":
                    parts.append(perf_copy_table(d, p))
                elif which == "levels":
                    parts.append(levels_table(d, p))
                elif which == "small":
                    parts.append(small_table(d, p, sizes, cases))
                else:
                    parts.append(python_table(d, p, sizes))
            print("\n\n".join(parts))
    except Malformed as e:
        print(f"perf_tables.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
