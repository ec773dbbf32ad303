#!/usr/bin/env python3
"""Generate ZFP test files (codecs ZFP_ACC 33, ZFP_PREC 34, ZFP_RATE 35) and their expected bytes.

Usage:
    gen_zfp_fixtures.py OUTDIR                      # the fixed set (tests/fixtures/zfp)
    gen_zfp_fixtures.py --random N --seed S OUTDIR  # N random cases (differential testing)
    gen_zfp_fixtures.py --bench OUTDIR              # one large smooth 2-D f8 field per mode

ZFP is lossy, so the expected bytes are C-Blosc2's decode, never the source data:
each chunk is decompressed with SChunk.decompress_chunk *on the object that wrote it*
(python-blosc2 4.14.1 cannot reopen a ZFP_ACC file whose codec_meta is above 127,
because it reads the meta byte back as a signed value), and the whole array is
re-assembled from those chunks into C order (b2nd block layout, undone with numpy).

OUTDIR/manifest.json maps case name to:

    path          the .b2nd file, relative to OUTDIR
    size, sha256  length and sha256 of the array's C-order bytes, as C-Blosc2 decodes them
    chunk_sha256  sha256 of each decompressed chunk (block layout, padding included)
    shape, chunkshape, blockshape, dtype
    codec         "zfp_acc" | "zfp_prec" | "zfp_rate"
    codec_meta    the meta byte (0-255) as given to python-blosc2
    data          how the source values were made (smooth, noisy, random, ...)
    filters       the filter pipeline before ZFP: default (python-blosc2's, SHUFFLE), none,
                  bitshuffle, trunc (TRUNC_PREC 12 bits), delta_shuffle
    blocks_raw    how many blocks C-Blosc2 stored uncompressed (ZFP could not shrink them)
    notes         free text

Cases C-Blosc2 itself refuses to write (it fails on blockshapes with a dimension below 4,
and crashes on some rates) are skipped and counted: each case is written in a forked child. Deterministic: the same
arguments give byte-identical files (one thread).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
from typing import Any, NamedTuple

import blosc2
import numpy as np
from numpy.random import Generator

from fixture_frames import ORACLE_VERSION, reassemble, sha256

MODES = {"zfp_acc": blosc2.Codec.ZFP_ACC, "zfp_prec": blosc2.Codec.ZFP_PREC, "zfp_rate": blosc2.Codec.ZFP_RATE}
F = blosc2.Filter
# Filter pipelines: python-blosc2's default keeps SHUFFLE before the codec, so ZFP then
# compresses shuffled bytes as if they were floats (garbage, but what C-Blosc2 writes and
# decodes, so it must decode identically); NOFILTER is what ZFP is meant for.
FILTERS = {
    "default": None,
    "none": [F.NOFILTER],
    "bitshuffle": [F.BITSHUFFLE],
    "trunc": [F.TRUNC_PREC, F.NOFILTER],
    "delta_shuffle": [F.DELTA, F.SHUFFLE],
}


class ZfpCase(NamedTuple):
    """The parameters of one ZFP case: what the parent names and the forked child writes."""

    shape: Any
    chunks: Any
    blocks: Any
    dtype: Any
    mode: Any
    meta: Any
    style: Any
    seed: Any
    filters: str = "none"


def make_data(rng: Generator, shape: Any, dtype: Any, style: Any) -> Any:
    """Source values of `style` (smooth fields are what ZFP is for; the others stress it)."""
    n = math.prod(shape)
    grids = np.meshgrid(*[np.linspace(0, 1, s) for s in shape], indexing="ij")
    if style in ("smooth", "noisy", "range"):
        v = np.zeros(shape)
        for _ in range(3):
            phase = rng.uniform(0, 6.3)
            freq = rng.uniform(0.5, 6.0, size=len(shape))
            v = v + np.sin(sum(f * g for f, g in zip(freq, grids)) * 3.0 + phase)
        v *= 10.0 ** rng.uniform(-3, 6)
        if style == "noisy":
            v += rng.normal(0, np.abs(v).mean() * 0.05 + 1e-9, size=shape)
        if style == "range":
            v *= (
                10.0 ** rng.integers(-30, 30, size=shape).astype(float)
                if dtype == "<f8"
                else 10.0 ** rng.integers(-12, 12, size=shape).astype(float)
            )
    elif style == "random":
        v = rng.normal(0, 10.0 ** rng.uniform(-3, 3), size=shape)
    elif style == "holes":  # mostly zeros and a constant, with a few bumps
        v = np.where(rng.random(shape) < 0.9, 0.0, rng.normal(0, 1, size=shape))
        v[tuple(slice(0, max(1, s // 2)) for s in shape)] = 3.25
    elif style == "ramp":
        v = np.arange(n, dtype=float).reshape(shape) * 0.5 - n / 7
    else:
        raise ValueError(style)
    return np.ascontiguousarray(v.astype(dtype))


class Gen:
    def __init__(self, outdir: str) -> None:
        self.outdir = outdir
        self.manifest: dict[str, Any] = {}
        self.skipped: list[str] = []

    def case(self, name: Any, spec: ZfpCase, notes: str = "") -> bool:
        """Write one case in a forked child (C-Blosc2 3.3.5 crashes on some ZFP parameters)
        and record its manifest entry; returns whether it was written."""
        if os.environ.get("ZFP_GEN_TRACE"):
            shown = (spec.shape, spec.chunks, spec.blocks, spec.dtype, spec.mode, spec.meta, spec.style, spec.filters)
            print("case", name, *shown, file=sys.stderr, flush=True)
        rel = name + ".b2nd"
        path = os.path.join(self.outdir, rel)
        if os.path.exists(path):
            os.remove(path)
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            os.close(rfd)
            try:
                entry = write_case(path, spec)
                out = json.dumps({"entry": entry}, allow_nan=False)
            except Exception as e:  # noqa: BLE001 - C-Blosc2 refuses some parameters for ZFP
                out = json.dumps({"error": f"{type(e).__name__}: {e}"})
            with os.fdopen(wfd, "w") as f:
                f.write(out)
            os._exit(0)
        os.close(wfd)
        with os.fdopen(rfd) as f:
            text = f.read()
        _, status = os.waitpid(pid, 0)
        result: dict[str, Any] = (
            json.loads(text) if text and os.WIFEXITED(status) else {"error": f"C-Blosc2 crashed (wait status {status})"}
        )
        if "error" in result:
            self.skipped.append(f"{name}: {result['error']}")
            if os.path.exists(path):
                os.remove(path)
            return False
        entry = {"path": rel, **result["entry"], "notes": notes}
        self.manifest[name] = entry
        return True

    def write_manifest(self) -> None:
        # one line per case: small, and diffs stay readable
        lines = [f" {json.dumps(k)}: {json.dumps(v, allow_nan=False)}" for k, v in self.manifest.items()]
        with open(os.path.join(self.outdir, "manifest.json"), "w") as f:
            f.write("{\n" + ",\n".join(lines) + "\n}\n")


def write_case(path: str, spec: ZfpCase) -> Any:
    """Write the file and return its manifest entry (without path and notes)."""
    shape, chunks, blocks, dtype, mode, meta, style, seed, filters = spec
    rng = np.random.default_rng(seed)
    data = make_data(rng, shape, dtype, style)
    kw: dict[str, Any] = dict(codec=MODES[mode], codec_meta=meta, nthreads=1)
    pipeline = FILTERS[filters]
    if pipeline is not None:
        kw["filters"] = pipeline
        kw["filters_meta"] = [12 if f == F.TRUNC_PREC else 0 for f in pipeline]
    arr = blosc2.asarray(
        data, chunks=tuple(chunks), blocks=tuple(blocks), cparams=blosc2.CParams(**kw), urlpath=path, mode="w"
    )
    sc = arr.schunk
    chunks_out, blocks_raw = [], 0
    for i in range(sc.nchunks):
        c = sc.get_chunk(i)
        assert c[22] == MODES[mode].value or c[2] & 0x02 or (c[31] >> 4) & 7, (path, i, c[:32].hex())
        nbytes = int.from_bytes(c[4:8], "little")
        d = sc.decompress_chunk(i)
        assert len(d) == nbytes, (path, i)
        chunks_out.append(d)
        blocks_raw += raw_blocks(c)
    raw = reassemble(chunks_out, shape, chunks, blocks, np.dtype(dtype).itemsize)
    return {
        "size": len(raw),
        "sha256": sha256(raw),
        "chunk_sha256": [sha256(c) for c in chunks_out],
        "shape": list(shape),
        "chunkshape": list(chunks),
        "blockshape": list(blocks),
        "dtype": dtype,
        "codec": mode,
        "codec_meta": meta,
        "data": style,
        "filters": filters,
        "blocks_raw": blocks_raw,
    }


def raw_blocks(chunk: Any) -> Any:
    """How many blocks of a (non-special, non-memcpyed) chunk C-Blosc2 stored uncompressed."""
    flags, special = chunk[2], (chunk[31] >> 4) & 7
    nbytes = int.from_bytes(chunk[4:8], "little")
    blocksize = int.from_bytes(chunk[8:12], "little")
    if special or flags & 0x02 or blocksize == 0:
        return 0
    nblocks = -(-nbytes // blocksize)
    count = 0
    for b in range(nblocks):
        start = int.from_bytes(chunk[32 + 4 * b : 36 + 4 * b], "little")
        csize = int.from_bytes(chunk[start : start + 4], "little", signed=True)
        bsize = min(blocksize, nbytes - b * blocksize)
        count += csize == bsize
    return count


# Fixed set: every mode x f4/f8 x 1-D..4-D, odd shapes and blockshapes (not multiples of 4,
# arrays not multiples of the chunkshape, chunkshapes not multiples of the blockshape), and
# the meta values at the edges of what each mode accepts.
FIXED_SHAPES = {
    1: ((75,), (40,), (13,)),
    2: ((13, 17), (10, 9), (5, 6)),
    3: ((6, 5, 7), (5, 5, 7), (5, 5, 5)),
    4: ((4, 4, 4, 7), (4, 4, 4, 5), (4, 4, 4, 5)),
}
FIXED_METAS = {
    "zfp_acc": [254, 0, 3, 250, 200, 127, 128, 255, 40],
    "zfp_prec": [0, 10, 20, 30, 59, 60, 255],
    "zfp_rate": [1, 10, 25, 37, 50, 99, 0, 100],
}
STYLES = ["smooth", "noisy", "random", "range", "holes", "ramp"]


def fixed_set(g: Gen) -> None:
    k = 0
    for mode, metas in FIXED_METAS.items():
        for dtype in ("<f4", "<f8"):
            for ndim, (shape, chunks, blocks) in FIXED_SHAPES.items():
                meta = metas[k % len(metas)]
                style = STYLES[k % len(STYLES)]
                filters = ["none", "default", "none", "bitshuffle"][k % 4]
                name = f"{mode}_{dtype[1:]}_{ndim}d_m{meta}_{style}_{filters}"
                g.case(name, ZfpCase(shape, chunks, blocks, dtype, mode, meta, style, seed=k, filters=filters))
                k += 1
    # every remaining meta of each mode once, on a small 2-D f8 array
    for mode, metas in FIXED_METAS.items():
        for meta in metas:
            name = f"{mode}_f8_2d_m{meta}_smooth_none"
            if name not in g.manifest:
                g.case(name, ZfpCase((9, 11), (9, 6), (5, 6), "<f8", mode, meta, "smooth", seed=k))
                k += 1
    # TRUNC_PREC before ZFP
    trunc = ZfpCase((13, 17), (10, 9), (5, 6), "<f8", "zfp_rate", 40, "noisy", seed=k + 1, filters="trunc")
    assert g.case("zfp_rate_f8_2d_trunc", trunc), g.skipped[-1]


def rand_case(g: Gen, i: Any, seed: Any, rnd: Generator) -> Any:
    ndim = int(rnd.integers(1, 5))
    max_items = [0, 3000, 4000, 6000, 8000][ndim]
    blocks = [int(rnd.integers(4, 13 if ndim < 3 else 8)) for _ in range(ndim)]
    if rnd.random() < 0.05:
        blocks[0] = int(rnd.integers(1, 4))  # C-Blosc2 refuses dimensions below 4: keep trying
    chunks = [b * int(rnd.integers(1, 3)) + int(rnd.integers(0, b)) * int(rnd.random() < 0.5) for b in blocks]
    shape = [max(1, c * int(rnd.integers(1, 3)) - int(rnd.integers(0, c))) for c in chunks]
    while math.prod(shape) > max_items:
        d = int(np.argmax(shape))
        shape[d] = max(1, shape[d] // 2)
    chunks = [min(c, max(s, b)) for c, s, b in zip(chunks, shape, blocks)]
    blocks = [min(b, c) for b, c in zip(blocks, chunks)]
    mode = list(MODES)[int(rnd.integers(0, 3))]
    if mode == "zfp_acc":
        meta = int(rnd.choice([int(rnd.integers(0, 256)), int(rnd.integers(240, 256)), int(rnd.integers(0, 8))]))
    elif mode == "zfp_prec":
        meta = int(rnd.choice([int(rnd.integers(0, 256)), int(rnd.integers(0, 61))]))
    else:
        meta = int(rnd.integers(0, 100))
    dtype = ["<f4", "<f8"][int(rnd.integers(0, 2))]
    style = STYLES[int(rnd.integers(0, len(STYLES)))]
    filters = ["none", "none", "default", "bitshuffle", "trunc", "delta_shuffle"][int(rnd.integers(0, 6))]
    name = f"r{seed}_{i}_{mode}_{dtype[1:]}_m{meta}_{filters}"
    return g.case(
        name, ZfpCase(shape, chunks, blocks, dtype, mode, meta, style, seed=seed * 100_003 + i, filters=filters)
    )


def random_set(g: Gen, n: Any, seed: Any) -> None:
    rnd = np.random.default_rng(seed)
    for i in range(n):
        rand_case(g, i, seed, rnd)


def bench_set(g: Gen) -> None:
    """One realistic field per mode: a smooth 2-D f8 simulation-like field of 64 MiB."""
    shape, chunks, blocks = (2048, 4096), (256, 4096), (32, 512)
    for mode, meta in (("zfp_acc", 251), ("zfp_prec", 20), ("zfp_rate", 25)):
        assert g.case(f"bench_{mode}", ZfpCase(shape, chunks, blocks, "<f8", mode, meta, "smooth", seed=7)), g.skipped[
            -1
        ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--random", type=int, default=None, metavar="N", help="write N random cases")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--bench", action="store_true", help="write the large benchmark fields")
    args = ap.parse_args()
    if blosc2.__version__ != ORACLE_VERSION:
        print(f"warning: meant for python-blosc2 {ORACLE_VERSION}, found {blosc2.__version__}", file=sys.stderr)
    blosc2.set_nthreads(1)
    os.makedirs(args.outdir, exist_ok=True)
    old = os.path.join(args.outdir, "manifest.json")
    if os.path.exists(old):
        with open(old) as f:
            for e in json.load(f).values():
                p = os.path.normpath(os.path.join(args.outdir, e["path"]))
                if p.startswith(os.path.normpath(args.outdir) + os.sep) and os.path.exists(p):
                    shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    g = Gen(args.outdir)
    if args.bench:
        bench_set(g)
    elif args.random is not None:
        random_set(g, args.random, args.seed)
    else:
        fixed_set(g)
    g.write_manifest()
    total = sum(os.path.getsize(os.path.join(args.outdir, e["path"])) for e in g.manifest.values())
    raw = sum(e["blocks_raw"] for e in g.manifest.values())
    for s in g.skipped:
        print("skipped", s)
    print(
        f"{len(g.manifest)} ZFP cases in {args.outdir}, {total / 1024:.1f} KiB, {raw} blocks stored raw; "
        f"skipped {len(g.skipped)} that C-Blosc2 refused to write"
    )


if __name__ == "__main__":
    main()
