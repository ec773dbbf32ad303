#!/usr/bin/env python3
"""Write a small nnU-Net v2 dataset tree with nnU-Net 2.8.1's own writers, for blosc2fs's tests.

    gen_nnunet.py OUTDIR

Two datasets, as `nnUNetv2_plan_and_preprocess` and a cascade's training leave them:

    OUTDIR/nnUNet_preprocessed/Dataset001_MR/   2-channel MR (T2, ADC), 3 labels
    OUTDIR/nnUNet_preprocessed/Dataset002_CT/   1-channel CT, 2 labels
        dataset.json  nnUNetPlans.json  dataset_fingerprint.json  splits_final.json
        gt_segmentations/CASE.nii.gz                      (SimpleITK, as nnU-Net copies them)
        nnUNetPlans_3d_fullres/CASE.b2nd CASE_seg.b2nd CASE.pkl   (3d_fullres; 3d_cascade_fullres
        nnUNetPlans_3d_lowres/...                                   inherits its folder)
        nnUNetPlans_2d/...                                         (2d: a 2-entry spacing)
    OUTDIR/nnUNet_results/DatasetX/nnUNetTrainer__nnUNetPlans__3d_lowres/
        plans.json  dataset.json  predicted_next_stage/3d_cascade_fullres/CASE.b2nd

Every case is written by `nnUNetDatasetBlosc2.save_case` (chunks and blocks from nnU-Net's
`comp_blosc2_params` for the configuration's patch size, as its preprocessor passes them),
every next-stage segmentation by `nnUNetDatasetBlosc2.save_seg` (as `resample_and_save`
calls it). The values are synthetic (the resampling itself needs torch, which is not
installed), the layout, dtypes, plans keys and file names are nnU-Net's.

OUTDIR/manifest.json lists every array: its path, shape, dtype, the sha256 of its C-order
bytes (from the numpy array handed to nnU-Net, never read back), and the geometry the
plans give it: channel axis (0 or null) and spacing in array axis order, as the
configuration's `spacing` says (2d: the slice axis at 1, nnU-Net keeping each case's own).
Deterministic; about 3 MB.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

import numpy as np
import SimpleITK as sitk
from nnunetv2.training.dataloading.nnunet_dataset import comp_blosc2_params, nnUNetDatasetBlosc2

PLANS = "nnUNetPlans"
TRAINER = "nnUNetTrainer"


def sha(a: Any) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def configurations(fullres: list[float], lowres: list[float]) -> dict[str, Any]:
    """The configurations as nnU-Net's ExperimentPlanner writes them (the keys the loaders read)."""

    def conf(ident: str, spacing: list[float], patch: list[int], batch: int) -> dict[str, Any]:
        return {
            "data_identifier": f"{PLANS}_{ident}",
            "preprocessor_name": "DefaultPreprocessor",
            "batch_size": batch,
            "patch_size": patch,
            "median_image_size_in_voxels": patch,
            "spacing": spacing,
            "normalization_schemes": ["ZScoreNormalization"],
            "use_mask_for_norm": [False],
            "resampling_fn_data": "resample_data_or_seg_to_shape",
            "resampling_fn_seg": "resample_data_or_seg_to_shape",
            "resampling_fn_data_kwargs": {"is_seg": False, "order": 3, "order_z": 0, "force_separate_z": None},
            "resampling_fn_seg_kwargs": {"is_seg": True, "order": 1, "order_z": 0, "force_separate_z": None},
            "resampling_fn_probabilities": "resample_data_or_seg_to_shape",
            "resampling_fn_probabilities_kwargs": {
                "is_seg": False,
                "order": 1,
                "order_z": 0,
                "force_separate_z": None,
            },
            "batch_dice": True,
        }

    return {
        "2d": conf("2d", fullres[1:], [40, 48], 12),
        "3d_lowres": {**conf("3d_lowres", lowres, [8, 20, 24], 2), "next_stage": "3d_cascade_fullres"},
        "3d_fullres": conf("3d_fullres", fullres, [16, 40, 48], 2),
        "3d_cascade_fullres": {"inherits_from": "3d_fullres", "previous_stage": "3d_lowres"},
    }


def write_json(path: str, doc: Any) -> None:
    with open(path, "w") as f:
        json.dump(doc, f, indent=4)


def volume(rng: Any, channels: int, shape: tuple[int, ...]) -> Any:
    """Smooth z-scored intensities per channel, as a preprocessed case holds (float32)."""
    grids = np.meshgrid(*[np.linspace(-1, 1, n) for n in shape], indexing="ij")
    r = np.sqrt(sum(g * g for g in grids))
    out = [np.cos(3 * r * (c + 1)) + 0.1 * rng.standard_normal(shape) for c in range(channels)]
    return np.stack(out).astype(np.float32)


def labels(shape: tuple[int, ...], n: int) -> Any:
    """A (1, x, y, z) segmentation: nested shells 1..n-1 inside, 0 around, -1 outside the body."""
    grids = np.meshgrid(*[np.linspace(-1, 1, s) for s in shape], indexing="ij")
    r = np.sqrt(sum(g * g for g in grids))
    seg = np.zeros(shape, dtype=np.int8)
    for k in range(1, n):
        seg[r < 0.8 * (n - k) / n] = k
    seg[r > 1.4] = -1
    return seg[None]


def dataset(out: str, ds_id: int, name: str, channels: list[str], n_labels: int, spacing: dict[str, Any]) -> Any:
    manifest = []
    rng = np.random.default_rng(ds_id)
    full, low = spacing["3d_fullres"], spacing["3d_lowres"]
    confs = configurations(full, low)
    ds_name = f"Dataset{ds_id:03d}_{name}"
    pre = os.path.join(out, "nnUNet_preprocessed", ds_name)
    os.makedirs(os.path.join(pre, "gt_segmentations"), exist_ok=True)
    dataset_json = {
        "channel_names": {str(i): c for i, c in enumerate(channels)},
        "labels": {"background": 0, **{f"label{k}": k for k in range(1, n_labels)}},
        "numTraining": 2,
        "file_ending": ".nii.gz",
    }
    plans = {
        "dataset_name": ds_name,
        "plans_name": PLANS,
        "original_median_spacing_after_transp": full,
        "original_median_shape_after_transp": [16, 40, 48],
        "image_reader_writer": "SimpleITKIO",
        "transpose_forward": [0, 1, 2],
        "transpose_backward": [0, 1, 2],
        "configurations": confs,
        "experiment_planner_used": "ExperimentPlanner",
        "label_manager": "LabelManager",
        "foreground_intensity_properties_per_channel": {
            str(i): {"mean": 0.0, "median": 0.0, "std": 1.0, "min": -4.0, "max": 4.0} for i in range(len(channels))
        },
    }
    write_json(os.path.join(pre, "dataset.json"), dataset_json)
    write_json(os.path.join(pre, f"{PLANS}.json"), plans)
    write_json(os.path.join(pre, "dataset_fingerprint.json"), {"spacings": [full, full], "shapes_after_crop": []})
    cases = [f"{name.lower()}_{i:03d}" for i in range(2)]
    write_json(os.path.join(pre, "splits_final.json"), [{"train": cases[:1], "val": cases[1:]}])
    shapes = {"3d_fullres": (16, 40, 48), "3d_lowres": (8, 20, 24), "2d": (16, 40, 48)}
    for case in cases:
        for conf, shape in shapes.items():
            folder = os.path.join(pre, confs[conf]["data_identifier"])
            os.makedirs(folder, exist_ok=True)
            data = volume(rng, len(channels), shape)
            seg = labels(shape, n_labels)
            patch = confs[conf]["patch_size"]
            blocks, chunks = comp_blosc2_params(data.shape, patch, data.itemsize)
            blocks_seg, chunks_seg = comp_blosc2_params(seg.shape, patch, seg.itemsize)
            props = {"spacing": full, "shape_before_cropping": shape, "class_locations": {}}
            nnUNetDatasetBlosc2.save_case(
                data, seg, props, os.path.join(folder, case), chunks, blocks, chunks_seg, blocks_seg
            )
            # 3d spacing as the configuration gives it; 2d: the slice axis is each case's own.
            geo = confs[conf]["spacing"] if len(confs[conf]["spacing"]) == 3 else [1.0, *confs[conf]["spacing"]]
            rel = os.path.relpath(folder, out)
            for arr, suffix in ((data, ""), (seg, "_seg")):
                manifest.append(
                    {
                        "path": f"{rel}/{case}{suffix}.b2nd",
                        "shape": list(arr.shape),
                        "dtype": arr.dtype.str,
                        "sha256": sha(arr),
                        "channel_axis": 0,
                        "spacing": geo,
                    }
                )
        sitk.WriteImage(
            sitk.GetImageFromArray(labels((16, 40, 48), n_labels)[0].clip(0).astype(np.uint8)),
            os.path.join(pre, "gt_segmentations", case + ".nii.gz"),
        )
    # A cascade: 3d_lowres's trainer writes its predictions for 3d_cascade_fullres at that
    # configuration's shape (3 axes, uint8), with the plans it trained on beside them.
    results = os.path.join(out, "nnUNet_results", ds_name, f"{TRAINER}__{PLANS}__3d_lowres")
    nxt = os.path.join(results, "predicted_next_stage", "3d_cascade_fullres")
    os.makedirs(nxt, exist_ok=True)
    write_json(os.path.join(results, "plans.json"), plans)
    write_json(os.path.join(results, "dataset.json"), dataset_json)
    for case in cases:
        seg = labels(shapes["3d_fullres"], n_labels)[0].clip(0).astype(np.uint8)
        blocks, chunks = comp_blosc2_params((1, *seg.shape), confs["3d_fullres"]["patch_size"], 1)
        nnUNetDatasetBlosc2.save_seg(
            seg,
            os.path.join(nxt, case),
            chunks_seg=[int(i) for i in chunks[1:]],
            blocks_seg=[int(i) for i in blocks[1:]],
        )
        manifest.append(
            {
                "path": f"{os.path.relpath(nxt, out)}/{case}.b2nd",
                "shape": list(seg.shape),
                "dtype": seg.dtype.str,
                "sha256": sha(seg),
                "channel_axis": None,
                "spacing": full,
            }
        )
    return manifest


def main() -> None:
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    manifest = dataset(
        out, 1, "MR", ["T2", "ADC"], 3, {"3d_fullres": [3.0, 0.625, 0.625], "3d_lowres": [3.0, 1.25, 1.25]}
    )
    manifest += dataset(out, 2, "CT", ["CT"], 2, {"3d_fullres": [2.5, 0.8, 0.75], "3d_lowres": [5.0, 1.6, 1.5]})
    write_json(os.path.join(out, "manifest.json"), manifest)


if __name__ == "__main__":
    main()
