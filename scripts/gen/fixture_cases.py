"""The fixed fixture set of gen_fixtures.py: the cases committed in tests/fixtures.

One job: name every case of the fixed corpus (all codecs x filters, clevels 0/1/9, split modes,
dictionaries, dtypes, special chunks, vlmeta, sparse frames, NDLZ and the ND filters, the
legacy caterva format) and hand each to the writer. Changing a case changes the committed files.
"""

from __future__ import annotations

import zlib
from typing import Any

import blosc2
import numpy as np
from numpy.random import Generator

from fixture_data import cparams, make_data, pipeline
from fixture_frames import (
    BITSHUF,
    BYTEDELTA,
    BYTEDELTA_BUGGY,
    DELTA,
    DTYPES,
    INT_TRUNC,
    NDCELL,
    NDMEAN,
    SHUF,
    SM,
    TRUNC,
    C,
)
from fixture_writer import Gen, case_rng, maker_for, with_parts

# make_data's segment styles that many cases share: smooth runs (what compresses), random and
# constant ones (what stresses the codecs and filters).
MOSTLY_SMOOTH = ("smooth", "random", "smooth", "constant")
SMOOTH_RANDOM_CONSTANT = ("smooth", "random", "constant")

# --------------------------------------------------------------------------------------
# NDLZ codec, NDCELL / NDMEAN filters, BYTEDELTA_BUGGY, INT_TRUNC
# --------------------------------------------------------------------------------------


def nd_image_u1(rng: Generator, shape: Any) -> Any:
    """A byte image NDLZ finds matches in: bands of repeated rows, constant bands,
    bands repeating a 4- or 8-byte pattern along the row, and random bands."""
    rows, cols = shape
    bands = [rng.integers(0, 256, (4, cols), dtype=np.uint8) for _ in range(3)]
    out = np.empty(shape, np.uint8)
    for r in range(0, rows, 4):
        k = int(rng.integers(0, 6))
        if k < 2:
            band = bands[int(rng.integers(0, 3))]
        elif k == 2:
            band = np.full((4, cols), int(rng.integers(0, 4)), np.uint8)
        elif k == 3:
            period = int(rng.choice([4, 8]))
            band = np.tile(rng.integers(0, 256, (4, period), dtype=np.uint8), (1, -(-cols // period)))[:, :cols]
        else:
            band = rng.integers(0, 256, (4, cols), dtype=np.uint8)
        out[r : r + 4] = band[: rows - r]
    return out


def seeded_b2nd(
    g: Gen,
    name: str,
    dtype: Any,
    shape: Any,
    chunks: Any,
    blocks: Any,
    cp: Any,
    styles: Any = None,
    nseg: Any = None,
    **kw: Any,
) -> None:
    """A b2nd case of make_data's values drawn from the case's own seed (case_rng(name)), with
    make_data's default styles unless given: how most cases of the fixed set are made."""
    data_kw = {} if styles is None else {"styles": styles}
    g.b2nd(name, make_data(case_rng(name), dtype, shape, nseg=nseg, **data_kw), chunks, blocks, cp, **kw)


def nd_filters(*pairs: Any) -> Any:
    """(filters, filters_meta) with the (id, meta) pairs right-aligned in the six slots
    (the first pair runs first when writing)."""
    f = [0] * (6 - len(pairs)) + [p[0] for p in pairs]
    m = [0] * (6 - len(pairs)) + [p[1] for p in pairs]
    return f, m


def nd_fixed(g: Gen) -> None:
    A = SM.ALWAYS_SPLIT
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    blocks: tuple[int, ...]
    # NDLZ: 2-D blocks, typesize 1, or typesize > 1 on split blocks (C refuses unsplit ones)
    for name, dt, shape, chunks, blocks, meta, fl, sm in [
        ("ndlz4_u1", "u1", (50, 70), (30, 40), (14, 18), 4, (), SM.AUTO_SPLIT),
        ("ndlz8_u1", "u1", (50, 70), (30, 40), (19, 21), 8, (), SM.AUTO_SPLIT),
        ("ndlz4_u1_delta", "u1", (41, 33), (41, 33), (16, 11), 4, ((DELTA, 0),), SM.AUTO_SPLIT),
        ("ndlz4_i2_shuffle", "<i2", (40, 36), (20, 20), (10, 12), 4, ((SHUF, 0),), A),
        ("ndlz8_f4_bitshuffle", "<f4", (33, 45), (33, 45), (16, 24), 8, ((BITSHUF, 0),), A),
        ("ndlz8_u2_ndcell", "<u2", (40, 40), (24, 24), (17, 16), 8, ((NDCELL, 4), (SHUF, 0)), A),
    ]:
        rng = case_rng(name)
        if dt == "u1":
            src = nd_image_u1(rng, shape)
        else:
            src = make_data(rng, dt, shape, styles=("smooth", "constant", "smooth", "random"), nseg=3)
        f, m = nd_filters(*fl)
        g.b2nd(
            name,
            src,
            chunks,
            blocks,
            cparams("ndlz", 5, f, m, splitmode=sm, codec_meta=meta),
            notes=f"NDLZ {meta}x{meta} cells, blocks {blocks}, filters {list(fl)}, {dt}",
        )

    # NDCELL (lossless): cells of edge meta, clipped to blocks that are not multiples of it
    for name, dt, shape, chunks, blocks, fl, codec in [
        ("ndcell4_shuffle_f4", "<f4", (45, 37), (20, 16), (8, 5), ((NDCELL, 4), (SHUF, 0)), "zstd"),
        (
            "ndcell3_after_bitshuffle_i2_3d",
            "<i2",
            (13, 11, 9),
            (6, 6, 5),
            (4, 5, 4),
            ((BITSHUF, 0), (NDCELL, 3)),
            "lz4",
        ),
        # (not NDCELL, DELTA, SHUFFLE: with three filters C-Blosc2 3.3.5's encoder overwrites
        # its source block with the third filter's output, and DELTA's reference with it)
        ("ndcell2_then_delta_i4", "<i4", (31, 29), (12, 10), (5, 4), ((NDCELL, 2), (DELTA, 0)), "zstd"),
        ("ndcell2_after_delta_u2", "<u2", (31, 29), (12, 10), (5, 4), ((DELTA, 0), (NDCELL, 2)), "zlib"),
        (
            "ndcell5_after_bytedelta_f8",
            "<f8",
            (30, 30),
            (16, 16),
            (11, 7),
            ((SHUF, 0), (BYTEDELTA, 8), (NDCELL, 5)),
            "zstd",
        ),
        ("ndcell6_1d_u1", "u1", (500,), (200,), (70,), ((NDCELL, 6),), "lz4"),
        ("ndcell2_4d_f4", "<f4", (7, 6, 5, 9), (3, 4, 5, 4), (2, 3, 2, 3), ((NDCELL, 2), (SHUF, 0)), "blosclz"),
        ("ndcell4_block_dim_below_cell_u1", "u1", (20, 50), (9, 40), (3, 20), ((NDCELL, 4),), "zstd"),
    ]:
        f, m = nd_filters(*fl)
        notes = f"NDCELL, blocks {blocks}, filters (first runs first) {list(fl)}, {dt}"
        seeded_b2nd(g, name, dt, shape, chunks, blocks, cparams(codec, 5, f, m), SMOOTH_RANDOM_CONSTANT, 3, notes=notes)

    # NDMEAN (lossy: expected bytes are C-Blosc2's decode, SChunk.decompress_chunk)
    for name, dt, shape, chunks, blocks, fl in [
        ("ndmean4_shuffle_f4", "<f4", (45, 37), (20, 16), (10, 13), ((NDMEAN, 4), (SHUF, 0))),
        ("ndmean3_bitshuffle_f8_3d", "<f8", (13, 11, 9), (5, 4, 4), (4, 3, 4), ((NDMEAN, 3), (BITSHUF, 0))),
        ("ndmean2_delta_shuffle_f4", "<f4", (31, 29), (12, 10), (5, 4), ((NDMEAN, 2), (DELTA, 0), (SHUF, 0))),
        ("ndmean1_after_shuffle_f8", "<f8", (20, 21), (10, 10), (4, 6), ((SHUF, 0), (NDMEAN, 1))),
        ("ndmean5_clipped_f4", "<f4", (30, 20), (12, 9), (6, 3), ((NDMEAN, 5),)),
        ("ndmean4_small_block_f8", "<f8", (9, 10), (4, 6), (2, 3), ((NDMEAN, 4), (SHUF, 0))),
        ("ndmean3_after_trunc_f4", "<f4", (40, 30), (16, 16), (7, 8), ((TRUNC, 10), (NDMEAN, 3), (SHUF, 0))),
    ]:
        f, m = nd_filters(*fl)
        notes = f"NDMEAN (lossy; expected = C-Blosc2's decode), blocks {blocks}, filters {list(fl)}, {dt}"
        seeded_b2nd(g, name, dt, shape, chunks, blocks, cparams("zstd", 5, f, m), MOSTLY_SMOOTH, 3, notes=notes)

    # BYTEDELTA_BUGGY (id 34), as C-Blosc2 3.3.5 still writes it: streams of >= 16 bytes
    # that are not multiples of 16 (the SIMD groups and the scalar tail)
    for name, dt, meta in [("filter_bytedelta_buggy_f4", "<f4", 4), ("filter_bytedelta_buggy_meta0_i2", "<i2", 0)]:
        f, m = nd_filters((SHUF, 0), (BYTEDELTA_BUGGY, meta))
        notes = f"BYTEDELTA_BUGGY meta {meta} on {dt}"
        seeded_b2nd(g, name, dt, (31, 29), (12, 10), (9, 7), cparams("zstd", 5, f, m), nseg=3, notes=notes)

    # INT_TRUNC (id 36, lossy: the low bits are zeroed when writing)
    for name, dt, fl in [
        ("filter_int_trunc_neg5_i4", "<i4", ((INT_TRUNC, -5), (SHUF, 0))),
        ("filter_int_trunc_12_u2", "<u2", ((INT_TRUNC, 12), (BITSHUF, 0))),
        ("filter_int_trunc_58_i8", "<i8", ((INT_TRUNC, 58),)),
    ]:
        f, m = nd_filters(*fl)
        notes = f"INT_TRUNC filters {list(fl)} on {dt}"
        seeded_b2nd(g, name, dt, (31, 29), (12, 10), (5, 4), cparams("lz4", 5, f, m), nseg=3, notes=notes)


# --------------------------------------------------------------------------------------
# The fixed set
# --------------------------------------------------------------------------------------

VLMETA_ALL = {  # (C-Blosc2 3.3.5 fails to write more than ~16 vlmetalayers to a file frame)
    "str": "hello, blosc2fs",
    "unicode": "ünïcödé ✓",
    "int": 42,
    "big": 2**63 + 5,
    "float": 3.5,
    "nan": float("nan"),
    "floats": [float("inf"), float("-inf"), -0.0, 1e-300, -7],
    "list": [1, "two", 3.0, None, [True, False]],
    "dict": {"a": 1, "b": [1, 2], "c": {"d": None}, "e": float("nan")},
    "bytes": b"\x00\x01\x02binary\xff",
    "true": True,
    "none": None,
    "complex": complex(1.5, -2.25),
    "tuple": (1, 2),  # python-blosc2 packs tuples as ["__tuple__", ...]
    "ключ": "non-ascii key",
}


def fixed_set(g: Gen) -> None:
    chunks: tuple[int, ...]
    blocks: tuple[int, ...]
    # 1. codecs x filter pipelines (2-D f4, edge chunks + partial blocks) --------------------
    shape, chunks, blocks = (45, 37), (20, 16), (8, 5)
    for codec in ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]:
        for fl in ["none", "shuffle", "bitshuffle", "delta+shuffle", "trunc+shuffle", "shuffle+bytedelta"]:
            name = f"codec_{codec}_{fl.replace('+', '_')}"
            f, m = pipeline(fl, 4)
            notes = f"{codec} clevel 5, filters {fl}, 2-D f4 with edge chunks and partial blocks"
            seeded_b2nd(g, name, "<f4", shape, chunks, blocks, cparams(codec, 5, f, m), MOSTLY_SMOOTH, 3, notes=notes)

    # other pipelines, incl. on another dtype
    for fl, dt in [
        ("delta", "<i4"),
        ("delta+bitshuffle", "<i8"),
        ("shuffle+delta", "<u2"),
        ("bytedelta", "<f8"),
        ("trunc+bitshuffle", "<f8"),
        ("shuffle(meta)", "<f8"),
        ("double-shuffle", "<i4"),
        ("bitshuffle", "<f2"),
        ("shuffle+bytedelta", "<i2"),
        ("bitshuffle", "u1"),
        ("delta+shuffle", "<c16"),
    ]:
        name = f"filter_{fl.replace('+', '_').replace('(', '_').replace(')', '')}_{np.dtype(dt).name}"
        f, m = pipeline(fl, np.dtype(dt).itemsize)
        cp = cparams("zstd", 4, f, m)
        seeded_b2nd(g, name, dt, (31, 29), (12, 10), (5, 4), cp, nseg=3, notes=f"filters {fl} on {dt}")
    # negative trunc_prec meta (= bits to zero), stored as uint8
    f, m = pipeline("trunc+shuffle", 4, trunc_bits=-9)
    name, cp, notes = "filter_trunc_negative_f4", cparams("lz4", 5, f, m), "trunc_prec meta -9 (zero 9 mantissa bits)"
    seeded_b2nd(g, name, "<f4", (300,), (128,), (40,), cp, ("smooth", "random"), notes=notes)

    # 2. clevels --------------------------------------------------------------------------
    for codec, clevel in [
        ("blosclz", 0),
        ("zstd", 0),
        ("lz4", 1),
        ("zlib", 1),
        ("zstd", 9),
        ("lz4hc", 9),
        ("blosclz", 9),
        ("zlib", 9),
    ]:
        name = f"clevel{clevel}_{codec}"
        notes = f"clevel {clevel}" + (" (memcpyed chunks)" if clevel == 0 else "")
        cp = cparams(codec, clevel, [0, 0, 0, 0, 0, SHUF])
        seeded_b2nd(g, name, "<i4", (40, 25), (16, 10), (6, 4), cp, nseg=3, notes=notes)

    # 3. split modes ----------------------------------------------------------------------
    for codec in ["blosclz", "zstd", "lz4"]:
        for sm in [SM.ALWAYS_SPLIT, SM.NEVER_SPLIT, SM.AUTO_SPLIT, SM.FORWARD_COMPAT_SPLIT]:
            name = f"split_{sm.name.lower()}_{codec}"
            cp = cparams(codec, 5, [0, 0, 0, 0, 0, SHUF], splitmode=sm)
            seeded_b2nd(g, name, "<f8", (700,), (256,), (64,), cp, nseg=3, notes=f"splitmode {sm.name}")
    cp = cparams("zlib", 5, [0, 0, 0, 0, 0, BITSHUF], splitmode=SM.ALWAYS_SPLIT)
    seeded_b2nd(g, "split_always_bitshuffle_i2", "<i2", (900,), (400,), (96,), cp, nseg=2)

    # 4. dictionaries (dicts are only built for chunks >= 5120 bytes) ------------------------
    for codec in ["zstd", "lz4", "lz4hc"]:
        name = f"dict_{codec}"
        rng = case_rng(name)
        src = (np.arange(9000, dtype=np.int64) % 997 * 13 + rng.integers(0, 3, 9000)).astype("<i4")
        g.b2nd(
            name,
            src,
            (4000,),
            (500,),
            cparams(codec, 5, [0, 0, 0, 0, 0, SHUF], use_dict=True),
            notes=f"use_dict=True with {codec}; each chunk embeds its dictionary after bstarts",
        )
    name = "dict_zstd_noshuffle_u1"
    src = np.frombuffer((b"The quick brown fox jumps over the lazy dog. " * 600)[:24000], "u1").copy()
    g.b2nd(
        name,
        src.reshape(120, 200),
        (60, 100),
        (20, 50),
        cparams("zstd", 7, [0] * 6, use_dict=True),
        notes="zstd dictionary on text bytes",
    )
    name = "dict_zstd_sparse"
    src = (np.arange(12000) % 1013).astype("<i4")
    g.b2nd(name, src, (5000,), (1000,), cparams("zstd", 3, [0, 0, 0, 0, 0, SHUF], use_dict=True), sparse=True)

    # 5. dtypes ---------------------------------------------------------------------------
    for dt in DTYPES:
        d = np.dtype(dt)
        nm = {"S7": "S7", "<U5": "U5", "S300": "S300"}.get(dt if isinstance(dt, str) else "", None)
        if nm is None:
            if d.names:
                nm = "struct300" if d.itemsize == 300 else "struct"
            else:
                nm = d.str.replace("<", "le_").replace(">", "be_").replace("|", "")
        name = f"dtype_{nm}"
        if d.itemsize >= 100:
            shp, ch, bl = (9, 7), (4, 3), (3, 2)
        else:
            shp, ch, bl = (33, 21), (12, 8), (5, 3)
        codec = ["zstd", "lz4", "blosclz", "zlib", "lz4hc"][zlib.crc32(name.encode()) % 5]
        notes = f"dtype {d.str if not d.names else d.descr}"
        seeded_b2nd(g, name, d, shp, ch, bl, cparams(codec, 5), nseg=4, notes=notes)

    notes = "python-blosc2 default cparams for a <U dtype: SHUFFLE with filters_meta 4 (UCS4 code units)"
    seeded_b2nd(g, "dtype_U5_pydefaults", "<U5", (40, 9), (16, 4), (5, 3), "defaults", nseg=3, notes=notes)

    # imaging and text: physical spacing and origin in vlmeta (the sidecar headers carry
    # them, C order); strings that need every escape data.txt has.
    placed = {"spacing": [2.0, 0.5, 0.25], "origin": [-10.0, 0.0, 5.5]}
    notes = "vlmeta spacing and origin, C order"
    name, cp = "placed_3d_i2", cparams("zstd", 5)
    seeded_b2nd(g, name, np.dtype("<i2"), (6, 10, 12), (3, 5, 6), (2, 3, 3), cp, nseg=2, vlmeta=placed, notes=notes)
    notes = "big-endian, vlmeta voxel_size"
    placed = {"voxel_size": [1.5, 3]}
    name, cp = "placed_2d_be_f4", cparams("lz4", 5)
    seeded_b2nd(g, name, np.dtype(">f4"), (12, 9), (6, 4), (3, 2), cp, nseg=2, vlmeta=placed, notes=notes)
    words = [
        "plain",
        'say "hi"',
        "back\\slash",
        "new\nline",
        "tab\there",
        "caf\u00e9",
        "\U0001f600 ok",
        "a\x00b",
        "",
        " pad ",
        "\u2028sep",
        "\x07bell",
    ]
    g.b2nd(
        "text_escapes_U8",
        np.array(words, dtype="<U8").reshape(3, 4),
        (2, 2),
        (1, 2),
        cparams("zstd", 5),
        notes="strings with quotes, backslashes, controls, non-ASCII, inner NUL, empty",
    )
    raw = [b"plain", b'q"uote', b"b\\s", b"\n\r\t", b"\xff\xfe", b"a\x00b", b"", b"\x00\x00x"]
    g.b2nd(
        "text_escapes_S6",
        np.array(raw, dtype="S6"),
        (5,),
        (2,),
        cparams("lz4", 5),
        notes="bytes with quotes, backslashes, controls, high bytes, NULs inside and leading",
    )

    # 6. shapes ---------------------------------------------------------------------------
    struct = [("a", "<i4"), ("b", "<f8"), ("c", "S3")]
    for name, src, chunks, blocks, cp, notes in [
        ("shape_0d_f8", np.array(-1.25e300), (), (), cparams("zstd", 5), "0-d array"),
        ("shape_0d_struct", np.array((7, 2.5, b"xyz"), dtype=struct), (), (), cparams("lz4", 3), "0-d structured"),
        ("shape_len0", np.zeros((0,), "<i4"), (0,), (0,), cparams("zstd", 5), "zero-length 1-D"),
        ("shape_len0_chunked", np.zeros((0,), "<f8"), (10,), (5,), cparams("lz4", 5), "zero-length, chunks (10,)"),
        ("shape_3x0x4", np.zeros((3, 0, 4), "<i2"), (2, 1, 2), (1, 1, 2), cparams("zstd", 5), "zero-size middle dim"),
        ("shape_1d_block1", make_data(case_rng("b1"), "<u4", (53,)), (10,), (1,), cparams("blosclz", 5),
         "blockshape 1"),
        ("shape_1d_onechunk", make_data(case_rng("oc"), "<i8", (200,)), (200,), (200,), cparams("zlib", 5),
         "single chunk = single block"),
        ("shape_1d_chunk_gt_shape", make_data(case_rng("cg"), "<f4", (50,)), (64,), (24,), cparams("lz4", 5),
         "chunkshape larger than shape"),
        ("shape_2d_single_row", make_data(case_rng("sr"), "<i4", (1, 300)), (1, 128), (1, 40), cparams("zstd", 5),
         ""),
        ("shape_3d", make_data(case_rng("3d"), "<f8", (13, 11, 9)), (5, 4, 4), (2, 3, 2), cparams("zstd", 5),
         "3-D, partial blocks"),
        ("shape_4d", make_data(case_rng("4d"), "<i2", (7, 6, 5, 9)), (3, 4, 5, 4), (2, 3, 2, 3), cparams("lz4", 5),
         ""),
        ("shape_5d", make_data(case_rng("5d"), "<i4", (4, 5, 3, 6, 2)), (3, 2, 2, 4, 2), (2, 1, 2, 3, 1),
         cparams("zstd", 5, [0, 0, 0, 0, DELTA, SHUF]), "5-D with delta"),
        ("shape_6d", make_data(case_rng("6d"), "<f4", (3, 4, 2, 5, 3, 2)), (2, 3, 2, 2, 2, 2), (1, 2, 1, 2, 1, 2),
         cparams("blosclz", 5), "6-D"),
        ("shape_8d", make_data(case_rng("8d"), "u1", (2, 3, 2, 3, 2, 2, 3, 2)), (1, 2, 2, 2, 1, 2, 2, 2),
         (1, 1, 2, 1, 1, 2, 1, 2), cparams("zstd", 5), "8-D"),
    ]:  # fmt: skip
        g.b2nd(name, src, chunks, blocks, cp, notes=notes)

    # 7. special chunks -------------------------------------------------------------------
    cp = cparams("zstd", 5)
    nan = np.nan
    for name, make, fill, full_shape, dt, chunks, blocks, expected, notes in [
        ("special_zeros", blosc2.zeros, (), (50, 30), "<f8", (20, 12), (7, 5), np.zeros((50, 30), "<f8"),
         "blosc2.zeros: all chunks special zero"),
        ("special_nans_f4", blosc2.nans, (), (70,), "<f4", (30,), (8,), np.full((70,), nan, "<f4"),
         "blosc2.nans: special NaN chunks (f4)"),
        ("special_nans_f8", blosc2.nans, (), (5, 9), "<f8", (2, 4), (1, 3), np.full((5, 9), nan, "<f8"),
         "blosc2.nans: special NaN chunks (f8)"),
        ("special_full_nan_f8", blosc2.full, (nan,), (40, 7), "<f8", (15, 7), (4, 3), np.full((40, 7), nan, "<f8"),
         "blosc2.full(NaN): run-length special VALUE chunks (not NaN specials)"),
        ("special_full_i2", blosc2.full, (7,), (100,), "<i2", (30,), (7,), np.full((100,), 7, "<i2"),
         "blosc2.full(7): special VALUE chunks"),
        ("special_full_c16", blosc2.full, (1 - 2j,), (6, 5), "<c16", (4, 2), (3, 1), np.full((6, 5), 1 - 2j, "<c16"),
         "special VALUE chunks, typesize 16"),
        ("special_empty", blosc2.empty, (), (45,), "<i4", (20,), (6,), np.zeros((45,), "<i4"),
         "blosc2.empty: C-Blosc2 3.3.5 b2nd_empty writes ZERO specials"),
    ]:  # fmt: skip
        maker = maker_for(make, full_shape, *fill, dtype=dt, chunks=chunks, blocks=blocks, cparams=cp)
        g.b2nd(name, None, maker=maker, expected=expected, cp=cp, notes=notes)

    UNINIT_EXP = np.zeros((60, 40), "<f8")
    UNINIT_EXP[0:20, 0:20] = make_data(case_rng("u1"), "<f8", (20, 20), styles=("smooth",))
    UNINIT_EXP[20:40, 20:40] = make_data(case_rng("u2"), "<f8", (20, 20), styles=("random",))
    uninit = maker_for(blosc2.uninit, (60, 40), dtype="<f8", chunks=(20, 20), blocks=(10, 10), cparams=cp)
    uninit_maker = with_parts(uninit, UNINIT_EXP, [np.s_[0:20, 0:20], np.s_[20:40, 20:40]])
    g.b2nd(
        "special_uninit",
        None,
        maker=uninit_maker,
        expected=UNINIT_EXP,
        cp=cp,
        notes="blosc2.uninit with two whole chunks written; the others stay UNINIT specials",
    )
    g.b2nd(
        "special_uninit_all_sparse",
        None,
        maker=maker_for(blosc2.uninit, (33,), dtype="<i2", chunks=(10,), blocks=(5,), cparams=cp),
        expected=np.zeros((33,), "<i2"),
        cp=cp,
        sparse=True,
        notes="all-uninit sparse array (no chunk files)",
    )

    ZS_EXP = np.zeros((64, 50), "<i4")
    ZS_EXP[16:40, 3:30] = make_data(case_rng("zs1"), "<i4", (24, 27), styles=("smooth", "random"))
    ZS_EXP[60:64, 45:50] = np.arange(20).reshape(4, 5) + 1000
    zeros = maker_for(blosc2.zeros, (64, 50), dtype="<i4", chunks=(16, 20), blocks=(8, 6), cparams=cp)
    zeros_slices = with_parts(zeros, ZS_EXP, [np.s_[16:40, 3:30], np.s_[60:64, 45:50]])
    for name, sparse, notes in [
        (
            "special_zeros_partial",
            False,
            "blosc2.zeros then slices written: mixture of special-zero and regular chunks",
        ),
        ("special_zeros_partial_sparse", True, "as special_zeros_partial, sparse frame"),
    ]:
        g.b2nd(name, None, maker=zeros_slices, expected=ZS_EXP, cp=cp, sparse=sparse, notes=notes)
    src = np.concatenate([np.zeros(60, "<i4"), np.arange(40, dtype="<i4"), np.zeros(30, "<i4")])
    g.b2nd(
        "special_detected_zero_chunks",
        src,
        (30,),
        (10,),
        cparams("lz4", 5),
        notes="asarray data with all-zero chunks: compressor emits special zero chunks",
    )
    g.b2nd("special_detected_zero_chunks_sparse", src, (30,), (10,), cparams("lz4", 5), sparse=True)

    # 8. sparse b2nd ----------------------------------------------------------------------
    name, cp, units = "sparse_2d_f8", cparams("zstd", 5), {"unit": "m/s", "scale": 0.5}
    seeded_b2nd(g, name, "<f8", (37, 23), (10, 8), (4, 3), cp, sparse=True, vlmeta=units, notes="sparse b2nd directory")
    cp = cparams("lz4", 5, [0, 0, 0, 0, 0, BITSHUF])
    seeded_b2nd(g, "sparse_3d_bitshuffle_u2", "<u2", (10, 9, 8), (4, 5, 3), (2, 2, 2), cp, sparse=True)

    # 9. vlmeta ---------------------------------------------------------------------------
    notes = "vlmeta with all msgpack value kinds used by python-blosc2"
    name, cp = "vlmeta_all_types", cparams("zstd", 5)
    seeded_b2nd(g, name, "<i2", (20, 10), (8, 4), (4, 2), cp, vlmeta=VLMETA_ALL, notes=notes)
    numpy_values = {"arr": np.arange(3, dtype="<i2"), "set": {1}, "np_float": np.float32(0.5)}
    notes = "numpy values in vlmeta: ndarray -> ext 46, set -> ext 45 (mapped as generic ext)"
    name, cp = "vlmeta_ndarray_value", cparams("lz4", 5)
    seeded_b2nd(g, name, "<f4", (30,), (10,), (5,), cp, vlmeta=numpy_values, notes=notes)

    # 10. plain frames --------------------------------------------------------------------
    f32 = make_data(case_rng("f32frame"), "<f4", (2500,), styles=("smooth", "random"))

    frame_f32 = maker_for(blosc2.SChunk, chunksize=4000, data=f32, cparams=cparams("zstd", 5, typesize=4))

    g.frame("frame_f32", frame_f32, notes="SChunk from float32 data, typesize 4, last chunk shorter")
    g.frame("frame_f32_sparse", frame_f32, sparse=True, notes="as frame_f32, sparse")

    schunk_lz4_i4 = maker_for(blosc2.SChunk, chunksize=4000, cparams=cparams("lz4", 5, typesize=4))

    def frame_var(u: Any, c: Any) -> Any:
        s = schunk_lz4_i4(u, c)
        s.append_data(np.arange(1000, dtype="<i4"))
        s.append_data(np.arange(500, dtype="<i4") * 3)
        s.append_data(np.arange(1000, dtype="<i4") - 50)
        s.append_data(np.arange(10, dtype="<i4"))
        return s

    g.frame("frame_variable_chunks", frame_var, notes="append_data with different lengths -> chunksize 0 (variable)")

    def frame_upd(u: Any, c: Any) -> Any:
        s = schunk_lz4_i4(u, c)
        for i in range(4):
            s.append_data(np.arange(1000, dtype="<i4") * (i + 1))
        s.update_chunk(
            1,
            blosc2.compress2(
                np.arange(300, dtype="<i4"),
                typesize=4,
                codec=C.ZSTD,
                clevel=3,
                filters=[0, 0, 0, 0, 0, BITSHUF],
                filters_meta=[0] * 6,
                nthreads=1,
            ),
        )
        s.update_chunk(
            2, blosc2.compress2(np.full(1000, 9, "<i4").tobytes(), typesize=4, codec=C.BLOSCLZ, clevel=0, nthreads=1)
        )
        # NB: no special-offset chunk here: in a frame with variable chunk sizes C-Blosc2 3.3.5
        # stores it but cannot read it back (the chunk size of a special offset is taken from
        # the frame's chunksize, which is 0)
        return s

    g.frame(
        "frame_updated_chunks",
        frame_upd,
        notes="chunk 1 replaced by a shorter zstd/bitshuffle chunk, chunk 2 by a memcpyed blosclz chunk "
        "(codec/filters per chunk differ from the frame header)",
    )

    def frame_special(u: Any, c: Any) -> Any:
        s = maker_for(blosc2.SChunk, chunksize=800, cparams=cparams("zstd", 5, typesize=8))(u, c)
        s.fill_special(1000, blosc2.SpecialValue.NAN)
        s.update_data(2, np.arange(100, dtype="<f8"), copy=True)
        s.update_special(3, blosc2.SpecialValue.VALUE, 2.5)
        s.update_special(4, blosc2.SpecialValue.ZERO)
        return s

    g.frame("frame_specials_f8", frame_special, notes="fill_special NaN + one regular, one value, one zero chunk")

    text = (b"Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 120)[:7000]
    frame_bytes = maker_for(blosc2.SChunk, chunksize=1500, data=text, cparams=cparams("zlib", 6, [0] * 6, typesize=1))

    g.frame(
        "frame_bytes_typesize1",
        frame_bytes,
        vlmeta={"title": "lorem", "n": 7000, "z": complex(0, 1)},
        notes="typesize 1 text, with vlmeta",
    )

    frame_meta = maker_for(
        blosc2.SChunk,
        chunksize=1024,
        data=np.arange(700, dtype="<u2"),
        cparams=cparams("blosclz", 9, [0, 0, 0, 0, DELTA, SHUF], typesize=2),
        meta={"mymeta": [1, 2, 3], "other": "x"},
    )

    g.frame("frame_custom_metalayers", frame_meta, notes="plain frame with non-b2nd fixed-length metalayers")

    data = (np.arange(6000) % 255).astype("<i2")
    frame_dict = maker_for(
        blosc2.SChunk, chunksize=8000, data=data, cparams=cparams("zstd", 5, use_dict=True, typesize=2)
    )

    g.frame("frame_dict_zstd_sparse", frame_dict, sparse=True, notes="sparse plain frame with zstd dictionaries")

    frame_empty = maker_for(blosc2.SChunk, chunksize=100, cparams=cparams("zstd", 5, typesize=4))

    g.frame("frame_no_chunks", frame_empty, notes="SChunk with no chunks at all")

    # 11. caterva -------------------------------------------------------------------------
    name = "caterva_2d_f4"
    g.caterva(
        name,
        make_data(case_rng(name), "<f4", (37, 23)),
        (10, 8),
        (4, 3),
        cparams("zlib", 6),
        notes="legacy 'caterva' metalayer (no dtype): 5-element msgpack array",
    )
    name = "caterva_3d_i2_delta"
    g.caterva(
        name,
        make_data(case_rng(name), "<i2", (9, 14, 11)),
        (4, 5, 6),
        (2, 3, 4),
        cparams("lz4", 5, [0, 0, 0, 0, DELTA, SHUF]),
    )
    name = "caterva_1d_u1_sparse"
    g.caterva(name, make_data(case_rng(name), "u1", (1000,)), (300,), (64,), cparams("zstd", 5), sparse=True)
    name = "caterva_0d"
    g.caterva(name, np.array(123456789, "<i8"), (), (), cparams("blosclz", 5))
    nd_fixed(g)
