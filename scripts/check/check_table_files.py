#!/usr/bin/env python3
"""Read every table's ``table.csv`` and ``table.arrow`` of a mount as pandas, pyarrow and polars do.

    check_table_files.py MNT FIXTURES

FIXTURES is the folder ``scripts/gen/gen_tables.py`` wrote (its ``manifest.json`` names
every table, ``<name>.expected/[key/]`` holds python-blosc2's own reads of it); MNT is a
mount of that folder. For each table, at ``MNT/<name>/[key]``:

1. ``pandas.read_csv(table.csv)`` has ``CTable.to_pandas()``'s columns (less those the
   table's ``meta.json`` says are left out, which must be exactly the columns
   ``to_arrow`` cannot give) and values: numbers, bools and timestamps equal (a null
   and a float NaN both NaN), text equal except where pandas cannot give it back (an
   empty string and the text ``NA`` read as NaN), lists, structs and arrays as JSON
   equal to the cells, bytes as Python literals equal to them;
2. the CSV's fields, split by RFC 4180 (a quoted empty field is an empty string, an
   unquoted one a null), give every text cell exactly, nulls and empty strings
   apart;
3. ``pyarrow.feather.read_table(table.arrow)`` and ``pyarrow.ipc.open_file(...)``
   (read whole, and batch by batch through ``get_batch``) equal ``CTable.to_arrow()``
   (``table.arrow`` of the expected reads: types, nullability and values), and
   ``polars.read_ipc`` of the file equals polars' read of that one;
4. reads at random offsets and sizes (``os.pread``) of both files give that slice of
   the whole file.

Prints one JSON line of counts; exits non-zero at the first difference (the message
names the table, the file and the column).
"""

from __future__ import annotations

import ast
import base64
import json
import math
import os
import random
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.ipc as ipc
from pyarrow import feather

Json = Any


def fail(where: str, what: str) -> None:
    raise AssertionError(f"{where}: {what}")


def rfc4180(text: str) -> list[list[str | None]]:
    """The records of a CSV text: a quoted field is its text (``""`` an empty
    string), an unquoted empty field ``None`` (a null)."""
    records: list[list[str | None]] = []
    record: list[str | None] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == '"':
            j, parts = i + 1, []
            while True:
                k = text.index('"', j)
                parts.append(text[j:k])
                if k + 1 < n and text[k + 1] == '"':
                    parts.append('"')
                    j = k + 2
                    continue
                i = k + 1
                break
            record.append("".join(parts))
        else:
            j = i
            while j < n and text[j] not in ",\n":
                j += 1
            record.append(text[i:j] or None)
            i = j
        if i < n and text[i] == ",":
            i += 1
            if i == n or text[i] == "\n":
                record.append(None)
        if i < n and text[i] == "\n":
            records.append(record)
            record = []
            i += 1
    if record:
        records.append(record)
    return records


def is_null(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA or v is pd.NaT


def same_value(a: Any, b: Any) -> bool:
    """Python values equal, a NaN equal to a NaN (Arrow's own equality has NaN unequal)."""
    if isinstance(a, float) and isinstance(b, float):
        return same_float(a, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def same_table(got: Any, want: Any) -> str | None:
    """Why two pyarrow tables differ (schema, values, dictionaries), or None."""
    if not got.schema.equals(want.schema):
        return f"schema\n{got.schema}\nexpected\n{want.schema}"
    for name in want.column_names:
        g, w = got.column(name), want.column(name)
        if not same_value(g.to_pylist(), w.to_pylist()):
            return f"column {name!r}: {g.to_pylist()} expected {w.to_pylist()}"
        if pa.types.is_dictionary(w.type):
            for gc, wc in zip(g.chunks, w.chunks):
                if not gc.dictionary.equals(wc.dictionary):
                    return f"column {name!r}: dictionary {gc.dictionary} expected {wc.dictionary}"
    return None


def float_of(cell: Json) -> float:
    if isinstance(cell, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[cell]
    return float(cell)


def same_float(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def bytes_cell(text: str) -> Json:
    value = ast.literal_eval(text)
    if not isinstance(value, bytes):
        raise ValueError(f"not a bytes literal: {text!r}")
    return {"base64": base64.b64encode(value).decode("ascii")}


def column_kind(dtype: str, cells: list[Json]) -> str:
    if dtype.startswith("datetime64"):
        return "time"
    if dtype in ("bool", "boolean"):
        return "bool"
    if dtype.startswith(("int", "uint", "Int", "UInt")):
        return "int"
    if dtype.startswith(("float", "Float")):
        return "float"
    first = next((c for c in cells if c is not None), None)
    if isinstance(first, dict) and set(first) == {"base64"}:
        return "bytes"
    if isinstance(first, (list, dict)):
        return "json"
    if isinstance(first, bool):
        return "bool"
    if isinstance(first, int):
        return "int"
    if isinstance(first, float):
        return "float"
    return "text"


def time_unit(dtype: str) -> str:
    return dtype[dtype.index("[") + 1 : dtype.index("]")]


def check_csv(where: str, path: Path, expected: Path, left_out: set[str]) -> int:
    schema = json.loads((expected / "schema.json").read_text())
    want = json.loads((expected / "pandas.json").read_text())
    dtypes = dict(zip(schema["pandas"]["columns"], schema["pandas"]["dtypes"]))
    columns = [c for c in want["columns"] if c not in left_out]
    df = pd.read_csv(path)
    if [str(c) for c in df.columns] != columns:
        fail(where, f"table.csv columns {list(df.columns)}, expected {columns}")
    if len(df) != schema["nrows"]:
        fail(where, f"table.csv has {len(df)} rows, expected {schema['nrows']}")
    records = rfc4180(path.read_bytes().decode("utf-8"))
    fields = {name: [r[k] for r in records[1:]] for k, name in enumerate(columns)}
    checked = 0
    for name in columns:
        cells = want["values"][name]
        kind = column_kind(dtypes[name], cells)
        got = df[name].tolist()
        for row, (g, w) in enumerate(zip(got, cells)):
            at = f"{where}: table.csv column {name!r} row {row}"
            if kind == "float":
                if not same_float(float("nan") if is_null(g) else float(g), float_of(w)):
                    fail(at, f"{g!r}, expected {w!r}")
            elif w is None:
                if not is_null(g):
                    fail(at, f"{g!r}, expected a null")
            elif kind == "int":
                if is_null(g) or int(g) != w or float(g) != float(w):
                    fail(at, f"{g!r}, expected {w!r}")
            elif kind == "bool":
                if g is not w and not (isinstance(g, str) and g == str(w)):
                    fail(at, f"{g!r}, expected {w!r}")
            elif kind == "time":
                unit = time_unit(dtypes[name])
                ts = pd.Timestamp(g).as_unit(unit)
                if int(ts.value) != int(pd.Timestamp(w, unit=unit).as_unit(unit).value):
                    fail(at, f"{g!r}, expected {w!r} {unit}")
            elif kind == "text":
                # pandas reads "" and "NA" as NaN: it cannot give them back.
                if (is_null(g) and w not in ("", "NA")) or (not is_null(g) and g != w):
                    fail(at, f"{g!r}, expected {w!r}")
            elif kind == "json":
                if json.loads(g) != w:
                    fail(at, f"{g!r}, expected {w!r}")
            elif kind == "bytes":
                if bytes_cell(g) != w:
                    fail(at, f"{g!r}, expected {w!r}")
            # The fields themselves: nulls and empty strings apart.
            if kind == "text":
                field = fields[name][row]
                if field != w:
                    fail(at, f"field {field!r}, expected {w!r}")
            checked += 1
        if kind == "text":
            nulls = [row for row, w in enumerate(cells) if w is None]
            for row in nulls:
                if fields[name][row] is not None:
                    fail(f"{where}: table.csv column {name!r} row {row}", "a null is not an empty field")
    return checked


def check_arrow(where: str, path: Path, expected: Path, left_out: set[str]) -> int:
    schema = json.loads((expected / "schema.json").read_text())
    reference = expected / "table.arrow"
    got = feather.read_table(str(path))
    if reference.exists():
        want = feather.read_table(str(reference))
    else:
        # to_arrow refused the table (an object or complex column): the file
        # holds the other columns, each equal to to_pandas'.
        frame = pd.DataFrame(json.loads((expected / "pandas.json").read_text())["values"])
        keep = [c for c in frame.columns if c not in left_out]
        want = pa.Table.from_pandas(frame[keep], preserve_index=False)
        want = want.cast(pa.schema([pa.field(f.name, f.type, True) for f in got.schema]))
    why = same_table(got, want)
    if why:
        fail(where, f"pyarrow.feather.read_table(table.arrow): {why}")
    with ipc.open_file(str(path)) as reader:
        why = same_table(reader.read_all(), want)
        if why:
            fail(where, f"pyarrow.ipc.open_file(table.arrow).read_all(): {why}")
        batches = [reader.get_batch(i) for i in reversed(range(reader.num_record_batches))]
        if sum(b.num_rows for b in batches) != schema["nrows"]:
            fail(where, "the record batches do not hold the table's rows")
        why = same_table(pa.Table.from_batches(list(reversed(batches)), schema=want.schema), want)
        if why:
            fail(where, f"the record batches read one by one (get_batch): {why}")
    if reference.exists():
        ours = pl.read_ipc(str(path))
        theirs = pl.read_ipc(str(reference))
        if not ours.equals(theirs, null_equal=True):
            fail(where, f"polars.read_ipc differs:\n{ours}\nexpected\n{theirs}")
    return int(got.num_rows * got.num_columns)


def check_windows(where: str, path: Path, rng: random.Random) -> int:
    whole = path.read_bytes()
    fd = os.open(path, os.O_RDONLY)
    try:
        n = len(whole)
        windows = [(0, 1), (n - 1, 10), (n, 10)] + [
            (rng.randrange(max(n, 1)), rng.choice([1, 7, 100, 4096, 65536, 200_000])) for _ in range(40)
        ]
        for offset, size in windows:
            got = os.pread(fd, size, offset)
            if got != whole[offset : offset + size]:
                fail(where, f"{path.name}: {size} bytes at {offset} differ from the whole file's")
    finally:
        os.close(fd)
    return len(windows)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1] if __doc__ else "usage: check_table_files.py MNT FIXTURES", file=sys.stderr)
        return 2
    mnt, fixtures = Path(argv[1]), Path(argv[2])
    manifest = json.loads((fixtures / "manifest.json").read_text())
    rng = random.Random(43)
    counts = {"tables": 0, "csv_cells": 0, "arrow_cells": 0, "windows": 0}
    for name, entry in manifest["fixtures"].items():
        if entry["kind"] not in ("ctable", "store"):
            continue
        for table in entry["tables"]:
            key = table["key"].strip("/")
            folder = mnt / name / key if key else mnt / name
            expected = fixtures / f"{name}.expected" / key if key else fixtures / f"{name}.expected"
            where = f"{name}{'/' + key if key else ''}"
            meta = json.loads((folder / "meta.json").read_text())
            left_out = {str(c) for c in meta.get("arrow_left_out", {})}
            schema = json.loads((expected / "schema.json").read_text())
            if "error" in schema["arrow"] and not left_out:
                fail(where, "to_arrow refuses the table but meta.json leaves no column out")
            if "error" not in schema["arrow"] and left_out:
                fail(where, f"meta.json leaves out {sorted(left_out)} where to_arrow gives every column")
            counts["csv_cells"] += check_csv(where, folder / "table.csv", expected, left_out)
            counts["arrow_cells"] += check_arrow(where, folder / "table.arrow", expected, left_out)
            for file in ("table.csv", "table.arrow"):
                counts["windows"] += check_windows(where, folder / file, rng)
            counts["tables"] += 1
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
