#!/usr/bin/env python3
"""python-blosc2's own values for random lazy expressions: the oracle of
tests/compute_oracle.rs (blosc2fs's src/compute/).

    compute_oracle.py cases --seed S --count N --out DIR
        Draws N expressions x dtypes x shapes (with broadcasting) from seed S,
        writes each operand as DIR/<case>_<name>.npy (some big-endian), has
        python-blosc2 evaluate each expression with both of its engines
        (miniexpr, used when every operand has the result's shape, chunks and
        blocks; and the chunked numexpr engine, forced with
        `lazyexpr.try_miniexpr = False`), each in a forked child because
        miniexpr can crash the process (SIGFPE on an integer division by
        zero), and writes the results as .npy and DIR/manifest.json.
    compute_oracle.py saved --seed S --out DIR
        Saves `a * 2 + sin(b) - c` with operands on disk, reopens it with
        `blosc2.open(..., deserialize="full")` and writes its vlmeta, the
        operands and the values python-blosc2 reads.
    compute_oracle.py recipes --out DIR
        Saves expressions with python-blosc2 and prints their vlmeta (how
        src/compute/recipe.rs's forms were checked).
    compute_oracle.py probe-dtypes
        Prints python-blosc2's reported dtype of each function and operator
        for every pair of dtypes (how src/compute/promote.rs was checked).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import warnings
from typing import Any

import numpy as np

warnings.simplefilter("ignore")

DTYPES = ["?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8", "c8", "c16"]
# Weights: floats and the common ints most, complex least.
WEIGHTS = [3, 2, 2, 4, 4, 2, 1, 1, 1, 6, 8, 1, 1]
BINOPS = ["+", "-", "*", "/", "//", "%", "**", "<", "<=", ">", ">=", "==", "!=", "&", "|", "^"]
# The unary functions whose values are only required to agree within a tolerance.
INEXACT_UNFUNCS = [
    "sqrt",
    "exp",
    "expm1",
    "log",
    "log10",
    "log1p",
    "log2",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
]
UNFUNCS = [
    "abs",
    *INEXACT_UNFUNCS,
    "floor",
    "ceil",
    "trunc",
    "isnan",
    "isinf",
    "isfinite",
    "negative",
    "square",
    "sign",
    "signbit",
    "round",
    "real",
    "imag",
    "conj",
    "reciprocal",
    "asin",
    "atan",
]
BINFUNCS = ["arctan2", "maximum", "minimum", "hypot", "copysign", "nextafter", "logaddexp", "atan2"]
# Functions whose values are only required to agree within a tolerance.
INEXACT = {*INEXACT_UNFUNCS, "arctan2", "hypot", "logaddexp", "asin", "atan", "atan2", "abs"}


NUMPY_NS = {f: getattr(np, f) for f in UNFUNCS + BINFUNCS + ["where"] if hasattr(np, f)}
NUMPY_NS.update({"asin": np.arcsin, "atan": np.arctan, "atan2": np.arctan2, "True": True})


def gen_expr(rng: random.Random, names: Any, depth: Any) -> Any:
    """A random expression text and whether it involves inexact math."""
    if depth == 0 or rng.random() < 0.25:
        r = rng.random()
        if r < 0.8:
            return rng.choice(names), False
        lit = rng.choice(["2", "3", "1", "0", "-1", "1.5", "0.25", "2.0", "-0.5", "True", "7", "10"])
        return lit, False
    r = rng.random()
    if r < 0.5:
        op = rng.choice(BINOPS)
        a, ia = gen_expr(rng, names, depth - 1)
        if op == "**":
            b, ib = rng.choice(["2", "3", "0", "1", "0.5", "-1.0", "1.5"]), False
        else:
            b, ib = gen_expr(rng, names, depth - 1)
        return f"({a} {op} {b})", ia or ib or op == "**"
    if r < 0.8:
        f = rng.choice(UNFUNCS)
        # exp and friends magnify an argument's rounding by its size: given
        # a computed argument, float32 rounding differences between engines
        # would exceed the tolerance, so they take an operand.
        a, ia = gen_expr(rng, names, 0 if f in ("exp", "expm1", "sinh", "cosh") else depth - 1)
        return f"{f}({a})", ia or f in INEXACT
    if r < 0.92:
        f = rng.choice(BINFUNCS)
        a, ia = gen_expr(rng, names, depth - 1)
        # copysign takes the sign of a NaN from a domain error (arcsin(2)),
        # which differs between libms: give it an operand.
        b, ib = gen_expr(rng, names, 0 if f == "copysign" else depth - 1)
        return f"{f}({a}, {b})", ia or ib or f in INEXACT
    c, ic = gen_expr(rng, names, depth - 1)
    a, ia = gen_expr(rng, names, depth - 1)
    b, ib = gen_expr(rng, names, depth - 1)
    return f"where({c} > 0, {a}, {b})", ic or ia or ib


def gen_values(nrng: Any, dt: Any, shape: Any) -> Any:
    dt = np.dtype(dt)
    n = int(np.prod(shape))
    if dt.kind == "b":
        v = nrng.integers(0, 2, n).astype(bool)
    elif dt.kind == "i":
        # Small: intermediate integer overflow is where python-blosc2's
        # engines and numpy part ways (each engine holds narrow integers in
        # its own width), so the cases stay clear of it.
        v = nrng.integers(-4, 5, n).astype(dt)
    elif dt.kind == "u":
        v = nrng.integers(0, 9, n).astype(dt)
    elif dt.kind == "f":
        v = (nrng.normal(size=n) * 3).astype(dt)
        special = nrng.random(n) < 0.04
        v[special] = nrng.choice(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0], dtype=dt), special.sum())
    else:
        v = (nrng.normal(size=n) * 2 + 1j * nrng.normal(size=n) * 2).astype(dt)
    return v.reshape(shape)


def in_child(fn: Any) -> Any:
    """Run fn() in a forked child; its result (a numpy array) or an error text."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        # Some expressions send python-blosc2 into seconds of recursion
        # before a RecursionError: give up on them sooner.
        import signal

        signal.alarm(1)
        payload: tuple[str, Any]
        try:
            res = fn()
            payload = ("ok", np.asarray(res))
        except BaseException as e:  # noqa: BLE001
            payload = ("err", f"{type(e).__name__}: {e}"[:300])
        import pickle

        data = pickle.dumps(payload)
        with os.fdopen(w, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        return None, f"crashed (wait status {status})"
    import pickle

    kind, val = pickle.loads(data)
    return (val, None) if kind == "ok" else (None, val)


def cases(args: Any) -> None:
    os.environ["NUMEXPR_MAX_THREADS"] = "1"
    os.environ["NUMEXPR_NUM_THREADS"] = "1"
    import blosc2
    import blosc2.lazyexpr as lz

    # One thread: the evaluations run in forked children, where another
    # thread pool would have to be rebuilt (and was 100 times slower).
    blosc2.set_nthreads(1)
    rng = random.Random(args.seed)
    nrng = np.random.default_rng(args.seed)
    os.makedirs(args.out, exist_ok=True)
    manifest = []
    for k in range(args.count):
        ndim = rng.choice([1, 1, 2, 2, 3])
        shape = [rng.randint(1, 7) for _ in range(ndim)]
        nops = rng.choice([1, 2, 2, 3])
        names = ["a", "b", "c"][:nops]
        ops, arrays = [], {}
        broadcast = rng.random() < 0.4
        for name in names:
            dt = rng.choices(DTYPES, WEIGHTS)[0]
            oshape = list(shape)
            if broadcast and rng.random() < 0.6:
                oshape = oshape[rng.randint(0, ndim - 1) :]
                oshape = [1 if rng.random() < 0.3 else d for d in oshape]
            vals = gen_values(nrng, dt, tuple(oshape))
            arrays[name] = vals
            stored = vals
            if np.dtype(dt).itemsize > 1 and rng.random() < 0.25:
                stored = vals.astype(np.dtype(dt).newbyteorder(">"))
            fname = f"{k}_{name}.npy"
            np.save(os.path.join(args.out, fname), stored, allow_pickle=False)
            ops.append({"name": name, "dtype": stored.dtype.str, "shape": list(oshape), "file": fname})
        while True:
            expr, inexact = gen_expr(rng, names, rng.choice([1, 2, 2, 3]))
            if any(n in expr for n in names):
                break
        case = {"expr": expr, "operands": ops, "inexact": inexact}

        def lazy() -> Any:
            return blosc2.lazyexpr(expr, {n: blosc2.asarray(v) for n, v in arrays.items()})

        try:
            e = lazy()
            case["dtype"] = np.dtype(e.dtype).str
            case["shape"] = list(e.shape)
        except Exception as ex:  # noqa: BLE001
            case["python_error"] = f"{type(ex).__name__}: {ex}"[:300]
            manifest.append(case)
            continue
        for engine, flag in (("mini", True), ("chunk", False)):

            def run(flag: Any = flag) -> Any:
                lz.try_miniexpr = flag
                return lazy()[...]

            val, err = in_child(run)
            if val is not None:
                fname = f"{k}_{engine}.npy"
                np.save(
                    os.path.join(args.out, fname),
                    np.ascontiguousarray(val).astype(np.dtype(case["dtype"])),
                    allow_pickle=False,
                )
                case[engine] = fname
            else:
                case[engine + "_error"] = err
        # numpy's own values, cast to python-blosc2's dtype: the reference
        # where both python-blosc2 engines are wrong (see the module doc of
        # tests/compute_oracle.rs).
        try:
            with np.errstate(all="ignore"):
                ref = np.asarray(eval(expr, {"__builtins__": {}}, {**NUMPY_NS, **arrays}))
            fname = f"{k}_numpy.npy"
            np.save(
                os.path.join(args.out, fname),
                np.ascontiguousarray(np.broadcast_to(ref, case["shape"])).astype(np.dtype(case["dtype"])),
                allow_pickle=False,
            )
            case["numpy"] = fname
        except Exception as ex:  # noqa: BLE001
            case["numpy_error"] = f"{type(ex).__name__}: {ex}"[:300]
        manifest.append(case)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"seed": args.seed, "cases": manifest}, f, indent=1)


def recipes(args: Any) -> None:
    import blosc2
    from blosc2 import blosc2_ext

    os.makedirs(args.out, exist_ok=True)
    os.chdir(args.out)
    a = blosc2.asarray(np.arange(10, dtype="f8"), urlpath="a.b2nd", mode="w")
    b = blosc2.asarray(np.arange(10, dtype="f4"), urlpath="b.b2nd", mode="w")
    saved = {"urlpath": blosc2.lazyexpr("a * 2 + sin(b)", {"a": a, "b": b})}
    for ext in ["b2d", "b2z"]:
        ds = blosc2.DictStore(f"run.{ext}", mode="w")
        ds["/x"] = np.arange(10, dtype="i4")
        ds.close()
        x = blosc2.DictStore(f"run.{ext}", mode="r")["/x"]
        saved[ext] = blosc2.lazyexpr("a + x", {"a": a, "x": x})
    for label, e in saved.items():
        e.save(f"{label}.b2nd")
        res = blosc2_ext.open(f"{label}.b2nd", "r", 0)
        print(label, "meta b2o", res.schunk.meta["b2o"])
        print(label, "vlmeta b2o", json.dumps(res.schunk.vlmeta["b2o"]))


def saved(args: Any) -> None:
    """Save `a * 2 + sin(b) - c` (float64, float32, int32 operands on disk),
    reopen it as a user would, and write its vlmeta, the operands (as
    <name>.npy) and python-blosc2's values (e.npy)."""
    import blosc2
    from blosc2 import blosc2_ext

    os.makedirs(os.path.join(args.out, "ops"), exist_ok=True)
    os.chdir(args.out)
    nrng = np.random.default_rng(args.seed)
    n = 10_000
    arrays = {
        "a": nrng.normal(size=n) * 10,
        "b": (nrng.normal(size=n) * 10).astype("f4"),
        # Native byte order: python-blosc2 4.14.1's engines read a
        # big-endian operand's bytes as little-endian.
        "c": nrng.integers(-1000, 1000, n).astype("<i4"),
    }
    ops = {}
    for name, v in arrays.items():
        ops[name] = blosc2.asarray(v, urlpath=f"ops/{name}.b2nd", mode="w")
        np.save(f"{name}.npy", v, allow_pickle=False)
    blosc2.lazyexpr("a * 2 + sin(b) - c", ops).save("e.b2nd")
    opened = blosc2.open("e.b2nd", deserialize="full")
    np.save("e.npy", np.asarray(opened[...]), allow_pickle=False)
    res = blosc2_ext.open("e.b2nd", "r", 0)
    with open("vlmeta.json", "w") as f:
        json.dump({k: res.schunk.vlmeta[k] for k in res.schunk.vlmeta.getall()}, f)


def probe_dtypes(_args: Any) -> None:
    import blosc2

    def reported(expr: Any, **dts: Any) -> Any:
        try:
            e = blosc2.lazyexpr(expr, {k: blosc2.ones(2, dtype=d) for k, d in dts.items()})
            return np.dtype(e.dtype).str[1:]
        except Exception:  # noqa: BLE001
            return "ERR"

    for f in UNFUNCS:
        print(f, " ".join(reported(f"{f}(a)", a=x) for x in DTYPES))
    for op in ["a + b", "a / b", "a // b", "a ** b", "a < b", "a & b"] + [f"{f}(a, b)" for f in BINFUNCS]:
        for x in DTYPES:
            print(op, x, " ".join(reported(op, a=x, b=y) for y in DTYPES))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cases")
    c.add_argument("--seed", type=int, required=True)
    c.add_argument("--count", type=int, default=200)
    c.add_argument("--out", required=True)
    r = sub.add_parser("recipes")
    r.add_argument("--out", required=True)
    sv = sub.add_parser("saved")
    sv.add_argument("--seed", type=int, default=1)
    sv.add_argument("--out", required=True)
    sub.add_parser("probe-dtypes")
    args = ap.parse_args()
    {"cases": cases, "recipes": recipes, "saved": saved, "probe-dtypes": probe_dtypes}[args.cmd](args)


if __name__ == "__main__":
    main()
