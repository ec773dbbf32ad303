#!/usr/bin/env python3
"""Write saved lazy expressions and their operands, with python-blosc2's own values.

    gen_expressions.py OUTDIR

Writes OUTDIR/src (the tree a test mounts), OUTDIR/outside (operands the
mount must never read) and OUTDIR/manifest.json. Each manifest entry is one
saved expression (a `.b2nd` carrier, written the way python-blosc2 4.14.1's
LazyExpr.save writes it, with the grid chosen here so that it differs from
the operands' grids):
- computed ones: `expected` (a .npy of python-blosc2's evaluation of the
  opened file, `blosc2.open(path, deserialize="full")[...]`), `dtype`,
  `shape`, and `rtol` (0: bit for bit);
- refused ones: `why`, a phrase meta.json's `why_not_computed` must hold.

The numbers come from python-blosc2 itself; the refusals are the rules of
docs/semantics.md ("Computed arrays"), which python-blosc2 does not have.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import blosc2
import numpy as np

B2O = {"kind": "lazyexpr", "version": 1}


def ref(path: str) -> Any:
    return {"kind": "urlpath", "version": 1, "urlpath": path}


def carrier(path: str, shape: Any, dtype: Any, chunks: Any, blocks: Any, payload: Any, legacy: bool = False) -> None:
    """A saved-expression carrier: an empty b2nd with the b2o metalayer and the recipe."""
    if legacy:
        arr = blosc2.empty(
            shape, dtype=dtype, chunks=chunks, blocks=blocks, urlpath=path, mode="w", meta={"LazyArray": 0}
        )
        arr.schunk.vlmeta["_LazyArray"] = payload
    else:
        arr = blosc2.empty(shape, dtype=dtype, chunks=chunks, blocks=blocks, urlpath=path, mode="w", meta={"b2o": B2O})
        arr.schunk.vlmeta["b2o"] = payload
    del arr


def main() -> None:
    out = sys.argv[1]
    src = os.path.join(out, "src")
    outside = os.path.join(out, "outside")
    for d in (os.path.join(src, "ops"), os.path.join(src, "sub"), outside):
        os.makedirs(d, exist_ok=True)
    exp_dir = os.path.join(out, "expected")
    os.makedirs(exp_dir, exist_ok=True)
    rng = np.random.default_rng(7)
    blosc2.set_nthreads(1)

    def save(rel: Any, data: Any, chunks: Any, blocks: Any, base: Any = src) -> Any:
        path = os.path.join(base, rel)
        blosc2.asarray(data, urlpath=path, mode="w", chunks=chunks, blocks=blocks)
        return path

    a = rng.uniform(-1, 1, (40, 30))
    save("ops/a.b2nd", a, (16, 16), (8, 8))
    save("ops/b.b2nd", rng.uniform(0, 2, 30).astype("f4"), (7,), (3,))
    save("ops/b2.b2nd", rng.uniform(5, 9, 30).astype("f4"), (7,), (3,))
    save("ops/c.b2nd", rng.integers(-50, 50, (40, 1)).astype("i4"), (9, 1), (4, 1))
    save("ops/m.b2nd", rng.random((40, 30)) > 0.5, (40, 30), (20, 15))
    save("ops/d.b2nd", np.arange(7, dtype="i2"), (7,), (7,))
    save("ops/u.b2nd", rng.integers(0, 200, (40, 30)).astype("u1"), (13, 11), (5, 5))
    save("ops/w.b2nd", rng.integers(-(10**8), 10**8, (40, 1)).astype("i8"), (16, 1), (4, 1))
    save("ops/private.b2nd", a, (16, 16), (8, 8))
    os.chmod(os.path.join(src, "ops/private.b2nd"), 0o600)
    save("a.b2nd", a, (40, 30), (10, 10), base=outside)
    link = os.path.join(src, "ops/link.b2nd")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink("../../outside/a.b2nd", link)
    blosc2.empty(
        (1 << 30, 1),
        dtype="u1",
        chunks=(1 << 30, 1),
        blocks=(1 << 20, 1),
        urlpath=os.path.join(src, "ops/tall.b2nd"),
        mode="w",
    )
    blosc2.empty(
        (1, 1 << 30),
        dtype="u1",
        chunks=(1, 1 << 30),
        blocks=(1, 1 << 20),
        urlpath=os.path.join(src, "ops/wide.b2nd"),
        mode="w",
    )
    store = os.path.join(src, "run.b2z")
    with blosc2.DictStore(store, mode="w") as st:
        st["/x"] = rng.uniform(-3, 3, 30)
    # DictStore writes its zip 0600, left so: the expressions over it (0644)
    # are computed, shown to other users only as the store allows.

    manifest = {}

    def computed(
        name: Any, expr: Any, ops: Any, chunks: Any, blocks: Any, rtol: float = 0.0, rel: str = "", legacy: bool = False
    ) -> None:
        """A saved expression python-blosc2 evaluates; its values are the expectation."""
        opened = {
            k: blosc2.open(os.path.join(src, rel, p), deserialize="full") for k, p in ops.items() if isinstance(p, str)
        }
        for k, p in ops.items():
            if not isinstance(p, str):
                opened[k] = blosc2.DictStore(p["urlpath"], mode="r")[p["key"]]
        lazy = blosc2.lazyexpr(expr, opened)
        path = os.path.join(src, rel, name + ".b2nd")
        if legacy:
            payload = {"expression": expr, "UDF": None, "operands": ops}
        else:
            payload = {
                "kind": "lazyexpr",
                "version": 1,
                "expression": expr,
                "operands": {k: (ref(p) if isinstance(p, str) else p) for k, p in ops.items()},
            }
        carrier(path, lazy.shape, lazy.dtype, chunks, blocks, payload, legacy)
        if legacy:
            values = lazy[...]  # python-blosc2 opens legacy files relative to its working directory
        else:
            values = blosc2.open(path, deserialize="full")[...]
        np.save(os.path.join(exp_dir, name + ".npy"), np.asarray(values))
        with open(os.path.join(exp_dir, name + ".bin"), "wb") as f:
            f.write(np.ascontiguousarray(values).tobytes())
        manifest[name] = {
            "path": os.path.relpath(path, src),
            "expected": name + ".npy",
            "dtype": np.dtype(lazy.dtype).str,
            "shape": list(lazy.shape),
            "rtol": rtol,
            "chunks": list(chunks),
            "blocks": list(blocks),
        }

    def refused(
        name: Any, expr: Any, ops: Any, why: Any, shape: Any = (40, 30), dtype: str = "f8", kind: str = "lazyexpr"
    ) -> None:
        path = os.path.join(src, name + ".b2nd")
        payload = {
            "kind": kind,
            "version": 1,
            "expression": expr,
            "operands": {k: (ref(p) if isinstance(p, str) else p) for k, p in ops.items()},
        }
        carrier(path, shape, dtype, tuple(min(s, 8) for s in shape), tuple(min(s, 4) for s in shape), payload)
        manifest[name] = {"path": name + ".b2nd", "why": why}

    A, B, C, M = "ops/a.b2nd", "ops/b.b2nd", "ops/c.b2nd", "ops/m.b2nd"
    computed("e_arith", "a * b + 1.5", {"a": A, "b": B}, (10, 12), (5, 4))
    computed("e_where", "where(m, a, -a)", {"m": M, "a": A}, (25, 25), (5, 25))
    computed("e_int", "c // 3 + c % 5 - c * c", {"c": C}, (16, 1), (16, 1))
    computed("e_cmp", "((a > 0.5) & m) | (c < 10)", {"a": A, "m": M, "c": C}, (8, 30), (8, 10))
    computed("e_mixed", "u * c + b", {"u": "ops/u.b2nd", "c": C, "b": B}, (40, 30), (20, 8))
    # Integers too large for float32 meeting float32: python-blosc2 computes these parts in
    # float32 and reports float64 (see src/compute/typed.rs, Typing).
    W = "ops/w.b2nd"
    computed("e_int_f32", "w + b", {"w": W, "b": B}, (20, 30), (10, 10))
    computed("e_int_f32_f64", "(w + b) * a", {"w": W, "b": B, "a": A}, (20, 30), (10, 10))
    computed("e_int_f32_where", "where(m, w, b) - 1", {"m": M, "w": W, "b": B}, (20, 30), (10, 10))
    computed("e_int_f32_sin", "sin(b) + w", {"w": W, "b": B}, (20, 30), (10, 10), rtol=2e-6)
    save("ops/h.b2nd", rng.integers(-5, 5, (40, 30)).astype("i2"), (16, 16), (8, 8))
    computed("e_int_fn", "w + cosh(h) * 3", {"w": W, "h": "ops/h.b2nd"}, (20, 30), (10, 10), rtol=4e-15)
    # float32 b takes part: python-blosc2's own engines differ in its last bits.
    computed(
        "e_trans",
        "sin(a) + exp(b) - sqrt(abs(c)) + arctan2(a, b)",
        {"a": A, "b": B, "c": C},
        (11, 7),
        (4, 7),
        rtol=2e-6,
    )
    computed(
        "e_trans64",
        "sin(a) * cosh(a) + log1p(abs(a)) - arctan2(a, cosh(a)) + expm1(a) ** 2",
        {"a": A},
        (11, 7),
        (4, 7),
        rtol=4e-15,
    )
    computed("e_nested", "e * 2 - a", {"e": "../e_arith.b2nd", "a": "../ops/a.b2nd"}, (20, 30), (20, 6), rel="sub")
    computed(
        "e_store",
        "x * a",
        {"x": {"kind": "dictstore_key", "version": 1, "urlpath": os.path.abspath(store), "key": "/x"}, "a": A},
        (40, 10),
        (10, 10),
    )
    computed("e_legacy", "a + b", {"a": A, "b": B}, (16, 16), (4, 16), legacy=True)
    # A private operand (0600) under a 0644 expression: computed, shown to
    # other users only as the operand allows.
    computed("e_private", "a + 1", {"a": "ops/private.b2nd"}, (16, 16), (8, 8))

    # e_arith's values once ops/b.b2nd is replaced by ops/b2.b2nd (the test swaps them).
    b2 = blosc2.lazyexpr(
        "a * b + 1.5", {"a": blosc2.open(os.path.join(src, A)), "b": blosc2.open(os.path.join(src, "ops/b2.b2nd"))}
    )[...]
    with open(os.path.join(exp_dir, "e_arith_b2.bin"), "wb") as f:
        f.write(np.ascontiguousarray(b2).tobytes())

    refused(
        "e_outside_abs", "a + 1", {"a": os.path.abspath(os.path.join(outside, "a.b2nd"))}, "outside the mounted source"
    )
    refused("e_outside_rel", "a + 1", {"a": "../outside/a.b2nd"}, "outside the mounted source")
    refused("e_outside_link", "a + 1", {"a": "ops/link.b2nd"}, "outside the mounted source")
    refused("e_cycle", "e + 1", {"e": "e_cycle.b2nd"}, "refers back to itself")
    refused("e_cycle_a", "e + 1", {"e": "e_cycle_b.b2nd"}, "refers back to itself")
    refused("e_cycle_b", "e + 1", {"e": "e_cycle_a.b2nd"}, "refers back to itself")
    refused("e_missing", "a + 1", {"a": "ops/nothere.b2nd"}, "does not resolve")
    refused("e_malformed", "a +* b", {"a": A, "b": B}, "malformed expression")
    refused("e_terms", "+".join(["a"] * 10000), {"a": A}, "terms")
    refused("e_parens", "(" * 1000 + "a" + ")" * 1000, {"a": A}, "nested deeper")
    refused("e_unknown_operand", "a + q", {"a": A}, "unknown operand")
    refused("e_no_broadcast", "a + d", {"a": A, "d": "ops/d.b2nd"}, "cannot broadcast")
    refused("e_unknown_function", "frobnicate(a)", {"a": A}, "unknown function")
    refused(
        "e_huge",
        "tall + wide",
        {"tall": "ops/tall.b2nd", "wide": "ops/wide.b2nd"},
        "too large",
        shape=(1, 1),
        dtype="u1",
    )
    refused("e_reduction", "sum(a, axis=0)", {"a": A}, "not elementwise", shape=(30,))
    refused("e_shape", "a + 1", {"a": A}, "differs from the saved shape", shape=(4, 3))
    refused(
        "e_c2",
        "a + 1",
        {"a": {"kind": "c2array", "version": 1, "path": "@public/x.b2nd", "urlbase": "https://cat2.example/"}},
        "Caterva2",
    )
    path = os.path.join(src, "e_udf.b2nd")
    carrier(
        path,
        (4,),
        "f8",
        (4,),
        (4,),
        {
            "kind": "lazyudf",
            "version": 1,
            "function_kind": "python",
            "udf_source": "def f(inputs, output, offset): pass",
            "operands": {},
        },
    )
    manifest["e_udf"] = {"path": "e_udf.b2nd", "why": "not evaluated"}

    with open(os.path.join(out, "manifest.json"), "w") as manifest_file:
        json.dump(manifest, manifest_file, indent=1)
    print(f"{len(manifest)} expressions in {src}")


if __name__ == "__main__":
    main()
