"""What every benchmark of scripts/bench/ shares: mounting, waiting for the mount, unmounting, timing.

One job: run the processes a benchmark measures and measure them the same way everywhere. A
FUSE daemon in the foreground (`ForegroundDaemon`, `Mount`): started, waited for until its
mountpoint is a mount, always unmounted and reaped (`cleanup_all`, also on SIGTERM/SIGHUP
through `install_cleanup`). Servers and other children (`spawn`, `wait_port`, `stop`). Timing
(`run_timed`, `dd`, `dd_reported`), CPU seconds from /proc (`proc_cpu_seconds`), the host's facts
(`host_env`: CPU model, kernel, load average), a run's start and end (`open_run_dir`,
`save_results`), the numpy/blosc2 side in a worker subprocess (`run_worker`), and the small
numeric and text helpers the reports use.

Standard library only: the harnesses run with any python3; what needs numpy or blosc2 runs in a
worker subprocess of the interpreter that has them.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from types import FrameType, TracebackType
from typing import IO, Any, NoReturn, Union

Json = dict[str, Any]
# What subprocess takes as a child's stdout.
Stdout = Union[int, IO[Any], None]

MIB = 1 << 20
GIB = 1 << 30
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# The entry point whose `--_worker REQUEST` runs the numpy/blosc2 side of bench.py's scenarios.
BENCH_PY = os.path.join(HERE, "bench.py")
CLK_TCK = os.sysconf("SC_CLK_TCK")


class BenchError(Exception):
    """A measurement could not be made (or gave wrong bytes)."""


# ---------------------------------------------------------------- numbers and text


def parse_size(text: str) -> int:
    """`128M`, `4GiB`, `64k`, `4096`: a byte count."""
    t = text.strip()
    for suffix in ("iB", "B"):
        if t.endswith(suffix):
            t = t[: -len(suffix)]
            break
    shift = {"k": 10, "m": 20, "g": 30, "t": 40}.get(t[-1:].lower(), 0)
    if shift:
        t = t[:-1]
    return int(t.strip()) << shift


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default method)."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = (len(s) - 1) * q / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def median(values: Iterable[float | None]) -> float | None:
    """The median of the values that are not None; None when there are none."""
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def row_median(rows: dict[str, list[Json]], key: str, field: str = "seconds") -> float:
    """The median of `field` over the runs of row `key` (the seconds, by default): the figure a
    scenario's table gives for a row measured once per repeat."""
    return float(statistics.median(r[field] for r in rows[key]))


def gbps(nbytes: float, seconds: float) -> float:
    return nbytes / seconds / 1e9


def fmt(v: object, spec: str = ".2f", unit: str = "") -> str:
    """A table cell: `v` formatted with `spec` and `unit`, "—" when missing."""
    if v is None or isinstance(v, str):
        return v or "—"
    return f"{v:{spec}}{unit}"


def tail(path: str, n: int = 2000) -> str:
    """The last `n` bytes of a log file, as text ("" when unreadable)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - n))
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


# ---------------------------------------------------------------- the host


def host_env() -> Json:
    """What every bench report names: CPUs and their model, kernel, start time, load average."""
    env: Json = {
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "loadavg_start": os.getloadavg()[0],
        "loadavg_1_5_15_start": list(os.getloadavg()),
    }
    try:
        with open("/proc/cpuinfo") as f:
            env["cpu_model"] = next((x.split(":", 1)[1].strip() for x in f if x.startswith("model name")), None)
    except OSError:
        pass
    return env


def busy_load(env: Json) -> float | None:
    """The run's highest 1-min load average (at its start or end) when above half the CPUs, else
    None: every report warns that a busy machine's wall-clock numbers are noisy."""
    load: float = max(env["loadavg_start"], env.get("loadavg_end", 0.0))
    return load if load > 0.5 * (env["cpus"] or 1) else None


def busy_warning(env: Json) -> str | None:
    """The report's warning line when the machine was busy (busy_load), else None."""
    load = busy_load(env)
    if load is None:
        return None
    return f"WARNING: the machine was busy (1-min load average up to {load:.1f} on {env['cpus']} CPUs): wall-clock numbers are noisy"


_drop_warned = False


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


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads) from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    fields = text[text.rindex(")") + 2 :].split()  # fields[0] is field 3 (state)
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def try_proc_cpu_seconds(pid: int) -> float | None:
    """`proc_cpu_seconds`, None when the process is gone or /proc unreadable."""
    try:
        return proc_cpu_seconds(pid)
    except (OSError, IndexError, ValueError):
        return None


def vm_hwm_mib(pid: int) -> float | None:
    """A process's peak resident set (VmHWM) in MiB, None when unreadable."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


# ---------------------------------------------------------------- timing


def run_timed(cmd: list[str], stdout: Stdout = subprocess.DEVNULL, env: dict[str, str] | None = None) -> Json:
    """Run `cmd`; wall seconds (spawn to reap), the child's CPU seconds and peak RSS (os.wait4 rusage)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=err, env=env or dict(os.environ, LC_ALL="C")
        )
        _, status, ru = os.wait4(p.pid, 0)
        t1 = time.perf_counter()
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    if p.returncode != 0:
        raise BenchError(f"`{' '.join(cmd)}` failed (exit {p.returncode}): {stderr.strip()[-1500:]}")
    return {
        "start": t0,
        "end": t1,
        "seconds": t1 - t0,
        "cpu": ru.ru_utime + ru.ru_stime,
        "maxrss_mib": ru.ru_maxrss / 1024.0,
        "stderr": stderr,
    }


def dd(path: str, expect: int, skip: int = 0, count: int | None = None) -> Json:
    """`dd if=path of=/dev/null bs=1M` (a byte range with skip/count), timed; checks the byte count."""
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


DD_RE = re.compile(r"^(\d+) bytes .*copied, ([0-9.e+-]+) s", re.M)


def dd_reported(path: str) -> tuple[int, float]:
    """`dd if=path of=/dev/null bs=1M`: the bytes and seconds dd itself reports."""
    p = subprocess.run(["dd", f"if={path}", "of=/dev/null", "bs=1M"], capture_output=True, text=True)
    m = DD_RE.search(p.stderr)
    if p.returncode != 0 or not m:
        raise BenchError(f"dd if={path} failed (exit {p.returncode}): {p.stderr.strip()[-500:]}")
    return int(m.group(1)), float(m.group(2))


def warm_file(path: str) -> None:
    """Read a file once (untimed) so it sits in the page cache."""
    run_timed(["dd", f"if={path}", "of=/dev/null", "bs=4M"])


def stats_changes(a: Json, b: Json) -> dict[str, float]:
    """The numeric counters of two MNT/.stats snapshots that changed, as b - a, by dotted key
    (`remote.gets`, `disk_cache.hits`, ...)."""
    out: dict[str, float] = {}

    def walk(prefix: str, x: Json, y: Json) -> None:
        for k, v in y.items():
            key = f"{prefix}{k}"
            if isinstance(v, dict):
                old = x.get(k)
                walk(f"{key}.", old if isinstance(old, dict) else {}, v)
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                w = x.get(k, 0)
                if isinstance(w, (int, float)) and v != w:
                    out[key] = v - w

    walk("", a, b)
    return out


# ---------------------------------------------------------------- a run's start and end


def binary_missing(binary: str) -> bool:
    """True, the error printed, when the blosc2fs to measure is not an executable file."""
    if os.access(binary, os.X_OK):
        return False
    print(f"error: {binary} not found; run `cargo build --release` first (or pass --binary)", file=sys.stderr)
    return True


def open_run_dir(args: Any) -> None:
    """How a mounting scenario starts: args.workdir made, its mountpoint (args.mnt) and its emptied
    daemon log (args.log) named on `args`, and install_cleanup."""
    os.makedirs(args.workdir, exist_ok=True)
    args.mnt = os.path.join(args.workdir, "mnt")
    args.log = os.path.join(args.workdir, "daemon.log")
    open(args.log, "w").close()
    install_cleanup()


def corpus_config(args: Any, corpus: Json) -> Json:
    """The keys a corpus benchmark's results.json config starts with: the corpus's size and shape,
    the repeats and the mount's cache size."""
    return {
        "size_gib": args.size_gib,
        "rows": corpus["rows"],
        "cols": corpus["cols"],
        "nbytes": corpus["nbytes"],
        "repeats": args.repeats,
        "cache_size": args.cache_size,
    }


def host_load(env: Json) -> str:
    """The host and its 1-min load average at the start and now, as a report's line names them."""
    return (
        f"host {env.get('cpu_model')}, {env['cpus']} CPUs, load {env['loadavg_start']:.2f} → {os.getloadavg()[0]:.2f}"
    )


def print_report(table: list[str], json_path: str, results: Json, errors: list[str]) -> int:
    """How a one-table scenario ends: the table printed, `results` written to `json_path`, each
    error printed; the exit status (2 when there were errors)."""
    print()
    print("\n".join(table))
    with open(json_path, "w") as f:
        json.dump(results, f, indent=1)
    for e in errors:
        print(f"error: {e}")
    return 2 if errors else 0


def save_results(
    results: Json, workdir: str, table: Callable[[Json], str], where: str, load_triple: bool = False
) -> None:
    """How a corpus benchmark ends: the end stamped on results["env"] (time, 1-min load average, and
    the 1/5/15-min triple with `load_triple`), WORKDIR/results.json written, then the table and a
    line naming results.json and `where` (the logs) printed."""
    results["env"]["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    results["env"]["loadavg_end"] = os.getloadavg()[0]
    if load_triple:
        results["env"]["loadavg_1_5_15_end"] = list(os.getloadavg())
    out = os.path.join(workdir, "results.json")
    with open(out, "w") as f:
        json.dump(results, f, indent=1)
    print()
    print(table(results))
    print(f"\nresults: {out}  {where}")


# ---------------------------------------------------------------- the numpy/blosc2 side


def worker_versions(*modules: Any) -> Json:
    """Worker side only (it imports blosc2 and numpy): the versions a report names, python-blosc2's,
    numpy's, each of `modules`' (by module name), python's, and blosc2's default thread count."""
    import blosc2
    import numpy as np

    versions: Json = {"blosc2": blosc2.__version__, "numpy": np.__version__}
    versions |= {m.__name__: m.__version__ for m in modules}
    return versions | {"python": sys.version.split()[0], "nthreads": blosc2.nthreads}


def run_worker(
    python: str,
    request: Json,
    script: str = BENCH_PY,
    env: dict[str, str] | None = None,
    timeout: float = 3600,
) -> Json:
    """`python SCRIPT --_worker REQUEST`: the answer, the JSON object on its last stdout line."""
    cmd = [python, script, "--_worker", json.dumps(request)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if p.returncode != 0:
        raise BenchError(f"python worker {request['op']} failed (exit {p.returncode}): {p.stderr.strip()[-2000:]}")
    try:
        answer: Json = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as e:
        raise BenchError(
            f"python worker {request['op']}: unreadable answer {p.stdout[-500:]!r} {p.stderr[-1000:]!r}"
        ) from e
    return answer


# ---------------------------------------------------------------- processes we start


_children: list[subprocess.Popen[bytes]] = []
_live_mounts: list[ForegroundDaemon] = []
_temp_files: list[str] = []  # removed by cleanup_all


def spawn(
    cmd: list[str], log_path: str, cwd: str | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start `cmd` in the background, its output appended to `log_path`; stopped by cleanup_all."""
    with open(log_path, "ab") as log:
        log.write(f"\n--- {time.strftime('%H:%M:%S')} {' '.join(cmd)}\n".encode())
        log.flush()
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=cwd, env=env)
    _children.append(p)
    return p


def stop(p: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM, then SIGKILL after 10 s; reaped."""
    if p is None:
        return
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if p in _children:
        _children.remove(p)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_port(port: int, proc: subprocess.Popen[bytes], what: str, log_path: str, seconds: float = 30) -> None:
    """Wait until 127.0.0.1:port accepts a connection; a BenchError when `proc` exits first or time runs out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError(f"{what} exited with {proc.returncode}: {tail(log_path, 1500)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise BenchError(f"{what} did not listen on 127.0.0.1:{port} within {seconds:.0f} s: {tail(log_path, 1500)}")


def register_temp_file(path: str) -> None:
    """A file cleanup_all removes (a copy in tmpfs, say)."""
    _temp_files.append(path)


def cleanup_all() -> None:
    """Remove the registered files, unmount every live mount, stop every child."""
    for path in list(_temp_files):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        _temp_files.remove(path)
    for m in list(_live_mounts):
        try:
            m.close()
        except Exception as e:  # keep going: every mount must go
            print(f"warning: cleaning up {m.mnt}: {e}", file=sys.stderr)
    for p in list(_children):
        stop(p)


class Attempts:
    """Run measurements that may fail: a failure (a BenchError, an OSError, a failed
    subprocess, and the `also` kinds) is printed, added once to `errors`, and answered None, so
    the run goes on and reports it."""

    def __init__(self, errors: list[str], also: tuple[type[Exception], ...] = ()):
        self.errors = errors
        self.catch: tuple[type[Exception], ...] = (OSError, subprocess.SubprocessError, *also)

    def __call__(self, label: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except BenchError as e:
            msg = f"{label}: {e}"
        except self.catch as e:
            msg = f"{label}: {type(e).__name__}: {e}"
        if msg not in self.errors:
            self.errors.append(msg)
        print(f"  ERROR {msg}", flush=True)
        return None


def run_main(main: Callable[[], int]) -> NoReturn:
    """Exit with `main()`'s status; on Ctrl-C (or SIGTERM/SIGHUP after install_cleanup) clean up
    every mount and child first, and exit 130."""
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        cleanup_all()
        print("interrupted", file=sys.stderr)
        sys.exit(130)


def on_signal(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def install_cleanup() -> None:
    """SIGTERM and SIGHUP end the run as Ctrl-C does; cleanup_all runs at exit."""
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    atexit.register(cleanup_all)


# ---------------------------------------------------------------- mounts


def is_dead_mount(path: str) -> bool:
    """A FUSE mount whose daemon is gone (stat says ENOTCONN or ECONNABORTED)."""
    try:
        os.stat(path)
        return False
    except OSError as e:
        return e.errno in (107, 103)  # ENOTCONN, ECONNABORTED
    except Exception:
        return False


def mounted(path: str) -> bool:
    """Something is mounted at `path`, live or dead."""
    return os.path.ismount(path) or is_dead_mount(path)


def unmount_fuse(mnt: str) -> None:
    """`umount MNT`, else `fusermount3 -u MNT` (or fusermount), whichever works first."""
    for cmd in (["umount", mnt], ["fusermount3", "-u", mnt], ["fusermount", "-u", mnt]):
        if not mounted(mnt):
            return
        if shutil.which(cmd[0]):
            subprocess.run(cmd, capture_output=True, timeout=30)


def cleanup_mountpoint(mnt: str, binary: str | None = None) -> None:
    """Remove a mount (live or dead) left at `mnt` by an earlier run: `BINARY unmount MNT` for a
    blosc2fs mount (`binary` given), else umount or fusermount3; then `umount -l`."""
    if mounted(mnt):
        if binary is not None:
            subprocess.run([binary, "unmount", mnt], capture_output=True, timeout=30)
        else:
            unmount_fuse(mnt)
        if mounted(mnt):
            subprocess.run(["umount", "-l", mnt], capture_output=True, timeout=30)
        if mounted(mnt):
            raise BenchError(f"cannot remove the mount left at {mnt}")


def read_ahead_kb(mnt: str) -> int | None:
    """The mount's readahead in KiB (its bdi's read_ahead_kb), None when unreadable."""
    try:
        dev = os.stat(mnt).st_dev
        with open(f"/sys/class/bdi/{os.major(dev)}:{os.minor(dev)}/read_ahead_kb") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


class ForegroundDaemon:
    """A FUSE daemon run in the foreground as our child (its PID is the daemon's), mounted at
    self.mnt: started by `start`, which waits for the mount, always cleaned up by `close`. A
    subclass says how to unmount (`unmount`) and what `__enter__` starts."""

    mnt: str
    log_path: str
    proc: subprocess.Popen[bytes] | None = None

    def start(self, cmd: list[str], what: str, env: dict[str, str] | None = None, timeout: float = 20) -> None:
        """Run `cmd` (logging to self.log_path under a `what` line) and wait until self.mnt is mounted."""
        os.makedirs(self.mnt, exist_ok=True)
        with open(self.log_path, "ab") as log:
            log.write(f"\n--- {time.strftime('%H:%M:%S')} {what}\n".encode())
            log.flush()
            self.proc = proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
        _live_mounts.append(self)
        try:
            deadline = time.monotonic() + timeout
            while not os.path.ismount(self.mnt):
                if proc.poll() is not None:
                    raise BenchError(
                        f"`{' '.join(cmd)}` exited with {proc.returncode} before mounting: {tail(self.log_path, 1500)}"
                    )
                if time.monotonic() > deadline:
                    raise BenchError(
                        f"`{' '.join(cmd)}` did not mount within {timeout:g} s: {tail(self.log_path, 1500)}"
                    )
                time.sleep(0.02)
        except BaseException:
            self.close()
            raise

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def cpu(self) -> float:
        """The daemon's CPU seconds so far (all its threads)."""
        return proc_cpu_seconds(self.pid)

    def charged(self, measure: Callable[[], Json]) -> Json:
        """`measure()`'s answer with the daemon's CPU seconds during it added (daemon_cpu): what
        the daemon spent serving what was measured."""
        cpu0 = self.cpu()
        answer = measure()
        answer["daemon_cpu"] = self.cpu() - cpu0
        return answer

    def vm_hwm_mib(self) -> float | None:
        return vm_hwm_mib(self.pid)

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
                proc.terminate()  # blosc2fs and squashfuse_ll both unmount on SIGTERM
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
            if mounted(self.mnt):
                subprocess.run(["umount", "-l", self.mnt], capture_output=True, timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            self.proc = None
            if self in _live_mounts:
                _live_mounts.remove(self)


class Mount(ForegroundDaemon):
    """`blosc2fs mount SOURCE MNT -f --cache-size N [extra]` in the background, with its own
    environment; started by `with`, always unmounted (`blosc2fs unmount`) and reaped."""

    def __init__(
        self,
        binary: str,
        source: str,
        mnt: str,
        log_path: str,
        cache_size: str,
        extra: Sequence[str] = (),
        env: dict[str, str] | None = None,
        timeout: float = 20,
    ) -> None:
        self.binary, self.source, self.mnt, self.log_path = binary, source, mnt, log_path
        self.cache_size, self.extra, self.env, self.timeout = cache_size, list(extra), env, timeout
        self.proc = None

    @classmethod
    def of(cls, args: Any, source: str, cache_size: str | None = None, extra: Sequence[str] = ()) -> Mount:
        """The mount bench.py's options describe (--binary, the workdir's mnt and log, --mount-args)."""
        return cls(
            args.binary,
            source,
            args.mnt,
            args.log,
            cache_size or args.cache_size,
            shlex.split(args.mount_args) + list(extra),
        )

    def __enter__(self) -> Mount:
        cleanup_mountpoint(self.mnt, self.binary)
        cmd = [self.binary, "mount", self.source, self.mnt, "-f", "--cache-size", self.cache_size, *self.extra]
        self.start(cmd, f"mount {self.source} {self.mnt}", env=self.env, timeout=self.timeout)
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

    def stats(self) -> Json:
        """MNT/.stats, read in one go."""
        with open(os.path.join(self.mnt, ".stats"), "rb", buffering=0) as f:
            stats: Json = json.loads(f.read())
            return stats

    def try_stats(self) -> Json | None:
        """`stats`, None when unreadable."""
        try:
            return self.stats()
        except (OSError, ValueError):
            return None

    def unmount(self) -> None:
        subprocess.run([self.binary, "unmount", self.mnt], capture_output=True, timeout=30)
