#!/usr/bin/env python3
"""Listing, `find` and read speed of two blosc2fs binaries over one tree of arrays with no other
files, in the same run, alternating: what showing a source's other files costs a tree that has none.

    bench_listing_ab.py --binary NEW --baseline OLD [--arrays 5000] [--rounds 5] [--workdir DIR]
                        [--sidecars] [--python INTERPRETER]

Tree (WORKDIR/tree-ab-N/, reused while WORKDIR/tree-ab-N.json matches): N arrays in folders of
100 (d0000/a000000.b2nd ...), real copies of two templates python-blosc2 writes (float64
(32, 32) ZSTD + SHUFFLE; int32 (2048,) LZ4 + SHUFFLE), taken in turn; nothing else, or with
--sidecars a small JSON file beside each array (aNNNNNN.json, ~60 bytes: a dataset's other
files; WORKDIR/tree-ab-N-sidecars/). The tree is read once before the first mount (its inodes in
the kernel's caches).

Per round, each binary in turn (the order swapped every round), each step on a fresh mount
(`blosc2fs mount -f SRC MNT`, defaults):
  listing  `ls -lR MNT > /dev/null`, timed
  find     `find MNT | wc -l`, timed (entries counted: both binaries must agree)
  read     on the find's mount (every entry looked up), every `data` file read:
           `find MNT -name data -type f -print0 | xargs -0 cat | wc -c`, timed
with the daemon's CPU seconds during each, and after the read its peak RSS (VmHWM) and the
descriptors it holds. Reported: medians per binary, and NEW / OLD.
Results in WORKDIR/listing-ab-results.json. Needs root (FUSE) and the `blosc2` module in
--python's interpreter (for the templates only).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from benchlib import Json, Mount, host_env, install_cleanup, median, proc_cpu_seconds, run_main, run_timed

TEMPLATES = r"""
import sys, numpy as np, blosc2
out = sys.argv[1]
a = np.linspace(0, 1, 32 * 32).reshape(32, 32)
blosc2.asarray(a, urlpath=f"{out}/f8.b2nd", mode="w",
               cparams=blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=5))
b = np.arange(2048, dtype=np.int32)
blosc2.asarray(b, urlpath=f"{out}/i4.b2nd", mode="w",
               cparams=blosc2.CParams(codec=blosc2.Codec.LZ4, clevel=5))
"""


def make_tree(workdir: str, arrays: int, python: str, sidecars: bool) -> str:
    """WORKDIR/tree-ab-N[-sidecars], made unless its description file matches."""
    root = os.path.join(workdir, f"tree-ab-{arrays}" + ("-sidecars" if sidecars else ""))
    desc = {"arrays": arrays, "per_folder": 100, "templates": ["f8", "i4"], "sidecars": sidecars, "version": 1}
    desc_path = root + ".json"
    try:
        with open(desc_path) as f:
            if json.load(f) == desc:
                return root
    except (OSError, ValueError):
        pass
    shutil.rmtree(root, ignore_errors=True)
    templates = os.path.join(workdir, "tree-ab-templates")
    os.makedirs(templates, exist_ok=True)
    subprocess.run([python, "-c", TEMPLATES, templates], check=True)
    names = ["f8.b2nd", "i4.b2nd"]
    for i in range(arrays):
        folder = os.path.join(root, f"d{i // 100:04d}")
        os.makedirs(folder, exist_ok=True)
        shutil.copyfile(os.path.join(templates, names[i % 2]), os.path.join(folder, f"a{i:06d}.b2nd"))
        if sidecars:
            with open(os.path.join(folder, f"a{i:06d}.json"), "w") as f:
                json.dump({"case": i, "spacing": [3.0, 0.625, 0.625], "label": "synthetic"}, f)
    with open(desc_path, "w") as f:
        json.dump(desc, f)
    return root


def warm(root: str) -> None:
    """Read the source tree once: its files and inodes in the kernel's caches."""
    for base, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(base, name), "rb") as f:
                f.read()


def timed_on(m: Mount, shell: str) -> Json:
    """`shell` run by bash on mount `m`, timed, with the daemon's CPU seconds and stdout."""
    with tempfile.TemporaryFile() as out:
        cpu0 = proc_cpu_seconds(m.pid)
        r = run_timed(["bash", "-c", shell], stdout=out)
        r["daemon_cpu"] = proc_cpu_seconds(m.pid) - cpu0
        out.seek(0)
        r["stdout"] = out.read().decode().strip()
    r.pop("stderr", None)
    return r


def one_binary(binary: str, src: str, mnt: str, log: str) -> Json:
    """The three steps for `binary`, each on a fresh mount (read on the find's)."""
    row: Json = {}
    with Mount(binary, src, mnt, log, "256M") as m:
        row["listing"] = timed_on(m, f"ls -lR {mnt} > /dev/null")
    with Mount(binary, src, mnt, log, "256M") as m:
        row["find"] = timed_on(m, f"find {mnt} | wc -l")
        row["read"] = timed_on(m, f"find {mnt} -name data -type f -print0 | xargs -0 cat | wc -c")
        row["read"]["vm_hwm_mib"] = m.vm_hwm_mib()
        row["read"]["descriptors"] = len(os.listdir(f"/proc/{m.pid}/fd"))
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True, help="the blosc2fs under test")
    ap.add_argument("--baseline", required=True, help="the blosc2fs to compare with")
    ap.add_argument("--arrays", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workdir", default="/tmp/blosc2fs-listing-ab")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--sidecars", action="store_true", help="a JSON file beside each array")
    args = ap.parse_args()
    install_cleanup()
    os.makedirs(args.workdir, exist_ok=True)
    env = host_env()
    src = make_tree(args.workdir, args.arrays, args.python, args.sidecars)
    warm(src)
    mnt = os.path.join(args.workdir, "mnt")
    log = os.path.join(args.workdir, "daemon.log")
    binaries = {"new": os.path.abspath(args.binary), "old": os.path.abspath(args.baseline)}
    runs: dict[str, list[Json]] = {"new": [], "old": []}
    for r in range(args.rounds):
        order = ["new", "old"] if r % 2 == 0 else ["old", "new"]
        for which in order:
            row = one_binary(binaries[which], src, mnt, log)
            runs[which].append(row)
            print(
                f"round {r + 1} {which}: "
                + ", ".join(f"{k} {v['seconds']:.3f} s ({v['stdout'] or '-'})" for k, v in row.items()),
                flush=True,
            )
    entries = {w: {row["find"]["stdout"] for row in rows} for w, rows in runs.items()}
    summary: dict[str, Any] = {}
    lines = [
        "| step | old s | new s | new / old | old daemon CPU s | new daemon CPU s |",
        "|---|---|---|---|---|---|",
    ]
    for step in ("listing", "find", "read"):
        med = {w: median(row[step]["seconds"] for row in rows) for w, rows in runs.items()}
        cpu = {w: median(row[step]["daemon_cpu"] for row in rows) for w, rows in runs.items()}
        summary[step] = {"seconds": med, "daemon_cpu": cpu}
        ratio = (med["new"] or 0) / (med["old"] or 1)
        lines.append(
            f"| {step} | {med['old']:.3f} | {med['new']:.3f} | {ratio:.2f} | {cpu['old']:.3f} | {cpu['new']:.3f} |"
        )
    for w, rows in runs.items():
        hwm = median(row["read"]["vm_hwm_mib"] for row in rows)
        fds = median(row["read"]["descriptors"] for row in rows)
        summary[f"{w}_after_read"] = {"vm_hwm_mib": hwm, "descriptors": fds}
        print(f"{w}: after the read, peak RSS {hwm} MiB, {fds} descriptors (medians)")
    print(f"\n{args.arrays} arrays, {args.rounds} rounds, medians; entries found: {entries}")
    print(
        f"host: {env.get('cpu_model')}, {env.get('cpus')} CPUs, kernel {env.get('kernel')}, load {env.get('loadavg_1_5_15_start')}"
    )
    print("\n".join(lines))
    with open(os.path.join(args.workdir, "listing-ab-results.json"), "w") as f:
        json.dump({"env": env, "binaries": binaries, "runs": runs, "summary": summary}, f, indent=1)
    return 0 if len(entries["new"] | entries["old"]) == 1 else 1


if __name__ == "__main__":
    run_main(main)
