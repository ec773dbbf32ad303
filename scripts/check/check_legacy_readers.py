#!/usr/bin/env python3
"""Open every mounted fixture the way legacy tools do and compare with the manifest.

    check_legacy_readers.py MOUNT MANIFEST

For each array of MANIFEST (scripts/gen/gen_fixtures.py's, paths relative to the
mount), this script:
- decides on its own, from the manifest's dtype and shape, which sidecar
  headers must exist (data.nhdr, data.mhd, data.hdr) and fails if the mount
  offers a different set;
- reads each header's array with the real reader: pynrrd
  (`nrrd.read(path, index_order="C")`), SimpleITK (`ReadImage` +
  `GetArrayFromImage`) and rasterio (`rasterio.open(".../data")`, which must
  pick the ENVI driver), and compares the values' C-order bytes with the
  manifest's sha256, and the spacing and origin with the vlmeta's;
- reads data.txt of every string or record array back (each value a quoted
  literal) and compares the rebuilt bytes with the manifest's sha256.

Prints one JSON object: counts per check and the list of failures.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import sys
import warnings
from typing import Any

import numpy as np

NRRD_KINDS = {"i", "u", "b"}
ENVI_CODES = {"u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8", "c8", "c16"}
SPACING_KEYS = ["spacing", "voxel_size", "pixel_spacing", "element_spacing"]
ORIGIN_KEYS = ["origin", "offset", "space_origin"]
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\S+')


def sha(b: Any) -> Any:
    return hashlib.sha256(b).hexdigest()


def expected_headers(dtype: Any, shape: Any) -> Any:
    """The headers a plain-number array of this dtype and shape must have."""
    if dtype.names or dtype.subdtype or not shape or 0 in shape:
        return set()
    kind, size = dtype.kind, dtype.itemsize
    out = set()
    if kind in NRRD_KINDS or (kind == "f" and size in (4, 8)):
        out.add("data.nhdr")
        # MetaImage: images of 2 to 4 dimensions (no vlmeta channel axis here).
        if len(shape) in (2, 3, 4):
            out.add("data.mhd")
    if len(shape) in (2, 3) and f"{kind}{size}" in ENVI_CODES:
        out.add("data.hdr")
    return out


def placement(entry: Any, rank: Any) -> Any:
    """(spacing, origin) fastest axis first, as the vlmeta gives them (unit / zero otherwise)."""
    vl = entry.get("vlmeta") or {}

    def pick(keys: Any, ok: Any) -> Any:
        for k in keys:
            v = vl.get(k)
            if v is not None:
                if isinstance(v, list) and len(v) == rank and all(isinstance(x, (int, float)) and ok(x) for x in v):
                    return [float(x) for x in reversed(v)]
                return None
        return None

    spacing = pick(SPACING_KEYS, lambda x: x > 0) or [1.0] * rank
    origin = pick(ORIGIN_KEYS, lambda x: True) or [0.0] * rank
    return spacing, origin


def same_bytes(values: Any, dtype: Any, entry: Any) -> Any:
    arr = np.ascontiguousarray(np.asarray(values).astype(dtype))
    return sha(arr.tobytes()) == entry["sha256"]


def check_nrrd(d: Any, dtype: Any, shape: Any, entry: Any) -> None:
    import nrrd

    data, header = nrrd.read(os.path.join(d, "data.nhdr"), index_order="C")
    assert list(data.shape) == shape, f"shape {data.shape}"
    assert same_bytes(data, dtype, entry), "values differ"
    spacing, origin = placement(entry, len(shape))
    if "space directions" in header:
        got = [float(np.asarray(v)[i]) for i, v in enumerate(header["space directions"])]
        assert got == spacing, f"space directions {got} vs {spacing}"
        assert [float(x) for x in header["space origin"]] == origin, f"space origin {header['space origin']}"
    else:
        assert [float(x) for x in header["spacings"]] == spacing and origin == [0.0] * len(shape), header


def check_metaimage(d: Any, dtype: Any, shape: Any, entry: Any) -> None:
    import SimpleITK as sitk

    img = sitk.ReadImage(os.path.join(d, "data.mhd"))
    data = sitk.GetArrayFromImage(img)
    assert list(data.shape) == shape, f"shape {data.shape}"
    assert same_bytes(data, dtype, entry), "values differ"
    spacing, origin = placement(entry, len(shape))
    assert list(img.GetSpacing()) == spacing, f"spacing {img.GetSpacing()} vs {spacing}"
    assert list(img.GetOrigin()) == origin, f"origin {img.GetOrigin()} vs {origin}"


def check_envi(d: Any, dtype: Any, shape: Any, entry: Any) -> None:
    import rasterio

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rasterio.open(os.path.join(d, "data")) as ds:
            assert ds.driver == "ENVI", f"driver {ds.driver}"
            data = ds.read()
    if len(shape) == 2:
        data = data[0]
    assert list(data.shape) == shape, f"shape {data.shape}"
    assert same_bytes(data, dtype, entry), "values differ"


def text_value(token: Any, dt: Any) -> Any:
    if dt.kind == "S" or dt.kind == "V":
        return ast.literal_eval("b" + token)
    if dt.kind == "U":
        return ast.literal_eval(token)
    if dt.kind == "b":
        return token == "1"
    if dt.kind == "c":
        return complex(token)
    if dt.kind == "f":
        return float(token)
    return int(token)


def check_text(d: Any, dtype: Any, shape: Any, entry: Any) -> None:
    with open(os.path.join(d, "data.txt"), encoding="utf-8") as f:
        tokens = TOKEN.findall(f.read())
    fields = [dtype[n] for n in dtype.names] if dtype.names else [dtype]
    assert all(not f.subdtype for f in fields), "subarray fields are not checked here"
    n = int(np.prod(shape, dtype=np.int64))
    assert len(tokens) == n * len(fields), f"{len(tokens)} tokens for {n} items of {len(fields)} fields"
    values = [text_value(t, fields[i % len(fields)]) for i, t in enumerate(tokens)]
    if dtype.names:
        items = [tuple(values[i : i + len(fields)]) for i in range(0, len(values), len(fields))]
    else:
        items = values
    arr = np.array(items, dtype=dtype).reshape(shape)
    assert sha(arr.tobytes()) == entry["sha256"], "values differ"


def main() -> None:
    mount, manifest_path = sys.argv[1], sys.argv[2]
    with open(manifest_path) as f:
        manifest = json.load(f)
    counts = {"arrays": 0, "data.nhdr": 0, "data.mhd": 0, "data.hdr": 0, "data.txt strings": 0, "placed": 0}
    failures = []
    checks = {"data.nhdr": check_nrrd, "data.mhd": check_metaimage, "data.hdr": check_envi}
    for name, entry in manifest.items():
        if entry.get("kind") not in ("b2nd", "caterva") or entry.get("dtype") is None:
            continue
        d = os.path.join(mount, entry["path"])
        try:
            dtype = np.dtype(ast.literal_eval(entry["dtype"]) if entry["dtype"].startswith("[") else entry["dtype"])
        except (TypeError, ValueError, SyntaxError):
            continue
        shape = entry["shape"]
        counts["arrays"] += 1
        want = expected_headers(dtype, shape)
        have = {h for h in checks if os.path.exists(os.path.join(d, h))}
        if want != have:
            failures.append(f"{name}: headers {sorted(have)}, expected {sorted(want)}")
        for header in sorted(want & have):
            try:
                checks[header](d, dtype, shape, entry)
                counts[header] += 1
            except Exception as e:  # noqa: BLE001 - every reader's own error is the report
                failures.append(f"{name}: {header}: {type(e).__name__}: {e}")
        if want and placement(entry, len(shape)) != ([1.0] * len(shape), [0.0] * len(shape)):
            counts["placed"] += 1
        has_strings = any(dtype[n].kind in "SUV" for n in (dtype.names or [])) or dtype.kind in "SU"
        if has_strings and not any(dtype[n].subdtype for n in (dtype.names or [])):
            try:
                check_text(d, dtype, shape, entry)
                counts["data.txt strings"] += 1
            except Exception as e:  # noqa: BLE001
                failures.append(f"{name}: data.txt: {type(e).__name__}: {e}")
    print(json.dumps({"counts": counts, "failures": failures}))


if __name__ == "__main__":
    main()
