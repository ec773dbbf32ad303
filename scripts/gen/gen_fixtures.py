#!/usr/bin/env python3
"""Generate Blosc2 test fixtures (and their expected contents) for blosc2fs.

Usage:
    gen_fixtures.py OUTDIR                      # the fixed fixture set
    gen_fixtures.py --random N --seed S OUTDIR  # N random cases (differential testing)

Both modes write OUTDIR/manifest.json, a JSON object mapping case name to:

    path          file (contiguous frame) or directory (sparse frame), relative to OUTDIR
    kind          "b2nd" | "caterva" | "frame"
    storage       "contiguous" | "sparse"
    size, sha256  length and sha256 of the expected output: the array's bytes in C order
                  for b2nd/caterva (computed from the numpy source data, never by reading
                  the file back), the concatenation of all decompressed chunks for frames
    shape, chunkshape, blockshape   lists (null for plain frames)
    dtype         dtype string as stored in the b2nd metalayer (null for caterva/frame)
    itemsize      the frame's typesize
    nchunks       number of chunks
    codec, clevel, filters, filters_meta, splitmode, use_dict
                  as recorded in the frame header (codec: blosclz/lz4/lz4hc/zlib/zstd,
                  splitmode: the blosc2.SplitMode name)
    vlmeta        the vlmetalayers as JSON (msgpack mapping: nil->null, bool, int,
                  finite float->number, NaN->"NaN", +inf->"Infinity", -inf->"-Infinity",
                  str, bin->{"base64": ...}, array->list, map->object with string keys,
                  ext 44 (complex, >dd)->{"real": r, "imag": i}, other ext->{"ext": t, "base64": ...})
    chunk_sha256  sha256 of each decompressed chunk (b2nd: block layout, padding included)
    special       (optional) special chunks present
    notes         free text

Everything is verified while generating: for b2nd/caterva the expected array is
re-assembled from the decompressed chunks (independent numpy implementation of the
b2nd chunk/block layout) and, when the C library shipped with python-blosc2 can be
loaded with ctypes, also compared against b2nd_open + b2nd_to_cbuffer.

Chunks that are special "uninitialized" chunks have undefined content in C-Blosc2;
the manifest expects them to read back as zero bytes (both in sha256 and chunk_sha256).

Deterministic: the same arguments produce byte-identical files (nthreads is pinned to 1
so the frame headers do not depend on the machine).

This file is the command; the generator is split by job beside it: fixture_cases.py (the
fixed set) and fixture_random.py (--random) name the cases, fixture_writer.py writes and
checks each one, fixture_frames.py reads the files back independently of python-blosc2
(and holds the shared constants), fixture_data.py makes the values and the pipelines.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import blosc2

from fixture_cases import fixed_set
from fixture_data import rmpath
from fixture_frames import ORACLE_VERSION
from fixture_random import random_set
from fixture_writer import Gen

# --------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--random", type=int, default=None, metavar="N", help="write N random cases")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    if blosc2.__version__ != ORACLE_VERSION:
        print(
            f"warning: fixtures are meant to be generated with python-blosc2 {ORACLE_VERSION}, "
            f"found {blosc2.__version__}",
            file=sys.stderr,
        )
    blosc2.set_nthreads(1)
    outdir = args.outdir
    os.makedirs(outdir, exist_ok=True)
    # remove what a previous run listed (stale cases must not linger)
    old = os.path.join(outdir, "manifest.json")
    if os.path.exists(old):
        try:
            with open(old) as f:
                for e in json.load(f).values():
                    p = os.path.normpath(os.path.join(outdir, e["path"]))
                    if p.startswith(os.path.normpath(outdir) + os.sep):
                        rmpath(p)
        except (ValueError, KeyError, TypeError):
            pass
    g = Gen(outdir, verbose=args.verbose)
    if args.random is not None:
        random_set(g, args.random, args.seed)
    else:
        fixed_set(g)
    g.write_manifest()

    total = 0
    for root, _, files in os.walk(outdir):
        for fn in files:
            total += os.path.getsize(os.path.join(root, fn))
    kinds: dict[str, int] = {}
    for e in g.manifest.values():
        k = f"{e['kind']}/{e['storage']}"
        kinds[k] = kinds.get(k, 0) + 1
    oracle = f"C oracle {g.oracle.version} checked {g.stats['c_checked']}" if g.oracle.lib else "C oracle unavailable"
    print(
        f"{len(g.manifest)} cases ({', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))}) in {outdir}, "
        f"{total / 1024:.1f} KiB; {oracle} ({len(g.stats['c_mismatch'])} known-bug mismatches); "
        f"python arr[...] mismatches: {len(g.stats['py_slice_mismatch'])}"
    )
    skipped = {k: v for k, v in g.stats.get("skipped", {}).items() if not k.startswith("(redrawn)")}
    if skipped:
        print(
            f"skipped {sum(map(len, skipped.values()))} random cases that C-Blosc2 could not write/read back: "
            + "; ".join(f"{k} x{len(v)}" for k, v in skipped.items())
        )
    if g.verbose:
        print("skipped:", g.stats.get("skipped", {}))
        print("C mismatches:", g.stats["c_mismatch"])
        print("python arr[...] mismatches:", g.stats["py_slice_mismatch"])
        print("not reopenable by python-blosc2:", g.stats["py_unopenable"])


if __name__ == "__main__":
    main()
