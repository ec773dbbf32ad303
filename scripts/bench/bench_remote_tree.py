#!/usr/bin/env python3
"""The first walk of a remote tree through --disk-cache, beside the same walk without it (issue 45, point 4).

One job: measure what the disk cache's remote tier adds to a tree of many small objects, in one
run, A/B alternated:

    cargo build --release -j2
    .venv/bin/python scripts/bench/bench_remote_tree.py [--arrays 10000] [--prefixes 100] [--repeats 1]
        [--read-all] [--nofile 1024] [--binary target/release/blosc2fs] [--workdir /tmp/blosc2fs-rtree]

What it sets up (on 127.0.0.1, children of this process, stopped at exit): the venv's moto_server
(an S3 API, as tests/ use), and a bucket seeded through boto3 with ARRAYS small arrays (100 float64
values each, python-blosc2's defaults, about 400 bytes) under tree/pNNN/ (PREFIXES prefixes; with
--prefixes 1, all under tree/). The seeding runs in a worker subprocess of --python (numpy, blosc2
4.14.1, boto3: the project venv has them).

Measured on fresh mounts of s3://BUCKET/tree/ (the daemon under `ulimit -n NOFILE`, with
`--attr-timeout` as given: 1 s by default, the mount's own default):

    walk      `find MNT | wc -l`: without the cache, with a fresh --disk-cache DIR, and on a remount
              over that DIR; seconds, daemon CPU seconds, GETs, HEADs and LISTs from MNT/.stats, the
              descriptors the daemon holds after the walk.
    read-all  (--read-all) `find MNT -name data -print0 | xargs -0 cat | wc -c` on a fresh mount with
              a fresh --disk-cache DIR: bytes (checked: 800 per array), seconds, errors, the most
              descriptors the daemon held (/proc/PID/fd sampled every 0.2 s).

Targets (PASS/FAIL): the walk with the cache at most 1.2x the walk without it (medians), its LISTs
at most 1.1x; the remount walk sends no GET; read-all ends with every byte, no error and at most
512 descriptors. Timings on a shared machine are noisy: the table gives every run, and the host's
load average. Results in WORKDIR/results.json. Exit status: 0 when it ran (--strict: 1 on a FAIL),
2 when a measurement could not be made.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from typing import Any

from benchlib import (
    REPO,
    BenchError,
    ForegroundDaemon,
    Json,
    cleanup_mountpoint,
    fmt,
    free_port,
    host_env,
    install_cleanup,
    median,
    run_main,
    run_worker,
    spawn,
    stop,
    try_proc_cpu_seconds,
    wait_port,
)

BUCKET = "rtree"
THIS = os.path.abspath(__file__)
CREDS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}
ARRAY_BYTES = 800  # 100 float64 values


def key_of(k: int, arrays: int, prefixes: int) -> str:
    """The object key of array k."""
    if prefixes <= 1:
        return f"tree/a{k:07d}.b2nd"
    per = (arrays + prefixes - 1) // prefixes
    return f"tree/p{k // per:04d}/a{k:07d}.b2nd"


def seed_worker(req: Json) -> Json:
    """(In the venv.) Put the arrays into a new bucket of the moto server at req["endpoint"]."""
    from concurrent.futures import ThreadPoolExecutor

    import blosc2
    import boto3  # type: ignore[import-untyped]
    import numpy as np

    s3 = boto3.client(
        "s3",
        endpoint_url=req["endpoint"],
        region_name=CREDS["AWS_REGION"],
        aws_access_key_id=CREDS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=CREDS["AWS_SECRET_ACCESS_KEY"],
    )
    s3.create_bucket(Bucket=BUCKET)
    arrays, prefixes = int(req["arrays"]), int(req["prefixes"])
    t0 = time.perf_counter()

    def put(k: int) -> int:
        body = blosc2.asarray(np.arange(100, dtype=np.float64) + k).to_cframe()
        s3.put_object(Bucket=BUCKET, Key=key_of(k, arrays, prefixes), Body=body)
        return len(body)

    with ThreadPoolExecutor(8) as pool:
        sizes = list(pool.map(put, range(arrays)))
    return {"arrays": arrays, "bytes": sum(sizes), "seconds": time.perf_counter() - t0}


class Moto:
    """The venv's moto_server on a free port; stopped at exit."""

    def __init__(self, python: str, workdir: str) -> None:
        exe = os.path.join(os.path.dirname(python), "moto_server")
        if not os.access(exe, os.X_OK):
            raise BenchError(f"no moto_server beside {python}: run scripts/setup_venv.sh")
        self.port = free_port()
        log = os.path.join(workdir, "moto.log")
        self.proc = spawn([exe, "-H", "127.0.0.1", "-p", str(self.port)], log)
        wait_port(self.port, self.proc, "moto_server", log)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cpu(self) -> float | None:
        return try_proc_cpu_seconds(self.proc.pid)


class TreeMount(ForegroundDaemon):
    """`blosc2fs mount s3://BUCKET/tree/ MNT -f [--disk-cache DIR]` under `ulimit -n`."""

    def __init__(self, args: Any, moto: Moto, cache: str | None) -> None:
        self.binary, self.mnt, self.log_path = args.binary, args.mnt, os.path.join(args.workdir, "mount.log")
        extra = ["--attr-timeout", str(args.attr_timeout)] + (["--disk-cache", cache] if cache else [])
        cmd = [args.binary, "mount", f"s3://{BUCKET}/tree/", self.mnt, "-f", *extra]
        self.cmd = ["bash", "-c", f'ulimit -n {int(args.nofile)} && exec "$@"', "mount", *cmd]
        self.env = dict(
            os.environ, **CREDS, AWS_ALLOW_HTTP="true", AWS_ENDPOINT_URL=moto.endpoint, AWS_EC2_METADATA_DISABLED="true"
        )
        self.proc = None

    def __enter__(self) -> TreeMount:
        cleanup_mountpoint(self.mnt, self.binary)
        self.start(self.cmd, f"mount {' '.join(self.cmd)}", env=self.env, timeout=60)
        return self

    def unmount(self) -> None:
        subprocess.run([self.binary, "unmount", self.mnt], capture_output=True, timeout=60)

    def stats(self) -> Json:
        with open(os.path.join(self.mnt, ".stats"), "rb", buffering=0) as f:
            doc: Json = json.loads(f.read())
            return doc

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))


def run_shell(script: str, mnt: str, timeout: float) -> tuple[str, float]:
    """bash -c SCRIPT with $1 = MNT: its stdout and seconds; a BenchError when it fails."""
    t0 = time.perf_counter()
    p = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {script}", "sh", mnt], capture_output=True, text=True, timeout=timeout
    )
    seconds = time.perf_counter() - t0
    if p.returncode != 0:
        raise BenchError(f"`{script}` exited with {p.returncode}: {p.stderr.strip()[-800:]}")
    return p.stdout.strip(), seconds


def requests_of(stats: Json) -> dict[str, int]:
    remote = stats.get("remote") or {}
    return {k: int(remote.get(k) or 0) for k in ("gets", "heads", "lists", "errors")}


def walk(args: Any, moto: Moto, cache: str | None) -> Json:
    """One `find MNT | wc -l` on a fresh mount."""
    with TreeMount(args, moto, cache) as m:
        cpu0, moto0 = m.cpu(), moto.cpu()
        out, seconds = run_shell('find "$1" | wc -l', m.mnt, args.timeout)
        row: Json = {"entries": int(out), "seconds": seconds, "cpu": m.cpu() - cpu0, "fds": m.fds()}
        moto1 = moto.cpu()
        row["moto_cpu"] = None if moto0 is None or moto1 is None else moto1 - moto0
        stats = m.stats()
        row |= requests_of(stats)
        row["disk_cache"] = {k: v for k, v in (stats.get("disk_cache") or {}).items() if k != "dir"}
    return row


def read_all(args: Any, moto: Moto, cache: str) -> Json:
    """Every array's data read once through a fresh mount with a fresh cache, descriptors sampled."""
    with TreeMount(args, moto, cache) as m:
        peak, done = [0], threading.Event()

        def sample() -> None:
            while not done.is_set():
                try:
                    peak[0] = max(peak[0], m.fds())
                except OSError:
                    pass
                time.sleep(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            out, seconds = run_shell('find "$1" -name data -print0 | xargs -0 cat | wc -c', m.mnt, args.timeout)
        finally:
            done.set()
            sampler.join()
        stats = m.stats()
        row: Json = {"bytes": int(out), "seconds": seconds, "peak_fds": peak[0], "fds_after": m.fds()}
        row |= requests_of(stats)
        row["read_errors"] = int(stats.get("read_errors") or 0)
        row["disk_errors"] = int((stats.get("disk_cache") or {}).get("errors") or 0)
    return row


def report(res: Json) -> str:
    lines = [
        f"# First walk of a remote tree (moto S3, {res['arrays']} arrays in {res['prefixes']} prefixes)",
        "",
        f"host: {res['host'].get('cpu_model')}, {res['host'].get('cpus')} CPUs, load {res['host'].get('loadavg_1_5_15_start')} "
        "(a shared machine: timings are noisy)",
    ]
    if res["walks"]:
        lines += [
            "",
            "| run | walk | entries | s | daemon CPU s | moto CPU s | GETs | HEADs | LISTs | fds after |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
    for i, rep in enumerate(res["walks"]):
        for label in ("no cache", "cache, first", "cache, remount"):
            r = rep.get(label) or {}
            lines.append(
                f"| {i + 1} | {label} | {r.get('entries')} | {fmt(r.get('seconds'))} | {fmt(r.get('cpu'))} | "
                f"{fmt(r.get('moto_cpu'))} | {r.get('gets')} | {r.get('heads')} | {r.get('lists')} | {r.get('fds')} |"
            )
    if res.get("read_all"):
        r = res["read_all"]
        lines += [
            "",
            f"read-all with the cache (ulimit -n {res['nofile']}): {r.get('bytes')} bytes in {fmt(r.get('seconds'))} s, "
            f"peak {r.get('peak_fds')} descriptors ({r.get('fds_after')} after), GETs {r.get('gets')}, "
            f"HEADs {r.get('heads')}, LISTs {r.get('lists')}, "
            f"read errors {r.get('read_errors')}, disk cache errors {r.get('disk_errors')}",
        ]
    lines += [""] + [f"{'PASS' if ok else 'FAIL'} {what}" for what, ok in res["targets"]]
    lines += [f"ERROR {e}" for e in res["errors"]]
    return "\n".join(lines)


def targets(res: Json) -> list[tuple[str, bool]]:
    def med(label: str, key: str) -> float | None:
        return median(r.get(label, {}).get(key) for r in res["walks"])

    out: list[tuple[str, bool]] = []
    plain, cached = med("no cache", "seconds"), med("cache, first", "seconds")
    if plain and cached:
        out.append((f"first walk with the cache {cached / plain:.2f}x without it (<= 1.2x)", cached <= 1.2 * plain))
    lp, lc = med("no cache", "lists"), med("cache, first", "lists")
    if lp and lc:
        out.append((f"LISTs with the cache {lc:.0f} against {lp:.0f} (<= 1.1x)", lc <= 1.1 * lp))
    gets = [r.get("cache, remount", {}).get("gets") for r in res["walks"]]
    if gets and None not in gets:
        out.append((f"remount walk GETs {gets} (0)", all(g == 0 for g in gets)))
    r = res.get("read_all")
    if r:
        ok = r["bytes"] == ARRAY_BYTES * res["arrays"] and r["read_errors"] == 0 and r["peak_fds"] <= 512
        out.append(
            (f"read-all: {r['bytes']} bytes, {r['read_errors']} errors, peak {r['peak_fds']} descriptors (<= 512)", ok)
        )
    return out


def run(args: Any) -> int:
    os.makedirs(args.workdir, exist_ok=True)
    args.mnt = os.path.join(args.workdir, "mnt")
    res: Json = {
        "arrays": args.arrays,
        "prefixes": args.prefixes,
        "nofile": args.nofile,
        "host": host_env(),
        "walks": [],
        "errors": [],
    }
    moto = Moto(args.python, args.workdir)
    try:
        print(f"seeding {args.arrays} arrays into moto ...", flush=True)
        res["seed"] = run_worker(
            args.python,
            {"op": "seed", "endpoint": moto.endpoint, "arrays": args.arrays, "prefixes": args.prefixes},
            script=THIS,
            timeout=args.timeout,
        )
        print(f"  {res['seed']}", flush=True)
        caches = os.path.join(args.workdir, "caches")
        shutil.rmtree(caches, ignore_errors=True)
        for i in range(args.repeats):
            cache = os.path.join(caches, f"walk-{i}")
            rep: Json = {}
            order = (
                [("no cache", None), ("cache, first", cache)]
                if i % 2 == 0
                else [("cache, first", cache), ("no cache", None)]
            )
            for label, c in order + [("cache, remount", cache)]:
                try:
                    rep[label] = walk(args, moto, c)
                    print(f"  walk {i + 1} {label}: {rep[label]}", flush=True)
                except (BenchError, OSError, subprocess.SubprocessError) as e:
                    res["errors"].append(f"walk {i + 1} {label}: {e}")
            res["walks"].append(rep)
        if args.read_all:
            try:
                res["read_all"] = read_all(args, moto, os.path.join(caches, "read-all"))
                print(f"  read-all: {res['read_all']}", flush=True)
            except (BenchError, OSError, subprocess.SubprocessError) as e:
                res["errors"].append(f"read-all: {e}")
    finally:
        stop(moto.proc)
    res["targets"] = targets(res)
    with open(os.path.join(args.workdir, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(report(res))
    if res["errors"]:
        return 2
    return 1 if args.strict and not all(ok for _, ok in res["targets"]) else 0


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--_worker":
        print(json.dumps(seed_worker(json.loads(sys.argv[2]))))
        return 0
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arrays", type=int, default=10_000)
    p.add_argument("--prefixes", type=int, default=100)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--read-all", action="store_true", help="also read every array's data once through the cache")
    p.add_argument("--nofile", type=int, default=1024, help="the daemon's descriptor limit (ulimit -n)")
    p.add_argument(
        "--attr-timeout",
        type=float,
        default=1.0,
        help="the mounts' --attr-timeout (how long a listing is kept: one prefix of 50,000 objects takes moto "
        "longer than the default second to list)",
    )
    p.add_argument("--binary", default=os.path.join(REPO, "target", "release", "blosc2fs"))
    p.add_argument("--python", default=os.path.join(REPO, ".venv", "bin", "python"))
    p.add_argument("--workdir", default="/tmp/blosc2fs-rtree")
    p.add_argument("--timeout", type=float, default=3600)
    p.add_argument("--strict", action="store_true")
    args = p.parse_args()
    install_cleanup()
    return run(args)


if __name__ == "__main__":
    run_main(main)
