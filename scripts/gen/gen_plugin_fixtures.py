#!/usr/bin/env python3
"""Write small arrays with the plugin codecs 36-40 and record python-blosc2's own decode.

Usage:
    gen_plugin_fixtures.py OUTDIR             # every case whose plugin this venv imports
    gen_plugin_fixtures.py --case NAME OUTDIR # one case (run in a child process)
    gen_plugin_fixtures.py --bench OUTDIR     # the bench stack (16-bit 512x512x64, j2k lossless)
    gen_plugin_fixtures.py --bench openzl OUTDIR  # the OpenZL bench array (256 MiB float32)

The plugins are not in the test venv; they are installed from PyPI into their own venvs:

    python3 -m venv /work/venv-plugins
    /work/venv-plugins/bin/pip install blosc2==4.14.1 numpy blosc2-j2k blosc2-htj2k blosc2-openzl
    python3 -m venv /work/venv-plugins-old   # blosc2-grok and blosc2-openhtj2k write only under <= 4.1.2
    /work/venv-plugins-old/bin/pip install blosc2==4.1.2 numpy blosc2-grok blosc2-openhtj2k

Run the script with each venv's python, that venv's bin first on PATH (C-Blosc2 loads a
plugin by running `python -c "import blosc2_<name>"`); both add their cases to
OUTDIR/manifest.json.
Each case is written in a child process of its own: the Grok-based plugins keep a rate
(lossy) setting and j2k's float mode for the rest of the process.

The expected bytes are python-blosc2's decode (the JPEG 2000 rate modes and j2k's
float mode are lossy, so the numpy source is no oracle): the file is reopened with
blosc2.open, the whole array read with [...] (C order) and each chunk decompressed with
SChunk.decompress_chunk (block layout, padding included).

OUTDIR/manifest.json maps case name to:

    path          the .b2nd file, relative to OUTDIR
    size, sha256  length and sha256 of the array's C-order bytes, as python-blosc2 reads them
    chunk_sha256  sha256 of each decompressed chunk
    shape, chunkshape, blockshape, dtype
    codec         the codec's name, codec_id its id, codec_meta the meta byte
    plugin        "package version" of the plugin that wrote it; blosc2 python-blosc2's version
    lossless      whether the decode equals the source array
    notes         free text
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import subprocess
import sys
from typing import Any

import blosc2
import numpy as np

# name -> (plugin module, codec id, codec_meta, dtype, shape, chunks, data style, options)
CASES: dict[str, tuple[str, int, int, str, tuple[int, ...], tuple[int, ...], str, dict[str, Any]]] = {
    # blosc2-j2k (39): always a JP2 file.
    "j2k_gray_u2_stack": ("blosc2_j2k", 39, 0, "<u2", (3, 96, 80), (1, 96, 80), "smooth16", {}),
    "j2k_gray_u1_2d": ("blosc2_j2k", 39, 0, "|u1", (70, 50), (70, 50), "smooth8", {}),
    "j2k_rgb_u1_stack": ("blosc2_j2k", 39, 0, "|u1", (2, 48, 64, 3), (1, 48, 64, 3), "rgb8", {}),
    "j2k_rgb_u2": ("blosc2_j2k", 39, 0, "<u2", (40, 30, 3), (40, 30, 3), "rgb16", {}),
    "j2k_gray_u2_rate": ("blosc2_j2k", 39, 100, "<u2", (2, 96, 80), (1, 96, 80), "smooth16", {}),
    "j2k_rgb_u1_rate": ("blosc2_j2k", 39, 50, "|u1", (48, 64, 3), (48, 64, 3), "rgb8", {}),
    "j2k_float_u16": ("blosc2_j2k", 39, 0, "<f4", (2, 64, 48), (1, 64, 48), "float", {"float_mode": "uint16"}),
    "j2k_float_u8": ("blosc2_j2k", 39, 0, "<f4", (64, 48), (64, 48), "float", {"float_mode": "uint8"}),
    "j2k_float_const": ("blosc2_j2k", 39, 0, "<f4", (2, 16, 16), (1, 16, 16), "const", {"float_mode": "uint16"}),
    # blosc2-htj2k (40): raw HTJ2K codestreams.
    "htj2k_gray_u2_stack": ("blosc2_htj2k", 40, 0, "<u2", (3, 96, 80), (1, 96, 80), "smooth16", {}),
    "htj2k_rgb_u1": ("blosc2_htj2k", 40, 0, "|u1", (48, 64, 3), (48, 64, 3), "rgb8", {}),
    # blosc2-openzl (38): one OpenZL frame per block stream; codec_meta picks the graph.
    "openzl_zstd_i4": ("blosc2_openzl", 38, 0, "<i4", (5000,), (2000,), "ints", {}),
    "openzl_lz4_i4": ("blosc2_openzl", 38, 1, "<i4", (5000,), (2000,), "ints", {}),
    "openzl_sh_zstd_f8": ("blosc2_openzl", 38, 2, "<f8", (60, 50), (30, 50), "floats", {}),
    "openzl_sh_bd_lz4_u2": ("blosc2_openzl", 38, 7, "<u2", (3, 96, 80), (1, 96, 80), "smooth16", {}),
    "openzl_sh_bd_split_zstd_f4": ("blosc2_openzl", 38, 14, "<f4", (4000,), (1500,), "floats", {}),
    "openzl_zstd_cs_u1": ("blosc2_openzl", 38, 16, "|u1", (3000,), (3000,), "smooth8", {}),
    # blosc2-grok (37), python-blosc2 <= 4.1.2: a JP2 file by default, a raw J2K codestream on request.
    "grok_gray_u2_jp2": ("blosc2_grok", 37, 0, "<u2", (3, 96, 80), (1, 96, 80), "smooth16", {}),
    "grok_gray_u2_j2k": ("blosc2_grok", 37, 0, "<u2", (2, 96, 80), (1, 96, 80), "smooth16", {"cod_format": "J2K"}),
    "grok_rgb_u1": ("blosc2_grok", 37, 0, "|u1", (2, 48, 64, 3), (1, 48, 64, 3), "rgb8", {}),
    "grok_gray_u2_rate": ("blosc2_grok", 37, 80, "<u2", (2, 96, 80), (1, 96, 80), "smooth16", {}),
    # blosc2-openhtj2k (36) 0.1.2 writes under python-blosc2 4.1.2, but neither 4.1.2 nor
    # 4.14.1 reads its arrays back ("Error while getting the buffer", 1-image u2 and u1 RGB
    # alike), so there is no oracle for it and no case.
}

CODEC_NAMES = {36: "openhtj2k", 37: "grok", 38: "openzl", 39: "j2k", 40: "htj2k"}


def make_data(style: str, shape: tuple[int, ...], dtype: str, seed: int) -> Any:
    """Image-like values: smooth gradients plus a little noise (what these codecs are for)."""
    rng = np.random.default_rng(seed)
    if style == "const":
        return np.full(shape, 2.5, dtype)
    if style in ("smooth16", "smooth8", "ints", "floats", "float"):
        grids = np.meshgrid(*[np.linspace(0.0, 1.0, n) for n in shape], indexing="ij")
        base: Any = sum(np.sin((i + 2) * 3.1 * g) for i, g in enumerate(grids))
        noise = rng.normal(0.0, 0.05, shape)
        v = (base - base.min()) / max(float(np.ptp(base)), 1e-9) + noise
        v = np.clip(v, 0.0, 1.0)
        if style == "smooth16":
            return (v * 65535).astype(dtype)
        if style == "smooth8":
            return (v * 255).astype(dtype)
        if style == "ints":
            return (v * 1_000_000 - 300_000).astype(dtype)
        if style == "floats":
            return (v * 1e3 - 17.25).astype(dtype)
        return (v * 40.0 - 10.0).astype(dtype)
    # rgb8 / rgb16: three differently shaped channels on the last axis.
    h, w = shape[-3], shape[-2]
    y, x = np.meshgrid(np.linspace(0, 1, h), np.linspace(0, 1, w), indexing="ij")
    top = 255 if style == "rgb8" else 65535
    chans = [x, y, (np.sin(7 * x) * np.cos(5 * y) + 1) / 2]
    img = np.stack([np.clip(c + rng.normal(0, 0.03, c.shape), 0, 1) * top for c in chans], axis=-1)
    out = np.broadcast_to(img, shape).copy()
    if len(shape) == 4:
        out += np.arange(shape[0]).reshape(-1, 1, 1, 1) * 3
    return np.clip(out, 0, top).astype(dtype)


def sha256(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def configure_plugin(module: Any, name: str, options: dict[str, Any]) -> None:
    """Set the plugin up before its first use (float mode, codestream format)."""
    if "float_mode" in options:
        module.configure(float_mode=options["float_mode"])
    if options.get("cod_format") == "J2K":
        module.set_params_defaults(cod_format=module.GrkFileFmt.GRK_FMT_J2K)
    if hasattr(module, "register_codec"):
        module.register_codec()


def write_case(name: str, outdir: str) -> dict[str, Any]:
    modname, codec_id, meta, dtype, shape, chunks, style, options = CASES[name]
    module = importlib.import_module(modname)
    configure_plugin(module, name, options)
    data = make_data(style, shape, dtype, seed=sum(map(ord, name)))
    path = os.path.join(outdir, name + ".b2nd")
    if os.path.exists(path):
        os.remove(path)
    cparams = {
        "codec": codec_id,
        "codec_meta": meta,
        "filters": [],
        "filters_meta": [],
        "splitmode": blosc2.SplitMode.NEVER_SPLIT,
        "nthreads": 1,
    }
    blosc2.asarray(data, chunks=chunks, blocks=chunks, cparams=cparams, urlpath=path, mode="w")
    arr = blosc2.open(path)
    got = arr[...]
    whole = np.ascontiguousarray(got).tobytes()
    chunk_shas = [sha256(arr.schunk.decompress_chunk(i)) for i in range(arr.schunk.nchunks)]
    return {
        "path": name + ".b2nd",
        "size": len(whole),
        "sha256": sha256(whole),
        "chunk_sha256": chunk_shas,
        "shape": list(shape),
        "chunkshape": list(chunks),
        "blockshape": list(arr.blocks),
        "dtype": np.dtype(dtype).str,
        "codec": CODEC_NAMES[codec_id],
        "codec_id": codec_id,
        "codec_meta": meta,
        "plugin": f"{modname.replace('_', '-')} {getattr(module, '__version__', '?')}",
        "blosc2": blosc2.__version__,
        "lossless": bool(np.array_equal(got, data)),
        "notes": f"{style} data; options {options}" if options else f"{style} data",
    }


def run_all(outdir: str) -> None:
    os.makedirs(outdir, exist_ok=True)
    manifest_path = os.path.join(outdir, "manifest.json")
    manifest: dict[str, Any] = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    # Lossy cases last within a plugin (a rate sticks in the Grok plugins), though each
    # case runs in its own child anyway.
    for name, case in CASES.items():
        try:
            importlib.import_module(case[0])
        except ImportError:
            continue
        child = subprocess.run(
            [sys.executable, __file__, "--case", name, outdir], capture_output=True, text=True, check=False
        )
        if child.returncode != 0:
            print(f"{name}: failed\n{child.stderr[-2000:]}", file=sys.stderr)
            continue
        manifest[name] = json.loads(child.stdout.strip().splitlines()[-1])
        print(f"{name}: {manifest[name]['size']} bytes, lossless {manifest[name]['lossless']}")
    with open(manifest_path, "w") as f:
        json.dump(dict(sorted(manifest.items())), f, indent=1)
        f.write("\n")


def write_bench(outdir: str) -> None:
    """A 16-bit 512x512x64 stack (64 images of 512x512), one image per chunk, j2k lossless."""
    blosc2_j2k = importlib.import_module("blosc2_j2k")

    blosc2_j2k.register_codec()
    os.makedirs(outdir, exist_ok=True)
    data = make_data("smooth16", (64, 512, 512), "<u2", seed=7)
    cparams = {
        "codec": 39,
        "codec_meta": 0,
        "filters": [],
        "filters_meta": [],
        "splitmode": blosc2.SplitMode.NEVER_SPLIT,
    }
    path = os.path.join(outdir, "j2k_u2_512x512x64.b2nd")
    blosc2.asarray(data, chunks=(1, 512, 512), blocks=(1, 512, 512), cparams=cparams, urlpath=path, mode="w")
    print(path)


def write_bench_openzl(outdir: str) -> None:
    """A 256 MiB float32 volume (256x512x512), python-blosc2's default chunks and blocks,
    blosc2-openzl's shuffle + Zstd graph (codec_meta 2), no Blosc2 filters."""
    importlib.import_module("blosc2_openzl")
    os.makedirs(outdir, exist_ok=True)
    data = make_data("floats", (256, 512, 512), "<f4", seed=11)
    cparams = {
        "codec": 38,
        "codec_meta": 2,
        "filters": [],
        "filters_meta": [],
        "splitmode": blosc2.SplitMode.NEVER_SPLIT,
    }
    path = os.path.join(outdir, "openzl_f4_256x512x512.b2nd")
    arr = blosc2.asarray(data, cparams=cparams, urlpath=path, mode="w")
    print(path, arr.chunks, arr.blocks, arr.schunk.cratio)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case")
    ap.add_argument("--bench", nargs="?", const="j2k", choices=["j2k", "openzl"])
    ap.add_argument("outdir")
    args = ap.parse_args()
    if args.bench == "openzl":
        write_bench_openzl(args.outdir)
    elif args.bench:
        write_bench(args.outdir)
    elif args.case:
        print(json.dumps(write_case(args.case, args.outdir)))
    else:
        run_all(args.outdir)


if __name__ == "__main__":
    main()
