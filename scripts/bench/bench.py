#!/usr/bin/env python3
"""Benchmark harness of blosc2fs: the mount measured the client's way in, beside C-Blosc2.

Usage (as root: it mounts, and drops page caches for the disk-cold and random rows):

    cargo build --release
    .venv/bin/python scripts/bench/bench.py --repeats 3 --binary target/release/blosc2fs
    .venv/bin/python scripts/bench/bench.py --quick            # 0.25 GiB corpus, 1 repeat: for trying it
    .venv/bin/python scripts/bench/bench.py --scenario tree    # many small arrays: see bench_tree.py
    .venv/bin/python scripts/bench/bench.py --scenario computed  # a saved expression: see bench_computed.py
    .venv/bin/python scripts/bench/bench.py --scenario zarr3   # xarray/Dask through the Zarr v3 hierarchy:
                                                               # see bench_zarr3.py
    .venv/bin/python scripts/bench/bench.py --scenario disk-cache  # warm re-reads: see bench_disk_cache.py
    .venv/bin/python scripts/bench/bench.py --scenario epochs      # 6 back-to-back reads with --disk-cache:
                                                                   # see bench_disk_cache.py
    .venv/bin/python scripts/bench/bench.py --scenario tables  # a CTable's table.csv / table.arrow:
                                                               # see bench_tables.py

    options: [--size-gib 1.0] [--repeats 3] [--workdir /tmp/blosc2fs-bench] [--cache-size 128M]
             [--scale-cache-size 64M] [--stagger 0.1] [--mount-args "--readahead-kb 8192"]
             [--python INTERPRETER] [--no-scale] [--no-peers] [--strict]
             [--scenario mount|tree|computed|zarr3|disk-cache|epochs] [--tree-sizes 50000,200000] [--tree-nofile 1024]
             [--tree-cache-size 64M] [--tree-timeout 600] [--tree-budget-min 25]
             [--tree-mksquashfs-args "-no-duplicates"] [--table-rows 10000000]

Scenarios, one file each beside this one (its docstring describes it): `mount` (the default,
bench_mount.py: the tables of one array read through the mount beside C-Blosc2, the peers and
the scale table); `tree` (bench_tree.py) mounts trees of many small arrays under `ulimit -n
1024` and times find, ls -lR and a read of every file, with the daemon's RSS and descriptors,
beside squashfuse_ll over a squashfs image of the same presented tree; `computed`
(bench_computed.py), `zarr3` (bench_zarr3.py), `disk-cache` and `epochs` (bench_disk_cache.py),
`tables` (bench_tables.py). What they share: benchlib.py (mounts, timing, the host), corpus.py (the 1 GiB field), peers.py
(squashfuse_ll). The remote and Caterva2 benchmarks are their own commands: bench_remote.py and
bench_c2.py; bench_decode.py times the decoders alone.

This file only parses the options, runs the scenario asked for, and is the worker entry point
(`--_worker REQUEST`) of the scenarios' numpy/blosc2 side.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import bench_computed
import bench_disk_cache
import bench_mount
import bench_tables
import bench_tree
import bench_zarr3
import corpus
from benchlib import REPO, Json, binary_missing, run_main


def worker_main(request: Json) -> Json:
    """The numpy/blosc2 side of a request (run in a worker subprocess of --python)."""
    op = request["op"]
    if op.startswith("tables_"):  # the tables scenario's python-blosc2 / pyarrow side
        return bench_tables.worker(request)
    if op.startswith("computed_"):  # the computed scenario's python-blosc2 side
        return bench_computed.worker(request)
    if op == "tree_templates":  # the tree scenario's templates
        return bench_tree.make_templates(request)
    if op == "generate":  # the corpus
        return corpus.generate(request)
    return bench_mount.worker(request)


def main() -> int:
    ap = argparse.ArgumentParser(description="blosc2fs benchmark (see the module docstring)")
    ap.add_argument("--size-gib", type=float, default=None, help="corpus size in GiB (default 1.0)")
    ap.add_argument("--repeats", type=int, default=None, help="repeats (default 3)")
    ap.add_argument("--quick", action="store_true", help="0.25 GiB, 1 repeat (unless given)")
    ap.add_argument("--workdir", default="/tmp/blosc2fs-bench", help="corpus, mountpoint, logs, results.json")
    ap.add_argument("--binary", default=os.path.join(REPO, "target", "release", "blosc2fs"))
    ap.add_argument("--cache-size", default="128M", help="--cache-size of the mounts of the main table")
    ap.add_argument("--scale-cache-size", default="64M", help="--cache-size of the scale table's mounts")
    ap.add_argument("--stagger", type=float, default=0.1, help="seconds between the quarter readers' starts")
    ap.add_argument("--mount-args", default="", help="extra arguments of every `blosc2fs mount` (one string)")
    ap.add_argument("--python", default=sys.executable, help="interpreter with numpy + blosc2 (default: this one)")
    ap.add_argument(
        "--tmpfs-dir", default="/dev/shm", help="where raw.bin's tmpfs copy goes (the 4 KiB-folio page-cache reference)"
    )
    ap.add_argument("--no-scale", action="store_true", help="skip the scale table")
    ap.add_argument("--no-peers", action="store_true", help="skip the peers (squashfuse_ll) rows")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target FAILs")
    ap.add_argument(
        "--scenario",
        choices=("mount", "tree", "computed", "zarr3", "disk-cache", "epochs", "tables"),
        default="mount",
        help="mount: the tables above (default); tree: many small arrays, find / ls -lR / read-all, "
        "daemon RSS and descriptors, beside squashfuse_ll (bench_tree.py); computed: a saved "
        "expression beside python-blosc2's own evaluation (bench_computed.py); zarr3: "
        "xarray's open_datatree beside find, a Dask reduction beside dd (bench_zarr3.py); disk-cache: "
        "re-reads through --disk-cache, with and without passthrough (bench_disk_cache.py); epochs: "
        "--epochs back-to-back reads with --disk-cache beside a cold read without it (bench_disk_cache.py); tables: "
        "a CTable's table.csv and table.arrow read whole beside CTable.to_arrow() (bench_tables.py)",
    )
    ap.add_argument("--table-rows", type=int, default=10_000_000, help="tables scenario: the table's rows")
    ap.add_argument("--tree-sizes", default="50000,200000", help="tree scenario: array counts, comma separated")
    ap.add_argument("--tree-nofile", type=int, default=1024, help="tree scenario: the daemons' `ulimit -n`")
    ap.add_argument("--tree-cache-size", default="64M", help="tree scenario: blosc2fs --cache-size")
    ap.add_argument(
        "--tree-timeout",
        type=float,
        default=600,
        help="tree scenario: seconds any one step may take (mksquashfs: twice that)",
    )
    ap.add_argument(
        "--tree-mksquashfs-args",
        default="",
        help="tree scenario: extra mksquashfs options (e.g. -no-duplicates: store every file)",
    )
    ap.add_argument(
        "--tree-budget-min",
        type=float,
        default=25,
        help="tree scenario: minutes for the whole run; a size's squashfs image is not built when "
        "its estimated build time would not fit (its peer rows are then skipped)",
    )
    ap.add_argument("--epochs", type=int, default=6, help="epochs scenario: back-to-back reads per loop")
    ap.add_argument(
        "--binary-b",
        default=None,
        help="epochs scenario: a second binary whose cache-on loop alternates with --binary's each repeat",
    )
    ap.add_argument("--_worker", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args._worker is not None:
        print(json.dumps(worker_main(json.loads(args._worker))))
        return 0

    if args.size_gib is None:
        args.size_gib = 0.25 if args.quick else 1.0
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    args.binary = os.path.abspath(args.binary)
    args.workdir = os.path.abspath(args.workdir)
    if binary_missing(args.binary):
        return 2
    if args.repeats < 1 or args.size_gib <= 0:
        print("error: --repeats must be ≥1 and --size-gib > 0", file=sys.stderr)
        return 2
    os.makedirs(args.workdir, exist_ok=True)
    args.mnt = os.path.join(args.workdir, "mnt")
    args.log = os.path.join(args.workdir, "daemon.log")
    scenarios = {
        "mount": bench_mount.run,
        "tree": bench_tree.run,
        "zarr3": bench_zarr3.run,
        "disk-cache": bench_disk_cache.run,
        "epochs": bench_disk_cache.run_epochs,
        "computed": bench_computed.run,
        "tables": bench_tables.run,
    }
    return scenarios[args.scenario](args)


if __name__ == "__main__":
    run_main(main)
