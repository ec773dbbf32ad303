#!/usr/bin/env python3
"""Cold random 4 KiB `pread`s: this build against another build, in the same run (issue 52, item 4).

Why its own scenario: a regression of a few hundred microseconds per cold read hides in the
noise of a shared host unless the two builds are measured round by round, alternating, on the
same points. Each round mounts each binary afresh (the order alternates every round), drops
the page caches (`sync; echo 3 > /proc/sys/vm/drop_caches`), then reads 4 KiB at N random
page offsets of MNT/field.b2nd/data, timing each `pread`; python-blosc2's `arr[i, j]` on the
same points after a fresh `blosc2.open` (caches dropped too) is measured beside them.
With --warm-source the source file stays in the page cache instead (bench_mount.py's "cold"). Every
value read is checked against python-blosc2's.

Reported per build: p50 of each round and their median, p99, the daemon's CPU seconds per
read, and the mount's .stats counters that moved (blocks decoded, bytes read from the
source); the ratio of the two medians and of each to python-blosc2's.

The field (--field, made when missing): a (16384, 8192) float64 smooth field, chunks
(128, 8192), blocks (4, 8192), ZSTD clevel 5 with shuffle (1 GiB; about 700 MiB on disk).

Usage (as root: it mounts and drops page caches):
    python3 scripts/bench/bench_random_ab.py --binary target/release/blosc2fs \
        --base /path/to/parent/blosc2fs [--rounds 5] [--reads 400]
The parent build: `git worktree add /tmp/parent HEAD~1`, then in it
`CARGO_TARGET_DIR=... cargo build --release --bin blosc2fs` and copy the binary aside.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import struct
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from benchlib import BenchError, Json  # noqa: E402

SHAPE = (16384, 8192)
ITEM = 8
PAGE = 4096
SEED = 52


def worker(request: Json) -> Json:
    """The python-blosc2 side (runs under --python): make the field, or read points."""
    import blosc2
    import numpy as np

    if request["op"] == "make":
        n0, n1 = SHAPE
        cparams = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=5, filters=[blosc2.Filter.SHUFFLE])
        arr = blosc2.empty(
            SHAPE,
            dtype=np.float64,
            chunks=(128, n1),
            blocks=(4, n1),
            urlpath=request["path"],
            mode="w",
            cparams=cparams,
        )
        j = np.arange(n1) / n1
        for s in range(0, n0, 1024):
            i = (np.arange(s, s + 1024) / n0)[:, None]
            arr[s : s + 1024] = np.sin(6.0 * i) * np.cos(4.0 * j)[None, :] + i * j
        return {"made": request["path"]}
    if request["op"] == "points":
        dropped = False if request["warm_source"] else benchlib.drop_caches()
        arr = blosc2.open(request["path"])
        lat, values = [], []
        for i, j in request["coords"]:
            t0 = time.perf_counter()
            v = arr[i, j]
            lat.append(time.perf_counter() - t0)
            values.append(float(v))
        return {"latencies": lat, "values": values, "dropped": dropped, "version": blosc2.__version__}
    raise ValueError(f"unknown worker op {request['op']}")


def plan(reads: int) -> list[int]:
    """`reads` page-aligned offsets into the field's data, the same in every run."""
    rng = random.Random(SEED)
    pages = SHAPE[0] * SHAPE[1] * ITEM // PAGE
    return [rng.randrange(pages) * PAGE for _ in range(reads)]


def mount_round(args: Any, binary: str, offsets: list[int]) -> Json:
    """One fresh mount of `binary`, caches dropped, the timed preads; latencies, bytes, counters."""
    src = os.path.dirname(os.path.abspath(args.field))
    name = os.path.basename(args.field)
    with benchlib.Mount(binary, src, args.mnt, args.log, args.cache_size) as m:
        path = os.path.join(args.mnt, name, "data")
        fd = os.open(path, os.O_RDONLY)
        try:
            s0 = m.try_stats() or {}
            dropped = False if args.warm_source else benchlib.drop_caches()
            c0 = m.cpu()
            lat, got = [], []
            for off in offsets:
                t0 = time.perf_counter()
                b = os.pread(fd, PAGE, off)
                lat.append(time.perf_counter() - t0)
                got.append(b)
            cpu = m.cpu() - c0
            s1 = m.try_stats() or {}
        finally:
            os.close(fd)
    return {
        "latencies": lat,
        "got": got,
        "daemon_cpu": cpu,
        "dropped": dropped,
        "stats": benchlib.stats_changes(s0, s1),
    }


def check(label: str, offsets: list[int], got: list[bytes], values: list[float]) -> None:
    """Each pread's first 8 bytes are python-blosc2's value at that point."""
    for off, b, v in zip(offsets, got, values):
        if len(b) != PAGE or b[:ITEM] != struct.pack("<d", v):
            raise BenchError(f"{label}: 4 KiB pread at {off} is not python-blosc2's value {v!r}")


def p(values: list[float], q: float) -> float:
    return benchlib.percentile(values, q) * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="", help="the build to measure")
    ap.add_argument("--base", default="", help="the build to compare with (e.g. the parent commit's)")
    ap.add_argument("--field", default="/tmp/blosc2fs-bench-random/field.b2nd")
    ap.add_argument("--workdir", default="/tmp/blosc2fs-bench-random/run")
    ap.add_argument("--python", default=os.environ.get("BLOSC2FS_PYTHON", "python3"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reads", type=int, default=400)
    ap.add_argument("--cache-size", default="256M")
    ap.add_argument(
        "--warm-source",
        action="store_true",
        help="keep the source file in the page cache instead of dropping caches (bench_mount.py's cold row)",
    )
    ap.add_argument("--_worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._worker:
        print(json.dumps(worker(json.loads(args._worker))))
        return 0
    for b in (args.binary, args.base):
        if benchlib.binary_missing(b):
            return 2
    benchlib.open_run_dir(args)
    script = os.path.abspath(__file__)
    if not os.path.exists(args.field):
        os.makedirs(os.path.dirname(os.path.abspath(args.field)), exist_ok=True)
        benchlib.run_worker(args.python, {"op": "make", "path": args.field}, script=script)
    offsets = plan(args.reads)
    coords = [divmod(off // ITEM, SHAPE[1]) for off in offsets]
    builds = {"this": args.binary, "base": args.base}
    rows: dict[str, list[Json]] = {"this": [], "base": [], "python": []}
    for r in range(args.rounds):
        if args.warm_source:
            benchlib.warm_file(args.field)
        order = ["this", "base"] if r % 2 == 0 else ["base", "this"]
        py = benchlib.run_worker(
            args.python,
            {"op": "points", "path": args.field, "coords": coords, "warm_source": args.warm_source},
            script=script,
        )
        for label in order:
            res = mount_round(args, builds[label], offsets)
            check(label, offsets, res.pop("got"), py["values"])
            rows[label].append(res)
        py.pop("values")
        rows["python"].append(py)
        line = "  ".join(f"{k} p50 {p(rows[k][-1]['latencies'], 50):.0f} µs" for k in ("this", "base", "python"))
        print(f"round {r + 1}: {line}", flush=True)
    summary: Json = {"host": benchlib.host_env(), "reads": args.reads, "rounds": args.rounds}
    for k, rs in rows.items():
        p50s = [p(x["latencies"], 50) for x in rs]
        summary[k] = {
            "p50_us": p50s,
            "median_p50_us": statistics.median(p50s),
            "median_p99_us": statistics.median(p(x["latencies"], 99) for x in rs),
        }
        if k != "python":
            summary[k]["daemon_cpu_us_per_read"] = statistics.median(x["daemon_cpu"] / args.reads * 1e6 for x in rs)
            summary[k]["stats"] = rs[-1]["stats"]
    med = {k: summary[k]["median_p50_us"] for k in rows}
    host = summary["host"]
    print(f"host: {host.get('cpu_model')}, {host.get('cpus')} CPUs, load {host.get('loadavg_start')}")
    for k in ("this", "base", "python"):
        s = summary[k]
        extra = f"  daemon CPU {s['daemon_cpu_us_per_read']:.0f} µs/read" if "stats" in s else ""
        print(f"{k:7s} p50 per round {', '.join(f'{v:.0f}' for v in s['p50_us'])}  median {med[k]:.0f} µs{extra}")
        if "stats" in s:
            print(f"        .stats moved: {json.dumps(s['stats'], sort_keys=True)}")
    print(f"this / base {med['this'] / med['base']:.2f}x   this / python-blosc2 {med['this'] / med['python']:.2f}x")
    with open(os.path.join(args.workdir, "results.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    benchlib.run_main(main)
