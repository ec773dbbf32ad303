"""Write the table and variable-length fixtures of issue 43, with their expected reads.

Usage::

    python scripts/gen/gen_tables.py [--long] OUTDIR

Needs python-blosc2 4.14.1 with numpy, pandas and pyarrow. OUTDIR is emptied of the
names below, then receives (each fixture a few KB, all well under 1 MB):

Tables (CTable), each with deleted rows unless said otherwise:

- ``kinds.b2d``: a dataclass schema with a column of every kind python-blosc2 has
  (integers, floats, bool, utf8, fixed-width string, nullable ones under the default
  mask storage, dictionary, list in batch and vl storage, struct, vlstring, vlbytes,
  timestamp, fixed-shape ndarray), a computed column and a generated one; the first,
  two middle and the last rows deleted. ``kinds.b2z`` is the same table packed
  physically (``CTable.to_b2z``: deleted rows and indexes kept).
- ``objcol.b2d``: an object column and a complex one (``to_arrow`` refuses both).
- ``arrow.b2d`` / ``arrow.b2z``: built ``from_arrow`` (a nested struct flattened to
  dotted leaves, dictionary, list, string, binary, timestamp, nulls), several chunks.
  ``arrow_lists.b2d``: the same with ``list_serializer="arrow"``.
- ``sentinel.b2d``: ``from_arrow(null_storage="sentinel")``: nulls as in-band values.
- ``pandas.b2d``: built ``from_pandas``; ``pandas.b2z``: its ``CTable.save`` copy
  (compacted: no deleted rows, no indexes).
- ``capacity.b2d``: a table whose storage was closed without ``CTable.close``, so
  fixed-width columns and the valid-rows mask keep spare capacity past the last row.
- ``indexed.b2d``: a table with a FULL index on an integer and on a utf8 column.
- ``tree.b2z`` / ``tree.b2d``: TreeStores holding a table at ``/grp/tbl`` beside arrays.
- ``frame.b2e``: ``CTable.to_cframe()`` written as a file (an EmbedStore whose root is
  the table).

With ``--long``, only ``long.b2d`` (150,000 rows, three record batches, deleted rows in
each and across a batch boundary, a nullable utf8, a dictionary, a nullable fixed-width
string and a nullable list column; about 150 KB) and ``long.b2d.expected/items/<column>.jsonl``.

Containers: ``list_vl.b2b``, ``list_batch.b2b``, ``list_arrow.b2b`` (ListArray, both
storages and both batch serializers), ``batch_msgpack.b2b``, ``batch_arrow.b2b``
(BatchArray, several blocks per batch), ``objects.b2f`` (ObjectArray). Indexes:
``ndindex.b2nd`` (an NDArray with a bucket index: ``ndindex.__index__.*`` sidecars);
``ndindex_tree.b2d`` / ``ndindex_tree.b2z``: TreeStores whose value ``/grp/a`` has one
(sidecar values ``/grp/a.__index__.*``) beside plain values ``/b`` and ``/grp/c``.

Beside each fixture, ``<name>.expected/`` holds what python-blosc2 itself reads from
the file once written (opened again read-only), never anything computed another way.
For a store, a table's files are under ``<name>.expected/<key>/``. For a table:

- ``schema.json``: the ``_meta`` vlmeta (``schema_text`` verbatim: it may hold the
  non-JSON tokens ``NaN``/``Infinity``), the parsed schema, ``nrows``,
  ``physical_rows`` (length of ``_valid_rows``), ``deleted`` (positions below it
  that are not valid), ``col_names``, the ``to_pandas`` columns and dtypes, the
  ``to_arrow`` fields (name, type, nullable) or the error ``to_arrow`` raised, the
  index catalog's columns and kinds, and the table's storage keys.
- ``pandas.csv``: ``to_pandas().to_csv(index=False)``.
- ``pandas.json``: ``{"columns": [...], "values": {column: [cell, ...]}}`` from
  ``to_pandas``.
- ``arrow.json``: the same from ``to_arrow`` (exact nulls), and ``table.arrow``:
  ``to_arrow()`` as an Arrow IPC file (Feather v2, uncompressed).

For a container: ``items.jsonl`` (one line per ListArray row, ObjectArray item or
BatchArray item, in order), for a BatchArray also ``batches.jsonl`` (one line per
batch, as python-blosc2 iterates it), and ``meta.json`` (metalayers and vlmeta).
For an indexed NDArray: ``values.json`` and ``index.json`` (its ``blosc2_indexes``
vlmeta and the sidecar files; in a store, the indexed key and its sidecar keys), and
``sidecars/<sidecar>.bin``: each sidecar's values as python-blosc2 reads them
(``[...]``, C order), named by the sidecar's file name (a store's: its key's last part). ``OUTDIR/manifest.json`` lists every fixture with its
kind, size and the sha256 of each file.

JSON cells: null for a null (None, NA, NaT; a NaN in a column that is not float);
floats as Python writes them, NaN as "NaN", infinities as "Infinity"/"-Infinity";
bytes as {"base64": ...}; complex as {"real": r, "imag": i}; timestamps as integers
in the column's unit (given in the arrow field type); lists, ndarray cells and
structs as JSON lists and objects.
"""

# python-blosc2 declares a CTable's columns as dataclass fields whose defaults are
# blosc2.field(...) calls: that is its API, not a shared mutable default.
# ruff: noqa: RUF009

from __future__ import annotations

import base64
import dataclasses
import datetime
import hashlib
import json
import math
import os
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Any

import blosc2
import numpy as np
import pandas as pd
import pyarrow as pa
from pyarrow import feather

Json = Any

# ---------------------------------------------------------------------------
# JSON conversion
# ---------------------------------------------------------------------------


def _float_json(value: float) -> Json:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def cell_json(value: Any, *, float_column: bool = True) -> Json:
    """One cell as JSON, by the rules in the module docstring."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.ndarray):
        return [cell_json(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value) and not float_column:
            return None
        return _float_json(value)
    if isinstance(value, complex):
        return {"real": _float_json(value.real), "imag": _float_json(value.imag)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"base64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return {str(k): cell_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [cell_json(v) for v in value]
    if isinstance(value, (datetime.datetime, datetime.date, pd.Timestamp)):
        return value.isoformat()
    raise TypeError(f"no JSON form for {type(value).__name__}: {value!r}")


def dump_json(path: Path, doc: Json) -> None:
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")


def write_jsonl(path: Path, lines: list[Json]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n")


def pandas_json(df: Any) -> Json:
    """Per-column cells of a DataFrame (timestamps as integers in their unit)."""
    values: dict[str, list[Json]] = {}
    for name in df.columns:
        series = df[name]
        dtype = series.dtype
        if getattr(dtype, "kind", None) == "M":
            missing = series.isna().to_numpy()
            ints = series.to_numpy().view("int64")
            values[str(name)] = [None if m else int(v) for v, m in zip(ints, missing)]
            continue
        is_float = getattr(dtype, "kind", None) == "f"
        values[str(name)] = [cell_json(v, float_column=is_float) for v in series.tolist()]
    return {"columns": [str(c) for c in df.columns], "values": values}


def arrow_column_json(column: Any) -> list[Json]:
    typ = column.type
    if pa.types.is_timestamp(typ):
        return [cell_json(v) for v in column.cast(pa.int64()).to_pylist()]
    return [cell_json(v) for v in column.to_pylist()]


def arrow_json(table: Any) -> Json:
    return {
        "columns": list(table.column_names),
        "values": {name: arrow_column_json(table.column(name)) for name in table.column_names},
    }


def meta_json_value(value: Any) -> Json:
    """A metalayer or vlmeta value as JSON (bytes as base64, tuples as lists)."""
    return cell_json(value)


# ---------------------------------------------------------------------------
# Expected reads
# ---------------------------------------------------------------------------


def _open_store(path: Path) -> Any:
    if path.suffix == ".b2e":
        return blosc2.EmbedStore(urlpath=str(path), mode="r")
    return blosc2.TreeStore(str(path), mode="r")


def table_expected(path: Path, root: str, out: Path) -> dict[str, Json]:
    """Write the expected reads of the table at key ``root`` of the store at ``path``."""
    out.mkdir(parents=True, exist_ok=True)
    store = _open_store(path)
    base = "" if root in ("", "/") else root.rstrip("/")
    meta = store[f"{base}/_meta"]
    vlmeta = {str(k): meta.vlmeta[k] for k in list(meta.vlmeta)}
    schema_text = str(vlmeta.pop("schema"))
    valid = np.asarray(store[f"{base}/_valid_rows"][:], dtype=bool)
    if path.suffix == ".b2e":
        members = [str(k) for k in list(store)]
    else:
        members = ["/" + m.rsplit(".", 1)[0] for m in _members(path) if m != "embed.b2e"]
    storage_keys = sorted(k for k in members if k.startswith(base + "/_"))
    if hasattr(store, "close"):
        store.close()

    if path.suffix == ".b2e":
        table = blosc2.ctable_from_cframe(path.read_bytes())
    elif base:
        table_store = blosc2.TreeStore(str(path), mode="r")
        table = table_store[base]
    else:
        table = blosc2.CTable.open(str(path), mode="r")

    df = table.to_pandas()
    df.to_csv(out / "pandas.csv", index=False, lineterminator="\n")
    dump_json(out / "pandas.json", pandas_json(df))
    arrow_doc: dict[str, Json]
    try:
        at = table.to_arrow()
    except Exception as e:  # noqa: BLE001 - the refusal is the expected read
        arrow_doc = {"error": f"{type(e).__name__}: {e}"}
    else:
        feather.write_feather(at, str(out / "table.arrow"), compression="uncompressed")
        dump_json(out / "arrow.json", arrow_json(at))
        arrow_doc = {
            "fields": [{"name": f.name, "type": str(f.type), "nullable": bool(f.nullable)} for f in at.schema],
            "num_rows": at.num_rows,
        }
    catalog = vlmeta.get("index_catalog") or {}
    doc = {
        "key": base or "/",
        "schema_text": schema_text,
        "schema": cell_json(json.loads(schema_text)),
        "vlmeta": {k: meta_json_value(v) for k, v in vlmeta.items() if k != "index_catalog"},
        "nrows": int(table.nrows),
        "physical_rows": int(valid.shape[0]),
        "deleted": [int(i) for i in np.flatnonzero(~valid)],
        "col_names": [str(c) for c in table.col_names],
        "pandas": {"columns": [str(c) for c in df.columns], "dtypes": [str(d) for d in df.dtypes]},
        "arrow": arrow_doc,
        "indexes": {str(col): str(desc.get("kind")) for col, desc in catalog.items()},
        "storage_keys": storage_keys,
    }
    dump_json(out / "schema.json", doc)
    if hasattr(table, "close"):
        table.close()
    return {"key": doc["key"], "nrows": doc["nrows"], "deleted": doc["deleted"]}


def container_expected(path: Path, out: Path) -> dict[str, Json]:
    """Expected items of a ListArray, BatchArray or ObjectArray file."""
    out.mkdir(parents=True, exist_ok=True)
    obj = blosc2.open(str(path), mode="r")
    kind = type(obj).__name__
    metalayers = {str(k): meta_json_value(obj.meta[k]) for k in list(obj.meta)}
    vlmeta = {str(k): meta_json_value(obj.vlmeta[k]) for k in list(obj.vlmeta)}
    doc: dict[str, Json] = {"class": kind, "metalayers": metalayers, "vlmeta": vlmeta, "len": len(obj)}
    if kind == "BatchArray":
        batches = [[cell_json(v) for v in list(batch)] for batch in obj]
        write_jsonl(out / "batches.jsonl", batches)
        write_jsonl(out / "items.jsonl", [item for batch in batches for item in batch])
        doc["batch_lengths"] = [len(b) for b in batches]
    else:
        write_jsonl(out / "items.jsonl", [cell_json(obj[i]) for i in range(len(obj))])
    dump_json(out / "meta.json", doc)
    return {"class": kind, "len": len(obj)}


def ndindex_expected(path: Path, out: Path) -> dict[str, Json]:
    out.mkdir(parents=True, exist_ok=True)
    arr = blosc2.open(str(path), mode="r")
    dump_json(
        out / "values.json",
        {"dtype": str(arr.dtype), "shape": list(arr.shape), "values": cell_json(np.asarray(arr[:]))},
    )
    stem = path.name[: -len(".b2nd")]
    sidecars = sorted(p.name for p in path.parent.iterdir() if p.name.startswith(stem + ".__index__."))
    dump_json(
        out / "index.json",
        {"blosc2_indexes": meta_json_value(arr.schunk.vlmeta["blosc2_indexes"]), "sidecars": sidecars},
    )
    (out / "sidecars").mkdir(exist_ok=True)
    for name in sidecars:
        sidecar = blosc2.open(str(path.parent / name), mode="r")
        (out / "sidecars" / (name + ".bin")).write_bytes(np.ascontiguousarray(sidecar[...]).tobytes())
    return {"sidecars": sidecars}


NDINDEX_KEY = "/grp/a"


def ndindex_store_expected(path: Path, out: Path) -> dict[str, Json]:
    """A TreeStore's indexed value: its index vlmeta, sidecar keys and their values."""
    (out / "sidecars").mkdir(parents=True, exist_ok=True)
    with blosc2.TreeStore(str(path), mode="r") as store:
        keys = sorted(store.keys())
        arr = store[NDINDEX_KEY]
        sidecars = [k for k in keys if k.startswith(NDINDEX_KEY + ".__index__.")]
        for key in sidecars:
            values = np.ascontiguousarray(store[key][...])
            (out / "sidecars" / (key.rsplit("/", 1)[-1] + ".bin")).write_bytes(values.tobytes())
        doc = {
            "indexed": NDINDEX_KEY,
            "keys": keys,
            "sidecars": sidecars,
            "blosc2_indexes": meta_json_value(arr.schunk.vlmeta["blosc2_indexes"]),
        }
    dump_json(out / "index.json", doc)
    return {"indexed": NDINDEX_KEY, "sidecars": sidecars}


# ---------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------

TEXTS = [
    "alpha",
    "a,b",
    'say "hi"',
    "line1\nline2",
    "cr\r\nlf",
    "héllo ✓ 日本",
    "",
    " padded ",
    "007",
    "NA",
]


@dataclasses.dataclass
class KindsRow:
    """Every column kind of python-blosc2 4.14.1's CTable schemas."""

    i64: int = blosc2.field(blosc2.int64(), chunks=(8,), blocks=(4,))
    u8: int = blosc2.field(blosc2.uint8())
    f64: float = blosc2.field(blosc2.float64())
    ok: bool = blosc2.field(blosc2.bool())
    name: str = blosc2.field(blosc2.utf8())
    n_i32: int = blosc2.field(blosc2.int32(nullable=True))
    n_f32: float = blosc2.field(blosc2.float32(nullable=True))
    n_bool: bool = blosc2.field(blosc2.bool(nullable=True))
    n_text: str = blosc2.field(blosc2.utf8(nullable=True))
    fixed: str = blosc2.field(blosc2.string(max_length=6))
    cat: str = blosc2.field(blosc2.dictionary())
    tags: list[int] = blosc2.field(blosc2.list(blosc2.int64(), nullable=True, batch_rows=8))
    words: list[str] = blosc2.field(blosc2.list(blosc2.string(max_length=8), storage="vl"))
    trip: dict = blosc2.field(blosc2.struct({"lon": blosc2.float64(), "tag": blosc2.string()}))  # type: ignore[type-arg]
    vs: str = blosc2.field(blosc2.vlstring(nullable=True))
    vb: bytes = blosc2.field(blosc2.vlbytes(nullable=True))
    when: int = blosc2.field(blosc2.timestamp(unit="ms", nullable=True))
    vec: object = blosc2.field(blosc2.ndarray((2,), dtype=np.float32))


def kinds_rows(n: int) -> list[tuple[Any, ...]]:
    rows = []
    for i in range(n):
        null = i % 4 == 1
        rows.append(
            (
                i * 1000 - 3,
                (i * 37) % 256,
                i / 4 - 1.0,
                i % 3 == 0,
                TEXTS[i % len(TEXTS)],
                None if null else i - 5,
                None if null else (float("nan") if i % 7 == 3 else i * 0.5),
                None if null else i % 2 == 0,
                None if null else TEXTS[(i + 3) % len(TEXTS)],
                ["ab", "c,d", "", "é"][i % 4],
                None if i % 5 == 2 else ["red", "green", "blue"][i % 3],
                None if i % 6 == 4 else list(range(i % 4)),
                [f"w{k}" for k in range(i % 3)],
                {"lon": i * 1.5, "tag": f"t{i % 2}"},
                None if null else f'v{i},"{i}"',
                None if null else bytes([i, 0, 255]),
                None if null else 1_600_000_000_000 + i * 1000,
                np.array([i, -i], dtype=np.float32),
            )
        )
    return rows


def gen_kinds(out: Path) -> None:
    path = out / "kinds.b2d"
    t = blosc2.CTable(KindsRow, urlpath=str(path), mode="w", expected_size=20)
    t.extend(kinds_rows(20))
    t.add_computed_column("twice", "i64 * 2")
    t.add_computed_column("ratio", "f64 + n_i32")
    t.add_generated_column("i64_plus", values="i64 + 1", dtype=np.int64)
    t.delete([0, 5, 6, 19])
    t.vlmeta["author"] = "gen_tables"
    t.close()
    t = blosc2.CTable.open(str(path), mode="r")
    t.to_b2z(str(out / "kinds.b2z"))
    t.close()


@dataclasses.dataclass
class ObjRow:
    """Kinds ``to_arrow`` refuses: object and complex."""

    k: int = blosc2.field(blosc2.int32())
    obj: object = blosc2.field(blosc2.object(nullable=True))
    z: complex = blosc2.field(blosc2.complex128(nullable=True))


def gen_objcol(out: Path) -> None:
    t = blosc2.CTable(ObjRow, urlpath=str(out / "objcol.b2d"), mode="w", expected_size=8)
    values: list[Any] = [{"a": 1, "b": [1, 2]}, None, [1, "x", None], "s", 2.5, True, b"\x00\x01"]
    for i, v in enumerate(values):
        t.append((i, v, None if i == 3 else complex(i, -i)))
    t.delete([2])
    t.close()


def arrow_source() -> Any:
    trip = pa.struct([("begin", pa.struct([("lon", pa.float64()), ("lat", pa.float64())])), ("n", pa.int32())])
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("x", pa.float32()),
            pa.field("ni", pa.int64()),
            pa.field("s", pa.string()),
            pa.field("d", pa.dictionary(pa.int32(), pa.string())),
            pa.field("l", pa.list_(pa.int32())),
            pa.field("trip", trip),
            pa.field("b", pa.bool_()),
            pa.field("ts", pa.timestamp("us")),
            pa.field("bin", pa.binary()),
        ]
    )
    n = 24
    data = {
        "id": list(range(n)),
        "x": [None if i % 5 == 1 else (float("nan") if i == 3 else i * 0.25) for i in range(n)],
        "ni": [None if i % 4 == 2 else i * 10 for i in range(n)],
        "s": [None if i % 6 == 1 else TEXTS[i % len(TEXTS)] for i in range(n)],
        "d": pa.array([None if i % 7 == 3 else ["r", "g", "b"][i % 3] for i in range(n)]).dictionary_encode(),
        "l": [None if i % 8 == 5 else list(range(i % 3)) for i in range(n)],
        "trip": [
            {"begin": {"lon": i * 1.0, "lat": None if i % 5 == 4 else -i * 1.0}, "n": None if i % 3 == 2 else i}
            for i in range(n)
        ],
        "b": [None if i % 5 == 0 else i % 2 == 0 for i in range(n)],
        "ts": [None if i % 9 == 4 else 1_700_000_000_000_000 + i for i in range(n)],
        "bin": [None if i % 6 == 3 else bytes([i]) * (i % 3) for i in range(n)],
    }
    return pa.table(data, schema=schema)


def gen_arrow(out: Path) -> None:
    source = arrow_source()
    for name, serializer in [("arrow.b2d", "msgpack"), ("arrow_lists.b2d", "arrow"), ("arrow.b2z", "msgpack")]:
        t = blosc2.CTable.from_arrow(
            source.schema,
            source.to_batches(max_chunksize=10),
            urlpath=str(out / name),
            list_serializer=serializer,
            chunks=8,
            blocks=4,
        )
        t.delete([0, 7, 8, 23])
        t.close()


def gen_sentinel(out: Path) -> None:
    source = pa.table(
        {
            "i": pa.array([1, None, 3, 4, None], pa.int16()),
            "u": pa.array([1, None, 3, 250, 7], pa.uint8()),
            "f": pa.array([1.5, None, float("nan"), 2.5, -0.0], pa.float32()),
            "b": pa.array([True, None, False, True, None]),
            "s": pa.array(["a", None, "", "d,e", "__BLOSC2_NULL__x"]),
            "ts": pa.array([1, None, 3, 4, 5], pa.timestamp("s")),
        }
    )
    t = blosc2.CTable.from_arrow(
        source.schema, source.to_batches(), urlpath=str(out / "sentinel.b2d"), null_storage="sentinel"
    )
    t.delete([3])
    t.close()


@dataclasses.dataclass
class PandasRow:
    """The schema ``from_pandas`` needs (it infers none)."""

    a: int = blosc2.field(blosc2.int32())
    s: str = blosc2.field(blosc2.utf8(nullable=True))
    g: float = blosc2.field(blosc2.float64(nullable=True))
    flag: bool = blosc2.field(blosc2.bool())


def gen_pandas(out: Path) -> None:
    df = pd.DataFrame(
        {
            "a": np.arange(6, dtype=np.int32),
            "s": ["x", None, "z,", 'q"', "", "ü"],
            "g": [0.5, None, 2.5, 3.5, float("nan"), 1e300],
            "flag": [True, False, True, True, False, True],
        }
    )
    t = blosc2.CTable.from_pandas(df, PandasRow)
    t.delete([1, 4])
    # Persist through a file-backed copy: from_pandas builds in memory.
    t.save(str(out / "pandas.b2z"))
    live = blosc2.CTable(PandasRow, urlpath=str(out / "pandas.b2d"), mode="w", expected_size=8)
    live.extend(blosc2.CTable.from_pandas(df, PandasRow))
    live.delete([1, 4])
    live.close()


@dataclasses.dataclass
class SmallRow:
    """A small table for capacity, index, store and frame fixtures."""

    a: int = blosc2.field(blosc2.int32())
    s: str = blosc2.field(blosc2.utf8(nullable=True))
    l: list[int] = blosc2.field(blosc2.list(blosc2.int64()))  # noqa: E741 (the column's name in the fixture)


def small_rows(n: int) -> list[tuple[Any, ...]]:
    return [(i * 3, None if i % 4 == 2 else f"s{i}", list(range(i % 3))) for i in range(n)]


def gen_capacity(out: Path) -> None:
    t = blosc2.CTable(SmallRow, urlpath=str(out / "capacity.b2d"), mode="w", expected_size=64)
    t.extend(small_rows(6))
    t.delete([1])
    # What a writer that never calls CTable.close leaves: the varlen columns
    # flushed, the fixed-width ones and _valid_rows still at their capacity.
    t._flush_varlen_columns()
    t._storage.close()
    t._storage = None


def gen_indexed(out: Path) -> None:
    t = blosc2.CTable(SmallRow, urlpath=str(out / "indexed.b2d"), mode="w", expected_size=16)
    t.extend(small_rows(10))
    t.create_index("a", kind=blosc2.IndexKind.FULL)
    t.create_index("s", kind=blosc2.IndexKind.FULL)
    t.delete([0, 4])
    t.close()


def gen_stores(out: Path) -> None:
    for name in ["tree.b2z", "tree.b2d"]:
        with blosc2.TreeStore(str(out / name), mode="w") as ts:
            ts["/arr"] = np.arange(5, dtype=np.int16)
            table = blosc2.CTable(SmallRow, new_data=small_rows(5))
            table.delete([2])
            ts["/grp/tbl"] = table
            ts["/grp/x"] = np.linspace(0, 1, 3)


def gen_frame(out: Path) -> None:
    t = blosc2.CTable(SmallRow, new_data=small_rows(5))
    t.delete([3])
    (out / "frame.b2e").write_bytes(t.to_cframe())


def gen_containers(out: Path) -> None:
    lv = blosc2.ListArray(
        item_spec=blosc2.int64(), nullable=True, storage="vl", urlpath=str(out / "list_vl.b2b"), mode="w"
    )
    lv.extend([[1, 2], None, [], [3], [-4, 5, 6]])
    lv.close() if hasattr(lv, "close") else None
    lb = blosc2.ListArray(
        item_spec=blosc2.string(max_length=8),
        nullable=True,
        storage="batch",
        batch_rows=3,
        items_per_block=2,
        urlpath=str(out / "list_batch.b2b"),
        mode="w",
    )
    lb.extend([["a", "b"], None, [], ["c"], ["d,e", 'f"'], ["é"], ["x"]])
    lb.flush()
    la = blosc2.ListArray(
        item_spec=blosc2.float64(),
        storage="batch",
        serializer="arrow",
        batch_rows=3,
        items_per_block=2,
        urlpath=str(out / "list_arrow.b2b"),
        mode="w",
    )
    la.extend([[1.0], [2.0, float("nan")], [], [4.5], [5.5, -0.0]])
    la.flush()
    bm = blosc2.BatchArray(serializer="msgpack", items_per_block=2, urlpath=str(out / "batch_msgpack.b2b"), mode="w")
    bm.append([1, 2, 3])
    bm.append(["x", {"k": None}, [1.5, True], b"\x00"])
    ba = blosc2.BatchArray(serializer="arrow", items_per_block=2, urlpath=str(out / "batch_arrow.b2b"), mode="w")
    ba.append(["a", "bb", None, "dddd", "e"])
    ba.append(["f"])
    bs = blosc2.BatchArray(serializer="arrow", items_per_block=2, urlpath=str(out / "batch_arrow_struct.b2b"), mode="w")
    bs.append([{"p": 1, "q": [1.0]}, {"p": None, "q": []}, {"p": 3, "q": None}])
    oa = blosc2.ObjectArray(urlpath=str(out / "objects.b2f"), mode="w")
    for v in [1, "two", [3, 4], {"five": 5.0, "n": None}, None, b"\x00\x01", True, -2.5, 2**40]:
        oa.append(v)


def gen_ndindex(out: Path) -> None:
    # A relative urlpath (the working directory is ``out``): the index records
    # its sidecars' paths as given, and an absolute one would tie them to ``out``.
    arr = blosc2.asarray(
        np.arange(64, dtype=np.int32)[::-1].copy(), urlpath="ndindex.b2nd", mode="w", chunks=(32,), blocks=(16,)
    )
    arr.create_index()
    for name in NDINDEX_STORES:
        with blosc2.TreeStore(name, mode="w") as store:
            store[NDINDEX_KEY] = np.arange(100, dtype=np.int64)[::-1].copy()
            store["/b"] = np.arange(8, dtype=np.float64)
            store["/grp/c"] = np.arange(6, dtype=np.int16)
            store[NDINDEX_KEY].create_index()


@dataclasses.dataclass
class LongRow:
    """A table longer than one record batch (65,536 physical rows)."""

    id: int = blosc2.field(blosc2.int64())
    name: str = blosc2.field(blosc2.utf8(nullable=True))
    cat: str = blosc2.field(blosc2.dictionary())
    code: str = blosc2.field(blosc2.string(max_length=6, nullable=True))
    tags: list[int] = blosc2.field(blosc2.list(blosc2.int64(), nullable=True))


LONG_ROWS = 150_000
# Deleted: the first and last rows, a run crossing the first batch boundary
# (physical row 65,536) and every 1000th row of the last batch.
LONG_DELETED = [0, LONG_ROWS - 1, *range(65_000, 66_000), *range(131_072 + 5, LONG_ROWS - 1, 1000)]
LONG_COLUMNS = ["name", "cat", "code", "tags"]


def long_rows(n: int) -> list[tuple[Any, ...]]:
    return [
        (
            i,
            None if i % 11 == 3 else (f'r{i % 500},"é"' if i % 2 else f"r{i % 500}"),
            None if i % 13 == 5 else ["a", "b,c", "✓"][i % 3],
            None if i % 17 == 2 else f"c{i % 1000}",
            None if i % 19 == 4 else list(range(i % 4)),
        )
        for i in range(n)
    ]


def gen_long(out: Path) -> None:
    path = out / "long.b2d"
    t = blosc2.CTable(LongRow, urlpath=str(path), mode="w", expected_size=LONG_ROWS)
    t.extend(long_rows(LONG_ROWS))
    t.delete(LONG_DELETED)
    t.close()


def long_expected(path: Path, out: Path) -> dict[str, Json]:
    """``items/<column>.jsonl``: each column's values as ``to_arrow`` reads them, one line a
    live row in items.jsonl's form (compact JSON, text as UTF-8), so files compare byte for byte."""
    (out / "items").mkdir(parents=True, exist_ok=True)
    table = blosc2.CTable.open(str(path), mode="r")
    at = table.to_arrow()
    for name in LONG_COLUMNS:
        with (out / "items" / f"{name}.jsonl").open("w", encoding="utf-8", newline="\n") as f:
            for v in arrow_column_json(at.column(name)):
                f.write(json.dumps(v, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n")
    doc = {"nrows": int(table.nrows), "columns": LONG_COLUMNS}
    dump_json(out / "expected.json", doc)
    table.close()
    return doc


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

TABLES: dict[str, list[str]] = {
    "kinds.b2d": ["/"],
    "kinds.b2z": ["/"],
    "objcol.b2d": ["/"],
    "arrow.b2d": ["/"],
    "arrow.b2z": ["/"],
    "arrow_lists.b2d": ["/"],
    "sentinel.b2d": ["/"],
    "pandas.b2d": ["/"],
    "pandas.b2z": ["/"],
    "capacity.b2d": ["/"],
    "indexed.b2d": ["/"],
    "tree.b2z": ["/grp/tbl"],
    "tree.b2d": ["/grp/tbl"],
    "frame.b2e": ["/"],
}
CONTAINERS = [
    "list_vl.b2b",
    "list_batch.b2b",
    "list_arrow.b2b",
    "batch_msgpack.b2b",
    "batch_arrow.b2b",
    "batch_arrow_struct.b2b",
    "objects.b2f",
]
NDINDEX = ["ndindex.b2nd"]
NDINDEX_STORES = ["ndindex_tree.b2d", "ndindex_tree.b2z"]
# Written only with --long (its 150,000 rows would slow the suites that read every table).
LONG = ["long.b2d"]


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _clear(out: Path) -> None:
    names = list(TABLES) + CONTAINERS + NDINDEX + NDINDEX_STORES + LONG
    for p in out.iterdir():
        if any(p.name == n or p.name == n + ".expected" for n in names) or ".__index__." in p.name:
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    manifest = out / "manifest.json"
    if manifest.exists():
        manifest.unlink()


def _members(path: Path) -> list[str]:
    if path.suffix == ".b2z":
        with zipfile.ZipFile(path) as z:
            return [i.filename for i in z.infolist()]
    return [str(p.relative_to(path)) for p in _files(path)] if path.is_dir() else [path.name]


def main_long(out: Path) -> int:
    """Write only the long table (``--long``) and its manifest entry."""
    gen_long(out)
    doc = long_expected(out / "long.b2d", out / "long.b2d.expected")
    files = _files(out / "long.b2d")
    entry = {
        "kind": "ctable",
        **doc,
        "size": sum(p.stat().st_size for p in files),
        "sha256": {str(p.relative_to(out)): _digest(p) for p in files},
    }
    dump_json(out / "manifest.json", {"blosc2": blosc2.__version__, "fixtures": {"long.b2d": entry}})
    print(f"1 fixture, {entry['size']} bytes, in {out}")
    return 0


def main(argv: list[str]) -> int:
    long = argv[1:2] == ["--long"]
    if len(argv) != 2 + long:
        print(__doc__.split("\n\n")[1] if __doc__ else "usage: gen_tables.py [--long] OUTDIR", file=sys.stderr)
        return 2
    assert blosc2.__version__ == "4.14.1", f"python-blosc2 {blosc2.__version__}, not 4.14.1"
    # One thread: the same bytes on every run (with several, C-Blosc2 may place a
    # chunk's compressed blocks in another order; a .b2z still differs in its zip
    # members' timestamps).
    blosc2.set_nthreads(1)
    out = Path(argv[-1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    _clear(out)
    if long:
        return main_long(out)
    cwd = os.getcwd()
    try:
        os.chdir(out)  # index sidecar paths are recorded relative to the array
        gen_kinds(out)
        gen_objcol(out)
        gen_arrow(out)
        gen_sentinel(out)
        gen_pandas(out)
        gen_capacity(out)
        gen_indexed(out)
        gen_stores(out)
        gen_frame(out)
        gen_containers(out)
        gen_ndindex(out)
    finally:
        os.chdir(cwd)

    manifest: dict[str, Json] = {"blosc2": blosc2.__version__, "fixtures": {}}
    for name, roots in TABLES.items():
        path = out / name
        tables = []
        for root in roots:
            sub = out / (name + ".expected") / root.strip("/") if root != "/" else out / (name + ".expected")
            tables.append(table_expected(path, root, sub))
        manifest["fixtures"][name] = {
            "kind": "store" if roots != ["/"] else "ctable",
            "tables": tables,
            "members": _members(path),
        }
    for name in CONTAINERS:
        manifest["fixtures"][name] = {"kind": "container", **container_expected(out / name, out / (name + ".expected"))}
    for name in NDINDEX:
        manifest["fixtures"][name] = {
            "kind": "ndarray-index",
            **ndindex_expected(out / name, out / (name + ".expected")),
        }
    for name in NDINDEX_STORES:
        manifest["fixtures"][name] = {
            "kind": "ndarray-index-store",
            **ndindex_store_expected(out / name, out / (name + ".expected")),
            "members": _members(out / name),
        }

    total = 0
    for name, entry in manifest["fixtures"].items():
        files = _files(out / name)
        if name in NDINDEX:
            files += sorted(out / s for s in entry["sidecars"])
        entry["size"] = sum(p.stat().st_size for p in files)
        entry["sha256"] = {str(p.relative_to(out)): _digest(p) for p in files}
        total += entry["size"]
    manifest["total_size"] = total
    dump_json(out / "manifest.json", manifest)
    print(f"{len(manifest['fixtures'])} fixtures, {total} bytes, in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
