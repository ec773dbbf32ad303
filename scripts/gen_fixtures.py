#!/usr/bin/env python3
"""Generate Blosc2 test fixtures (and their expected contents) for blosc2fs.

Usage:
    gen_fixtures.py OUTDIR                      # the fixed fixture set
    gen_fixtures.py --random N --seed S OUTDIR  # N random cases (differential testing)

Both modes write OUTDIR/manifest.json, a JSON object mapping case name to:

    path          file (contiguous frame) or directory (sparse frame), relative to OUTDIR
    kind          "b2nd" | "caterva" | "frame"
    storage       "contiguous" | "sparse"
    size, sha256  length and sha256 of the expected output: the array's bytes in C order
                  for b2nd/caterva (computed from the numpy source data, never by reading
                  the file back), the concatenation of all decompressed chunks for frames
    shape, chunkshape, blockshape   lists (null for plain frames)
    dtype         dtype string as stored in the b2nd metalayer (null for caterva/frame)
    itemsize      the frame's typesize
    nchunks       number of chunks
    codec, clevel, filters, filters_meta, splitmode, use_dict
                  as recorded in the frame header (codec: blosclz/lz4/lz4hc/zlib/zstd,
                  splitmode: the blosc2.SplitMode name)
    vlmeta        the vlmetalayers as JSON (msgpack mapping: nil->null, bool, int,
                  finite float->number, NaN->"NaN", +inf->"Infinity", -inf->"-Infinity",
                  str, bin->{"base64": ...}, array->list, map->object with string keys,
                  ext 44 (complex, >dd)->{"real": r, "imag": i}, other ext->{"ext": t, "base64": ...})
    chunk_sha256  sha256 of each decompressed chunk (b2nd: block layout, padding included)
    special       (optional) special chunks present
    notes         free text

Everything is verified while generating: for b2nd/caterva the expected array is
re-assembled from the decompressed chunks (independent numpy implementation of the
b2nd chunk/block layout) and, when the C library shipped with python-blosc2 can be
loaded with ctypes, also compared against b2nd_open + b2nd_to_cbuffer.

Chunks that are special "uninitialized" chunks have undefined content in C-Blosc2;
the manifest expects them to read back as zero bytes (both in sha256 and chunk_sha256).

Deterministic: the same arguments produce byte-identical files (nthreads is pinned to 1
so the frame headers do not depend on the machine).
"""

import argparse
import base64
import ctypes
import gc
import hashlib
import json
import math
import os
import random
import shutil
import struct
import sys
import zlib

import msgpack
import numpy as np

import blosc2
from blosc2.msgpack_utils import msgpack_packb

ORACLE_VERSION = "4.14.1"

# Filter ids (see blosc2.Filter)
NOF = blosc2.Filter.NOFILTER.value  # 0
SHUF = blosc2.Filter.SHUFFLE.value  # 1
BITSHUF = blosc2.Filter.BITSHUFFLE.value  # 2
DELTA = blosc2.Filter.DELTA.value  # 3
TRUNC = blosc2.Filter.TRUNC_PREC.value  # 4
BYTEDELTA = blosc2.Filter.BYTEDELTA.value  # 35
NDCELL = blosc2.Filter.NDCELL.value  # 32
NDMEAN = blosc2.Filter.NDMEAN.value  # 33
BYTEDELTA_BUGGY = 34  # the early BYTEDELTA; C-Blosc2 still registers (and writes) it
INT_TRUNC = blosc2.Filter.INT_TRUNC.value  # 36

C = blosc2.Codec
SM = blosc2.SplitMode
CODEC_NAMES = {0: "blosclz", 1: "lz4", 2: "lz4hc", 4: "zlib", 5: "zstd"}
CODECS = {"blosclz": C.BLOSCLZ, "lz4": C.LZ4, "lz4hc": C.LZ4HC, "zlib": C.ZLIB, "zstd": C.ZSTD}
PLUGIN_CODECS = {"ndlz": C.NDLZ}
SPECIAL_NAMES = {1: "zero", 2: "nan", 3: "value", 4: "uninit"}

DTYPES = [
    "i1", "u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8",
    ">i4", ">f8", "<c8", "<c16", "?", "S7", "<U5",
    [("a", "<i4"), ("b", "<f8"), ("c", "S3")],
    "S300",
    [("id", "<i8"), ("name", "S284"), ("v", "<f8")],  # 300-byte record
]


PLUGIN_CODEC_NAMES = {32: "ndlz"}


def codec_name(hdr):
    """The codec's name as meta.json gives it (plugin codecs: compcode 6 + udcodec id)."""
    if hdr["compcode"] == 6:
        return PLUGIN_CODEC_NAMES.get(hdr["udcodec"], f"codec{hdr['udcodec']}")
    return CODEC_NAMES.get(hdr["compcode"], f"codec{hdr['compcode']}")


def sha256(b):
    return hashlib.sha256(b).hexdigest()


# --------------------------------------------------------------------------------------
# Frame inspection helpers (independent of python-blosc2's own parsing)
# --------------------------------------------------------------------------------------

def header_file(path):
    return os.path.join(path, "chunks.b2frame") if os.path.isdir(path) else path


def parse_frame_header(path):
    with open(header_file(path), "rb") as f:
        b = f.read()
    assert b[2:10] == b"b2frame\x00", path
    h = {
        "header_len": int.from_bytes(b[11:15], "big"),
        "frame_len": int.from_bytes(b[16:24], "big"),
        "general_flags": b[25],
        "frame_type": b[26],
        "compcode": b[27] & 0x0F,
        "clevel": b[27] >> 4,
        "splitmode": (b[28] & 0x03) + 1,
        "nbytes": int.from_bytes(b[30:38], "big", signed=True),
        "cbytes": int.from_bytes(b[39:47], "big", signed=True),
        "typesize": int.from_bytes(b[48:52], "big", signed=True),
        "blocksize": int.from_bytes(b[53:57], "big", signed=True),
        "chunksize": int.from_bytes(b[58:62], "big", signed=True),
        "nfilters": b[70],
        "filters": list(b[71:77]),
        "filters_meta": list(b[79:85]),
        "udcodec": b[77],
        "use_dict": bool(b[85] & 1),
        "raw": b,
    }
    return h


def read_offsets(path, hdr):
    """Decode the chunk-offsets index. Returns (offsets list, index chunk special type)."""
    b = hdr["raw"]
    if hdr["nbytes"] == 0:  # no chunks (and then no offsets chunk either)
        return [], None
    pos = hdr["header_len"] + (0 if hdr["frame_type"] == 1 else hdr["cbytes"])
    c = b[pos:]
    ccb = int.from_bytes(c[12:16], "little")
    nbytes = int.from_bytes(c[4:8], "little")
    if nbytes == 0:
        return [], None
    raw = blosc2.decompress(bytes(c[:ccb]))
    offs = np.frombuffer(raw, "<i8")
    return [int(o) for o in offs], (c[31] >> 4) & 7


def parse_metalayers(hdr):
    """Fixed-length metalayers from the frame header: {name: raw content bytes}."""
    b = hdr["raw"]
    p = 87
    if hdr["header_len"] <= p:
        return {}
    assert b[p] == 0x93 and b[p + 1] == 0xCD and b[p + 4] == 0xDE, "unexpected metalayer section"
    n = int.from_bytes(b[p + 5:p + 7], "big")
    p += 7
    out = {}
    for _ in range(n):
        t = b[p]
        assert 0xA0 <= t <= 0xBF, "metalayer names are fixstr"
        ln = t - 0xA0
        name = b[p + 1:p + 1 + ln].decode()
        p += 1 + ln
        assert b[p] == 0xD2
        off = int.from_bytes(b[p + 1:p + 5], "big")
        p += 5
        assert b[off] == 0xC6
        clen = int.from_bytes(b[off + 1:off + 5], "big")
        out[name] = bytes(b[off + 5:off + 5 + clen])
    return out


def needs_schunk(hdr):
    """Whether the frame's filters need their SChunk to decompress (blosc2.decompress fails)."""
    f, m = hdr["filters"], hdr["filters_meta"]
    return NDCELL in f or NDMEAN in f or any(x in (BYTEDELTA, BYTEDELTA_BUGGY) and y == 0 for x, y in zip(f, m))


def read_chunks_direct(path, hdr, offsets):
    """Decompressed chunks read without python-blosc2's SChunk machinery: chunk bytes are
    located through the offsets index and decompressed with blosc2.decompress; chunks that
    exist only as special offsets are synthesized. Returns [(bytes, special_type, flags)]."""
    b = hdr["raw"]
    n = len(offsets)
    out = []
    for i, o in enumerate(offsets):
        if o < 0:
            t = ((o & 0xFFFFFFFFFFFFFFFF) >> 56) & 0x7F
            nb = hdr["chunksize"]
            if i == n - 1 and hdr["chunksize"] > 0:
                nb = hdr["nbytes"] - (n - 1) * hdr["chunksize"]
            if t in (1, 4):
                out.append((bytes(nb), t, 0))
            elif t == 2:
                ts = hdr["typesize"]
                nan = np.full(nb // ts, np.nan, "<f4" if ts == 4 else "<f8")
                out.append((nan.tobytes(), t, 0))
            else:
                raise ValueError(f"special offset type {t}")
            continue
        if hdr["frame_type"] == 1:
            with open(os.path.join(path, "%08X.chunk" % o), "rb") as f:
                c = f.read()
        else:
            c = b[hdr["header_len"] + o:]
        cb = int.from_bytes(c[12:16], "little")
        c = bytes(c[:cb])
        st = (c[31] >> 4) & 7
        if st == 4:
            out.append((bytes(int.from_bytes(c[4:8], "little")), st, c[2]))
        elif needs_schunk(hdr):
            # these filters read the b2nd metalayer or the SChunk's typesize: only an SChunk
            # can decompress them
            out.append((None, st, c[2]))
        else:
            out.append((blosc2.decompress(c), st, c[2]))
    return out


def special_summary(offsets, index_special, chunk_specials):
    """Human/machine readable note on special chunks."""
    parts = []
    by = {}
    for i, o in enumerate(offsets):
        if o < 0:
            t = ((o & 0xFFFFFFFFFFFFFFFF) >> 56) & 0x7F
            by.setdefault(SPECIAL_NAMES.get(t, f"type{t}"), []).append(i)
    for k, v in by.items():
        parts.append(f"index-{k}:{compact_list(v)}")
    vals = [i for i, s in enumerate(chunk_specials) if s == 3]
    if vals:
        parts.append(f"value-chunk:{compact_list(vals)}")
    if index_special:
        parts.append(f"offsets-index-chunk-special:{SPECIAL_NAMES.get(index_special, index_special)}")
    return "; ".join(parts) if parts else None


def compact_list(v):
    if len(v) > 12:
        return f"[{v[0]}..{v[-1]}] ({len(v)} chunks)"
    return "[" + ",".join(map(str, v)) + "]"


# --------------------------------------------------------------------------------------
# msgpack -> JSON mapping for vlmeta
# --------------------------------------------------------------------------------------

def fnum(x):
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def b64(b):
    return base64.b64encode(bytes(b)).decode("ascii")


def mp_json(o):
    if o is None or isinstance(o, bool):
        return o
    if isinstance(o, int):
        return o
    if isinstance(o, float):
        return fnum(o)
    if isinstance(o, str):
        return o
    if isinstance(o, (bytes, bytearray)):
        return {"base64": b64(o)}
    if isinstance(o, msgpack.ExtType):  # (a namedtuple: test before list/tuple)
        if o.code == 44 and len(o.data) == 16:
            r, i = struct.unpack(">dd", o.data)
            return {"real": fnum(r), "imag": fnum(i)}
        return {"ext": o.code, "base64": b64(o.data)}
    if isinstance(o, msgpack.Timestamp):
        return {"ext": -1, "base64": b64(o.to_bytes())}
    if isinstance(o, (list, tuple)):
        return [mp_json(x) for x in o]
    if isinstance(o, dict):
        out = {}
        for k, v in o.items():
            if isinstance(k, str):
                ks = k
            elif isinstance(k, bool) or k is None:
                ks = json.dumps(k)
            elif isinstance(k, int):
                ks = str(k)
            else:
                ks = json.dumps(mp_json(k), allow_nan=False)
            out[ks] = mp_json(v)
        return out
    raise TypeError(f"unexpected msgpack value {o!r}")


def vlmeta_json(schunk):
    vl = schunk.vlmeta
    out = {}
    for name in vl:
        raw = blosc2.blosc2_ext.vlmeta.get_vlmeta(vl, name)  # raw stored (decompressed) bytes
        val = msgpack.unpackb(raw, raw=False, strict_map_key=False, use_list=True,
                              ext_hook=lambda code, data: msgpack.ExtType(code, data))
        out[name] = mp_json(val)
    return out


# --------------------------------------------------------------------------------------
# Independent b2nd re-assembly (from decompressed chunks, block layout) and C oracle
# --------------------------------------------------------------------------------------

def reassemble(chunks, shape, cs, bs, itemsize):
    ndim = len(shape)
    out = np.zeros(tuple(shape) + (itemsize,), np.uint8)
    if math.prod(shape) == 0:
        assert len(chunks) == 0, len(chunks)
        return out.tobytes()
    ext_cs = [-(-c // b) * b for c, b in zip(cs, bs)]
    nb = [e // b for e, b in zip(ext_cs, bs)]
    grid = [-(-s // c) for s, c in zip(shape, cs)]
    assert len(chunks) == math.prod(grid), (len(chunks), grid)
    perm = [x for d in range(ndim) for x in (d, ndim + d)] + [2 * ndim]
    for ci, idx in enumerate(np.ndindex(*grid)):
        buf = np.frombuffer(chunks[ci], np.uint8)
        assert buf.size == math.prod(ext_cs) * itemsize, (buf.size, ext_cs, itemsize)
        a = buf.reshape(tuple(nb) + tuple(bs) + (itemsize,)).transpose(perm)
        a = a.reshape(tuple(ext_cs) + (itemsize,))
        start = [i * c for i, c in zip(idx, cs)]
        ext = [min(c, s - st) for c, s, st in zip(cs, shape, start)]
        out[tuple(slice(st, st + e) for st, e in zip(start, ext))] = a[tuple(slice(0, e) for e in ext)]
    return out.tobytes()


class COracle:
    """b2nd_open + b2nd_to_cbuffer through the libblosc2.so shipped in the wheel."""

    def __init__(self):
        self.lib = None
        path = os.path.join(os.path.dirname(blosc2.__file__), "lib", "libblosc2.so")
        try:
            lib = ctypes.CDLL(path)
            lib.blosc2_init()
            lib.b2nd_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
            lib.b2nd_to_cbuffer.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
            lib.b2nd_free.argtypes = [ctypes.c_void_p]
            lib.blosc2_get_version_string.restype = ctypes.c_char_p
            self.version = lib.blosc2_get_version_string().decode()
            self.lib = lib
        except (OSError, AttributeError):
            pass

    def read(self, path, nbytes):
        arr = ctypes.c_void_p()
        rc = self.lib.b2nd_open(path.encode(), ctypes.byref(arr))
        if rc < 0:
            raise RuntimeError(f"b2nd_open({path}) -> {rc}")
        try:
            buf = ctypes.create_string_buffer(max(nbytes, 1))
            rc = self.lib.b2nd_to_cbuffer(arr, buf, nbytes)
            if rc < 0:
                raise RuntimeError(f"b2nd_to_cbuffer({path}) -> {rc}")
            return buf.raw[:nbytes]
        finally:
            self.lib.b2nd_free(arr)


# --------------------------------------------------------------------------------------
# Data generation
# --------------------------------------------------------------------------------------

WORDS = [b"", b"a", b"blosc", b"zarr", b"fuse", b"rust!", b"\x00x\x01", b"chunk", b"b2nd", b"caterva"]
UWORDS = ["", "a", "héllo", "ñu", "日本語", "z", "Ωmega", "ab\x00c", "€uro", "ok"]


def gen_values(rng, dtype, n, style):
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
            return rng.integers(info.min, info.max, size=n, endpoint=True,
                                dtype=dt.newbyteorder("=")).astype(dt)
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
        return np.array([("u%d" % j)[:w] for j in range(n)], dtype=dt)
    raise ValueError(dt)


def make_data(rng, dtype, shape, styles=("smooth", "random", "constant", "smooth", "random", "zeros"), nseg=None):
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


def apply_int_trunc(raw, filters, fmeta, typesize):
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


def apply_trunc(raw, filters, fmeta, typesize):
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


def trunc_expected(raw, shape, chunkshape, hdr, chunk_flags, chunk_specials):
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


def pipeline(kind, typesize, trunc_bits=None):
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


def cparams(codec="zstd", clevel=5, filters=None, filters_meta=None, splitmode=SM.AUTO_SPLIT,
            use_dict=False, typesize=None, codec_meta=0):
    d = dict(codec=CODECS.get(codec) or PLUGIN_CODECS[codec], codec_meta=codec_meta, clevel=clevel, nthreads=1,
             splitmode=splitmode, use_dict=use_dict,
             filters=list(filters if filters is not None else [0, 0, 0, 0, 0, SHUF]),
             # python-blosc2 takes filters_meta as int8 (negative values are stored as uint8)
             filters_meta=[(x & 0xFF) - 256 if (x & 0xFF) > 127 else x & 0xFF
                           for x in (filters_meta if filters_meta is not None else [0] * 6)])
    if typesize is not None:
        d["typesize"] = typesize
    return d


DPARAMS = dict(nthreads=1)


def rmpath(p):
    if os.path.isdir(p):
        shutil.rmtree(p)
    elif os.path.exists(p):
        os.remove(p)


# --------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------

class Gen:
    def __init__(self, outdir, verbose=False):
        self.outdir = outdir
        self.manifest = {}
        self.verbose = verbose
        self.oracle = COracle()
        self.stats = {"c_checked": 0, "c_mismatch": [], "py_slice_mismatch": [], "py_unopenable": []}
        os.makedirs(outdir, exist_ok=True)

    def p(self, rel):
        return os.path.join(self.outdir, rel)

    # ---- writers ----------------------------------------------------------------------

    def b2nd(self, name, src, chunks=None, blocks=None, cp=None, sparse=False, vlmeta=None,
             notes="", maker=None, expected=None, ext=".b2nd"):
        """Write a b2nd array. maker(urlpath, contiguous) may build it differently (zeros,
        full, slices...); `expected` then gives the expected numpy array."""
        rel = name + ext
        path = self.p(rel)
        rmpath(path)
        if maker is None:
            # cp == "defaults": let python-blosc2 choose (nthreads comes from blosc2.set_nthreads(1))
            kw = {} if cp == "defaults" else {"cparams": cp or cparams()}
            arr = blosc2.asarray(src, chunks=chunks, blocks=blocks, urlpath=path, contiguous=not sparse,
                                 mode="w", dparams=DPARAMS, **kw)
            exp_arr = src
        else:
            arr = maker(path, not sparse)
            exp_arr = expected
        if vlmeta:
            for k, v in vlmeta.items():
                arr.schunk.vlmeta[k] = v
        del arr
        gc.collect()
        exp_arr = np.asarray(exp_arr).copy(order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
        self.finish(name, rel, "b2nd", exp_arr.tobytes(), notes, src_dtype=exp_arr.dtype, src_shape=exp_arr.shape,
                    vlmeta_set=vlmeta)

    def caterva(self, name, src, chunks, blocks, cp, notes="", sparse=False):
        """A legacy Caterva array: b2nd chunks in an SChunk carrying a 'caterva' metalayer
        (msgpack [version=0, ndim, shape(int64s), chunkshape(int32s), blockshape(int32s)])."""
        rel = name + ".caterva"
        path = self.p(rel)
        rmpath(path)
        a = blosc2.asarray(src, chunks=chunks, blocks=blocks, cparams=cp, dparams=DPARAMS)
        sc = a.schunk
        n = a.ndim
        meta = bytes([0x95, 0, n, 0x90 + n]) + b"".join(b"\xd3" + struct.pack(">q", s) for s in a.shape)
        meta += bytes([0x90 + n]) + b"".join(b"\xd2" + struct.pack(">i", s) for s in a.chunks)
        meta += bytes([0x90 + n]) + b"".join(b"\xd2" + struct.pack(">i", s) for s in a.blocks)
        # python-blosc2 msgpack-packs metalayer contents, so write a same-length placeholder
        # (a msgpack bin8) and patch the exact caterva bytes into the header afterwards.
        L = len(meta)
        assert 2 < L < 258
        ph = bytes(((i * 131 + 7) ^ 0x5A) & 0xFF for i in range(L - 2))
        php = msgpack.packb(ph, use_bin_type=True)
        assert len(php) == L
        cpd = dict(cp)
        cpd["typesize"] = sc.typesize
        cpd["blocksize"] = sc.blocksize
        s2 = blosc2.SChunk(chunksize=sc.chunksize, cparams=cpd, dparams=DPARAMS, meta={"caterva": ph},
                           urlpath=path, contiguous=not sparse, mode="w")
        for i in range(sc.nchunks):
            s2.append_chunk(sc.get_chunk(i))
        del s2
        gc.collect()
        hf = header_file(path)
        with open(hf, "rb") as f:
            b = bytearray(f.read())
        assert b.count(php) == 1
        k = b.find(php)
        b[k:k + L] = meta
        with open(hf, "wb") as f:
            f.write(b)
        # the copied chunks must decompress exactly like the b2nd ones
        h = parse_frame_header(path)
        got = read_chunks_direct(path, h, read_offsets(path, h)[0])
        assert len(got) == sc.nchunks
        for i in range(sc.nchunks):
            if got[i][1] != 4:
                assert got[i][0] is None or got[i][0] == sc.decompress_chunk(i)
        del sc, a
        gc.collect()
        raw = np.asarray(src).tobytes(order="C")
        self.finish(name, rel, "caterva", raw, notes, src_dtype=src.dtype, src_shape=src.shape)

    def frame(self, name, builder, sparse=False, notes="", vlmeta=None):
        """Plain SChunk frame. builder(urlpath, contiguous) -> SChunk."""
        rel = name + ".b2frame"
        path = self.p(rel)
        rmpath(path)
        s = builder(path, not sparse)
        if vlmeta:
            for k, v in vlmeta.items():
                s.vlmeta[k] = v
        del s
        gc.collect()
        self.finish(name, rel, "frame", None, notes, vlmeta_set=vlmeta)

    # ---- verification and manifest entry ------------------------------------------------

    def finish(self, name, rel, kind, raw, notes, src_dtype=None, src_shape=None, vlmeta_set=None):
        path = self.p(rel)
        hdr = parse_frame_header(path)
        offsets, idx_special = read_offsets(path, hdr)
        if hdr["chunksize"] == 0 and any(o < 0 for o in offsets):
            # A special offset's size is the frame's chunksize, 0 when chunks vary: C-Blosc2
            # 3.3.5 writes it (a chunk all zeros after a truncating filter) but cannot read
            # it back, and blosc2fs refuses the file (its chunks do not add up to nbytes).
            raise RuntimeError("special offset in a frame with variable chunk sizes: unreadable")
        direct = read_chunks_direct(path, hdr, offsets)
        nchunks = len(direct)
        try:
            obj = blosc2.open(path, mode="r")
        except OverflowError:
            # python-blosc2 4.14.1 cannot reopen frames whose filters_meta has a byte > 127
            obj = None
            self.stats["py_unopenable"].append(name)
            notes = (notes + " " if notes else "") + \
                "[python-blosc2 4.14.1 cannot reopen this file (filters_meta byte > 127 -> OverflowError)]"
        chunk_specials = []
        chunk_flags = []
        chunks = []
        uninit = []
        dict_chunks = 0
        if obj is not None:
            sc = obj.schunk if isinstance(obj, blosc2.NDArray) else obj
            assert sc.nchunks == nchunks, (name, sc.nchunks, nchunks)
            for i in range(nchunks):
                c = sc.get_chunk(i)
                st = (c[31] >> 4) & 7
                chunk_specials.append(st)
                chunk_flags.append(c[2])
                dict_chunks += c[31] & 1
                nb = int.from_bytes(c[4:8], "little")
                if st == 4:
                    d = bytes(nb)  # uninitialized: defined here as zeros
                    uninit.append(i)
                else:
                    d = sc.decompress_chunk(i)
                assert len(d) == nb
                assert direct[i][0] is None or d == direct[i][0], f"{name}: chunk {i} differs between python and direct read"
                chunks.append(d)
            vlm = vlmeta_json(sc)
            del sc
        else:
            if any(d is None for d, _, _ in direct):
                raise RuntimeError("python-blosc2 cannot reopen this file and its filters need the SChunk "
                                   "to decompress")
            for i, (d, st, fl) in enumerate(direct):
                chunk_specials.append(st)
                chunk_flags.append(fl)
                if st == 4:
                    uninit.append(i)
                chunks.append(d)
            # the stored vlmeta bytes are python-blosc2's msgpack packing of the values set
            vlm = {k: mp_json(msgpack.unpackb(msgpack_packb(v), raw=False, strict_map_key=False,
                                              ext_hook=lambda code, data: msgpack.ExtType(code, data)))
                   for k, v in (vlmeta_set or {}).items()}
        special = special_summary(offsets, idx_special, chunk_specials)

        metas = parse_metalayers(hdr)
        has_b2nd = "b2nd" in metas
        has_cat = "caterva" in metas
        assert kind == ("b2nd" if has_b2nd else "caterva" if has_cat else "frame"), (name, list(metas))
        shape = chunkshape = blockshape = dtype = None
        if kind in ("b2nd", "caterva"):
            m = msgpack.unpackb(metas[kind], raw=False)
            assert m[0] == 0
            ndim = m[1]
            shape, chunkshape, blockshape = list(m[2]), list(m[3]), list(m[4])
            assert len(shape) == ndim
            if kind == "b2nd":
                assert len(m) == 7 and m[5] == 0
                dtype = m[6]
                assert np.dtype(src_dtype).itemsize == hdr["typesize"]
            else:
                assert len(m) == 5
            assert tuple(shape) == tuple(src_shape), (shape, src_shape)
            assert len(raw) == math.prod(shape) * hdr["typesize"]
            if NDMEAN in hdr["filters"]:
                # lossy: the expectation is C-Blosc2's own decode (SChunk.decompress_chunk)
                assert not uninit
                raw = reassemble(chunks, shape, chunkshape, blockshape, hdr["typesize"])
            elif TRUNC in hdr["filters"] or INT_TRUNC in hdr["filters"]:
                raw = trunc_expected(raw, shape, chunkshape, hdr, chunk_flags, chunk_specials)
            # independent re-assembly from the decompressed chunks
            re = reassemble(chunks, shape, chunkshape, blockshape, hdr["typesize"])
            if re != raw:
                raise AssertionError(f"{name}: re-assembled chunks differ from expected")
            # the C library reading the array
            if self.oracle.lib is not None and not uninit and len(raw) > 0:
                try:
                    cb = self.oracle.read(path, len(raw))
                except RuntimeError as e:
                    cb = e
                self.stats["c_checked"] += 1
                if cb != raw:
                    # known C-Blosc2 3.3.5 problems: partial-chunk reads of DELTA chunks give wrong
                    # data, and of chunks carrying a dictionary fail
                    if DELTA not in hdr["filters"] and not hdr["use_dict"]:
                        raise AssertionError(f"{name}: C b2nd_to_cbuffer differs from expected: {cb!r:.100}")
                    self.stats["c_mismatch"].append(name)
                    what = "fails" if isinstance(cb, Exception) else "returns different data"
                    notes = (notes + " " if notes else "") + \
                        f"[C-Blosc2 3.3.5 b2nd_to_cbuffer on this file {what}]"
            # python-blosc2's own slicing (known to be wrong for some DELTA arrays on disk)
            if kind == "b2nd" and obj is not None and not uninit and len(raw) > 0:
                try:
                    pv = np.asarray(obj[()] if len(shape) == 0 else obj[...]).tobytes(order="C")
                except Exception as e:  # noqa: BLE001
                    pv = repr(e).encode()
                if pv != raw:
                    self.stats["py_slice_mismatch"].append(name)
                    notes = (notes + " " if notes else "") + \
                        "[python-blosc2 4.14.1 arr[...] returns different data for this file; the expected data is the source]"
        else:
            raw = b"".join(chunks)
        if uninit:
            notes = (notes + " " if notes else "") + \
                f"[uninitialized special chunks {compact_list(uninit)}: content undefined in C-Blosc2, expected here as zero bytes]"
        del obj
        gc.collect()

        entry = {
            "path": rel,
            "kind": kind,
            "storage": "sparse" if hdr["frame_type"] == 1 else "contiguous",
            "size": len(raw),
            "sha256": sha256(raw),
            "shape": shape,
            "chunkshape": chunkshape,
            "blockshape": blockshape,
            "dtype": dtype,
            "itemsize": hdr["typesize"],
            "nchunks": nchunks,
            "codec": codec_name(hdr),
            "clevel": hdr["clevel"],
            "filters": hdr["filters"],
            "filters_meta": hdr["filters_meta"],
            "splitmode": SM(hdr["splitmode"]).name,
            "use_dict": hdr["use_dict"],
            "vlmeta": vlm,
            "chunk_sha256": [sha256(c) for c in chunks],
        }
        if special:
            entry["special"] = special
        if entry["use_dict"]:
            notes = (notes + " " if notes else "") + f"[{dict_chunks}/{nchunks} chunks carry a dictionary]"
        entry["notes"] = notes
        json.dumps(entry, allow_nan=False)  # must be strict JSON
        self.manifest[name] = entry
        if self.verbose:
            print(f"  {name}: {kind} {entry['storage']} shape={shape} nchunks={nchunks} "
                  f"{entry['codec']}/{entry['clevel']} f={entry['filters']} {special or ''}")

    def write_manifest(self):
        with open(self.p("manifest.json"), "w") as f:
            json.dump(self.manifest, f, indent=1, allow_nan=False, ensure_ascii=False)
            f.write("\n")


def case_rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


# --------------------------------------------------------------------------------------
# NDLZ codec, NDCELL / NDMEAN filters, BYTEDELTA_BUGGY, INT_TRUNC
# --------------------------------------------------------------------------------------

def nd_image_u1(rng, shape):
    """A byte image NDLZ finds matches in: bands of repeated rows, constant bands,
    bands repeating a 4- or 8-byte pattern along the row, and random bands."""
    rows, cols = shape
    bands = [rng.integers(0, 256, (4, cols), dtype=np.uint8) for _ in range(3)]
    out = np.empty(shape, np.uint8)
    for r in range(0, rows, 4):
        k = int(rng.integers(0, 6))
        if k < 2:
            band = bands[int(rng.integers(0, 3))]
        elif k == 2:
            band = np.full((4, cols), int(rng.integers(0, 4)), np.uint8)
        elif k == 3:
            period = int(rng.choice([4, 8]))
            band = np.tile(rng.integers(0, 256, (4, period), dtype=np.uint8), (1, -(-cols // period)))[:, :cols]
        else:
            band = rng.integers(0, 256, (4, cols), dtype=np.uint8)
        out[r:r + 4] = band[:rows - r]
    return out


def nd_filters(*pairs):
    """(filters, filters_meta) with the (id, meta) pairs right-aligned in the six slots
    (the first pair runs first when writing)."""
    f = [0] * (6 - len(pairs)) + [p[0] for p in pairs]
    m = [0] * (6 - len(pairs)) + [p[1] for p in pairs]
    return f, m


def nd_fixed(g):
    A = SM.ALWAYS_SPLIT
    # NDLZ: 2-D blocks, typesize 1, or typesize > 1 on split blocks (C refuses unsplit ones)
    for name, dt, shape, chunks, blocks, meta, fl, sm in [
        ("ndlz4_u1", "u1", (50, 70), (30, 40), (14, 18), 4, (), SM.AUTO_SPLIT),
        ("ndlz8_u1", "u1", (50, 70), (30, 40), (19, 21), 8, (), SM.AUTO_SPLIT),
        ("ndlz4_u1_delta", "u1", (41, 33), (41, 33), (16, 11), 4, ((DELTA, 0),), SM.AUTO_SPLIT),
        ("ndlz4_i2_shuffle", "<i2", (40, 36), (20, 20), (10, 12), 4, ((SHUF, 0),), A),
        ("ndlz8_f4_bitshuffle", "<f4", (33, 45), (33, 45), (16, 24), 8, ((BITSHUF, 0),), A),
        ("ndlz8_u2_ndcell", "<u2", (40, 40), (24, 24), (17, 16), 8, ((NDCELL, 4), (SHUF, 0)), A),
    ]:
        rng = case_rng(name)
        if dt == "u1":
            src = nd_image_u1(rng, shape)
        else:
            src = make_data(rng, dt, shape, styles=("smooth", "constant", "smooth", "random"), nseg=3)
        f, m = nd_filters(*fl)
        g.b2nd(name, src, chunks, blocks, cparams("ndlz", 5, f, m, splitmode=sm, codec_meta=meta),
               notes=f"NDLZ {meta}x{meta} cells, blocks {blocks}, filters {list(fl)}, {dt}")

    # NDCELL (lossless): cells of edge meta, clipped to blocks that are not multiples of it
    for name, dt, shape, chunks, blocks, fl, codec in [
        ("ndcell4_shuffle_f4", "<f4", (45, 37), (20, 16), (8, 5), ((NDCELL, 4), (SHUF, 0)), "zstd"),
        ("ndcell3_after_bitshuffle_i2_3d", "<i2", (13, 11, 9), (6, 6, 5), (4, 5, 4),
         ((BITSHUF, 0), (NDCELL, 3)), "lz4"),
        # (not NDCELL, DELTA, SHUFFLE: with three filters C-Blosc2 3.3.5's encoder overwrites
        # its source block with the third filter's output, and DELTA's reference with it)
        ("ndcell2_then_delta_i4", "<i4", (31, 29), (12, 10), (5, 4), ((NDCELL, 2), (DELTA, 0)), "zstd"),
        ("ndcell2_after_delta_u2", "<u2", (31, 29), (12, 10), (5, 4), ((DELTA, 0), (NDCELL, 2)), "zlib"),
        ("ndcell5_after_bytedelta_f8", "<f8", (30, 30), (16, 16), (11, 7),
         ((SHUF, 0), (BYTEDELTA, 8), (NDCELL, 5)), "zstd"),
        ("ndcell6_1d_u1", "u1", (500,), (200,), (70,), ((NDCELL, 6),), "lz4"),
        ("ndcell2_4d_f4", "<f4", (7, 6, 5, 9), (3, 4, 5, 4), (2, 3, 2, 3), ((NDCELL, 2), (SHUF, 0)), "blosclz"),
        ("ndcell4_block_dim_below_cell_u1", "u1", (20, 50), (9, 40), (3, 20), ((NDCELL, 4),), "zstd"),
    ]:
        rng = case_rng(name)
        src = make_data(rng, dt, shape, styles=("smooth", "random", "constant"), nseg=3)
        f, m = nd_filters(*fl)
        g.b2nd(name, src, chunks, blocks, cparams(codec, 5, f, m),
               notes=f"NDCELL, blocks {blocks}, filters (first runs first) {list(fl)}, {dt}")

    # NDMEAN (lossy: expected bytes are C-Blosc2's decode, SChunk.decompress_chunk)
    for name, dt, shape, chunks, blocks, fl in [
        ("ndmean4_shuffle_f4", "<f4", (45, 37), (20, 16), (10, 13), ((NDMEAN, 4), (SHUF, 0))),
        ("ndmean3_bitshuffle_f8_3d", "<f8", (13, 11, 9), (5, 4, 4), (4, 3, 4), ((NDMEAN, 3), (BITSHUF, 0))),
        ("ndmean2_delta_shuffle_f4", "<f4", (31, 29), (12, 10), (5, 4), ((NDMEAN, 2), (DELTA, 0), (SHUF, 0))),
        ("ndmean1_after_shuffle_f8", "<f8", (20, 21), (10, 10), (4, 6), ((SHUF, 0), (NDMEAN, 1))),
        ("ndmean5_clipped_f4", "<f4", (30, 20), (12, 9), (6, 3), ((NDMEAN, 5),)),
        ("ndmean4_small_block_f8", "<f8", (9, 10), (4, 6), (2, 3), ((NDMEAN, 4), (SHUF, 0))),
        ("ndmean3_after_trunc_f4", "<f4", (40, 30), (16, 16), (7, 8), ((TRUNC, 10), (NDMEAN, 3), (SHUF, 0))),
    ]:
        rng = case_rng(name)
        src = make_data(rng, dt, shape, styles=("smooth", "random", "smooth", "constant"), nseg=3)
        f, m = nd_filters(*fl)
        g.b2nd(name, src, chunks, blocks, cparams("zstd", 5, f, m),
               notes=f"NDMEAN (lossy; expected = C-Blosc2's decode), blocks {blocks}, filters {list(fl)}, {dt}")

    # BYTEDELTA_BUGGY (id 34), as C-Blosc2 3.3.5 still writes it: streams of >= 16 bytes
    # that are not multiples of 16 (the SIMD groups and the scalar tail)
    for name, dt, meta in [("filter_bytedelta_buggy_f4", "<f4", 4), ("filter_bytedelta_buggy_meta0_i2", "<i2", 0)]:
        rng = case_rng(name)
        src = make_data(rng, dt, (31, 29), nseg=3)
        f, m = nd_filters((SHUF, 0), (BYTEDELTA_BUGGY, meta))
        g.b2nd(name, src, (12, 10), (9, 7), cparams("zstd", 5, f, m), notes=f"BYTEDELTA_BUGGY meta {meta} on {dt}")

    # INT_TRUNC (id 36, lossy: the low bits are zeroed when writing)
    for name, dt, fl in [("filter_int_trunc_neg5_i4", "<i4", ((INT_TRUNC, -5), (SHUF, 0))),
                         ("filter_int_trunc_12_u2", "<u2", ((INT_TRUNC, 12), (BITSHUF, 0))),
                         ("filter_int_trunc_58_i8", "<i8", ((INT_TRUNC, 58),))]:
        rng = case_rng(name)
        src = make_data(rng, dt, (31, 29), nseg=3)
        f, m = nd_filters(*fl)
        g.b2nd(name, src, (12, 10), (5, 4), cparams("lz4", 5, f, m), notes=f"INT_TRUNC filters {list(fl)} on {dt}")


# --------------------------------------------------------------------------------------
# The fixed set
# --------------------------------------------------------------------------------------

VLMETA_ALL = {  # (C-Blosc2 3.3.5 fails to write more than ~16 vlmetalayers to a file frame)
    "str": "hello, blosc2fs",
    "unicode": "ünïcödé ✓",
    "int": 42,
    "big": 2**63 + 5,
    "float": 3.5,
    "nan": float("nan"),
    "floats": [float("inf"), float("-inf"), -0.0, 1e-300, -7],
    "list": [1, "two", 3.0, None, [True, False]],
    "dict": {"a": 1, "b": [1, 2], "c": {"d": None}, "e": float("nan")},
    "bytes": b"\x00\x01\x02binary\xff",
    "true": True,
    "none": None,
    "complex": complex(1.5, -2.25),
    "tuple": (1, 2),  # python-blosc2 packs tuples as ["__tuple__", ...]
    "ключ": "non-ascii key",
}


def fixed_set(g):
    # 1. codecs x filter pipelines (2-D f4, edge chunks + partial blocks) --------------------
    shape, chunks, blocks = (45, 37), (20, 16), (8, 5)
    for codec in ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]:
        for fl in ["none", "shuffle", "bitshuffle", "delta+shuffle", "trunc+shuffle", "shuffle+bytedelta"]:
            name = f"codec_{codec}_{fl.replace('+', '_')}"
            rng = case_rng(name)
            src = make_data(rng, "<f4", shape, styles=("smooth", "random", "smooth", "constant"), nseg=3)
            f, m = pipeline(fl, 4)
            g.b2nd(name, src, chunks, blocks, cparams(codec, 5, f, m),
                   notes=f"{codec} clevel 5, filters {fl}, 2-D f4 with edge chunks and partial blocks")

    # other pipelines, incl. on another dtype
    for fl, dt in [("delta", "<i4"), ("delta+bitshuffle", "<i8"), ("shuffle+delta", "<u2"),
                   ("bytedelta", "<f8"), ("trunc+bitshuffle", "<f8"), ("shuffle(meta)", "<f8"),
                   ("double-shuffle", "<i4"), ("bitshuffle", "<f2"), ("shuffle+bytedelta", "<i2"),
                   ("bitshuffle", "u1"), ("delta+shuffle", "<c16")]:
            name = f"filter_{fl.replace('+', '_').replace('(', '_').replace(')', '')}_{np.dtype(dt).name}"
            rng = case_rng(name)
            src = make_data(rng, dt, (31, 29), nseg=3)
            f, m = pipeline(fl, np.dtype(dt).itemsize)
            g.b2nd(name, src, (12, 10), (5, 4), cparams("zstd", 4, f, m), notes=f"filters {fl} on {dt}")
    # negative trunc_prec meta (= bits to zero), stored as uint8
    name = "filter_trunc_negative_f4"
    rng = case_rng(name)
    src = make_data(rng, "<f4", (300,), styles=("smooth", "random"))
    f, m = pipeline("trunc+shuffle", 4, trunc_bits=-9)
    g.b2nd(name, src, (128,), (40,), cparams("lz4", 5, f, m), notes="trunc_prec meta -9 (zero 9 mantissa bits)")

    # 2. clevels --------------------------------------------------------------------------
    for codec, clevel in [("blosclz", 0), ("zstd", 0), ("lz4", 1), ("zlib", 1), ("zstd", 9),
                          ("lz4hc", 9), ("blosclz", 9), ("zlib", 9)]:
        name = f"clevel{clevel}_{codec}"
        rng = case_rng(name)
        src = make_data(rng, "<i4", (40, 25), nseg=3)
        g.b2nd(name, src, (16, 10), (6, 4), cparams(codec, clevel, [0, 0, 0, 0, 0, SHUF]),
               notes=f"clevel {clevel}" + (" (memcpyed chunks)" if clevel == 0 else ""))

    # 3. split modes ----------------------------------------------------------------------
    for codec in ["blosclz", "zstd", "lz4"]:
        for sm in [SM.ALWAYS_SPLIT, SM.NEVER_SPLIT, SM.AUTO_SPLIT, SM.FORWARD_COMPAT_SPLIT]:
            name = f"split_{sm.name.lower()}_{codec}"
            rng = case_rng(name)
            src = make_data(rng, "<f8", (700,), nseg=3)
            g.b2nd(name, src, (256,), (64,), cparams(codec, 5, [0, 0, 0, 0, 0, SHUF], splitmode=sm),
                   notes=f"splitmode {sm.name}")
    name = "split_always_bitshuffle_i2"
    src = make_data(case_rng(name), "<i2", (900,), nseg=2)
    g.b2nd(name, src, (400,), (96,), cparams("zlib", 5, [0, 0, 0, 0, 0, BITSHUF], splitmode=SM.ALWAYS_SPLIT))

    # 4. dictionaries (dicts are only built for chunks >= 5120 bytes) ------------------------
    for codec in ["zstd", "lz4", "lz4hc"]:
        name = f"dict_{codec}"
        rng = case_rng(name)
        src = (np.arange(9000, dtype=np.int64) % 997 * 13 + rng.integers(0, 3, 9000)).astype("<i4")
        g.b2nd(name, src, (4000,), (500,), cparams(codec, 5, [0, 0, 0, 0, 0, SHUF], use_dict=True),
               notes=f"use_dict=True with {codec}; each chunk embeds its dictionary after bstarts")
    name = "dict_zstd_noshuffle_u1"
    src = np.frombuffer((b"The quick brown fox jumps over the lazy dog. " * 600)[:24000], "u1").copy()
    g.b2nd(name, src.reshape(120, 200), (60, 100), (20, 50),
           cparams("zstd", 7, [0] * 6, use_dict=True), notes="zstd dictionary on text bytes")
    name = "dict_zstd_sparse"
    src = (np.arange(12000) % 1013).astype("<i4")
    g.b2nd(name, src, (5000,), (1000,), cparams("zstd", 3, [0, 0, 0, 0, 0, SHUF], use_dict=True), sparse=True)

    # 5. dtypes ---------------------------------------------------------------------------
    for dt in DTYPES:
        d = np.dtype(dt)
        nm = {"S7": "S7", "<U5": "U5", "S300": "S300"}.get(dt if isinstance(dt, str) else "", None)
        if nm is None:
            if d.names:
                nm = "struct300" if d.itemsize == 300 else "struct"
            else:
                nm = d.str.replace("<", "le_").replace(">", "be_").replace("|", "")
        name = f"dtype_{nm}"
        rng = case_rng(name)
        if d.itemsize >= 100:
            shp, ch, bl = (9, 7), (4, 3), (3, 2)
        else:
            shp, ch, bl = (33, 21), (12, 8), (5, 3)
        src = make_data(rng, d, shp, nseg=4)
        codec = ["zstd", "lz4", "blosclz", "zlib", "lz4hc"][zlib.crc32(name.encode()) % 5]
        g.b2nd(name, src, ch, bl, cparams(codec, 5), notes=f"dtype {d.str if not d.names else d.descr}")

    name = "dtype_U5_pydefaults"
    g.b2nd(name, make_data(case_rng(name), "<U5", (40, 9), nseg=3), (16, 4), (5, 3), cp="defaults",
           notes="python-blosc2 default cparams for a <U dtype: SHUFFLE with filters_meta 4 (UCS4 code units)")

    # imaging and text: physical spacing and origin in vlmeta (the sidecar headers carry
    # them, C order); strings that need every escape data.txt has.
    name = "placed_3d_i2"
    g.b2nd(name, make_data(case_rng(name), np.dtype("<i2"), (6, 10, 12), nseg=2), (3, 5, 6), (2, 3, 3),
           cparams("zstd", 5), vlmeta={"spacing": [2.0, 0.5, 0.25], "origin": [-10.0, 0.0, 5.5]},
           notes="vlmeta spacing and origin, C order")
    name = "placed_2d_be_f4"
    g.b2nd(name, make_data(case_rng(name), np.dtype(">f4"), (12, 9), nseg=2), (6, 4), (3, 2),
           cparams("lz4", 5), vlmeta={"voxel_size": [1.5, 3]}, notes="big-endian, vlmeta voxel_size")
    words = ['plain', 'say "hi"', 'back\\slash', 'new\nline', 'tab\there', 'caf\u00e9', '\U0001f600 ok',
             'a\x00b', '', ' pad ', '\u2028sep', '\x07bell']
    g.b2nd("text_escapes_U8", np.array(words, dtype="<U8").reshape(3, 4), (2, 2), (1, 2), cparams("zstd", 5),
           notes="strings with quotes, backslashes, controls, non-ASCII, inner NUL, empty")
    raw = [b"plain", b'q"uote', b"b\\s", b"\n\r\t", b"\xff\xfe", b"a\x00b", b"", b"\x00\x00x"]
    g.b2nd("text_escapes_S6", np.array(raw, dtype="S6"), (5,), (2,), cparams("lz4", 5),
           notes="bytes with quotes, backslashes, controls, high bytes, NULs inside and leading")

    # 6. shapes ---------------------------------------------------------------------------
    g.b2nd("shape_0d_f8", np.array(-1.25e300), (), (), cparams("zstd", 5), notes="0-d array")
    g.b2nd("shape_0d_struct", np.array((7, 2.5, b"xyz"), dtype=[("a", "<i4"), ("b", "<f8"), ("c", "S3")]),
           (), (), cparams("lz4", 3), notes="0-d structured")
    g.b2nd("shape_len0", np.zeros((0,), "<i4"), (0,), (0,), cparams("zstd", 5), notes="zero-length 1-D")
    g.b2nd("shape_len0_chunked", np.zeros((0,), "<f8"), (10,), (5,), cparams("lz4", 5), notes="zero-length, chunks (10,)")
    g.b2nd("shape_3x0x4", np.zeros((3, 0, 4), "<i2"), (2, 1, 2), (1, 1, 2), cparams("zstd", 5),
           notes="zero-size middle dim")
    g.b2nd("shape_1d_block1", make_data(case_rng("b1"), "<u4", (53,)), (10,), (1,), cparams("blosclz", 5),
           notes="blockshape 1")
    g.b2nd("shape_1d_onechunk", make_data(case_rng("oc"), "<i8", (200,)), (200,), (200,), cparams("zlib", 5),
           notes="single chunk = single block")
    g.b2nd("shape_1d_chunk_gt_shape", make_data(case_rng("cg"), "<f4", (50,)), (64,), (24,), cparams("lz4", 5),
           notes="chunkshape larger than shape")
    g.b2nd("shape_2d_single_row", make_data(case_rng("sr"), "<i4", (1, 300)), (1, 128), (1, 40), cparams("zstd", 5))
    g.b2nd("shape_3d", make_data(case_rng("3d"), "<f8", (13, 11, 9)), (5, 4, 4), (2, 3, 2), cparams("zstd", 5),
           notes="3-D, partial blocks")
    g.b2nd("shape_4d", make_data(case_rng("4d"), "<i2", (7, 6, 5, 9)), (3, 4, 5, 4), (2, 3, 2, 3),
           cparams("lz4", 5))
    g.b2nd("shape_5d", make_data(case_rng("5d"), "<i4", (4, 5, 3, 6, 2)), (3, 2, 2, 4, 2), (2, 1, 2, 3, 1),
           cparams("zstd", 5, [0, 0, 0, 0, DELTA, SHUF]), notes="5-D with delta")
    g.b2nd("shape_6d", make_data(case_rng("6d"), "<f4", (3, 4, 2, 5, 3, 2)), (2, 3, 2, 2, 2, 2),
           (1, 2, 1, 2, 1, 2), cparams("blosclz", 5), notes="6-D")
    g.b2nd("shape_8d", make_data(case_rng("8d"), "u1", (2, 3, 2, 3, 2, 2, 3, 2)), (1, 2, 2, 2, 1, 2, 2, 2),
           (1, 1, 2, 1, 1, 2, 1, 2), cparams("zstd", 5), notes="8-D")

    # 7. special chunks -------------------------------------------------------------------
    cp = cparams("zstd", 5)
    g.b2nd("special_zeros", None, maker=lambda u, c: blosc2.zeros((50, 30), dtype="<f8", chunks=(20, 12),
                                                                       blocks=(7, 5), urlpath=u, contiguous=c,
                                                                       mode="w", cparams=cp, dparams=DPARAMS),
           expected=np.zeros((50, 30), "<f8"), cp=cp, notes="blosc2.zeros: all chunks special zero")
    g.b2nd("special_nans_f4", None, maker=lambda u, c: blosc2.nans((70,), dtype="<f4", chunks=(30,), blocks=(8,),
                                                                    urlpath=u, contiguous=c, mode="w", cparams=cp,
                                                                    dparams=DPARAMS),
           expected=np.full((70,), np.nan, "<f4"), cp=cp, notes="blosc2.nans: special NaN chunks (f4)")
    g.b2nd("special_nans_f8", None, maker=lambda u, c: blosc2.nans((5, 9), dtype="<f8", chunks=(2, 4), blocks=(1, 3),
                                                                    urlpath=u, contiguous=c, mode="w", cparams=cp,
                                                                    dparams=DPARAMS),
           expected=np.full((5, 9), np.nan, "<f8"), cp=cp, notes="blosc2.nans: special NaN chunks (f8)")
    g.b2nd("special_full_nan_f8", None, maker=lambda u, c: blosc2.full((40, 7), np.nan, dtype="<f8", chunks=(15, 7),
                                                                        blocks=(4, 3), urlpath=u, contiguous=c,
                                                                        mode="w", cparams=cp, dparams=DPARAMS),
           expected=np.full((40, 7), np.nan, "<f8"), cp=cp,
           notes="blosc2.full(NaN): run-length special VALUE chunks (not NaN specials)")
    g.b2nd("special_full_i2", None, maker=lambda u, c: blosc2.full((100,), 7, dtype="<i2", chunks=(30,), blocks=(7,),
                                                                    urlpath=u, contiguous=c, mode="w", cparams=cp,
                                                                    dparams=DPARAMS),
           expected=np.full((100,), 7, "<i2"), cp=cp, notes="blosc2.full(7): special VALUE chunks")
    g.b2nd("special_full_c16", None, maker=lambda u, c: blosc2.full((6, 5), 1 - 2j, dtype="<c16", chunks=(4, 2),
                                                                     blocks=(3, 1), urlpath=u, contiguous=c,
                                                                     mode="w", cparams=cp, dparams=DPARAMS),
           expected=np.full((6, 5), 1 - 2j, "<c16"), cp=cp, notes="special VALUE chunks, typesize 16")
    g.b2nd("special_empty", None, maker=lambda u, c: blosc2.empty((45,), dtype="<i4", chunks=(20,), blocks=(6,),
                                                                   urlpath=u, contiguous=c, mode="w", cparams=cp,
                                                                   dparams=DPARAMS),
           expected=np.zeros((45,), "<i4"), cp=cp, notes="blosc2.empty: C-Blosc2 3.3.5 b2nd_empty writes ZERO specials")

    def uninit_maker(u, c):
        a = blosc2.uninit((60, 40), dtype="<f8", chunks=(20, 20), blocks=(10, 10), urlpath=u, contiguous=c,
                          mode="w", cparams=cp, dparams=DPARAMS)
        a[0:20, 0:20] = np.ascontiguousarray(UNINIT_EXP[0:20, 0:20])
        a[20:40, 20:40] = np.ascontiguousarray(UNINIT_EXP[20:40, 20:40])
        return a
    UNINIT_EXP = np.zeros((60, 40), "<f8")
    UNINIT_EXP[0:20, 0:20] = make_data(case_rng("u1"), "<f8", (20, 20), styles=("smooth",))
    UNINIT_EXP[20:40, 20:40] = make_data(case_rng("u2"), "<f8", (20, 20), styles=("random",))
    g.b2nd("special_uninit", None, maker=uninit_maker, expected=UNINIT_EXP, cp=cp,
           notes="blosc2.uninit with two whole chunks written; the others stay UNINIT specials")
    g.b2nd("special_uninit_all_sparse", None,
           maker=lambda u, c: blosc2.uninit((33,), dtype="<i2", chunks=(10,), blocks=(5,), urlpath=u, contiguous=c,
                                            mode="w", cparams=cp, dparams=DPARAMS),
           expected=np.zeros((33,), "<i2"), cp=cp, sparse=True, notes="all-uninit sparse array (no chunk files)")

    def zeros_slices(u, c):
        a = blosc2.zeros((64, 50), dtype="<i4", chunks=(16, 20), blocks=(8, 6), urlpath=u, contiguous=c, mode="w",
                         cparams=cp, dparams=DPARAMS)
        a[16:40, 3:30] = np.ascontiguousarray(ZS_EXP[16:40, 3:30])
        a[60:64, 45:50] = np.ascontiguousarray(ZS_EXP[60:64, 45:50])
        return a
    ZS_EXP = np.zeros((64, 50), "<i4")
    ZS_EXP[16:40, 3:30] = make_data(case_rng("zs1"), "<i4", (24, 27), styles=("smooth", "random"))
    ZS_EXP[60:64, 45:50] = np.arange(20).reshape(4, 5) + 1000
    g.b2nd("special_zeros_partial", None, maker=zeros_slices, expected=ZS_EXP, cp=cp,
           notes="blosc2.zeros then slices written: mixture of special-zero and regular chunks")
    g.b2nd("special_zeros_partial_sparse", None, maker=zeros_slices, expected=ZS_EXP, cp=cp, sparse=True,
           notes="as special_zeros_partial, sparse frame")
    src = np.concatenate([np.zeros(60, "<i4"), np.arange(40, dtype="<i4"), np.zeros(30, "<i4")])
    g.b2nd("special_detected_zero_chunks", src, (30,), (10,), cparams("lz4", 5),
           notes="asarray data with all-zero chunks: compressor emits special zero chunks")
    g.b2nd("special_detected_zero_chunks_sparse", src, (30,), (10,), cparams("lz4", 5), sparse=True)

    # 8. sparse b2nd ----------------------------------------------------------------------
    name = "sparse_2d_f8"
    g.b2nd(name, make_data(case_rng(name), "<f8", (37, 23)), (10, 8), (4, 3), cparams("zstd", 5), sparse=True,
           vlmeta={"unit": "m/s", "scale": 0.5}, notes="sparse b2nd directory")
    name = "sparse_3d_bitshuffle_u2"
    g.b2nd(name, make_data(case_rng(name), "<u2", (10, 9, 8)), (4, 5, 3), (2, 2, 2),
           cparams("lz4", 5, [0, 0, 0, 0, 0, BITSHUF]), sparse=True)

    # 9. vlmeta ---------------------------------------------------------------------------
    name = "vlmeta_all_types"
    g.b2nd(name, make_data(case_rng(name), "<i2", (20, 10)), (8, 4), (4, 2), cparams("zstd", 5),
           vlmeta=VLMETA_ALL, notes="vlmeta with all msgpack value kinds used by python-blosc2")
    name = "vlmeta_ndarray_value"
    g.b2nd(name, make_data(case_rng(name), "<f4", (30,)), (10,), (5,), cparams("lz4", 5),
           vlmeta={"arr": np.arange(3, dtype="<i2"), "set": {1}, "np_float": np.float32(0.5)},
           notes="numpy values in vlmeta: ndarray -> ext 46, set -> ext 45 (mapped as generic ext)")

    # 10. plain frames --------------------------------------------------------------------
    f32 = make_data(case_rng("f32frame"), "<f4", (2500,), styles=("smooth", "random"))

    def frame_f32(u, c):
        return blosc2.SChunk(chunksize=4000, data=f32, urlpath=u, contiguous=c, mode="w",
                             cparams=cparams("zstd", 5, typesize=4), dparams=DPARAMS)
    g.frame("frame_f32", frame_f32, notes="SChunk from float32 data, typesize 4, last chunk shorter")
    g.frame("frame_f32_sparse", frame_f32, sparse=True, notes="as frame_f32, sparse")

    def frame_var(u, c):
        s = blosc2.SChunk(chunksize=4000, urlpath=u, contiguous=c, mode="w",
                          cparams=cparams("lz4", 5, typesize=4), dparams=DPARAMS)
        s.append_data(np.arange(1000, dtype="<i4"))
        s.append_data(np.arange(500, dtype="<i4") * 3)
        s.append_data(np.arange(1000, dtype="<i4") - 50)
        s.append_data(np.arange(10, dtype="<i4"))
        return s
    g.frame("frame_variable_chunks", frame_var, notes="append_data with different lengths -> chunksize 0 (variable)")

    def frame_upd(u, c):
        s = blosc2.SChunk(chunksize=4000, urlpath=u, contiguous=c, mode="w",
                          cparams=cparams("lz4", 5, typesize=4), dparams=DPARAMS)
        for i in range(4):
            s.append_data(np.arange(1000, dtype="<i4") * (i + 1))
        s.update_chunk(1, blosc2.compress2(np.arange(300, dtype="<i4"), typesize=4, codec=C.ZSTD, clevel=3,
                                           filters=[0, 0, 0, 0, 0, BITSHUF], filters_meta=[0] * 6, nthreads=1))
        s.update_chunk(2, blosc2.compress2(np.full(1000, 9, "<i4").tobytes(), typesize=4, codec=C.BLOSCLZ,
                                           clevel=0, nthreads=1))
        # NB: no special-offset chunk here: in a frame with variable chunk sizes C-Blosc2 3.3.5
        # stores it but cannot read it back (the chunk size of a special offset is taken from
        # the frame's chunksize, which is 0)
        return s
    g.frame("frame_updated_chunks", frame_upd,
            notes="chunk 1 replaced by a shorter zstd/bitshuffle chunk, chunk 2 by a memcpyed blosclz chunk "
                  "(codec/filters per chunk differ from the frame header)")

    def frame_special(u, c):
        s = blosc2.SChunk(chunksize=800, urlpath=u, contiguous=c, mode="w",
                          cparams=cparams("zstd", 5, typesize=8), dparams=DPARAMS)
        s.fill_special(1000, blosc2.SpecialValue.NAN)
        s.update_data(2, np.arange(100, dtype="<f8"), copy=True)
        s.update_special(3, blosc2.SpecialValue.VALUE, 2.5)
        s.update_special(4, blosc2.SpecialValue.ZERO)
        return s
    g.frame("frame_specials_f8", frame_special, notes="fill_special NaN + one regular, one value, one zero chunk")

    def frame_bytes(u, c):
        text = (b"Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 120)[:7000]
        return blosc2.SChunk(chunksize=1500, data=text, urlpath=u, contiguous=c, mode="w",
                             cparams=cparams("zlib", 6, [0] * 6, typesize=1), dparams=DPARAMS)
    g.frame("frame_bytes_typesize1", frame_bytes, vlmeta={"title": "lorem", "n": 7000, "z": complex(0, 1)},
            notes="typesize 1 text, with vlmeta")

    def frame_meta(u, c):
        return blosc2.SChunk(chunksize=1024, data=np.arange(700, dtype="<u2"), urlpath=u, contiguous=c, mode="w",
                             cparams=cparams("blosclz", 9, [0, 0, 0, 0, DELTA, SHUF], typesize=2),
                             dparams=DPARAMS, meta={"mymeta": [1, 2, 3], "other": "x"})
    g.frame("frame_custom_metalayers", frame_meta, notes="plain frame with non-b2nd fixed-length metalayers")

    def frame_dict(u, c):
        data = (np.arange(6000) % 255).astype("<i2")
        return blosc2.SChunk(chunksize=8000, data=data, urlpath=u, contiguous=c, mode="w",
                             cparams=cparams("zstd", 5, use_dict=True, typesize=2), dparams=DPARAMS)
    g.frame("frame_dict_zstd_sparse", frame_dict, sparse=True, notes="sparse plain frame with zstd dictionaries")

    def frame_empty(u, c):
        return blosc2.SChunk(chunksize=100, urlpath=u, contiguous=c, mode="w",
                             cparams=cparams("zstd", 5, typesize=4), dparams=DPARAMS)
    g.frame("frame_no_chunks", frame_empty, notes="SChunk with no chunks at all")

    # 11. caterva -------------------------------------------------------------------------
    name = "caterva_2d_f4"
    g.caterva(name, make_data(case_rng(name), "<f4", (37, 23)), (10, 8), (4, 3), cparams("zlib", 6),
              notes="legacy 'caterva' metalayer (no dtype): 5-element msgpack array")
    name = "caterva_3d_i2_delta"
    g.caterva(name, make_data(case_rng(name), "<i2", (9, 14, 11)), (4, 5, 6), (2, 3, 4),
              cparams("lz4", 5, [0, 0, 0, 0, DELTA, SHUF]))
    name = "caterva_1d_u1_sparse"
    g.caterva(name, make_data(case_rng(name), "u1", (1000,)), (300,), (64,), cparams("zstd", 5), sparse=True)
    name = "caterva_0d"
    g.caterva(name, np.array(123456789, "<i8"), (), (), cparams("blosclz", 5))
    nd_fixed(g)


# --------------------------------------------------------------------------------------
# Random mode
# --------------------------------------------------------------------------------------

RANDOM_PIPELINES = ["none", "shuffle", "bitshuffle", "delta", "delta+shuffle", "delta+bitshuffle", "shuffle+delta",
                    "trunc+shuffle", "trunc+bitshuffle", "shuffle+bytedelta", "bytedelta", "shuffle(meta)",
                    "double-shuffle", "int_trunc+shuffle", "shuffle+bytedelta_buggy"]


def nd_random(rnd, kind, f, m, cp, blocks, ts):
    """Add NDLZ (kind "ndlz", blocks are 2-D) or an NDCELL / NDMEAN filter at a random place of
    the pipeline (f, m) to the cparams cp. Returns (cp, description) or None if it does not fit."""
    if math.prod(blocks) == 0:
        return None
    if kind == "ndlz":
        cp = dict(cp, codec=C.NDLZ, codec_meta=rnd.choice([4, 8]), use_dict=False)
        if ts > 1:
            cp["splitmode"] = SM.ALWAYS_SPLIT  # C-Blosc2 refuses NDLZ on unsplit typesize > 1 blocks
        return cp, f"NDLZ {cp['codec_meta']}x{cp['codec_meta']}"
    used = [(x, y) for x, y in zip(f, m) if x != NOF]
    # C-Blosc2 3.3.5 clobbers its source block when a third filter runs (breaking DELTA and the
    # memcpy fallback): keep NDCELL pipelines to two filters
    if kind == "ndcell" and len(used) > 1:
        used = used[-1:] if used[0][0] not in (TRUNC, INT_TRUNC) else used[:1]
    if kind == "ndcell":
        items = math.prod(blocks)
        meta = rnd.choice([e for e in range(1, 8) if e ** len(blocks) <= items] or [1])
    else:
        # a meta above the first block dimension while a later one is longer gives blocks
        # C-Blosc2 cannot decode; allow it only when no later dimension is longer
        top = 6 if all(b <= 6 for b in blocks[1:]) else max(1, min(6, blocks[0]))
        meta = rnd.randint(1, top)
    first = 1 if used and used[0][0] in (TRUNC, INT_TRUNC) else 0  # truncation stays first
    at = rnd.randint(first, len(used))
    used.insert(at, (NDCELL if kind == "ndcell" else NDMEAN, meta))
    f2 = [0] * (6 - len(used)) + [x for x, _ in used]
    m2 = [0] * (6 - len(used)) + [y for _, y in used]
    cp = dict(cp, filters=f2, filters_meta=[(x & 0xFF) - 256 if (x & 0xFF) > 127 else x for x in m2])
    return cp, f"{kind.upper()} meta {meta} -> filters {f2} meta {m2}"


def rand_shape(rnd, ndim, itemsize, max_bytes=200_000):
    while True:
        shape = []
        for _ in range(ndim):
            r = rnd.random()
            if r < 0.06:
                shape.append(0)
            elif r < 0.18:
                shape.append(1)
            elif r < 0.7:
                shape.append(rnd.randint(2, 12))
            else:
                shape.append(rnd.randint(13, 70 if ndim <= 2 else 30))
        if ndim == 1 and rnd.random() < 0.5:
            shape[0] = rnd.randint(0, 3000)
        if math.prod(shape) * itemsize <= max_bytes:
            return tuple(shape)


def rand_chunks(rnd, shape):
    for _ in range(100):
        cs, bs = [], []
        for s in shape:
            if s == 0:
                c = rnd.choice([0, 1, 2])
            else:
                c = rnd.randint(1, s) if rnd.random() < 0.85 else rnd.randint(s, s + 5)
            b = 0 if c == 0 else rnd.randint(1, c)
            cs.append(c)
            bs.append(b)
        nch = math.prod(-(-s // c) if c else 1 for s, c in zip(shape, cs))
        nbl = math.prod(-(-c // b) if b else 1 for c, b in zip(cs, bs))
        if nch <= 300 and nbl <= 400:
            return tuple(cs), tuple(bs)
    return tuple(shape), tuple(shape)


def random_set(g, n, seed):
    rnd = random.Random(seed)
    rng = np.random.default_rng(seed)
    skipped = {}
    for i in range(n):
        name = f"r{seed}_{i:04d}"
        for allow_nd in (True, False):
            g.stats["last_nd"] = False
            try:
                random_case(g, name, i, seed, rnd, rng, allow_nd)
                break
            except RuntimeError as e:
                # C-Blosc2 3.3.5 writes a few kinds of frames that it cannot read back (or refuses
                # some writes); such cases are dropped. (NDLZ / NDCELL / NDMEAN cases it refuses
                # are redrawn once without them.)
                for ext in (".b2nd", ".b2frame", ".caterva"):
                    rmpath(g.p(name + ext))
                g.manifest.pop(name, None)
                key = str(e).split(":")[0][:80]
                if g.stats["last_nd"]:
                    key = "(redrawn) " + key
                skipped.setdefault(key, []).append(name)
                if not g.stats["last_nd"]:
                    break
    g.stats["skipped"] = skipped


def random_case(g, name, i, seed, rnd, rng, allow_nd=True):
    r = rnd.random()
    codec = rnd.choice(list(CODECS))
    clevel = rnd.choice([0, 1, 3, 5, 6, 9, rnd.randint(0, 9)])
    sm = rnd.choice(list(SM))
    sparse = rnd.random() < 0.3
    use_dict = codec in ("zstd", "lz4", "lz4hc") and clevel > 0 and rnd.random() < 0.2
    dt = np.dtype(rnd.choice(DTYPES))
    ts = dt.itemsize
    pipes = [p for p in RANDOM_PIPELINES
             if not (p.startswith("trunc") and ts not in (4, 8))
             and not (p.startswith("int_trunc") and ts not in (1, 2, 4, 8))
             and not ("bytedelta" in p and (ts == 1 or ts > 255))]
    pl = rnd.choice(pipes)
    if pl.startswith("int_trunc"):
        bits = rnd.randint(1, 8 * ts) if rnd.random() < 0.7 else -rnd.randint(1, 8 * ts - 1)
    else:
        bits = (rnd.randint(1, 20) if ts == 4 else rnd.randint(1, 45)) if rnd.random() < 0.8 else -rnd.randint(1, 15)
    f, m = pipeline(pl, ts, trunc_bits=bits)
    cp = cparams(codec, clevel, f, m, splitmode=sm, use_dict=use_dict)
    desc = f"random seed={seed} #{i}: {codec}/{clevel} {pl} {sm.name} dict={use_dict} dtype={dt.descr if dt.names else dt.str}"
    vl = None
    if rnd.random() < 0.2:
        vl = {"i": rnd.randint(-10**6, 10**6), "f": rnd.choice([0.1, float("nan"), float("-inf")]),
              "s": "case %d" % i, "b": bytes(rng.integers(0, 256, rnd.randint(0, 9), dtype=np.uint8)),
              "c": complex(rnd.random(), -1.0), "l": [None, True, {"k": [1, 2]}]}
    if r < 0.1:
        # plain frame
        nitems = rnd.randint(0, 20000 // ts + 1)
        # (no all-zero chunks: in a frame with variable chunk sizes they become special offsets
        # that C-Blosc2 3.3.5 cannot read back)
        data = make_data(rng, dt, (nitems,), styles=("smooth", "random", "constant"))
        csz = rnd.randint(1, 4000) * ts

        def builder(u, c, data=data, csz=csz, cp=cp, ts=ts):
            cp = dict(cp)
            cp["typesize"] = ts
            s = blosc2.SChunk(chunksize=csz, urlpath=u, contiguous=c, mode="w", cparams=cp, dparams=DPARAMS)
            raw = data.tobytes()
            pos = 0
            prev_short = False
            while pos < len(raw):
                k = min(len(raw) - pos, csz)
                # C-Blosc2 refuses two consecutive chunks shorter than the frame chunksize
                if prev_short and k < csz:
                    break
                if not prev_short and rnd.random() < 0.3:
                    k = min(k, rnd.randint(1, max(1, csz // ts)) * ts)
                s.append_data(raw[pos:pos + k])
                prev_short = k < csz
                pos += k
            return s
        g.frame(name, builder, sparse=sparse, vlmeta=vl, notes=desc + " (plain frame)")
        return
    ndim = rnd.randint(0, 5)
    nd = None
    if rnd.random() < 0.3 and allow_nd:
        # the plugin codec NDLZ (2-D only) or the NDCELL / NDMEAN filters (NDMEAN writes
        # typesize 4 and 8 only)
        nd = rnd.choice(["ndlz", "ndcell", "ndmean"] if ts in (4, 8) else ["ndlz", "ndcell"])
        ndim = 2 if nd == "ndlz" else max(ndim, 1)
    shape = rand_shape(rnd, ndim, ts)
    chunks, blocks = rand_chunks(rnd, shape)
    if nd == "ndlz" and ts <= 64:
        # C-Blosc2's NDLZ encoder fails on streams of a few bytes: use blocks of >= 4 x 4 items
        shape = (rnd.randint(4, 80), rnd.randint(4, 80))
        chunks = tuple(rnd.randint(4, s) for s in shape)
        blocks = tuple(rnd.randint(4, c) for c in chunks)
    if nd:
        added = nd_random(rnd, nd, f, m, cp, blocks, ts)
        if added:
            cp, what = added
            desc += " + " + what
            g.stats["last_nd"] = True
    if r < 0.16:
        src = make_data(rng, dt, shape)
        g.caterva(name, src, chunks, blocks, cp, sparse=sparse, notes=desc + " (caterva)")
        return
    if r < 0.26 and ndim > 0 and math.prod(shape) > 0:
        # zeros/full + a slice written
        fillkind = rnd.choice(["zeros", "full"]) if dt.kind in "biufc" else "zeros"
        fill = gen_values(rng, dt, 1, "random")[0]
        exp = np.zeros(shape, dt) if fillkind == "zeros" else np.full(shape, fill, dt)
        sl = tuple(slice(a, a + rnd.randint(0, s - a)) for s in shape for a in [rnd.randint(0, s - 1)])
        part = make_data(rng, dt, exp[sl].shape)
        exp[sl] = part

        def maker(u, c, shape=shape, dt=dt, chunks=chunks, blocks=blocks, cp=cp, fill=fill, fk=fillkind,
                  sl=sl, part=part):
            if fk == "zeros":
                a = blosc2.zeros(shape, dtype=dt, chunks=chunks, blocks=blocks, urlpath=u, contiguous=c,
                                 mode="w", cparams=cp, dparams=DPARAMS)
            else:
                a = blosc2.full(shape, fill, dtype=dt, chunks=chunks, blocks=blocks, urlpath=u, contiguous=c,
                                mode="w", cparams=cp, dparams=DPARAMS)
            if part.size:
                a[sl] = part
            return a
        g.b2nd(name, None, maker=maker, expected=exp, cp=cp, sparse=sparse, vlmeta=vl,
               notes=desc + f" ({fillkind} + slice {sl})")
        return
    src = make_data(rng, dt, shape)
    g.b2nd(name, src, chunks, blocks, cp, sparse=sparse, vlmeta=vl, notes=desc)


# --------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--random", type=int, default=None, metavar="N", help="write N random cases")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    if blosc2.__version__ != ORACLE_VERSION:
        print(f"warning: fixtures are meant to be generated with python-blosc2 {ORACLE_VERSION}, "
              f"found {blosc2.__version__}", file=sys.stderr)
    blosc2.set_nthreads(1)
    outdir = args.outdir
    os.makedirs(outdir, exist_ok=True)
    # remove what a previous run listed (stale cases must not linger)
    old = os.path.join(outdir, "manifest.json")
    if os.path.exists(old):
        try:
            with open(old) as f:
                for e in json.load(f).values():
                    p = os.path.normpath(os.path.join(outdir, e["path"]))
                    if p.startswith(os.path.normpath(outdir) + os.sep):
                        rmpath(p)
        except (ValueError, KeyError, TypeError):
            pass
    g = Gen(outdir, verbose=args.verbose)
    if args.random is not None:
        random_set(g, args.random, args.seed)
    else:
        fixed_set(g)
    g.write_manifest()

    total = 0
    for root, _, files in os.walk(outdir):
        for fn in files:
            total += os.path.getsize(os.path.join(root, fn))
    kinds = {}
    for e in g.manifest.values():
        k = f"{e['kind']}/{e['storage']}"
        kinds[k] = kinds.get(k, 0) + 1
    oracle = f"C oracle {g.oracle.version} checked {g.stats['c_checked']}" if g.oracle.lib else "C oracle unavailable"
    print(f"{len(g.manifest)} cases ({', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))}) in {outdir}, "
          f"{total / 1024:.1f} KiB; {oracle} ({len(g.stats['c_mismatch'])} known-bug mismatches); "
          f"python arr[...] mismatches: {len(g.stats['py_slice_mismatch'])}")
    skipped = {k: v for k, v in g.stats.get("skipped", {}).items() if not k.startswith("(redrawn)")}
    if skipped:
        print(f"skipped {sum(map(len, skipped.values()))} random cases that C-Blosc2 could not write/read back: "
              + "; ".join(f"{k} x{len(v)}" for k, v in skipped.items()))
    if g.verbose:
        print("skipped:", g.stats.get("skipped", {}))
        print("C mismatches:", g.stats["c_mismatch"])
        print("python arr[...] mismatches:", g.stats["py_slice_mismatch"])
        print("not reopenable by python-blosc2:", g.stats["py_unopenable"])


if __name__ == "__main__":
    main()
