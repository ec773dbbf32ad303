"""The values gen_fixtures.py stores, and the pipelines (codec + filters) it stores them with.

One job: deterministic data and parameters. Values of every dtype in several styles (smooth,
random, constant, zeros, strings), the expected bytes of the lossy filters (TRUNC_PREC,
INT_TRUNC) computed in numpy, the named filter pipelines and the cparams of a case.
"""

from __future__ import annotations

import math
import os
import shutil
import struct
from typing import Any

import numpy as np
from numpy.random import Generator

from fixture_frames import (
    BITSHUF,
    BYTEDELTA,
    BYTEDELTA_BUGGY,
    CODECS,
    DELTA,
    INT_TRUNC,
    NOF,
    PLUGIN_CODECS,
    SHUF,
    SM,
    TRUNC,
)

# --------------------------------------------------------------------------------------
# Data generation
# --------------------------------------------------------------------------------------

WORDS = [b"", b"a", b"blosc", b"zarr", b"fuse", b"rust!", b"\x00x\x01", b"chunk", b"b2nd", b"caterva"]
UWORDS = ["", "a", "héllo", "ñu", "日本語", "z", "Ωmega", "ab\x00c", "€uro", "ok"]


def gen_values(rng: Generator, dtype: Any, n: Any, style: Any) -> Any:
    """1-D array of n values of dtype in the given style."""
    dt = np.dtype(dtype)
    if dt.names:
        out = np.zeros(n, dt)
        for f in dt.names:
            out[f] = gen_values(rng, dt.fields[f][0], n, style)
        return out
    k = dt.kind
    i = np.arange(n, dtype=np.int64)
    if style == "zeros":
        return np.zeros(n, dt)
    if k == "b":
        if style == "random":
            return rng.random(n) < 0.5
        if style == "constant":
            return np.ones(n, bool)
        return (i // 7) % 3 == 0
    if k in "iu":
        info = np.iinfo(dt)
        if style == "random":
            return rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt.newbyteorder("=")).astype(dt)
        if style == "constant":
            return np.full(n, min(info.max, 77), dt)
        v = (i * 3 + (i // 11)) + (info.min // 2 if info.min < 0 else 0)
        return v.astype(dt.newbyteorder("=")).astype(dt)  # wraps
    if k == "f":
        if style == "random":
            v = rng.standard_normal(n) * 1000.0
            if n >= 16:
                for sp in (np.nan, np.inf, -np.inf, -0.0):
                    v[rng.integers(0, n)] = sp
        elif style == "constant":
            v = np.full(n, 3.25)
        else:
            v = np.sin(i * 0.05) * 100.0 + i * 0.01
        with np.errstate(over="ignore", invalid="ignore"):
            return v.astype(dt)
    if k == "c":
        r = gen_values(rng, "<f8", n, style)
        im = gen_values(rng, "<f8", n, "smooth" if style == "random" else style)[::-1]
        with np.errstate(over="ignore", invalid="ignore"):
            return (r + 1j * im).astype(dt)
    if k == "S":
        w = dt.itemsize
        if style == "random":
            idx = rng.integers(0, len(WORDS), size=n)
            return np.array([(WORDS[j] * (1 + w // 5))[:w] for j in idx], dtype=dt)
        if style == "constant":
            return np.full(n, b"const"[:w], dt)
        return np.array([(b"row%06d" % j)[:w] for j in range(n)], dtype=dt)
    if k == "U":
        w = dt.itemsize // 4
        if style == "random":
            idx = rng.integers(0, len(UWORDS), size=n)
            return np.array([UWORDS[j][:w] for j in idx], dtype=dt)
        if style == "constant":
            return np.full(n, "κ", dt)
        return np.array([f"u{j}"[:w] for j in range(n)], dtype=dt)
    raise ValueError(dt)


def make_data(
    rng: Generator,
    dtype: Any,
    shape: Any,
    styles: Any = ("smooth", "random", "constant", "smooth", "random", "zeros"),
    nseg: Any = None,
) -> Any:
    """A mixture of segments of different styles (in flat C order)."""
    n = math.prod(shape)
    dt = np.dtype(dtype)
    out = np.zeros(n, dt)
    if n:
        nseg = nseg or int(rng.integers(1, 5))
        cuts = sorted(set([0, n] + [int(x) for x in rng.integers(0, n, size=nseg - 1)]))
        for j, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
            pool = [x for x in styles if x != "zeros"] if j == 0 and len(styles) > 1 else styles
            style = pool[int(rng.integers(0, len(pool)))]
            out[a:b] = gen_values(rng, dt, b - a, style)
    return out.reshape(shape)


def apply_int_trunc(raw: Any, filters: Any, fmeta: Any, typesize: Any) -> Any:
    """Expected bytes after the (lossy) INT_TRUNC filter, when it is the first filter: the
    item's bit pattern (little-endian unsigned of typesize bytes) loses its low bits."""
    used = [f for f in filters if f != NOF]
    assert used[0] == INT_TRUNC, "INT_TRUNC must be the first filter for predictable output"
    prec = struct.unpack("b", bytes([fmeta[filters.index(INT_TRUNC)] & 0xFF]))[0]
    width = typesize * 8
    zeroed = width - prec if prec >= 0 else -prec
    assert 0 <= zeroed < width
    dt = {1: "<u1", 2: "<u2", 4: "<u4", 8: "<u8"}[typesize]
    a = np.frombuffer(raw, dt).copy()
    a &= np.array(((1 << width) - 1) ^ ((1 << zeroed) - 1), dtype=dt)
    return a.tobytes()


def apply_trunc(raw: Any, filters: Any, fmeta: Any, typesize: Any) -> Any:
    """Expected bytes after the (lossy) TRUNC_PREC filter, when it is the first filter."""
    if INT_TRUNC in filters:
        return apply_int_trunc(raw, filters, fmeta, typesize)
    if TRUNC not in filters:
        return raw
    used = [f for f in filters if f != NOF]
    assert used[0] == TRUNC, "TRUNC_PREC must be the first filter for predictable output"
    prec = struct.unpack("b", bytes([fmeta[filters.index(TRUNC)] & 0xFF]))[0]
    if typesize == 4:
        zeroed = 23 - prec if prec >= 0 else -prec
        a = np.frombuffer(raw, "<u4").copy()
        a &= np.uint32((0xFFFFFFFF << zeroed) & 0xFFFFFFFF)
    elif typesize == 8:
        zeroed = 52 - prec if prec >= 0 else -prec
        a = np.frombuffer(raw, "<u8").copy()
        a &= np.uint64((0xFFFFFFFFFFFFFFFF << zeroed) & 0xFFFFFFFFFFFFFFFF)
    else:
        raise ValueError("trunc_prec needs typesize 4 or 8")
    return a.tobytes()


def trunc_expected(raw: Any, shape: Any, chunkshape: Any, hdr: Any, chunk_flags: Any, chunk_specials: Any) -> Any:
    """Expected array bytes when TRUNC_PREC is in the pipeline: the filter only touches chunks
    that really went through the filter pipeline -- not memcpyed chunks (clevel 0, or the
    incompressible fallback, which copy the source verbatim) nor special VALUE chunks."""
    ts = hdr["typesize"]
    t = apply_trunc(raw, hdr["filters"], hdr["filters_meta"], ts)
    if math.prod(shape) == 0:
        return t
    out = np.frombuffer(t, np.uint8).reshape(tuple(shape) + (ts,)).copy()
    src = np.frombuffer(raw, np.uint8).reshape(tuple(shape) + (ts,))
    grid = [-(-s // c) for s, c in zip(shape, chunkshape)]
    for ci, idx in enumerate(np.ndindex(*grid)):
        # special VALUE chunks come from blosc2.full (stored verbatim); zero/NaN specials read
        # the same either way (truncation keeps 0 and the canonical NaN), and a chunk that
        # became all-zero *after* truncation is also written as a zero special
        if chunk_specials[ci] == 3 or (chunk_specials[ci] == 0 and chunk_flags[ci] & 0x02):
            region = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunkshape, shape))
            out[region] = src[region]
    return out.tobytes()


def pipeline(kind: Any, typesize: Any, trunc_bits: Any = None) -> Any:
    """(filters, filters_meta) for a named pipeline."""
    f = [0] * 6
    m = [0] * 6
    if kind == "none":
        pass
    elif kind == "shuffle":
        f[5] = SHUF
    elif kind == "bitshuffle":
        f[5] = BITSHUF
    elif kind == "delta":
        f[5] = DELTA
    elif kind == "delta+shuffle":
        f[4], f[5] = DELTA, SHUF
    elif kind == "delta+bitshuffle":
        f[4], f[5] = DELTA, BITSHUF
    elif kind == "shuffle+delta":
        f[4], f[5] = SHUF, DELTA
    elif kind == "trunc+shuffle":
        f[4], f[5] = TRUNC, SHUF
        m[4] = trunc_bits if trunc_bits is not None else (10 if typesize == 4 else 20)
    elif kind == "trunc+bitshuffle":
        f[4], f[5] = TRUNC, BITSHUF
        m[4] = trunc_bits if trunc_bits is not None else (12 if typesize == 4 else 30)
    elif kind == "shuffle+bytedelta":
        f[4], f[5] = SHUF, BYTEDELTA
        m[5] = typesize
    elif kind == "bytedelta":
        f[5] = BYTEDELTA
        m[5] = typesize
    elif kind == "shuffle(meta)":
        f[5] = SHUF
        m[5] = 4 if typesize % 4 == 0 and typesize > 4 else (2 if typesize % 2 == 0 and typesize > 2 else 0)
    elif kind == "double-shuffle":
        f[4], f[5] = SHUF, SHUF
    elif kind == "int_trunc+shuffle":
        f[4], f[5] = INT_TRUNC, SHUF
        m[4] = trunc_bits if trunc_bits is not None else -(typesize * 2)
    elif kind == "shuffle+bytedelta_buggy":
        f[4], f[5] = SHUF, BYTEDELTA_BUGGY
        m[5] = typesize
    else:
        raise ValueError(kind)
    m = [x & 0xFF for x in m]
    return f, m


def cparams(
    codec: str = "zstd",
    clevel: int = 5,
    filters: Any = None,
    filters_meta: Any = None,
    splitmode: Any = SM.AUTO_SPLIT,
    use_dict: bool = False,
    typesize: Any = None,
    codec_meta: int = 0,
) -> Any:
    d = dict(
        codec=CODECS.get(codec) or PLUGIN_CODECS[codec],
        codec_meta=codec_meta,
        clevel=clevel,
        nthreads=1,
        splitmode=splitmode,
        use_dict=use_dict,
        filters=list(filters if filters is not None else [0, 0, 0, 0, 0, SHUF]),
        # python-blosc2 takes filters_meta as int8 (negative values are stored as uint8)
        filters_meta=[
            (x & 0xFF) - 256 if (x & 0xFF) > 127 else x & 0xFF
            for x in (filters_meta if filters_meta is not None else [0] * 6)
        ],
    )
    if typesize is not None:
        d["typesize"] = typesize
    return d


DPARAMS = dict(nthreads=1)


def rmpath(p: Any) -> None:
    if os.path.isdir(p):
        shutil.rmtree(p)
    elif os.path.exists(p):
        os.remove(p)
