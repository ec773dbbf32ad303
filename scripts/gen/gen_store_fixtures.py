#!/usr/bin/env python3
"""Generate python-blosc2 store fixtures (and their expected contents) for blosc2fs.

Usage:
    gen_store_fixtures.py OUTDIR      # normally tests/fixtures/stores

Writes small stores and OUTDIR/manifest.json:

    {"stores": {NAME: {"format": "b2z"|"b2d"|"b2e", "class": "b2dict"|"b2tree"|"b2embed",
                       "keys": {KEY: {"home": "member"|"embedded", "dtype": str, "shape": [..],
                                      "size": n, "sha256": hex}},
                       "vlmeta": {GROUP: {...}},                   # TreeStore group metadata
                       "tables": {ROOT: {"rows": n, "schema": {...},
                                         "columns": {NAME: {"dtype", "shape", "size", "sha256"}}}}}}}

Expected bytes come from the numpy source arrays (C order), never from reading the
files back; every key is also checked against python-blosc2's own reading
(store[key][:], or SChunk.decompress_chunk for DELTA arrays, whose slicing is wrong
in python-blosc2 4.14.1 for on-disk arrays). Table columns' expected bytes are the
numpy source rows with the deleted rows removed, checked against CTable's reading.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import os
import shutil
import sys
import zipfile
from typing import Any

import blosc2
import numpy as np

blosc2.set_nthreads(1)


def digest(a: Any) -> Any:
    b = np.ascontiguousarray(a).tobytes()
    return {"dtype": a.dtype.str, "shape": list(a.shape), "size": len(b), "sha256": hashlib.sha256(b).hexdigest()}


def fresh(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def check_value(store: Any, key: Any, src: Any) -> None:
    got = store[key]
    if (
        isinstance(got, blosc2.NDArray)
        and "b2nd" in got.schunk.meta
        and any(f == blosc2.Filter.DELTA for f in got.schunk.cparams.filters)
    ):
        return  # 4.14.1 slices DELTA arrays wrongly; the numpy source is the truth
    arr = got[:]
    assert np.array_equal(np.asarray(arr), src), key


def store_keys(path: str, store: Any, sources: Any, embedded_keys: Any) -> Any:
    keys = {}
    for key, src in sources.items():
        check_value(store, key, src)
        d = digest(src)
        d["home"] = "embedded" if key in embedded_keys else "member"
        keys[key] = d
    return keys


def embedded_of(store: Any) -> Any:
    return set(store.estore.keys()) if hasattr(store, "estore") else set(store.keys())


def main(out: Any) -> None:
    os.makedirs(out, exist_ok=True)
    manifest: dict[str, Any] = {"stores": {}}
    rng = np.random.default_rng(12)

    # DictStore: members (above the threshold) and embedded values, nested paths.
    dict_sources = {
        "/big": np.arange(2000, dtype="<i4"),
        "/small": np.linspace(0, 1, 10).astype("<f8"),
        "/dir/x": np.arange(3000, dtype="<u2").reshape(30, 100),
        "/dir/emb": np.array([-3, 1, 4, 1, 5], dtype="<i2"),
    }
    for name in ["dict.b2z", "dict.b2d"]:
        path = os.path.join(out, name)
        fresh(path)
        with blosc2.DictStore(path, mode="w", threshold=1000) as s:
            for k, v in dict_sources.items():
                s[k] = v
        s = blosc2.DictStore(path, mode="r")
        emb = set(s.estore.keys())
        manifest["stores"][name] = {
            "format": name[-3:],
            "class": "b2dict",
            "keys": store_keys(path, s, dict_sources, emb),
        }

    # TreeStore: nested groups, group metadata, a DELTA member.
    path = os.path.join(out, "tree.b2z")
    fresh(path)
    tree_sources = {
        "/exp/run1/temps": np.linspace(-5, 5, 500).astype("<f8"),
        "/exp/run1/tiny": np.arange(5, dtype="<i8"),
        "/exp/run2/delta": (np.arange(4000, dtype="<i4") * 7 + rng.integers(0, 3, 4000, dtype="<i4")).reshape(40, 100),
        "/top": rng.random((6, 7)).astype("<f4"),
    }
    with blosc2.TreeStore(path, mode="w", threshold=1000) as t:
        for k, v in tree_sources.items():
            if k == "/exp/run2/delta":
                t[k] = blosc2.asarray(
                    v,
                    chunks=(20, 50),
                    blocks=(10, 25),
                    cparams=blosc2.CParams(filters=[blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE], filters_meta=[0, 0]),
                )
            else:
                t[k] = v
        t.vlmeta["author"] = "blosc2fs tests"
        t.vlmeta["n"] = 3
        t["/exp"].vlmeta["note"] = "experiment group"
    t = blosc2.TreeStore(path, mode="r")
    emb = set(t.estore.keys())
    manifest["stores"]["tree.b2z"] = {
        "format": "b2z",
        "class": "b2tree",
        "keys": store_keys(path, t, tree_sources, emb),
        "vlmeta": {"": {"author": "blosc2fs tests", "n": 3}, "/exp": {"note": "experiment group"}},
    }

    # EmbedStore alone.
    path = os.path.join(out, "values.b2e")
    fresh(path)
    embed_sources = {"/a": np.arange(12, dtype="<i4").reshape(3, 4), "/b/c": np.array([1.5, -2.5], dtype="<f8")}
    e = blosc2.EmbedStore(urlpath=path, mode="w")
    for k, v in embed_sources.items():
        e[k] = v
    del e
    e = blosc2.EmbedStore(urlpath=path, mode="r")
    manifest["stores"]["values.b2e"] = {
        "format": "b2e",
        "class": "b2embed",
        "keys": store_keys(path, e, embed_sources, set(embed_sources)),
    }

    # CTables with deleted rows: one as its own .b2d, one inline in a TreeStore .b2z.
    @dataclasses.dataclass
    class Row:
        a: int = blosc2.field(blosc2.int32())
        b: float = blosc2.field(blosc2.float64())

    n = 20
    src_a = np.arange(n, dtype="<i4") * 3
    src_b = np.arange(n, dtype="<f8") / 4
    deleted = [1, 5, 6, 19]
    keep = np.ones(n, dtype=bool)
    keep[deleted] = False
    path_d = os.path.join(out, "table.b2d")
    fresh(path_d)
    tbl = blosc2.CTable(Row, urlpath=path_d, mode="w")
    tbl.extend(list(zip(src_a.tolist(), src_b.tolist())))
    tbl.delete(deleted)
    tbl.close()
    tbl = blosc2.CTable.open(path_d)
    cols = {"a": src_a[keep], "b": src_b[keep]}
    for c, v in cols.items():
        assert np.array_equal(np.asarray(tbl[c][:]), v), c
    meta = blosc2.TreeStore(path_d, mode="r")["/_meta"]
    schema = json.loads(meta.vlmeta["schema"])
    table_entry = {"rows": int(keep.sum()), "schema": schema, "columns": {c: digest(v) for c, v in cols.items()}}
    manifest["stores"]["table.b2d"] = {"format": "b2d", "class": "b2tree", "keys": {}, "tables": {"": table_entry}}

    path = os.path.join(out, "table.b2z")
    fresh(path)
    other = np.arange(3, dtype="<i8")
    with blosc2.TreeStore(path, mode="w") as ts:
        ts["/other"] = other
        ts["/tbl"] = tbl
    ts = blosc2.TreeStore(path, mode="r")
    assert np.array_equal(ts["/other"][:], other)
    inline = ts["/tbl"]
    for c, v in cols.items():
        assert np.array_equal(np.asarray(inline[c][:]), v), c
    inline_meta = blosc2.DictStore.__getitem__(ts, "/tbl/_meta")
    inline_schema = json.loads(inline_meta.vlmeta["schema"])
    manifest["stores"]["table.b2z"] = {
        "format": "b2z",
        "class": "b2tree",
        "keys": {"/other": dict(digest(other), home="member")},
        "tables": {"/tbl": dict(table_entry, schema=inline_schema)},
    }

    # ObjectArray and BatchArray: alone, and as store values (member and embedded).
    items = [{"a": 1, "b": [1, 2, 3]}, "hello", 3.5, None, [True, {"x": "y"}], b"raw", -7, 2**40]
    batches = [[1, 2, 3, 4, 5], ["a", "b"], [{"k": None}]]

    def as_json(v: Any) -> Any:
        if isinstance(v, bytes):
            return {"base64": base64.b64encode(v).decode()}
        if isinstance(v, list):
            return [as_json(x) for x in v]
        if isinstance(v, dict):
            return {k: as_json(x) for k, x in v.items()}
        return v

    def make_objects(urlpath: Any = None) -> Any:
        oa = blosc2.ObjectArray(urlpath=urlpath, mode="w") if urlpath else blosc2.ObjectArray()
        for it in items:
            oa.append(it)
        return oa

    def make_batches(urlpath: Any = None) -> Any:
        ba = (
            blosc2.BatchArray(urlpath=urlpath, mode="w", items_per_block=2)
            if urlpath
            else blosc2.BatchArray(items_per_block=2)
        )
        for b in batches:
            ba.append(b)
        return ba

    for name, make in [("objects.b2f", make_objects), ("batches.b2b", make_batches)]:
        fresh(os.path.join(out, name))
        del_me = make(os.path.join(out, name))
        del del_me
    oa = blosc2.open(os.path.join(out, "objects.b2f"))
    assert [oa[i] for i in range(len(oa))] == items
    ba = blosc2.open(os.path.join(out, "batches.b2b"))
    assert [list(ba[i]) for i in range(len(ba))] == batches
    path = os.path.join(out, "objects.b2z")
    fresh(path)
    with blosc2.DictStore(path, mode="w", threshold=40) as s:
        s["/objs"] = make_objects()
        s["/batches"] = make_batches()
    s = blosc2.DictStore(path, mode="r")
    assert [s["/objs"][i] for i in range(len(items))] == items
    manifest["items"] = {
        "objects.b2f": [as_json(v) for v in items],
        "batches.b2b": [as_json(b) for b in batches],
        "objects.b2z/objs": [as_json(v) for v in items],
        "objects.b2z/batches": [as_json(b) for b in batches],
        "homes": {k: ("embedded" if k in s.estore.keys() else "member") for k in ["/objs", "/batches"]},
    }

    # Facts the tests rely on: stored members, embed.b2e last.
    for name, entry in manifest["stores"].items():
        if entry["format"] == "b2z":
            infos = zipfile.ZipFile(os.path.join(out, name)).infolist()
            assert all(i.compress_type == zipfile.ZIP_STORED for i in infos), name
            assert infos[-1].filename == "embed.b2e", name

    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/stores")
