#!/usr/bin/env python3
"""The "tables" scenario of scripts/bench/bench.py: a CTable's table.csv, table.arrow and its text
columns' items.jsonl read whole.

Usage (as root; bench.py runs this module for `--scenario tables`):

    .venv/bin/python scripts/bench/bench.py --scenario tables --binary target/release/blosc2fs --repeats 3
    .venv/bin/python scripts/bench/bench.py --scenario tables --table-rows 200000 --repeats 1   # trying it

Corpus (WORKDIR/tables/big.b2d, reused while tables.json matches): a CTable of --table-rows rows
(default 10,000,000) written by `CTable.extend` in batches of 1 Mi rows (`from_arrow` appends
its nullable and dictionary columns row by row: hours at this size): `id` int64, `x` float64,
`k` int32, `name` utf8 (`row<i>`, with a comma and a quote every 5th row), `n` a nullable int64
(every 7th row null), `cat` a dictionary of four words (every 11th row null); one row in 1,000
deleted. Rows, each repeated --repeats times (median shown), after one untimed
read of the table's files into the page cache, each repeat on a fresh mount
(--cache-size, default 128M):

  python-blosc2 (the reference)
    `CTable.open(path).to_arrow()`: wall and process CPU seconds, in a worker process
  blosc2fs
    the first `stat` of table.csv and of table.arrow: the measuring pass (every batch
      rendered once, only its length kept)
    `cat MNT/big.b2d/table.csv > /dev/null` and `cat MNT/big.b2d/table.arrow > /dev/null`:
      wall, MB/s, the daemon's CPU seconds
    `pyarrow.feather.read_table(MNT/big.b2d/table.arrow)` in a worker process (a fresh mount:
      measured on open): wall seconds, and on the first repeat whether it equals to_arrow()
    the first `stat` of name/items.jsonl and cat/items.jsonl (utf8, dictionary: the measuring
      pass), then `cat` of each: wall, MB/s, the daemon's CPU seconds; on the first repeat its
      lines counted (one per live row). On the mount that read the table files just before, so
      the daemon's cache may still hold some of the column's decoded chunks
    the daemon's peak RSS (VmHWM) after the reads, against --cache-size

Target (issue 43): the daemon's peak RSS stays within --cache-size + 64 MiB (the rendered
batches it keeps are two per file).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import statistics
import time
from typing import Any

from benchlib import (
    Json,
    Mount,
    host_env,
    host_load,
    parse_size,
    print_report,
    row_median,
    run_timed,
    run_worker,
    warm_file,
)

VERSION = 1
BATCH = 1 << 20
# The columns whose items.jsonl is read (a utf8 and a dictionary column).
ITEMS_COLUMNS = ("name", "cat")


def count_lines(path: str) -> int:
    with open(path, "rb") as f:
        return sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))


def worker(request: dict[str, Any]) -> dict[str, Any]:
    """The python-blosc2 / pyarrow side (run in bench.py's worker process)."""
    import blosc2
    import numpy as np
    from pyarrow import feather

    op = request["op"]
    if op == "tables_make":
        rows, path = int(request["rows"]), request["path"]
        words = ["red", "green", "blue", "cyan"]

        @dataclasses.dataclass
        class Row:
            id: int = blosc2.field(blosc2.int64())
            x: float = blosc2.field(blosc2.float64())
            k: int = blosc2.field(blosc2.int32())
            name: str = blosc2.field(blosc2.utf8())
            n: int = blosc2.field(blosc2.int64(nullable=True))
            cat: str = blosc2.field(blosc2.dictionary())

        rng = np.random.default_rng(43)
        t0 = time.perf_counter()
        t = blosc2.CTable(Row, urlpath=path, mode="w", expected_size=rows)
        for start in range(0, rows, BATCH):
            i = np.arange(start, min(start + BATCH, rows), dtype=np.int64)
            t.extend(
                {
                    "id": i,
                    "x": np.round(rng.normal(size=len(i)), 3),
                    "k": (i % 1000).astype(np.int32),
                    "name": [f'row{j},"q"' if j % 5 == 0 else f"row{j}" for j in i.tolist()],
                    "n": [None if j % 7 == 2 else 3 * j for j in i.tolist()],
                    "cat": [None if j % 11 == 3 else words[j % 4] for j in i.tolist()],
                }
            )
        t.delete(list(range(500, rows, 1000)))
        t.close()
        return {"seconds": time.perf_counter() - t0}
    if op == "tables_to_arrow":
        c0, t0 = time.process_time(), time.perf_counter()
        table = blosc2.CTable.open(request["path"], mode="r").to_arrow()
        t1, c1 = time.perf_counter(), time.process_time()
        out = {"seconds": t1 - t0, "cpu": c1 - c0, "rows": table.num_rows, "nbytes": table.nbytes}
        if request.get("compare"):
            t2 = time.perf_counter()
            mounted = feather.read_table(request["compare"])
            out["feather_seconds"] = time.perf_counter() - t2
            out["equal"] = bool(mounted.equals(table))
        return out
    if op == "tables_feather":
        t0 = time.perf_counter()
        mounted = feather.read_table(request["path"])
        return {"seconds": time.perf_counter() - t0, "rows": mounted.num_rows}
    raise ValueError(op)


def run(args: Any) -> int:
    d = os.path.join(args.workdir, "tables")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "big.b2d")
    marker = os.path.join(args.workdir, "tables.json")
    want = {"version": VERSION, "rows": args.table_rows}
    made = None
    if os.path.exists(marker) and os.path.isdir(path):
        with open(marker) as f:
            saved = json.load(f)
        if saved.get("want") == want:
            made = saved["made"]
    if made is None:
        print(f"making the table ({args.table_rows} rows) ...", flush=True)
        made = run_worker(args.python, {"op": "tables_make", "rows": args.table_rows, "path": path})
        with open(marker, "w") as f:
            json.dump({"want": want, "made": made}, f)
    env = host_env()
    cache = args.cache_size
    budget_mib = parse_size(cache) / (1 << 20)
    print(
        f"host: {env.get('cpu_model')} ({env['cpus']} CPUs), kernel {env['kernel']}, load {env['loadavg_start']:.2f}; "
        f"{args.table_rows} rows, made in {made['seconds']:.1f} s"
    )
    for root, _, files in os.walk(path):
        for name in files:
            warm_file(os.path.join(root, name))
    rows: dict[str, list[Json]] = {k: [] for k in ("python", "measure", "csv", "arrow", "feather", *ITEMS_COLUMNS)}
    live_rows = args.table_rows - len(range(500, args.table_rows, 1000))
    hwms: list[float] = []
    errors: list[str] = []
    sizes: dict[str, int] = {}
    for rep in range(args.repeats):
        with Mount.of(args, d, cache) as m:
            table = os.path.join(m.mnt, "big.b2d")
            measure = {}
            for file in ("table.csv", "table.arrow"):
                t0 = time.perf_counter()
                sizes[file] = os.stat(os.path.join(table, file)).st_size
                measure[file] = time.perf_counter() - t0
            rows["measure"].append(measure)
            for key, file in (("csv", "table.csv"), ("arrow", "table.arrow")):
                r = m.charged(lambda: run_timed(["cat", os.path.join(table, file)]))
                del r["stderr"]
                rows[key].append(r)
            for column in ITEMS_COLUMNS:
                items = os.path.join(table, column, "items.jsonl")
                t0 = time.perf_counter()
                sizes[f"{column}/items.jsonl"] = os.stat(items).st_size
                measure[f"{column}/items.jsonl"] = time.perf_counter() - t0
                r = m.charged(lambda: run_timed(["cat", items]))
                del r["stderr"]
                rows[column].append(r)
                if rep == 0 and (lines := count_lines(items)) != live_rows:
                    errors.append(f"{column}/items.jsonl has {lines} lines, the table {live_rows} live rows")
            hwms.append(m.vm_hwm_mib() or 0.0)
        with Mount.of(args, d, cache) as m:
            arrow = os.path.join(m.mnt, "big.b2d", "table.arrow")
            if rep == 0:
                py = run_worker(args.python, {"op": "tables_to_arrow", "path": path, "compare": arrow})
                if not py["equal"]:
                    errors.append("pyarrow.feather.read_table(MNT/big.b2d/table.arrow) differs from to_arrow()")
                rows["feather"].append({"seconds": py["feather_seconds"]})
            else:
                rows["feather"].append(run_worker(args.python, {"op": "tables_feather", "path": arrow}))
                py = run_worker(args.python, {"op": "tables_to_arrow", "path": path})
            hwms.append(m.vm_hwm_mib() or 0.0)
        rows["python"].append(py)
        print(
            f"[{rep + 1}/{args.repeats}] to_arrow {py['seconds']:.2f} s; measure csv {measure['table.csv']:.2f} s, "
            f"arrow {measure['table.arrow']:.2f} s; cat csv {rows['csv'][-1]['seconds']:.2f} s, "
            f"cat arrow {rows['arrow'][-1]['seconds']:.2f} s, feather.read_table {rows['feather'][-1]['seconds']:.2f} s; "
            + "".join(
                f"{c}/items.jsonl measure {measure[c + '/items.jsonl']:.2f} s, cat {rows[c][-1]['seconds']:.2f} s; "
                for c in ITEMS_COLUMNS
            )
            + f"peak RSS {max(hwms[-2:]):.0f} MiB",
            flush=True,
        )

    med = functools.partial(row_median, rows)

    py_s = med("python")
    mb = {k: v / 1e6 for k, v in sizes.items()}
    hwm = max(hwms)
    report = [
        "| row | wall s | CPU s | MB/s | ratio to to_arrow() |",
        "|---|---|---|---|---|",
        f"| python-blosc2 `CTable.open(...).to_arrow()` | {py_s:.2f} | {med('python', 'cpu'):.2f} | | 1.00 |",
        f"| first `stat` of table.csv (measuring pass, {mb['table.csv']:.0f} MB) | "
        f"{statistics.median(r['table.csv'] for r in rows['measure']):.2f} | | | |",
        f"| first `stat` of table.arrow (measuring pass, {mb['table.arrow']:.0f} MB) | "
        f"{statistics.median(r['table.arrow'] for r in rows['measure']):.2f} | | | |",
        f"| `cat table.csv` | {med('csv'):.2f} | {med('csv', 'daemon_cpu'):.2f} (daemon) | "
        f"{mb['table.csv'] / med('csv'):.0f} | {py_s / med('csv'):.2f} |",
        f"| `cat table.arrow` | {med('arrow'):.2f} | {med('arrow', 'daemon_cpu'):.2f} (daemon) | "
        f"{mb['table.arrow'] / med('arrow'):.0f} | {py_s / med('arrow'):.2f} |",
        f"| `pyarrow.feather.read_table(MNT/.../table.arrow)` (fresh mount: measured on open) | "
        f"{med('feather'):.2f} | | {mb['table.arrow'] / med('feather'):.0f} | {py_s / med('feather'):.2f} |",
        *(
            row
            for c in ITEMS_COLUMNS
            for row in (
                f"| first `stat` of {c}/items.jsonl (measuring pass, {mb[c + '/items.jsonl']:.0f} MB) | "
                f"{statistics.median(r[c + '/items.jsonl'] for r in rows['measure']):.2f} | | | |",
                f"| `cat {c}/items.jsonl` | {med(c):.2f} | {med(c, 'daemon_cpu'):.2f} (daemon) | "
                f"{mb[c + '/items.jsonl'] / med(c):.0f} | {py_s / med(c):.2f} |",
            )
        ),
        f"\ndaemon peak RSS {hwm:.0f} MiB with --cache-size {cache}: target ≤ {budget_mib + 64:.0f} MiB: "
        f"{'PASS' if hwm <= budget_mib + 64 else 'FAIL'}",
        host_load(env),
    ]
    results = {"env": env, "made": made, "sizes": sizes, "rows": rows, "hwm_mib": hwms, "errors": errors}
    return print_report(report, os.path.join(args.workdir, "tables-results.json"), results, errors)
