#!/usr/bin/env python3
"""Open every array of a mounted nnU-Net tree the way medical viewers do, and compare.

    check_nnunet.py MOUNT MANIFEST [SUFFIX]

SUFFIX follows each array's name to make its folder of views (`.d` with `--originals`).

MANIFEST is scripts/gen/gen_nnunet.py's (paths relative to the mount, the geometry the
plans give each array, the sha256 of its values). For each array, through SimpleITK (the
ITK that 3D Slicer and ITK-SNAP are built on):
- `data.nhdr` is an image of the spatial axes only, with as many components as the array
  has channels, the plans' spacing (ITK order: fastest axis first), and exact values;
- `data.mhd` likewise when the channels can be MetaImage components (one channel, or none);
  an array of several channels first is a 4-D image whose last dimension is the channel
  (spacing 1), with exact values;
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


def check_nrrd(d: str, entry: Any) -> None:
    img = sitk.ReadImage(os.path.join(d, "data.nhdr"))
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


def check_metaimage(d: str, entry: Any) -> None:
    img = sitk.ReadImage(os.path.join(d, "data.mhd"))
    shape, axis = entry["shape"], entry["channel_axis"]
    arr = sitk.GetArrayFromImage(img)
    if axis == 0 and shape[0] > 1:
        assert img.GetDimension() == 4, f"dimension {img.GetDimension()}"
        assert list(img.GetSize()) == shape[::-1], f"size {img.GetSize()}"
        assert list(img.GetSpacing()) == [*entry["spacing"][::-1], 1.0], f"spacing {img.GetSpacing()}"
    else:
        spatial = shape[1:] if axis == 0 else shape
        assert img.GetDimension() == 3, f"dimension {img.GetDimension()}"
        assert list(img.GetSize()) == spatial[::-1], f"size {img.GetSize()}"
        assert img.GetNumberOfComponentsPerPixel() == 1
        assert list(img.GetSpacing()) == entry["spacing"][::-1], f"spacing {img.GetSpacing()}"
        arr = arr.reshape(shape)
    assert sha(arr.astype(entry["dtype"])) == entry["sha256"], "values differ"


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
