#!/usr/bin/env python3
"""The "tree" scenario of scripts/bench/bench.py: a data lake of many small arrays.

Usage (as root; the same options as bench.py, which runs this module for `--scenario tree`):

    .venv/bin/python scripts/bench/bench.py --scenario tree --binary target/release/blosc2fs
    .venv/bin/python scripts/bench/bench.py --scenario tree --tree-sizes 2000 --no-peers   # a quick try

    tree options: [--tree-sizes 50000,200000] [--tree-nofile 1024] [--tree-cache-size 64M]
                  [--tree-timeout 600] [--tree-budget-min 25] [--tree-mksquashfs-args ""]
                  [--no-peers] [--workdir DIR]
                  [--mount-args "..."] [--python INTERPRETER]

Tree (WORKDIR/tree-N/, reused while WORKDIR/tree-N.json matches): N arrays in folders of 100
(d00000/a0000000.b2nd ...), each a real copy (shutil.copyfile: no hard link, no reflink on
ext4) of one of four templates made by python-blosc2, taken in turn (WORKDIR/tree-templates/):

    f8_2d_zstd     float64 (32, 32), ZSTD clevel 5 + SHUFFLE, one chunk
    i4_1d_lz4      int32 (2048,), LZ4 clevel 5 + SHUFFLE, one chunk
    u1_3d_rgb      uint8 (32, 32, 3) (an RGB picture), default cparams, one chunk
    f4_2d_4chunks  float32 (64, 64), BLOSCLZ clevel 5 + BITSHUFFLE, chunks (32, 32): four chunks

Before the first mount of a tree, the source tree is read once (untimed: its files and
inodes are in the kernel's caches, as the corpus is in bench.py's rows). Each mount is
`bash -c 'ulimit -n NOFILE; exec blosc2fs mount -f --cache-size SIZE [mount-args] SRC MNT'`
(the daemon is the bash process itself after exec: its PID gives /proc/PID/status and fd/).
Per tree size:

  blosc2fs
    fresh mount: the root listed (`ls -1 MNT`), then `find MNT | wc -l` timed (entries; every
      stderr line is an error), the daemon's VmHWM, VmRSS and open descriptors after each
    fresh mount: the root listed (the base VmHWM / VmRSS), `ls -lR MNT > /dev/null` timed,
      then on the same mount (every entry now looked up) the read-all pass
      `find MNT -type f -print0 | xargs -0 cat | wc -c` timed (bytes read), then MNT/.stats
    bytes per array = (VmHWM after the read-all − VmHWM after the root listing) / N, and the
      same with VmRSS
  squashfuse_ll (unless --no-peers), the same steps over a squashfs image of the presented
    tree: `mksquashfs MNT IMAGE -noappend -quiet -no-progress [--tree-mksquashfs-args]` from a
    fresh blosc2fs mount (timed: it reads every file too), cached as WORKDIR/tree-N-vV.sqfs
    (rebuilt when the tree or the options changed, or when its build had errors). By default
    mksquashfs stores identical files once, and the tree's arrays are copies of four templates:
    the image is tiny and squashfuse_ll reads the same few blocks over and over; pass
    --tree-mksquashfs-args=-no-duplicates for an image that stores every file. Mounted `squashfuse_ll -f IMAGE MNT` under the
    same ulimit, image read into the page cache first. When building the image would not fit
    the time budget (--tree-budget-min for the whole scenario, estimated from the previous
    size's build), the peer is skipped for that size with a message.

Every subprocess has a timeout (--tree-timeout; mksquashfs twice that): on expiry its process
group is killed, and the daemon too if the reader does not die (a reader waiting on a FUSE
answer does not die until the daemon goes). Errors are counted, never fatal; every mount is
always removed. Output: a markdown table (one row per size and system), a line extrapolating
to 1,000,000 arrays, the .stats of the read-all mount, and WORKDIR/tree-results.json.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

from benchlib import (
    BenchError,
    ForegroundDaemon,
    Json,
    busy_warning,
    cleanup_all,
    cleanup_mountpoint,
    fmt,
    host_env,
    install_cleanup,
    parse_size,
    run_worker,
    unmount_fuse,
    warm_file,
)
from peers import peer_tools

MIB = 1 << 20
TREE_VERSION = 1
IMAGE_VERSION = 1
PER_FOLDER = 100
TEMPLATES = ("f8_2d_zstd", "i4_1d_lz4", "u1_3d_rgb", "f4_2d_4chunks")


# ---------------------------------------------------------------- templates (worker side: numpy + blosc2)


def make_templates(request: dict[str, Any]) -> dict[str, Any]:
    """Write the four templates into request["dir"]; runs in bench.py's worker (numpy, blosc2)."""
    import blosc2
    import numpy as np

    out = request["dir"]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20240611)
    i, j = np.mgrid[0:32, 0:32]
    y, x = np.mgrid[0:64, 0:64]
    specs: dict[str, tuple[Any, dict[str, Any]]] = {
        "f8_2d_zstd": (
            np.round(10 * np.sin(i / 5) * np.cos(j / 7) + rng.normal(0, 0.1, (32, 32)), 3),
            dict(cparams={"codec": blosc2.Codec.ZSTD, "clevel": 5, "filters": [blosc2.Filter.SHUFFLE]}),
        ),
        "i4_1d_lz4": (
            np.cumsum(rng.integers(-3, 4, 2048)).astype(np.int32),
            dict(cparams={"codec": blosc2.Codec.LZ4, "clevel": 5, "filters": [blosc2.Filter.SHUFFLE]}),
        ),
        "u1_3d_rgb": (np.stack([i * 8, j * 8, (i + j) * 4], axis=-1).astype(np.uint8), dict()),
        "f4_2d_4chunks": (
            (np.sin(y / 9) * np.cos(x / 11) * 100).astype(np.float32),
            dict(
                chunks=(32, 32),
                blocks=(16, 32),
                cparams={"codec": blosc2.Codec.BLOSCLZ, "clevel": 5, "filters": [blosc2.Filter.BITSHUFFLE]},
            ),
        ),
    }
    info = {}
    for name in TEMPLATES:
        values, kw = specs[name]
        path = os.path.join(out, f"{name}.b2nd")
        arr = blosc2.asarray(values, urlpath=path, mode="w", **kw)
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        info[name] = {
            "path": path,
            "dtype": str(arr.dtype),
            "shape": list(arr.shape),
            "chunks": list(arr.chunks),
            "blocks": list(arr.blocks),
            "nchunks": arr.schunk.nchunks,
            "codec": arr.schunk.cparams.codec.name,
            "clevel": arr.schunk.cparams.clevel,
            "filters": [f.name for f in arr.schunk.cparams.filters if f != blosc2.Filter.NOFILTER],
            "file_bytes": os.path.getsize(path),
            "sha256": digest,
        }
        del arr
    return {"templates": info, "blosc2": blosc2.__version__}


# ---------------------------------------------------------------- the tree on disk


def _read_json(path: str) -> Json | None:
    try:
        with open(path) as f:
            data: Json = json.load(f)
            return data
    except (OSError, ValueError):
        return None


def _write_json(path: str, obj: Any) -> None:
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=1)
    os.rename(path + ".tmp", path)


def ensure_templates(args: Any) -> Json:
    tdir = os.path.join(args.workdir, "tree-templates")
    manifest = os.path.join(tdir, "templates.json")
    old = _read_json(manifest)
    if (
        old
        and old.get("version") == TREE_VERSION
        and set(old.get("templates", {})) == set(TEMPLATES)
        and all(
            os.path.exists(t["path"]) and os.path.getsize(t["path"]) == t["file_bytes"]
            for t in old["templates"].values()
        )
    ):
        return old
    print(f"tree: writing the templates in {tdir} ...", flush=True)
    res = run_worker(args.python, {"op": "tree_templates", "dir": tdir}, timeout=600)
    res["version"] = TREE_VERSION
    _write_json(manifest, res)
    return res


def ensure_tree(args: Any, n: int) -> Json:
    """WORKDIR/tree-N with N arrays (real copies of the templates), reused when its marker matches."""
    tdir = os.path.join(args.workdir, f"tree-{n}")
    marker_path = os.path.join(args.workdir, f"tree-{n}.json")
    marker = _read_json(marker_path)
    nfolders = (n + PER_FOLDER - 1) // PER_FOLDER

    def array_path(root: Any, k: Any) -> Any:
        return os.path.join(root, f"d{k // PER_FOLDER:05d}", f"a{k:07d}.b2nd")

    if (
        marker
        and marker.get("version") == TREE_VERSION
        and marker.get("arrays") == n
        and marker.get("per_folder") == PER_FOLDER
        and os.path.isdir(tdir)
        and len(os.listdir(tdir)) == nfolders
        and os.path.exists(array_path(tdir, n - 1))
    ):
        print(f"tree: reusing {tdir} ({n} arrays, {nfolders} folders, made {marker.get('created')})", flush=True)
        return marker | {"dir": tdir, "reused": True}

    templates = ensure_templates(args)["templates"]
    sizes = [templates[t]["file_bytes"] for t in TEMPLATES]
    need = n * (sum((s + 4095) // 4096 * 4096 for s in sizes) // len(sizes) + 4096) + 64 * nfolders * 4096
    free = shutil.disk_usage(args.workdir).free
    df = subprocess.run(["df", "-h", args.workdir], capture_output=True, text=True).stdout.strip().splitlines()
    print(f"tree: df {args.workdir}: {df[-1] if df else '?'}", flush=True)
    if free < 2 * need + (1 << 30):
        raise BenchError(
            f"tree-{n}: {free / MIB:.0f} MiB free in {args.workdir}, need about "
            f"{2 * need / MIB:.0f} MiB (the tree and its squashfs image)"
        )
    tmp = tdir + ".tmp"
    for d in (tmp, tdir):
        if os.path.exists(d):
            shutil.rmtree(d)
    if os.path.exists(marker_path):
        os.unlink(marker_path)
    print(f"tree: copying {n} arrays into {nfolders} folders of {PER_FOLDER} in {tdir} ...", flush=True)
    t0 = time.perf_counter()
    total = 0
    for k in range(n):
        if k % PER_FOLDER == 0:
            os.makedirs(os.path.dirname(array_path(tmp, k)))
        t = TEMPLATES[k % len(TEMPLATES)]
        shutil.copyfile(templates[t]["path"], array_path(tmp, k))  # a real copy
        total += templates[t]["file_bytes"]
    os.sync()
    os.rename(tmp, tdir)
    seconds = time.perf_counter() - t0
    marker = {
        "version": TREE_VERSION,
        "arrays": n,
        "per_folder": PER_FOLDER,
        "folders": nfolders,
        "bytes": total,
        "templates": {t: {k: v for k, v in templates[t].items() if k != "path"} for t in TEMPLATES},
        "copy": "shutil.copyfile (real copies)",
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "copy_seconds": seconds,
    }
    _write_json(marker_path, marker)
    print(f"tree: {n} arrays ({total / MIB:.0f} MiB) copied in {seconds:.1f} s", flush=True)
    return marker | {"dir": tdir, "reused": False}


# ---------------------------------------------------------------- mounts under a descriptor limit


def _ulimited(cmd: list[str], nofile: int) -> list[str]:
    # `ulimit -n` sets the soft and the hard limit: the daemon cannot raise it again.
    return ["bash", "-c", f"ulimit -n {int(nofile)} && exec {shlex.join(cmd)}"]


class TreeMount(ForegroundDaemon):
    """blosc2fs mount -f of a tree under `ulimit -n`; always cleaned up."""

    system = "blosc2fs"

    def __init__(self, args: Any, source: str) -> None:
        self.binary, self.source, self.mnt, self.log_path = args.binary, source, args.tree_mnt, args.tree_log
        self.cmd = _ulimited(
            [args.binary, "mount", "-f", "--cache-size", args.tree_cache_size]
            + shlex.split(args.mount_args)
            + [source, args.tree_mnt],
            args.tree_nofile,
        )
        self.proc = None

    def __enter__(self) -> TreeMount:
        cleanup_mountpoint(self.mnt, self.binary)
        self.start(self.cmd, f"tree: {' '.join(self.cmd)}")
        return self

    def unmount(self) -> None:
        subprocess.run([self.binary, "unmount", self.mnt], capture_output=True, timeout=30)


class TreePeerMount(ForegroundDaemon):
    """squashfuse_ll -f IMAGE MNT under the same `ulimit -n`; always cleaned up."""

    system = "squashfuse_ll"

    def __init__(self, args: Any, squashfuse: str, image: str) -> None:
        self.mnt, self.log_path, self.image = args.tree_peer_mnt, args.tree_log, image
        self.cmd = _ulimited([squashfuse, "-f", image, self.mnt], args.tree_nofile)
        self.proc = None

    def __enter__(self) -> TreePeerMount:
        cleanup_mountpoint(self.mnt)
        self.start(self.cmd, f"tree: {' '.join(self.cmd)}")
        return self

    def unmount(self) -> None:
        unmount_fuse(self.mnt)


def proc_status(pid: int | None) -> dict[str, Any]:
    """VmHWM / VmRSS (MiB), threads and open descriptors of a process; {"alive": False} once gone."""
    if pid is None:
        return {"alive": False}
    out: Json = {"alive": True}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, val = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    out[key] = int(val.split()[0]) / 1024.0
                elif key == "Threads":
                    out["threads"] = int(val)
                elif key == "State":
                    out["state"] = val.strip()
        out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, ValueError):
        return {"alive": False}
    if out.get("state", "").startswith("Z"):
        out["alive"] = False
    return out


def run_guarded(script: str, argv: list[str], timeout: float, daemon: Any = None) -> dict[str, Any]:
    """`bash -o pipefail -c SCRIPT _ ARGV...` in its own process group, stdout captured (small),
    stderr to a file. Never hangs: on timeout the group is killed, and when it does not die (a
    reader blocked on a FUSE answer), the daemon is killed too."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(
            ["bash", "-o", "pipefail", "-c", script, "_"] + argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,
            env=dict(os.environ, LC_ALL="C"),
        )
        timed_out = daemon_killed = False
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                out, _ = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                if daemon is not None and daemon.proc is not None:
                    daemon.proc.kill()
                    daemon_killed = True
                out, _ = p.communicate(timeout=60)
        seconds = time.perf_counter() - t0
        err.seek(0)
        lines = [x for x in err.read().decode("utf-8", "replace").splitlines() if x.strip()]
    # `.stats` is rendered at each read, so a reader that stats it, then reads it (mksquashfs)
    # sees its size change: not an error of the mount.
    benign = [x for x in lines if "/.stats changed size" in x]
    errors = len(lines) - len(benign) + (1 if timed_out else 0)
    if p.returncode != 0 and not lines and not timed_out:
        errors += 1  # failed without saying why
    samples = lines[:3] + (["..."] + lines[-2:] if len(lines) > 5 else lines[3:])
    return {
        "seconds": seconds,
        "exit": p.returncode,
        "stdout": out.decode("utf-8", "replace").strip(),
        "errors": errors,
        "stderr_lines": len(lines),
        "samples": samples,
        "timed_out": timed_out,
        "daemon_killed": daemon_killed,
    }


# ---------------------------------------------------------------- the measurements


def _int(text: Any) -> Any:
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


class TreeBench:
    def __init__(self, args: Any) -> None:
        self.args = args
        self.t_start = time.monotonic()
        self.timeout = args.tree_timeout

    def log(self, text: str) -> None:
        print(f"  [{time.monotonic() - self.t_start:5.0f} s] {text}", flush=True)

    def step(self, m: Any, label: str, script: str, argv: list[str], timeout: float) -> dict[str, Any]:
        r = run_guarded(script, argv, timeout, daemon=m)
        r["after"] = proc_status(m.pid if m.proc else None)
        r["label"] = label
        a = r["after"]
        extra = ""
        if label in ("find", "root"):
            extra = f", {r['stdout'] or '?'} entries"
        elif label == "read-all" and _int(r["stdout"]) is not None:
            extra = f", {_int(r['stdout']) / MIB:.0f} MiB read"
        self.log(
            f"{m.system} {label}: {r['seconds']:.2f} s{extra}, exit {r['exit']}, {r['errors']} errors"
            + (" (TIMED OUT)" if r["timed_out"] else "")
            + (" (daemon killed)" if r["daemon_killed"] else "")
            + (
                f"; VmHWM {a['VmHWM']:.1f} MiB, VmRSS {a['VmRSS']:.1f} MiB, fds {a['fds']}"
                if a.get("alive")
                else "; daemon gone"
            )
        )
        for line in r["samples"][:3]:
            self.log(f"    stderr: {line[:200]}")
        return r

    def read_stats(self, m: Any) -> dict[str, Any]:
        if not m.proc or m.proc.poll() is not None:
            return {"error": "daemon gone"}
        r = run_guarded('cat "$1"/.stats', [m.mnt], 30, daemon=m)
        if r["exit"] != 0:
            return {"error": "; ".join(r["samples"]) or f"exit {r['exit']}"}
        try:
            stats: Json = json.loads(r["stdout"])
            return stats
        except ValueError as e:
            return {"error": f"unreadable .stats: {e}: {r['stdout'][:200]!r}"}

    def session(self, make: Any, steps: list[tuple[Any, ...]], stats: bool) -> dict[str, Any]:
        """One fresh mount: the root listed, then `steps` ((label, script, extra argv, timeout);
        the script sees MNT as "$1", the extra argv after it), each skipped once a step timed out
        or the daemon is gone; the mount's .stats at the end when `stats`."""
        out: Json = {"steps": {}}
        try:
            with make() as m:
                out["started"] = proc_status(m.pid)
                out["steps"]["root"] = self.step(m, "root", 'ls -1 "$1" | wc -l', [m.mnt], self.timeout)
                for label, script, extra, timeout in steps:
                    prev = list(out["steps"].values())[-1]
                    if prev.get("skipped") or prev["timed_out"] or not prev["after"].get("alive"):
                        why = prev.get("skipped") or f"after {prev['label']}: " + (
                            "timed out" if prev["timed_out"] else "daemon gone"
                        )
                        out["steps"][label] = {"skipped": why, "label": label}
                        self.log(f"{m.system} {label}: skipped ({why})")
                        continue
                    out["steps"][label] = self.step(m, label, script, [m.mnt] + extra, timeout)
                out["end"] = proc_status(m.pid if m.proc else None)
                if stats:
                    out["stats"] = self.read_stats(m)
        except BenchError as e:
            out["error"] = str(e)
            self.log(f"ERROR {e}")
        return out

    def warm_source(self, tree: dict[str, Any]) -> None:
        r = run_guarded('find "$1" -type f -print0 | xargs -0 cat > /dev/null', [tree["dir"]], self.timeout)
        self.log(f"source tree read once into the page cache (untimed): {r['seconds']:.1f} s, {r['errors']} errors")

    def measure(self, make: Any, stats: bool) -> dict[str, Any]:
        t = self.timeout
        find = self.session(make, [("find", 'find "$1" | wc -l', [], t)], stats=stats)
        ls_read = self.session(
            make,
            [
                ("ls -lR", 'ls -lR "$1" > /dev/null', [], t),
                ("read-all", 'find "$1" -type f -print0 | xargs -0 cat | wc -c', [], t),
            ],
            stats=stats,
        )
        return {"find": find, "ls_read": ls_read}

    def blosc2fs(self, tree: dict[str, Any]) -> dict[str, Any]:
        return self.measure(lambda: TreeMount(self.args, tree["dir"]), stats=True)

    def squashfuse(self, tools: dict[str, Any], image: str) -> dict[str, Any]:
        warm_file(image)
        return self.measure(lambda: TreePeerMount(self.args, tools["squashfuse_ll"], image), stats=False)

    def image(
        self, tree: dict[str, Any], n: int, tools: dict[str, Any], estimate_from: dict[str, Any] | None
    ) -> dict[str, Any]:
        """The squashfs image of the presented tree (cached), {"skipped": why} or {"error": text}."""
        path = os.path.join(self.args.workdir, f"tree-{n}-v{IMAGE_VERSION}.sqfs")
        stamp_path = path + ".json"
        tree_id = {k: tree.get(k) for k in ("version", "arrays", "created", "bytes")}
        options = ["-noappend", "-quiet", "-no-progress"] + shlex.split(self.args.tree_mksquashfs_args)
        stamp = _read_json(stamp_path)
        if (
            stamp
            and stamp.get("version") == IMAGE_VERSION
            and stamp.get("tree") == tree_id
            and stamp.get("options") == options
            and stamp.get("mksquashfs") == tools["mksquashfs_version"]
            and stamp.get("errors") == 0
            and os.path.exists(path)
            and os.path.getsize(path) == stamp.get("image_bytes")
        ):
            self.log(
                f"squashfs image of the presented tree: reusing {path} ({stamp['image_bytes'] / MIB:.0f} MiB, "
                f"built in {stamp['seconds']:.1f} s on {stamp['built']})"
            )
            return stamp | {"path": path, "reused": True}
        if estimate_from:
            est = estimate_from["seconds"] * n / estimate_from["arrays"]
            elapsed = time.monotonic() - self.t_start
            budget = self.args.tree_budget_min * 60
            if elapsed + 1.5 * est > budget:
                why = (
                    f"mksquashfs of the {n}-array presented tree estimated at {est:.0f} s from the "
                    f"{estimate_from['arrays']}-array build ({estimate_from['seconds']:.0f} s); with the peer's "
                    f"runs it would not fit: {elapsed:.0f} s of the {budget:.0f} s budget (--tree-budget-min) used"
                )
                self.log(f"squashfuse_ll skipped for {n} arrays: {why}")
                return {"skipped": why}
        tmp = path + ".tmp"
        for p in (path, tmp, stamp_path):
            if os.path.exists(p):
                os.unlink(p)
        self.log(
            f"building {os.path.basename(path)}: mksquashfs MNT IMAGE {' '.join(options)} "
            f"from a fresh blosc2fs mount ..."
        )
        script = f'{shlex.quote(tools["mksquashfs"])} "$1" "$2" {shlex.join(options)}'
        s = self.session(
            lambda: TreeMount(self.args, tree["dir"]), [("mksquashfs", script, [tmp], 2 * self.timeout)], stats=True
        )
        r = s["steps"].get("mksquashfs") or {}
        if "error" in s or "seconds" not in r or not os.path.exists(tmp) or r.get("timed_out") or r.get("exit") != 0:
            if os.path.exists(tmp):
                os.unlink(tmp)
            why = (
                s.get("error")
                or r.get("skipped")
                or (
                    f"mksquashfs exit {r.get('exit')}{' (timed out)' if r.get('timed_out') else ''}: "
                    + " | ".join(r.get("samples", []))
                )
            )
            return {"error": why, "session": s}
        os.rename(tmp, path)
        st = os.stat(self.args.binary)
        stamp = {
            "version": IMAGE_VERSION,
            "tree": tree_id,
            "mksquashfs": tools["mksquashfs_version"],
            "options": options,
            "errors": r["errors"],
            "samples": r["samples"],
            "seconds": r["seconds"],
            "image_bytes": os.path.getsize(path),
            "built": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "binary": {"path": self.args.binary, "size": st.st_size, "mtime": st.st_mtime},
            "daemon_after": r["after"],
        }
        _write_json(stamp_path, stamp)
        self.log(
            f"image {stamp['image_bytes'] / MIB:.0f} MiB in {r['seconds']:.1f} s, {r['errors']} errors"
            + (" (kept for this run only: rebuilt next time)" if r["errors"] else "")
        )
        return stamp | {"path": path, "reused": False, "session": s}


# ---------------------------------------------------------------- summary and report


def _step(sess: dict[str, Any] | None, label: str) -> dict[str, Any]:
    return ((sess or {}).get("steps") or {}).get(label) or {}


def summarize_system(res: dict[str, Any] | None, n: int) -> dict[str, Any] | None:
    """One table row's figures from measure()'s result."""
    if not res:
        return None
    find, lr = res.get("find") or {}, res.get("ls_read") or {}
    f, ls, rd, root = _step(find, "find"), _step(lr, "ls -lR"), _step(lr, "read-all"), _step(lr, "root")
    snaps = [x.get("after") or {} for s in (find, lr) for x in (s.get("steps") or {}).values()]
    snaps += [s.get("end") or {} for s in (find, lr)]
    hwms = [x["VmHWM"] for x in snaps if x.get("VmHWM") is not None]
    base, after = root.get("after") or {}, rd.get("after") or {}

    def per_array(key: Any) -> Any:
        if base.get(key) is None or after.get(key) is None:
            return None
        return (after[key] - base[key]) * MIB / n

    def errs(x: Any) -> Any:
        if not x:
            return None
        return "skip" if x.get("skipped") else x.get("errors")

    stats: Json = lr["stats"] if isinstance(lr.get("stats"), dict) else {}
    cache_mib = stats["cache_bytes"] / MIB if isinstance(stats.get("cache_bytes"), (int, float)) else None
    per_hwm, per_rss = per_array("VmHWM"), per_array("VmRSS")
    errors = [errs(x) for x in (f, ls, rd)]
    session_errors = [s["error"] for s in (find, lr) if s.get("error")]
    return {
        "entries": _int(f.get("stdout")),
        "find_s": f.get("seconds"),
        "ls_s": ls.get("seconds"),
        "read_s": rd.get("seconds"),
        "read_bytes": _int(rd.get("stdout")),
        "errors": errors,
        "any_error": bool(session_errors) or any(e not in (0, None) for e in errors),
        "timed_out": any(x.get("timed_out") for x in (f, ls, rd)),
        "session_errors": session_errors,
        "peak_rss_mib": max(hwms) if hwms else None,
        "rss_now_mib": (lr.get("end") or {}).get("VmRSS"),
        "fds": [(x.get("after") or {}).get("fds") for x in (f, ls, rd)],
        "base_hwm_mib": base.get("VmHWM"),
        "base_rss_mib": base.get("VmRSS"),
        "per_array_hwm": per_hwm,
        "per_array_rss": per_rss,
        "cache_mib": cache_mib,
        # the same without the decoded-block cache's bytes at the end (.stats cache_bytes): the
        # cache is bounded by --cache-size, so it does not grow with the number of arrays
        "per_array_hwm_nocache": None if per_hwm is None or cache_mib is None else per_hwm - cache_mib * MIB / n,
        "per_array_rss_nocache": None if per_rss is None or cache_mib is None else per_rss - cache_mib * MIB / n,
        "stats": lr.get("stats"),
        "find_stats": find.get("stats"),
        "samples": [s for x in (f, ls, rd) for s in (x.get("samples") or [])][:4],
    }


def report(results: Json) -> str:
    """The tables, from run's results."""
    env, cfg = results["env"], results["config"]
    lines = []
    lines.append(
        f'blosc2fs tree benchmark ("data lake") — sizes {", ".join(str(s) for s in cfg["sizes"])} arrays '
        f"in folders of {PER_FOLDER}; blosc2fs --cache-size {cfg['cache_size']}"
        + (f" {cfg['mount_args']}" if cfg["mount_args"] else "")
        + f"; ulimit -n {cfg['nofile']} for both daemons; timeout {cfg['timeout']:g} s per step"
    )
    lines.append(
        f"binary {env['binary']} ({env['binary_bytes'] / MIB:.0f} MiB, modified {env['binary_mtime']}); "
        f"python-blosc2 {env.get('blosc2')}"
        + (f"; {env['squashfuse_ll_version']}; {env['mksquashfs_version']}" if env.get("mksquashfs_version") else "")
    )
    lines.append(
        f"{env['cpus']} CPUs ({env.get('cpu_model') or 'CPU model unknown'}), kernel {env['kernel']}, "
        f"load average {env['loadavg_start']:.2f} at start, {env.get('loadavg_end', 0.0):.2f} at end; "
        f"run time {env.get('seconds', 0):.0f} s"
    )
    busy = busy_warning(env)
    if busy:
        lines.append(busy)
    lines.append("")
    lines.append(
        "| arrays | system | entries (find) | find s | ls -lR s | read-all s (MiB) | errors find / ls / read "
        "| peak RSS MiB | RSS now MiB | fds after find / ls / read | bytes/array (VmHWM / VmRSS) "
        "| bytes/array without the block cache (VmHWM / VmRSS) |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for size in results["sizes"]:
        n = size["arrays"]
        for system in ("blosc2fs", "squashfuse_ll"):
            s = size["summary"].get(system)
            if s is None:
                if system == "squashfuse_ll" and size.get("peer_note"):
                    lines.append(f"| {n} | {system} | {size['peer_note'][:150]} ||||||||||")
                continue
            rb = s["read_bytes"]
            label = system
            if system == "squashfuse_ll" and (size.get("image") or {}).get("errors"):
                label += " (image of an erroring mount: partial tree)"
            lines.append(
                f"| {n} | {label} | {fmt(s['entries'], 'd')} | {fmt(s['find_s'])} | {fmt(s['ls_s'])} | "
                f"{fmt(s['read_s'])} ({fmt(None if rb is None else rb / MIB, '.0f')}) | "
                f"{' / '.join(fmt(e, 'd') if not isinstance(e, str) else e for e in s['errors'])}"
                f"{' **ERRORS**' if s['any_error'] else ''}{' TIMEOUT' if s['timed_out'] else ''} | "
                f"{fmt(s['peak_rss_mib'], '.1f')} | {fmt(s['rss_now_mib'], '.1f')} | "
                f"{' / '.join(fmt(x, 'd') for x in s['fds'])} | "
                f"{fmt(s['per_array_hwm'], '.0f')} / {fmt(s['per_array_rss'], '.0f')} | "
                f"{fmt(s['per_array_hwm_nocache'], '.0f')} / {fmt(s['per_array_rss_nocache'], '.0f')} |"
            )
    lines.append("")
    lines.append(
        "find: `find MNT | wc -l` on a fresh mount; ls -lR: `ls -lR MNT > /dev/null` on another fresh mount; "
        "read-all: `find MNT -type f -print0 | xargs -0 cat | wc -c` right after it, same mount; errors = "
        "stderr lines (+1 for a timeout); peak RSS = the daemon's VmHWM at the end; bytes/array = (after "
        "read-all − after the root listing of that mount) / arrays; without the block cache: the same less "
        "the decoded-block cache's bytes at the end (.stats cache_bytes, bounded by --cache-size)"
    )
    for size in results["sizes"]:
        n, img = size["arrays"], size.get("image")
        if img is None:
            continue
        if "skipped" in img:
            lines.append(f"- {n}: squashfs image skipped: {img['skipped']}")
        elif "error" in img:
            lines.append(f"- {n}: squashfs image FAILED: {img['error'][:300]}")
        else:
            da = img.get("daemon_after") or {}
            lines.append(
                f"- {n}: `mksquashfs MNT IMAGE {' '.join(img.get('options', []))}` of the presented tree "
                f"from a fresh blosc2fs mount: {img['seconds']:.1f} s"
                + (f" (cached, built {img['built']})" if img.get("reused") else "")
                + f", image {img['image_bytes'] / MIB:.0f} MiB, {img['errors']} stderr lines"
                + (f" ({' | '.join(img.get('samples', [])[:2])[:200]})" if img["errors"] else "")
                + (f"; daemon VmHWM {da['VmHWM']:.1f} MiB, fds {da['fds']}" if da.get("alive") else "")
            )
    # errors seen
    for size in results["sizes"]:
        for system, s in size["summary"].items():
            if s and (s["any_error"] or s["session_errors"]):
                lines.append(
                    f"- {size['arrays']} {system}: errors"
                    + (" (a step timed out)" if s["timed_out"] else "")
                    + (
                        ", e.g. " + " | ".join(x[:160] for x in (s["session_errors"] + s["samples"])[:3])
                        if s["session_errors"] or s["samples"]
                        else ""
                    )
                )
    # extrapolation to 1e6 arrays
    lines.append("")
    cfg_cache_mib = parse_size(cfg["cache_size"]) / MIB
    for system in ("blosc2fs", "squashfuse_ll"):
        rows = [
            (size["arrays"], size["summary"].get(system)) for size in results["sizes"] if size["summary"].get(system)
        ]
        if not rows:
            continue
        clean = [(n, s) for n, s in rows if not s["any_error"]]
        n, s = (clean or rows)[-1]
        if s["per_array_hwm"] is None or s["base_hwm_mib"] is None:
            lines.append(f"1,000,000 arrays, {system}: no per-array figure (the {n} run did not finish its read-all)")
            continue
        per = s["per_array_hwm"]
        rss = s["base_hwm_mib"] + per * 1e6 / MIB
        rss2 = (s["base_rss_mib"] or 0) + (s["per_array_rss"] or 0) * 1e6 / MIB

        def lin(x: Any) -> Any:
            return None if x is None else x / n * 1e6

        nc = ""
        if s.get("per_array_hwm_nocache") is not None:
            budget = cfg_cache_mib
            nc = (
                f"; counting the block cache once (--cache-size {budget:.0f} MiB): "
                f"{s['base_hwm_mib']:.1f} + {budget:.0f} MiB + {s['per_array_hwm_nocache']:.0f} B × 1e6 = "
                f"{s['base_hwm_mib'] + budget + s['per_array_hwm_nocache'] * 1e6 / MIB:.0f} MiB"
            )
        lines.append(
            f"1,000,000 arrays, {system} (linear from the {n}-array tree"
            + (", WHICH HAD ERRORS: not meaningful" if s["any_error"] else "")
            + "): "
            f"VmHWM ≈ {s['base_hwm_mib']:.1f} MiB + {per:.0f} B × 1e6 = {rss:.0f} MiB "
            f"(VmRSS ≈ {rss2:.0f} MiB){nc}; find ≈ {fmt(lin(s['find_s']), '.0f')} s, "
            f"ls -lR ≈ {fmt(lin(s['ls_s']), '.0f')} s, read-all ≈ {fmt(lin(s['read_s']), '.0f')} s"
        )
        # With two sizes, the budgets (block cache, metadata cache) are filled at both: what
        # grows from one to the other is the part that grows with the tree.
        measured = [(m, x) for m, x in clean if x["per_array_hwm"] is not None and x["base_hwm_mib"] is not None]
        if len(measured) >= 2:
            (n1, s1), (n2, s2) = measured[-2], measured[-1]
            peak1 = s1["base_hwm_mib"] + s1["per_array_hwm"] * n1 / MIB
            peak2 = s2["base_hwm_mib"] + s2["per_array_hwm"] * n2 / MIB
            marginal = (peak2 - peak1) * MIB / (n2 - n1)
            lines.append(
                f"1,000,000 arrays, {system} (from the growth between {n1} and {n2} arrays: "
                f"{marginal:.0f} B per array past the budgets): VmHWM ≈ {peak2:.0f} MiB + "
                f"{marginal:.0f} B × {1e6 - n2:.0f} = {peak2 + marginal * (1e6 - n2) / MIB:.0f} MiB; "
                f"find ≈ {fmt(None if s2['find_s'] is None else s2['find_s'] / n2 * 1e6, '.0f')} s"
            )
    # .stats
    for size in results["sizes"]:
        s = size["summary"].get("blosc2fs")
        if not s:
            continue
        st = s.get("stats")
        lines.append("")
        lines.append(f"blosc2fs .stats after the read-all, {size['arrays']} arrays:")
        if not isinstance(st, dict) or "error" in st:
            lines.append("  (" + (f"unreadable: {st['error']}" if isinstance(st, dict) else "not read: no mount") + ")")
            continue
        for key in ("meta_cache", "descriptors"):
            lines.append(f"  {key}: " + (json.dumps(st[key]) if key in st else "(absent from this binary's .stats)"))
        lines.append("  " + json.dumps(st, separators=(",", ":"))[:3000])
    return "\n".join(lines)


# ---------------------------------------------------------------- main


def run(args: Any) -> int:
    """The tree scenario with bench.py's options `args`; the exit status."""
    try:
        sizes = sorted({int(x) for x in args.tree_sizes.split(",") if x.strip()})
    except ValueError:
        print(f"error: --tree-sizes {args.tree_sizes!r}: comma-separated integers expected", file=sys.stderr)
        return 2
    if not sizes or min(sizes) < 1:
        print("error: --tree-sizes must name at least one positive size", file=sys.stderr)
        return 2
    for tool in ("bash", "find", "ls", "xargs", "cat", "wc"):
        if not shutil.which(tool):
            print(f"error: `{tool}` is needed", file=sys.stderr)
            return 2
    args.tree_mnt = os.path.join(args.workdir, "mnt-tree")
    args.tree_peer_mnt = os.path.join(args.workdir, "mnt-tree-squashfs")
    args.tree_log = os.path.join(args.workdir, "tree-daemon.log")
    open(args.tree_log, "w").close()
    install_cleanup()

    st = os.stat(args.binary)
    env = host_env() | {
        "binary": args.binary,
        "binary_bytes": st.st_size,
        "binary_mtime": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.st_mtime)),
    }
    print(
        f"tree scenario: sizes {sizes}, {env['cpus']} CPUs ({env.get('cpu_model')}), load average "
        f"{env['loadavg_start']:.2f}, binary {args.binary}",
        flush=True,
    )
    tools: Json | None = None
    peer_skip: str | None = "--no-peers"
    if args.no_peers:
        pass
    else:
        tools, peer_skip = peer_tools()
        if tools:
            env["squashfuse_ll_version"] = (tools["squashfuse_ll_version"] or "?").split(" (c)")[0]
            env["mksquashfs_version"] = tools["mksquashfs_version"]
        else:
            print(f"peers: skipped: {peer_skip}", flush=True)
    results: Json = {
        "config": {
            "sizes": sizes,
            "per_folder": PER_FOLDER,
            "cache_size": args.tree_cache_size,
            "mount_args": args.mount_args,
            "nofile": args.tree_nofile,
            "timeout": args.tree_timeout,
            "budget_min": args.tree_budget_min,
            "mksquashfs_args": args.tree_mksquashfs_args,
            "workdir": args.workdir,
            "peers": tools is not None,
        },
        "env": env,
        "sizes": [],
        "errors": [],
    }
    out_path = os.path.join(args.workdir, "tree-results.json")
    t0 = time.monotonic()
    status = 0
    try:
        cleanup_mountpoint(args.tree_mnt, args.binary)
        cleanup_mountpoint(args.tree_peer_mnt)
        env |= {k: v for k, v in run_worker(args.python, {"op": "version"}).items() if k != "nthreads"}
        tb = TreeBench(args)
        estimate = None
        for n in sizes:
            print(f"tree of {n} arrays:", flush=True)
            try:
                tree = ensure_tree(args, n)
            except (BenchError, OSError, subprocess.SubprocessError) as e:
                msg = f"tree-{n}: {type(e).__name__}: {e}"
                results["errors"].append(msg)
                print(f"  ERROR {msg}", flush=True)
                status = 2
                continue
            size: Json = {"arrays": n, "tree": {k: v for k, v in tree.items() if k != "templates"}}
            results["sizes"].append(size)
            tb.warm_source(tree)
            size["blosc2fs"] = tb.blosc2fs(tree)
            if tools is None:
                size["peer_note"] = f"skipped: {peer_skip}"
            else:
                img = tb.image(tree, n, tools, estimate)
                size["image"] = {k: v for k, v in img.items() if k != "session"}
                size["image_session"] = img.get("session")
                if "path" in img:
                    if not img.get("errors"):
                        estimate = {"arrays": n, "seconds": img["seconds"]}
                    size["squashfuse_ll"] = tb.squashfuse(tools, img["path"])
                else:
                    size["peer_note"] = (
                        ("skipped: " + img["skipped"])
                        if "skipped" in img
                        else ("image failed: " + img.get("error", "?"))
                    )
            size["summary"] = {
                "blosc2fs": summarize_system(size.get("blosc2fs"), n),
                "squashfuse_ll": summarize_system(size.get("squashfuse_ll"), n),
            }
            with open(out_path, "w") as f:
                json.dump(results, f, indent=1)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        results["errors"].append(str(e))
        status = 2
    finally:
        cleanup_all()
    for size in results["sizes"]:
        size.setdefault(
            "summary",
            {
                "blosc2fs": summarize_system(size.get("blosc2fs"), size["arrays"]),
                "squashfuse_ll": summarize_system(size.get("squashfuse_ll"), size["arrays"]),
            },
        )
    env["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    env["loadavg_end"] = os.getloadavg()[0]
    env["loadavg_1_5_15_end"] = list(os.getloadavg())
    env["seconds"] = time.monotonic() - t0
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1)
    print()
    print(report(results))
    print(f"\nresults: {out_path}  daemon log: {args.tree_log}")
    return status


if __name__ == "__main__":
    sys.exit("run the tree scenario through bench.py: .venv/bin/python scripts/bench/bench.py --scenario tree ...")
