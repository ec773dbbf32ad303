#!/usr/bin/env python3
"""Build the corpus tests/zarr_v3.rs mounts and reads as a Zarr v3 hierarchy.

    gen_zarr3_corpus.py OUT FIXTURES_DIR

Writes OUT/src (the tree to mount) and OUT/expected.json:

    {"arrays": {REL: {"sha256": HEX, "dtype": STR, "shape": [...]}},
     "not_v3": [REL, ...]}

REL is an array folder's path in the mount. "arrays" lists every array the
hierarchy must present (each numeric one of the corpus); sha256 is of the
C-order bytes of python-blosc2's own values: the original numpy data the
file was written from (tests/fixtures/manifest.json and the stores' manifest
say it for the committed fixtures), or, for a saved lazy expression,
python-blosc2's evaluation of the saved file. (python-blosc2 4.14.1 slicing
reads on-disk arrays with the DELTA filter wrongly, so no expectation here
comes from slicing one.) "not_v3" lists array folders whose dtype v3 cannot
describe (strings, records): they must have no zarr.json.

OUT/src holds:
- fixtures/: the committed .b2nd and Caterva fixtures (every codec, filter,
  split mode, numeric dtype, rank 0 to 8, special chunks, sparse frames);
- stores/: the committed TreeStore, DictStores, EmbedStore and a CTable
  (groups: nested groups with vlmeta, a table and its number columns);
- gen/: big-endian variants, vlmeta attributes, saved dimension names shared
  by two arrays of one group;
- computed/: operands and saved lazy expressions (LazyExpr.save).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from typing import Any

import blosc2
import numpy as np

NUMERIC_KINDS = "biufc"


def numeric(dtype: Any) -> Any:
    try:
        d = np.dtype(dtype)
    except TypeError:  # a record written as a string: not numeric
        return False
    return (
        d.fields is None
        and d.subdtype is None
        and d.kind in NUMERIC_KINDS
        and d.itemsize <= 16
        and not (d.kind == "f" and d.itemsize > 8)
    )


def sha(values: Any, dtype: Any) -> Any:
    return hashlib.sha256(np.ascontiguousarray(values, dtype=dtype).tobytes()).hexdigest()


def main() -> None:
    out, fixtures = sys.argv[1], sys.argv[2]
    src = os.path.join(out, "src")
    if os.path.exists(src):
        shutil.rmtree(src)
    arrays, not_v3 = {}, []

    # Committed fixtures: every codec, filter, dtype and rank.
    os.makedirs(os.path.join(src, "fixtures"))
    manifest = json.load(open(os.path.join(fixtures, "manifest.json")))
    for entry in manifest.values():
        if entry["kind"] == "frame":
            continue
        from_path = os.path.join(fixtures, entry["path"])
        to_path = os.path.join(src, "fixtures", entry["path"])
        (shutil.copytree if os.path.isdir(from_path) else shutil.copy)(from_path, to_path)
        rel = "fixtures/" + entry["path"]
        dtype = entry["dtype"]  # None: a Caterva file, shown as opaque |V<n> items
        if dtype is not None and numeric(dtype):
            arrays[rel] = {"sha256": entry["sha256"], "dtype": np.dtype(dtype).str, "shape": entry["shape"]}
        else:
            not_v3.append(rel)

    # Committed stores: groups with vlmeta, nested groups, a table.
    os.makedirs(os.path.join(src, "stores"))
    stores = json.load(open(os.path.join(fixtures, "stores", "manifest.json")))["stores"]
    for name in ("tree.b2z", "dict.b2z", "dict.b2d", "values.b2e", "table.b2d"):
        from_path = os.path.join(fixtures, "stores", name)
        to_path = os.path.join(src, "stores", name)
        (shutil.copytree if os.path.isdir(from_path) else shutil.copy)(from_path, to_path)
        if name.startswith("table"):
            # A table's number columns (no nulls) are 1-D arrays of its live rows.
            for root, table in stores[name]["tables"].items():
                for col, c in table["columns"].items():
                    if numeric(c["dtype"]):
                        arrays[f"stores/{name}{root}/{col}"] = {
                            "sha256": c["sha256"],
                            "dtype": np.dtype(c["dtype"]).str,
                            "shape": c["shape"],
                        }
            continue
        for key, k in stores[name]["keys"].items():
            if numeric(k["dtype"]):
                arrays[f"stores/{name}{key}"] = {
                    "sha256": k["sha256"],
                    "dtype": np.dtype(k["dtype"]).str,
                    "shape": k["shape"],
                }

    # Generated: big-endian dtypes, vlmeta attributes, saved dimension names.
    gen = os.path.join(src, "gen")
    os.makedirs(os.path.join(gen, "dims"))
    rng = np.random.default_rng(37)

    def save(rel: Any, values: Any, chunks: Any, blocks: Any, **kw: Any) -> Any:
        path = os.path.join(gen, rel)
        arr = blosc2.asarray(values, urlpath=path, mode="w", chunks=chunks, blocks=blocks, **kw)
        arrays["gen/" + rel] = {
            "sha256": sha(values, values.dtype),
            "dtype": values.dtype.str,
            "shape": list(values.shape),
        }
        return arr

    save("be_i2.b2nd", rng.integers(-30000, 30000, (17, 9)).astype(">i2"), (5, 4), (2, 2))
    save("be_u4.b2nd", rng.integers(0, 2**32, (23,), dtype="u8").astype(">u4"), (7,), (3,))
    save("be_f4_3d.b2nd", rng.normal(size=(6, 5, 4)).astype(">f4"), (4, 3, 3), (2, 2, 2))
    save("be_c16.b2nd", (rng.normal(size=(9, 4)) + 1j * rng.normal(size=(9, 4))).astype(">c16"), (4, 4), (2, 2))
    save("be_f8_0d.b2nd", np.array(2.5, dtype=">f8"), (), ())
    save("u8_rank5.b2nd", rng.integers(0, 2**63, (3, 4, 2, 3, 5), dtype="u8"), (2, 3, 2, 2, 3), (1, 2, 1, 2, 2))
    save(
        "delta_i8.b2nd",
        np.cumsum(rng.integers(-9, 9, (31, 7)), axis=0).astype("<i8"),
        (10, 4),
        (5, 2),
        cparams=blosc2.CParams(filters=[blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE], filters_meta=[0, 0]),
    )
    attrs = save("attrs_f4.b2nd", rng.normal(size=(12, 10)).astype("<f4"), (5, 5), (5, 5))
    attrs.vlmeta["units"] = "m/s"
    attrs.vlmeta["scale"] = [1, 2.5, None]
    # Two arrays of one folder sharing the saved axis name "x" (same size)
    # and one of their own: xarray's datatree accepts them.
    for name, other in (("temp", "y"), ("pressure", "z")):
        arr = save(f"dims/{name}.b2nd", rng.normal(size=(8, 5)).astype("<f8"), (3, 5), (3, 5))
        arr.vlmeta["dimension_names"] = ["x", other]

    # Computed: saved lazy expressions over operands in the tree.
    comp = os.path.join(src, "computed")
    os.makedirs(os.path.join(comp, "ops"))
    a = rng.uniform(-1, 1, (40, 30))
    b = rng.integers(-50, 50, (40, 30)).astype("i4")
    c = rng.integers(0, 200, (30,)).astype("u2")
    opened = {}
    for name, values, chunks, blocks in (("a", a, (16, 16), (8, 8)), ("b", b, (13, 11), (5, 5)), ("c", c, (7,), (3,))):
        path = os.path.join(comp, "ops", name + ".b2nd")
        blosc2.asarray(values, urlpath=path, mode="w", chunks=chunks, blocks=blocks)
        opened[name] = blosc2.open(path)
    for name, expr in (("sum_ab", "a + b"), ("scaled_b", "b * 3 - c"), ("twice_a", "a * 2")):
        path = os.path.join(comp, name + ".b2nd")
        lazy = blosc2.lazyexpr(expr, {k: opened[k] for k in "abc" if k in expr})
        lazy.save(urlpath=path)
        values = np.asarray(blosc2.open(path, deserialize="full")[...])
        arrays["computed/" + name + ".b2nd"] = {
            "sha256": sha(values, values.dtype),
            "dtype": values.dtype.str,
            "shape": list(values.shape),
        }
    for name in "abc":
        v = {"a": a, "b": b, "c": c}[name]
        arrays[f"computed/ops/{name}.b2nd"] = {"sha256": sha(v, v.dtype), "dtype": v.dtype.str, "shape": list(v.shape)}

    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump({"arrays": arrays, "not_v3": sorted(not_v3)}, f, indent=1, sort_keys=True)
    print(f"{len(arrays)} arrays, {len(not_v3)} not v3")


if __name__ == "__main__":
    main()
