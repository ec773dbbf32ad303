#!/usr/bin/env python3
"""The "disk-cache" scenario of scripts/bench/bench.py: warm re-reads served by the disk cache.

Usage (as root: passthrough needs CAP_SYS_ADMIN; bench.py runs this module):

    .venv/bin/python scripts/bench/bench.py --scenario disk-cache --binary target/release/blosc2fs --repeats 3

Corpus: bench.py's (zstd.b2nd, lz4.b2nd, ceiling.b2nd and raw.bin, 1 GiB each), sources
in the page cache. Rows, each `dd if=... of=/dev/null bs=1M` (GB/s, daemon CPU-seconds
per GiB), median of --repeats:

  page-cache dd      raw.bin, its third read in a row (the reference)
  ceiling            ceiling.b2nd/data through a fresh mount without disk cache (today's
                     raw-field ceiling: no decoding, every byte through FUSE)
  per field (zstd, lz4):
    cold, cache off  a fresh mount, no --disk-cache
    cold, cache on   a fresh mount with an empty --disk-cache DIR; target ≤ 5 % slower than
                     cache off. The read only names the granules it touched; the writer
                     produces and writes them once the mount is quiet. "fill_seconds":
                     from the end of the dd until nothing is wanted and the entry is
                     complete (no re-read); "fill_cpu_per_gib": the daemon's CPU then
    warm passthrough the same mount once the entry is complete: the next opens are FUSE
                     passthrough; target ≥ 0.9× page-cache dd, ≤ 0.05 daemon CPU-s/GiB
    remount          a new mount on the same DIR: blocks decoded must stay 0
    no passthrough   a new mount with --no-passthrough: the daemon reads the cache file;
                     target ≥ 0.9× the ceiling row, blocks decoded 0

Results go to WORKDIR/disk_cache_results.json and a table on stdout.

The "epochs" scenario (`bench.py --scenario epochs`, `run_epochs`): a training loop's way of
reading. Per repeat, in one run: a page-cache dd of raw.bin (the reference), a cold dd of
zstd.b2nd/data through a fresh mount without --disk-cache, then a fresh mount with an empty
--disk-cache DIR read by --epochs dd's (default 6) back to back (no pause, no `.stats` read
between them): GB/s and daemon CPU-seconds per read, then (untimed) a `cmp` of the data with
raw.bin, and the mount's `.stats` (passthrough opens, cache-file opens, blocks decoded, bytes
handed and dropped). With --binary-b B, each repeat runs the cache-on loop twice, once with
--binary ("a") and once with B ("b"), in alternating order, so a change is compared with its
parent in the same run. Beside them C-Blosc2's own 1-thread decode speed of the same file and
the host's CPU model. Targets (issue 52): every read ≥ 0.9× the cold read without the cache,
reads 3 and 4 ≥ 0.9× the page-cache dd (served by passthrough as root). Results go to
WORKDIR/epochs_results.json.
"""

from __future__ import annotations

import atexit
import json
import os
import shlex
import shutil
import statistics
import subprocess
import time
from typing import Any

from benchlib import GIB, ForegroundDaemon, Json, Mount, cleanup_all, dd, gbps, host_env, run_worker, warm_file
from corpus import ensure_corpus

FIELDS = ("zstd", "lz4")


def _dd(path: str, nbytes: int, daemon: ForegroundDaemon | None) -> Json:
    cpu0 = daemon.cpu() if daemon else 0.0
    r = dd(path, nbytes)
    cpu = (daemon.cpu() - cpu0) if daemon else 0.0
    return {"gbps": gbps(nbytes, r["seconds"]), "seconds": r["seconds"], "daemon_cpu_per_gib": cpu / (nbytes / GIB)}


def _page_cache_dd(raw: str, nbytes: int) -> Json:
    """raw.bin read from the page cache (warmed twice first): the ceiling a re-read is held to."""
    for _ in range(2):
        warm_file(raw)
    return _dd(raw, nbytes, None)


def _cold_dd(args: Any, src: str, name: str, nbytes: int) -> Json:
    """MNT/name.b2nd/data read once through a fresh mount without the disk cache."""
    with Mount.of(args, src, extra=[]) as m:
        return _dd(m.data(name, nbytes), nbytes, m)


def _wait_filled(m: Any, timeout: int = 120) -> Any:
    """Wait until the disk cache has nothing queued or wanted; seconds taken, or None when
    the entry did not complete."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        d = m.stats().get("disk_cache", {})
        if d.get("queued_bytes", 1) == 0 and d.get("wanted_bytes", 1) == 0:
            return time.monotonic() - t0 if d.get("completed", 0) >= 1 else None
        time.sleep(0.02)
    return None


def run(args: Any) -> int:
    atexit.register(cleanup_all)
    corpus = ensure_corpus(args.python, args.workdir, args.size_gib)
    nbytes = corpus["nbytes"]
    src = os.path.join(corpus["dir"], "b2")
    raw = os.path.join(corpus["dir"], "raw.bin")
    cache_dir = os.path.join(args.workdir, "disk-cache")
    env = host_env()
    print(
        f"host: {env.get('cpu_model')} ({env['cpus']} CPUs), kernel {env['kernel']}, load {env['loadavg_start']:.2f}",
        flush=True,
    )
    for f in ("zstd", "lz4", "ceiling"):
        warm_file(os.path.join(src, f"{f}.b2nd"))
    rows: dict[str, list[Any]] = {}

    def add(name: Any, value: Any) -> None:
        rows.setdefault(name, []).append(value)
        print(f"  {name}: {value}", flush=True)

    for rep in range(args.repeats):
        print(f"repeat {rep + 1}/{args.repeats}", flush=True)
        add("page-cache dd", _page_cache_dd(raw, nbytes))
        add("ceiling", _cold_dd(args, src, "ceiling", nbytes))
        for field in FIELDS:
            add(f"{field} cold, cache off", _cold_dd(args, src, field, nbytes))
            shutil.rmtree(cache_dir, ignore_errors=True)
            dc = ["--disk-cache", cache_dir, "--disk-cache-size", "4G"]
            with Mount.of(args, src, extra=dc) as m:
                path = m.data(field, nbytes)
                cold = _dd(path, nbytes, m)
                cpu0 = m.cpu()
                fill_seconds = _wait_filled(m)
                add(
                    f"{field} cold, cache on",
                    cold | {"fill_seconds": fill_seconds, "fill_cpu_per_gib": (m.cpu() - cpu0) / (nbytes / GIB)},
                )
                first = _dd(path, nbytes, m)
                second = _dd(path, nbytes, m)
                d = m.stats()["disk_cache"]
                add(
                    f"{field} warm passthrough",
                    second | {"first": first["gbps"], "passthrough_opens": d["passthrough_opens"]},
                )
            with Mount.of(args, src, extra=dc) as m:
                path = m.data(field, nbytes)
                r = _dd(path, nbytes, m)
                s = m.stats()
                add(
                    f"{field} remount",
                    r
                    | {
                        "blocks_decoded": s["blocks_decoded"],
                        "passthrough_opens": s["disk_cache"]["passthrough_opens"],
                    },
                )
            with Mount.of(args, src, extra=dc + ["--no-passthrough"]) as m:
                path = m.data(field, nbytes)
                _dd(path, nbytes, m)
                r = _dd(path, nbytes, m)
                s = m.stats()
                add(
                    f"{field} no passthrough",
                    r | {"blocks_decoded": s["blocks_decoded"], "disk_hits": s["disk_cache"]["hits"]},
                )
    shutil.rmtree(cache_dir, ignore_errors=True)
    med = {
        k: {
            "gbps": statistics.median(v["gbps"] for v in vs),
            "daemon_cpu_per_gib": statistics.median(v["daemon_cpu_per_gib"] for v in vs),
            "runs": vs,
        }
        for k, vs in rows.items()
    }
    ref = med["page-cache dd"]["gbps"]
    ceiling = med["ceiling"]["gbps"]
    print("\nrow                         GB/s   daemon CPU-s/GiB   vs")
    for k, v in med.items():
        note = ""
        if "passthrough" in k and "no" not in k:
            note = f"{v['gbps'] / ref:.2f}x page-cache dd (target >= 0.9, CPU <= 0.05)"
        elif "no passthrough" in k:
            note = f"{v['gbps'] / ceiling:.2f}x ceiling (target >= 0.9), decoded {v['runs'][-1]['blocks_decoded']}"
        elif "remount" in k:
            note = f"decoded {v['runs'][-1]['blocks_decoded']}"
        elif "cache on" in k:
            off = med[k.replace("cache on", "cache off")]["gbps"]
            note = f"{v['gbps'] / off:.3f}x cache off (target >= 0.95)"
        print(f"{k:26s} {v['gbps']:6.2f}   {v['daemon_cpu_per_gib']:8.3f}        {note}")
    out = os.path.join(args.workdir, "disk_cache_results.json")
    with open(out, "w") as out_file:
        json.dump({"env": env, "rows": med}, out_file, indent=2)
    print(f"\nresults: {out}")
    return 0


def _median_row(runs: list[Json]) -> Json:
    return {
        "gbps": statistics.median(r["gbps"] for r in runs),
        "daemon_cpu_per_gib": statistics.median(r["daemon_cpu_per_gib"] for r in runs),
        "runs": runs,
    }


def _cache_loop(args: Any, binary: str, src: str, raw: str, nbytes: int, size: str) -> tuple[list[Json], Json]:
    """A fresh mount of `binary` over an empty cache DIR, read by args.epochs dd's back to back;
    then the data compared with raw.bin (untimed) and the mount's counters."""
    cache_dir = os.path.join(args.workdir, "disk-cache-epochs")
    shutil.rmtree(cache_dir, ignore_errors=True)
    extra = ["--disk-cache", cache_dir, "--disk-cache-size", size]
    with Mount(binary, src, args.mnt, args.log, args.cache_size, shlex.split(args.mount_args) + extra) as m:
        path = m.data("zstd", nbytes)
        reads = [_dd(path, nbytes, m) for _ in range(args.epochs)]
        exact = subprocess.run(["cmp", "-s", path, raw]).returncode == 0
        s = m.stats()
    shutil.rmtree(cache_dir, ignore_errors=True)
    d = s["disk_cache"]
    after = {
        "exact": exact,
        "passthrough_opens": d["passthrough_opens"],
        "cache_file_opens": d["cache_file_opens"],
        "blocks_decoded": s["blocks_decoded"],
        "hits": d["hits"],
        "fill_bytes": d["fill_bytes"],
        "handed_bytes": d.get("handed_bytes"),
        "deferred_bytes": d.get("deferred_bytes"),
        "completed": d["completed"],
    }
    return reads, after


def run_epochs(args: Any) -> int:
    """--epochs back-to-back reads of zstd.b2nd/data with --disk-cache, beside a cold read
    without it and a page-cache dd (see the module docstring)."""
    atexit.register(cleanup_all)
    corpus = ensure_corpus(args.python, args.workdir, args.size_gib, names=("zstd",))
    nbytes = corpus["nbytes"]
    src = os.path.join(corpus["dir"], "b2")
    raw = os.path.join(corpus["dir"], "raw.bin")
    b2 = os.path.join(src, "zstd.b2nd")
    env = host_env()
    c1 = run_worker(args.python, {"op": "cdecode", "path": b2, "nthreads": 1})
    env["c_blosc2_1thread_gbps"] = gbps(c1["nbytes"], c1["seconds"])
    print(
        f"host: {env.get('cpu_model')} ({env['cpus']} CPUs), kernel {env['kernel']}, "
        f"load {env['loadavg_start']:.2f}; C-Blosc2 1 thread: {env['c_blosc2_1thread_gbps']:.2f} GB/s zstd",
        flush=True,
    )
    warm_file(b2)
    rows: dict[str, list[Json]] = {}
    after: dict[str, list[Json]] = {}

    def add(name: str, value: Json) -> None:
        rows.setdefault(name, []).append(value)
        shown = {k: round(v, 3) if isinstance(v, float) else v for k, v in value.items()}
        print(f"  {name}: {shown}", flush=True)

    binaries = {"a": args.binary}
    if args.binary_b:
        binaries["b"] = os.path.abspath(args.binary_b)
    size = f"{max(4 << 30, 2 * nbytes) >> 20}M"
    for rep in range(args.repeats):
        print(f"repeat {rep + 1}/{args.repeats}, load {os.getloadavg()[0]:.2f}", flush=True)
        add("page-cache dd", _page_cache_dd(raw, nbytes))
        add("cold, cache off", _cold_dd(args, src, "zstd", nbytes))
        order = sorted(binaries) if rep % 2 == 0 else sorted(binaries, reverse=True)
        for tag in order:
            reads, last = _cache_loop(args, binaries[tag], src, raw, nbytes, size)
            prefix = f"{tag}: " if len(binaries) > 1 else ""
            for i, r in enumerate(reads):
                add(f"{prefix}read {i + 1}, cache on", r)
            after.setdefault(tag, []).append(last)
            print(f"  {prefix}after the loop: {last}", flush=True)
    med = {k: _median_row(vs) for k, vs in rows.items()}
    ref = med["page-cache dd"]["gbps"]
    off = med["cold, cache off"]["gbps"]
    print(f"\nbinaries: {binaries}")
    print(
        f"row                      GB/s [per round]   daemon CPU-s/GiB   vs (C-Blosc2 1 thread: "
        f"{env['c_blosc2_1thread_gbps']:.2f} GB/s)"
    )
    for k, v in med.items():
        note = ""
        if "read " in k:
            n = int(k.split("read ")[1].split(",")[0])
            note = f"{v['gbps'] / off:.2f}x cache off (target >= 0.9)"
            if n >= 3:
                note += f", {v['gbps'] / ref:.2f}x page-cache dd" + (" (target >= 0.9)" if n in (3, 4) else "")
        per = " ".join(f"{r['gbps']:.2f}" for r in v["runs"])
        print(f"{k:24s} {v['gbps']:6.2f} [{per}]   {v['daemon_cpu_per_gib']:6.3f}   {note}")
    for tag, lasts in after.items():
        print(f"after the loop ({tag}): exact in every round: {all(x['exact'] for x in lasts)}; last: {lasts[-1]}")
    env["loadavg_end"] = os.getloadavg()[0]
    out = os.path.join(args.workdir, "epochs_results.json")
    with open(out, "w") as out_file:
        json.dump({"env": env, "binaries": binaries, "rows": med, "after_the_loop": after}, out_file, indent=2)
    print(f"\nresults: {out}")
    return 0 if all(x["exact"] for lasts in after.values() for x in lasts) else 1
