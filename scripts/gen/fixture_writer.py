"""The writer of gen_fixtures.py: one case written, checked and added to the manifest.

One job: `Gen` writes a case (a b2nd, caterva or plain frame, contiguous or sparse) with
python-blosc2, reads it back through fixture_frames.py's independent parser, compares it with
the source data (and C-Blosc2's own reading where it loads), and records its manifest entry.
"""

from __future__ import annotations

import gc
import json
import math
import os
import struct
import zlib
from collections.abc import Callable
from typing import Any

import blosc2
import msgpack
import numpy as np
from blosc2.msgpack_utils import msgpack_packb

from fixture_data import DPARAMS, cparams, rmpath, trunc_expected
from fixture_frames import (
    DELTA,
    INT_TRUNC,
    NDMEAN,
    SM,
    TRUNC,
    COracle,
    codec_name,
    compact_list,
    header_file,
    mp_json,
    parse_frame_header,
    parse_metalayers,
    read_chunks_direct,
    read_offsets,
    reassemble,
    sha256,
    special_summary,
    vlmeta_json,
)

# --------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------


def maker_for(make: Callable[..., Any], *args: Any, **kw: Any) -> Callable[[str, bool], Any]:
    """A maker for Gen.b2nd and Gen.frame: `make(*args, **kw)` (blosc2.zeros, full, SChunk...)
    written to the case's path as a contiguous or sparse frame. It exists so that every case
    built by a constructor rather than from data opens its file the one same way."""
    return lambda urlpath, contiguous: make(
        *args, **kw, urlpath=urlpath, contiguous=contiguous, mode="w", dparams=DPARAMS
    )


def with_parts(make: Callable[[str, bool], Any], expected: Any, parts: Any) -> Callable[[str, bool], Any]:
    """A maker that builds the array with `make`, then writes `expected`'s values at each of
    `parts` (tuples of slices): an array written in part after it was made, so that its special
    chunks (zeros, uninitialized, a fill value) sit beside regular ones."""

    def maker(urlpath: str, contiguous: bool) -> Any:
        array = make(urlpath, contiguous)
        for part in parts:
            array[part] = np.ascontiguousarray(expected[part])
        return array

    return maker


class Gen:
    def __init__(self, outdir: str, verbose: bool = False) -> None:
        self.outdir = outdir
        self.manifest: dict[str, Any] = {}
        self.verbose = verbose
        self.oracle = COracle()
        self.stats: dict[str, Any] = {"c_checked": 0, "c_mismatch": [], "py_slice_mismatch": [], "py_unopenable": []}
        os.makedirs(outdir, exist_ok=True)

    def p(self, rel: Any) -> Any:
        return os.path.join(self.outdir, rel)

    # ---- writers ----------------------------------------------------------------------

    def b2nd(
        self,
        name: Any,
        src: Any,
        chunks: Any = None,
        blocks: Any = None,
        cp: Any = None,
        sparse: bool = False,
        vlmeta: Any = None,
        notes: str = "",
        maker: Any = None,
        expected: Any = None,
        ext: str = ".b2nd",
    ) -> None:
        """Write a b2nd array. maker(urlpath, contiguous) may build it differently (zeros,
        full, slices...); `expected` then gives the expected numpy array."""
        rel = name + ext
        path = self.p(rel)
        rmpath(path)
        if maker is None:
            # cp == "defaults": let python-blosc2 choose (nthreads comes from blosc2.set_nthreads(1))
            kw = {} if cp == "defaults" else {"cparams": cp or cparams()}
            arr = blosc2.asarray(
                src, chunks=chunks, blocks=blocks, urlpath=path, contiguous=not sparse, mode="w", dparams=DPARAMS, **kw
            )
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
        self.finish(
            name,
            rel,
            "b2nd",
            exp_arr.tobytes(),
            notes,
            src_dtype=exp_arr.dtype,
            src_shape=exp_arr.shape,
            vlmeta_set=vlmeta,
        )

    def caterva(
        self, name: Any, src: Any, chunks: Any, blocks: Any, cp: Any, notes: str = "", sparse: bool = False
    ) -> None:
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
        s2 = blosc2.SChunk(
            chunksize=sc.chunksize,
            cparams=cpd,
            dparams=DPARAMS,
            meta={"caterva": ph},
            urlpath=path,
            contiguous=not sparse,
            mode="w",
        )
        for i in range(sc.nchunks):
            s2.append_chunk(sc.get_chunk(i))
        del s2
        gc.collect()
        hf = header_file(path)
        with open(hf, "rb") as f:
            b = bytearray(f.read())
        assert b.count(php) == 1
        k = b.find(php)
        b[k : k + L] = meta
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

    def frame(self, name: Any, builder: Any, sparse: bool = False, notes: str = "", vlmeta: Any = None) -> None:
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

    def finish(
        self,
        name: Any,
        rel: Any,
        kind: Any,
        raw: Any,
        notes: Any,
        src_dtype: Any = None,
        src_shape: Any = None,
        vlmeta_set: Any = None,
    ) -> Any:
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
            notes = (
                notes + " " if notes else ""
            ) + "[python-blosc2 4.14.1 cannot reopen this file (filters_meta byte > 127 -> OverflowError)]"
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
                assert direct[i][0] is None or d == direct[i][0], (
                    f"{name}: chunk {i} differs between python and direct read"
                )
                chunks.append(d)
            vlm = vlmeta_json(sc)
            del sc
        else:
            if any(d is None for d, _, _ in direct):
                raise RuntimeError(
                    "python-blosc2 cannot reopen this file and its filters need the SChunk to decompress"
                )
            for i, (d, st, fl) in enumerate(direct):
                chunk_specials.append(st)
                chunk_flags.append(fl)
                if st == 4:
                    uninit.append(i)
                chunks.append(d)
            # the stored vlmeta bytes are python-blosc2's msgpack packing of the values set
            vlm = {
                k: mp_json(
                    msgpack.unpackb(
                        msgpack_packb(v),
                        raw=False,
                        strict_map_key=False,
                        ext_hook=lambda code, data: msgpack.ExtType(code, data),
                    )
                )
                for k, v in (vlmeta_set or {}).items()
            }
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
                    notes = (notes + " " if notes else "") + f"[C-Blosc2 3.3.5 b2nd_to_cbuffer on this file {what}]"
            # python-blosc2's own slicing (known to be wrong for some DELTA arrays on disk)
            if kind == "b2nd" and obj is not None and not uninit and len(raw) > 0:
                try:
                    pv = np.asarray(obj[()] if len(shape) == 0 else obj[...]).tobytes(order="C")
                except Exception as e:  # noqa: BLE001
                    pv = repr(e).encode()
                if pv != raw:
                    self.stats["py_slice_mismatch"].append(name)
                    notes = (
                        (notes + " " if notes else "")
                        + "[python-blosc2 4.14.1 arr[...] returns different data for this file; the expected data is the source]"
                    )
        else:
            raw = b"".join(chunks)
        if uninit:
            notes = (
                (notes + " " if notes else "")
                + f"[uninitialized special chunks {compact_list(uninit)}: content undefined in C-Blosc2, expected here as zero bytes]"
            )
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
            print(
                f"  {name}: {kind} {entry['storage']} shape={shape} nchunks={nchunks} "
                f"{entry['codec']}/{entry['clevel']} f={entry['filters']} {special or ''}"
            )

    def write_manifest(self) -> None:
        with open(self.p("manifest.json"), "w") as f:
            json.dump(self.manifest, f, indent=1, allow_nan=False, ensure_ascii=False)
            f.write("\n")


def case_rng(name: Any) -> Any:
    return np.random.default_rng(zlib.crc32(name.encode()))
