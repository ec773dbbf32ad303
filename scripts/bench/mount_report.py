"""The mount scenario's summary and tables: medians, ratios and targets out of bench_mount.py's raw numbers.

One job: turn results.json's raw measurements (one per row, array and repeat) into the summary
(medians over repeats; ratios are medians of per-repeat ratios, each pair measured side by side),
judge the targets of issue 10, and print the tables: the arrays' columns, the targets, the peers
(squashfuse_ll) and the scale table.
"""

from __future__ import annotations

from typing import Any

from benchlib import GIB, MIB, Json, busy_warning, fmt, gbps, median, percentile
from corpus import CEILING, FILES
from peers import PEER_KINDS, PEER_OF, PEER_OF_ARRAY

RSS_SLACK_MIB = 64
CODEC_OF = {"zstd": "zstd", "lz4": "lz4", "narrow": "zstd", "clevel0": None}
# Targets from issue 10 (codec-specific ones do not apply to clevel0).
CAT_TARGET = {"zstd": 0.95, "lz4": 0.9}
CPU_TARGET = {"zstd": 1.3, "lz4": 1.5}
COLD_TARGET = {"zstd": 0.8, "lz4": 0.6}
WARM_TARGET = 0.6
RANDOM_TARGET = 0.8
AMP_TARGET = 1.05
STARVE_TARGET = 0.5


# ---------------------------------------------------------------- summary


def latency_percentiles(prefix: str, mount: list[float], python: list[float]) -> Json:
    """The p50 and p99 of the mount's and of python-blosc2's read latencies (None where none was
    measured), named as the summary names them: PREFIX_mount_p50 ... PREFIX_python_p99."""
    return {
        f"{prefix}_{reader}_p{q}": percentile(latencies, q) if latencies else None
        for reader, latencies in (("mount", mount), ("python", python))
        for q in (50, 99)
    }


def per_gib(seconds: Any, nbytes: Any) -> Any:
    return None if seconds is None else seconds / (nbytes / GIB)


def summarize(results: dict[str, Any]) -> None:
    raw, nbytes = results["raw"], results["config"]["nbytes"]
    cache_bytes = results["config"]["cache_bytes"]
    reps = range(results["config"]["repeats"])
    summary: Json = {}
    targets: Json = {}

    def pick(lst: Any, rep: Any, fn: Any) -> Any:
        """fn(measurement of repeat rep), None when missing."""
        for x in lst:
            if x["rep"] == rep:
                return fn(x)
        return None

    def series(lst: Any, fn: Any) -> Any:
        return [pick(lst, rep, fn) for rep in reps]

    def ratio_med(a: Any, b: Any) -> Any:
        """Median over repeats of a[rep] / b[rep] (pairs measured side by side)."""
        return median([x / y if (x is not None and y) else None for x, y in zip(a, b)])

    raw_dd = series(raw["raw_dd"], lambda x: gbps(x["nbytes"], x["seconds"]))
    summary["raw_dd_gbps"] = median(raw_dd)
    tmpfs_dd = series(raw.get("tmpfs_raw_dd", []), lambda x: gbps(x["nbytes"], x["seconds"]))
    summary["tmpfs_raw_dd_gbps"] = median(tmpfs_dd)
    for key in ("raw_dd", "tmpfs_raw_dd"):
        cs = [x.get("folios") for x in raw.get(key, [])]
        summary[f"{key}_large_folios"] = large_share(cs)
        summary[f"{key}_large_folio_kib"] = folio_kib(cs)
    for n in FILES:
        r = raw["files"][n]
        c1 = series(r["c1"], lambda x: gbps(x["nbytes"], x["seconds"]))
        c1cpu = series(r["c1"], lambda x: per_gib(x["cpu"], x["nbytes"]))
        c2 = series(r["c2"], lambda x: gbps(x["nbytes"], x["seconds"]))
        c2cpu = series(r["c2"], lambda x: per_gib(x["cpu"], x["nbytes"]))
        sl = series(r["slice"], lambda x: gbps(x["nbytes"], x["seconds"]))
        slcpu = series(r["slice"], lambda x: per_gib(x["cpu"], x["nbytes"]))
        cat = series(r["cat"], lambda x: gbps(nbytes, x["seconds"]))
        catcpu = series(r["cat"], lambda x: per_gib(x["cpu"], nbytes))
        cold = series(r["scan"], lambda x: gbps(nbytes, x["cold"]["seconds"]))
        coldcpu = series(r["scan"], lambda x: per_gib(x["cold_daemon_cpu"], nbytes))
        ddcpu = series(r["scan"], lambda x: per_gib(x["cold"]["cpu"], nbytes))
        warm = series(r["scan"], lambda x: gbps(nbytes, x["warm"]["seconds"]))
        warm_first = series(
            r["scan"], lambda x: gbps(nbytes, x["warm_first"]["seconds"]) if "warm_first" in x else None
        )
        ceil_cold = series(
            r["scan"], lambda x: gbps(nbytes, x["ceiling"]["cold"]["seconds"]) if x.get("ceiling") else None
        )
        ceil_warm = series(
            r["scan"], lambda x: gbps(nbytes, x["ceiling"]["warm"]["seconds"]) if x.get("ceiling") else None
        )
        ceil_cpu = series(
            r["scan"], lambda x: per_gib(x["ceiling"]["cold_daemon_cpu"], nbytes) if x.get("ceiling") else None
        )
        ff = series(r["fromfile"], lambda x: gbps(nbytes, x["seconds"]))
        ffcpu = series(r["fromfile"], lambda x: per_gib(x["daemon_cpu"], nbytes))
        dc = series(r["disk_cold"], lambda x: gbps(nbytes, x["seconds"]))
        dccpu = series(r["disk_cold"], lambda x: per_gib(x["daemon_cpu"], nbytes))
        mlat = [v for x in r["mount_random"] for v in x["latencies"]]
        plat = [v for x in r["python_random"] for v in x["latencies"]]
        mp50 = series(r["mount_random"], lambda x: percentile(x["latencies"], 50))
        pp50 = series(r["python_random"], lambda x: percentile(x["latencies"], 50))
        mcpu = series(r["mount_random"], lambda x: x["daemon_cpu"] / len(x["latencies"]) if "daemon_cpu" in x else None)
        dmlat = [v for x in r["mount_random_disk"] for v in x["latencies"]]
        dplat = [v for x in r["python_random_disk"] for v in x["latencies"]]
        dmp50 = series(r["mount_random_disk"], lambda x: percentile(x["latencies"], 50))
        dpp50 = series(r["python_random_disk"], lambda x: percentile(x["latencies"], 50))
        hwms = [x["vm_hwm_mib"] for x in r["scan"] if x.get("vm_hwm_mib") is not None]
        amps = [x["cold_stats"]["amplification"] for x in r["scan"] if x["cold_stats"]["amplification"] is not None]
        d: Json = {
            "c1_gbps": median(c1),
            "c1_cpu_per_gib": median(c1cpu),
            "c2_gbps": median(c2),
            "c2_cpu_per_gib": median(c2cpu),
            "slice_gbps": median(sl),
            "slice_cpu_per_gib": median(slcpu),
            "cat_gbps": median(cat),
            "cat_cpu_per_gib": median(catcpu),
            "cat_vs_c1": ratio_med(cat, c1),
            "cat_cpu_vs_c1_cpu": ratio_med(catcpu, c1cpu),
            "cold_gbps": median(cold),
            "cold_vs_c2": ratio_med(cold, c2),
            "cold_daemon_cpu_per_gib": median(coldcpu),
            "cold_cpu_vs_c1_cpu": ratio_med(coldcpu, c1cpu),
            "cold_dd_cpu_per_gib": median(ddcpu),
            "warm_gbps": median(warm),
            "warm_vs_raw_dd": ratio_med(warm, raw_dd),
            "warm_vs_tmpfs_raw_dd": ratio_med(warm, tmpfs_dd),
            "warm_large_folios": large_share([x.get("folios") for x in r["scan"]]),
            "warm_large_folio_kib": folio_kib([x.get("folios") for x in r["scan"]]),
            "warm_first_gbps": median(warm_first),
            "warm_first_vs_raw_dd": ratio_med(warm_first, raw_dd),
            "ceiling_cold_gbps": median(ceil_cold),
            "ceiling_warm_gbps": median(ceil_warm),
            "ceiling_cold_daemon_cpu_per_gib": median(ceil_cpu),
            "cold_vs_ceiling": ratio_med(cold, ceil_cold),
            "warm_vs_ceiling": ratio_med(warm, ceil_warm),
            "ceiling_verified": any((x.get("ceiling") or {}).get("verified") for x in r["scan"]),
            "fromfile_gbps": median(ff),
            "fromfile_daemon_cpu_per_gib": median(ffcpu),
            "fromfile_vs_c2": ratio_med(ff, c2),
            "disk_cold_gbps": median(dc),
            "disk_cold_daemon_cpu_per_gib": median(dccpu),
            **latency_percentiles("random", mlat, plat),
            "random_p50_ratio": ratio_med(mp50, pp50),
            "random_daemon_cpu_per_read": median(mcpu),
            **latency_percentiles("random_disk", dmlat, dplat),
            "random_disk_p50_ratio": ratio_med(dmp50, dpp50),
            "vm_hwm_mib": max(hwms) if hwms else None,
            "amplification": max(amps) if amps else None,
            "verified": any(x.get("verified") for x in r["scan"]),
        }
        summary[n] = d

        codec = CODEC_OF[n]
        t: Json = {}

        def target(key: Any, value: Any, ok: Any, display: Any, applies: bool = True) -> None:
            if not applies:
                t[key] = {"value": value, "status": "info", "display": display}
            else:
                t[key] = {
                    "value": value,
                    "status": "n/a" if value is None else ("PASS" if ok else "FAIL"),
                    "display": display,
                }

        v = d["cat_vs_c1"]
        target("cat", v, v is not None and codec and v >= CAT_TARGET[codec], fmt(v, ".2f", "x"), codec is not None)
        v = d["cold_cpu_vs_c1_cpu"]
        target("cpu", v, v is not None and codec and v <= CPU_TARGET[codec], fmt(v, ".2f", "x"), codec is not None)
        v = d["cold_vs_c2"]
        target("cold", v, v is not None and codec and v >= COLD_TARGET[codec], fmt(v, ".2f", "x"), codec is not None)
        v = d["warm_vs_raw_dd"]
        target("warm", v, v is not None and v >= WARM_TARGET, fmt(v, ".2f", "x"))
        v = d["random_p50_ratio"]
        target("random", v, v is not None and v <= RANDOM_TARGET, fmt(v, ".2f", "x"))
        v = d["vm_hwm_mib"]
        limit = cache_bytes / MIB + RSS_SLACK_MIB
        target("rss", v, v is not None and v <= limit, f"{fmt(v, '.0f')}/{limit:.0f}")
        v = d["amplification"]
        target("amplification", v, v is not None and v <= AMP_TARGET, fmt(v, ".3f"))
        targets[n] = t

    scale: Json = {}
    for case in ("one", "arrays", "quarters"):
        lst = raw["scale"][case]
        if not lst:
            continue
        amps = [x["stats"]["amplification"] for x in lst if x["stats"]["amplification"] is not None]
        hwms = [x["vm_hwm_mib"] for x in lst if x.get("vm_hwm_mib") is not None]
        scale[case] = {
            "aggregate_gbps": median([x["aggregate_gbps"] for x in lst]),
            "cpu_per_gib": median([x["cpu_per_gib"] for x in lst]),
            "slowest_vs_mean": min(x["slowest_vs_mean"] for x in lst),
            "reader_gbps": [median(v) for v in zip(*[x["reader_gbps"] for x in lst])],
            "amplification": max(amps) if amps else None,
            "vm_hwm_mib": max(hwms) if hwms else None,
        }
        if case != "one":
            v = scale[case]["slowest_vs_mean"]
            scale[case]["target"] = {
                "value": v,
                "status": "PASS" if v >= STARVE_TARGET else "FAIL",
                "display": fmt(v, ".2f", "x"),
            }
    summary["scale"] = scale

    # peers: squashfuse_ll beside the paired array's cold dd, ratios per repeat
    peers: Json = {}
    for n, kind in PEER_OF.items():
        lst = raw.get("peers", {}).get(kind, [])
        if not lst:
            continue
        scan = raw["files"][n]["scan"]
        b_gb = series(scan, lambda x: gbps(nbytes, x["cold"]["seconds"]))
        b_cpu = series(scan, lambda x: per_gib(x["cold_daemon_cpu"], nbytes))
        p_gb = series(lst, lambda x: gbps(nbytes, x["cold"]["seconds"]))
        p_cpu = series(lst, lambda x: per_gib(x["daemon_cpu"], nbytes))
        hwms = [x["vm_hwm_mib"] for x in lst if x.get("vm_hwm_mib") is not None]
        peers[kind] = {
            "array": n,
            "blosc2fs_cold_gbps": median(b_gb),
            "blosc2fs_cold_daemon_cpu_per_gib": median(b_cpu),
            "squashfuse_cold_gbps": median(p_gb),
            "squashfuse_cold_daemon_cpu_per_gib": median(p_cpu),
            "gbps_ratio": ratio_med(b_gb, p_gb),
            "cpu_ratio": ratio_med(b_cpu, p_cpu),
            "blosc2fs_read_ahead_kb": median([x.get("read_ahead_kb") for x in scan]),
            "squashfuse_read_ahead_kb": median([x.get("read_ahead_kb") for x in lst]),
            "squashfuse_vm_hwm_mib": max(hwms) if hwms else None,
            "verified": any(x.get("verified") for x in lst),
        }
    summary["peers"] = peers
    results["summary"] = summary
    results["targets"] = targets


# ---------------------------------------------------------------- report


def ms(v: Any) -> Any:
    return None if v is None else v * 1e3


TARGET_LABELS = [
    ("cat", "cat ≥0.95× C1 (zstd), ≥0.9× (lz4)"),
    ("cpu", "daemon CPU/GiB ≤1.3× C1 (zstd), ≤1.5× (lz4)"),
    ("cold", "cold dd ≥0.8× C2 (zstd), ≥0.6× (lz4)"),
    ("warm", f"warm dd ≥{WARM_TARGET}× page-cache dd"),
    ("random", f"random p50 ≤{RANDOM_TARGET}× python"),
    ("rss", f"VmHWM ≤ cache + {RSS_SLACK_MIB} MiB"),
    ("amplification", f"decoded / served ≤{AMP_TARGET}"),
]


def large_share(censuses: list[Any]) -> float | None:
    """Share of cached pages held in large folios, over the censuses that were taken."""
    cs = [c for c in censuses if c]
    present = sum(c["present"] for c in cs)
    return sum(c["in_large_folios"] for c in cs) / present if present else None


def folio_kib(censuses: list[Any]) -> float | None:
    """Mean size of the large folios (KiB) over the censuses that were taken."""
    cs = [c for c in censuses if c]
    heads = sum(c.get("large_folios", 0) for c in cs)
    return 4.0 * sum(c["in_large_folios"] for c in cs) / heads if heads else None


def folio_text(share: float | None, kib: float | None) -> str:
    if share is None:
        return "—"
    return f"{100 * share:.0f} %" + (f" ({kib:.0f}K)" if kib else "")


def peers_table(results: dict[str, Any]) -> list[str]:
    """The "peers" table: squashfuse_ll beside blosc2fs's cold dd (lines, empty before a blank)."""
    pinfo = results.get("peers") or {}
    lines = [""]
    if not pinfo.get("enabled"):
        lines.append(f"peers: skipped ({pinfo.get('skipped') or 'not run'})")
        return lines
    sp = results["summary"].get("peers", {})
    tools, images = pinfo["tools"], pinfo["images"]
    nbytes = results["config"]["nbytes"]
    w0, w = 50, 18
    cols = list(PEER_KINDS)

    def row(label: str, values: Any) -> None:
        lines.append(label.ljust(w0) + "".join(str(v).rjust(w) for v in values))

    def val(kind: Any, key: Any, spec: str = ".2f", unit: str = "") -> Any:
        return fmt(sp.get(kind, {}).get(key), spec, unit)

    pkg = tools["packages"].get("squashfuse")
    lines.append(
        f"peers — squashfuse_ll ({(tools['squashfuse_ll_version'] or '?').split(' (c)')[0]}"
        + (f", Debian package {pkg}" if pkg else "")
        + f"; {tools['mksquashfs_version']}) "
        "serving raw.bin from squashfs images"
    )
    lines.append(
        "  cold dd bs=1M of a fresh mount, image in the page cache; blosc2fs = the paired array's "
        "cold dd above, same repeats"
    )
    row("", [f"{k} (vs {PEER_OF_ARRAY[k]})" if k != PEER_OF_ARRAY[k] else k for k in cols])

    def img(kind: Any, fn: Any) -> Any:
        i = images.get(kind) or {}
        return "—" if "error" in i or not i else fn(i)

    row("image MiB (ratio)", [img(k, lambda i: f"{i['image_bytes'] / MIB:.0f} ({i['ratio']:.2f}x)") for k in cols])
    row(
        "squashfs block (array's blocksize)",
        [img(k, lambda i: f"{i['block_size'] // 1024}K ({i['array_block_size'] // 1024}K)") for k in cols],
    )
    row("blosc2fs cold dd                       GB/s", [val(k, "blosc2fs_cold_gbps") for k in cols])
    row("  daemon                               CPU s/GiB", [val(k, "blosc2fs_cold_daemon_cpu_per_gib") for k in cols])
    row("squashfuse_ll cold dd                  GB/s", [val(k, "squashfuse_cold_gbps") for k in cols])
    row(
        "  daemon                               CPU s/GiB", [val(k, "squashfuse_cold_daemon_cpu_per_gib") for k in cols]
    )
    row("blosc2fs / squashfuse_ll  GB/s (>1: faster)", [val(k, "gbps_ratio", ".2f", "x") for k in cols])
    row("                          CPU (<1: less)", [val(k, "cpu_ratio", ".2f", "x") for k in cols])
    row(
        "read_ahead_kb blosc2fs / squashfuse_ll",
        [f"{val(k, 'blosc2fs_read_ahead_kb', '.0f')}/{val(k, 'squashfuse_read_ahead_kb', '.0f')}" for k in cols],
    )
    row("squashfuse_ll VmHWM MiB", [val(k, "squashfuse_vm_hwm_mib", ".0f") for k in cols])
    row("bytes checked against raw.bin (cmp)", ["yes" if sp.get(k, {}).get("verified") else "NO" for k in cols])
    lines.append(
        f"  none = -noI -noD -noF -noX (no decode: squashfuse_ll's transport), beside clevel0.b2nd; "
        f"{nbytes / GIB:.3g} GiB read per row"
    )
    return lines


def build_table(results: dict[str, Any]) -> str:
    s = results["summary"]
    c = results["config"]
    env = results["env"]
    cols = list(FILES)
    w0, w = 50, 13
    lines = []

    def row(label: str, values: Any) -> None:
        lines.append(label.ljust(w0) + "".join(str(v).rjust(w) for v in values))

    def vals(key: Any, spec: str = ".2f", unit: str = "") -> Any:
        return [fmt(s[n].get(key), spec, unit) for n in cols]

    lines.append(
        f"blosc2fs benchmark — corpus {c['rows']}x{c['cols']} float64 ({c['nbytes'] / GIB:.3g} GiB), "
        f"repeats {c['repeats']}, --cache-size {c['cache_size']}"
        + (f", mount args {c['mount_args']!r}" if c["mount_args"] else "")
        + "; medians over repeats, ratios = medians of per-repeat ratios"
    )
    lines.append(
        f"python-blosc2 {env.get('blosc2')}, {env['cpus']} CPUs ({env.get('cpu_model') or 'CPU model unknown'}), kernel {env['kernel']}, "
        f"load average {env['loadavg_start']:.2f} at start, {env.get('loadavg_end', 0.0):.2f} at end"
        + ("" if env["caches_dropped"] else "  [WARNING: page caches could NOT be dropped]")
    )
    busy = busy_warning(env)
    if busy:
        lines.append(busy + "; CPU s/GiB is the steadier figure")
    lines.append("")
    row("", cols)
    files = results["corpus"]["files"]
    row("compressed MiB (ratio)", [f"{files[n]['file_bytes'] / MIB:.0f} ({files[n]['cratio']:.1f}x)" for n in cols])
    row("chunks", ["x".join(map(str, files[n]["chunks"])) for n in cols])
    row("blocks", ["x".join(map(str, files[n]["blocks"])) for n in cols])
    ce = files.get(CEILING)
    if ce:
        lines.append(
            f"ceiling.b2nd: {ce['file_bytes'] / MIB:.0f} MiB ({ce['cratio']:.2f}x), codec {ce['codec']} "
            f"clevel {ce['clevel']}, filters {ce['filters'] or 'none'}, chunks "
            f"{'x'.join(map(str, ce['chunks']))}, blocks {'x'.join(map(str, ce['blocks']))}"
            + (f", {ce['memcpyed_chunks']} chunks checked memcpy'ed" if "memcpyed_chunks" in ce else "")
        )
    lines.append("")
    lines.append("reference (source .b2nd in the page cache)")
    row("C-Blosc2 decompress_chunk, 1 thread    GB/s", vals("c1_gbps"))
    row("                                       CPU s/GiB", vals("c1_cpu_per_gib"))
    row("C-Blosc2 decompress_chunk, 2 threads   GB/s", vals("c2_gbps"))
    row("                                       CPU s/GiB", vals("c2_cpu_per_gib"))
    row(f"python-blosc2 open()[:], {env.get('nthreads')} threads".ljust(39) + "GB/s", vals("slice_gbps"))
    row("                                       CPU s/GiB", vals("slice_cpu_per_gib"))
    row("dd bs=1M raw.bin, page cache           GB/s", [fmt(s.get("raw_dd_gbps"))] * len(cols))
    row(
        "  pages in large folios (mean size)",
        [folio_text(s.get("raw_dd_large_folios"), s.get("raw_dd_large_folio_kib"))] * len(cols),
    )
    row("dd bs=1M raw.bin's tmpfs copy, info    GB/s", [fmt(s.get("tmpfs_raw_dd_gbps"))] * len(cols))
    row(
        "  pages in large folios (mean size)",
        [folio_text(s.get("tmpfs_raw_dd_large_folios"), s.get("tmpfs_raw_dd_large_folio_kib"))] * len(cols),
    )
    lines.append("")
    lines.append("the client's way in")
    row("blosc2fs cat FILE > /dev/null          GB/s", vals("cat_gbps"))
    row("  / C 1 thread", vals("cat_vs_c1", ".2f", "x"))
    row("  cat process                          CPU s/GiB", vals("cat_cpu_per_gib"))
    row("  / C 1-thread CPU", vals("cat_cpu_vs_c1_cpu", ".2f", "x"))
    row("cold dd bs=1M of data, fresh mount     GB/s", vals("cold_gbps"))
    row("  / C 2 threads", vals("cold_vs_c2", ".2f", "x"))
    row("  daemon                               CPU s/GiB", vals("cold_daemon_cpu_per_gib"))
    row("  / C 1-thread CPU", vals("cold_cpu_vs_c1_cpu", ".2f", "x"))
    row("  dd process                           CPU s/GiB", vals("cold_dd_cpu_per_gib"))
    row("warm re-read dd, same mount, 2nd      GB/s", vals("warm_gbps"))
    row("  / dd raw.bin page cache", vals("warm_vs_raw_dd", ".2f", "x"))
    row("  / dd raw.bin's tmpfs copy, info", vals("warm_vs_tmpfs_raw_dd", ".2f", "x"))
    row(
        "  mount's pages in large folios",
        [folio_text(s[n].get("warm_large_folios"), s[n].get("warm_large_folio_kib")) for n in cols],
    )
    row("  1st re-read after the cold dd, info  GB/s", vals("warm_first_gbps"))
    row("  / dd raw.bin page cache", vals("warm_first_vs_raw_dd", ".2f", "x"))
    row("ceiling.b2nd (clevel 0, no filter), same mount,", [""] * len(cols))
    row("  right after the array: cold dd       GB/s", vals("ceiling_cold_gbps"))
    row("    daemon                             CPU s/GiB", vals("ceiling_cold_daemon_cpu_per_gib"))
    row("  warm re-read dd, 2nd                 GB/s", vals("ceiling_warm_gbps"))
    row("cold dd / ceiling (codec 0, same daemon)", vals("cold_vs_ceiling", ".2f", "x"))
    row("warm dd / ceiling (codec 0, same daemon)", vals("warm_vs_ceiling", ".2f", "x"))
    row("numpy.fromfile(data), fresh mount      GB/s", vals("fromfile_gbps"))
    row("  / C 2 threads", vals("fromfile_vs_c2", ".2f", "x"))
    row("  daemon                               CPU s/GiB", vals("fromfile_daemon_cpu_per_gib"))
    row("disk-cold dd (caches dropped), info    GB/s", vals("disk_cold_gbps"))
    row("  daemon                               CPU s/GiB", vals("disk_cold_daemon_cpu_per_gib"))
    row("random 4 KiB pread, fresh mount,", [""] * len(cols))
    row("  source in page cache                 p50 ms", [fmt(ms(s[n]["random_mount_p50"]), ".3f") for n in cols])
    row("                                       p99 ms", [fmt(ms(s[n]["random_mount_p99"]), ".3f") for n in cols])
    row(
        "  daemon CPU per read                    µs",
        [
            fmt(None if s[n]["random_daemon_cpu_per_read"] is None else s[n]["random_daemon_cpu_per_read"] * 1e6, ".0f")
            for n in cols
        ],
    )
    row("python-blosc2 arr[i, j], fresh open    p50 ms", [fmt(ms(s[n]["random_python_p50"]), ".3f") for n in cols])
    row("                                       p99 ms", [fmt(ms(s[n]["random_python_p99"]), ".3f") for n in cols])
    row("  p50 mount / python", vals("random_p50_ratio", ".2f", "x"))
    row("disk-cold random (caches dropped), info", [""] * len(cols))
    row(
        "  mount p50 / p99                      ms",
        [
            f"{fmt(ms(s[n]['random_disk_mount_p50']), '.3f')}/{fmt(ms(s[n]['random_disk_mount_p99']), '.2f')}"
            for n in cols
        ],
    )
    row(
        "  python p50 / p99                     ms",
        [
            f"{fmt(ms(s[n]['random_disk_python_p50']), '.3f')}/{fmt(ms(s[n]['random_disk_python_p99']), '.2f')}"
            for n in cols
        ],
    )
    row("  p50 mount / python", vals("random_disk_p50_ratio", ".2f", "x"))
    row(f"daemon VmHWM MiB (cache {c['cache_size']})", vals("vm_hwm_mib", ".0f"))
    row("decoded / served, cold dd", vals("amplification", ".3f"))
    row("bytes checked against raw.bin (cmp)", ["yes" if s[n]["verified"] else "NO" for n in cols])
    row("  and ceiling.b2nd's, same mount", ["yes" if s[n].get("ceiling_verified") else "NO" for n in cols])
    lines.append("")
    lines.append("targets".ljust(w0) + "".join(n.rjust(w) for n in cols))
    for key, label in TARGET_LABELS:
        out = []
        for n in cols:
            t = results["targets"].get(n, {}).get(key)
            out.append("—" if t is None else f"{t['status']} {t['display']}")
        row(label, out)

    lines.extend(peers_table(results))

    sc = s.get("scale") or {}
    if sc:
        lines.append("")
        cases = [("one", "1 reader"), ("arrays", "4 arrays"), ("quarters", "4 quarters")]
        cases = [(k, label) for k, label in cases if k in sc]
        lines.append(
            f"scale — --cache-size {c['scale_cache_size']}, arrays = hard links to zstd.b2nd "
            f"(own cache entries each), quarters staggered by {c['stagger']} s"
        )
        row("", [label for _, label in cases])
        row("aggregate GB/s", [fmt(sc[k]["aggregate_gbps"]) for k, _ in cases])
        one = sc.get("one", {}).get("aggregate_gbps")
        row("  / 1 reader", [fmt(sc[k]["aggregate_gbps"] / one if one else None, ".2f", "x") for k, _ in cases])
        row("daemon CPU s/GiB", [fmt(sc[k]["cpu_per_gib"]) for k, _ in cases])
        row("decoded / served", [fmt(sc[k]["amplification"], ".3f") for k, _ in cases])
        row("daemon VmHWM MiB", [fmt(sc[k]["vm_hwm_mib"], ".0f") for k, _ in cases])
        row(
            f"slowest / mean reader ≥{STARVE_TARGET} (worst repeat)",
            [
                ("—" if "target" not in sc[k] else f"{sc[k]['target']['status']} {sc[k]['target']['display']}")
                for k, _ in cases
            ],
        )
        for k, label in cases:
            lines.append(f"  {label}: reader GB/s (median of each) " + "  ".join(fmt(v) for v in sc[k]["reader_gbps"]))
    if results["errors"]:
        lines.append("")
        lines.append("errors (a measurement could not be made):")
        for e in results["errors"]:
            lines.append(f"  - {e}")
    return "\n".join(lines)
