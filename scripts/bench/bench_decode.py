#!/usr/bin/env python3
"""Single-thread decode throughput: blosc2fs's reader library beside C-Blosc2.

Writes one file per configuration (zstd+shuffle, lz4+shuffle, blosclz+shuffle,
zstd+bitshuffle, lz4+bitshuffle, NDLZ 4x4 / 8x8 on shuffled split blocks, and ZFP in its three modes) from the perf corpus' kind of data (smooth
float64 field plus noise rounded to 2 decimals), then alternates A B A B:
C-Blosc2 through python-blosc2 with nthreads=1 decompressing every chunk
(`SChunk.decompress_chunk`), and `examples/decode_bench` decoding every chunk
on one thread. Prints GB/s and the ratio per configuration.

    .venv/bin/python scripts/bench/bench_decode.py [--mib 256] [--rounds 3] [--only ndlz4+shuffle zfp_acc ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

import blosc2
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIGS: list[tuple[Any, ...]] = [
    ("zstd+shuffle", blosc2.Codec.ZSTD, blosc2.Filter.SHUFFLE, 0.9),
    ("lz4+shuffle", blosc2.Codec.LZ4, blosc2.Filter.SHUFFLE, 0.8),
    ("blosclz+shuffle", blosc2.Codec.BLOSCLZ, blosc2.Filter.SHUFFLE, 0.8),
    ("zstd+bitshuffle", blosc2.Codec.ZSTD, blosc2.Filter.BITSHUFFLE, 0.8),
    ("lz4+bitshuffle", blosc2.Codec.LZ4, blosc2.Filter.BITSHUFFLE, 0.8),
    # plugin codecs: (name, codec, filter, target, extra cparams)
    (
        "ndlz4+shuffle",
        blosc2.Codec.NDLZ,
        blosc2.Filter.SHUFFLE,
        0.8,
        {"codec_meta": 4, "splitmode": blosc2.SplitMode.ALWAYS_SPLIT},
    ),
    (
        "ndlz8+shuffle",
        blosc2.Codec.NDLZ,
        blosc2.Filter.SHUFFLE,
        0.8,
        {"codec_meta": 8, "splitmode": blosc2.SplitMode.ALWAYS_SPLIT},
    ),
    # ZFP (lossy) without shuffle, as it is meant to be used: 10^-2 accuracy, 20 + 7 bit planes, 25 % rate
    ("zfp_acc", blosc2.Codec.ZFP_ACC, blosc2.Filter.NOFILTER, 0.8),
    ("zfp_prec", blosc2.Codec.ZFP_PREC, blosc2.Filter.NOFILTER, 0.8),
    ("zfp_rate", blosc2.Codec.ZFP_RATE, blosc2.Filter.NOFILTER, 0.8),
]
CODEC_META = {"zfp_acc": 254, "zfp_prec": 20, "zfp_rate": 25}
# python-blosc2's default blockshape for this field has dimensions below 4, which ZFP cannot write
ZFP_LAYOUT = {"chunks": (128, 8192), "blocks": (32, 512)}


def field(mib: Any) -> Any:
    cols = 8192
    rows = max(1, mib * (1 << 20) // (cols * 8))
    y = np.linspace(0, 8 * np.pi, rows)[:, None]
    x = np.linspace(0, 6 * np.pi, cols)[None, :]
    rng = np.random.default_rng(0)
    data = 20 * np.sin(y) * np.cos(x) + rng.normal(scale=0.5, size=(rows, cols))
    return np.round(data, 2)


def c_blosc2_gbps(path: str, rounds: Any) -> Any:
    blosc2.set_nthreads(1)
    array = blosc2.open(path)  # keep the array alive: its schunk does not own the frame
    schunk = array.schunk
    best = float("inf")
    total = 0
    for _ in range(rounds):
        t = time.perf_counter()
        total = 0
        for i in range(schunk.nchunks):
            total += len(schunk.decompress_chunk(i))
        best = min(best, time.perf_counter() - t)
    return total / best / 1e9


def rust_gbps(binary: Any, path: str, rounds: Any) -> Any:
    out = subprocess.run([binary, "--repeats", str(rounds), path], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["gbps"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=256, help="size of each file's data in MiB")
    ap.add_argument("--rounds", type=int, default=3, help="A B alternations (each takes the best of 3 passes)")
    ap.add_argument("--workdir", default="/tmp/blosc2fs-bench-decode")
    ap.add_argument("--only", nargs="*", help="configurations to run (default: all)")
    ap.add_argument("--binary", help="a built examples/decode_bench (default: build it into target/release)")
    args = ap.parse_args()
    configs = [c for c in CONFIGS if not args.only or c[0] in args.only]
    binary = args.binary
    if binary is None:
        subprocess.run(["cargo", "build", "--release", "-j2", "--example", "decode_bench"], cwd=REPO, check=True)
        binary = os.path.join(REPO, "target", "release", "examples", "decode_bench")
    os.makedirs(args.workdir, exist_ok=True)
    data = None
    paths = {}
    for name, codec, filt, _, *extra in configs:
        path = os.path.join(args.workdir, f"{name}-{args.mib}.b2nd")
        if not os.path.exists(path):
            if data is None:
                data = field(args.mib)
            cparams: dict[str, Any] = {
                "codec": codec,
                "clevel": 5,
                "filters": [filt],
                "filters_meta": [0],
                "nthreads": 2,
                "codec_meta": CODEC_META.get(name, 0),
            }
            cparams.update(extra[0] if extra else {})
            layout = ZFP_LAYOUT if name.startswith("zfp") else {}
            blosc2.asarray(data, urlpath=path, mode="w", cparams=cparams, **layout)
        paths[name] = path
    results = {}
    for name, _, _, target, *_ in configs:
        c_runs, r_runs = [], []
        for _ in range(args.rounds):
            c_runs.append(c_blosc2_gbps(paths[name], 3))
            r_runs.append(rust_gbps(binary, paths[name], 3))
        c, r = max(c_runs), max(r_runs)
        results[name] = {"c_blosc2_gbps": c, "blosc2fs_gbps": r, "ratio": r / c, "target": target}
    with open("/proc/cpuinfo") as f:
        cpu = next((x.split(":", 1)[1].strip() for x in f if x.startswith("model name")), "unknown CPU")
    print(
        f"single-thread decode, {args.mib} MiB of float64 per file, best of {args.rounds} A/B rounds; "
        f"{os.cpu_count()} CPUs ({cpu}), load average {os.getloadavg()[0]:.2f} at the end"
    )
    print(f"{'config':18} {'C-Blosc2 GB/s':>14} {'blosc2fs GB/s':>14} {'ratio':>7} {'target':>7}")
    for name, r in results.items():
        verdict = "PASS" if r["ratio"] >= r["target"] else "FAIL"
        print(
            f"{name:18} {r['c_blosc2_gbps']:14.2f} {r['blosc2fs_gbps']:14.2f} {r['ratio']:7.2f} {'>=' + str(r['target']):>7} {verdict}"
        )
    with open(os.path.join(args.workdir, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
