#!/usr/bin/env python3
"""NDLZ streams with C-Blosc2's verdict on each, for src/format/codec/ndlz_tests.rs.

Streams come from C-Blosc2's own NDLZ encoder (small 2-D byte images with repeated rows,
cells and runs, every block shape clipped or not), from 1-3 random byte changes to those,
and from a few hand-made records (clipped row-match cells, 16-bit offset wrap, a repeated
row). Each stream is put alone in a one-block chunk and decoded by C-Blosc2
(`blosc2.decompress`); the expected output (as its sha256) is C's, or null where C
refuses.

    .venv/bin/python scripts/gen/gen_ndlz_cases.py src/format/codec/ndlz_c_cases.json

Deterministic (fixed seeds).
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from typing import Any

import blosc2
import numpy as np
from numpy.random import Generator


def chunk_for(stream: Any, rows: Any, cols: Any, meta: Any) -> Any:
    """A one-block, one-stream chunk holding `stream` (typesize 1, no filters)."""
    n = rows * cols
    header = bytearray(32)
    header[0], header[1], header[2], header[3] = 5, 1, 0xD5, 1  # NDLZ (udcodec), dont_split
    struct.pack_into("<iii", header, 4, n, n, 32 + 4 + 4 + len(stream))
    header[22], header[23] = 32, meta
    return bytes(header) + struct.pack("<ii", 36, len(stream)) + stream


def c_decode(stream: Any, rows: Any, cols: Any, meta: Any) -> Any:
    try:
        return blosc2.decompress(chunk_for(stream, rows, cols, meta))
    except (RuntimeError, ValueError):
        return None


def image(rng: Generator, rows: Any, cols: Any) -> Any:
    pats = [rng.integers(0, 256, cols, dtype=np.uint8) for _ in range(3)]
    out = np.empty((rows, cols), np.uint8)
    for r in range(rows):
        k = int(rng.integers(0, 6))
        if k < 3:
            out[r] = pats[k]
        elif k == 3:
            out[r] = int(rng.integers(0, 3))
        elif k == 4:
            out[r] = np.tile(pats[0][:4], -(-cols // 4))[:cols]
        else:
            out[r] = rng.integers(0, 256, cols, dtype=np.uint8)
    return out


def c_stream(img: Any, meta: Any) -> Any:
    """C-Blosc2's NDLZ stream for one block holding `img`, or None if it stored it otherwise."""
    rows, cols = img.shape
    arr = blosc2.asarray(
        img,
        chunks=img.shape,
        blocks=img.shape,
        cparams=dict(codec=blosc2.Codec.NDLZ, codec_meta=meta, clevel=5, nthreads=1, filters=[0] * 6),
    )
    c = arr.schunk.get_chunk(0)
    if c[2] & 0x02 or (c[31] >> 4) & 7:  # memcpyed or special
        return None
    start = struct.unpack_from("<i", c, 32)[0]
    csize = struct.unpack_from("<i", c, start)[0]
    if csize <= 0 or csize == rows * cols:
        return None
    return bytes(c[start + 4 : start + 4 + csize])


def hand_made() -> Any:
    def hdr(rows: Any, cols: Any) -> Any:
        return bytes([2]) + struct.pack("<ii", rows, cols)

    lit16 = bytes(range(1, 17))
    return [
        # 4x3 block: a rows-pair record in a clipped cell (buffer read at stride 3)
        (4, 4, 3, hdr(4, 3) + bytes([136, 0, 0, 21, 22, 23, 24, 31, 32, 33, 34])),
        # three-rows record with raw offset 0xFFFD (wraps to just after the token)
        (4, 4, 4, hdr(4, 4) + bytes([224]) + struct.pack("<H", 0xFFFD) + bytes(range(1, 13))),
        # rows-pair token 129 names row 0 twice
        (4, 8, 4, hdr(8, 4) + bytes([0]) + lit16 + bytes([129]) + struct.pack("<H", 16) + bytes(range(40, 52))),
        # 8x8 pair match in a clipped 5x6 cell
        (8, 5, 6, hdr(5, 6) + bytes([138]) + struct.pack("<H", 0) + bytes(range(100, 148))),
        # 8x8 triple match whose rows end the cell, offset into the header
        (8, 8, 8, hdr(8, 8) + bytes([173]) + struct.pack("<H", 0) + bytes(range(60, 100))),
        # two-pairs record pointing into the header
        (4, 4, 4, hdr(4, 4) + bytes([48]) + struct.pack("<HH", 0, 1)),
        # trailing bytes after the last cell
        (4, 4, 4, hdr(4, 4) + bytes([0x40, 7, 1, 2, 3])),
    ]


def main() -> None:
    out_path = sys.argv[1]
    blosc2.set_nthreads(1)
    rng = np.random.default_rng(20261123)
    cases = []
    for meta, rows, cols, stream in hand_made():
        cases.append((meta, rows, cols, stream))
    sources: list[Any] = []
    for _attempt in range(200):
        if len(sources) == 16:
            break
        meta = [4, 8][len(sources) % 2]
        # (C-Blosc2 stores chunks of a few hundred bytes verbatim)
        rows, cols = int(rng.integers(18, 30)), int(rng.integers(18, 30))
        s = c_stream(image(rng, rows, cols), meta)
        if s is not None:
            sources.append((meta, rows, cols, s))
    cases += sources
    for meta, rows, cols, s in sources:
        for _ in range(2):
            bad = bytearray(s)
            for _ in range(int(rng.integers(1, 4))):
                at = int(rng.integers(9, len(bad)))
                bad[at] = int(rng.integers(0, 256)) if rng.random() < 0.5 else bad[at] ^ (1 << int(rng.integers(0, 8)))
            if len(bad) != rows * cols:
                cases.append((meta, rows, cols, bytes(bad)))
    out = []
    for meta, rows, cols, s in cases:
        d = c_decode(s, rows, cols, meta)
        out.append(
            {
                "meta": meta,
                "rows": rows,
                "cols": cols,
                "stream": s.hex(),
                "expected_sha256": None if d is None else hashlib.sha256(bytes(d)).hexdigest(),
            }
        )
    with open(out_path, "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")
    assert len(sources) == 16, "C-Blosc2 stored too many test images verbatim"
    ok = sum(1 for c in out if c["expected_sha256"] is not None)
    print(
        f"{len(out)} cases ({ok} decoded by C-Blosc2 {blosc2.blosclib_version}, {len(out) - ok} refused) in {out_path}"
    )


if __name__ == "__main__":
    main()
