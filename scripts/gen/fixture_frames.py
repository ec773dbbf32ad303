"""How gen_fixtures.py reads back what python-blosc2 wrote, without python-blosc2's own parsing.

One job: an independent second reading of every fixture. The frame header, chunk offsets,
metalayers and vlmetalayers parsed from the file's bytes; vlmeta turned into the manifest's JSON;
a b2nd array re-assembled in numpy from its decompressed chunks (block layout); and, where the C
library shipped with python-blosc2 loads through ctypes, C-Blosc2's own b2nd_to_cbuffer as a
third opinion (`COracle`). Also the constants every part of the generator shares.
"""

from __future__ import annotations

import base64
import ctypes
import hashlib
import json
import math
import os
import struct
from typing import Any

import blosc2
import msgpack
import numpy as np

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

DTYPES: list[Any] = [
    "i1",
    "u1",
    "<i2",
    "<u2",
    "<i4",
    "<u4",
    "<i8",
    "<u8",
    "<f2",
    "<f4",
    "<f8",
    ">i4",
    ">f8",
    "<c8",
    "<c16",
    "?",
    "S7",
    "<U5",
    [("a", "<i4"), ("b", "<f8"), ("c", "S3")],
    "S300",
    [("id", "<i8"), ("name", "S284"), ("v", "<f8")],  # 300-byte record
]


PLUGIN_CODEC_NAMES = {32: "ndlz"}


def codec_name(hdr: Any) -> Any:
    """The codec's name as meta.json gives it (plugin codecs: compcode 6 + udcodec id)."""
    if hdr["compcode"] == 6:
        return PLUGIN_CODEC_NAMES.get(hdr["udcodec"], f"codec{hdr['udcodec']}")
    return CODEC_NAMES.get(hdr["compcode"], f"codec{hdr['compcode']}")


def sha256(b: Any) -> Any:
    return hashlib.sha256(b).hexdigest()


# --------------------------------------------------------------------------------------
# Frame inspection helpers (independent of python-blosc2's own parsing)
# --------------------------------------------------------------------------------------


def header_file(path: str) -> Any:
    return os.path.join(path, "chunks.b2frame") if os.path.isdir(path) else path


def parse_frame_header(path: str) -> Any:
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


def read_offsets(path: str, hdr: Any) -> Any:
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


def parse_metalayers(hdr: Any) -> Any:
    """Fixed-length metalayers from the frame header: {name: raw content bytes}."""
    b = hdr["raw"]
    p = 87
    if hdr["header_len"] <= p:
        return {}
    assert b[p] == 0x93 and b[p + 1] == 0xCD and b[p + 4] == 0xDE, "unexpected metalayer section"
    n = int.from_bytes(b[p + 5 : p + 7], "big")
    p += 7
    out = {}
    for _ in range(n):
        t = b[p]
        assert 0xA0 <= t <= 0xBF, "metalayer names are fixstr"
        ln = t - 0xA0
        name = b[p + 1 : p + 1 + ln].decode()
        p += 1 + ln
        assert b[p] == 0xD2
        off = int.from_bytes(b[p + 1 : p + 5], "big")
        p += 5
        assert b[off] == 0xC6
        clen = int.from_bytes(b[off + 1 : off + 5], "big")
        out[name] = bytes(b[off + 5 : off + 5 + clen])
    return out


def needs_schunk(hdr: Any) -> Any:
    """Whether the frame's filters need their SChunk to decompress (blosc2.decompress fails)."""
    f, m = hdr["filters"], hdr["filters_meta"]
    return NDCELL in f or NDMEAN in f or any(x in (BYTEDELTA, BYTEDELTA_BUGGY) and y == 0 for x, y in zip(f, m))


def read_chunks_direct(path: str, hdr: Any, offsets: Any) -> Any:
    """Decompressed chunks read without python-blosc2's SChunk machinery: chunk bytes are
    located through the offsets index and decompressed with blosc2.decompress; chunks that
    exist only as special offsets are synthesized. Returns [(bytes, special_type, flags)]."""
    b = hdr["raw"]
    n = len(offsets)
    out: list[tuple[bytes | None, int, int]] = []
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
            with open(os.path.join(path, f"{o:08X}.chunk"), "rb") as f:
                c = f.read()
        else:
            c = b[hdr["header_len"] + o :]
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


def special_summary(offsets: Any, index_special: Any, chunk_specials: Any) -> Any:
    """Human/machine readable note on special chunks."""
    parts = []
    by: dict[str, list[int]] = {}
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


def compact_list(v: Any) -> Any:
    if len(v) > 12:
        return f"[{v[0]}..{v[-1]}] ({len(v)} chunks)"
    return "[" + ",".join(map(str, v)) + "]"


# --------------------------------------------------------------------------------------
# msgpack -> JSON mapping for vlmeta
# --------------------------------------------------------------------------------------


def fnum(x: Any) -> Any:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def b64(b: Any) -> Any:
    return base64.b64encode(bytes(b)).decode("ascii")


def mp_json(o: Any) -> Any:
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


def vlmeta_json(schunk: Any) -> Any:
    vl = schunk.vlmeta
    out = {}
    for name in vl:
        raw = blosc2.blosc2_ext.vlmeta.get_vlmeta(vl, name)  # raw stored (decompressed) bytes
        val = msgpack.unpackb(
            raw, raw=False, strict_map_key=False, use_list=True, ext_hook=lambda code, data: msgpack.ExtType(code, data)
        )
        out[name] = mp_json(val)
    return out


# --------------------------------------------------------------------------------------
# Independent b2nd re-assembly (from decompressed chunks, block layout) and C oracle
# --------------------------------------------------------------------------------------


def reassemble(chunks: Any, shape: Any, cs: Any, bs: Any, itemsize: Any) -> Any:
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

    def __init__(self) -> None:
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

    def read(self, path: str, nbytes: Any) -> Any:
        assert self.lib is not None
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
