#!/usr/bin/env python3
"""The "zarr3" scenario of scripts/bench/bench.py: the mount read as a Zarr v3 hierarchy (issue 37).

Usage (as root; bench.py runs this module for `--scenario zarr3`):

    .venv/bin/python scripts/bench/bench.py --scenario zarr3 --binary target/release/blosc2fs --repeats 3
    .venv/bin/python scripts/bench/bench_zarr3.py --binary target/release/blosc2fs   # the open_datatree
                                                                                      # rows alone (light)
    .venv/bin/python scripts/bench/bench_zarr3.py --binary target/release/blosc2fs --dask  # the Dask sum
                                                                                             # row alone

Four rows, each beside its baseline in the same run, every measurement on a fresh mount
(`blosc2fs mount -f`, nothing of the tree in the daemon or the kernel's caches of the mount;
the sources in the page cache):

  open_datatree vs find
    a tree of 5,000 arrays (scripts/bench/bench_tree.py's templates and layout: folders of 100
    small arrays), `find MNT > /dev/null` against `xr.open_datatree(MNT, engine="zarr",
    consolidated=False)` (timed inside the Python process, after its imports; every array
    must come out as a variable). Target: open_datatree ≤ 2× find's wall time.
  open_datatree vs a consolidated Zarr store
    the same tree, `xr.open_datatree(MNT, engine="zarr")` with xarray's defaults (it reads the
    root group's consolidated metadata, issue 45) against the same call on a plain-disk Zarr v3
    copy of the tree written by zarr-python (WORKDIR/tree-N-zarr3/: the same folders and array
    names, values, chunk shapes and dimension names, no compressor) after
    `zarr.consolidate_metadata`; the copy is read from the page cache. Target: ≤ 2× the copy's
    wall time, every array a variable in both.
  Dask reduction vs dd
    the 1 GiB benchmark field (bench.py's corpus, zstd.b2nd: 8 MiB chunks of 128 x 8192
    float64), `da.from_zarr(MNT/zstd.b2nd).sum()` computed by Dask's threaded scheduler with
    2 workers (the host's cores), reading the chunk files c/<i>/0 through the hierarchy,
    against cold `dd if=MNT/zstd.b2nd/data of=/dev/null bs=1M`. Target: Dask's GB/s ≥ 0.8×
    dd's. CPU seconds beside wall time: the reader process's (dd, or the Python process's
    process_time) and the daemon's. The sum is checked against numpy's sum of raw.bin.
  Dask sum vs a plain-disk Zarr copy (issue 45; run last, also alone with --dask)
    the corpus's values as WORKDIR/dask-<rows>x8192/b2/field.b2nd (zstd with python-blosc2's
    default cparams, chunks of 1024 x 8192 float64, 64 MiB: python-blosc2's default chunks on
    the issue's host) and field.zarr (zarr-python, no compressor, the same chunks, read from the
    page cache). `da.from_zarr(PATH).sum()` with Dask's threaded scheduler, 2 workers, on a
    fresh mount (cold, then again on the same mount: the kernel keeps the chunk files' pages),
    on the copy, and on a fresh `--direct-io` mount; beside `da.from_array(blosc2.open(...),
    chunks=its chunks).sum()`. The mount and the copy go first in turn, round by round. Every
    sum must equal the copy's (same chunks, same reduction), and the copy's numpy's. Target:
    the cold mount ≥ 0.8× the copy's speed. The reader's and the daemon's CPU seconds, the
    host's CPU model and C-Blosc2's 1-thread decode speed (on the corpus's zstd.b2nd: the same
    values and codec in 8 MiB chunks) beside the ratios.
    Results in WORKDIR/dask-results.json.

Medians over --repeats; the JSON lands in WORKDIR/zarr3-results.json.
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import subprocess
from typing import Any

from bench_tree import ensure_tree
from benchlib import (
    Json,
    Mount,
    dd,
    gbps,
    host_env,
    host_load,
    install_cleanup,
    print_report,
    row_median,
    run_main,
    run_timed,
    run_worker,
    warm_file,
)
from corpus import ensure_corpus

TREE_ARRAYS = 5000

DATATREE = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
import xarray as xr, zarr
mnt = sys.argv[1]
c0, t0 = time.process_time(), time.perf_counter()
tree = xr.open_datatree(mnt, engine="zarr", consolidated=False)
arrays = sum(len(node.ds.data_vars) for node in tree.subtree)
t1, c1 = time.perf_counter(), time.process_time()
print(json.dumps({"seconds": t1 - t0, "cpu": c1 - c0, "arrays": arrays}))
"""

DASK = r"""
import json, sys, time
import dask, dask.array as da
path = sys.argv[1]
c0, t0 = time.process_time(), time.perf_counter()
a = da.from_zarr(path)
total = float(a.sum().compute(scheduler="threads", num_workers=2))
t1, c1 = time.perf_counter(), time.process_time()
print(json.dumps({"seconds": t1 - t0, "cpu": c1 - c0, "sum": total, "nbytes": int(a.nbytes),
                  "chunks": [int(c[0]) for c in a.chunks]}))
"""

RAW_SUM = r"""
import json, sys
import numpy as np
raw = np.memmap(sys.argv[1], dtype="<f8", mode="r")
step = 1 << 24
print(json.dumps({"sum": float(sum(raw[i:i + step].sum() for i in range(0, raw.size, step)))}))
"""


DATATREE_DEFAULTS = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
import xarray as xr, zarr
path = sys.argv[1]
c0, t0 = time.process_time(), time.perf_counter()
tree = xr.open_datatree(path, engine="zarr")
arrays = sum(len(node.ds.data_vars) for node in tree.subtree)
t1, c1 = time.perf_counter(), time.process_time()
consolidated = zarr.open_group(path, mode="r").metadata.consolidated_metadata is not None
print(json.dumps({"seconds": t1 - t0, "cpu": c1 - c0, "arrays": arrays, "consolidated": consolidated}))
"""

ZARR_COPY = r"""
import json, os, sys, time
import blosc2, zarr
src, out = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
root = zarr.open_group(out, mode="w", zarr_format=3)
n = 0
for folder in sorted(os.listdir(src)):
    group = root.create_group(folder)
    for name in sorted(os.listdir(os.path.join(src, folder))):
        a = blosc2.open(os.path.join(src, folder, name))
        values = a[...]
        dims = [f"{name}_dim{k}" for k in range(values.ndim)]
        z = group.create_array(name, shape=values.shape, dtype=values.dtype, chunks=a.chunks,
                               compressors=None, dimension_names=dims, fill_value=0)
        z[...] = values
        n += 1
zarr.consolidate_metadata(out)
print(json.dumps({"arrays": n, "seconds": time.perf_counter() - t0}))
"""

COPY_VERSION = 1


def ensure_zarr_copy(args: Any, tree: Json) -> str:
    """WORKDIR/tree-N-zarr3: the tree as a consolidated plain-disk Zarr v3 store, reused while its marker matches."""
    out = f"{tree['dir']}-zarr3"
    marker_path = out + ".json"
    want = {"version": COPY_VERSION, "arrays": tree["arrays"], "tree_created": tree.get("created")}
    try:
        with open(marker_path) as f:
            if json.load(f) == want and os.path.isdir(out):
                print(f"zarr copy: reusing {out}", flush=True)
                return out
    except (OSError, ValueError):
        pass
    print(f"zarr copy: writing {tree['arrays']} arrays to {out} with zarr-python ...", flush=True)
    made = python_json(args.python, ZARR_COPY, [tree["dir"], out])
    if made["arrays"] != tree["arrays"]:
        raise RuntimeError(f"the zarr copy holds {made['arrays']} arrays, expected {tree['arrays']}")
    print(f"zarr copy: {made['arrays']} arrays in {made['seconds']:.1f} s", flush=True)
    with open(marker_path, "w") as f:
        json.dump(want, f)
    return out


def datatree_rows(args: Any, tree: Json, copy: str, rows: dict[str, list[Json]], errors: list[str]) -> None:
    """One repeat of the open_datatree row: the mount (fresh) and the copy, xarray's defaults."""
    with Mount.of(args, tree["dir"], args.cache_size) as m:
        r = m.charged(lambda: python_json(args.python, DATATREE_DEFAULTS, [args.mnt]))
        rows["datatree_consolidated"].append(r)
    c = python_json(args.python, DATATREE_DEFAULTS, [copy])
    rows["copy"].append(c)
    for what, row in (("the mount", r), ("the zarr copy", c)):
        if row["arrays"] != tree["arrays"]:
            errors.append(f"open_datatree of {what} found {row['arrays']} arrays, expected {tree['arrays']}")
        if not row["consolidated"]:
            errors.append(f"{what}: the root group has no consolidated metadata")


def datatree_table(rows: dict[str, list[Json]], n: int) -> list[str]:
    """The open_datatree row against the consolidated copy, as markdown lines."""

    med = functools.partial(row_median, rows)

    ratio = statistics.median(t["seconds"] / c["seconds"] for t, c in zip(rows["datatree_consolidated"], rows["copy"]))
    return [
        f'| `xr.open_datatree(PATH, engine="zarr")`, xarray\'s defaults, plain-disk Zarr v3 copy of {n:,} arrays, '
        f"consolidated | {med('copy'):.3f} | {med('copy', 'cpu'):.2f} | | | 1.00 | |",
        f"| the same through the mount (the root's consolidated metadata) | {med('datatree_consolidated'):.3f} | "
        f"{med('datatree_consolidated', 'cpu'):.2f} | {med('datatree_consolidated', 'daemon_cpu'):.2f} | | "
        f"{ratio:.2f}× the copy's time | ≤ 2: {'PASS' if ratio <= 2 else 'FAIL'} |",
    ]


def python_json(python: str, code: str, argv: list[str], timeout: float = 3600) -> dict[str, Any]:
    out = subprocess.run([python, "-c", code, *argv], capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"python failed: {out.stderr[-2000:]}")
    answer: Json = json.loads(out.stdout.strip().splitlines()[-1])
    return answer


def run(args: Any) -> int:
    env = host_env()
    errors = []
    rows: dict[str, list[Json]] = {
        "find": [],
        "datatree": [],
        "dd": [],
        "dask": [],
        "datatree_consolidated": [],
        "copy": [],
    }
    tree = ensure_tree(args, TREE_ARRAYS)
    copy = ensure_zarr_copy(args, tree)
    warm_tree(copy)
    corpus = ensure_corpus(args.python, args.workdir, args.size_gib)
    b2dir = os.path.join(corpus["dir"], "b2")
    nbytes = corpus["nbytes"]
    expected_sum = python_json(args.python, RAW_SUM, [os.path.join(corpus["dir"], "raw.bin")])["sum"]
    warm_file(os.path.join(b2dir, "zstd.b2nd"))
    subprocess.run(["find", tree["dir"]], stdout=subprocess.DEVNULL, check=True)
    print(
        f"host: {env.get('cpu_model')} ({env['cpus']} CPUs), kernel {env['kernel']}, load {env['loadavg_start']:.2f}",
        flush=True,
    )
    for rep in range(args.repeats):
        with Mount.of(args, tree["dir"], args.cache_size) as m:
            r = m.charged(lambda: run_timed(["find", args.mnt]))
            del r["stderr"]
            rows["find"].append(r)
        with Mount.of(args, tree["dir"], args.cache_size) as m:
            r = m.charged(lambda: python_json(args.python, DATATREE, [args.mnt]))
            rows["datatree"].append(r)
            if r["arrays"] != TREE_ARRAYS:
                errors.append(f"open_datatree found {r['arrays']} arrays, expected {TREE_ARRAYS}")
        datatree_rows(args, tree, copy, rows, errors)
        with Mount.of(args, b2dir, args.cache_size) as m:
            data = m.data("zstd", nbytes)
            r = m.charged(lambda: dd(data, nbytes))
            rows["dd"].append(r)
        with Mount.of(args, b2dir, args.cache_size) as m:
            r = m.charged(lambda: python_json(args.python, DASK, [os.path.join(args.mnt, "zstd.b2nd")]))
            rows["dask"].append(r)
            if r["nbytes"] != nbytes or abs(r["sum"] - expected_sum) > 1e-9 * max(1.0, abs(expected_sum)):
                errors.append(f"Dask sum {r['sum']!r} of {r['nbytes']} bytes, numpy {expected_sum!r} of {nbytes}")
        f, t, d, k = (rows[x][-1] for x in ("find", "datatree", "dd", "dask"))
        tc, c = rows["datatree_consolidated"][-1], rows["copy"][-1]
        print(
            f"[{rep + 1}/{args.repeats}] find {f['seconds']:.3f} s, open_datatree {t['seconds']:.3f} s "
            f"(consolidated: {tc['seconds']:.3f} s, the zarr copy {c['seconds']:.3f} s) "
            f"({t['cpu']:.2f} CPU-s, daemon {t['daemon_cpu']:.2f}); dd {gbps(nbytes, d['seconds']):.2f} GB/s, "
            f"Dask {gbps(nbytes, k['seconds']):.2f} GB/s ({k['cpu']:.2f} CPU-s, daemon {k['daemon_cpu']:.2f})",
            flush=True,
        )

    med = functools.partial(row_median, rows)

    ratio_tree = statistics.median(t["seconds"] / f["seconds"] for t, f in zip(rows["datatree"], rows["find"]))
    ratio_dask = statistics.median(d["seconds"] / k["seconds"] for d, k in zip(rows["dd"], rows["dask"]))
    table = [
        "| row | wall s | reader CPU s | daemon CPU s | GB/s | ratio | target |",
        "|---|---|---|---|---|---|---|",
        f"| `find` of a tree of {TREE_ARRAYS:,} arrays | {med('find'):.3f} | {med('find', 'cpu'):.2f} | "
        f"{med('find', 'daemon_cpu'):.2f} | | 1.00 | |",
        f'| `xr.open_datatree(MNT, engine="zarr")` of the same tree | {med("datatree"):.3f} | '
        f"{med('datatree', 'cpu'):.2f} | {med('datatree', 'daemon_cpu'):.2f} | | {ratio_tree:.2f}× find's time | "
        f"≤ 2: {'PASS' if ratio_tree <= 2 else 'FAIL'} |",
        f"| cold `dd` of MNT/zstd.b2nd/data ({nbytes / (1 << 30):.3g} GiB) | {med('dd'):.3f} | {med('dd', 'cpu'):.2f} | "
        f"{med('dd', 'daemon_cpu'):.2f} | {gbps(nbytes, med('dd')):.2f} | 1.00 | |",
        f"| Dask `from_zarr(MNT/zstd.b2nd).sum()`, 2 threads | {med('dask'):.3f} | {med('dask', 'cpu'):.2f} | "
        f"{med('dask', 'daemon_cpu'):.2f} | {gbps(nbytes, med('dask')):.2f} | {ratio_dask:.2f}× dd's speed | "
        f"≥ 0.8: {'PASS' if ratio_dask >= 0.8 else 'FAIL'} |",
        *datatree_table(rows, TREE_ARRAYS),
        f"\n{host_load(env)}; {args.repeats} repeats (medians; ratios are medians of per-repeat ratios)",
    ]
    results = {"env": env, "rows": rows, "errors": errors, "expected_sum": expected_sum}
    print_report(table, os.path.join(args.workdir, "zarr3-results.json"), results, errors)
    print()
    dask = run_dask(args)
    return 2 if errors or dask else 0


def warm_tree(path: str) -> None:
    """Every file under `path` read once (into the page cache)."""
    subprocess.run(["find", path, "-type", "f", "-exec", "cat", "{}", "+"], stdout=subprocess.DEVNULL, check=True)


def run_datatree(args: Any) -> int:
    """The open_datatree row alone: the mount against the consolidated zarr copy."""
    env = host_env()
    errors: list[str] = []
    rows: dict[str, list[Json]] = {"datatree_consolidated": [], "copy": []}
    tree = ensure_tree(args, args.tree_arrays)
    copy = ensure_zarr_copy(args, tree)
    warm_tree(tree["dir"])
    warm_tree(copy)
    print(f"host: {env.get('cpu_model')} ({env['cpus']} CPUs), load {env['loadavg_start']:.2f}", flush=True)
    for rep in range(args.repeats):
        datatree_rows(args, tree, copy, rows, errors)
        tc, c = rows["datatree_consolidated"][-1], rows["copy"][-1]
        print(
            f"[{rep + 1}/{args.repeats}] open_datatree: mount {tc['seconds']:.3f} s ({tc['cpu']:.2f} CPU-s, "
            f"daemon {tc['daemon_cpu']:.2f}), zarr copy {c['seconds']:.3f} s ({c['cpu']:.2f} CPU-s)",
            flush=True,
        )
    table = [
        "| row | wall s | reader CPU s | daemon CPU s | GB/s | ratio | target |",
        "|---|---|---|---|---|---|---|",
        *datatree_table(rows, args.tree_arrays),
        f"\n{host_load(env)}; {args.repeats} repeats (medians; the ratio is the median of per-repeat ratios)",
    ]
    results = {"env": env, "rows": rows, "errors": errors}
    return print_report(table, os.path.join(args.workdir, "datatree-results.json"), results, errors)


# ---------------------------------------------------------------- the Dask sum row (issue 45)

DASK_SUM = r"""
import json, sys, time
import dask.array as da
path, kind = sys.argv[1], sys.argv[2]
c0, t0 = time.process_time(), time.perf_counter()
if kind == "blosc2":
    import blosc2
    b = blosc2.open(path)
    a = da.from_array(b, chunks=b.chunks)
else:
    a = da.from_zarr(path)
total = float(a.sum().compute(scheduler="threads", num_workers=2))
t1, c1 = time.perf_counter(), time.process_time()
print(json.dumps({"seconds": t1 - t0, "cpu": c1 - c0, "sum": total, "nbytes": int(a.nbytes),
                  "chunks": [list(map(int, c)) for c in a.chunks]}))
"""

DASK_FIELD = r"""
import json, os, sys, time
import numpy as np, blosc2, zarr
raw, rows, cols, chunk_rows, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
t0 = time.perf_counter()
x = np.fromfile(raw, dtype="<f8").reshape(rows, cols)
os.makedirs(os.path.join(out, "b2"), exist_ok=True)
a = blosc2.asarray(x, urlpath=os.path.join(out, "b2", "field.b2nd"), mode="w", chunks=(chunk_rows, cols))
z = zarr.create_array(os.path.join(out, "field.zarr"), shape=x.shape, dtype=x.dtype, chunks=(chunk_rows, cols),
                      compressors=None, fill_value=0.0, zarr_format=3, overwrite=True)
z[...] = x
print(json.dumps({"chunks": list(a.chunks), "blocks": list(a.blocks), "cratio": round(a.schunk.cratio, 3),
                  "codec": a.schunk.cparams.codec.name, "clevel": a.schunk.cparams.clevel,
                  "sum": float(x.sum()), "seconds": time.perf_counter() - t0}))
"""

DASK_FIELD_VERSION = 1
# The field's chunk rows: python-blosc2's default chunks on the issue's host (16 chunks of
# 1024 x 8192 float64, 64 MiB each); on this AMD EPYC host its defaults are 128 x 8192.
DASK_CHUNK_ROWS = 1024


def ensure_dask_field(args: Any, corpus: Json) -> Json:
    """WORKDIR/dask-<rows>x8192/: b2/field.b2nd (zstd, python-blosc2's default cparams, chunks of
    DASK_CHUNK_ROWS rows) and field.zarr (zarr-python, no compressor, the same chunks), both from
    the corpus's raw.bin; reused while the marker matches."""
    rows, cols = corpus["rows"], corpus["cols"]
    out = os.path.join(args.workdir, f"dask-{rows}x{cols}")
    raw = os.path.join(corpus["dir"], "raw.bin")
    st = os.stat(raw)
    want = {"version": DASK_FIELD_VERSION, "rows": rows, "cols": cols, "raw": [st.st_size, st.st_mtime_ns]}
    marker_path = os.path.join(out, "field.json")
    try:
        with open(marker_path) as f:
            old = json.load(f)
        if old["want"] == want and os.path.exists(os.path.join(out, "b2", "field.b2nd")):
            print(f"dask field: reusing {out}", flush=True)
            return {**old["made"], "dir": out}
    except (OSError, ValueError, KeyError):
        pass
    chunk_rows = min(DASK_CHUNK_ROWS, rows)
    print(f"dask field: writing field.b2nd and field.zarr ({rows}x{cols}, chunks of {chunk_rows} rows) ...", flush=True)
    made = python_json(args.python, DASK_FIELD, [raw, str(rows), str(cols), str(chunk_rows), out])
    with open(marker_path, "w") as f:
        json.dump({"want": want, "made": made}, f)
    return {**made, "dir": out}


def dask_round(args: Any, field: Json, rep: int, rows: dict[str, list[Json]]) -> None:
    """One round: the mount (fresh: a cold pass, then a warm one on the same mount), the plain-disk
    Zarr copy and python-blosc2's own reading, the first two in turn first (mount / plain, then
    plain / mount); then the mount with --direct-io, cold."""
    b2dir = os.path.join(field["dir"], "b2")
    plain = os.path.join(field["dir"], "field.zarr")

    def on_mount(extra: list[str], passes: list[str]) -> None:
        with Mount.of(args, b2dir, args.cache_size, extra) as m:
            for key in passes:
                r = m.charged(
                    lambda: python_json(args.python, DASK_SUM, [os.path.join(args.mnt, "field.b2nd"), "zarr"])
                )
                rows[key].append(r)

    def mount() -> None:
        on_mount([], ["mount", "mount_warm"])

    def disk() -> None:
        rows["plain"].append(python_json(args.python, DASK_SUM, [plain, "zarr"]))

    for step in (mount, disk) if rep % 2 == 0 else (disk, mount):
        step()
    rows["blosc2"].append(python_json(args.python, DASK_SUM, [os.path.join(b2dir, "field.b2nd"), "blosc2"]))
    on_mount(["--direct-io"], ["mount_dio"])


DASK_ROWS = (
    ("plain", "Dask `from_zarr(COPY).sum()`, plain-disk uncompressed Zarr v3 copy (page cache)"),
    ("mount", "Dask `from_zarr(MNT/field.b2nd).sum()`, fresh mount (cold)"),
    ("mount_warm", "the same again on that mount (the kernel keeps the chunk files' pages)"),
    ("mount_dio", "the mount with `--direct-io`, cold (no page cache kept)"),
    ("blosc2", "Dask `from_array(blosc2.open(field.b2nd)).sum()`"),
)


def dask_table(rows: dict[str, list[Json]], nbytes: int) -> list[str]:
    """The Dask sum rows as markdown lines: medians, each ratio the median of the per-round ratios
    of the plain copy's time to the row's (speed against the copy)."""

    def med(key: str, field: str = "seconds") -> float:
        return statistics.median(float(r.get(field, 0.0)) for r in rows[key])

    out = [
        "| Dask sum, 2 threads | wall s | reader CPU s | daemon CPU s | GB/s | speed vs the copy | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, label in DASK_ROWS:
        ratio = statistics.median(p["seconds"] / r["seconds"] for p, r in zip(rows["plain"], rows[key]))
        target = f"≥ 0.8: {'PASS' if ratio >= 0.8 else 'FAIL'}" if key == "mount" else ""
        daemon = f"{med(key, 'daemon_cpu'):.2f}" if key.startswith("mount") else ""
        out.append(
            f"| {label} | {med(key):.3f} | {med(key, 'cpu'):.2f} | {daemon} | {gbps(nbytes, med(key)):.2f} | "
            f"{ratio:.2f} | {target} |"
        )
    return out


def run_dask(args: Any) -> int:
    """The Dask sum row (issue 45): the mount against the plain-disk uncompressed Zarr v3 copy and
    python-blosc2's own reading, alternated rounds, equal sums; results in WORKDIR/dask-results.json."""
    env = host_env()
    errors: list[str] = []
    corpus = ensure_corpus(args.python, args.workdir, args.size_gib, names=("zstd",))
    field = ensure_dask_field(args, corpus)
    nbytes = corpus["nbytes"]
    b2 = os.path.join(field["dir"], "b2", "field.b2nd")
    warm_file(b2)
    warm_tree(os.path.join(field["dir"], "field.zarr"))
    # C-Blosc2's decode speed on the corpus's zstd.b2nd (the same values and codec in 8 MiB chunks:
    # decompress_chunk of a 64 MiB chunk mostly times the allocation of its output).
    zstd = os.path.join(corpus["dir"], "b2", "zstd.b2nd")
    c1 = run_worker(args.python, {"op": "cdecode", "path": zstd, "nthreads": 1})
    env["c_blosc2_1thread_gbps"] = gbps(c1["nbytes"], c1["seconds"])
    print(
        f"host: {env.get('cpu_model')} ({env['cpus']} CPUs), kernel {env['kernel']}, load {env['loadavg_start']:.2f}; "
        f"C-Blosc2 1 thread on zstd.b2nd: {env['c_blosc2_1thread_gbps']:.2f} GB/s; field chunks {field['chunks']}, "
        f"blocks {field['blocks']}, {field['codec']} {field['clevel']}, cratio {field['cratio']}",
        flush=True,
    )
    rows: dict[str, list[Json]] = {key: [] for key, _ in DASK_ROWS}
    for rep in range(args.repeats):
        dask_round(args, field, rep, rows)
        got = {key: rows[key][-1] for key, _ in DASK_ROWS}
        for key, r in got.items():
            if r["nbytes"] != nbytes:
                errors.append(f"{key}: Dask saw {r['nbytes']} bytes, expected {nbytes}")
            if r["sum"] != got["plain"]["sum"]:
                errors.append(f"{key}: sum {r['sum']!r} != the plain copy's {got['plain']['sum']!r}")
        if abs(got["plain"]["sum"] - field["sum"]) > 1e-9 * max(1.0, abs(field["sum"])):
            errors.append(f"the plain copy's sum {got['plain']['sum']!r} is not numpy's {field['sum']!r}")
        print(
            f"[{rep + 1}/{args.repeats}] load {os.getloadavg()[0]:.1f}: "
            + ", ".join(
                f"{key} {r['seconds']:.2f} s ({r['cpu']:.2f}"
                + (f"+{r['daemon_cpu']:.2f}" if "daemon_cpu" in r else "")
                + " CPU-s)"
                for key, r in got.items()
            ),
            flush=True,
        )
    table = [
        *dask_table(rows, nbytes),
        f"\n{host_load(env)}; C-Blosc2 1 thread {env['c_blosc2_1thread_gbps']:.2f} GB/s (zstd.b2nd, 8 MiB chunks); "
        f"{args.repeats} rounds (medians); field {corpus['rows']}x{corpus['cols']} float64, chunks {field['chunks']}",
    ]
    results = {"env": env, "field": field, "rows": rows, "errors": errors}
    return print_report(table, os.path.join(args.workdir, "dask-results.json"), results, errors)


def main() -> int:
    import argparse
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description="the open_datatree rows of the zarr3 scenario, or its Dask sum row, alone")
    ap.add_argument("--binary", default=os.path.join(repo, "target", "release", "blosc2fs"))
    ap.add_argument("--workdir", default="/tmp/blosc2fs-bench")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cache-size", default="128M")
    ap.add_argument("--mount-args", default="")
    ap.add_argument("--tree-arrays", type=int, default=TREE_ARRAYS)
    ap.add_argument("--dask", action="store_true", help="the Dask sum row instead (the 1 GiB field; heavy)")
    ap.add_argument("--size-gib", type=float, default=1.0, help="--dask: the corpus's size")
    args = ap.parse_args()
    args.binary, args.workdir = os.path.abspath(args.binary), os.path.abspath(args.workdir)
    os.makedirs(args.workdir, exist_ok=True)
    args.mnt, args.log = os.path.join(args.workdir, "mnt"), os.path.join(args.workdir, "daemon.log")
    install_cleanup()
    return run_dask(args) if args.dask else run_datatree(args)


if __name__ == "__main__":
    run_main(main)
