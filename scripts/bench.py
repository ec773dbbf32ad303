#!/usr/bin/env python3
"""Benchmark harness of blosc2fs: the mount measured the client's way in, beside C-Blosc2.

Usage (as root: it mounts, and drops page caches for the disk-cold and random rows):

    cargo build --release
    .venv/bin/python scripts/bench.py --repeats 3 --binary target/release/blosc2fs
    .venv/bin/python scripts/bench.py --quick            # 0.25 GiB corpus, 1 repeat: for trying it
    .venv/bin/python scripts/bench.py --scenario tree    # many small arrays: see scripts/bench_tree.py
    .venv/bin/python scripts/bench.py --scenario computed  # a saved expression: see scripts/bench_computed.py
    .venv/bin/python scripts/bench.py --scenario zarr3   # xarray/Dask through the Zarr v3 hierarchy:
                                                         # see scripts/bench_zarr3.py
    .venv/bin/python scripts/bench.py --scenario disk-cache  # warm re-reads: see scripts/bench_disk_cache.py

    options: [--size-gib 1.0] [--repeats 3] [--workdir /tmp/blosc2fs-bench] [--cache-size 128M]
             [--scale-cache-size 64M] [--stagger 0.1] [--mount-args "--readahead-kb 8192"]
             [--python INTERPRETER] [--no-scale] [--no-peers] [--strict]
             [--scenario mount|tree|computed|zarr3|disk-cache] [--tree-sizes 50000,200000] [--tree-nofile 1024]
             [--tree-cache-size 64M] [--tree-timeout 600] [--tree-budget-min 25]
             [--tree-mksquashfs-args "-no-duplicates"]

Scenarios: `mount` (the default) is everything below; `tree` (scripts/bench_tree.py, whose
docstring describes it) mounts trees of many small arrays under `ulimit -n 1024` and times
find, ls -lR and a read of every file, with the daemon's RSS and descriptors, beside
squashfuse_ll over a squashfs image of the same presented tree.

Corpus (python-blosc2, in WORKDIR/corpus-<rows>x8192/, reused while it exists and matches;
missing arrays are added from raw.bin): a float64 2-D field of shape (16384 * size-gib, 8192),
smooth signal plus N(0, 0.5) noise rounded to 2 decimals, as

    zstd.b2nd     default cparams (ZSTD clevel 5 + SHUFFLE), default chunks/blocks (python-blosc2
                  picks them from the CPU caches: 8 MiB chunks of 128 x 8192, 128 KiB blocks here)
    lz4.b2nd      LZ4 clevel 5 + SHUFFLE, default chunks/blocks
    narrow.b2nd   default cparams, chunks=(1024, 512): a C-order scan crosses many chunks
    clevel0.b2nd  clevel 0: chunks stored raw, decoding is a copy; isolates the mount's own overhead
                  (python-blosc2 keeps SHUFFLE in its filter list, unused with clevel 0)
    ceiling.b2nd  the ceiling: clevel 0, codec BLOSCLZ (0), every filter NOFILTER and filters_meta 0,
                  default chunks/blocks; the generator checks that every chunk is memcpy'ed
                  (MEMCPYED flag, no filter in its header). Not a column: see "ceiling" below
    raw.bin       the same values uncompressed (np.tofile): the bytes every scan must equal
    scale/z1..z4.b2nd  hard links to zstd.b2nd: four arrays to the daemon (each opening is its
                       own array with its own cache entries), the same bytes in the page cache

"Cold" means a fresh `blosc2fs mount -f` (nothing of the array in the daemon or in the
mount's page cache) with the source .b2nd in the page cache: decode-bound. Every timed
row first reads its source file once (untimed) to put it there. Rows, per array:

  reference
    C-Blosc2 `SChunk.decompress_chunk(i)` over all chunks, `blosc2.open(p,
      dparams=blosc2.DParams(nthreads=n))`, n = 1 and 2: wall GB/s and process CPU s/GiB
      (time.process_time around the loop only)
    python-blosc2 `blosc2.open(p)[:]` (its default nthreads): GB/s, CPU s/GiB
    `dd if=raw.bin of=/dev/null bs=1M` from the page cache (its third read in a row): GB/s
    the same dd of a copy of raw.bin in tmpfs (--tmpfs-dir), for information: a plain file
      cached in 4 KiB folios, the folio size of the FUSE page cache on kernels whose FUSE
      has no large folios (6.18 has none); each of the three files' pages are counted by
      folio size through /proc/self/pagemap and /proc/kpageflags (root)
  the client's way in
    `blosc2fs cat FILE > /dev/null`: wall GB/s, and the cat process's CPU s/GiB (os.wait4)
    cold `dd if=MNT/x.b2nd/data of=/dev/null bs=1M`: GB/s, and the daemon's CPU s/GiB
      (utime+stime of /proc/PID/stat before/after)
    warm re-read: the same dd twice more through the same mount; the second is the target
      row, the first is shown for information (a page's first re-read moves it to the
      kernel's active LRU list, which costs a plain file the same: raw.bin is timed on its
      third read for that reason)
    ceiling: right after those, the same mount (same daemon, same repeat) reads ceiling.b2nd's
      data the same way: its cold dd (the daemon's first read of it; its source was put in
      the page cache before the mount) and its 2nd warm re-read. The array's cold and warm dd
      are also shown as fractions of these ("cold dd / ceiling", "warm dd / ceiling"; medians
      of per-repeat ratios): what the codec costs against a daemon that only copies
    `numpy.fromfile(MNT/x.b2nd/data)` on a fresh mount: GB/s (timed inside the worker)
    disk-cold dd (page caches dropped, fresh mount), for information
    random 4 KiB `pread`s on a fresh mount with the source in the page cache (the issue's
      "cold"), vs python-blosc2 `arr[i, j]` after a fresh `blosc2.open` of the same cached
      file: p50 / p99, and the daemon's CPU per read; the same with page caches dropped
      first (disk-cold), for information
    the daemon's VmHWM after the cold + warm dd, against --cache-size + 64 MiB
    decode amplification (bytes_decoded / bytes_served from MNT/.stats) of the cold dd

  targets (issue 10; ratios are medians of per-repeat ratios, each pair measured side by side)
    cat GB/s ≥ 0.95× C 1 thread (zstd), ≥ 0.9× (lz4)
    daemon CPU/GiB on the cold dd ≤ 1.3× C 1-thread CPU/GiB (zstd), ≤ 1.5× (lz4)
    cold dd GB/s ≥ 0.8× C 2 threads (zstd), ≥ 0.6× (lz4)
    warm re-read ≥ 0.6× dd of raw.bin from the page cache
    random p50 ≤ 0.8× python-blosc2's `arr[i, j]`
    VmHWM ≤ cache + 64 MiB; decoded / served ≤ 1.05
  narrow.b2nd is zstd-coded and held to the zstd numbers; clevel0.b2nd to the codec-free ones.

Scale table (fresh mount of scale/ with --scale-cache-size, smaller than the working set):
    1 reader      one dd of z1's data (the baseline)
    4 arrays      four dd at once, one per z1..z4
    4 quarters    four dd of z1's data, each its own quarter (iflag=skip_bytes,count_bytes),
                  reader k starting k * --stagger seconds after the first
  aggregate GB/s (all bytes / first start to last end), daemon CPU s/GiB, slowest reader's
  GB/s / mean reader GB/s (target ≥ 0.5), decoded / served, VmHWM.

Peers (skipped with --no-peers, or with a message when the tools are missing: as root,
`apt-get install -y squashfuse squashfs-tools`): squashfuse_ll, the mature C filesystem for
compressed read-only images, serving the same bytes (raw.bin) from squashfs images built by
mksquashfs with the block size of the blosc2 array each is paired with (its blocksize read
from the corpus; a power of two, 4K..1M, is what -b takes: anything else is rounded):

    zstd.sqfs     -comp zstd -Xcompression-level 3   beside zstd.b2nd
    lz4.sqfs      -comp lz4                          beside lz4.b2nd
    none.sqfs     -noI -noD -noF -noX (uncompressed: squashfuse_ll's transport, no decode)
                                                     beside clevel0.b2nd
  The images sit in WORKDIR/corpus-*/squashfs/ and are rebuilt only when missing or when
  raw.bin (size, mtime, inode), the mksquashfs options or its version changed. Each row: the
  image read once (untimed, so it is in the page cache: decode-bound), a fresh
  `squashfuse_ll -f IMG MNT` (a subprocess: its PID gives utime+stime from /proc/PID/stat
  before/after), a cold `dd bs=1M` of MNT/raw.bin, `umount` (then `fusermount3 -u`) and a
  wait for the daemon to exit. The row runs right after (odd repeats: right before) the
  paired array's cold-dd row, and the peers table puts it beside that array's cold dd and
  daemon CPU, with blosc2fs / squashfuse_ll as the median of per-repeat ratios. Each mount's
  read_ahead_kb is reported: squashfuse_ll runs with the kernel's default.

Order: within a repeat each array's measurements run one after another, reversed on odd
repeats (A/B alternated); medians over repeats. The first repeat `cmp`s every array's data
(and squashfuse_ll's raw.bin of every image) against raw.bin. results.json (raw numbers,
summary, targets, the peers' images and tool versions) goes to the workdir.

The harness itself needs only the standard library; everything that needs numpy or blosc2
runs in a worker subprocess of --python (default: this interpreter).
Exit status: 0 when it ran (targets may FAIL; --strict makes a FAIL exit 1), 2 when a
measurement could not be made (the error text is in the table and the JSON).
"""

from __future__ import annotations

import argparse
import atexit
import ctypes
import json
import math
import os
import platform
import random
import shlex
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

MIB = 1 << 20
GIB = 1 << 30
COLS = 8192
BASE_ROWS = 16384  # 16384 x 8192 float64 = 1 GiB
RANDOM_READS = 400
RANDOM_SIZE = 4096
RANDOM_SEED = 20240611
RSS_SLACK_MIB = 64
CORPUS_VERSION = 1
SCALE_LINKS = ("z1", "z2", "z3", "z4")

FILES = ("zstd", "lz4", "narrow", "clevel0")
# The ceiling: the same values stored with no codec and no filter (clevel 0: every chunk
# memcpy'ed). Not a column of its own: each array's scan reads it through the same daemon.
CEILING = "ceiling"
CORPUS_FILES = FILES + (CEILING,)
CODEC_OF = {"zstd": "zstd", "lz4": "lz4", "narrow": "zstd", "clevel0": None}
# Targets from issue 10 (codec-specific ones do not apply to clevel0).
CAT_TARGET = {"zstd": 0.95, "lz4": 0.9}
CPU_TARGET = {"zstd": 1.3, "lz4": 1.5}
COLD_TARGET = {"zstd": 0.8, "lz4": 0.6}
WARM_TARGET = 0.6
RANDOM_TARGET = 0.8
AMP_TARGET = 1.05
STARVE_TARGET = 0.5

# Peers: squashfuse_ll on squashfs images of raw.bin, each paired with the array whose block
# size it takes and whose cold dd it stands beside.
PEER_OF = {"zstd": "zstd", "lz4": "lz4", "clevel0": "none"}  # array -> image kind
PEER_OF_ARRAY = {kind: array for array, kind in PEER_OF.items()}
PEER_KINDS = ("zstd", "lz4", "none")
PEER_COMP = {
    "zstd": ["-comp", "zstd", "-Xcompression-level", "3"],
    "lz4": ["-comp", "lz4"],
    "none": ["-noI", "-noD", "-noF", "-noX"],
}
PEER_INSTALL = "apt-get install -y squashfuse squashfs-tools"
PEER_IMAGES_VERSION = 1

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK_TCK = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- helpers


class BenchError(Exception):
    """A measurement could not be made (or gave wrong bytes)."""


def parse_size(text: str) -> int:
    t = text.strip()
    for suffix in ("iB", "B"):
        if t.endswith(suffix):
            t = t[: -len(suffix)]
            break
    shift = {"k": 10, "m": 20, "g": 30, "t": 40}.get(t[-1:].lower(), 0)
    if shift:
        t = t[:-1]
    return int(t.strip()) << shift


_drop_warned = False


def host_env() -> dict:
    """What every bench report names: CPUs and their model, kernel, start time, load average."""
    env = {"cpus": os.cpu_count(), "kernel": platform.release(),
           "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "loadavg_start": os.getloadavg()[0],
           "loadavg_1_5_15_start": list(os.getloadavg())}
    try:
        with open("/proc/cpuinfo") as f:
            env["cpu_model"] = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), None)
    except OSError:
        pass
    return env


def drop_caches() -> bool:
    """sync; echo 3 > /proc/sys/vm/drop_caches. False (with one warning) when not possible."""
    global _drop_warned
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError as e:
        if not _drop_warned:
            print(f"warning: cannot drop page caches ({e}); disk-cold numbers are not cold", file=sys.stderr)
            _drop_warned = True
        return False


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default method)."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = (len(s) - 1) * q / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def gbps(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / 1e9


def tail(path: str, n: int = 2000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - n))
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads) from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    fields = text[text.rindex(")") + 2:].split()  # fields[0] is field 3 (state)
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def run_timed(cmd: list[str], stdout=subprocess.DEVNULL) -> dict:
    """Run `cmd`; wall seconds (spawn to reap) and the child's CPU seconds (os.wait4 rusage)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=err,
                             env=dict(os.environ, LC_ALL="C"))
        _, status, ru = os.wait4(p.pid, 0)
        t1 = time.perf_counter()
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    if p.returncode != 0:
        raise BenchError(f"`{' '.join(cmd)}` failed (exit {p.returncode}): {stderr.strip()[-1500:]}")
    return {"start": t0, "end": t1, "seconds": t1 - t0, "cpu": ru.ru_utime + ru.ru_stime, "stderr": stderr}


def dd(path: str, expect: int, skip: int = 0, count: int | None = None) -> dict:
    """`dd if=path of=/dev/null bs=1M` (a byte range with skip/count); checks the byte count."""
    cmd = ["dd", f"if={path}", "of=/dev/null", "bs=1M"]
    if skip or count is not None:
        cmd.append("iflag=skip_bytes,count_bytes")
        if skip:
            cmd.append(f"skip={skip}")
        if count is not None:
            cmd.append(f"count={count}")
    r = run_timed(cmd)
    copied = None
    for line in r["stderr"].splitlines():
        if " bytes" in line and "copied" in line:
            copied = int(line.split()[0])
    if copied != expect:
        raise BenchError(f"`{' '.join(cmd)}` copied {copied} bytes, expected {expect}: {r['stderr'].strip()[-500:]}")
    r["nbytes"] = copied
    del r["stderr"]
    return r


def warm_file(path: str) -> None:
    """Read a file once (untimed) so it sits in the page cache."""
    run_timed(["dd", f"if={path}", "of=/dev/null", "bs=4M"])


def folio_census(path: str) -> dict | None:
    """How the page cache holds a file: pages present, and how many sit in large folios.

    Maps the whole file (MAP_POPULATE: already-cached pages are only mapped, nothing is
    read), reads each page's PFN from /proc/self/pagemap and its flags from /proc/kpageflags
    (compound head or tail = part of a large folio). Needs root; None where it cannot.
    """
    prot_read, map_shared, map_populate, page = 0x1, 0x01, 0x8000, 4096
    kpf_head, kpf_tail = 1 << 15, 1 << 16
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        npages = (size + page - 1) // page
        if npages == 0:
            return None
        addr = libc.mmap(None, size, prot_read, map_shared | map_populate, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            return None
        try:
            with open("/proc/self/pagemap", "rb", buffering=0) as pm, \
                    open("/proc/kpageflags", "rb", buffering=0) as kf:
                entries = os.pread(pm.fileno(), npages * 8, (addr // page) * 8)
                present = large = heads = 0
                for (e,) in struct.iter_unpack("<Q", entries):
                    pfn = e & ((1 << 55) - 1)
                    if not e >> 63 or pfn == 0:
                        continue  # not present, or PFNs hidden (not root)
                    present += 1
                    (flags,) = struct.unpack("<Q", os.pread(kf.fileno(), 8, pfn * 8))
                    if flags & (kpf_head | kpf_tail):
                        large += 1
                        heads += bool(flags & kpf_head)
        finally:
            libc.munmap(addr, size)
    except OSError:
        return None
    finally:
        os.close(fd)
    if present == 0:
        return None
    return {"pages": npages, "present": present, "in_large_folios": large, "large_folios": heads}


# ---------------------------------------------------------------- worker (numpy/blosc2 side)


def worker_main(request: dict) -> dict:
    import numpy as np
    import blosc2

    op = request["op"]
    if op.startswith("computed_"):  # the computed scenario's python-blosc2 side (scripts/bench_computed.py)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_computed
        return bench_computed.worker(request)
    if op == "tree_templates":  # the tree scenario's templates (scripts/bench_tree.py)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_tree
        return bench_tree.make_templates(request)
    if op == "version":
        return {"blosc2": blosc2.__version__, "numpy": np.__version__, "python": sys.version.split()[0],
                "nthreads": blosc2.nthreads}

    if op == "generate":
        out, rows, cols = request["dir"], request["rows"], request["cols"]
        raw_path = os.path.join(out, "raw.bin")
        if request["make_raw"]:
            x = np.empty((rows, cols), dtype=np.float64)
            rng = np.random.default_rng(0)
            jj = (np.arange(cols, dtype=np.float64) / cols * 2 * np.pi)[None, :]
            for r0 in range(0, rows, 512):
                r1 = min(rows, r0 + 512)
                ii = (np.arange(r0, r1, dtype=np.float64) / BASE_ROWS * 2 * np.pi)[:, None]
                s = 10.0 * np.sin(4 * ii) * np.cos(3 * jj) + 3.0 * np.cos(7 * ii + 5 * jj)
                s += rng.normal(scale=0.5, size=s.shape)
                x[r0:r1] = np.round(s, 2)
            x.tofile(raw_path)
        else:
            x = np.fromfile(raw_path, dtype=np.float64).reshape(rows, cols)
        b2dir = os.path.join(out, "b2")
        os.makedirs(b2dir, exist_ok=True)
        specs = {
            "zstd": dict(),
            "lz4": dict(cparams={"codec": blosc2.Codec.LZ4, "clevel": 5, "filters": [blosc2.Filter.SHUFFLE]}),
            "narrow": dict(chunks=(1024, 512)),
            "clevel0": dict(cparams={"clevel": 0}),
            CEILING: dict(cparams=blosc2.CParams(codec=blosc2.Codec.BLOSCLZ, clevel=0,
                                                 filters=[blosc2.Filter.NOFILTER] * 6, filters_meta=[0] * 6)),
        }
        info = {}
        for name in request["names"]:
            path = os.path.join(b2dir, f"{name}.b2nd")
            arr = blosc2.asarray(x, urlpath=path, mode="w", **specs[name])
            info[name] = {
                "chunks": list(arr.chunks),
                "blocks": list(arr.blocks),
                "codec": str(arr.schunk.cparams.codec.name),
                "clevel": arr.schunk.cparams.clevel,
                "filters": [f.name for f in arr.schunk.cparams.filters if f != blosc2.Filter.NOFILTER],
                "cratio": round(arr.schunk.cratio, 3),
                "file_bytes": os.path.getsize(path),
            }
            if name == CEILING:
                # Every chunk must be stored raw: the MEMCPYED flag (0x02) in its header, no
                # filter (bytes 16..21) and no filter meta (bytes 24..29) in the extended header.
                schunk = arr.schunk
                bad = []
                for i in range(schunk.nchunks):
                    c = schunk.get_chunk(i)
                    if not (c[2] & 0x02) or any(c[16:22]) or any(c[24:30]):
                        bad.append(i)
                if bad or arr.schunk.cparams.clevel != 0 or any(arr.schunk.cparams.filters_meta):
                    raise ValueError(f"{path}: chunks {bad[:10]} are not memcpy'ed without filters")
                info[name]["memcpyed_chunks"] = schunk.nchunks
                info[name]["filters_meta"] = list(arr.schunk.cparams.filters_meta)
                del schunk
            del arr
        return {"files": info, "nbytes": int(x.nbytes)}

    if op == "cdecode":
        # C-Blosc2's own chunk decode; the NDArray stays alive while its schunk is used.
        import resource
        arr = blosc2.open(request["path"], dparams=blosc2.DParams(nthreads=request["nthreads"]))
        schunk = arr.schunk
        n = schunk.nchunks
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        c0, t0 = time.process_time(), time.perf_counter()
        total = 0
        for i in range(n):
            total += len(schunk.decompress_chunk(i))
        t1, c1 = time.perf_counter(), time.process_time()
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        del schunk, arr
        return {"seconds": t1 - t0, "cpu": c1 - c0, "nbytes": total, "nchunks": n,
                "minflt": ru1.ru_minflt - ru0.ru_minflt, "nthreads": request["nthreads"]}

    if op == "slice":
        # python-blosc2 `[:]` with its default nthreads.
        c0, t0 = time.process_time(), time.perf_counter()
        arr = blosc2.open(request["path"])
        data = arr[:]
        t1, c1 = time.perf_counter(), time.process_time()
        return {"seconds": t1 - t0, "cpu": c1 - c0, "nbytes": int(data.nbytes), "nthreads": blosc2.nthreads}

    if op == "fromfile":
        c0, t0 = time.process_time(), time.perf_counter()
        data = np.fromfile(request["path"], dtype=np.uint8)
        t1, c1 = time.perf_counter(), time.process_time()
        return {"seconds": t1 - t0, "cpu": c1 - c0, "nbytes": int(data.nbytes)}

    if op == "random":
        path, coords = request["path"], request["coords"]
        dropped = drop_caches() if request["disk_cold"] else False
        t0 = time.perf_counter()
        arr = blosc2.open(path)
        t_open = time.perf_counter() - t0
        lat, values = [], []
        for i, j in coords:
            t0 = time.perf_counter()
            v = arr[i, j]
            lat.append(time.perf_counter() - t0)
            values.append(float(v))
        return {"latencies": lat, "values": values, "open_seconds": t_open, "dropped": dropped}

    raise ValueError(f"unknown worker op {op}")


def run_worker(python: str, request: dict, timeout: float = 3600) -> dict:
    cmd = [python, os.path.abspath(__file__), "--_worker", json.dumps(request)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise BenchError(f"python worker {request['op']} failed (exit {p.returncode}): {p.stderr.strip()[-2000:]}")
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise BenchError(f"python worker {request['op']}: unreadable answer {p.stdout[-500:]!r} {p.stderr[-1000:]!r}")


# ---------------------------------------------------------------- mounts


_live_mounts: list["ForegroundDaemon"] = []
_tmpfs_copies: list[str] = []  # tmpfs copies of raw.bin, removed by cleanup_all


class ForegroundDaemon:
    """A FUSE daemon run in the foreground as our child (its PID is the daemon's),
    mounted at self.mnt: started by `start`, always cleaned up by `close`."""

    mnt: str
    log_path: str
    proc: subprocess.Popen | None = None

    def start(self, cmd: list[str], what: str) -> None:
        """Run `cmd` (logging to self.log_path under a `what` line) and wait until self.mnt is mounted."""
        os.makedirs(self.mnt, exist_ok=True)
        log = open(self.log_path, "ab")
        log.write(f"\n--- {time.strftime('%H:%M:%S')} {what}\n".encode())
        log.flush()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()
        _live_mounts.append(self)
        try:
            deadline = time.monotonic() + 20
            while not os.path.ismount(self.mnt):
                if self.proc.poll() is not None:
                    raise BenchError(f"`{' '.join(cmd)}` exited with {self.proc.returncode} before mounting: "
                                     f"{tail(self.log_path, 1500)}")
                if time.monotonic() > deadline:
                    raise BenchError(f"`{' '.join(cmd)}` did not mount within 20 s: {tail(self.log_path, 1500)}")
                time.sleep(0.02)
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def cpu(self) -> float:
        """The daemon's CPU seconds so far (all its threads)."""
        return proc_cpu_seconds(self.pid)

    def vm_hwm_mib(self) -> float | None:
        try:
            with open(f"/proc/{self.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024.0
        except OSError:
            return None
        return None

    def unmount(self) -> None:
        """Ask the daemon's own way to unmount."""
        raise NotImplementedError

    def close(self) -> None:
        """Unmount, then wait for the daemon to exit (it does once its mount is gone)."""
        proc = self.proc
        if proc is None:
            return
        try:
            if os.path.ismount(self.mnt) or proc.poll() is None:
                self.unmount()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.terminate()  # both daemons unmount on SIGTERM
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
            if os.path.ismount(self.mnt) or _is_dead_mount(self.mnt):
                subprocess.run(["umount", "-l", self.mnt], capture_output=True, timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            self.proc = None
            if self in _live_mounts:
                _live_mounts.remove(self)


class Mount(ForegroundDaemon):
    """`blosc2fs mount SRC MNT -f --cache-size N [extra]` in the background; always cleaned up."""

    def __init__(self, args, source: str, cache_size: str):
        self.binary, self.source, self.mnt = args.binary, source, args.mnt
        self.cache_size, self.log_path = cache_size, args.log
        self.extra = shlex.split(args.mount_args)
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "Mount":
        cleanup_mountpoint(self.binary, self.mnt)
        cmd = [self.binary, "mount", self.source, self.mnt, "-f", "--cache-size", self.cache_size] + self.extra
        self.start(cmd, f"mount {self.source} {self.mnt}")
        return self

    def data(self, name: str, expect: int) -> str:
        """MNT/name.b2nd/data of size `expect`; a BenchError quoting meta.json when not presented."""
        path = os.path.join(self.mnt, f"{name}.b2nd", "data")
        if not os.path.exists(path):
            detail = ""
            try:
                with open(os.path.join(self.mnt, f"{name}.b2nd", "meta.json")) as f:
                    meta = json.load(f)
                detail = f"; meta.json says: {meta.get('error', meta)}"
            except (OSError, ValueError) as e:
                detail = f"; meta.json unreadable too ({e})"
            raise BenchError(f"the mount does not present {path}{detail}")
        size = os.stat(path).st_size
        if size != expect:
            raise BenchError(f"{path}: size {size}, expected {expect}")
        return path

    def stats(self) -> dict:
        with open(os.path.join(self.mnt, ".stats"), "rb", buffering=0) as f:
            return json.loads(f.read())

    def unmount(self) -> None:
        subprocess.run([self.binary, "unmount", self.mnt], capture_output=True, timeout=30)


def _is_dead_mount(path: str) -> bool:
    try:
        os.stat(path)
        return False
    except OSError as e:
        return e.errno in (107, 103)  # ENOTCONN, ECONNABORTED
    except Exception:
        return False


def cleanup_mountpoint(binary: str, mnt: str) -> None:
    """Remove a mount (live or dead) left at `mnt` by an earlier run."""
    if os.path.ismount(mnt) or _is_dead_mount(mnt):
        subprocess.run([binary, "unmount", mnt], capture_output=True, timeout=30)
        if os.path.ismount(mnt) or _is_dead_mount(mnt):
            subprocess.run(["umount", "-l", mnt], capture_output=True, timeout=30)
        if os.path.ismount(mnt) or _is_dead_mount(mnt):
            raise BenchError(f"cannot remove the mount left at {mnt}")


def read_ahead_kb(mnt: str) -> int | None:
    """The mount's readahead in KiB (its bdi's read_ahead_kb), None when unreadable."""
    try:
        dev = os.stat(mnt).st_dev
        with open(f"/sys/class/bdi/{os.major(dev)}:{os.minor(dev)}/read_ahead_kb") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _unmount_fuse(mnt: str) -> None:
    """`umount MNT`, else `fusermount3 -u MNT` (or fusermount), whichever works first."""
    for cmd in (["umount", mnt], ["fusermount3", "-u", mnt], ["fusermount", "-u", mnt]):
        if not (os.path.ismount(mnt) or _is_dead_mount(mnt)):
            return
        if shutil.which(cmd[0]):
            subprocess.run(cmd, capture_output=True, timeout=30)


def cleanup_peer_mountpoint(mnt: str) -> None:
    """Remove a mount (live or dead) left at the peers' mountpoint by an earlier run."""
    if os.path.ismount(mnt) or _is_dead_mount(mnt):
        _unmount_fuse(mnt)
        if os.path.ismount(mnt) or _is_dead_mount(mnt):
            subprocess.run(["umount", "-l", mnt], capture_output=True, timeout=30)
        if os.path.ismount(mnt) or _is_dead_mount(mnt):
            raise BenchError(f"cannot remove the mount left at {mnt}")


class PeerMount(ForegroundDaemon):
    """`squashfuse_ll -f IMG MNT` in the background (its PID is the daemon's); always cleaned up."""

    def __init__(self, squashfuse: str, image: str, mnt: str, log_path: str):
        self.squashfuse, self.image, self.mnt, self.log_path = squashfuse, image, mnt, log_path
        self.proc = None

    def __enter__(self) -> "PeerMount":
        cleanup_peer_mountpoint(self.mnt)
        self.start([self.squashfuse, "-f", self.image, self.mnt], f"squashfuse_ll {self.image} {self.mnt}")
        return self

    def unmount(self) -> None:
        _unmount_fuse(self.mnt)


def cleanup_all() -> None:
    for path in list(_tmpfs_copies):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        _tmpfs_copies.remove(path)
    for m in list(_live_mounts):
        try:
            m.close()
        except Exception as e:  # keep going: every mount must go
            print(f"warning: cleaning up {m.mnt}: {e}", file=sys.stderr)


def _on_signal(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def stats_delta(a: dict, b: dict) -> dict:
    dec = b["bytes_decoded"] - a["bytes_decoded"]
    srv = b["bytes_served"] - a["bytes_served"]
    return {"bytes_decoded": dec, "bytes_served": srv, "amplification": (dec / srv) if srv else None,
            "cache_hits": b.get("cache_hits", 0) - a.get("cache_hits", 0),
            "cache_misses": b.get("cache_misses", 0) - a.get("cache_misses", 0),
            "evictions": b.get("evictions", 0) - a.get("evictions", 0)}


# ---------------------------------------------------------------- corpus


def ensure_corpus(python: str, workdir: str, size_gib: float) -> dict:
    rows = max(1, int(round(BASE_ROWS * size_gib)))
    cdir = os.path.join(workdir, f"corpus-{rows}x{COLS}")
    manifest_path = os.path.join(cdir, "manifest.json")
    nbytes = rows * COLS * 8
    manifest = {"version": CORPUS_VERSION, "rows": rows, "cols": COLS, "dtype": "float64", "nbytes": nbytes,
                "files": {}}
    have_raw = False
    try:
        with open(manifest_path) as f:
            old = json.load(f)
        if (old.get("version") == CORPUS_VERSION and old.get("rows") == rows and old.get("nbytes") == nbytes
                and os.path.getsize(os.path.join(cdir, "raw.bin")) == nbytes):
            manifest, have_raw = old, True
    except (OSError, ValueError, KeyError):
        pass
    if not have_raw:
        subprocess.run(["rm", "-rf", cdir], check=True)
    missing = []
    for n in CORPUS_FILES:
        info = manifest["files"].get(n)
        p = os.path.join(cdir, "b2", f"{n}.b2nd")
        if not info or not os.path.exists(p) or os.path.getsize(p) != info["file_bytes"]:
            missing.append(n)
    if missing:
        os.makedirs(cdir, exist_ok=True)
        print(f"corpus: writing {', '.join(missing)}{'' if have_raw else ' and raw.bin'} "
              f"({rows}x{COLS} float64, {nbytes / GIB:.3g} GiB) in {cdir} ...", flush=True)
        t0 = time.perf_counter()
        res = run_worker(python, {"op": "generate", "dir": cdir, "rows": rows, "cols": COLS, "names": missing,
                                  "make_raw": not have_raw})
        if res["nbytes"] != nbytes:
            raise BenchError(f"corpus: generator wrote {res['nbytes']} bytes, expected {nbytes}")
        manifest["files"].update(res["files"])
        with open(manifest_path + ".tmp", "w") as f:
            json.dump(manifest, f, indent=2)
        os.rename(manifest_path + ".tmp", manifest_path)
        print(f"corpus: done in {time.perf_counter() - t0:.1f} s", flush=True)
    else:
        print(f"corpus: reusing {cdir}", flush=True)
    # scale/: hard links to zstd.b2nd (remade every run: zstd.b2nd may have been rewritten)
    sdir = os.path.join(cdir, "scale")
    os.makedirs(sdir, exist_ok=True)
    for z in SCALE_LINKS:
        link = os.path.join(sdir, f"{z}.b2nd")
        if os.path.lexists(link):
            os.unlink(link)
        os.link(os.path.join(cdir, "b2", "zstd.b2nd"), link)
    return manifest | {"dir": cdir}


# ---------------------------------------------------------------- peers: squashfuse_ll images


def peer_tools() -> tuple[dict | None, str | None]:
    """squashfuse_ll and mksquashfs with their versions, or (None, why they cannot be used)."""
    found = {name: shutil.which(name) for name in ("squashfuse_ll", "mksquashfs")}
    missing = [name for name, path in found.items() if not path]
    if missing:
        return None, (f"{' and '.join(missing)} not found: the peer rows need them; install them as root with "
                      f"`{PEER_INSTALL}` (Debian/Ubuntu), or pass --no-peers")
    if not (shutil.which("umount") or shutil.which("fusermount3")):
        return None, "neither umount nor fusermount3 found (needed to unmount squashfuse_ll)"

    def version_line(cmd, word):
        """The first output line starting with `word` (squashfuse_ll -V also prints its usage)."""
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        lines = [l.strip() for l in (p.stderr + "\n" + p.stdout).splitlines() if l.strip()]
        return next((l for l in lines if l.startswith(word)), lines[0] if lines else None)

    tools = {"squashfuse_ll": found["squashfuse_ll"], "mksquashfs": found["mksquashfs"],
             "squashfuse_ll_version": version_line([found["squashfuse_ll"], "-V"], "squashfuse"),
             "mksquashfs_version": version_line([found["mksquashfs"], "-version"], "mksquashfs"), "packages": {}}
    if shutil.which("dpkg-query"):
        for pkg in ("squashfuse", "squashfs-tools"):
            p = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True, text=True)
            if p.returncode == 0 and p.stdout.strip():
                tools["packages"][pkg] = p.stdout.strip()
    return tools, None


def squashfs_block(nbytes: int) -> int:
    """The power of two in mksquashfs's -b range (4 KiB..1 MiB) nearest to `nbytes`."""
    return 1 << max(12, min(20, round(math.log2(max(1, nbytes)))))


def ensure_peer_images(corpus: dict, tools: dict) -> dict:
    """squashfs images of raw.bin in CORPUS/squashfs/, rebuilt only when stale.

    Returns {kind: {"path", "block_size", "array_block_size", "array", "options", "image_bytes",
    "ratio", "built"}} or {kind: {"error": text}} for an image that could not be made.
    """
    cdir = corpus["dir"]
    raw_path = os.path.join(cdir, "raw.bin")
    sqdir = os.path.join(cdir, "squashfs")
    os.makedirs(sqdir, exist_ok=True)
    stamp_path = os.path.join(sqdir, "images.json")
    st = os.stat(raw_path)
    raw_id = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino}
    try:
        with open(stamp_path) as f:
            stamp = json.load(f)
        if (stamp.get("version") != PEER_IMAGES_VERSION or stamp.get("raw") != raw_id
                or stamp.get("mksquashfs") != tools["mksquashfs_version"]):
            stamp = None
    except (OSError, ValueError):
        stamp = None
    old = (stamp or {}).get("images", {})
    itemsize = {"float64": 8}.get(corpus.get("dtype", "float64"), 8)
    out = {}
    for kind in PEER_KINDS:
        array = PEER_OF_ARRAY[kind]
        array_bs = math.prod(corpus["files"][array]["blocks"]) * itemsize
        bs = squashfs_block(array_bs)
        options = PEER_COMP[kind] + ["-b", f"{bs // 1024}K", "-noappend", "-no-xattrs"]
        path = os.path.join(sqdir, f"{kind}.sqfs")
        info = {"path": path, "array": array, "array_block_size": array_bs, "block_size": bs,
                "options": options, "built": False}
        prev = old.get(kind)
        if (prev and prev.get("options") == options and os.path.exists(path)
                and os.path.getsize(path) == prev.get("image_bytes")):
            info["image_bytes"] = prev["image_bytes"]
        else:
            tmp = path + ".tmp"
            if os.path.exists(tmp):
                os.unlink(tmp)
            cmd = [tools["mksquashfs"], raw_path, tmp] + options + ["-no-progress", "-quiet"]
            print(f"peers: building {kind}.sqfs (mksquashfs {' '.join(options)}) ...", flush=True)
            t0 = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if p.returncode != 0 or not os.path.exists(tmp):
                out[kind] = {"error": f"`{' '.join(cmd)}` failed (exit {p.returncode}): "
                                      f"{(p.stdout + p.stderr).strip()[-1000:]}"}
                continue
            os.rename(tmp, path)
            info["image_bytes"] = os.path.getsize(path)
            info["built"] = True
            info["build_seconds"] = time.perf_counter() - t0
            print(f"peers: {kind}.sqfs done in {info['build_seconds']:.1f} s "
                  f"({info['image_bytes'] / MIB:.0f} MiB)", flush=True)
        info["ratio"] = st.st_size / info["image_bytes"]
        out[kind] = info
    good = {k: {x: v[x] for x in ("options", "image_bytes")} for k, v in out.items() if "error" not in v}
    with open(stamp_path + ".tmp", "w") as f:
        json.dump({"version": PEER_IMAGES_VERSION, "raw": raw_id, "mksquashfs": tools["mksquashfs_version"],
                   "images": good}, f, indent=2)
    os.rename(stamp_path + ".tmp", stamp_path)
    if not any(v.get("built") for v in out.values()):
        print(f"peers: reusing the squashfs images in {sqdir}", flush=True)
    return out


# ---------------------------------------------------------------- measurements


def cmp_with_raw(path: str, raw_path: str) -> None:
    """`cmp path raw.bin`; a BenchError when they differ."""
    p = subprocess.run(["cmp", path, raw_path], capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    if p.returncode != 0:
        raise BenchError(f"{path} is not raw.bin: {(p.stdout + p.stderr).strip()[-500:]}")


class Bench:
    """One run: the corpus, the settings, and the measurements (each returns a dict or raises)."""

    def __init__(self, args, corpus):
        self.args, self.corpus = args, corpus
        self.nbytes = corpus["nbytes"]
        self.raw_path = os.path.join(corpus["dir"], "raw.bin")
        self.tmpfs_raw: str | None = None
        self.peer_tools: dict | None = None  # set by main when the peers run
        self.peer_images: dict = {}
        self.peer_mnt = os.path.join(args.workdir, "mnt-squashfs")

    def b2(self, name: str) -> str:
        return os.path.join(self.corpus["dir"], "b2", f"{name}.b2nd")

    def mount(self, source: str | None = None, cache: str | None = None) -> Mount:
        return Mount(self.args, source or os.path.join(self.corpus["dir"], "b2"), cache or self.args.cache_size)

    def worker(self, request: dict) -> dict:
        return run_worker(self.args.python, request)

    # reference rows

    def cdecode(self, name: str, nthreads: int) -> dict:
        warm_file(self.b2(name))
        r = self.worker({"op": "cdecode", "path": self.b2(name), "nthreads": nthreads})
        if r["nbytes"] < self.nbytes:
            raise BenchError(f"C-Blosc2 decoded {r['nbytes']} bytes of {name}.b2nd, expected ≥ {self.nbytes}")
        return r

    def slice(self, name: str) -> dict:
        warm_file(self.b2(name))
        r = self.worker({"op": "slice", "path": self.b2(name)})
        if r["nbytes"] != self.nbytes:
            raise BenchError(f"python-blosc2 {name}.b2nd[:] gave {r['nbytes']} bytes, expected {self.nbytes}")
        return r

    def raw_dd(self) -> dict:
        # Read twice before the timed dd, like the mount's steady re-read
        # below: the first re-read of a page moves it to the active list.
        warm_file(self.raw_path)
        dd(self.raw_path, self.nbytes)
        return dd(self.raw_path, self.nbytes) | {"folios": folio_census(self.raw_path)}

    def tmpfs_raw_dd(self) -> dict:
        """raw.bin's bytes as a plain file in tmpfs (--tmpfs-dir), timed like raw_dd.

        tmpfs without huge pages caches a file in 4 KiB folios, the size the FUSE page
        cache uses on kernels whose FUSE has no large folios: beside raw.bin (whose
        filesystem may cache it in large folios) it tells how much of the warm re-read's
        gap is folio size. The census says what each one really held.
        """
        if self.tmpfs_raw is None:
            path = os.path.join(self.args.tmpfs_dir, f"blosc2fs-bench-raw-{os.getpid()}.bin")
            _tmpfs_copies.append(path)
            subprocess.run(["cp", self.raw_path, path], check=True)
            self.tmpfs_raw = path
        warm_file(self.tmpfs_raw)
        dd(self.tmpfs_raw, self.nbytes)
        return dd(self.tmpfs_raw, self.nbytes) | {"folios": folio_census(self.tmpfs_raw)}

    # the client's way in

    def cat(self, name: str) -> dict:
        warm_file(self.b2(name))
        return run_timed([self.args.binary, "cat", self.b2(name)])

    def mount_scan(self, name: str, verify: bool) -> dict:
        """Fresh mount: cold dd, warm dd (and cmp with raw.bin when `verify`); then, through the
        same daemon, the same three dd of ceiling.b2nd's data (its first read by this daemon is
        its cold dd), the ceiling the array's rows are divided by."""
        warm_file(self.b2(name))
        warm_file(self.b2(CEILING))
        with self.mount() as m:
            path = m.data(name, self.nbytes)
            s0, c0 = m.stats(), m.cpu()
            cold = dd(path, self.nbytes)
            s1, c1 = m.stats(), m.cpu()
            warm_first = dd(path, self.nbytes)
            s2, c2 = m.stats(), m.cpu()
            warm = dd(path, self.nbytes)
            hwm = m.vm_hwm_mib()
            folios = folio_census(path)
            ra = read_ahead_kb(self.args.mnt)
            if verify:
                cmp_with_raw(path, self.raw_path)
            ceiling = self.ceiling_scan(m, verify)
        return {"cold": cold, "warm": warm, "warm_first": warm_first, "cold_daemon_cpu": c1 - c0, "warm_daemon_cpu": c2 - c1,
                "cold_stats": stats_delta(s0, s1), "warm_stats": stats_delta(s1, s2), "vm_hwm_mib": hwm,
                "verified": verify, "folios": folios, "read_ahead_kb": ra, "ceiling": ceiling}

    def ceiling_scan(self, m: Mount, verify: bool) -> dict:
        """ceiling.b2nd through the mount `m` (already used for another array): cold dd (the
        daemon's first read of it), two warm re-reads (the second is the reference of the warm
        row); its source was read into the page cache before the mount."""
        path = m.data(CEILING, self.nbytes)
        s0, c0 = m.stats(), m.cpu()
        cold = dd(path, self.nbytes)
        s1, c1 = m.stats(), m.cpu()
        warm_first = dd(path, self.nbytes)
        warm = dd(path, self.nbytes)
        if verify:
            cmp_with_raw(path, self.raw_path)
        return {"cold": cold, "warm_first": warm_first, "warm": warm, "cold_daemon_cpu": c1 - c0,
                "cold_stats": stats_delta(s0, s1), "verified": verify}

    def peer(self, kind: str, verify: bool) -> dict:
        """squashfuse_ll on the `kind` image: cold dd of a fresh mount, image in the page cache."""
        img = self.peer_images.get(kind)
        if not img or "error" in img:
            raise BenchError(f"no {kind} squashfs image: {(img or {}).get('error', 'not built')}")
        warm_file(img["path"])
        with PeerMount(self.peer_tools["squashfuse_ll"], img["path"], self.peer_mnt, self.args.log) as m:
            path = os.path.join(self.peer_mnt, "raw.bin")
            size = os.stat(path).st_size
            if size != self.nbytes:
                raise BenchError(f"{path}: size {size}, expected {self.nbytes}")
            c0 = m.cpu()
            cold = dd(path, self.nbytes)
            c1 = m.cpu()
            hwm = m.vm_hwm_mib()
            ra = read_ahead_kb(self.peer_mnt)
            if verify:
                cmp_with_raw(path, self.raw_path)
        return {"kind": kind, "cold": cold, "daemon_cpu": c1 - c0, "vm_hwm_mib": hwm, "read_ahead_kb": ra,
                "verified": verify}

    def fromfile(self, name: str) -> dict:
        warm_file(self.b2(name))
        with self.mount() as m:
            path = m.data(name, self.nbytes)
            c0 = m.cpu()
            r = self.worker({"op": "fromfile", "path": path})
            r["daemon_cpu"] = m.cpu() - c0
        if r["nbytes"] != self.nbytes:
            raise BenchError(f"numpy.fromfile({path}) read {r['nbytes']} bytes, expected {self.nbytes}")
        return r

    def disk_cold(self, name: str) -> dict:
        with self.mount() as m:
            path = m.data(name, self.nbytes)
            dropped = drop_caches()
            c0 = m.cpu()
            r = dd(path, self.nbytes)
            r["daemon_cpu"] = m.cpu() - c0
            r["dropped"] = dropped
        return r

    def mount_random(self, name: str, offsets: list[int], disk_cold: bool) -> dict:
        if not disk_cold:
            warm_file(self.b2(name))
        with self.mount() as m:
            path = m.data(name, self.nbytes)
            fd = os.open(path, os.O_RDONLY)
            try:
                dropped = drop_caches() if disk_cold else False
                lat, got = [], []
                c0 = m.cpu()
                for off in offsets:
                    t0 = time.perf_counter()
                    b = os.pread(fd, RANDOM_SIZE, off)
                    lat.append(time.perf_counter() - t0)
                    got.append(b)
                daemon_cpu = m.cpu() - c0
            finally:
                os.close(fd)
        with open(self.raw_path, "rb") as raw:
            for off, b in zip(offsets, got):
                raw.seek(off)
                if raw.read(RANDOM_SIZE) != b:
                    raise BenchError(f"{path}: 4 KiB pread at offset {off} differs from raw.bin (got {len(b)} bytes)")
        return {"latencies": lat, "dropped": dropped, "daemon_cpu": daemon_cpu}

    def python_random(self, name: str, offsets: list[int], disk_cold: bool) -> dict:
        coords = [divmod(off // 8, self.corpus["cols"]) for off in offsets]
        if not disk_cold:
            warm_file(self.b2(name))
        res = self.worker({"op": "random", "path": self.b2(name), "coords": coords, "disk_cold": disk_cold})
        with open(self.raw_path, "rb") as raw:
            for off, v, (i, j) in zip(offsets, res.pop("values"), coords):
                raw.seek(off)
                (expect,) = struct.unpack("<d", raw.read(8))
                if v != expect:
                    raise BenchError(f"python-blosc2 {name}.b2nd[{i}, {j}] = {v}, raw.bin has {expect}")
        return res

    # scale

    def scale(self, case: str) -> dict:
        """One scale case on a fresh mount of scale/ with --scale-cache-size."""
        n = self.nbytes
        sdir = os.path.join(self.corpus["dir"], "scale")
        warm_file(self.b2("zstd"))
        with self.mount(sdir, self.args.scale_cache_size) as m:
            paths = {z: m.data(z, n) for z in SCALE_LINKS}
            if case == "one":
                jobs = [(0.0, paths["z1"], 0, None, n)]
            elif case == "arrays":
                jobs = [(0.0, paths[z], 0, None, n) for z in SCALE_LINKS]
            elif case == "quarters":
                q = n // 4
                jobs = [(k * self.args.stagger, paths["z1"], k * q, (n - 3 * q) if k == 3 else q,
                         (n - 3 * q) if k == 3 else q) for k in range(4)]
            else:
                raise ValueError(case)
            s0, c0 = m.stats(), m.cpu()
            results: list[dict | BaseException | None] = [None] * len(jobs)

            def reader(i, delay, path, skip, count, expect):
                try:
                    time.sleep(delay)
                    results[i] = dd(path, expect, skip=skip, count=count)
                except BaseException as e:  # reported below
                    results[i] = e

            threads = [threading.Thread(target=reader, args=(i,) + job) for i, job in enumerate(jobs)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            s1, c1 = m.stats(), m.cpu()
            hwm = m.vm_hwm_mib()
        for r in results:
            if isinstance(r, BaseException):
                raise r if isinstance(r, BenchError) else BenchError(f"reader: {type(r).__name__}: {r}")
        total = sum(r["nbytes"] for r in results)
        wall = max(r["end"] for r in results) - min(r["start"] for r in results)
        per = [gbps(r["nbytes"], r["seconds"]) for r in results]
        return {"case": case, "readers": len(results), "nbytes": total, "wall": wall, "aggregate_gbps": gbps(total, wall),
                "reader_gbps": per, "slowest_vs_mean": min(per) / statistics.mean(per),
                "daemon_cpu": c1 - c0, "cpu_per_gib": (c1 - c0) / (total / GIB), "stats": stats_delta(s0, s1),
                "vm_hwm_mib": hwm}


def random_plan(nbytes: int) -> list[int]:
    rng = random.Random(RANDOM_SEED)
    pages = nbytes // RANDOM_SIZE
    return [rng.randrange(pages) * RANDOM_SIZE for _ in range(RANDOM_READS)]


# ---------------------------------------------------------------- summary


def per_gib(seconds, nbytes):
    return None if seconds is None else seconds / (nbytes / GIB)


def summarize(results: dict) -> None:
    raw, nbytes = results["raw"], results["config"]["nbytes"]
    cache_bytes = results["config"]["cache_bytes"]
    reps = range(results["config"]["repeats"])
    summary, targets = {}, {}

    def pick(lst, rep, fn):
        """fn(measurement of repeat rep), None when missing."""
        for x in lst:
            if x["rep"] == rep:
                return fn(x)
        return None

    def series(lst, fn):
        return [pick(lst, rep, fn) for rep in reps]

    def ratio_med(a, b):
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
        warm_first = series(r["scan"], lambda x: gbps(nbytes, x["warm_first"]["seconds"]) if "warm_first" in x else None)
        ceil_cold = series(r["scan"], lambda x: gbps(nbytes, x["ceiling"]["cold"]["seconds"]) if x.get("ceiling") else None)
        ceil_warm = series(r["scan"], lambda x: gbps(nbytes, x["ceiling"]["warm"]["seconds"]) if x.get("ceiling") else None)
        ceil_cpu = series(r["scan"], lambda x: per_gib(x["ceiling"]["cold_daemon_cpu"], nbytes) if x.get("ceiling") else None)
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
        d = {
            "c1_gbps": median(c1), "c1_cpu_per_gib": median(c1cpu),
            "c2_gbps": median(c2), "c2_cpu_per_gib": median(c2cpu),
            "slice_gbps": median(sl), "slice_cpu_per_gib": median(slcpu),
            "cat_gbps": median(cat), "cat_cpu_per_gib": median(catcpu),
            "cat_vs_c1": ratio_med(cat, c1), "cat_cpu_vs_c1_cpu": ratio_med(catcpu, c1cpu),
            "cold_gbps": median(cold), "cold_vs_c2": ratio_med(cold, c2),
            "cold_daemon_cpu_per_gib": median(coldcpu), "cold_cpu_vs_c1_cpu": ratio_med(coldcpu, c1cpu),
            "cold_dd_cpu_per_gib": median(ddcpu),
            "warm_gbps": median(warm), "warm_vs_raw_dd": ratio_med(warm, raw_dd),
            "warm_vs_tmpfs_raw_dd": ratio_med(warm, tmpfs_dd),
            "warm_large_folios": large_share([x.get("folios") for x in r["scan"]]),
            "warm_large_folio_kib": folio_kib([x.get("folios") for x in r["scan"]]),
            "warm_first_gbps": median(warm_first), "warm_first_vs_raw_dd": ratio_med(warm_first, raw_dd),
            "ceiling_cold_gbps": median(ceil_cold), "ceiling_warm_gbps": median(ceil_warm),
            "ceiling_cold_daemon_cpu_per_gib": median(ceil_cpu),
            "cold_vs_ceiling": ratio_med(cold, ceil_cold), "warm_vs_ceiling": ratio_med(warm, ceil_warm),
            "ceiling_verified": any((x.get("ceiling") or {}).get("verified") for x in r["scan"]),
            "fromfile_gbps": median(ff), "fromfile_daemon_cpu_per_gib": median(ffcpu),
            "fromfile_vs_c2": ratio_med(ff, c2),
            "disk_cold_gbps": median(dc), "disk_cold_daemon_cpu_per_gib": median(dccpu),
            "random_mount_p50": percentile(mlat, 50) if mlat else None,
            "random_mount_p99": percentile(mlat, 99) if mlat else None,
            "random_python_p50": percentile(plat, 50) if plat else None,
            "random_python_p99": percentile(plat, 99) if plat else None,
            "random_p50_ratio": ratio_med(mp50, pp50),
            "random_daemon_cpu_per_read": median(mcpu),
            "random_disk_mount_p50": percentile(dmlat, 50) if dmlat else None,
            "random_disk_mount_p99": percentile(dmlat, 99) if dmlat else None,
            "random_disk_python_p50": percentile(dplat, 50) if dplat else None,
            "random_disk_python_p99": percentile(dplat, 99) if dplat else None,
            "random_disk_p50_ratio": ratio_med(dmp50, dpp50),
            "vm_hwm_mib": max(hwms) if hwms else None,
            "amplification": max(amps) if amps else None,
            "verified": any(x.get("verified") for x in r["scan"]),
        }
        summary[n] = d

        codec = CODEC_OF[n]
        t = {}

        def target(key, value, ok, display, applies=True):
            if not applies:
                t[key] = {"value": value, "status": "info", "display": display}
            else:
                t[key] = {"value": value, "status": "n/a" if value is None else ("PASS" if ok else "FAIL"),
                          "display": display}

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

    scale = {}
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
            scale[case]["target"] = {"value": v, "status": "PASS" if v >= STARVE_TARGET else "FAIL",
                                     "display": fmt(v, ".2f", "x")}
    summary["scale"] = scale

    # peers: squashfuse_ll beside the paired array's cold dd, ratios per repeat
    peers = {}
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
            "blosc2fs_cold_gbps": median(b_gb), "blosc2fs_cold_daemon_cpu_per_gib": median(b_cpu),
            "squashfuse_cold_gbps": median(p_gb), "squashfuse_cold_daemon_cpu_per_gib": median(p_cpu),
            "gbps_ratio": ratio_med(b_gb, p_gb), "cpu_ratio": ratio_med(b_cpu, p_cpu),
            "blosc2fs_read_ahead_kb": median([x.get("read_ahead_kb") for x in scan]),
            "squashfuse_read_ahead_kb": median([x.get("read_ahead_kb") for x in lst]),
            "squashfuse_vm_hwm_mib": max(hwms) if hwms else None,
            "verified": any(x.get("verified") for x in lst),
        }
    summary["peers"] = peers
    results["summary"] = summary
    results["targets"] = targets


# ---------------------------------------------------------------- report


def fmt(v, spec=".2f", unit=""):
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    return f"{v:{spec}}{unit}"


def ms(v):
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


def large_share(censuses: list) -> float | None:
    """Share of cached pages held in large folios, over the censuses that were taken."""
    cs = [c for c in censuses if c]
    present = sum(c["present"] for c in cs)
    return sum(c["in_large_folios"] for c in cs) / present if present else None


def folio_kib(censuses: list) -> float | None:
    """Mean size of the large folios (KiB) over the censuses that were taken."""
    cs = [c for c in censuses if c]
    heads = sum(c.get("large_folios", 0) for c in cs)
    return 4.0 * sum(c["in_large_folios"] for c in cs) / heads if heads else None


def folio_text(share: float | None, kib: float | None) -> str:
    if share is None:
        return "—"
    return f"{100 * share:.0f} %" + (f" ({kib:.0f}K)" if kib else "")


def peers_table(results: dict) -> list[str]:
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

    def row(label, values):
        lines.append(label.ljust(w0) + "".join(str(v).rjust(w) for v in values))

    def val(kind, key, spec=".2f", unit=""):
        return fmt(sp.get(kind, {}).get(key), spec, unit)

    pkg = tools["packages"].get("squashfuse")
    lines.append(f"peers — squashfuse_ll ({(tools['squashfuse_ll_version'] or '?').split(' (c)')[0]}"
                 + (f", Debian package {pkg}" if pkg else "") + f"; {tools['mksquashfs_version']}) "
                 "serving raw.bin from squashfs images")
    lines.append("  cold dd bs=1M of a fresh mount, image in the page cache; blosc2fs = the paired array's "
                 "cold dd above, same repeats")
    row("", [f"{k} (vs {PEER_OF_ARRAY[k]})" if k != PEER_OF_ARRAY[k] else k for k in cols])

    def img(kind, fn):
        i = images.get(kind) or {}
        return "—" if "error" in i or not i else fn(i)

    row("image MiB (ratio)", [img(k, lambda i: f"{i['image_bytes'] / MIB:.0f} ({i['ratio']:.2f}x)") for k in cols])
    row("squashfs block (array's blocksize)",
        [img(k, lambda i: f"{i['block_size'] // 1024}K ({i['array_block_size'] // 1024}K)") for k in cols])
    row("blosc2fs cold dd                       GB/s", [val(k, "blosc2fs_cold_gbps") for k in cols])
    row("  daemon                               CPU s/GiB", [val(k, "blosc2fs_cold_daemon_cpu_per_gib") for k in cols])
    row("squashfuse_ll cold dd                  GB/s", [val(k, "squashfuse_cold_gbps") for k in cols])
    row("  daemon                               CPU s/GiB", [val(k, "squashfuse_cold_daemon_cpu_per_gib") for k in cols])
    row("blosc2fs / squashfuse_ll  GB/s (>1: faster)", [val(k, "gbps_ratio", ".2f", "x") for k in cols])
    row("                          CPU (<1: less)", [val(k, "cpu_ratio", ".2f", "x") for k in cols])
    row("read_ahead_kb blosc2fs / squashfuse_ll",
        [f"{val(k, 'blosc2fs_read_ahead_kb', '.0f')}/{val(k, 'squashfuse_read_ahead_kb', '.0f')}" for k in cols])
    row("squashfuse_ll VmHWM MiB", [val(k, "squashfuse_vm_hwm_mib", ".0f") for k in cols])
    row("bytes checked against raw.bin (cmp)", ["yes" if sp.get(k, {}).get("verified") else "NO" for k in cols])
    lines.append(f"  none = -noI -noD -noF -noX (no decode: squashfuse_ll's transport), beside clevel0.b2nd; "
                 f"{nbytes / GIB:.3g} GiB read per row")
    return lines


def build_table(results: dict) -> str:
    s = results["summary"]
    c = results["config"]
    env = results["env"]
    cols = list(FILES)
    w0, w = 50, 13
    lines = []

    def row(label, values):
        lines.append(label.ljust(w0) + "".join(str(v).rjust(w) for v in values))

    def vals(key, spec=".2f", unit=""):
        return [fmt(s[n].get(key), spec, unit) for n in cols]

    lines.append(f"blosc2fs benchmark — corpus {c['rows']}x{c['cols']} float64 ({c['nbytes'] / GIB:.3g} GiB), "
                 f"repeats {c['repeats']}, --cache-size {c['cache_size']}"
                 + (f", mount args {c['mount_args']!r}" if c["mount_args"] else "")
                 + "; medians over repeats, ratios = medians of per-repeat ratios")
    lines.append(f"python-blosc2 {env.get('blosc2')}, {env['cpus']} CPUs ({env.get('cpu_model') or 'CPU model unknown'}), kernel {env['kernel']}, "
                 f"load average {env['loadavg_start']:.2f} at start, {env.get('loadavg_end', 0.0):.2f} at end"
                 + ("" if env["caches_dropped"] else "  [WARNING: page caches could NOT be dropped]"))
    load = max(env["loadavg_start"], env.get("loadavg_end", 0.0))
    if load > 0.5 * (env["cpus"] or 1):
        lines.append(f"WARNING: the machine was busy (1-min load average up to {load:.1f} on {env['cpus']} CPUs): "
                     "wall-clock numbers are noisy; CPU s/GiB is the steadier figure")
    lines.append("")
    row("", cols)
    files = results["corpus"]["files"]
    row("compressed MiB (ratio)", [f"{files[n]['file_bytes'] / MIB:.0f} ({files[n]['cratio']:.1f}x)" for n in cols])
    row("chunks", ["x".join(map(str, files[n]["chunks"])) for n in cols])
    row("blocks", ["x".join(map(str, files[n]["blocks"])) for n in cols])
    ce = files.get(CEILING)
    if ce:
        lines.append(f"ceiling.b2nd: {ce['file_bytes'] / MIB:.0f} MiB ({ce['cratio']:.2f}x), codec {ce['codec']} "
                     f"clevel {ce['clevel']}, filters {ce['filters'] or 'none'}, chunks "
                     f"{'x'.join(map(str, ce['chunks']))}, blocks {'x'.join(map(str, ce['blocks']))}"
                     + (f", {ce['memcpyed_chunks']} chunks checked memcpy'ed" if "memcpyed_chunks" in ce else ""))
    lines.append("")
    lines.append("reference (source .b2nd in the page cache)")
    row("C-Blosc2 decompress_chunk, 1 thread    GB/s", vals("c1_gbps"))
    row("                                       CPU s/GiB", vals("c1_cpu_per_gib"))
    row("C-Blosc2 decompress_chunk, 2 threads   GB/s", vals("c2_gbps"))
    row("                                       CPU s/GiB", vals("c2_cpu_per_gib"))
    row(f"python-blosc2 open()[:], {env.get('nthreads')} threads".ljust(39) + "GB/s", vals("slice_gbps"))
    row("                                       CPU s/GiB", vals("slice_cpu_per_gib"))
    row("dd bs=1M raw.bin, page cache           GB/s", [fmt(s.get("raw_dd_gbps"))] * len(cols))
    row("  pages in large folios (mean size)", [folio_text(s.get("raw_dd_large_folios"), s.get("raw_dd_large_folio_kib"))] * len(cols))
    row("dd bs=1M raw.bin's tmpfs copy, info    GB/s", [fmt(s.get("tmpfs_raw_dd_gbps"))] * len(cols))
    row("  pages in large folios (mean size)", [folio_text(s.get("tmpfs_raw_dd_large_folios"), s.get("tmpfs_raw_dd_large_folio_kib"))] * len(cols))
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
    row("  mount's pages in large folios", [folio_text(s[n].get("warm_large_folios"), s[n].get("warm_large_folio_kib")) for n in cols])
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
    row("  daemon CPU per read                    µs", [fmt(None if s[n]["random_daemon_cpu_per_read"] is None else s[n]["random_daemon_cpu_per_read"] * 1e6, ".0f") for n in cols])
    row("python-blosc2 arr[i, j], fresh open    p50 ms", [fmt(ms(s[n]["random_python_p50"]), ".3f") for n in cols])
    row("                                       p99 ms", [fmt(ms(s[n]["random_python_p99"]), ".3f") for n in cols])
    row("  p50 mount / python", vals("random_p50_ratio", ".2f", "x"))
    row("disk-cold random (caches dropped), info", [""] * len(cols))
    row("  mount p50 / p99                      ms", [f"{fmt(ms(s[n]['random_disk_mount_p50']), '.3f')}/{fmt(ms(s[n]['random_disk_mount_p99']), '.2f')}" for n in cols])
    row("  python p50 / p99                     ms", [f"{fmt(ms(s[n]['random_disk_python_p50']), '.3f')}/{fmt(ms(s[n]['random_disk_python_p99']), '.2f')}" for n in cols])
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
        cases = [(k, l) for k, l in cases if k in sc]
        lines.append(f"scale — --cache-size {c['scale_cache_size']}, arrays = hard links to zstd.b2nd "
                     f"(own cache entries each), quarters staggered by {c['stagger']} s")
        row("", [l for _, l in cases])
        row("aggregate GB/s", [fmt(sc[k]["aggregate_gbps"]) for k, _ in cases])
        one = sc.get("one", {}).get("aggregate_gbps")
        row("  / 1 reader", [fmt(sc[k]["aggregate_gbps"] / one if one else None, ".2f", "x") for k, _ in cases])
        row("daemon CPU s/GiB", [fmt(sc[k]["cpu_per_gib"]) for k, _ in cases])
        row("decoded / served", [fmt(sc[k]["amplification"], ".3f") for k, _ in cases])
        row("daemon VmHWM MiB", [fmt(sc[k]["vm_hwm_mib"], ".0f") for k, _ in cases])
        row(f"slowest / mean reader ≥{STARVE_TARGET} (worst repeat)",
            [("—" if "target" not in sc[k] else f"{sc[k]['target']['status']} {sc[k]['target']['display']}")
             for k, _ in cases])
        for k, l in cases:
            lines.append(f"  {l}: reader GB/s (median of each) " + "  ".join(fmt(v) for v in sc[k]["reader_gbps"]))
    if results["errors"]:
        lines.append("")
        lines.append("errors (a measurement could not be made):")
        for e in results["errors"]:
            lines.append(f"  - {e}")
    return "\n".join(lines)


# ---------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description="blosc2fs benchmark (see the module docstring)")
    ap.add_argument("--size-gib", type=float, default=None, help="corpus size in GiB (default 1.0)")
    ap.add_argument("--repeats", type=int, default=None, help="repeats (default 3)")
    ap.add_argument("--quick", action="store_true", help="0.25 GiB, 1 repeat (unless given)")
    ap.add_argument("--workdir", default="/tmp/blosc2fs-bench", help="corpus, mountpoint, logs, results.json")
    ap.add_argument("--binary", default=os.path.join(REPO, "target", "release", "blosc2fs"))
    ap.add_argument("--cache-size", default="128M", help="--cache-size of the mounts of the main table")
    ap.add_argument("--scale-cache-size", default="64M", help="--cache-size of the scale table's mounts")
    ap.add_argument("--stagger", type=float, default=0.1, help="seconds between the quarter readers' starts")
    ap.add_argument("--mount-args", default="", help="extra arguments of every `blosc2fs mount` (one string)")
    ap.add_argument("--python", default=sys.executable, help="interpreter with numpy + blosc2 (default: this one)")
    ap.add_argument("--tmpfs-dir", default="/dev/shm",
                    help="where raw.bin's tmpfs copy goes (the 4 KiB-folio page-cache reference)")
    ap.add_argument("--no-scale", action="store_true", help="skip the scale table")
    ap.add_argument("--no-peers", action="store_true", help="skip the peers (squashfuse_ll) rows")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target FAILs")
    ap.add_argument("--scenario", choices=("mount", "tree", "computed", "zarr3", "disk-cache"), default="mount",
                    help="mount: the tables above (default); tree: many small arrays, find / ls -lR / read-all, "
                         "daemon RSS and descriptors, beside squashfuse_ll (scripts/bench_tree.py); computed: a saved "
                         "expression beside python-blosc2's own evaluation (scripts/bench_computed.py); zarr3: "
                         "xarray's open_datatree beside find, a Dask reduction beside dd (scripts/bench_zarr3.py); disk-cache: "
                         "re-reads through --disk-cache, with and without passthrough (scripts/bench_disk_cache.py)")
    ap.add_argument("--tree-sizes", default="50000,200000", help="tree scenario: array counts, comma separated")
    ap.add_argument("--tree-nofile", type=int, default=1024, help="tree scenario: the daemons' `ulimit -n`")
    ap.add_argument("--tree-cache-size", default="64M", help="tree scenario: blosc2fs --cache-size")
    ap.add_argument("--tree-timeout", type=float, default=600,
                    help="tree scenario: seconds any one step may take (mksquashfs: twice that)")
    ap.add_argument("--tree-mksquashfs-args", default="",
                    help="tree scenario: extra mksquashfs options (e.g. -no-duplicates: store every file)")
    ap.add_argument("--tree-budget-min", type=float, default=25,
                    help="tree scenario: minutes for the whole run; a size's squashfs image is not built when "
                         "its estimated build time would not fit (its peer rows are then skipped)")
    ap.add_argument("--_worker", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args._worker is not None:
        print(json.dumps(worker_main(json.loads(args._worker))))
        return 0

    if args.size_gib is None:
        args.size_gib = 0.25 if args.quick else 1.0
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    args.binary = os.path.abspath(args.binary)
    args.workdir = os.path.abspath(args.workdir)
    if not os.access(args.binary, os.X_OK):
        print(f"error: {args.binary} not found; run `cargo build --release` first (or pass --binary)", file=sys.stderr)
        return 2
    if args.repeats < 1 or args.size_gib <= 0:
        print("error: --repeats must be ≥1 and --size-gib > 0", file=sys.stderr)
        return 2
    if args.scenario == "tree":
        os.makedirs(args.workdir, exist_ok=True)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_tree
        return bench_tree.run(args, sys.modules[__name__])
    if args.scenario == "zarr3":
        os.makedirs(args.workdir, exist_ok=True)
        args.mnt = os.path.join(args.workdir, "mnt")
        args.log = os.path.join(args.workdir, "daemon.log")
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_zarr3
        return bench_zarr3.run(args, sys.modules[__name__])
    if args.scenario == "disk-cache":
        os.makedirs(args.workdir, exist_ok=True)
        args.mnt = os.path.join(args.workdir, "mnt")
        args.log = os.path.join(args.workdir, "daemon.log")
        atexit.register(cleanup_all)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_disk_cache
        return bench_disk_cache.run(args, sys.modules[__name__])
    if args.scenario == "computed":
        os.makedirs(args.workdir, exist_ok=True)
        args.mnt = os.path.join(args.workdir, "mnt")
        args.log = os.path.join(args.workdir, "daemon.log")
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_computed
        return bench_computed.run(args, sys.modules[__name__])
    for tool in ("dd", "cmp"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            print(f"error: `{tool}` is needed", file=sys.stderr)
            return 2
    cache_bytes = parse_size(args.cache_size)
    parse_size(args.scale_cache_size)
    os.makedirs(args.workdir, exist_ok=True)
    args.mnt = os.path.join(args.workdir, "mnt")
    args.log = os.path.join(args.workdir, "daemon.log")
    open(args.log, "w").close()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)
    atexit.register(cleanup_all)

    env = host_env() | {"machine": platform.machine(), "binary": args.binary, "python_exe": args.python,
                        "caches_dropped": drop_caches()}
    errors: list[str] = []
    try:
        cleanup_mountpoint(args.binary, args.mnt)
        env |= run_worker(args.python, {"op": "version"})
        corpus = ensure_corpus(args.python, args.workdir, args.size_gib)
        bench = Bench(args, corpus)
        nbytes = corpus["nbytes"]
        peers = {"enabled": False, "skipped": None, "tools": None, "images": {}}
        if args.no_peers:
            peers["skipped"] = "--no-peers"
        else:
            tools, why = peer_tools()
            if tools is None:
                peers["skipped"] = why
                print(f"peers: skipped: {why}", flush=True)
            else:
                cleanup_peer_mountpoint(bench.peer_mnt)
                peers.update(enabled=True, tools=tools, images=ensure_peer_images(corpus, tools))
                bench.peer_tools, bench.peer_images = tools, peers["images"]
                for kind, img in peers["images"].items():
                    if "error" in img:
                        errors.append(f"peers {kind}: {img['error']}")
                        print(f"  ERROR peers {kind}: {img['error']}", flush=True)
        measures = ("c1", "c2", "slice", "cat", "scan", "fromfile", "disk_cold", "mount_random", "python_random",
                    "mount_random_disk", "python_random_disk")
        results = {
            "config": {"size_gib": args.size_gib, "rows": corpus["rows"], "cols": corpus["cols"], "nbytes": nbytes,
                       "repeats": args.repeats, "cache_size": args.cache_size, "cache_bytes": cache_bytes,
                       "scale_cache_size": args.scale_cache_size, "stagger": args.stagger,
                       "mount_args": args.mount_args, "random_reads": RANDOM_READS, "random_size": RANDOM_SIZE,
                       "random_seed": RANDOM_SEED, "workdir": args.workdir, "corpus_dir": corpus["dir"],
                       "peers": peers["enabled"]},
            "env": env,
            "corpus": {k: v for k, v in corpus.items() if k != "dir"},
            "peers": peers,
            "raw": {"files": {n: {m: [] for m in measures} for n in FILES}, "raw_dd": [], "tmpfs_raw_dd": [],
                    "scale": {"one": [], "arrays": [], "quarters": []}, "peers": {k: [] for k in PEER_KINDS}},
            "errors": errors,
        }
        raw = results["raw"]

        def attempt(label, fn):
            try:
                return fn()
            except BenchError as e:
                msg = f"{label}: {e}"
            except (OSError, subprocess.SubprocessError, ValueError) as e:
                msg = f"{label}: {type(e).__name__}: {e}"
            if msg not in errors:
                errors.append(msg)
            print(f"  ERROR {msg}", flush=True)
            return None

        def record(lst, rep, value):
            if value is not None:
                value["rep"] = rep
                lst.append(value)
            return value

        def g(x, key="seconds", n=None):
            return gbps(n or x["nbytes"], x[key])

        offsets = random_plan(nbytes)
        for rep in range(args.repeats):
            tag = f"[{rep + 1}/{args.repeats}]"
            order = list(FILES) if rep % 2 == 0 else list(reversed(FILES))
            for n in order:
                f = raw["files"][n]
                steps = [
                    ("c1", lambda: bench.cdecode(n, 1)),
                    ("cat", lambda: bench.cat(n)),
                    ("c2", lambda: bench.cdecode(n, 2)),
                    ("scan", lambda: bench.mount_scan(n, verify=(rep == 0))),
                ]
                if peers["enabled"] and n in PEER_OF:
                    # squashfuse_ll beside this array's cold dd (after it; before it on odd repeats)
                    steps.append(("peer", lambda: bench.peer(PEER_OF[n], verify=(rep == 0))))
                steps += [
                    ("raw_dd", lambda: bench.raw_dd()),
                    ("tmpfs_raw_dd", lambda: bench.tmpfs_raw_dd()),
                    ("slice", lambda: bench.slice(n)),
                    ("fromfile", lambda: bench.fromfile(n)),
                    ("disk_cold", lambda: bench.disk_cold(n)),
                    ("mount_random", lambda: bench.mount_random(n, offsets, disk_cold=False)),
                    ("python_random", lambda: bench.python_random(n, offsets, disk_cold=False)),
                    ("mount_random_disk", lambda: bench.mount_random(n, offsets, disk_cold=True)),
                    ("python_random_disk", lambda: bench.python_random(n, offsets, disk_cold=True)),
                ]
                if rep % 2:
                    steps.reverse()
                got = {}
                for key, fn in steps:
                    once = key in ("raw_dd", "tmpfs_raw_dd")
                    if once and n != order[0]:
                        continue  # once per repeat, beside the first array's scan
                    lst = raw[key] if once else (raw["peers"][PEER_OF[n]] if key == "peer" else f[key])
                    got[key] = record(lst, rep, attempt(f"{n}: {key}", fn))
                parts = []
                if got.get("c1"):
                    parts.append(f"C1 {g(got['c1']):.2f} GB/s {got['c1']['cpu'] / (nbytes / GIB):.2f} s/GiB")
                if got.get("c2"):
                    parts.append(f"C2 {g(got['c2']):.2f}")
                if got.get("cat"):
                    parts.append(f"cat {gbps(nbytes, got['cat']['seconds']):.2f} ({got['cat']['cpu'] / (nbytes / GIB):.2f} s/GiB)")
                if got.get("scan"):
                    sc = got["scan"]
                    parts.append(f"cold dd {gbps(nbytes, sc['cold']['seconds']):.2f} "
                                 f"(daemon {sc['cold_daemon_cpu'] / (nbytes / GIB):.2f} s/GiB, "
                                 f"amp {fmt(sc['cold_stats']['amplification'], '.3f')}) "
                                 f"warm {gbps(nbytes, sc['warm']['seconds']):.2f}")
                    if sc.get("ceiling"):
                        ce = sc["ceiling"]
                        parts.append(f"ceiling (same daemon) cold {gbps(nbytes, ce['cold']['seconds']):.2f} "
                                     f"warm {gbps(nbytes, ce['warm']['seconds']):.2f}")
                if got.get("peer"):
                    pr = got["peer"]
                    parts.append(f"squashfuse_ll {pr['kind']} cold dd {gbps(nbytes, pr['cold']['seconds']):.2f} "
                                 f"(daemon {pr['daemon_cpu'] / (nbytes / GIB):.2f} s/GiB)")
                if got.get("raw_dd"):
                    parts.append(f"raw.bin dd {g(got['raw_dd']):.2f}")
                if got.get("tmpfs_raw_dd"):
                    parts.append(f"tmpfs copy dd {g(got['tmpfs_raw_dd']):.2f}")
                if got.get("slice"):
                    parts.append(f"[:] {g(got['slice']):.2f}")
                if got.get("fromfile"):
                    parts.append(f"fromfile {g(got['fromfile']):.2f}")
                if got.get("disk_cold"):
                    parts.append(f"disk-cold {g(got['disk_cold']):.2f}")
                if got.get("mount_random") and got.get("python_random"):
                    parts.append(f"random p50 {percentile(got['mount_random']['latencies'], 50) * 1e3:.3f} / "
                                 f"{percentile(got['python_random']['latencies'], 50) * 1e3:.3f} ms")
                if got.get("mount_random_disk") and got.get("python_random_disk"):
                    parts.append(f"disk-cold {percentile(got['mount_random_disk']['latencies'], 50) * 1e3:.3f} / "
                                 f"{percentile(got['python_random_disk']['latencies'], 50) * 1e3:.3f} ms")
                print(f"{tag} {n:7s} " + ", ".join(parts), flush=True)

        if not args.no_scale:
            for rep in range(args.repeats):
                cases = ["one", "arrays", "quarters"]
                if rep % 2:
                    cases.reverse()
                for case in cases:
                    r = record(raw["scale"][case], rep, attempt(f"scale {case}", lambda: bench.scale(case)))
                    if r:
                        print(f"[{rep + 1}/{args.repeats}] scale {case:8s} {r['aggregate_gbps']:.2f} GB/s aggregate, "
                              f"readers {' '.join(f'{v:.2f}' for v in r['reader_gbps'])}, "
                              f"daemon {r['cpu_per_gib']:.2f} s/GiB, amp {fmt(r['stats']['amplification'], '.3f')}",
                              flush=True)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        cleanup_all()

    for n in FILES:
        if not any(x.get("verified") for x in raw["files"][n]["scan"]):
            msg = f"{n}: no scan was checked against raw.bin"
            if msg not in errors:
                errors.append(msg)
    if peers["enabled"]:
        for kind in PEER_KINDS:
            if not any(x.get("verified") for x in raw["peers"][kind]):
                msg = f"peers {kind}: squashfuse_ll's raw.bin was not checked against raw.bin"
                if msg not in errors:
                    errors.append(msg)
    summarize(results)
    results["env"]["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    results["env"]["loadavg_end"] = os.getloadavg()[0]
    results["env"]["loadavg_1_5_15_end"] = list(os.getloadavg())
    out = os.path.join(args.workdir, "results.json")
    with open(out, "w") as f:
        json.dump(results, f, indent=1)
    print()
    print(build_table(results))
    print(f"\nresults: {out}  daemon log: {args.log}")
    if errors:
        return 2
    all_targets = [t for ts in results["targets"].values() for t in ts.values()]
    all_targets += [v["target"] for v in results["summary"].get("scale", {}).values() if "target" in v]
    if args.strict and any(t["status"] == "FAIL" for t in all_targets):
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        cleanup_all()
        print("interrupted", file=sys.stderr)
        sys.exit(130)
