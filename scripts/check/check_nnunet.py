#!/usr/bin/env python3
"""Open every array of a mounted nnU-Net tree the way medical viewers do, and compare.

    check_nnunet.py MOUNT MANIFEST [SUFFIX]

SUFFIX follows each array's name to make its folder of views (`.d` with `--originals`).

MANIFEST is scripts/gen/gen_nnunet.py's (paths relative to the mount, the geometry the
plans give each array, the sha256 of its values). For each array, through SimpleITK (the
ITK that 3D Slicer and ITK-SNAP are built on):
- `data.nhdr` is an image of the spatial axes only, with as many components as the array
  has channels, the plans' spacing (ITK order: fastest axis first), and exact values;
- `data.mhd` likewise; for several channels first it points at `data.interleaved` (the
  channel axis moved last, as MetaImage's components lie), whose bytes are checked against
  numpy's `moveaxis` of the values;
- `zarr.json`'s attributes carry the same spacing and channel axis.

Prints one JSON object: counts per check and the list of failures.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

import numpy as np
import SimpleITK as sitk


def sha(a: Any) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def channels_first(arr: Any, spatial: int) -> Any:
    """SimpleITK's (z, y, x[, C]) as the array's (C, z, y, x)."""
    if arr.ndim == spatial:
        return arr[None]
    return np.moveaxis(arr, -1, 0)


def check_image(path: str, entry: Any) -> None:
    """`path` read by SimpleITK: a 3-D image of the spatial axes with one component per
    channel, the plans' spacing, and the manifest's values once the components are put back
    as the first axis."""
    img = sitk.ReadImage(path)
    shape, axis = entry["shape"], entry["channel_axis"]
    spatial = shape[1:] if axis == 0 else shape
    want_components = shape[0] if axis == 0 else 1
    assert img.GetDimension() == 3, f"dimension {img.GetDimension()}"
    assert list(img.GetSize()) == spatial[::-1], f"size {img.GetSize()}"
    assert img.GetNumberOfComponentsPerPixel() == want_components, f"components {img.GetNumberOfComponentsPerPixel()}"
    assert list(img.GetSpacing()) == entry["spacing"][::-1], f"spacing {img.GetSpacing()}"
    arr = sitk.GetArrayFromImage(img)
    if axis == 0:
        arr = channels_first(arr, 3)
    assert sha(arr.astype(entry["dtype"])) == entry["sha256"], "values differ"


def check_nrrd(d: str, entry: Any) -> None:
    check_image(os.path.join(d, "data.nhdr"), entry)


def check_metaimage(d: str, entry: Any) -> None:
    """As data.nhdr; several channels first are read from data.interleaved (the channel
    axis moved last, as MetaImage's components lie), one channel or none from data."""
    check_image(os.path.join(d, "data.mhd"), entry)
    with open(os.path.join(d, "data.mhd")) as f:
        header = f.read()
    shape, axis = entry["shape"], entry["channel_axis"]
    interleaved = axis == 0 and shape[0] > 1
    want = "data.interleaved" if interleaved else "data"
    assert header.endswith(f"ElementDataFile = {want}\n"), f"header {header!r}"
    assert os.path.exists(os.path.join(d, "data.interleaved")) == interleaved, "data.interleaved"
    if interleaved:
        # The same bytes as numpy's moveaxis(values, 0, -1), read as a plain file too.
        size = os.path.getsize(os.path.join(d, "data"))
        assert os.path.getsize(os.path.join(d, "data.interleaved")) == size, "size"
        values = np.fromfile(os.path.join(d, "data"), dtype=entry["dtype"]).reshape(shape)
        assert sha(values) == entry["sha256"], "data differs"
        with open(os.path.join(d, "data.interleaved"), "rb") as f:
            got = f.read()
        assert got == np.ascontiguousarray(np.moveaxis(values, 0, -1)).tobytes(), "interleaved bytes"


def check_zarr(d: str, entry: Any) -> None:
    with open(os.path.join(d, "zarr.json")) as f:
        attrs = json.load(f)["attributes"]
    assert attrs.get("spacing") == entry["spacing"], f"attributes {attrs}"
    assert attrs.get("channel_axis") == entry["channel_axis"], f"attributes {attrs}"


def main() -> None:
    mount, manifest_path = sys.argv[1], sys.argv[2]
    suffix = sys.argv[3] if len(sys.argv) > 3 else ""
    with open(manifest_path) as f:
        manifest = json.load(f)
    checks = {"data.nhdr": check_nrrd, "data.mhd": check_metaimage, "zarr.json": check_zarr}
    counts = {"arrays": 0, **{k: 0 for k in checks}}
    failures = []
    for entry in manifest:
        counts["arrays"] += 1
        d = os.path.join(mount, entry["path"] + suffix)
        for name, check in checks.items():
            try:
                check(d, entry)
                counts[name] += 1
            except Exception as e:  # noqa: BLE001 - every reader's own error is the report
                failures.append(f"{entry['path']}: {name}: {type(e).__name__}: {e}")
    print(json.dumps({"counts": counts, "failures": failures}))


if __name__ == "__main__":
    main()
