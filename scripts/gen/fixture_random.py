"""The random mode of gen_fixtures.py (`--random N --seed S`): drawn cases for differential testing.

One job: draw N cases from a seed (dtype, shape, chunks, blocks, pipeline, codec, clevel, split
mode, sparse or not, NDLZ and the ND filters where they apply) and hand each to the writer;
the cases C-Blosc2 cannot write or read back are redrawn or skipped, and counted.
"""

from __future__ import annotations

import math
import random
from random import Random
from typing import Any

import blosc2
import numpy as np
from numpy.random import Generator

from fixture_data import DPARAMS, cparams, gen_values, make_data, pipeline, rmpath
from fixture_frames import CODECS, DTYPES, INT_TRUNC, NDCELL, NDMEAN, NOF, SM, TRUNC, C
from fixture_writer import Gen, maker_for, with_parts

# --------------------------------------------------------------------------------------
# Random mode
# --------------------------------------------------------------------------------------

RANDOM_PIPELINES = [
    "none",
    "shuffle",
    "bitshuffle",
    "delta",
    "delta+shuffle",
    "delta+bitshuffle",
    "shuffle+delta",
    "trunc+shuffle",
    "trunc+bitshuffle",
    "shuffle+bytedelta",
    "bytedelta",
    "shuffle(meta)",
    "double-shuffle",
    "int_trunc+shuffle",
    "shuffle+bytedelta_buggy",
]


def nd_random(rnd: Random, kind: Any, f: Any, m: Any, cp: Any, blocks: Any, ts: Any) -> Any:
    """Add NDLZ (kind "ndlz", blocks are 2-D) or an NDCELL / NDMEAN filter at a random place of
    the pipeline (f, m) to the cparams cp. Returns (cp, description) or None if it does not fit."""
    if math.prod(blocks) == 0:
        return None
    if kind == "ndlz":
        cp = dict(cp, codec=C.NDLZ, codec_meta=rnd.choice([4, 8]), use_dict=False)
        if ts > 1:
            cp["splitmode"] = SM.ALWAYS_SPLIT  # C-Blosc2 refuses NDLZ on unsplit typesize > 1 blocks
        return cp, f"NDLZ {cp['codec_meta']}x{cp['codec_meta']}"
    used = [(x, y) for x, y in zip(f, m) if x != NOF]
    # C-Blosc2 3.3.5 clobbers its source block when a third filter runs (breaking DELTA and the
    # memcpy fallback): keep NDCELL pipelines to two filters
    if kind == "ndcell" and len(used) > 1:
        used = used[-1:] if used[0][0] not in (TRUNC, INT_TRUNC) else used[:1]
    if kind == "ndcell":
        items = math.prod(blocks)
        meta = rnd.choice([e for e in range(1, 8) if e ** len(blocks) <= items] or [1])
    else:
        # a meta above the first block dimension while a later one is longer gives blocks
        # C-Blosc2 cannot decode; allow it only when no later dimension is longer
        top = 6 if all(b <= 6 for b in blocks[1:]) else max(1, min(6, blocks[0]))
        meta = rnd.randint(1, top)
    first = 1 if used and used[0][0] in (TRUNC, INT_TRUNC) else 0  # truncation stays first
    at = rnd.randint(first, len(used))
    used.insert(at, (NDCELL if kind == "ndcell" else NDMEAN, meta))
    f2 = [0] * (6 - len(used)) + [x for x, _ in used]
    m2 = [0] * (6 - len(used)) + [y for _, y in used]
    cp = dict(cp, filters=f2, filters_meta=[(x & 0xFF) - 256 if (x & 0xFF) > 127 else x for x in m2])
    return cp, f"{kind.upper()} meta {meta} -> filters {f2} meta {m2}"


def rand_shape(rnd: Random, ndim: Any, itemsize: Any, max_bytes: int = 200_000) -> Any:
    while True:
        shape = []
        for _ in range(ndim):
            r = rnd.random()
            if r < 0.06:
                shape.append(0)
            elif r < 0.18:
                shape.append(1)
            elif r < 0.7:
                shape.append(rnd.randint(2, 12))
            else:
                shape.append(rnd.randint(13, 70 if ndim <= 2 else 30))
        if ndim == 1 and rnd.random() < 0.5:
            shape[0] = rnd.randint(0, 3000)
        if math.prod(shape) * itemsize <= max_bytes:
            return tuple(shape)


def rand_chunks(rnd: Random, shape: Any) -> Any:
    for _ in range(100):
        cs, bs = [], []
        for s in shape:
            if s == 0:
                c = rnd.choice([0, 1, 2])
            else:
                c = rnd.randint(1, s) if rnd.random() < 0.85 else rnd.randint(s, s + 5)
            b = 0 if c == 0 else rnd.randint(1, c)
            cs.append(c)
            bs.append(b)
        nch = math.prod(-(-s // c) if c else 1 for s, c in zip(shape, cs))
        nbl = math.prod(-(-c // b) if b else 1 for c, b in zip(cs, bs))
        if nch <= 300 and nbl <= 400:
            return tuple(cs), tuple(bs)
    return tuple(shape), tuple(shape)


def random_set(g: Gen, n: Any, seed: Any) -> None:
    rnd = random.Random(seed)
    rng = np.random.default_rng(seed)
    skipped: dict[str, Any] = {}
    for i in range(n):
        name = f"r{seed}_{i:04d}"
        for allow_nd in (True, False):
            g.stats["last_nd"] = False
            try:
                random_case(g, name, i, seed, rnd, rng, allow_nd)
                break
            except RuntimeError as e:
                # C-Blosc2 3.3.5 writes a few kinds of frames that it cannot read back (or refuses
                # some writes); such cases are dropped. (NDLZ / NDCELL / NDMEAN cases it refuses
                # are redrawn once without them.)
                for ext in (".b2nd", ".b2frame", ".caterva"):
                    rmpath(g.p(name + ext))
                g.manifest.pop(name, None)
                key = str(e).split(":")[0][:80]
                if g.stats["last_nd"]:
                    key = "(redrawn) " + key
                skipped.setdefault(key, []).append(name)
                if not g.stats["last_nd"]:
                    break
    g.stats["skipped"] = skipped


def random_case(g: Gen, name: Any, i: Any, seed: Any, rnd: Random, rng: Generator, allow_nd: bool = True) -> None:
    r = rnd.random()
    codec = rnd.choice(list(CODECS))
    clevel = rnd.choice([0, 1, 3, 5, 6, 9, rnd.randint(0, 9)])
    sm = rnd.choice(list(SM))
    sparse = rnd.random() < 0.3
    use_dict = codec in ("zstd", "lz4", "lz4hc") and clevel > 0 and rnd.random() < 0.2
    dt = np.dtype(rnd.choice(DTYPES))
    ts = dt.itemsize
    pipes = [
        p
        for p in RANDOM_PIPELINES
        if not (p.startswith("trunc") and ts not in (4, 8))
        and not (p.startswith("int_trunc") and ts not in (1, 2, 4, 8))
        and not ("bytedelta" in p and (ts == 1 or ts > 255))
    ]
    pl = rnd.choice(pipes)
    if pl.startswith("int_trunc"):
        bits = rnd.randint(1, 8 * ts) if rnd.random() < 0.7 else -rnd.randint(1, 8 * ts - 1)
    else:
        bits = (rnd.randint(1, 20) if ts == 4 else rnd.randint(1, 45)) if rnd.random() < 0.8 else -rnd.randint(1, 15)
    f, m = pipeline(pl, ts, trunc_bits=bits)
    cp = cparams(codec, clevel, f, m, splitmode=sm, use_dict=use_dict)
    desc = f"random seed={seed} #{i}: {codec}/{clevel} {pl} {sm.name} dict={use_dict} dtype={dt.descr if dt.names else dt.str}"
    vl = None
    if rnd.random() < 0.2:
        vl = {
            "i": rnd.randint(-(10**6), 10**6),
            "f": rnd.choice([0.1, float("nan"), float("-inf")]),
            "s": f"case {i}",
            "b": bytes(rng.integers(0, 256, rnd.randint(0, 9), dtype=np.uint8)),
            "c": complex(rnd.random(), -1.0),
            "l": [None, True, {"k": [1, 2]}],
        }
    if r < 0.1:
        # plain frame
        nitems = rnd.randint(0, 20000 // ts + 1)
        # (no all-zero chunks: in a frame with variable chunk sizes they become special offsets
        # that C-Blosc2 3.3.5 cannot read back)
        data = make_data(rng, dt, (nitems,), styles=("smooth", "random", "constant"))
        csz = rnd.randint(1, 4000) * ts

        def builder(u: Any, c: Any, data: Any = data, csz: Any = csz, cp: Any = cp, ts: Any = ts) -> Any:
            cp = dict(cp)
            cp["typesize"] = ts
            s = blosc2.SChunk(chunksize=csz, urlpath=u, contiguous=c, mode="w", cparams=cp, dparams=DPARAMS)
            raw = data.tobytes()
            pos = 0
            prev_short = False
            while pos < len(raw):
                k = min(len(raw) - pos, csz)
                # C-Blosc2 refuses two consecutive chunks shorter than the frame chunksize
                if prev_short and k < csz:
                    break
                if not prev_short and rnd.random() < 0.3:
                    k = min(k, rnd.randint(1, max(1, csz // ts)) * ts)
                s.append_data(raw[pos : pos + k])
                prev_short = k < csz
                pos += k
            return s

        g.frame(name, builder, sparse=sparse, vlmeta=vl, notes=desc + " (plain frame)")
        return
    ndim = rnd.randint(0, 5)
    nd = None
    if rnd.random() < 0.3 and allow_nd:
        # the plugin codec NDLZ (2-D only) or the NDCELL / NDMEAN filters (NDMEAN writes
        # typesize 4 and 8 only)
        nd = rnd.choice(["ndlz", "ndcell", "ndmean"] if ts in (4, 8) else ["ndlz", "ndcell"])
        ndim = 2 if nd == "ndlz" else max(ndim, 1)
    shape = rand_shape(rnd, ndim, ts)
    chunks, blocks = rand_chunks(rnd, shape)
    if nd == "ndlz" and ts <= 64:
        # C-Blosc2's NDLZ encoder fails on streams of a few bytes: use blocks of >= 4 x 4 items
        shape = (rnd.randint(4, 80), rnd.randint(4, 80))
        chunks = tuple(rnd.randint(4, s) for s in shape)
        blocks = tuple(rnd.randint(4, c) for c in chunks)
    if nd:
        added = nd_random(rnd, nd, f, m, cp, blocks, ts)
        if added:
            cp, what = added
            desc += " + " + what
            g.stats["last_nd"] = True
    if r < 0.16:
        src = make_data(rng, dt, shape)
        g.caterva(name, src, chunks, blocks, cp, sparse=sparse, notes=desc + " (caterva)")
        return
    if r < 0.26 and ndim > 0 and math.prod(shape) > 0:
        # zeros/full + a slice written
        fillkind = rnd.choice(["zeros", "full"]) if dt.kind in "biufc" else "zeros"
        fill = gen_values(rng, dt, 1, "random")[0]
        exp = np.zeros(shape, dt) if fillkind == "zeros" else np.full(shape, fill, dt)
        sl = tuple(slice(a, a + rnd.randint(0, s - a)) for s in shape for a in [rnd.randint(0, s - 1)])
        part = make_data(rng, dt, exp[sl].shape)
        exp[sl] = part

        filled = (blosc2.zeros, shape) if fillkind == "zeros" else (blosc2.full, shape, fill)
        make_filled = maker_for(*filled, dtype=dt, chunks=chunks, blocks=blocks, cparams=cp)
        maker = with_parts(make_filled, exp, [sl] if part.size else [])
        g.b2nd(
            name,
            None,
            maker=maker,
            expected=exp,
            cp=cp,
            sparse=sparse,
            vlmeta=vl,
            notes=desc + f" ({fillkind} + slice {sl})",
        )
        return
    src = make_data(rng, dt, shape)
    g.b2nd(name, src, chunks, blocks, cp, sparse=sparse, vlmeta=vl, notes=desc)
