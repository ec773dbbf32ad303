"""The benchmarks' 1 GiB field: written once per work folder, reused by every scenario that reads it.

A float64 2-D field of shape (16384 * size-gib, 8192), smooth signal plus N(0, 0.5) noise rounded
to 2 decimals, in WORKDIR/corpus-<rows>x8192/: raw.bin (the values uncompressed, the bytes every
scan must equal) and b2/NAME.b2nd, each NAME a way of storing them (bench_mount.py's docstring
lists them). manifest.json records what was written; a corpus is reused while it matches, and
only the missing arrays are added (from raw.bin). The mount, disk-cache, zarr3, remote and
Caterva2 benchmarks all read it, so one work folder serves them all.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Sequence
from typing import Any

from benchlib import GIB, BenchError, Json, run_worker

COLS = 8192
BASE_ROWS = 16384  # 16384 x 8192 float64 = 1 GiB
CORPUS_VERSION = 1
SCALE_LINKS = ("z1", "z2", "z3", "z4")
# The arrays of the mount scenario's columns.
FILES = ("zstd", "lz4", "narrow", "clevel0")
# The ceiling: the same values stored with no codec and no filter (clevel 0: every chunk
# memcpy'ed). Not a column of its own: each array's scan reads it through the same daemon.
CEILING = "ceiling"
CORPUS_FILES = (*FILES, CEILING)


def rows_of(size_gib: float) -> int:
    return max(1, int(round(BASE_ROWS * size_gib)))


def corpus_dir(workdir: str, size_gib: float) -> str:
    """Where a corpus of `size_gib` lives in `workdir`."""
    return os.path.join(workdir, f"corpus-{rows_of(size_gib)}x{COLS}")


def ensure_corpus(
    python: str,
    workdir: str,
    size_gib: float,
    names: Sequence[str] = CORPUS_FILES,
    given: str | None = None,
) -> Json:
    """The corpus's manifest (plus "dir"), its arrays `names` written where missing.

    `given` names an existing corpus folder to read instead, never written: a BenchError when it
    lacks one of `names`. A corpus of this work folder gets scale/z1..z4.b2nd, hard links to
    zstd.b2nd (remade every run: zstd.b2nd may have been rewritten).
    """
    rows = rows_of(size_gib)
    cdir = os.path.abspath(given) if given else corpus_dir(workdir, size_gib)
    manifest_path = os.path.join(cdir, "manifest.json")
    nbytes = rows * COLS * 8
    manifest: Json = {
        "version": CORPUS_VERSION,
        "rows": rows,
        "cols": COLS,
        "dtype": "float64",
        "nbytes": nbytes,
        "files": {},
    }
    have_raw = False
    try:
        with open(manifest_path) as f:
            old = json.load(f)
        if (
            old.get("version") == CORPUS_VERSION
            and old.get("rows") == rows
            and old.get("nbytes") == nbytes
            and os.path.getsize(os.path.join(cdir, "raw.bin")) == nbytes
        ):
            manifest, have_raw = old, True
    except (OSError, ValueError, KeyError):
        pass
    missing = []
    for n in names:
        info = manifest["files"].get(n)
        p = os.path.join(cdir, "b2", f"{n}.b2nd")
        if not have_raw or not info or not os.path.exists(p) or os.path.getsize(p) != info["file_bytes"]:
            missing.append(n)
    if not missing:
        print(f"corpus: reusing {cdir}", flush=True)
    elif given:
        raise BenchError(
            f"--corpus {cdir}: no usable {rows}x{COLS} raw.bin + {', '.join(missing)} (manifest.json) there"
        )
    else:
        if not have_raw:
            subprocess.run(["rm", "-rf", cdir], check=True)
        os.makedirs(cdir, exist_ok=True)
        print(
            f"corpus: writing {', '.join(missing)}{'' if have_raw else ' and raw.bin'} "
            f"({rows}x{COLS} float64, {nbytes / GIB:.3g} GiB) in {cdir} ...",
            flush=True,
        )
        t0 = time.perf_counter()
        res = run_worker(
            python,
            {"op": "generate", "dir": cdir, "rows": rows, "cols": COLS, "names": missing, "make_raw": not have_raw},
        )
        if res["nbytes"] != nbytes:
            raise BenchError(f"corpus: generator wrote {res['nbytes']} bytes, expected {nbytes}")
        manifest["files"].update(res["files"])
        with open(manifest_path + ".tmp", "w") as f:
            json.dump(manifest, f, indent=2)
        os.rename(manifest_path + ".tmp", manifest_path)
        print(f"corpus: done in {time.perf_counter() - t0:.1f} s", flush=True)
    if not given and "zstd" in manifest["files"]:
        sdir = os.path.join(cdir, "scale")
        os.makedirs(sdir, exist_ok=True)
        for z in SCALE_LINKS:
            link = os.path.join(sdir, f"{z}.b2nd")
            if os.path.lexists(link):
                os.unlink(link)
            os.link(os.path.join(cdir, "b2", "zstd.b2nd"), link)
    return manifest | {"dir": cdir}


def generate(request: Json) -> Json:
    """Write the arrays request["names"] (and raw.bin when request["make_raw"]) into
    request["dir"]; runs in the worker (numpy, blosc2)."""
    import blosc2
    import numpy as np

    out, rows, cols = request["dir"], request["rows"], request["cols"]
    raw_path = os.path.join(out, "raw.bin")
    if request["make_raw"]:
        x = np.empty((rows, cols), dtype=np.float64)
        rng = np.random.default_rng(0)
        jj = (np.arange(cols, dtype=np.float64) / cols * 2 * np.pi)[None, :]
        for r0 in range(0, rows, 512):
            r1 = min(rows, r0 + 512)
            ii = (np.arange(r0, r1, dtype=np.float64) / BASE_ROWS * 2 * np.pi)[:, None]
            s = 10.0 * np.sin(4 * ii) * np.cos(3 * jj) + 3.0 * np.cos(7 * ii + 5 * jj)
            s += rng.normal(scale=0.5, size=s.shape)
            x[r0:r1] = np.round(s, 2)
        x.tofile(raw_path)
    else:
        x = np.fromfile(raw_path, dtype=np.float64).reshape(rows, cols)
    b2dir = os.path.join(out, "b2")
    os.makedirs(b2dir, exist_ok=True)
    specs: dict[str, dict[str, Any]] = {
        "zstd": {},
        "lz4": {"cparams": {"codec": blosc2.Codec.LZ4, "clevel": 5, "filters": [blosc2.Filter.SHUFFLE]}},
        "narrow": {"chunks": (1024, 512)},
        "clevel0": {"cparams": {"clevel": 0}},
        CEILING: {
            "cparams": blosc2.CParams(
                codec=blosc2.Codec.BLOSCLZ, clevel=0, filters=[blosc2.Filter.NOFILTER] * 6, filters_meta=[0] * 6
            )
        },
    }
    info: Json = {}
    for name in request["names"]:
        path = os.path.join(b2dir, f"{name}.b2nd")
        arr = blosc2.asarray(x, urlpath=path, mode="w", **specs[name])
        info[name] = {
            "chunks": list(arr.chunks),
            "blocks": list(arr.blocks),
            "codec": str(arr.schunk.cparams.codec.name),
            "clevel": arr.schunk.cparams.clevel,
            "filters": [f.name for f in arr.schunk.cparams.filters if f != blosc2.Filter.NOFILTER],
            "cratio": round(arr.schunk.cratio, 3),
            "file_bytes": os.path.getsize(path),
        }
        if name == CEILING:
            # Every chunk must be stored raw: the MEMCPYED flag (0x02) in its header, no
            # filter (bytes 16..21) and no filter meta (bytes 24..29) in the extended header.
            schunk = arr.schunk
            bad = []
            for i in range(schunk.nchunks):
                c = schunk.get_chunk(i)
                if not (c[2] & 0x02) or any(c[16:22]) or any(c[24:30]):
                    bad.append(i)
            if bad or arr.schunk.cparams.clevel != 0 or any(arr.schunk.cparams.filters_meta):
                raise ValueError(f"{path}: chunks {bad[:10]} are not memcpy'ed without filters")
            info[name]["memcpyed_chunks"] = schunk.nchunks
            info[name]["filters_meta"] = list(arr.schunk.cparams.filters_meta)
            del schunk
        del arr
    return {"files": info, "nbytes": int(x.nbytes)}
