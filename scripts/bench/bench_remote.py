#!/usr/bin/env python3
"""Remote benchmark of blosc2fs beside python-blosc2's own remote reading (issue 13, point 4).

One command, one table, WORKDIR/results.json:

    cargo build --release -j2 && cargo build --release -j2 --example delay_proxy
    python3 scripts/bench/bench_remote.py [--workdir /tmp/blosc2fs-rbench] [--repeats 3] [--delay-ms 20]
                                    [--mode auto|mount|cat] [--protocols http,s3] [--files zstd,lz4]
                                    [--cache-size 128M] [--python INTERPRETER] [--strict]

What it sets up (all on 127.0.0.1, all children of this process, all stopped at exit):

- corpus: the 1 GiB perf field of corpus.py (shared with bench.py: one work folder serves
  both): zstd.b2nd and lz4.b2nd (8 MiB chunks,
  128 KiB blocks) plus raw.bin, the expected bytes;
- nginx (`apt-get install -y nginx` when missing) in the foreground with a config written
  into WORKDIR/nginx, serving the corpus directory (Range, keep-alive, sendfile);
- an S3 API server (--s3-server), seeded through the S3 API (so it stores each ETag once):
  s3s-fs (default), a native one from crates.io (`cargo install s3s-fs --locked` into
  WORKDIR/tools when missing; the build time is reported), serving WORKDIR/s3root;
  s3rver (npm, Node; installed into WORKDIR/tools/node when missing); or `nginx`, which
  answers path-style GET/HEAD of /bench/KEY itself (signatures unchecked, no LIST, so
  blosc2fs mounts the object's URL): the clients' S3 code paths without a server cap.
  Measured here: s3s-fs streams bodies in 4 KiB reads and tops out near 0.08 GB/s per
  connection (0.2 with 4), s3rver near 0.3 (0.45), nginx > 1: the "server check" line
  of the report says which cap applied;
- examples/delay_proxy (built when missing): holds every request --delay-ms before
  forwarding it, in front of either server. Its no-delay throughput is measured first
  beside the direct one (parallel curl range downloads) so it is known not to be the cap.
- the python side runs in a worker subprocess of an interpreter with blosc2 4.14.1,
  fsspec, aiohttp, requests and s3fs: by default WORKDIR/pyenv, a venv made here (the
  project venv is left alone: s3fs pins a botocore the tests' boto3 does not accept).

Measured for each protocol (http, s3) x delay (0, --delay-ms) x file, A/B alternated
(blosc2fs, python-blosc2, blosc2fs, ...), median over --repeats. The servers' files stay
warm in the page cache (the server is fast; the clients are what is measured); each client
run is cold: a fresh process or a fresh mount.

    scan      blosc2fs: `blosc2fs mount URL MNT --cache-size C -f` then
              `dd if=MNT/.../data of=/dev/null bs=1M` (GB/s from dd's own bytes/seconds),
              daemon CPU seconds (utime+stime, /proc/PID/stat), daemon VmHWM, MNT/.stats;
              or, with --mode cat (or auto before mounting URLs exists),
              `blosc2fs cat URL --cache-size C > /dev/null` (wall, CPU and peak RSS from wait4)
              python-blosc2: `blosc2.open(URL)[:]` in a fresh process, GB/s
    random    blosc2fs (mount only): 200 random 4 KiB preads on a fresh mount, p50/p99
              python-blosc2: 200 random `arr[i, j]` after a cold open, p50/p99
    requests  through the delay proxy: requests and bytes per scan, each client

Targets (PASS/FAIL, per protocol x file): scan >= 1.5x python-blosc2 (no delay); random
p50 <= python-blosc2's (mount mode); blosc2fs peak RSS <= cache + 64 MiB; with the delay,
scan >= 0.5x the no-delay scan.

Credentials go to both clients through AWS_* in the environment (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL, AWS_ALLOW_HTTP), with
AWS_EC2_METADATA_DISABLED=true so neither probes instance metadata.

Exit status: 0 when it ran (targets may FAIL; --strict makes a FAIL exit 1), 2 when a
measurement could not be made (the error text is in the table and JSON).

Caterva2 (issue 26): `--protocols caterva2` runs scripts/bench/bench_c2.py instead (blosc2fs mounting
a local cat2-server beside python-blosc2's C2Array; its docstring describes it), in
WORKDIR/caterva2 with this corpus, forwarding --repeats, --size-gib, --cache-size, --binary, --strict.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import struct
import subprocess
import sys
import time
from typing import Any

from benchlib import (
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
    gbps,
    host_env,
    median,
    open_run_dir,
    parse_size,
    percentile,
    run_main,
    run_timed,
    run_worker,
    save_results,
    stats_changes,
    stop,
    try_proc_cpu_seconds,
    warm_file,
    worker_versions,
)
from corpus import corpus_dir, ensure_corpus
from remote_servers import (
    BUCKET,
    Nginx,
    Proxy,
    S3rver,
    S3sFs,
    ensure_nginx,
    ensure_proxy,
    ensure_python,
    ensure_s3rver,
    ensure_s3s,
    s3_env,
    server_throughput,
)

FILES = ("zstd", "lz4", "narrow")
RANDOM_SEED = 20240611
RANDOM_READS = 200
RANDOM_SIZE = 4096
RSS_SLACK_MIB = 64
SCAN_TARGET = 1.5
DELAY_TARGET = 0.5


def random_plan(nbytes: int, count: int) -> list[int]:
    """`count` random 4 KiB-aligned offsets (fixed seed)."""
    rng = random.Random(RANDOM_SEED)
    return [rng.randrange(nbytes // RANDOM_SIZE) * RANDOM_SIZE for _ in range(count)]


# ---------------------------------------------------------------- worker (python-blosc2 side)


def worker_main(req: dict[str, Any]) -> dict[str, Any]:
    import blosc2
    import numpy as np

    op = req["op"]
    if op == "version":
        import fsspec
        import s3fs

        return worker_versions(fsspec, s3fs)

    if op == "seed_s3":
        # Through the S3 API, so the server records each object's ETag at upload.
        import s3fs

        fs = s3fs.S3FileSystem()
        if not fs.exists(req["bucket"]):
            fs.mkdir(req["bucket"])
        out: Json = {}
        for key, path in req["files"].items():
            target = f"{req['bucket']}/{key}"
            if fs.exists(target) and fs.size(target) == os.path.getsize(path):
                continue
            t0 = time.perf_counter()
            fs.put_file(path, target)
            out[key] = {"seconds": time.perf_counter() - t0, "size": fs.size(target)}
        return out

    if op == "scan":
        t0 = time.perf_counter()
        arr = blosc2.open(req["url"])
        data = arr[:]
        dt = time.perf_counter() - t0
        ru = __import__("resource").getrusage(__import__("resource").RUSAGE_SELF)
        res = {
            "seconds": dt,
            "nbytes": int(data.nbytes),
            "cpu_s": ru.ru_utime + ru.ru_stime,
            "maxrss_mib": ru.ru_maxrss / 1024.0,
        }
        if req.get("raw"):
            expect = np.fromfile(req["raw"], dtype=data.dtype).reshape(data.shape)
            res["equal"] = bool(np.array_equal(data, expect))
        return res

    if op == "random":
        t0 = time.perf_counter()
        arr = blosc2.open(req["url"])
        t_open = time.perf_counter() - t0
        lat, values = [], []
        for i, j in req["coords"]:
            t0 = time.perf_counter()
            v = arr[i, j]
            lat.append(time.perf_counter() - t0)
            values.append(float(v))
        return {"latencies": lat, "values": values, "open_seconds": t_open}

    raise ValueError(f"unknown worker op {op}")


def worker(python: str, req: Json, env: dict[str, str] | None = None) -> Json:
    """`worker_main(req)` in a subprocess of `python` with the environment `env`."""
    return run_worker(python, req, script=os.path.abspath(__file__), env=env, timeout=1800)


# ---------------------------------------------------------------- endpoints


class Endpoint:
    """Where one client reads one file: the URL and the environment that goes with it."""

    def __init__(
        self, protocol: str, port: int, name: str, creds: tuple[str, str] = ("", ""), listable: bool = True
    ) -> None:
        self.protocol, self.port, self.name = protocol, port, name
        if protocol == "http":
            self.url = f"http://127.0.0.1:{port}/b2/{name}.b2nd"
            self.mount_url = self.url
            self.env = dict(os.environ, AWS_EC2_METADATA_DISABLED="true")
        else:
            self.url = f"s3://{BUCKET}/{name}.b2nd"
            self.mount_url = f"s3://{BUCKET}/" if listable else self.url
            self.env = s3_env(port, creds)


# ---------------------------------------------------------------- measurements


def verify_cat(args: Any, ep: Endpoint, raw_path: str) -> None:
    """`blosc2fs cat URL` must give raw.bin's bytes exactly (untimed)."""
    cmd = [args.binary, "cat", ep.url, "--cache-size", args.cache_size]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ep.env)
    assert p.stdout is not None and p.stderr is not None
    pos = 0
    bad = None
    with open(raw_path, "rb", buffering=0) as raw:
        while True:
            x = p.stdout.read(4 * MIB)
            y = raw.read(len(x)) if x else raw.read(1)
            if x != y and bad is None:
                bad = f"differs from raw.bin at or after byte {pos} (cat gave {len(x)} B there)"
            if not x:
                break
            pos += len(x)
    err = p.stderr.read()
    p.wait()
    if p.returncode != 0:
        raise BenchError(f"`{' '.join(cmd)}` failed (exit {p.returncode}): {err.decode(errors='replace')[-1500:]}")
    if bad:
        raise BenchError(f"`blosc2fs cat {ep.url}` {bad}")


class Runner:
    def __init__(self, args: Any, corpus: Any, python: Any, raw_path: Any) -> None:
        self.args, self.corpus, self.python, self.raw_path = args, corpus, python, raw_path
        self.nbytes = corpus["nbytes"]

    # -- blosc2fs

    def b2fs_scan(self, ep: Endpoint, proxy: Proxy | None) -> dict[str, Any]:
        p0 = proxy.stats() if proxy else None
        if self.args.mode == "mount":
            r = self.mount_scan(ep)
        else:
            t = run_timed([self.args.binary, "cat", ep.url, "--cache-size", self.args.cache_size], env=ep.env)
            r = {"seconds": t["seconds"], "cpu_s": t["cpu"], "maxrss_mib": t["maxrss_mib"]}
            r["gbps"] = gbps(self.nbytes, r["seconds"])
            r["how"] = "cat"
        if proxy and p0 is not None:
            r["proxy"] = {k: v - p0.get(k, 0) for k, v in proxy.stats().items()}
        return r

    def mount_data_path(self, m: Mount, ep: Endpoint) -> str:
        for cand in (os.path.join(m.mnt, f"{ep.name}.b2nd", "data"), os.path.join(m.mnt, "data")):
            if os.path.exists(cand):
                return cand
        raise BenchError(
            f"the mount of {ep.mount_url} presents neither {ep.name}.b2nd/data nor data: "
            f"{sorted(os.listdir(m.mnt))[:20]}"
        )

    def mount(self, ep: Endpoint) -> Mount:
        """A fresh `blosc2fs mount URL MNT -f` with the endpoint's environment (started by `with`)."""
        a = self.args
        return Mount(a.binary, ep.mount_url, a.mnt, a.log, a.cache_size, env=ep.env, timeout=30)

    def mount_scan(self, ep: Endpoint) -> Json:
        with self.mount(ep) as m:
            path = self.mount_data_path(m, ep)
            size = os.stat(path).st_size
            if size != self.nbytes:
                raise BenchError(f"{path}: size {size}, expected {self.nbytes}")
            s0 = m.try_stats()
            c0 = try_proc_cpu_seconds(m.pid)
            n, dt = dd_reported(path)
            c1 = try_proc_cpu_seconds(m.pid)
            if n != self.nbytes:
                raise BenchError(f"dd read {n} bytes of {path}, expected {self.nbytes}")
            s1 = m.try_stats()
            hwm = m.vm_hwm_mib()
        return {
            "how": "mount+dd",
            "seconds": dt,
            "gbps": gbps(n, dt),
            "cpu_s": None if c0 is None or c1 is None else c1 - c0,
            "maxrss_mib": hwm,
            "stats": stats_changes(s0, s1) if s0 is not None and s1 is not None else None,
        }

    def mount_random(self, ep: Endpoint, offsets: list[int]) -> Json:
        with self.mount(ep) as m:
            path = self.mount_data_path(m, ep)
            s0 = m.try_stats()
            fd = os.open(path, os.O_RDONLY)
            lat, got = [], []
            try:
                for off in offsets:
                    t0 = time.perf_counter()
                    b = os.pread(fd, RANDOM_SIZE, off)
                    lat.append(time.perf_counter() - t0)
                    got.append(b)
            finally:
                os.close(fd)
            s1 = m.try_stats()
        with open(self.raw_path, "rb") as raw:
            for off, b in zip(offsets, got):
                raw.seek(off)
                if raw.read(RANDOM_SIZE) != b:
                    raise BenchError(f"{path}: 4 KiB pread at {off} differs from raw.bin (got {len(b)} bytes)")
        return {"latencies": lat, "stats": stats_changes(s0, s1) if s0 is not None and s1 is not None else None}

    # -- python-blosc2

    def py_scan(self, ep: Endpoint, proxy: Proxy | None, verify: bool) -> dict[str, Any]:
        p0 = proxy.stats() if proxy else None
        req = {"op": "scan", "url": ep.url}
        if verify:
            req["raw"] = self.raw_path
        r = worker(self.python, req, env=ep.env)
        if verify and not r.get("equal"):
            raise BenchError(f"python-blosc2 open({ep.url})[:] differs from raw.bin")
        r["gbps"] = gbps(r["nbytes"], r["seconds"])
        if proxy and p0 is not None:
            r["proxy"] = {k: v - p0.get(k, 0) for k, v in proxy.stats().items()}
        return r

    def py_random(self, ep: Endpoint, offsets: list[int]) -> dict[str, Any]:
        cols = self.corpus["cols"]
        coords = [divmod(off // 8, cols) for off in offsets]
        r = worker(self.python, {"op": "random", "url": ep.url, "coords": coords}, env=ep.env)
        with open(self.raw_path, "rb") as raw:
            for off, v, (i, j) in zip(offsets, r["values"], coords):
                raw.seek(off)
                (expect,) = struct.unpack("<d", raw.read(8))
                if v != expect:
                    raise BenchError(f"python-blosc2 {ep.url}[{i}, {j}] = {v}, raw.bin has {expect}")
        r.pop("values")
        return r


# ---------------------------------------------------------------- report


def summarize(results: dict[str, Any], cache_bytes: int) -> None:
    raw = results["raw"]
    summary: Json = {}
    targets: Json = {}

    def ratio(a: Any, b: Any) -> Any:
        return (a / b) if (a is not None and b) else None

    for col, r in raw["cells"].items():
        d = {}
        for delay in ("0", "d"):
            b, p = r[f"b2fs_scan_{delay}"], r[f"py_scan_{delay}"]
            d[f"b2fs_gbps_{delay}"] = median([x["gbps"] for x in b])
            d[f"py_gbps_{delay}"] = median([x["gbps"] for x in p])
            d[f"ratio_{delay}"] = ratio(d[f"b2fs_gbps_{delay}"], d[f"py_gbps_{delay}"])
            d[f"b2fs_cpu_{delay}"] = median([x.get("cpu_s") for x in b])
            d[f"b2fs_wall_{delay}"] = median([x.get("seconds") for x in b])
            d[f"py_cpu_{delay}"] = median([x.get("cpu_s") for x in p])
            d[f"b2fs_rss_{delay}"] = max([x["maxrss_mib"] for x in b if x.get("maxrss_mib") is not None], default=None)
            d[f"py_rss_{delay}"] = max([x["maxrss_mib"] for x in p if x.get("maxrss_mib") is not None], default=None)
            d[f"b2fs_requests_{delay}"] = median([x["proxy"]["requests"] for x in b if "proxy" in x])
            d[f"py_requests_{delay}"] = median([x["proxy"]["requests"] for x in p if "proxy" in x])
            d[f"b2fs_stats_{delay}"] = b[-1].get("stats") if b else None
        d["b2fs_delay_ratio"] = ratio(d["b2fs_gbps_d"], d["b2fs_gbps_0"])
        d["py_delay_ratio"] = ratio(d["py_gbps_d"], d["py_gbps_0"])
        mlat = [v for x in r["b2fs_random"] for v in x["latencies"]]
        plat = [v for x in r["py_random"] for v in x["latencies"]]
        d["b2fs_p50"] = percentile(mlat, 50) if mlat else None
        d["b2fs_p99"] = percentile(mlat, 99) if mlat else None
        d["py_p50"] = percentile(plat, 50) if plat else None
        d["py_p99"] = percentile(plat, 99) if plat else None
        d["py_open_s"] = median([x["open_seconds"] for x in r["py_random"]])
        d["random_ratio"] = ratio(d["b2fs_p50"], d["py_p50"])
        d["b2fs_rss"] = max([v for v in (d["b2fs_rss_0"], d["b2fs_rss_d"]) if v is not None], default=None)
        summary[col] = d

        t: Json = {}

        def target(key: Any, value: Any, ok: Any, display: Any) -> None:
            t[key] = {
                "value": value,
                "status": "n/a" if value is None else ("PASS" if ok else "FAIL"),
                "display": display,
            }

        v = d["ratio_0"]
        target("scan", v, v is not None and v >= SCAN_TARGET, fmt(v, ".2f", "x"))
        v = d["random_ratio"]
        target("random", v, v is not None and v <= 1.0, fmt(v, ".2f", "x"))
        v = d["b2fs_rss"]
        limit = cache_bytes / MIB + RSS_SLACK_MIB
        target("rss", v, v is not None and v <= limit, f"{fmt(v, '.0f')}/{limit:.0f}")
        v = d["b2fs_delay_ratio"]
        target("delay", v, v is not None and v >= DELAY_TARGET, fmt(v, ".2f", "x"))
        targets[col] = t
    results["summary"] = summary
    results["targets"] = targets


def build_table(results: dict[str, Any]) -> str:
    s, c, env = results["summary"], results["config"], results["env"]
    cols = list(s)
    how = "mount + dd" if c["mode"] == "mount" else "`blosc2fs cat URL > /dev/null`"
    delay = c["delay_ms"]
    lines = [
        f"### blosc2fs remote benchmark: {c['nbytes'] / 2**30:.3g} GiB f8 field, blosc2fs via {how}, "
        f"--cache-size {c['cache_size']}, medians of {c['repeats']}",
        "",
        f"python-blosc2 {env.get('blosc2')} (fsspec {env.get('fsspec')}, s3fs {env.get('s3fs')}), "
        f"nginx {env.get('nginx_version', '?')}, S3: {c.get('s3_server')}, {env['cpus']} CPUs, "
        f"1-min load {env['loadavg_start']:.1f} → {env.get('loadavg_end', 0):.1f}"
        + (" (busy machine: noisy)" if busy_load(env) is not None else ""),
        "",
    ]
    sv = results.get("servers", {})
    if sv:
        lines.append(
            "server check (curl range GETs of raw.bin, GB/s; the proxy's CPU per GiB): "
            + ", ".join(f"{k} {fmt(v)}" for k, v in sv.items() if isinstance(v, (int, float)) and k != "s3s_build_s")
        )
        if sv.get("s3s_build_s") is not None:
            lines.append(f"s3s-fs build: {sv['s3s_build_s']:.0f} s")
        lines.append("")
    lines.append("| | " + " | ".join(cols) + " |")
    lines.append("|---" * (len(cols) + 1) + "|")

    def row(label: str, values: Any) -> None:
        lines.append(f"| {label} | " + " | ".join(str(v) for v in values) + " |")

    def get(k: Any) -> Any:
        return [s[col].get(k) for col in cols]

    def ms(v: Any) -> Any:
        return None if v is None else v * 1e3

    row("blosc2fs scan GB/s", [fmt(v) for v in get("b2fs_gbps_0")])
    row("python-blosc2 `open(url)[:]` GB/s", [fmt(v) for v in get("py_gbps_0")])
    row("**blosc2fs / python**", [fmt(v, ".2f", "x") for v in get("ratio_0")])
    row(f"blosc2fs scan, {delay} ms delay, GB/s", [fmt(v) for v in get("b2fs_gbps_d")])
    row(f"python-blosc2, {delay} ms delay, GB/s", [fmt(v) for v in get("py_gbps_d")])
    row(f"blosc2fs / python, {delay} ms", [fmt(v, ".2f", "x") for v in get("ratio_d")])
    row(f"blosc2fs {delay} ms / no delay", [fmt(v, ".2f", "x") for v in get("b2fs_delay_ratio")])
    row(f"python {delay} ms / no delay", [fmt(v, ".2f", "x") for v in get("py_delay_ratio")])
    row(
        "blosc2fs CPU s / wall s (no delay)",
        [f"{fmt(a)} / {fmt(b)}" for a, b in zip(get("b2fs_cpu_0"), get("b2fs_wall_0"))],
    )
    row("python CPU s (whole process, no delay)", [fmt(v) for v in get("py_cpu_0")])
    row("blosc2fs peak RSS MiB", [fmt(v, ".0f") for v in get("b2fs_rss")])
    row("python peak RSS MiB (holds the 1 GiB result)", [fmt(v, ".0f") for v in get("py_rss_0")])
    row(
        "requests per scan: blosc2fs / python",
        [f"{fmt(a, '.0f')} / {fmt(b, '.0f')}" for a, b in zip(get("b2fs_requests_d"), get("py_requests_d"))],
    )
    if c["mode"] == "mount":
        keep = re.compile(r"get|head|list|request|remote|prefetch")

        def counters(st: Any) -> Any:
            return ", ".join(f"{k} {v}" for k, v in (st or {}).items() if keep.search(k)) or "—"

        row("blosc2fs .stats counters, one scan (no delay)", [counters(v) for v in get("b2fs_stats_0")])
    row(
        "random 4 KiB pread p50 / p99 ms (mount)",
        [f"{fmt(ms(a), '.2f')} / {fmt(ms(b), '.2f')}" for a, b in zip(get("b2fs_p50"), get("b2fs_p99"))],
    )
    row(
        "python `arr[i, j]` p50 / p99 ms",
        [f"{fmt(ms(a), '.2f')} / {fmt(ms(b), '.2f')}" for a, b in zip(get("py_p50"), get("py_p99"))],
    )
    row("python cold open s", [fmt(v, ".3f") for v in get("py_open_s")])
    lines.append("")
    lines.append("| target | " + " | ".join(cols) + " |")
    lines.append("|---" * (len(cols) + 1) + "|")
    labels = [
        ("scan", f"scan ≥ {SCAN_TARGET}× python-blosc2"),
        ("random", "random p50 ≤ python-blosc2"),
        ("rss", f"peak RSS ≤ cache + {RSS_SLACK_MIB} MiB"),
        ("delay", f"{delay} ms scan ≥ {DELAY_TARGET}× no-delay"),
    ]
    for key, label in labels:
        vals = []
        for col in cols:
            t = results["targets"][col].get(key)
            vals.append("—" if t is None else f"{t['status']} {t['display']}")
        row(label, vals)
    if c["mode"] != "mount":
        lines.append("")
        lines.append(
            "blosc2fs ran as `cat` (mounting URLs not available in this binary): RSS is cat's peak, "
            "random reads need the mount (n/a)."
        )
    if results["errors"]:
        lines += ["", "errors:"] + [f"- {e}" for e in results["errors"]]
    return "\n".join(lines)


# ---------------------------------------------------------------- main


def mount_supports_urls(binary: str) -> bool:
    p = subprocess.run([binary, "mount", "--help"], capture_output=True, text=True)
    return "://" in p.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description="blosc2fs remote benchmark (see the module docstring)")
    ap.add_argument("--workdir", default="/tmp/blosc2fs-rbench")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--size-gib", type=float, default=1.0)
    ap.add_argument("--delay-ms", type=int, default=20)
    ap.add_argument(
        "--mode",
        choices=["auto", "mount", "cat"],
        default="auto",
        help="blosc2fs side: a mount + dd, or `cat URL`; auto = mount when `mount --help` takes URLs",
    )
    ap.add_argument("--protocols", default="http,s3")
    ap.add_argument("--files", default="zstd,lz4")
    ap.add_argument("--random-reads", type=int, default=RANDOM_READS)
    ap.add_argument("--binary", default=os.path.join(REPO, "target", "release", "blosc2fs"))
    ap.add_argument(
        "--proxy", help="delay_proxy binary (default: target/release/examples/delay_proxy, built if missing)"
    )
    ap.add_argument("--s3s-fs", help="s3s-fs binary (default: WORKDIR/tools/bin/s3s-fs, cargo-installed if missing)")
    ap.add_argument(
        "--s3-server",
        choices=["s3s-fs", "s3rver", "nginx"],
        default="s3s-fs",
        help="S3 API server: s3s-fs (Rust, crates.io), s3rver (Node, npm), or nginx answering "
        "path-style GET/HEAD of /bench/KEY (signatures unchecked, no LIST: the clients' S3 code "
        "paths without a server cap; s3s-fs streams in 4 KiB reads and caps near 0.1 GB/s)",
    )
    ap.add_argument("--cache-size", default="128M")
    ap.add_argument(
        "--python",
        help="interpreter with blosc2 4.14.1 + fsspec, aiohttp, requests, s3fs (default: WORKDIR/pyenv, made here)",
    )
    ap.add_argument("--install-missing", action="store_true", help="pip-install the python side into --python")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target FAILs")
    ap.add_argument("--_worker", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args._worker is not None:
        print(json.dumps(worker_main(json.loads(args._worker))))
        return 0

    args.binary = os.path.abspath(args.binary)
    args.workdir = os.path.abspath(args.workdir)
    if args.protocols == "caterva2":  # its own scenario: scripts/bench/bench_c2.py
        cmd = [
            sys.executable,
            os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_c2.py"),
            "--workdir",
            os.path.join(args.workdir, "caterva2"),
            "--repeats",
            str(args.repeats),
            "--size-gib",
            str(args.size_gib),
            "--cache-size",
            args.cache_size,
            "--binary",
            args.binary,
        ]
        cdir = corpus_dir(args.workdir, args.size_gib)
        if os.path.exists(os.path.join(cdir, "b2", "zstd.b2nd")):
            cmd += ["--corpus", cdir]
        return subprocess.run(cmd + (["--strict"] if args.strict else [])).returncode
    if binary_missing(args.binary):
        return 2
    if args.mode == "auto":
        args.mode = "mount" if mount_supports_urls(args.binary) else "cat"
    protocols = [p for p in args.protocols.split(",") if p]
    files = [f for f in args.files.split(",") if f]
    if any(p not in ("http", "s3") for p in protocols) or any(f not in FILES for f in files):
        print("error: --protocols takes http,s3 (or caterva2 alone) and --files zstd,lz4,narrow", file=sys.stderr)
        return 2
    cache_bytes = parse_size(args.cache_size)
    open_run_dir(args)

    env = host_env() | {"binary": args.binary}
    errors: list[str] = []
    servers: dict[str, Any] = {}
    results: dict[str, Any] = {}
    try:
        cleanup_mountpoint(args.mnt, args.binary)
        python = ensure_python(args)
        env["python_exe"] = python
        env |= worker(python, {"op": "version"})
        nginx_exe = ensure_nginx() if ("http" in protocols or args.s3_server == "nginx") else None
        if nginx_exe:
            env["nginx_version"] = (
                subprocess.run([nginx_exe, "-v"], capture_output=True, text=True).stderr.strip().split("/")[-1]
            )
        s3_exe, s3s_build = (None, None)
        if "s3" in protocols and args.s3_server != "nginx":
            s3_exe, s3s_build = ensure_s3s(args) if args.s3_server == "s3s-fs" else (ensure_s3rver(args), None)
        servers["s3s_build_s"] = s3s_build
        proxy_exe = ensure_proxy(args)

        corpus = ensure_corpus(python, args.workdir, args.size_gib)
        raw_path = os.path.join(corpus["dir"], "raw.bin")
        nbytes = corpus["nbytes"]
        for name in ["raw.bin"] + [os.path.join("b2", f"{n}.b2nd") for n in files]:
            warm_file(os.path.join(corpus["dir"], name))  # the servers' files warm in the page cache

        upstream: dict[str, int] = {}
        creds: dict[str, tuple[str, str] | None] = {"http": None}
        if "http" in protocols or args.s3_server == "nginx":
            s3_dir = None
            if args.s3_server == "nginx":
                # GET/HEAD of /bench/KEY answered by nginx: the S3 clients' own code paths, no server cap.
                s3_dir = os.path.join(args.workdir, "s3nginx")
                os.makedirs(os.path.join(s3_dir, BUCKET), exist_ok=True)
                for n in list(files) + ["raw"]:
                    key = "raw.bin" if n == "raw" else f"{n}.b2nd"
                    src = raw_path if n == "raw" else os.path.join(corpus["dir"], "b2", key)
                    link = os.path.join(s3_dir, BUCKET, key)
                    if os.path.lexists(link):
                        os.remove(link)
                    os.symlink(src, link)
            assert nginx_exe is not None
            ng = Nginx(nginx_exe, corpus["dir"], args.workdir, s3_dir)
            upstream["http"] = ng.port
            if s3_dir:
                upstream["s3"] = ng.port
                creds["s3"] = ng.creds
        if "s3" in protocols and args.s3_server != "nginx":
            assert s3_exe is not None
            s3 = (S3sFs if args.s3_server == "s3s-fs" else S3rver)(s3_exe, args.workdir)
            upstream["s3"] = s3.port
            creds["s3"] = s3.creds
            want = {f"{n}.b2nd": os.path.join(corpus["dir"], "b2", f"{n}.b2nd") for n in files}
            want["raw.bin"] = raw_path
            print(f"{args.s3_server}: seeding bucket {BUCKET} through the S3 API (skips what is there) ...", flush=True)
            servers["s3_seed"] = worker(
                python, {"op": "seed_s3", "bucket": BUCKET, "files": want}, env=s3_env(s3.port, s3.creds)
            )
        proxies = {p: Proxy(proxy_exe, upstream[p], args.delay_ms, args.workdir, p) for p in protocols}
        zero = {p: Proxy(proxy_exe, upstream[p], 0, args.workdir, f"{p}-nodelay") for p in protocols}

        # The servers and the proxy must not be what caps the clients.
        for p in protocols:
            path = f"/{BUCKET}/raw.bin" if p == "s3" else "/raw.bin"
            for label, port in (("direct", upstream[p]), ("proxy 0 ms", zero[p].port)):
                url = f"http://127.0.0.1:{port}{path}"
                servers[f"{p} {label}, 1 stream"] = max(
                    server_throughput(url, 1, nbytes // 4, creds[p]) for _ in range(2)
                )
                c0 = try_proc_cpu_seconds(zero[p].proc.pid)
                servers[f"{p} {label}, 4 streams"] = max(server_throughput(url, 4, nbytes, creds[p]) for _ in range(2))
                if label != "direct" and c0 is not None:
                    servers[f"{p} proxy CPU s/GiB"] = (
                        ((try_proc_cpu_seconds(zero[p].proc.pid) or 0.0) - c0) / 2 / (nbytes / 2**30)
                    )
            print(
                f"server check {p}: "
                + ", ".join(f"{k[len(p) + 1 :]} {v:.2f}" for k, v in servers.items() if k.startswith(f"{p} ")),
                flush=True,
            )
        for z in zero.values():
            stop(z.proc)

        results = {
            "config": corpus_config(args, corpus)
            | {
                "cache_bytes": cache_bytes,
                "delay_ms": args.delay_ms,
                "mode": args.mode,
                "random_reads": args.random_reads,
                "random_size": RANDOM_SIZE,
                "workdir": args.workdir,
                "corpus_dir": corpus["dir"],
                "protocols": protocols,
                "files": files,
                "s3_server": args.s3_server,
            },
            "env": env,
            "servers": servers,
            "corpus": {k: v for k, v in corpus.items() if k != "dir"},
            "raw": {
                "cells": {
                    f"{p}/{n}": {
                        "b2fs_scan_0": [],
                        "py_scan_0": [],
                        "b2fs_scan_d": [],
                        "py_scan_d": [],
                        "b2fs_random": [],
                        "py_random": [],
                    }
                    for p in protocols
                    for n in files
                }
            },
            "errors": errors,
        }
        cells = results["raw"]["cells"]

        attempt = Attempts(errors)

        run = Runner(args, corpus, python, raw_path)
        for p in protocols:
            for n in files:
                ep = Endpoint(p, upstream[p], n, creds[p] or ("", ""), args.s3_server != "nginx")
                print(f"verify {p}/{n}: blosc2fs cat gives raw.bin's bytes ...", flush=True)
                attempt(f"{p}/{n}: verify blosc2fs cat", lambda: verify_cat(args, ep, raw_path))

        for rep in range(args.repeats):
            for p in protocols:
                for delay_key, port in (("0", upstream[p]), ("d", proxies[p].port)):
                    proxy = proxies[p] if delay_key == "d" else None
                    for n in files:
                        col = f"{p}/{n}"
                        ep = Endpoint(p, port, n, creds[p] or ("", ""), args.s3_server != "nginx")
                        tag = "no delay" if delay_key == "0" else f"{args.delay_ms} ms"
                        b = attempt(f"{col} {tag}: blosc2fs scan", lambda: run.b2fs_scan(ep, proxy))
                        if b:
                            cells[col][f"b2fs_scan_{delay_key}"].append(b)
                        q = attempt(
                            f"{col} {tag}: python-blosc2 scan",
                            lambda: run.py_scan(ep, proxy, verify=(rep == 0 and delay_key == "0")),
                        )
                        if q:
                            cells[col][f"py_scan_{delay_key}"].append(q)

                        def req(x: Any) -> Any:
                            return f" {x['proxy']['requests']} req" if x and "proxy" in x else ""

                        print(
                            f"[{rep + 1}/{args.repeats}] {col:9s} {tag:8s} blosc2fs "
                            f"{fmt(b and b['gbps'])} GB/s (cpu {fmt(b and b.get('cpu_s'))} s, "
                            f"rss {fmt(b and b.get('maxrss_mib'), '.0f')} MiB{req(b)})  python "
                            f"{fmt(q and q['gbps'])} GB/s{req(q)}",
                            flush=True,
                        )

        offsets = random_plan(nbytes, args.random_reads)
        for rep in range(args.repeats):
            for p in protocols:
                for n in files:
                    col = f"{p}/{n}"
                    ep = Endpoint(p, upstream[p], n, creds[p] or ("", ""), args.s3_server != "nginx")
                    b = None
                    if args.mode == "mount":
                        b = attempt(f"{col}: blosc2fs random reads", lambda: run.mount_random(ep, offsets))
                        if b:
                            cells[col]["b2fs_random"].append(b)
                    q = attempt(f"{col}: python-blosc2 random reads", lambda: run.py_random(ep, offsets))
                    if q:
                        cells[col]["py_random"].append(q)
                    print(
                        f"[{rep + 1}/{args.repeats}] {col:9s} random p50 blosc2fs "
                        f"{fmt(b and percentile(b['latencies'], 50) * 1e3, '.3f')} ms  python "
                        f"{fmt(q and percentile(q['latencies'], 50) * 1e3, '.3f')} ms",
                        flush=True,
                    )
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        cleanup_all()

    summarize(results, cache_bytes)
    save_results(results, args.workdir, build_table, f"logs: {args.workdir}/*.log")
    if errors:
        return 2
    if args.strict and any(t["status"] == "FAIL" for ts in results["targets"].values() for t in ts.values()):
        return 1
    return 0


if __name__ == "__main__":
    run_main(main)
