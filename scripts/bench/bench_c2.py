#!/usr/bin/env python3
"""Caterva2 benchmark of blosc2fs beside python-blosc2's C2Array (issue 26, point 5).

One command, one table, WORKDIR/results.json:

    cargo build --release -j2
    python3 scripts/bench/bench_c2.py [--workdir /tmp/blosc2fs-c2bench] [--repeats 3] [--size-gib 1.0]
                                [--cache-size 128M] [--binary target/release/blosc2fs]
                                [--python .venv/bin/python] [--corpus DIR] [--random-reads 50]
                                [--cold-mounts 10] [--strict]

(also reachable as `scripts/bench/bench_remote.py --protocols caterva2`.)

What it sets up (all on 127.0.0.1, all children of this process, all stopped at exit):

- corpus: bench.py's perf field, zstd.b2nd only (default cparams: ZSTD clevel 5 + SHUFFLE,
  8 MiB chunks of 128 x 8192, 128 KiB blocks) and raw.bin, the expected bytes, in
  WORKDIR/corpus-<rows>x8192/ (bench.py's generator and manifest format, so bench.py and
  bench_remote.py reuse it and the other way round: --corpus DIR names an existing one,
  e.g. /tmp/blosc2fs-rbench/corpus-16384x8192, which is then only read);
- a Caterva2 server: `cat2-server --listen 127.0.0.1:PORT --statedir WORKDIR/c2/state` run in
  WORKDIR/c2 beside a caterva2-server.toml saying `[server] login = false`; the dataset is
  WORKDIR/c2/state/public/zstd.b2nd (a hard link to the corpus file, a copy across file
  systems), i.e. `@public/zstd.b2nd`. Its file stays warm in the page cache: the clients are
  what is measured, each of their runs is cold (a fresh mount, a fresh process).

Measured, A/B alternated (blosc2fs, python-blosc2, blosc2fs, ...), medians of --repeats:

    verify    once, untimed: the mount's MNT/zstd.b2nd/data hashes (sha256) to raw.bin's, and
              the first python-blosc2 scan equals raw.bin (numpy compare, after its timing)
    scan      blosc2fs: `blosc2fs mount c2+http://127.0.0.1:PORT/@public MNT -f --cache-size C`
              then `dd if=MNT/zstd.b2nd/data of=/dev/null bs=1M` (GB/s of the dataset's
              uncompressed bytes from dd's own seconds); the daemon's CPU (utime+stime of
              /proc/PID/stat around the dd), the server's CPU over the same span, and the
              requests of the scan by endpoint (MNT/.stats remote.endpoints, before/after)
              python-blosc2: `blosc2.C2Array("@public/zstd.b2nd", urlbase=URL)[:]` in a fresh
              process (import excluded), its process CPU (getrusage: the whole process, imports
              included; and process_time around the scan alone), the server's CPU, and
              the array's traffic counter (requests, bytes)
    decode    for scale: C-Blosc2's own 1-thread decode of the same file, local:
              `blosc2.set_nthreads(1); blosc2.open(file)[:]` (median of 3 in one process), and
              the same with python-blosc2's default thread count
    random    cold random 4 KiB preads of MNT/zstd.b2nd/data: (a) --random-reads far-apart
              offsets on one fresh mount (each in a chunk no other read touches), the
              requests (info + fetch + slice of .stats remote.endpoints) each pread cost,
              counted right after it and again after 100 ms (anything it set off late);
              (b) --cold-mounts fresh mounts, one pread each: the same count for the pread
              alone and for open + pread (the dataset's info and index included)

Targets (PASS/FAIL): scan >= 1.5x python-blosc2's C2Array[:] (GB/s); a cold random 4 KiB
pread costs <= 3 requests (max over (a) and (b)'s pread-alone counts).

Exit status: 0 when it ran (targets may FAIL; --strict makes a FAIL exit 1), 2 when a
measurement could not be made (the error text is in the table and JSON).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import time
import urllib.request
from typing import Any

from benchlib import (
    GIB,
    MIB,
    REPO,
    Attempts,
    BenchError,
    Json,
    Mount,
    binary_missing,
    busy_load,
    cleanup_all,
    cleanup_mountpoint,
    corpus_config,
    dd_reported,
    fmt,
    free_port,
    gbps,
    host_env,
    median,
    open_run_dir,
    percentile,
    run_main,
    run_worker,
    save_results,
    spawn,
    stats_changes,
    tail,
    try_proc_cpu_seconds,
    wait_port,
    warm_file,
    worker_versions,
)
from corpus import ensure_corpus

NAME = "zstd"
ROOT = "@public"
SCAN_TARGET = 1.5
REQUEST_TARGET = 3
RANDOM_SIZE = 4096
RANDOM_SEED = 20240611
SETTLE_S = 0.1
COUNTED = ("info", "fetch", "slice")


# ---------------------------------------------------------------- worker (python-blosc2 side)


def worker_main(req: dict[str, Any]) -> dict[str, Any]:
    import resource

    import blosc2
    import numpy as np

    op = req["op"]
    if op == "version":
        import caterva2
        import httpx

        return worker_versions(caterva2, httpx)

    if op == "c2scan":
        c0, t0 = time.process_time(), time.perf_counter()
        arr = blosc2.C2Array(req["path"], urlbase=req["urlbase"])
        data = arr[:]
        dt, c1 = time.perf_counter() - t0, time.process_time()
        ru = resource.getrusage(resource.RUSAGE_SELF)
        res = {
            "seconds": dt,
            "nbytes": int(data.nbytes),
            "cpu_s": ru.ru_utime + ru.ru_stime,
            "scan_cpu_s": c1 - c0,
            "maxrss_mib": ru.ru_maxrss / 1024.0,
            "requests": arr.traffic.requests,
            "bytes_fetched": arr.traffic.nbytes,
            "nthreads": blosc2.nthreads,
        }
        if req.get("raw"):
            expect = np.fromfile(req["raw"], dtype=data.dtype).reshape(data.shape)
            res["equal"] = bool(np.array_equal(data, expect))
        return res

    if op == "decode":
        out: Json = {}
        default_threads = blosc2.nthreads
        for label, n in (("1thread", 1), ("default", default_threads)):
            blosc2.set_nthreads(n)
            runs = []
            for _ in range(req.get("repeats", 3)):
                arr = blosc2.open(req["path"])
                t0 = time.perf_counter()
                data = arr[:]
                runs.append(time.perf_counter() - t0)
                nbytes = int(data.nbytes)
                del data, arr
            s = sorted(runs)[len(runs) // 2]
            out[label] = {"nthreads": n, "seconds": s, "runs": runs, "gbps": nbytes / s / 1e9}
        blosc2.set_nthreads(default_threads)
        return out

    raise ValueError(f"unknown worker op {op}")


def worker(python: str, req: Json) -> Json:
    """`worker_main(req)` in a subprocess of `python`."""
    return run_worker(python, req, script=os.path.abspath(__file__), timeout=1800)


# ---------------------------------------------------------------- server


class Cat2Server:
    """cat2-server on 127.0.0.1 with login off, serving STATEDIR/public as @public."""

    def __init__(self, exe: str, workdir: str, dataset: str) -> None:
        self.dir = os.path.join(workdir, "c2")
        self.state = os.path.join(self.dir, "state")
        public = os.path.join(self.state, "public")
        os.makedirs(public, exist_ok=True)
        with open(os.path.join(self.dir, "caterva2-server.toml"), "w") as f:
            f.write("# written by scripts/bench/bench_c2.py\n[server]\nlogin = false\n")
        target = os.path.join(public, f"{NAME}.b2nd")
        if os.path.lexists(target):
            os.unlink(target)
        try:
            os.link(dataset, target)
        except OSError:
            shutil.copyfile(dataset, target)
        self.dataset = target
        self.port = free_port()
        self.urlbase = f"http://127.0.0.1:{self.port}/"
        self.log = os.path.join(workdir, "cat2-server.log")
        env = dict(os.environ)
        env.pop("CATERVA2_SECRET", None)
        self.proc = spawn(
            [exe, "--listen", f"127.0.0.1:{self.port}", "--statedir", self.state], self.log, cwd=self.dir, env=env
        )
        wait_port(self.port, self.proc, "cat2-server", self.log, seconds=60)
        # The port opens once the app has started; still, wait for an answer.
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{self.urlbase}api/info/{ROOT}/{NAME}.b2nd", timeout=5) as r:
                    self.info = json.loads(r.read())
                break
            except OSError as e:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise BenchError(f"cat2-server: no answer to api/info ({e}): {tail(self.log, 1500)}") from e
                time.sleep(0.2)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def cpu(self) -> float | None:
        return try_proc_cpu_seconds(self.pid)


# ---------------------------------------------------------------- measurements


def endpoints(st: dict[str, Any] | None) -> dict[str, Any]:
    return dict(((st or {}).get("remote") or {}).get("endpoints") or {})


def counted(a: dict[str, Any] | None, b: dict[str, Any] | None) -> int | None:
    if a is None or b is None:
        return None
    ea, eb = endpoints(a), endpoints(b)
    return int(sum(eb.get(k, 0) - ea.get(k, 0) for k in COUNTED))


def all_requests(a: dict[str, Any] | None, b: dict[str, Any] | None) -> int | None:
    if a is None or b is None:
        return None
    return int(((b.get("remote") or {}).get("requests", 0)) - ((a.get("remote") or {}).get("requests", 0)))


def ep_delta(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any] | None:
    if a is None or b is None:
        return None
    ea, eb = endpoints(a), endpoints(b)
    return {k: eb.get(k, 0) - ea.get(k, 0) for k in sorted(set(ea) | set(eb)) if eb.get(k, 0) - ea.get(k, 0)}


class Runner:
    def __init__(self, args: Any, server: Cat2Server, corpus: dict[str, Any], raw_path: str) -> None:
        self.args, self.server, self.corpus, self.raw_path = args, server, corpus, raw_path
        self.nbytes = corpus["nbytes"]
        self.source = f"c2+http://127.0.0.1:{server.port}/{ROOT}"

    def mount(self) -> Mount:
        """A fresh mount of the server's @public, mounted now; the caller closes it."""
        a = self.args
        return Mount(a.binary, self.source, a.mnt, a.log, a.cache_size, env=dict(os.environ), timeout=30).__enter__()

    def data_path(self, m: Mount) -> str:
        p = os.path.join(m.mnt, f"{NAME}.b2nd", "data")
        if not os.path.exists(p):
            raise BenchError(f"the mount of {self.source} has no {NAME}.b2nd/data: {sorted(os.listdir(m.mnt))[:20]}")
        return p

    @staticmethod
    def stats(m: Mount) -> Json | None:
        return m.try_stats()

    def verify(self) -> dict[str, Any]:
        """sha256 of the mount's data (a fresh mount) against raw.bin's; untimed."""

        def sha(path: str) -> Any:
            h = hashlib.sha256()
            n = 0
            with open(path, "rb", buffering=0) as f:
                while True:
                    b = f.read(4 * MIB)
                    if not b:
                        break
                    h.update(b)
                    n += len(b)
            return h.hexdigest(), n

        raw_sha, raw_n = sha(self.raw_path)
        m = self.mount()
        try:
            got_sha, got_n = sha(self.data_path(m))
        finally:
            m.close()
        if (got_sha, got_n) != (raw_sha, raw_n):
            raise BenchError(
                f"the mount's {NAME}.b2nd/data ({got_n} B, sha256 {got_sha[:16]}…) differs from "
                f"raw.bin ({raw_n} B, sha256 {raw_sha[:16]}…)"
            )
        return {"sha256": raw_sha, "nbytes": raw_n, "equal": True}

    def b2fs_scan(self) -> dict[str, Any]:
        m = self.mount()
        try:
            path = self.data_path(m)
            size = os.stat(path).st_size
            if size != self.nbytes:
                raise BenchError(f"{path}: size {size}, expected {self.nbytes}")
            s0 = self.stats(m)
            c0, v0 = try_proc_cpu_seconds(m.pid), self.server.cpu()
            t0 = time.perf_counter()
            n, dt = dd_reported(path)
            wall = time.perf_counter() - t0
            c1, v1 = try_proc_cpu_seconds(m.pid), self.server.cpu()
            if n != self.nbytes:
                raise BenchError(f"dd read {n} bytes of {path}, expected {self.nbytes}")
            s1 = self.stats(m)
            hwm = m.vm_hwm_mib()
        finally:
            m.close()
        rem = (s1 or {}).get("remote") or {}
        rem0 = (s0 or {}).get("remote") or {}
        return {
            "seconds": dt,
            "wall_with_dd_start": wall,
            "gbps": gbps(n, dt),
            "cpu_s": None if c0 is None or c1 is None else c1 - c0,
            "server_cpu_s": None if v0 is None or v1 is None else v1 - v0,
            "maxrss_mib": hwm,
            "endpoints": ep_delta(s0, s1),
            "requests": all_requests(s0, s1),
            "bytes_fetched": rem.get("bytes_fetched", 0) - rem0.get("bytes_fetched", 0),
            "stats": stats_changes(s0, s1) if s0 is not None and s1 is not None else None,
        }

    def py_scan(self, verify: bool) -> dict[str, Any]:
        v0 = self.server.cpu()
        req = {"op": "c2scan", "path": f"{ROOT}/{NAME}.b2nd", "urlbase": self.server.urlbase}
        if verify:
            req["raw"] = self.raw_path
        r = worker(self.args.python, req)
        v1 = self.server.cpu()
        if verify and not r.get("equal"):
            raise BenchError(f"python-blosc2 C2Array({req['path']})[:] differs from raw.bin")
        if r["nbytes"] != self.nbytes:
            raise BenchError(f"python-blosc2 C2Array[:] gave {r['nbytes']} bytes, expected {self.nbytes}")
        r["gbps"] = gbps(r["nbytes"], r["seconds"])
        # Includes the verify compare when verifying: only the unverified runs' server CPU is clean.
        r["server_cpu_s"] = None if v0 is None or v1 is None else v1 - v0
        return r

    def random_offsets(self, count: int, salt: int = 0) -> list[int]:
        """`count` 4 KiB-aligned offsets, each in a chunk no other one touches (when there are enough)."""
        chunks = self.corpus["files"][NAME]["chunks"]
        cols = self.corpus["cols"]
        rng = random.Random(RANDOM_SEED + salt)
        if chunks[1] == cols:
            span = chunks[0] * cols * 8  # a chunk is one contiguous byte range of the data
        else:
            span = max(RANDOM_SIZE, self.nbytes // max(1, count))
        nspans = max(1, self.nbytes // span)
        picks = rng.sample(range(nspans), min(count, nspans))
        while len(picks) < count:
            picks.append(rng.randrange(nspans))
        out = []
        for c in picks:
            lo = c * span
            hi = min(self.nbytes, lo + span) - RANDOM_SIZE
            out.append(rng.randrange(lo // RANDOM_SIZE, hi // RANDOM_SIZE + 1) * RANDOM_SIZE)
        return out

    def check_bytes(self, pairs: list[tuple[int, bytes]]) -> None:
        with open(self.raw_path, "rb") as raw:
            for off, b in pairs:
                raw.seek(off)
                if raw.read(RANDOM_SIZE) != b:
                    raise BenchError(f"4 KiB pread at {off} differs from raw.bin (got {len(b)} bytes)")

    def random_same_mount(self, offsets: list[int]) -> dict[str, Any]:
        m = self.mount()
        samples, got = [], []
        try:
            path = self.data_path(m)
            fd = os.open(path, os.O_RDONLY)
            try:
                os.pread(fd, 1, 0)  # the dataset opened (info, index): not what the reads below cost
                time.sleep(SETTLE_S)
                for off in offsets:
                    s0 = self.stats(m)
                    t0 = time.perf_counter()
                    b = os.pread(fd, RANDOM_SIZE, off)
                    dt = time.perf_counter() - t0
                    s1 = self.stats(m)
                    time.sleep(SETTLE_S)
                    s2 = self.stats(m)
                    got.append((off, b))
                    samples.append(
                        {
                            "offset": off,
                            "seconds": dt,
                            "counted": counted(s0, s1),
                            "counted_settled": counted(s0, s2),
                            "requests": all_requests(s0, s2),
                            "endpoints": ep_delta(s0, s2),
                        }
                    )
            finally:
                os.close(fd)
        finally:
            m.close()
        self.check_bytes(got)
        return {"samples": samples}

    def random_fresh_mounts(self, offsets: list[int]) -> dict[str, Any]:
        samples, got = [], []
        for off in offsets:
            m = self.mount()
            try:
                s0 = self.stats(m)
                path = os.path.join(m.mnt, f"{NAME}.b2nd", "data")
                t0 = time.perf_counter()
                fd = os.open(path, os.O_RDONLY)
                try:
                    s1 = self.stats(m)
                    t1 = time.perf_counter()
                    b = os.pread(fd, RANDOM_SIZE, off)
                    t2 = time.perf_counter()
                    s2 = self.stats(m)
                    time.sleep(SETTLE_S)
                    s3 = self.stats(m)
                finally:
                    os.close(fd)
            finally:
                m.close()
            got.append((off, b))
            samples.append(
                {
                    "offset": off,
                    "open_seconds": t1 - t0,
                    "pread_seconds": t2 - t1,
                    "pread_counted": counted(s1, s2),
                    "pread_counted_settled": counted(s1, s3),
                    "open_pread_counted": counted(s0, s3),
                    "open_pread_requests": all_requests(s0, s3),
                    "open_endpoints": ep_delta(s0, s1),
                    "pread_endpoints": ep_delta(s1, s3),
                }
            )
        self.check_bytes(got)
        return {"samples": samples}


# ---------------------------------------------------------------- report


def summarize(results: dict[str, Any]) -> None:
    raw = results["raw"]
    b, p = raw["b2fs_scan"], raw["py_scan"]
    s = {}
    s["b2fs_gbps"] = median([x["gbps"] for x in b])
    s["b2fs_wall"] = median([x["seconds"] for x in b])
    s["b2fs_cpu"] = median([x.get("cpu_s") for x in b])
    s["b2fs_server_cpu"] = median([x.get("server_cpu_s") for x in b])
    s["b2fs_requests"] = median([x.get("requests") for x in b])
    s["b2fs_endpoints"] = b[-1].get("endpoints") if b else None
    s["b2fs_fetched_mib"] = median([x.get("bytes_fetched", 0) / MIB for x in b]) if b else None
    s["b2fs_rss"] = max([x["maxrss_mib"] for x in b if x.get("maxrss_mib") is not None], default=None)
    s["py_gbps"] = median([x["gbps"] for x in p])
    s["py_wall"] = median([x["seconds"] for x in p])
    s["py_cpu"] = median([x.get("cpu_s") for x in p])
    s["py_scan_cpu"] = median([x.get("scan_cpu_s") for x in p])
    clean = [x for x in p if not x.get("verified")] or p
    s["py_server_cpu"] = median([x.get("server_cpu_s") for x in clean])
    s["py_requests"] = median([x.get("requests") for x in p])
    s["py_fetched_mib"] = median([x.get("bytes_fetched", 0) / MIB for x in p]) if p else None
    s["py_rss"] = max([x["maxrss_mib"] for x in p if x.get("maxrss_mib") is not None], default=None)
    s["ratio"] = (s["b2fs_gbps"] / s["py_gbps"]) if s["b2fs_gbps"] and s["py_gbps"] else None
    dec = results.get("decode") or {}
    d1 = (dec.get("1thread") or {}).get("gbps")
    s["decode_1t_gbps"] = d1
    s["decode_default_gbps"] = (dec.get("default") or {}).get("gbps")
    s["decode_default_threads"] = (dec.get("default") or {}).get("nthreads")
    s["b2fs_vs_1t"] = (s["b2fs_gbps"] / d1) if s["b2fs_gbps"] and d1 else None
    s["py_vs_1t"] = (s["py_gbps"] / d1) if s["py_gbps"] and d1 else None

    same = (raw.get("random_same") or {}).get("samples") or []
    fresh = (raw.get("random_fresh") or {}).get("samples") or []

    def vals(xs: Any, k: Any) -> Any:
        return [x[k] for x in xs if x.get(k) is not None]

    s["same_counted_median"] = median(vals(same, "counted_settled"))
    s["same_counted_max"] = max(vals(same, "counted_settled"), default=None)
    s["same_counted_sync_max"] = max(vals(same, "counted"), default=None)
    s["same_p50_ms"] = percentile(vals(same, "seconds"), 50) * 1e3 if same else None
    s["same_p99_ms"] = percentile(vals(same, "seconds"), 99) * 1e3 if same else None
    s["same_n"] = len(same)
    s["fresh_pread_median"] = median(vals(fresh, "pread_counted_settled"))
    s["fresh_pread_max"] = max(vals(fresh, "pread_counted_settled"), default=None)
    s["fresh_open_pread_median"] = median(vals(fresh, "open_pread_counted"))
    s["fresh_open_pread_max"] = max(vals(fresh, "open_pread_counted"), default=None)
    s["fresh_all_median"] = median(vals(fresh, "open_pread_requests"))
    s["fresh_pread_p50_ms"] = percentile(vals(fresh, "pread_seconds"), 50) * 1e3 if fresh else None
    s["fresh_open_p50_ms"] = percentile(vals(fresh, "open_seconds"), 50) * 1e3 if fresh else None
    s["fresh_n"] = len(fresh)
    s["fresh_open_endpoints"] = fresh[-1].get("open_endpoints") if fresh else None
    s["fresh_pread_endpoints"] = fresh[-1].get("pread_endpoints") if fresh else None
    results["summary"] = s

    def status(v: Any, ok: Any) -> Any:
        return "n/a" if v is None else ("PASS" if ok else "FAIL")

    rmax = max([v for v in (s["same_counted_max"], s["fresh_pread_max"]) if v is not None], default=None)
    results["targets"] = {
        "scan": {
            "value": s["ratio"],
            "status": status(s["ratio"], s["ratio"] is not None and s["ratio"] >= SCAN_TARGET),
        },
        "random_requests": {"value": rmax, "status": status(rmax, rmax is not None and rmax <= REQUEST_TARGET)},
    }


def build_table(results: dict[str, Any]) -> str:
    s, c, env, t = results["summary"], results["config"], results["env"], results["targets"]
    f = results["corpus"]["files"][NAME]

    def ms(v: Any) -> Any:
        return fmt(v, ".2f")

    busy = busy_load(env) is not None
    lines = [
        f"### blosc2fs over Caterva2: {c['nbytes'] / GIB:.3g} GiB f8 field ({NAME}: {f['codec']} clevel "
        f"{f['clevel']} + {'+'.join(f['filters']) or 'no filter'}, chunks {'x'.join(map(str, f['chunks']))}, "
        f"blocks {'x'.join(map(str, f['blocks']))}, cratio {f['cratio']}), cat2-server on 127.0.0.1, "
        f"--cache-size {c['cache_size']}, medians of {c['repeats']}",
        "",
        f"host: {env.get('cpu_model', '?')}, {env['cpus']} CPUs, kernel {env['kernel']}; 1-min load "
        f"{env['loadavg_start']:.1f} → {env.get('loadavg_end', 0):.1f}" + (" (busy machine: noisy)" if busy else ""),
        f"python-blosc2 {env.get('blosc2')} (default nthreads {env.get('nthreads')}), caterva2 {env.get('caterva2')}, "
        f"httpx {env.get('httpx')}, python {env.get('python')}; verify: "
        + ("mount sha256 = raw.bin, python C2Array[:] = raw.bin" if results.get("verified") else "NOT verified"),
        "",
        "| scan (cold: fresh mount / fresh process) | blosc2fs mount + dd | python-blosc2 `C2Array(path, urlbase)[:]` |",
        "|---|---|---|",
        f"| wall s | {fmt(s['b2fs_wall'], '.3f')} | {fmt(s['py_wall'], '.3f')} |",
        f"| GB/s (uncompressed bytes) | {fmt(s['b2fs_gbps'])} | {fmt(s['py_gbps'])} |",
        f"| client CPU s (daemon utime+stime during dd / python process: whole, scan only) | {fmt(s['b2fs_cpu'])} | "
        f"{fmt(s['py_cpu'])}, {fmt(s['py_scan_cpu'])} |",
        f"| cat2-server CPU s during the scan | {fmt(s['b2fs_server_cpu'])} | {fmt(s['py_server_cpu'])} |",
        f"| requests per scan | {fmt(s['b2fs_requests'], '.0f')} "
        f"({', '.join(f'{k} {v}' for k, v in (s['b2fs_endpoints'] or {}).items()) or '—'}) "
        f"| {fmt(s['py_requests'], '.0f')} (C2Array.traffic) |",
        f"| MiB fetched per scan | {fmt(s['b2fs_fetched_mib'], '.1f')} | {fmt(s['py_fetched_mib'], '.1f')} |",
        f"| peak RSS MiB | {fmt(s['b2fs_rss'], '.0f')} (daemon) | {fmt(s['py_rss'], '.0f')} (holds the result) |",
        f"| **blosc2fs / python** | **{fmt(s['ratio'], '.2f', 'x')}** | |",
        f"| C-Blosc2 local decode, same file, `set_nthreads(1)`, `open(f)[:]` | {fmt(s['decode_1t_gbps'])} GB/s | "
        f"({s['decode_default_threads']} threads: {fmt(s['decode_default_gbps'])} GB/s) |",
        f"| scan / 1-thread local decode | {fmt(s['b2fs_vs_1t'], '.2f', 'x')} | {fmt(s['py_vs_1t'], '.2f', 'x')} |",
        "",
        "| cold random 4 KiB pread: requests (info+fetch+slice) | median | max | latency p50 / p99 ms |",
        "|---|---|---|---|",
        f"| (a) {s['same_n']} far-apart offsets, one fresh mount (dataset already open) | "
        f"{fmt(s['same_counted_median'], '.0f')} | {fmt(s['same_counted_max'], '.0f')} "
        f"(right after the pread: {fmt(s['same_counted_sync_max'], '.0f')}) | {ms(s['same_p50_ms'])} / {ms(s['same_p99_ms'])} |",
        f"| (b) {s['fresh_n']} fresh mounts, the pread alone | {fmt(s['fresh_pread_median'], '.0f')} | "
        f"{fmt(s['fresh_pread_max'], '.0f')} | {ms(s['fresh_pread_p50_ms'])} (p50) |",
        f"| (b) open + pread (the dataset's lookup, info and index included) | {fmt(s['fresh_open_pread_median'], '.0f')} | "
        f"{fmt(s['fresh_open_pread_max'], '.0f')} | open p50 {ms(s['fresh_open_p50_ms'])} |",
        f"| (b) open + pread, all endpoints (roots, list too) | {fmt(s['fresh_all_median'], '.0f')} | | "
        f"open: {', '.join(f'{k} {v}' for k, v in (s['fresh_open_endpoints'] or {}).items()) or '—'}; pread: "
        f"{', '.join(f'{k} {v}' for k, v in (s['fresh_pread_endpoints'] or {}).items()) or '—'} |",
        "",
        "| target | value | status |",
        "|---|---|---|",
        f"| scan ≥ {SCAN_TARGET}× python-blosc2 C2Array[:] | {fmt(t['scan']['value'], '.2f', 'x')} | {t['scan']['status']} |",
        f"| cold random 4 KiB pread ≤ {REQUEST_TARGET} requests (max of (a), (b) pread) | "
        f"{fmt(t['random_requests']['value'], '.0f')} | {t['random_requests']['status']} |",
    ]
    if results["errors"]:
        lines += ["", "errors:"] + [f"- {e}" for e in results["errors"]]
    return "\n".join(lines)


# ---------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description="blosc2fs over Caterva2 benchmark (see the module docstring)")
    ap.add_argument("--workdir", default="/tmp/blosc2fs-c2bench")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--size-gib", type=float, default=1.0)
    ap.add_argument("--cache-size", default="128M")
    ap.add_argument("--binary", default=os.path.join(REPO, "target", "release", "blosc2fs"))
    ap.add_argument(
        "--python",
        default=os.path.join(REPO, ".venv", "bin", "python"),
        help="interpreter with blosc2 (C2Array) and caterva2 (default: the project .venv)",
    )
    ap.add_argument("--cat2-server", help="cat2-server executable (default: next to --python, else on PATH)")
    ap.add_argument("--corpus", help="an existing corpus directory (bench.py layout) to read instead of making one")
    ap.add_argument("--random-reads", type=int, default=50)
    ap.add_argument("--cold-mounts", type=int, default=10)
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target FAILs")
    ap.add_argument("--_worker", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args._worker is not None:
        print(json.dumps(worker_main(json.loads(args._worker))))
        return 0

    args.binary = os.path.abspath(args.binary)
    args.workdir = os.path.abspath(args.workdir)
    if binary_missing(args.binary):
        return 2
    server_exe = args.cat2_server or os.path.join(os.path.dirname(args.python), "cat2-server")
    if not os.access(server_exe, os.X_OK):
        server_exe = shutil.which("cat2-server")
    if not server_exe:
        print("error: cat2-server not found (pip install 'caterva2[services]', or pass --cat2-server)", file=sys.stderr)
        return 2
    open_run_dir(args)

    env = host_env() | {"binary": args.binary, "cat2_server": server_exe}
    errors: list[str] = []
    results: dict[str, Any] = {}

    attempt = Attempts(errors)

    try:
        cleanup_mountpoint(args.mnt, args.binary)
        env |= worker(args.python, {"op": "version"})
        corpus = ensure_corpus(args.python, args.workdir, args.size_gib, names=[NAME], given=args.corpus)
        raw_path = os.path.join(corpus["dir"], "raw.bin")
        b2_path = os.path.join(corpus["dir"], "b2", f"{NAME}.b2nd")
        server = Cat2Server(server_exe, args.workdir, b2_path)
        print(f"cat2-server: {server.urlbase} (pid {server.pid}), {ROOT}/{NAME}.b2nd", flush=True)
        for pth in (raw_path, server.dataset):
            warm_file(pth)  # warm in the page cache: the server is not what is measured

        results = {
            "config": corpus_config(args, corpus)
            | {
                "random_reads": args.random_reads,
                "cold_mounts": args.cold_mounts,
                "random_size": RANDOM_SIZE,
                "workdir": args.workdir,
                "corpus_dir": corpus["dir"],
                "urlbase": server.urlbase,
                "dataset": f"{ROOT}/{NAME}.b2nd",
                "server_info": server.info,
            },
            "env": env,
            "corpus": {k: v for k, v in corpus.items() if k != "dir"},
            "raw": {"b2fs_scan": [], "py_scan": [], "random_same": None, "random_fresh": None},
            "errors": errors,
            "verified": False,
        }
        run = Runner(args, server, corpus, raw_path)

        print("decode: C-Blosc2 local decode of the same file (1 thread, default threads) ...", flush=True)
        results["decode"] = attempt("local decode", lambda: worker(args.python, {"op": "decode", "path": b2_path}))

        print("verify: the mount's data hashes to raw.bin's ...", flush=True)
        results["verify"] = attempt("verify mount", run.verify)

        raw = results["raw"]
        py_verified = False
        for rep in range(args.repeats):
            b = attempt("blosc2fs scan", run.b2fs_scan)
            if b:
                raw["b2fs_scan"].append(b)
            q = attempt("python-blosc2 scan", lambda: run.py_scan(verify=(rep == 0)))
            if q:
                q["verified"] = rep == 0
                py_verified = py_verified or rep == 0
                raw["py_scan"].append(q)

            def eps(x: Any) -> Any:
                return ", ".join(f"{k} {v}" for k, v in (x.get("endpoints") or {}).items())

            print(
                f"[{rep + 1}/{args.repeats}] blosc2fs {fmt(b and b['gbps'])} GB/s "
                f"({fmt(b and b['seconds'], '.3f')} s, daemon cpu {fmt(b and b.get('cpu_s'))} s, server cpu "
                f"{fmt(b and b.get('server_cpu_s'))} s, {b and b.get('requests')} req: {b and eps(b)})  "
                f"python {fmt(q and q['gbps'])} GB/s ({fmt(q and q['seconds'], '.3f')} s, cpu "
                f"{fmt(q and q.get('scan_cpu_s'))} s, server cpu {fmt(q and q.get('server_cpu_s'))} s, "
                f"{q and q.get('requests')} req)",
                flush=True,
            )
        results["verified"] = bool(results.get("verify")) and py_verified

        print(f"random: {args.random_reads} far-apart 4 KiB preads on one fresh mount ...", flush=True)
        raw["random_same"] = attempt(
            "random reads (one mount)", lambda: run.random_same_mount(run.random_offsets(args.random_reads))
        )
        print(f"random: {args.cold_mounts} fresh mounts, one 4 KiB pread each ...", flush=True)
        raw["random_fresh"] = attempt(
            "random reads (fresh mounts)", lambda: run.random_fresh_mounts(run.random_offsets(args.cold_mounts, salt=1))
        )
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        errors.append(str(e))
        if not results:
            return 2
    finally:
        cleanup_all()

    summarize(results)
    save_results(results, args.workdir, build_table, f"logs: {args.workdir}/*.log")
    if errors:
        return 2
    if args.strict and any(t["status"] == "FAIL" for t in results["targets"].values()):
        return 1
    return 0


if __name__ == "__main__":
    run_main(main)
