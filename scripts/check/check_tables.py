"""Check a mount's tables and containers against python-blosc2's own reads (issue 43).

Usage::

    python scripts/check/check_tables.py MOUNT FIXTURES

FIXTURES is the folder ``scripts/gen/gen_tables.py`` wrote (the fixtures and, beside
each, ``<name>.expected/`` with python-blosc2 4.14.1's reads); MOUNT is a blosc2fs
mount of it. For every table in the manifest:

- the table folder lists exactly its logical columns (``to_pandas`` column names),
  ``indexes/`` when it has index sidecars, and its own files: no storage part
  (``*.utf8``, ``*.notnull``, ``*_dict``, ``_indexes``) is a column;
- each column folder's values equal ``to_arrow()``'s (``to_pandas()``'s for a column
  ``to_arrow`` cannot give): ``items.jsonl`` line by line (null as null, dictionary
  words, lists, structs), or ``data.npy`` (``data`` its body) with ``valid.npy``
  beside it where the column is nullable, and a null is never a value;
- ``meta.json`` states the null policy the schema gives, the live and deleted rows;
- the table's ``meta.json`` names the columns in schema order.

For every container: ``items.jsonl`` equals python-blosc2's items (a ListArray: one
line per row; a BatchArray: one line per batch). Then ``xarray.open_datatree(MOUNT)``
shows every table's 1-D number and bool columns without a null (floats also with
NaN at their nulls) along one dimension ``row``, and no index sidecar (a table's
``indexes/``, an NDArray's ``*.__index__.*`` arrays, which sit under the array's own
``indexes/``) is a variable, while each indexed NDArray is one (beside a file, or a
TreeStore's value).

Prints one line per problem and exits 1 if there was any, else prints a summary.
"""

from __future__ import annotations

import json
import math
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

Json = Any
PROBLEMS: list[str] = []

OWN_FILES = {"meta.json", "zarr.json", "table.csv", "table.arrow", ".stats"}


def problem(text: str) -> None:
    PROBLEMS.append(text)
    print("PROBLEM:", text)


def folder_name(column: str) -> str:
    """The folder name blosc2fs gives a column (see catalog/store.rs table_child_name)."""
    name = column.replace("%", "%25")
    if name in ("meta.json", "table.csv", "indexes", "table.arrow", "zarr.json", ".", ".."):
        name = f"%{ord(name[0]):02X}{name[1:]}"
    return name.replace("/", "%2F")


def npy_cells(values: np.ndarray[Any, Any], valid: list[bool] | None) -> list[Json]:
    """data.npy's rows as the generator's JSON cells (null where valid says so)."""
    if values.dtype.kind == "M":
        raw: list[Any] = values.view("int64").tolist()
    elif values.dtype.kind == "c":
        raw = [{"real": cell(v.real), "imag": cell(v.imag)} for v in values.tolist()]
    else:
        raw = values.tolist()
    out: list[Json] = []
    for i, v in enumerate(raw):
        if valid is not None and not valid[i]:
            out.append(None)
        else:
            out.append(cell(v))
    return out


def cell(v: Any) -> Json:
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, list):
        return [cell(x) for x in v]
    if isinstance(v, bytes):
        return v.decode("latin-1")
    return v


def leaf_values(arrow_values: dict[str, list[Json]], column: str) -> list[Json] | None:
    """A dotted struct leaf's values from ``to_arrow``'s nested struct column."""
    parts = column.split(".")
    if parts[0] not in arrow_values or len(parts) == 1:
        return None
    out = []
    for row in arrow_values[parts[0]]:
        v = row
        for p in parts[1:]:
            v = None if v is None else v.get(p)
        out.append(v)
    return out


def expected_values(exp: Path, column: str) -> list[Json]:
    arrow = exp / "arrow.json"
    if arrow.exists():
        values = json.loads(arrow.read_text())["values"]
        if column in values:
            return list(values[column])
        leaf = leaf_values(values, column)
        if leaf is not None:
            return leaf
    return list(json.loads((exp / "pandas.json").read_text())["values"][column])


def check_table(mnt: Path, exp: Path, where: str) -> None:
    schema = json.loads((exp / "schema.json").read_text())
    columns: list[str] = schema["col_names"]
    listed = set(os.listdir(mnt))
    want = {folder_name(c) for c in columns}
    has_indexes = any(k.split("/")[-2] == "_indexes" or "/_indexes/" in k for k in schema["storage_keys"])
    extra = listed - want - OWN_FILES - ({"indexes"} if has_indexes else set())
    if extra:
        problem(f"{where}: listed but not columns: {sorted(extra)}")
    if want - listed:
        problem(f"{where}: columns not listed: {sorted(want - listed)}")
    if has_indexes and "indexes" not in listed:
        problem(f"{where}: index sidecars but no indexes/")
    if has_indexes and (mnt / "indexes" / "zarr.json").exists():
        problem(f"{where}: indexes/ has a zarr.json")
    meta = json.loads((mnt / "meta.json").read_text())
    if [c["name"] for c in meta["columns"]] != columns:
        problem(f"{where}/meta.json: columns {[c['name'] for c in meta['columns']]} != {columns}")
    if meta["rows"] != schema["nrows"]:
        problem(f"{where}/meta.json: rows {meta['rows']} != {schema['nrows']}")
    if meta["deleted_rows"] != len(schema["deleted"]):
        problem(f"{where}/meta.json: deleted_rows {meta['deleted_rows']} != {len(schema['deleted'])}")
    entries = {c["name"]: c for c in schema["schema"]["columns"]}
    for column in columns:
        check_column(mnt / folder_name(column), exp, column, entries.get(column), schema["nrows"], f"{where}/{column}")


def null_policy(entry: Json | None) -> str:
    if entry is None:
        return "none"
    kind = entry.get("kind")
    nullable = entry.get("nullable") is True
    if kind == "dictionary":
        return "code" if nullable else "none"
    if kind in ("vlstring", "vlbytes", "struct", "object", "list"):
        return "native" if nullable else "none"
    if not nullable:
        return "none"
    return "sentinel" if "null_value" in entry and "null_storage" not in entry else "mask"


def check_column(folder: Path, exp: Path, column: str, entry: Json | None, nrows: int, where: str) -> None:
    files = set(os.listdir(folder))
    meta = json.loads((folder / "meta.json").read_text())
    about = meta.get("column", meta)
    policy = null_policy(entry)
    if about["nulls"]["policy"] != policy:
        problem(f"{where}: null policy {about['nulls']['policy']} != {policy}")
    if about["rows"] != nrows:
        problem(f"{where}: rows {about['rows']} != {nrows}")
    want = expected_values(exp, column)
    if "items.jsonl" in files:
        got = [json.loads(line) for line in (folder / "items.jsonl").read_text(encoding="utf-8").splitlines()]
        if got != want:
            problem(f"{where}/items.jsonl: {got[:5]} != {want[:5]}")
    if "data.npy" in files:
        values = np.load(folder / "data.npy", allow_pickle=False)
        body = (folder / "data").read_bytes()
        if body != values.tobytes():
            problem(f"{where}: data is not data.npy's body")
        valid = None
        if policy != "none":
            if "valid.npy" not in files:
                problem(f"{where}: nullable, data but no valid.npy")
                return
            v = np.load(folder / "valid.npy", allow_pickle=False)
            if (folder / "valid").read_bytes() != v.tobytes():
                problem(f"{where}: valid is not valid.npy's body")
            valid = [bool(x) for x in v.tolist()]
        elif "valid" in files:
            problem(f"{where}: not nullable but has valid")
        if values.dtype.kind in "OSU":
            return
        got = npy_cells(values, valid)
        if len(values.shape) == 1 and got != want:
            problem(f"{where}/data.npy: {got[:6]} != {want[:6]}")
        if len(values.shape) > 1 and [cell(r) for r in values.tolist()] != want:
            problem(f"{where}/data.npy rows != {want[:3]}")
        if valid is not None and [w is not None for w in want] != valid:
            problem(f"{where}/valid.npy: nulls are not where python-blosc2 has them")
    if "items.jsonl" not in files and "data.npy" not in files:
        problem(f"{where}: neither items.jsonl nor data.npy ({sorted(files)}): {about.get('not_shown')}")


def check_container(mnt: Path, exp: Path, name: str) -> None:
    meta = json.loads((exp / "meta.json").read_text())
    if meta["class"] == "BatchArray":
        want = [json.loads(line) for line in (exp / "batches.jsonl").read_text().splitlines()]
    else:
        want = [json.loads(line) for line in (exp / "items.jsonl").read_text().splitlines()]
    path = mnt / name / "items.jsonl"
    if not path.exists():
        problem(f"{name}: no items.jsonl ({json.loads((mnt / name / 'meta.json').read_text()).get('items_error')})")
        return
    got = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    if got != want:
        problem(f"{name}/items.jsonl: {got[:4]} != {want[:4]}")


def check_xarray(mnt: Path, fixtures: Path, manifest: Json) -> None:
    import xarray as xr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = xr.open_datatree(str(mnt), engine="zarr", consolidated=False)
    for name, entry in manifest["fixtures"].items():
        if entry["kind"] not in ("ctable", "store"):
            continue
        for table in entry["tables"]:
            key = table["key"].strip("/")
            path = f"{name}/{key}" if key else name
            exp = fixtures / (name + ".expected") / key if key else fixtures / (name + ".expected")
            schema = json.loads((exp / "schema.json").read_text())
            node = tree[path]
            names = set(node.ds.data_vars)
            for var in names:
                if "__index__" in var or "_indexes" in var:
                    problem(f"xarray {path}: an index sidecar is a variable: {var}")
            computed = [
                {"name": c["name"], "kind": c["dtype"]}
                for c in schema["schema"].get("computed_columns", [])
                if c.get("kind") == "expression"
            ]
            for c in schema["schema"]["columns"] + computed:
                numeric = c["kind"] in (
                    "int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 bool".split()
                )
                if not numeric:
                    continue
                values = expected_values(exp, c["name"])
                has_null = any(v is None for v in values)
                if has_null and not c["kind"].startswith("float"):
                    if c["name"] in names:
                        problem(f"xarray {path}: {c['name']} has nulls yet is a variable")
                    continue
                if "null_value" in c and c["kind"] == "bool":
                    continue
                if c["name"] not in names:
                    problem(f"xarray {path}: number column {c['name']} is not a variable")
                    continue
                var = node.ds[c["name"]]
                if var.dims != ("row",):
                    problem(f"xarray {path}: {c['name']} dims {var.dims}")
                got = npy_cells(np.asarray(var.values), None)
                want = ["NaN" if v is None else v for v in values]
                if got != want:
                    problem(f"xarray {path}: {c['name']} {got[:5]} != {want[:5]}")
    for group, dataset in tree.to_dict().items():
        if "indexes" in group.split("/"):
            problem(f"xarray: an index folder is a group: {group}")
        for var in dataset.data_vars:
            if "__index__" in str(var):
                problem(f"xarray {group}: an NDArray's index sidecar is a variable: {var}")
    if "ndindex.b2nd" not in tree.ds.data_vars:
        problem("xarray: the indexed NDArray ndindex.b2nd is not a variable")
    for name, entry in manifest["fixtures"].items():
        if entry["kind"] == "ndarray-index-store":
            group, _, leaf = f"{name}{entry['indexed']}".rpartition("/")
            if leaf not in tree[group].ds.data_vars:
                problem(f"xarray {group}: the indexed NDArray {leaf} is not a variable")


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1] if __doc__ else "usage: check_tables.py MOUNT FIXTURES", file=sys.stderr)
        return 2
    mnt, fixtures = Path(argv[1]), Path(argv[2])
    manifest = json.loads((fixtures / "manifest.json").read_text())
    tables = 0
    containers = 0
    for name, entry in manifest["fixtures"].items():
        if entry["kind"] in ("ctable", "store"):
            for table in entry["tables"]:
                key = table["key"].strip("/")
                exp = fixtures / (name + ".expected") / key if key else fixtures / (name + ".expected")
                check_table(mnt / name / key if key else mnt / name, exp, f"{name}/{key}".rstrip("/"))
                tables += 1
        elif entry["kind"] == "container":
            check_container(mnt, fixtures / (name + ".expected"), name)
            containers += 1
    check_xarray(mnt, fixtures, manifest)
    if PROBLEMS:
        print(f"{len(PROBLEMS)} problems")
        return 1
    print(f"{tables} tables, {containers} containers: every value as python-blosc2 reads it")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
