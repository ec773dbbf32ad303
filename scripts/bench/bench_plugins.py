#!/usr/bin/env python3
"""Plugin codecs through the mount beside python-blosc2, same file, same run.

The files (scripts/gen/gen_plugin_fixtures.py --bench [j2k|openzl]):

    j2k      a 16-bit 512x512x64 stack (64 images of 512x512, one per chunk), written by the
             blosc2-j2k plugin, lossless
    openzl   a 256 MiB float32 volume (256x512x512), python-blosc2's default chunks and
             blocks, written by blosc2-openzl with its shuffle + Zstd graph (codec_meta 2)

Each round, A B C in turn, each cold (page cache dropped; a fresh mount, so blosc2fs's own
cache is empty):

    cat   `cat MNT/<file>/data > /dev/null` through a new mount
    dd    `dd if=MNT/<file>/data of=/dev/null bs=1M` through a new mount
    py    python-blosc2 with the plugin reading the whole array (`blosc2.open(p)[...]`)

Reported: wall seconds, CPU seconds (the reader's, plus the daemon's for the mount rows;
python's includes starting the interpreter and importing numpy, blosc2 and the plugin; its
decode alone is shown apart, wall and CPU), and the median over rounds.

    python3 scripts/bench/bench_plugins.py --binary target/release/blosc2fs \\
        --plugin-python /work/venv-plugins/bin/python [--codec openzl] [--rounds 3] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Any

import benchlib as bl

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(os.path.dirname(HERE), "gen", "gen_plugin_fixtures.py")
# codec: (file name without .b2nd, decoded bytes, plugin module, what the file is)
FILES = {
    "j2k": ("j2k_u2_512x512x64", 64 * 512 * 512 * 2, "blosc2_j2k", "j2k lossless"),
    "openzl": ("openzl_f4_256x512x512", 256 * 512 * 512 * 4, "blosc2_openzl", "OpenZL shuffle + Zstd"),
}
PY_READ = (
    "import sys, time, importlib, blosc2\n"
    "importlib.import_module(sys.argv[3])\n"
    "c0 = time.process_time(); t0 = time.perf_counter()\n"
    "a = blosc2.open(sys.argv[1])[...]\n"
    "t1 = time.perf_counter(); c1 = time.process_time()\n"
    "assert a.nbytes == int(sys.argv[2]), a.nbytes\n"
    "print(t1 - t0, c1 - c0)\n"
)


def cold() -> None:
    if not bl.drop_caches():
        print("warning: could not drop the page cache (not root?)", file=sys.stderr)


def through_mount(args: Any, source: str, how: str) -> dict[str, Any]:
    name, nbytes = FILES[args.codec][:2]
    cold()
    with bl.Mount(args.binary, source, args.mnt, args.log, "256M") as m:
        path = m.data(name, nbytes)
        if how == "cat":
            r = m.charged(lambda: bl.run_timed(["cat", path]))
        else:
            r = m.charged(lambda: bl.dd(path, nbytes))
    return {"seconds": r["seconds"], "cpu": r["cpu"] + r["daemon_cpu"]}


def with_python(args: Any, source: str) -> dict[str, Any]:
    name, nbytes, module = FILES[args.codec][:3]
    cold()
    with tempfile.TemporaryFile() as out:
        env = dict(os.environ, PATH=os.path.dirname(args.plugin_python) + os.pathsep + os.environ["PATH"])
        cmd = [args.plugin_python, "-c", PY_READ, os.path.join(source, name + ".b2nd"), str(nbytes), module]
        r = bl.run_timed(cmd, stdout=out, env=env)
        out.seek(0)
        decode, decode_cpu = (float(x) for x in out.read().decode().split())
    return {"seconds": r["seconds"], "cpu": r["cpu"], "decode_seconds": decode, "decode_cpu": decode_cpu}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--plugin-python", default="/work/venv-plugins/bin/python")
    ap.add_argument("--codec", choices=sorted(FILES), default="j2k")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    bl.install_cleanup()
    work = args.workdir or tempfile.mkdtemp(prefix="bench-plugins-")
    source = os.path.join(work, "src")
    args.mnt = os.path.join(work, "mnt")
    args.log = os.path.join(work, "mount.log")
    os.makedirs(args.mnt, exist_ok=True)
    name, nbytes, _, what = FILES[args.codec]
    if not os.path.exists(os.path.join(source, name + ".b2nd")):
        subprocess.run([args.plugin_python, GEN, "--bench", args.codec, source], check=True, capture_output=True)
    rows: dict[str, list[dict[str, Any]]] = {"cat": [], "dd": [], "python-blosc2": []}
    for _ in range(args.rounds):
        rows["cat"].append(through_mount(args, source, "cat"))
        rows["dd"].append(through_mount(args, source, "dd"))
        rows["python-blosc2"].append(with_python(args, source))
    env = bl.host_env()
    print(f"{name}: {nbytes / bl.MIB:.0f} MiB decoded, {what}, {args.rounds} rounds, cold each time")
    print(bl.host_load(env))
    print(f"{'reader':<16}{'wall s':>9}{'CPU s':>9}{'MB/s':>9}  (medians)")
    for reader, runs in rows.items():
        wall = statistics.median(r["seconds"] for r in runs)
        cpu = statistics.median(r["cpu"] for r in runs)
        extra = ""
        if reader == "python-blosc2":
            extra = (
                f"  decode alone {statistics.median(r['decode_seconds'] for r in runs):.3f} s,"
                f" {statistics.median(r['decode_cpu'] for r in runs):.3f} CPU s"
            )
        print(f"{reader:<16}{wall:>9.3f}{cpu:>9.3f}{nbytes / wall / 1e6:>9.1f}{extra}")
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump({"rows": rows, "env": env}, f, indent=1)
    return 0


if __name__ == "__main__":
    bl.run_main(main)
