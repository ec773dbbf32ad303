#!/usr/bin/env python3
"""Read a mounted tree as a Zarr v3 hierarchy with the real readers, exactly.

    check_zarr_v3.py MNT EXPECTED_JSON

EXPECTED_JSON (scripts/gen/gen_zarr3_corpus.py writes it) names every array
folder the hierarchy must present, with the sha256 of python-blosc2's own
values. Each array's expected values are the bytes of its `data` file once
their sha256 matches (so they are python-blosc2's, bit for bit); then:

1. zarr-python 3: `zarr.open_group(MNT, mode="r")` walked to the bottom
   reaches exactly the expected arrays, and each reads exactly;
2. xarray: `xr.open_datatree(MNT, engine="zarr")` holds exactly the
   expected variables, each exact;
   then both again from the root group's consolidated metadata (issue 45):
   every node it lists has that document as its own `zarr.json` (a group's
   without its own `consolidated_metadata`), its arrays are exactly the
   expected ones, and `zarr.open_group(..., use_consolidated=True)` and
   `xr.open_datatree(..., consolidated=True)` (which fail without it) read
   each exactly;
3. tensorstore's `zarr3` driver opens each array folder and reads it exactly;
4. Dask: a `distributed.LocalCluster` of 2 worker processes computes each
   array through `dask.array.from_zarr` (exact) and reduces it (integer
   and bool sums exact, float/complex sums within 1e-9 relative, finite
   minima and maxima exact) against numpy's reduction of the expectation.

Prints one JSON line of counts per reader; exits non-zero on the first
difference (the message names the array and the reader).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np


def bits(a: Any) -> Any:
    """An array's values as native-order bytes (bit-exact, NaN payloads kept)."""
    a = np.asarray(a)
    return np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("=")).tobytes()


def same(got: Any, want: Any, reader: Any, rel: Any) -> Any:
    got = np.asarray(got)
    if got.shape != want.shape:
        raise AssertionError(f"{rel}: {reader} shape {got.shape}, expected {want.shape}")
    if got.dtype.newbyteorder("=") != want.dtype.newbyteorder("="):
        raise AssertionError(f"{rel}: {reader} dtype {got.dtype}, expected {want.dtype}")
    if bits(got) != bits(want):
        raise AssertionError(f"{rel}: {reader} values differ")


def expectations(mnt: str, expected: Any) -> Any:
    out = {}
    for rel, e in expected["arrays"].items():
        with open(os.path.join(mnt, rel, "data"), "rb") as f:
            raw = f.read()
        digest = hashlib.sha256(raw).hexdigest()
        if digest != e["sha256"]:
            raise AssertionError(f"{rel}: data is not python-blosc2's values ({digest} != {e['sha256']})")
        out[rel] = np.frombuffer(raw, dtype=np.dtype(e["dtype"])).reshape(e["shape"])
    return out


def zarr_arrays(mnt: str, **open_options: Any) -> dict[str, Any]:
    """Every array zarr-python 3 reaches walking the group at `mnt` to the bottom, by path: what
    both zarr checks (plain and consolidated) read."""
    import zarr

    root = zarr.open_group(mnt, mode="r", **open_options)
    return {path: node for path, node in root.members(max_depth=None) if isinstance(node, zarr.Array)}


def datatree_variables(mnt: str, consolidated: bool) -> Iterator[tuple[str, Any]]:
    """Each data variable of `xr.open_datatree(mnt)` (no decoding) as (path, values): what both
    xarray checks (plain and consolidated) read."""
    import xarray as xr

    tree = xr.open_datatree(mnt, engine="zarr", consolidated=consolidated, decode_cf=False, mask_and_scale=False)
    for node in tree.subtree:
        base = node.path.strip("/")
        for name, var in node.ds.data_vars.items():
            yield (f"{base}/{name}" if base else name), var.values


def check_zarr(mnt: str, want: Any) -> Any:
    found = zarr_arrays(mnt)
    missing, extra = sorted(set(want) - set(found)), sorted(set(found) - set(want))
    if missing or extra:
        raise AssertionError(
            f"zarr walk: missing {missing[:10]} ({len(missing)}), unexpected {extra[:10]} ({len(extra)})"
        )
    for rel, arr in found.items():
        same(arr[...], want[rel], "zarr", rel)
    return len(found)


def check_xarray(mnt: str, want: Any) -> Any:
    seen = set()
    for rel, values in datatree_variables(mnt, consolidated=False):
        if rel not in want:
            raise AssertionError(f"xarray: unexpected variable {rel}")
        same(values, want[rel], "xarray", rel)
        seen.add(rel)
    missing = sorted(set(want) - seen)
    if missing:
        raise AssertionError(f"xarray: missing {missing[:10]} ({len(missing)})")
    return len(seen)


EMPTY_INLINE = {"kind": "inline", "must_understand": False, "metadata": {}}


def without_consolidated(doc: Any) -> Any:
    return {k: v for k, v in doc.items() if k != "consolidated_metadata"}


def check_consolidated(mnt: str, want: Any) -> Any:
    with open(os.path.join(mnt, "zarr.json")) as f:
        root_doc = json.load(f)
    inline = root_doc.get("consolidated_metadata")
    if not inline or inline.get("kind") != "inline" or inline.get("must_understand") is not False:
        raise AssertionError(f"the root zarr.json has no inline consolidated metadata: {inline!r:.200}")
    members = inline["metadata"]
    for rel, entry in members.items():
        with open(os.path.join(mnt, rel, "zarr.json")) as f:
            own = json.load(f)
        if entry.get("node_type") == "group":
            if entry.get("consolidated_metadata") != EMPTY_INLINE or without_consolidated(
                entry
            ) != without_consolidated(own):
                raise AssertionError(f"consolidated {rel}: not its own group document")
        elif entry != own:
            raise AssertionError(f"consolidated {rel}: not its own zarr.json")
    arrays = {rel for rel, entry in members.items() if entry.get("node_type") == "array"}
    missing, extra = sorted(set(want) - arrays), sorted(arrays - set(want))
    if missing or extra:
        raise AssertionError(f"consolidated: missing {missing[:10]} ({len(missing)}), unexpected {extra[:10]}")
    found = zarr_arrays(mnt, use_consolidated=True)
    if set(found) != set(want):
        raise AssertionError("zarr (consolidated): not the expected arrays")
    for rel, arr in found.items():
        same(arr[...], want[rel], "zarr (consolidated)", rel)
    seen = set()
    for rel, values in datatree_variables(mnt, consolidated=True):
        same(values, want[rel], "xarray (consolidated)", rel)
        seen.add(rel)
    if seen != set(want):
        raise AssertionError(f"xarray (consolidated): {len(seen)} variables, expected {len(want)}")
    return len(members)


def check_tensorstore(mnt: str, want: Any) -> Any:
    import tensorstore as ts

    for rel, values in want.items():
        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": os.path.join(mnt, rel) + "/"}}
        arr = ts.open(spec, read=True).result()
        same(arr.read().result(), values, "tensorstore", rel)
    return len(want)


def check_dask(mnt: str, want: Any) -> Any:
    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        assert len(client.scheduler_info()["workers"]) == 2
        names, tasks = [], []
        for rel, values in want.items():
            arr = da.from_zarr(os.path.join(mnt, rel))
            names.append(rel)
            finite = values.dtype.kind in "biu" or (values.size and np.isfinite(values).all())
            tasks.append(
                (
                    arr,
                    arr.sum(),
                    arr.min() if finite and values.size and values.dtype.kind != "c" else None,
                    arr.max() if finite and values.size and values.dtype.kind != "c" else None,
                )
            )
        results = dask.compute(*tasks)
    for rel, (whole, total, low, high) in zip(names, results):
        values = want[rel]
        same(whole, values, "dask", rel)
        expected = values.sum()
        if values.dtype.kind in "biu":
            if total != expected:
                raise AssertionError(f"{rel}: dask sum {total}, numpy {expected}")
        elif not np.allclose(total, expected, rtol=1e-9, atol=0, equal_nan=True) and not (
            values.dtype.itemsize <= 4 and np.allclose(total, expected, rtol=1e-3, equal_nan=True)
        ):
            raise AssertionError(f"{rel}: dask sum {total}, numpy {expected}")
        if low is not None and (low != values.min() or high != values.max()):
            raise AssertionError(f"{rel}: dask min/max {low}/{high}, numpy {values.min()}/{values.max()}")
    return len(names)


def main() -> Any:
    mnt, expected_path = sys.argv[1], sys.argv[2]
    expected = json.load(open(expected_path))
    want = expectations(mnt, expected)
    counts = {"expected": len(want)}
    counts["zarr"] = check_zarr(mnt, want)
    counts["xarray"] = check_xarray(mnt, want)
    counts["consolidated"] = check_consolidated(mnt, want)
    counts["tensorstore"] = check_tensorstore(mnt, want)
    counts["dask"] = check_dask(mnt, want)
    for rel in expected.get("not_v3", []):
        if os.path.exists(os.path.join(mnt, rel, "zarr.json")):
            raise AssertionError(f"{rel}: has a zarr.json but v3 cannot describe it")
        meta = json.load(open(os.path.join(mnt, rel, "meta.json")))
        if meta.get("zarr", {}).get("v3") is not False or not meta["zarr"].get("reason"):
            raise AssertionError(f"{rel}: meta.json does not say why it is not v3: {meta.get('zarr')}")
    counts["not_v3"] = len(expected.get("not_v3", []))
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
