"""The "mount" scenario of bench.py (its default): arrays read through the mount the client's way in, beside C-Blosc2.

Usage (as root: it mounts, and drops page caches for the disk-cold and random rows):

    .venv/bin/python scripts/bench/bench.py --repeats 3 --binary target/release/blosc2fs

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

import ctypes
import os
import platform
import random
import statistics
import struct
import subprocess
import sys
import threading
import time
from typing import Any

from benchlib import (
    GIB,
    Attempts,
    BenchError,
    Json,
    Mount,
    cleanup_all,
    cleanup_mountpoint,
    corpus_config,
    dd,
    drop_caches,
    fmt,
    gbps,
    host_env,
    open_run_dir,
    parse_size,
    percentile,
    read_ahead_kb,
    register_temp_file,
    run_timed,
    run_worker,
    save_results,
    warm_file,
    worker_versions,
)
from corpus import CEILING, FILES, SCALE_LINKS, ensure_corpus
from mount_report import build_table, summarize
from peers import PEER_KINDS, PEER_OF, PeerMount, ensure_peer_images, peer_tools

RANDOM_READS = 400
RANDOM_SIZE = 4096
RANDOM_SEED = 20240611


def folio_census(path: str) -> dict[str, Any] | None:
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
            with open("/proc/self/pagemap", "rb", buffering=0) as pm, open("/proc/kpageflags", "rb", buffering=0) as kf:
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


def stats_delta(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    dec = b["bytes_decoded"] - a["bytes_decoded"]
    srv = b["bytes_served"] - a["bytes_served"]
    return {
        "bytes_decoded": dec,
        "bytes_served": srv,
        "amplification": (dec / srv) if srv else None,
        "cache_hits": b.get("cache_hits", 0) - a.get("cache_hits", 0),
        "cache_misses": b.get("cache_misses", 0) - a.get("cache_misses", 0),
        "evictions": b.get("evictions", 0) - a.get("evictions", 0),
    }


# ---------------------------------------------------------------- worker (numpy/blosc2 side)


def worker(request: Json) -> Json:
    """The scenario's numpy/blosc2 side (bench.py --_worker): C-Blosc2's decode, python-blosc2's reads."""
    import blosc2
    import numpy as np

    op = request["op"]
    if op == "version":
        return worker_versions()

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
        return {
            "seconds": t1 - t0,
            "cpu": c1 - c0,
            "nbytes": total,
            "nchunks": n,
            "minflt": ru1.ru_minflt - ru0.ru_minflt,
            "nthreads": request["nthreads"],
        }

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


# ---------------------------------------------------------------- measurements


def cmp_with_raw(path: str, raw_path: str) -> None:
    """`cmp path raw.bin`; a BenchError when they differ."""
    p = subprocess.run(["cmp", path, raw_path], capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    if p.returncode != 0:
        raise BenchError(f"{path} is not raw.bin: {(p.stdout + p.stderr).strip()[-500:]}")


class Bench:
    """One run: the corpus, the settings, and the measurements (each returns a dict or raises)."""

    def __init__(self, args: Any, corpus: Any) -> None:
        self.args, self.corpus = args, corpus
        self.nbytes = corpus["nbytes"]
        self.raw_path = os.path.join(corpus["dir"], "raw.bin")
        self.tmpfs_raw: str | None = None
        self.peer_tools: dict[str, Any] | None = None  # set by main when the peers run
        self.peer_images: dict[str, Any] = {}
        self.peer_mnt = os.path.join(args.workdir, "mnt-squashfs")

    def b2(self, name: str) -> str:
        return os.path.join(self.corpus["dir"], "b2", f"{name}.b2nd")

    def mount(self, source: str | None = None, cache: str | None = None) -> Mount:
        return Mount.of(self.args, source or os.path.join(self.corpus["dir"], "b2"), cache or self.args.cache_size)

    def worker(self, request: dict[str, Any]) -> dict[str, Any]:
        return run_worker(self.args.python, request)

    # reference rows

    def cdecode(self, name: str, nthreads: int) -> dict[str, Any]:
        warm_file(self.b2(name))
        r = self.worker({"op": "cdecode", "path": self.b2(name), "nthreads": nthreads})
        if r["nbytes"] < self.nbytes:
            raise BenchError(f"C-Blosc2 decoded {r['nbytes']} bytes of {name}.b2nd, expected ≥ {self.nbytes}")
        return r

    def slice(self, name: str) -> dict[str, Any]:
        warm_file(self.b2(name))
        r = self.worker({"op": "slice", "path": self.b2(name)})
        if r["nbytes"] != self.nbytes:
            raise BenchError(f"python-blosc2 {name}.b2nd[:] gave {r['nbytes']} bytes, expected {self.nbytes}")
        return r

    def raw_dd(self) -> dict[str, Any]:
        # Read twice before the timed dd, like the mount's steady re-read
        # below: the first re-read of a page moves it to the active list.
        warm_file(self.raw_path)
        dd(self.raw_path, self.nbytes)
        return dd(self.raw_path, self.nbytes) | {"folios": folio_census(self.raw_path)}

    def tmpfs_raw_dd(self) -> dict[str, Any]:
        """raw.bin's bytes as a plain file in tmpfs (--tmpfs-dir), timed like raw_dd.

        tmpfs without huge pages caches a file in 4 KiB folios, the size the FUSE page
        cache uses on kernels whose FUSE has no large folios: beside raw.bin (whose
        filesystem may cache it in large folios) it tells how much of the warm re-read's
        gap is folio size. The census says what each one really held.
        """
        if self.tmpfs_raw is None:
            path = os.path.join(self.args.tmpfs_dir, f"blosc2fs-bench-raw-{os.getpid()}.bin")
            register_temp_file(path)
            subprocess.run(["cp", self.raw_path, path], check=True)
            self.tmpfs_raw = path
        warm_file(self.tmpfs_raw)
        dd(self.tmpfs_raw, self.nbytes)
        return dd(self.tmpfs_raw, self.nbytes) | {"folios": folio_census(self.tmpfs_raw)}

    # the client's way in

    def cat(self, name: str) -> dict[str, Any]:
        warm_file(self.b2(name))
        return run_timed([self.args.binary, "cat", self.b2(name)])

    def mount_scan(self, name: str, verify: bool) -> dict[str, Any]:
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
        return {
            "cold": cold,
            "warm": warm,
            "warm_first": warm_first,
            "cold_daemon_cpu": c1 - c0,
            "warm_daemon_cpu": c2 - c1,
            "cold_stats": stats_delta(s0, s1),
            "warm_stats": stats_delta(s1, s2),
            "vm_hwm_mib": hwm,
            "verified": verify,
            "folios": folios,
            "read_ahead_kb": ra,
            "ceiling": ceiling,
        }

    def ceiling_scan(self, m: Mount, verify: bool) -> dict[str, Any]:
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
        return {
            "cold": cold,
            "warm_first": warm_first,
            "warm": warm,
            "cold_daemon_cpu": c1 - c0,
            "cold_stats": stats_delta(s0, s1),
            "verified": verify,
        }

    def peer(self, kind: str, verify: bool) -> dict[str, Any]:
        """squashfuse_ll on the `kind` image: cold dd of a fresh mount, image in the page cache."""
        img = self.peer_images.get(kind)
        if not img or "error" in img:
            raise BenchError(f"no {kind} squashfs image: {(img or {}).get('error', 'not built')}")
        warm_file(img["path"])
        assert self.peer_tools is not None
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
        return {
            "kind": kind,
            "cold": cold,
            "daemon_cpu": c1 - c0,
            "vm_hwm_mib": hwm,
            "read_ahead_kb": ra,
            "verified": verify,
        }

    def fromfile(self, name: str) -> dict[str, Any]:
        warm_file(self.b2(name))
        with self.mount() as m:
            path = m.data(name, self.nbytes)
            r = m.charged(lambda: self.worker({"op": "fromfile", "path": path}))
        if r["nbytes"] != self.nbytes:
            raise BenchError(f"numpy.fromfile({path}) read {r['nbytes']} bytes, expected {self.nbytes}")
        return r

    def disk_cold(self, name: str) -> dict[str, Any]:
        with self.mount() as m:
            path = m.data(name, self.nbytes)
            dropped = drop_caches()
            r = m.charged(lambda: dd(path, self.nbytes))
            r["dropped"] = dropped
        return r

    def mount_random(self, name: str, offsets: list[int], disk_cold: bool) -> dict[str, Any]:
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

    def python_random(self, name: str, offsets: list[int], disk_cold: bool) -> dict[str, Any]:
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

    def scale(self, case: str) -> dict[str, Any]:
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
                jobs = [
                    (
                        k * self.args.stagger,
                        paths["z1"],
                        k * q,
                        (n - 3 * q) if k == 3 else q,
                        (n - 3 * q) if k == 3 else q,
                    )
                    for k in range(4)
                ]
            else:
                raise ValueError(case)
            s0, c0 = m.stats(), m.cpu()
            results: list[Json | BaseException | None] = [None] * len(jobs)

            def reader(i: Any, delay: Any, path: str, skip: Any, count: Any, expect: Any) -> None:
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
        done: list[Json] = []
        for r in results:
            if isinstance(r, BaseException):
                raise r if isinstance(r, BenchError) else BenchError(f"reader: {type(r).__name__}: {r}")
            assert r is not None
            done.append(r)
        total = sum(r["nbytes"] for r in done)
        wall = max(r["end"] for r in done) - min(r["start"] for r in done)
        per = [gbps(r["nbytes"], r["seconds"]) for r in done]
        return {
            "case": case,
            "readers": len(done),
            "nbytes": total,
            "wall": wall,
            "aggregate_gbps": gbps(total, wall),
            "reader_gbps": per,
            "slowest_vs_mean": min(per) / statistics.mean(per),
            "daemon_cpu": c1 - c0,
            "cpu_per_gib": (c1 - c0) / (total / GIB),
            "stats": stats_delta(s0, s1),
            "vm_hwm_mib": hwm,
        }


def random_plan(nbytes: int) -> list[int]:
    rng = random.Random(RANDOM_SEED)
    pages = nbytes // RANDOM_SIZE
    return [rng.randrange(pages) * RANDOM_SIZE for _ in range(RANDOM_READS)]


# ---------------------------------------------------------------- the run


def run(args: Any) -> int:
    """The mount scenario with bench.py's options `args`; the exit status."""
    for tool in ("dd", "cmp"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            print(f"error: `{tool}` is needed", file=sys.stderr)
            return 2
    cache_bytes = parse_size(args.cache_size)
    parse_size(args.scale_cache_size)
    open_run_dir(args)

    env = host_env() | {
        "machine": platform.machine(),
        "binary": args.binary,
        "python_exe": args.python,
        "caches_dropped": drop_caches(),
    }
    errors: list[str] = []
    try:
        cleanup_mountpoint(args.mnt, args.binary)
        env |= run_worker(args.python, {"op": "version"})
        corpus = ensure_corpus(args.python, args.workdir, args.size_gib)
        bench = Bench(args, corpus)
        nbytes = corpus["nbytes"]
        peers: Json = {"enabled": False, "skipped": None, "tools": None, "images": {}}
        if args.no_peers:
            peers["skipped"] = "--no-peers"
        else:
            tools, why = peer_tools()
            if tools is None:
                peers["skipped"] = why
                print(f"peers: skipped: {why}", flush=True)
            else:
                cleanup_mountpoint(bench.peer_mnt)
                peers.update(enabled=True, tools=tools, images=ensure_peer_images(corpus, tools))
                bench.peer_tools, bench.peer_images = tools, peers["images"]
                for kind, img in peers["images"].items():
                    if "error" in img:
                        errors.append(f"peers {kind}: {img['error']}")
                        print(f"  ERROR peers {kind}: {img['error']}", flush=True)
        measures = (
            "c1",
            "c2",
            "slice",
            "cat",
            "scan",
            "fromfile",
            "disk_cold",
            "mount_random",
            "python_random",
            "mount_random_disk",
            "python_random_disk",
        )
        results: Json = {
            "config": corpus_config(args, corpus)
            | {
                "cache_bytes": cache_bytes,
                "scale_cache_size": args.scale_cache_size,
                "stagger": args.stagger,
                "mount_args": args.mount_args,
                "random_reads": RANDOM_READS,
                "random_size": RANDOM_SIZE,
                "random_seed": RANDOM_SEED,
                "workdir": args.workdir,
                "corpus_dir": corpus["dir"],
                "peers": peers["enabled"],
            },
            "env": env,
            "corpus": {k: v for k, v in corpus.items() if k != "dir"},
            "peers": peers,
            "raw": {
                "files": {n: {m: [] for m in measures} for n in FILES},
                "raw_dd": [],
                "tmpfs_raw_dd": [],
                "scale": {"one": [], "arrays": [], "quarters": []},
                "peers": {k: [] for k in PEER_KINDS},
            },
            "errors": errors,
        }
        raw = results["raw"]

        attempt = Attempts(errors, also=(ValueError,))

        def record(lst: Any, rep: Any, value: Any) -> Any:
            if value is not None:
                value["rep"] = rep
                lst.append(value)
            return value

        def g(x: Any, key: str = "seconds", n: Any = None) -> Any:
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
                got: Json = {}
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
                    parts.append(
                        f"cat {gbps(nbytes, got['cat']['seconds']):.2f} ({got['cat']['cpu'] / (nbytes / GIB):.2f} s/GiB)"
                    )
                if got.get("scan"):
                    sc = got["scan"]
                    parts.append(
                        f"cold dd {gbps(nbytes, sc['cold']['seconds']):.2f} "
                        f"(daemon {sc['cold_daemon_cpu'] / (nbytes / GIB):.2f} s/GiB, "
                        f"amp {fmt(sc['cold_stats']['amplification'], '.3f')}) "
                        f"warm {gbps(nbytes, sc['warm']['seconds']):.2f}"
                    )
                    if sc.get("ceiling"):
                        ce = sc["ceiling"]
                        parts.append(
                            f"ceiling (same daemon) cold {gbps(nbytes, ce['cold']['seconds']):.2f} "
                            f"warm {gbps(nbytes, ce['warm']['seconds']):.2f}"
                        )
                if got.get("peer"):
                    pr = got["peer"]
                    parts.append(
                        f"squashfuse_ll {pr['kind']} cold dd {gbps(nbytes, pr['cold']['seconds']):.2f} "
                        f"(daemon {pr['daemon_cpu'] / (nbytes / GIB):.2f} s/GiB)"
                    )
                for key, label in (
                    ("raw_dd", "raw.bin dd"),
                    ("tmpfs_raw_dd", "tmpfs copy dd"),
                    ("slice", "[:]"),
                    ("fromfile", "fromfile"),
                    ("disk_cold", "disk-cold"),
                ):
                    if got.get(key):
                        parts.append(f"{label} {g(got[key]):.2f}")
                for mount_key, python_key, label in (
                    ("mount_random", "python_random", "random p50"),
                    ("mount_random_disk", "python_random_disk", "disk-cold"),
                ):
                    if got.get(mount_key) and got.get(python_key):
                        p50s = [percentile(got[k]["latencies"], 50) * 1e3 for k in (mount_key, python_key)]
                        parts.append(f"{label} {p50s[0]:.3f} / {p50s[1]:.3f} ms")
                print(f"{tag} {n:7s} " + ", ".join(parts), flush=True)

        if not args.no_scale:
            for rep in range(args.repeats):
                cases = ["one", "arrays", "quarters"]
                if rep % 2:
                    cases.reverse()
                for case in cases:
                    r = record(raw["scale"][case], rep, attempt(f"scale {case}", lambda: bench.scale(case)))
                    if r:
                        print(
                            f"[{rep + 1}/{args.repeats}] scale {case:8s} {r['aggregate_gbps']:.2f} GB/s aggregate, "
                            f"readers {' '.join(f'{v:.2f}' for v in r['reader_gbps'])}, "
                            f"daemon {r['cpu_per_gib']:.2f} s/GiB, amp {fmt(r['stats']['amplification'], '.3f')}",
                            flush=True,
                        )
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
    save_results(results, args.workdir, build_table, f"daemon log: {args.log}", load_triple=True)
    if errors:
        return 2
    all_targets = [t for ts in results["targets"].values() for t in ts.values()]
    all_targets += [v["target"] for v in results["summary"].get("scale", {}).values() if "target" in v]
    if args.strict and any(t["status"] == "FAIL" for t in all_targets):
        return 1
    return 0
