#!/usr/bin/env python3
"""Generate the files tests/caterva2.rs serves from a real Caterva2 server.

Usage:
    .venv/bin/python scripts/gen/gen_c2_fixtures.py OUTDIR

Writes into OUTDIR (which becomes the server's @public root, or a folder of it):

- lab.h5: an HDF5 file (h5py + hdf5plugin) whose datasets cover dtypes
  (i1, u2, i4, >i4, i8, f4, f8, c16, bool, S5, a compound, an opaque V8), filters (gzip, lzf, shuffle+gzip,
  Blosc2, Zstd, none), chunked 1-d/2-d/3-d shapes with edge chunks, a
  contiguous (unchunked) dataset, a 0-d scalar, a nested group path
  (grid/level2/temp), a group holding only attributes, and a dataset
  python-blosc2 cannot represent (variable-length strings).
- store.b2z: a python-blosc2 DictStore with a small (embedded) value, a big
  array (a member file) and a nested key /a/b.
- sub/x.b2nd, sub/y.b2nd: plain python-blosc2 arrays in a subfolder.
- manifest.json: {PATH: {"shape", "dtype", "size", "sha256", "expect"}} for
  every dataset, PATH as it shows under a mount of the root
  (`lab.h5/grid/level2/temp`, `store.b2z/a/b`, `sub/x.b2nd`); sha256 is of
  the C-order bytes numpy gives (the source arrays, checked against what
  h5py reads back), never of anything blosc2fs or blosc2 slicing produces.
  "expect" is "exact" (the `data` file must hold exactly those bytes) or
  "meta_only" (no value can be served: meta.json must say why and `data`
  must be absent or unreadable; "may_be_unlisted": the server may not list
  it at all).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from typing import Any

import blosc2
import h5py
import hdf5plugin  # noqa: F401  (registers the Blosc2/Zstd filters with h5py: import before h5py reads)
import numpy as np

blosc2.set_nthreads(1)


def entry(a: Any, expect: str = "exact") -> Any:
    a = np.asarray(a)
    b = np.ascontiguousarray(a).tobytes()
    return {
        "shape": list(a.shape),
        "dtype": a.dtype.str,
        "size": len(b),
        "sha256": hashlib.sha256(b).hexdigest(),
        "expect": expect,
    }


def fresh(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def write_h5(path: str, manifest: Any) -> None:
    rng = np.random.default_rng(2026)
    fresh(path)
    sources = {}
    with h5py.File(path, "w") as f:

        def ds(name: Any, data: Any, **kw: Any) -> None:
            f.create_dataset(name, data=data, **kw)
            sources[name] = np.asarray(data)

        # Chunked, several dtypes and filters, edge chunks everywhere.
        ds("i1_gzip", rng.integers(-128, 128, size=(1000,), dtype=np.int8), chunks=(300,), compression="gzip")
        ds("u2_lzf", rng.integers(0, 65535, size=(37, 53), dtype=np.uint16), chunks=(10, 16), compression="lzf")
        ds(
            "i4_shuffle_gzip",
            np.arange(23 * 19 * 11, dtype=np.int32).reshape(23, 19, 11) * 7 - 5000,
            chunks=(8, 8, 4),
            shuffle=True,
            compression="gzip",
            compression_opts=6,
        )
        ds(
            "i8_blosc2",
            rng.integers(-(2**62), 2**62, size=(513, 7), dtype=np.int64),
            chunks=(100, 7),
            **hdf5plugin.Blosc2(),
        )
        ds("f4_zstd", rng.standard_normal((45, 31)).astype(np.float32), chunks=(16, 16), **hdf5plugin.Zstd())
        ds("f8_none", rng.random((50, 20)), chunks=(7, 9))
        ds(
            "c16_gzip",
            (rng.standard_normal(300) + 1j * rng.standard_normal(300)).astype(np.complex128),
            chunks=(64,),
            compression="gzip",
        )
        ds("bool_lzf", rng.random((33, 17)) < 0.3, chunks=(10, 10), compression="lzf")
        ds(
            "s5_fixed",
            np.array([b"alpha", b"beta", b"gamma", b"d", b"", b"epsil", b"zeta", b"eta"] * 5, dtype="S5"),
            chunks=(6,),
        )
        # Contiguous (no chunks) and a 0-d scalar.
        ds("contiguous_f8", np.linspace(-1, 1, 4321).reshape(29, 149))
        ds("scalar_f8", np.float64(3.25))
        # A nested path, and a group with attributes only.
        temp = (rng.random((12, 24, 36)) * 40 - 10).astype(np.float32)
        ds("grid/level2/temp", temp, chunks=(5, 10, 10), compression="gzip", shuffle=True)
        ds("grid/level1_i4", np.arange(77, dtype=np.int32)[::-1].copy(), chunks=(20,))
        g = f.create_group("attrs_only")
        g.attrs["title"] = "a group with attributes only"
        g.attrs["version"] = 3
        # A compound (packed, 12-byte items), an opaque type, a big-endian one.
        ds("compound", np.array([(1, 2.5), (3, 4.5), (5, 6.5)], dtype=[("a", "<i4"), ("b", "<f8")]), chunks=(2,))
        ds("opaque_v8", np.frombuffer(b"abcdefgh01234567" * 5, dtype="V8").copy(), chunks=(4,))
        ds("be_i4", np.arange(-50, 50, dtype=">i4"), chunks=(30,))
        # What python-blosc2 cannot represent: variable-length strings.
        f.create_dataset("vlen_str", data=np.array(["a", "bb", "ccc", "dddd"], dtype=object), dtype=h5py.string_dtype())
    # The truth: numpy's sources, checked against h5py's reading.
    with h5py.File(path, "r") as f:
        for name, src in sources.items():
            got = np.asarray(f[name][()])
            assert got.dtype == src.dtype and got.tobytes() == np.ascontiguousarray(src).tobytes(), name
            manifest[f"lab.h5/{name}"] = entry(src, "exact")
        # No values to serve: Caterva2 2026.9.2 leaves variable-length
        # strings out of its listings altogether; shown, they have no values.
        d = f["vlen_str"]
        manifest["lab.h5/vlen_str"] = {
            "shape": list(d.shape),
            "dtype": str(d.dtype),
            "size": None,
            "sha256": None,
            "expect": "meta_only",
            "may_be_unlisted": True,
        }
        assert len(f["attrs_only"]) == 0 and f["attrs_only"].attrs["version"] == 3


def write_b2z(path: str, manifest: Any) -> None:
    fresh(path)
    rng = np.random.default_rng(7)
    small = np.arange(10, dtype=np.int16)
    big = rng.random((600, 500))  # 2.4 MB: above the embedding threshold, a member file
    nested = np.arange(5 * 7 * 3, dtype=np.float32).reshape(5, 7, 3) / 3
    with blosc2.DictStore(path, mode="w", threshold=1000) as ds:
        ds["/small"] = small  # under the threshold: embedded (in embed.b2e)
        ds["/big"] = blosc2.asarray(big, chunks=(200, 250), blocks=(50, 125))
        ds["/a/b"] = blosc2.asarray(nested, chunks=(3, 4, 3), blocks=(2, 2, 3))
    with blosc2.DictStore(path, mode="r") as ds:
        assert "/small" in ds.estore.keys() and "/big" not in ds.estore.keys(), ds.estore.keys()
        for key, src in (("/small", small), ("/big", big), ("/a/b", nested)):
            assert np.array_equal(np.asarray(ds[key][:]), src), key
            manifest["store.b2z" + key] = entry(src)


def write_b2nd(outdir: str, manifest: Any) -> None:
    os.makedirs(os.path.join(outdir, "sub"), exist_ok=True)
    x = np.random.default_rng(3).standard_normal((120, 90)).astype(np.float64)
    y = (np.arange(10_000, dtype=np.uint32) * 2654435761 % 1000).astype(np.uint32)
    for name, src, chunks, blocks, cparams in (
        ("sub/x.b2nd", x, (50, 40), (10, 20), dict(codec=blosc2.Codec.ZSTD, clevel=5)),
        ("sub/y.b2nd", y, (3000,), (500,), dict(codec=blosc2.Codec.LZ4, clevel=9)),
    ):
        path = os.path.join(outdir, name)
        fresh(path)
        blosc2.asarray(src, urlpath=path, mode="w", chunks=chunks, blocks=blocks, cparams=cparams)
        assert np.array_equal(blosc2.open(path)[:], src), name
        manifest[name] = entry(src)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    manifest: dict[str, Any] = {}
    write_h5(os.path.join(outdir, "lab.h5"), manifest)
    write_b2z(os.path.join(outdir, "store.b2z"), manifest)
    write_b2nd(outdir, manifest)
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        json.dump(dict(sorted(manifest.items())), f, indent=1)
        f.write("\n")
    print(f"{len(manifest)} datasets in {outdir}")


if __name__ == "__main__":
    main()
