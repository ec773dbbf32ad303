#!/usr/bin/env python3
"""Remote benchmark of blosc2fs beside python-blosc2's own remote reading (issue 13, point 4).

One command, one table, WORKDIR/results.json:

    cargo build --release -j2 && cargo build --release -j2 --example delay_proxy
    python3 scripts/bench_remote.py [--workdir /tmp/blosc2fs-rbench] [--repeats 3] [--delay-ms 20]
                                    [--mode auto|mount|cat] [--protocols http,s3] [--files zstd,lz4]
                                    [--cache-size 128M] [--python INTERPRETER] [--strict]

What it sets up (all on 127.0.0.1, all children of this process, all stopped at exit):

- corpus: bench.py's 1 GiB perf field (its ensure_corpus, imported, as are its small
  helpers: sizes, percentiles, mount cleanup): zstd.b2nd and lz4.b2nd (8 MiB chunks,
  128 KiB blocks) plus raw.bin, the expected bytes;
- nginx (`apt-get install -y nginx` when missing) in the foreground with a config written
  into WORKDIR/nginx, serving the corpus directory (Range, keep-alive, sendfile);
- an S3 API server (--s3-server), seeded through the S3 API (so it stores each ETag once):
  s3s-fs (default), a native one from crates.io (`cargo install s3s-fs --locked` into
  WORKDIR/tools when missing; the build time is reported), serving WORKDIR/s3root;
  s3rver (npm, Node; installed into WORKDIR/tools/node when missing); or `nginx`, which
  answers path-style GET/HEAD of /bench/KEY itself (signatures unchecked, no LIST, so
  blosc2fs mounts the object's URL): the clients' S3 code paths without a server cap.
  Measured here: s3s-fs streams bodies in 4 KiB reads and tops out near 0.08 GB/s per
  connection (0.2 with 4), s3rver near 0.3 (0.45), nginx > 1: the "server check" line
  of the report says which cap applied;
- examples/delay_proxy (built when missing): holds every request --delay-ms before
  forwarding it, in front of either server. Its no-delay throughput is measured first
  beside the direct one (parallel curl range downloads) so it is known not to be the cap.
- the python side runs in a worker subprocess of an interpreter with blosc2 4.14.1,
  fsspec, aiohttp, requests and s3fs: by default WORKDIR/pyenv, a venv made here (the
  project venv is left alone: s3fs pins a botocore the tests' boto3 does not accept).

Measured for each protocol (http, s3) x delay (0, --delay-ms) x file, A/B alternated
(blosc2fs, python-blosc2, blosc2fs, ...), median over --repeats. The servers' files stay
warm in the page cache (the server is fast; the clients are what is measured); each client
run is cold: a fresh process or a fresh mount.

    scan      blosc2fs: `blosc2fs mount URL MNT --cache-size C -f` then
              `dd if=MNT/.../data of=/dev/null bs=1M` (GB/s from dd's own bytes/seconds),
              daemon CPU seconds (utime+stime, /proc/PID/stat), daemon VmHWM, MNT/.stats;
              or, with --mode cat (or auto before mounting URLs exists),
              `blosc2fs cat URL --cache-size C > /dev/null` (wall, CPU and peak RSS from wait4)
              python-blosc2: `blosc2.open(URL)[:]` in a fresh process, GB/s
    random    blosc2fs (mount only): 200 random 4 KiB preads on a fresh mount, p50/p99
              python-blosc2: 200 random `arr[i, j]` after a cold open, p50/p99
    requests  through the delay proxy: requests and bytes per scan, each client

Targets (PASS/FAIL, per protocol x file): scan >= 1.5x python-blosc2 (no delay); random
p50 <= python-blosc2's (mount mode); blosc2fs peak RSS <= cache + 64 MiB; with the delay,
scan >= 0.5x the no-delay scan.

Credentials go to both clients through AWS_* in the environment (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL, AWS_ALLOW_HTTP), with
AWS_EC2_METADATA_DISABLED=true so neither probes instance metadata.

Exit status: 0 when it ran (targets may FAIL; --strict makes a FAIL exit 1), 2 when a
measurement could not be made (the error text is in the table and JSON).

Caterva2 (issue 26): `--protocols caterva2` runs scripts/bench_c2.py instead (blosc2fs mounting
a local cat2-server beside python-blosc2's C2Array; its docstring describes it), in
WORKDIR/caterva2 with this corpus, forwarding --repeats, --size-gib, --cache-size, --binary, --strict.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the local harness: its corpus and shared helpers)
from bench import (  # noqa: E402
    BenchError,
    _is_dead_mount,
    _on_signal,
    cleanup_mountpoint,
    gbps,
    median,
    parse_size,
    percentile,
    tail,
)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIB = 1 << 20
FILES = ("zstd", "lz4", "narrow")
RANDOM_SEED = 20240611
RANDOM_READS = 200
RANDOM_SIZE = 4096
RSS_SLACK_MIB = 64
SCAN_TARGET = 1.5
DELAY_TARGET = 0.5
BUCKET = "bench"
ACCESS_KEY = "benchkey"
SECRET_KEY = "benchsecret0123456789"
REGION = "us-east-1"
S3S_VERSION = "0.14.1"  # the newest s3s-fs that builds with the machine's rustc 1.95
S3RVER_VERSION = "3.7.1"
PY_PACKAGES = ["blosc2==4.14.1", "numpy", "fsspec", "aiohttp", "requests", "s3fs"]
PY_MODULES = ["blosc2", "numpy", "fsspec", "aiohttp", "requests", "s3fs"]
CLK_TCK = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- helpers


def fmt(v, spec=".2f", unit=""):
    if v is None or isinstance(v, str):
        return v or "—"
    return f"{v:{spec}}{unit}"


def read_through(path: str) -> None:
    """Read a file once (into the page cache)."""
    with open(path, "rb", buffering=0) as f:
        while f.read(8 * MIB):
            pass


def random_plan(nbytes: int, count: int) -> list[int]:
    """`count` random 4 KiB-aligned offsets (fixed seed)."""
    rng = random.Random(RANDOM_SEED)
    return [rng.randrange(nbytes // RANDOM_SIZE) * RANDOM_SIZE for _ in range(count)]


# ---------------------------------------------------------------- worker (python-blosc2 side)


def worker_main(req: dict) -> dict:
    import numpy as np
    import blosc2

    op = req["op"]
    if op == "version":
        import fsspec
        import s3fs
        return {"blosc2": blosc2.__version__, "numpy": np.__version__, "fsspec": fsspec.__version__,
                "s3fs": s3fs.__version__, "python": sys.version.split()[0], "nthreads": blosc2.nthreads}

    if op == "seed_s3":
        # Through the S3 API, so the server records each object's ETag at upload.
        import s3fs
        fs = s3fs.S3FileSystem()
        if not fs.exists(req["bucket"]):
            fs.mkdir(req["bucket"])
        out = {}
        for key, path in req["files"].items():
            target = f"{req['bucket']}/{key}"
            if fs.exists(target) and fs.size(target) == os.path.getsize(path):
                continue
            t0 = time.perf_counter()
            fs.put_file(path, target)
            out[key] = {"seconds": time.perf_counter() - t0, "size": fs.size(target)}
        return out

    if op == "scan":
        t0 = time.perf_counter()
        arr = blosc2.open(req["url"])
        data = arr[:]
        dt = time.perf_counter() - t0
        ru = __import__("resource").getrusage(__import__("resource").RUSAGE_SELF)
        res = {"seconds": dt, "nbytes": int(data.nbytes), "cpu_s": ru.ru_utime + ru.ru_stime,
               "maxrss_mib": ru.ru_maxrss / 1024.0}
        if req.get("raw"):
            expect = np.fromfile(req["raw"], dtype=data.dtype).reshape(data.shape)
            res["equal"] = bool(np.array_equal(data, expect))
        return res

    if op == "random":
        t0 = time.perf_counter()
        arr = blosc2.open(req["url"])
        t_open = time.perf_counter() - t0
        lat, values = [], []
        for i, j in req["coords"]:
            t0 = time.perf_counter()
            v = arr[i, j]
            lat.append(time.perf_counter() - t0)
            values.append(float(v))
        return {"latencies": lat, "values": values, "open_seconds": t_open}

    raise ValueError(f"unknown worker op {op}")


def run_worker(python: str, req: dict, env: dict | None = None, timeout: float = 1800) -> dict:
    cmd = [python, os.path.abspath(__file__), "--_worker", json.dumps(req)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if p.returncode != 0:
        raise BenchError(f"python worker {req['op']} failed (exit {p.returncode}): {p.stderr.strip()[-2000:]}")
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise BenchError(f"python worker {req['op']}: unreadable answer {p.stdout[-500:]!r} {p.stderr[-1000:]!r}")


# ---------------------------------------------------------------- processes we start


_children: list[subprocess.Popen] = []


def spawn(cmd: list[str], log_path: str, **kw) -> subprocess.Popen:
    log = open(log_path, "ab")
    log.write(f"\n--- {time.strftime('%H:%M:%S')} {' '.join(cmd)}\n".encode())
    log.flush()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, **kw)
    log.close()
    _children.append(p)
    return p


def stop(p: subprocess.Popen | None) -> None:
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


def stop_all() -> None:
    for m in list(_live_mounts):
        try:
            m.close()
        except Exception as e:  # keep going: every mount must go
            print(f"warning: cleaning up {m.mnt}: {e}", file=sys.stderr)
    for p in list(_children):
        stop(p)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, what: str, log_path: str, seconds: float = 30) -> None:
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


# ---------------------------------------------------------------- tools


def ensure_python(args) -> str:
    """The bench interpreter: --python, or WORKDIR/pyenv made here with PY_PACKAGES."""
    check = [f"import {m}" for m in PY_MODULES] + ["assert blosc2.__version__ == '4.14.1', blosc2.__version__"]
    probe = lambda py: subprocess.run([py, "-c", "; ".join(check)], capture_output=True, text=True)
    if args.python:
        p = probe(args.python)
        if p.returncode == 0:
            return args.python
        if not args.install_missing:
            raise BenchError(f"{args.python} lacks one of {PY_MODULES} (or blosc2 is not 4.14.1): "
                             f"{p.stderr.strip()[-300:]}; pass --install-missing to pip-install {PY_PACKAGES} into it")
        py = args.python
    else:
        venv = os.path.join(args.workdir, "pyenv")
        py = os.path.join(venv, "bin", "python")
        if os.access(py, os.X_OK) and probe(py).returncode == 0:
            return py
        if not os.access(py, os.X_OK):
            subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    print(f"python: installing {' '.join(PY_PACKAGES)} into {py} ...", flush=True)
    subprocess.run([py, "-m", "pip", "install", "--quiet", *PY_PACKAGES], check=True)
    p = probe(py)
    if p.returncode != 0:
        raise BenchError(f"{py}: still cannot import the python side: {p.stderr.strip()[-300:]}")
    return py


def ensure_nginx() -> str:
    exe = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if exe:
        return exe
    print("nginx: apt-get install -y nginx ...", flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    p = subprocess.run(["apt-get", "install", "-y", "nginx"], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        subprocess.run(["apt-get", "update"], capture_output=True, env=env)
        p = subprocess.run(["apt-get", "install", "-y", "nginx"], capture_output=True, text=True, env=env)
    exe = shutil.which("nginx") or "/usr/sbin/nginx"
    if p.returncode != 0 or not os.access(exe, os.X_OK):
        raise BenchError(f"cannot install nginx: {p.stderr.strip()[-500:]}")
    # Debian's package may start its own service on port 80: not ours to keep running.
    subprocess.run(["service", "nginx", "stop"], capture_output=True)
    return exe


def ensure_s3s(args) -> tuple[str, float | None]:
    """WORKDIR/tools/bin/s3s-fs (or --s3s-fs); (path, build seconds when built now)."""
    if args.s3s_fs:
        return args.s3s_fs, None
    exe = os.path.join(args.workdir, "tools", "bin", "s3s-fs")
    if os.access(exe, os.X_OK):
        return exe, None
    print(f"s3s-fs: cargo install s3s-fs --version {S3S_VERSION} --locked --features binary (a few minutes) ...",
          flush=True)
    t0 = time.perf_counter()
    p = subprocess.run(["cargo", "install", "s3s-fs", "--version", S3S_VERSION, "--locked", "--features", "binary",
                        "--root", os.path.join(args.workdir, "tools"), "-j2"], capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0 or not os.access(exe, os.X_OK):
        raise BenchError(f"cargo install s3s-fs failed: {p.stderr.strip()[-800:]}")
    print(f"s3s-fs: built in {dt:.0f} s", flush=True)
    return exe, dt


def ensure_s3rver(args) -> str:
    """WORKDIR/tools/node/node_modules/.bin/s3rver, npm-installed when missing."""
    prefix = os.path.join(args.workdir, "tools", "node")
    exe = os.path.join(prefix, "node_modules", ".bin", "s3rver")
    if os.access(exe, os.X_OK):
        return exe
    os.makedirs(prefix, exist_ok=True)
    print(f"s3rver: npm install s3rver@{S3RVER_VERSION} ...", flush=True)
    p = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", prefix, f"s3rver@{S3RVER_VERSION}"],
                       capture_output=True, text=True)
    if p.returncode != 0 or not os.access(exe, os.X_OK):
        raise BenchError(f"npm install s3rver failed: {p.stderr.strip()[-800:]}")
    return exe


def ensure_proxy(args) -> str:
    exe = args.proxy or os.path.join(REPO, "target", "release", "examples", "delay_proxy")
    if os.access(exe, os.X_OK):
        return exe
    print("delay_proxy: cargo build --release -j2 --example delay_proxy ...", flush=True)
    p = subprocess.run(["cargo", "build", "--release", "-j2", "--example", "delay_proxy"], cwd=REPO,
                       capture_output=True, text=True)
    if p.returncode != 0 or not os.access(exe, os.X_OK):
        raise BenchError(f"building examples/delay_proxy failed: {p.stderr.strip()[-800:]}")
    return exe


# ---------------------------------------------------------------- servers


class Nginx:
    """nginx in the foreground serving `root` (and, with `s3_dir`, path-style /BUCKET/KEY from s3_dir/BUCKET)."""

    creds = (ACCESS_KEY, SECRET_KEY)  # sent by the S3 clients, never checked

    def __init__(self, exe: str, root: str, workdir: str, s3_dir: str | None = None):
        self.dir = os.path.join(workdir, "nginx")
        os.makedirs(os.path.join(self.dir, "tmp"), exist_ok=True)
        self.port = free_port()
        self.log = os.path.join(self.dir, "nginx.log")
        user = "user root root;\n" if os.geteuid() == 0 else ""
        t = os.path.join(self.dir, "tmp")
        conf = f"""# written by scripts/bench_remote.py
daemon off;
{user}worker_processes 2;
pid {self.dir}/nginx.pid;
error_log {self.log} warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    client_body_temp_path {t}/body;
    proxy_temp_path {t}/proxy;
    fastcgi_temp_path {t}/fastcgi;
    uwsgi_temp_path {t}/uwsgi;
    scgi_temp_path {t}/scgi;
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{self.port};
        root {root};
        location / {{ autoindex on; }}
        {f"location /{BUCKET}/ {{ root {s3_dir}; }}" if s3_dir else ""}
    }}
}}
"""
        self.conf = os.path.join(self.dir, "nginx.conf")
        with open(self.conf, "w") as f:
            f.write(conf)
        self.proc = spawn([exe, "-p", self.dir, "-c", self.conf], self.log)
        wait_port(self.port, self.proc, "nginx", self.log)


class S3sFs:
    """s3s-fs serving WORKDIR/s3root (buckets are its folders)."""

    creds = (ACCESS_KEY, SECRET_KEY)

    def __init__(self, exe: str, workdir: str):
        self.root = os.path.join(workdir, "s3root")
        os.makedirs(self.root, exist_ok=True)
        self.port = free_port()
        self.log = os.path.join(workdir, "s3s-fs.log")
        self.proc = spawn([exe, "--host", "127.0.0.1", "--port", str(self.port), "--access-key", ACCESS_KEY,
                           "--secret-key", SECRET_KEY, self.root], self.log, env=dict(os.environ, RUST_LOG="warn"))
        wait_port(self.port, self.proc, "s3s-fs", self.log)


class S3rver:
    """s3rver (npm; Node) with its data in WORKDIR/s3rver-data; its fixed key pair is S3RVER/S3RVER."""

    creds = ("S3RVER", "S3RVER")

    def __init__(self, exe: str, workdir: str):
        self.root = os.path.join(workdir, "s3rver-data")
        os.makedirs(self.root, exist_ok=True)
        self.port = free_port()
        self.log = os.path.join(workdir, "s3rver.log")
        self.proc = spawn([exe, "-d", self.root, "-a", "127.0.0.1", "-p", str(self.port), "-s", "--no-vhost-buckets",
                           "--configure-bucket", BUCKET], self.log)
        wait_port(self.port, self.proc, "s3rver", self.log)


class Proxy:
    def __init__(self, exe: str, upstream_port: int, delay_ms: int, workdir: str, tag: str):
        self.stats_file = os.path.join(workdir, f"proxy-{tag}.json")
        self.log = os.path.join(workdir, f"proxy-{tag}.log")
        self.port = free_port()
        self.proc = spawn([exe, "--listen", f"127.0.0.1:{self.port}", "--upstream", f"127.0.0.1:{upstream_port}",
                           "--delay-ms", str(delay_ms), "--threads", "2", "--stats-file", self.stats_file], self.log)
        wait_port(self.port, self.proc, "delay_proxy", self.log)

    def stats(self) -> dict:
        time.sleep(0.25)  # the proxy rewrites its file every 100 ms
        try:
            with open(self.stats_file) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {"connections": 0, "requests": 0, "bytes_up": 0, "bytes_down": 0}


def s3_env(endpoint_port: int, creds: tuple[str, str]) -> dict:
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("AWS_"):
            del env[k]
    env.update({"AWS_ACCESS_KEY_ID": creds[0], "AWS_SECRET_ACCESS_KEY": creds[1], "AWS_REGION": REGION,
                "AWS_DEFAULT_REGION": REGION, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{endpoint_port}",
                "AWS_ALLOW_HTTP": "true", "AWS_EC2_METADATA_DISABLED": "true",
                "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null"})
    return env


# ---------------------------------------------------------------- endpoints


class Endpoint:
    """Where one client reads one file: the URL and the environment that goes with it."""

    def __init__(self, protocol: str, port: int, name: str, creds: tuple[str, str] = ("", ""), listable: bool = True):
        self.protocol, self.port, self.name = protocol, port, name
        if protocol == "http":
            self.url = f"http://127.0.0.1:{port}/b2/{name}.b2nd"
            self.mount_url = self.url
            self.env = dict(os.environ, AWS_EC2_METADATA_DISABLED="true")
        else:
            self.url = f"s3://{BUCKET}/{name}.b2nd"
            self.mount_url = f"s3://{BUCKET}/" if listable else self.url
            self.env = s3_env(port, creds)


# ---------------------------------------------------------------- mounts


_live_mounts: list["Mount"] = []


class Mount:
    """`blosc2fs mount SOURCE MNT -f --cache-size C` with its own environment; always unmounted."""

    def __init__(self, binary: str, source: str, mnt: str, cache_size: str, log_path: str, env: dict):
        self.binary, self.source, self.mnt, self.cache_size = binary, source, mnt, cache_size
        self.log_path, self.env = log_path, env
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Mount":
        cleanup_mountpoint(self.binary, self.mnt)
        os.makedirs(self.mnt, exist_ok=True)
        cmd = [self.binary, "mount", self.source, self.mnt, "-f", "--cache-size", self.cache_size]
        with open(self.log_path, "ab") as log:
            log.write(f"\n--- {time.strftime('%H:%M:%S')} {' '.join(cmd)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=self.env)
        _live_mounts.append(self)
        try:
            deadline = time.monotonic() + 30
            while not os.path.ismount(self.mnt):
                if self.proc.poll() is not None:
                    raise BenchError(f"`{' '.join(cmd)}` exited with {self.proc.returncode} before mounting: "
                                     f"{tail(self.log_path, 1500)}")
                if time.monotonic() > deadline:
                    raise BenchError(f"`{' '.join(cmd)}` did not mount within 30 s: {tail(self.log_path, 1500)}")
                time.sleep(0.02)
        except BaseException:
            self.close()
            raise
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stats(self) -> dict:
        with open(os.path.join(self.mnt, ".stats"), "rb", buffering=0) as f:
            return json.loads(f.read())

    def vm_hwm_mib(self) -> float | None:
        try:
            with open(f"/proc/{self.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024.0
        except OSError:
            return None
        return None

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if os.path.ismount(self.mnt) or proc.poll() is None:
                subprocess.run([self.binary, "unmount", self.mnt], capture_output=True, timeout=30)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.terminate()  # the daemon unmounts on SIGTERM
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
            if os.path.ismount(self.mnt) or _is_dead_mount(self.mnt):
                subprocess.run(["umount", "-l", self.mnt], capture_output=True, timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if self in _live_mounts:
                _live_mounts.remove(self)


# ---------------------------------------------------------------- measurements


def proc_cpu_s(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime (fields 14, 15)
    except (OSError, IndexError, ValueError):
        return None


DD_RE = re.compile(r"^(\d+) bytes .*copied, ([0-9.e+-]+) s", re.M)


def run_dd(path: str) -> tuple[int, float]:
    p = subprocess.run(["dd", f"if={path}", "of=/dev/null", "bs=1M"], capture_output=True, text=True)
    m = DD_RE.search(p.stderr)
    if p.returncode != 0 or not m:
        raise BenchError(f"dd if={path} failed (exit {p.returncode}): {p.stderr.strip()[-500:]}")
    return int(m.group(1)), float(m.group(2))


def timed_child(cmd: list[str], env: dict, stdout=subprocess.DEVNULL) -> dict:
    """Run cmd; wall seconds, CPU seconds and peak RSS from wait4."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, env=env)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise BenchError(f"`{' '.join(cmd)}` failed (exit {p.returncode}): {err.decode(errors='replace')[-1500:]}")
    return {"seconds": dt, "cpu_s": ru.ru_utime + ru.ru_stime, "maxrss_mib": ru.ru_maxrss / 1024.0}


def verify_cat(args, ep: Endpoint, raw_path: str) -> None:
    """`blosc2fs cat URL` must give raw.bin's bytes exactly (untimed)."""
    cmd = [args.binary, "cat", ep.url, "--cache-size", args.cache_size]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ep.env)
    pos = 0
    bad = None
    with open(raw_path, "rb", buffering=0) as raw:
        while True:
            x = p.stdout.read(4 * MIB)
            y = raw.read(len(x)) if x else raw.read(1)
            if x != y and bad is None:
                bad = f"differs from raw.bin at or after byte {pos} (cat gave {len(x)} B there)"
            if not x:
                break
            pos += len(x)
    err = p.stderr.read()
    p.wait()
    if p.returncode != 0:
        raise BenchError(f"`{' '.join(cmd)}` failed (exit {p.returncode}): {err.decode(errors='replace')[-1500:]}")
    if bad:
        raise BenchError(f"`blosc2fs cat {ep.url}` {bad}")


def remote_delta(a: dict, b: dict) -> dict:
    """Numeric differences of two .stats snapshots, kept to what remote reading and decoding cost."""
    out = {}

    def walk(prefix, x, y):
        for k, v in y.items():
            key = f"{prefix}{k}"
            if isinstance(v, dict):
                walk(f"{key}.", x.get(k, {}) if isinstance(x.get(k), dict) else {}, v)
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                w = x.get(k, 0)
                if isinstance(w, (int, float)) and v != w:
                    out[key] = v - w

    walk("", a, b)
    return out


class Runner:
    def __init__(self, args, corpus, python, raw_path):
        self.args, self.corpus, self.python, self.raw_path = args, corpus, python, raw_path
        self.nbytes = corpus["nbytes"]

    # -- blosc2fs

    def b2fs_scan(self, ep: Endpoint, proxy: Proxy | None) -> dict:
        p0 = proxy.stats() if proxy else None
        if self.args.mode == "mount":
            r = self.mount_scan(ep)
        else:
            r = timed_child([self.args.binary, "cat", ep.url, "--cache-size", self.args.cache_size], ep.env)
            r["gbps"] = gbps(self.nbytes, r["seconds"])
            r["how"] = "cat"
        if proxy:
            r["proxy"] = {k: v - p0.get(k, 0) for k, v in proxy.stats().items()}
        return r

    def mount_data_path(self, m: "Mount", ep: Endpoint) -> str:
        for cand in (os.path.join(m.mnt, f"{ep.name}.b2nd", "data"), os.path.join(m.mnt, "data")):
            if os.path.exists(cand):
                return cand
        raise BenchError(f"the mount of {ep.mount_url} presents neither {ep.name}.b2nd/data nor data: "
                         f"{sorted(os.listdir(m.mnt))[:20]}")

    def mount(self, ep: Endpoint) -> "Mount":
        """A fresh `blosc2fs mount URL MNT -f` with the endpoint's environment."""
        return Mount(self.args.binary, ep.mount_url, self.args.mnt, self.args.cache_size, self.args.log, ep.env).start()

    def mount_scan(self, ep: Endpoint) -> dict:
        m = self.mount(ep)
        try:
            path = self.mount_data_path(m, ep)
            size = os.stat(path).st_size
            if size != self.nbytes:
                raise BenchError(f"{path}: size {size}, expected {self.nbytes}")
            s0 = self.try_stats(m)
            c0 = proc_cpu_s(m.pid)
            n, dt = run_dd(path)
            c1 = proc_cpu_s(m.pid)
            if n != self.nbytes:
                raise BenchError(f"dd read {n} bytes of {path}, expected {self.nbytes}")
            s1 = self.try_stats(m)
            hwm = m.vm_hwm_mib()
        finally:
            m.close()
        return {"how": "mount+dd", "seconds": dt, "gbps": gbps(n, dt),
                "cpu_s": None if c0 is None or c1 is None else c1 - c0, "maxrss_mib": hwm,
                "stats": remote_delta(s0, s1) if s0 is not None and s1 is not None else None}

    @staticmethod
    def try_stats(m: "Mount") -> dict | None:
        try:
            return m.stats()
        except (OSError, ValueError):
            return None

    def mount_random(self, ep: Endpoint, offsets: list[int]) -> dict:
        m = self.mount(ep)
        try:
            path = self.mount_data_path(m, ep)
            s0 = self.try_stats(m)
            fd = os.open(path, os.O_RDONLY)
            lat, got = [], []
            try:
                for off in offsets:
                    t0 = time.perf_counter()
                    b = os.pread(fd, RANDOM_SIZE, off)
                    lat.append(time.perf_counter() - t0)
                    got.append(b)
            finally:
                os.close(fd)
            s1 = self.try_stats(m)
        finally:
            m.close()
        with open(self.raw_path, "rb") as raw:
            for off, b in zip(offsets, got):
                raw.seek(off)
                if raw.read(RANDOM_SIZE) != b:
                    raise BenchError(f"{path}: 4 KiB pread at {off} differs from raw.bin (got {len(b)} bytes)")
        return {"latencies": lat, "stats": remote_delta(s0, s1) if s0 is not None and s1 is not None else None}

    # -- python-blosc2

    def py_scan(self, ep: Endpoint, proxy: Proxy | None, verify: bool) -> dict:
        p0 = proxy.stats() if proxy else None
        req = {"op": "scan", "url": ep.url}
        if verify:
            req["raw"] = self.raw_path
        r = run_worker(self.python, req, env=ep.env)
        if verify and not r.get("equal"):
            raise BenchError(f"python-blosc2 open({ep.url})[:] differs from raw.bin")
        r["gbps"] = gbps(r["nbytes"], r["seconds"])
        if proxy:
            r["proxy"] = {k: v - p0.get(k, 0) for k, v in proxy.stats().items()}
        return r

    def py_random(self, ep: Endpoint, offsets: list[int]) -> dict:
        cols = self.corpus["cols"]
        coords = [divmod(off // 8, cols) for off in offsets]
        r = run_worker(self.python, {"op": "random", "url": ep.url, "coords": coords}, env=ep.env)
        with open(self.raw_path, "rb") as raw:
            for off, v, (i, j) in zip(offsets, r["values"], coords):
                raw.seek(off)
                (expect,) = struct.unpack("<d", raw.read(8))
                if v != expect:
                    raise BenchError(f"python-blosc2 {ep.url}[{i}, {j}] = {v}, raw.bin has {expect}")
        r.pop("values")
        return r


def server_throughput(url: str, streams: int, total: int, creds: tuple[str, str] | None) -> float:
    """GB/s of `streams` parallel curl range GETs splitting the first `total` bytes of `url`
    (SigV4-signed with `creds` for S3)."""
    part = total // streams
    procs = []
    t0 = time.perf_counter()
    for i in range(streams):
        cmd = ["curl", "-f", "-sS", "-o", "/dev/null", "-w", "%{size_download}", "-r",
               f"{i * part}-{(i + 1) * part - 1}", url]
        if creds:
            cmd[1:1] = ["--aws-sigv4", f"aws:amz:{REGION}:s3", "--user", f"{creds[0]}:{creds[1]}",
                        "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for p in procs:
        out, err = p.communicate()
        if p.returncode != 0 or out.strip() != str(part).encode():
            raise BenchError(f"curl {url}: exit {p.returncode}, {out.decode(errors='replace')!r} bytes: "
                             f"{err.decode(errors='replace')[-300:]}")
    return gbps(part * streams, time.perf_counter() - t0)


# ---------------------------------------------------------------- report


def summarize(results: dict, cache_bytes: int) -> None:
    raw = results["raw"]
    summary, targets = {}, {}
    ratio = lambda a, b: (a / b) if (a is not None and b) else None
    for col, r in raw["cells"].items():
        d = {}
        for delay in ("0", "d"):
            b, p = r[f"b2fs_scan_{delay}"], r[f"py_scan_{delay}"]
            d[f"b2fs_gbps_{delay}"] = median([x["gbps"] for x in b])
            d[f"py_gbps_{delay}"] = median([x["gbps"] for x in p])
            d[f"ratio_{delay}"] = ratio(d[f"b2fs_gbps_{delay}"], d[f"py_gbps_{delay}"])
            d[f"b2fs_cpu_{delay}"] = median([x.get("cpu_s") for x in b])
            d[f"b2fs_wall_{delay}"] = median([x.get("seconds") for x in b])
            d[f"py_cpu_{delay}"] = median([x.get("cpu_s") for x in p])
            d[f"b2fs_rss_{delay}"] = max([x["maxrss_mib"] for x in b if x.get("maxrss_mib") is not None], default=None)
            d[f"py_rss_{delay}"] = max([x["maxrss_mib"] for x in p if x.get("maxrss_mib") is not None], default=None)
            d[f"b2fs_requests_{delay}"] = median([x["proxy"]["requests"] for x in b if "proxy" in x])
            d[f"py_requests_{delay}"] = median([x["proxy"]["requests"] for x in p if "proxy" in x])
            d[f"b2fs_stats_{delay}"] = b[-1].get("stats") if b else None
        d["b2fs_delay_ratio"] = ratio(d["b2fs_gbps_d"], d["b2fs_gbps_0"])
        d["py_delay_ratio"] = ratio(d["py_gbps_d"], d["py_gbps_0"])
        mlat = [v for x in r["b2fs_random"] for v in x["latencies"]]
        plat = [v for x in r["py_random"] for v in x["latencies"]]
        d["b2fs_p50"] = percentile(mlat, 50) if mlat else None
        d["b2fs_p99"] = percentile(mlat, 99) if mlat else None
        d["py_p50"] = percentile(plat, 50) if plat else None
        d["py_p99"] = percentile(plat, 99) if plat else None
        d["py_open_s"] = median([x["open_seconds"] for x in r["py_random"]])
        d["random_ratio"] = ratio(d["b2fs_p50"], d["py_p50"])
        d["b2fs_rss"] = max([v for v in (d["b2fs_rss_0"], d["b2fs_rss_d"]) if v is not None], default=None)
        summary[col] = d

        t = {}

        def target(key, value, ok, display):
            t[key] = {"value": value, "status": "n/a" if value is None else ("PASS" if ok else "FAIL"),
                      "display": display}

        v = d["ratio_0"]
        target("scan", v, v is not None and v >= SCAN_TARGET, fmt(v, ".2f", "x"))
        v = d["random_ratio"]
        target("random", v, v is not None and v <= 1.0, fmt(v, ".2f", "x"))
        v = d["b2fs_rss"]
        limit = cache_bytes / MIB + RSS_SLACK_MIB
        target("rss", v, v is not None and v <= limit, f"{fmt(v, '.0f')}/{limit:.0f}")
        v = d["b2fs_delay_ratio"]
        target("delay", v, v is not None and v >= DELAY_TARGET, fmt(v, ".2f", "x"))
        targets[col] = t
    results["summary"] = summary
    results["targets"] = targets


def build_table(results: dict) -> str:
    s, c, env = results["summary"], results["config"], results["env"]
    cols = list(s)
    how = "mount + dd" if c["mode"] == "mount" else "`blosc2fs cat URL > /dev/null`"
    delay = c["delay_ms"]
    lines = [f"### blosc2fs remote benchmark: {c['nbytes'] / 2**30:.3g} GiB f8 field, blosc2fs via {how}, "
             f"--cache-size {c['cache_size']}, medians of {c['repeats']}",
             "",
             f"python-blosc2 {env.get('blosc2')} (fsspec {env.get('fsspec')}, s3fs {env.get('s3fs')}), "
             f"nginx {env.get('nginx_version', '?')}, S3: {c.get('s3_server')}, {env['cpus']} CPUs, "
             f"1-min load {env['loadavg_start']:.1f} → {env.get('loadavg_end', 0):.1f}"
             + (" (busy machine: noisy)" if max(env["loadavg_start"], env.get("loadavg_end", 0)) > 0.5 * env["cpus"]
                else ""),
             ""]
    sv = results.get("servers", {})
    if sv:
        lines.append("server check (curl range GETs of raw.bin, GB/s; the proxy's CPU per GiB): " + ", ".join(
            f"{k} {fmt(v)}" for k, v in sv.items() if isinstance(v, (int, float)) and k != "s3s_build_s"))
        if sv.get("s3s_build_s") is not None:
            lines.append(f"s3s-fs build: {sv['s3s_build_s']:.0f} s")
        lines.append("")
    lines.append("| | " + " | ".join(cols) + " |")
    lines.append("|---" * (len(cols) + 1) + "|")

    def row(label, values):
        lines.append(f"| {label} | " + " | ".join(str(v) for v in values) + " |")

    get = lambda k: [s[col].get(k) for col in cols]
    ms = lambda v: None if v is None else v * 1e3
    row("blosc2fs scan GB/s", [fmt(v) for v in get("b2fs_gbps_0")])
    row("python-blosc2 `open(url)[:]` GB/s", [fmt(v) for v in get("py_gbps_0")])
    row("**blosc2fs / python**", [fmt(v, ".2f", "x") for v in get("ratio_0")])
    row(f"blosc2fs scan, {delay} ms delay, GB/s", [fmt(v) for v in get("b2fs_gbps_d")])
    row(f"python-blosc2, {delay} ms delay, GB/s", [fmt(v) for v in get("py_gbps_d")])
    row(f"blosc2fs / python, {delay} ms", [fmt(v, ".2f", "x") for v in get("ratio_d")])
    row(f"blosc2fs {delay} ms / no delay", [fmt(v, ".2f", "x") for v in get("b2fs_delay_ratio")])
    row(f"python {delay} ms / no delay", [fmt(v, ".2f", "x") for v in get("py_delay_ratio")])
    row("blosc2fs CPU s / wall s (no delay)", [f"{fmt(a)} / {fmt(b)}" for a, b in zip(get("b2fs_cpu_0"), get("b2fs_wall_0"))])
    row("python CPU s (whole process, no delay)", [fmt(v) for v in get("py_cpu_0")])
    row("blosc2fs peak RSS MiB", [fmt(v, ".0f") for v in get("b2fs_rss")])
    row("python peak RSS MiB (holds the 1 GiB result)", [fmt(v, ".0f") for v in get("py_rss_0")])
    row("requests per scan: blosc2fs / python", [f"{fmt(a, '.0f')} / {fmt(b, '.0f')}"
                                                 for a, b in zip(get("b2fs_requests_d"), get("py_requests_d"))])
    if c["mode"] == "mount":
        keep = re.compile(r"get|head|list|request|remote|prefetch")

        def counters(st):
            return ", ".join(f"{k} {v}" for k, v in (st or {}).items() if keep.search(k)) or "—"

        row("blosc2fs .stats counters, one scan (no delay)", [counters(v) for v in get("b2fs_stats_0")])
    row("random 4 KiB pread p50 / p99 ms (mount)", [f"{fmt(ms(a), '.2f')} / {fmt(ms(b), '.2f')}"
                                                    for a, b in zip(get("b2fs_p50"), get("b2fs_p99"))])
    row("python `arr[i, j]` p50 / p99 ms", [f"{fmt(ms(a), '.2f')} / {fmt(ms(b), '.2f')}"
                                            for a, b in zip(get("py_p50"), get("py_p99"))])
    row("python cold open s", [fmt(v, ".3f") for v in get("py_open_s")])
    lines.append("")
    lines.append("| target | " + " | ".join(cols) + " |")
    lines.append("|---" * (len(cols) + 1) + "|")
    labels = [("scan", f"scan ≥ {SCAN_TARGET}× python-blosc2"), ("random", "random p50 ≤ python-blosc2"),
              ("rss", f"peak RSS ≤ cache + {RSS_SLACK_MIB} MiB"), ("delay", f"{delay} ms scan ≥ {DELAY_TARGET}× no-delay")]
    for key, label in labels:
        vals = []
        for col in cols:
            t = results["targets"][col].get(key)
            vals.append("—" if t is None else f"{t['status']} {t['display']}")
        row(label, vals)
    if c["mode"] != "mount":
        lines.append("")
        lines.append("blosc2fs ran as `cat` (mounting URLs not available in this binary): RSS is cat's peak, "
                     "random reads need the mount (n/a).")
    if results["errors"]:
        lines += ["", "errors:"] + [f"- {e}" for e in results["errors"]]
    return "\n".join(lines)


# ---------------------------------------------------------------- main


def mount_supports_urls(binary: str) -> bool:
    p = subprocess.run([binary, "mount", "--help"], capture_output=True, text=True)
    return "://" in p.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description="blosc2fs remote benchmark (see the module docstring)")
    ap.add_argument("--workdir", default="/tmp/blosc2fs-rbench")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--size-gib", type=float, default=1.0)
    ap.add_argument("--delay-ms", type=int, default=20)
    ap.add_argument("--mode", choices=["auto", "mount", "cat"], default="auto",
                    help="blosc2fs side: a mount + dd, or `cat URL`; auto = mount when `mount --help` takes URLs")
    ap.add_argument("--protocols", default="http,s3")
    ap.add_argument("--files", default="zstd,lz4")
    ap.add_argument("--random-reads", type=int, default=RANDOM_READS)
    ap.add_argument("--binary", default=os.path.join(REPO, "target", "release", "blosc2fs"))
    ap.add_argument("--proxy", help="delay_proxy binary (default: target/release/examples/delay_proxy, built if missing)")
    ap.add_argument("--s3s-fs", help="s3s-fs binary (default: WORKDIR/tools/bin/s3s-fs, cargo-installed if missing)")
    ap.add_argument("--s3-server", choices=["s3s-fs", "s3rver", "nginx"], default="s3s-fs",
                    help="S3 API server: s3s-fs (Rust, crates.io), s3rver (Node, npm), or nginx answering "
                         "path-style GET/HEAD of /bench/KEY (signatures unchecked, no LIST: the clients' S3 code "
                         "paths without a server cap; s3s-fs streams in 4 KiB reads and caps near 0.1 GB/s)")
    ap.add_argument("--cache-size", default="128M")
    ap.add_argument("--python", help="interpreter with blosc2 4.14.1 + fsspec, aiohttp, requests, s3fs "
                                     "(default: WORKDIR/pyenv, made here)")
    ap.add_argument("--install-missing", action="store_true", help="pip-install the python side into --python")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target FAILs")
    ap.add_argument("--_worker", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args._worker is not None:
        print(json.dumps(worker_main(json.loads(args._worker))))
        return 0

    args.binary = os.path.abspath(args.binary)
    args.workdir = os.path.abspath(args.workdir)
    if args.protocols == "caterva2":  # its own scenario: scripts/bench_c2.py
        cmd = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_c2.py"),
               "--workdir", os.path.join(args.workdir, "caterva2"), "--repeats", str(args.repeats),
               "--size-gib", str(args.size_gib), "--cache-size", args.cache_size, "--binary", args.binary]
        corpus = os.path.join(args.workdir, f"corpus-{max(1, int(round(bench.BASE_ROWS * args.size_gib)))}x{bench.COLS}")
        if os.path.exists(os.path.join(corpus, "b2", "zstd.b2nd")):
            cmd += ["--corpus", corpus]
        return subprocess.run(cmd + (["--strict"] if args.strict else [])).returncode
    if not os.access(args.binary, os.X_OK):
        print(f"error: {args.binary} not found; run `cargo build --release` first (or pass --binary)", file=sys.stderr)
        return 2
    if args.mode == "auto":
        args.mode = "mount" if mount_supports_urls(args.binary) else "cat"
    protocols = [p for p in args.protocols.split(",") if p]
    files = [f for f in args.files.split(",") if f]
    if any(p not in ("http", "s3") for p in protocols) or any(f not in FILES for f in files):
        print("error: --protocols takes http,s3 (or caterva2 alone) and --files zstd,lz4,narrow", file=sys.stderr)
        return 2
    cache_bytes = parse_size(args.cache_size)
    os.makedirs(args.workdir, exist_ok=True)
    args.mnt = os.path.join(args.workdir, "mnt")
    args.log = os.path.join(args.workdir, "daemon.log")
    open(args.log, "w").close()
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)
    atexit.register(stop_all)

    env = {"cpus": os.cpu_count(), "kernel": platform.release(), "binary": args.binary,
           "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "loadavg_start": os.getloadavg()[0]}
    errors: list[str] = []
    servers: dict = {}
    results: dict = {}
    try:
        cleanup_mountpoint(args.binary, args.mnt)
        python = ensure_python(args)
        env["python_exe"] = python
        env |= run_worker(python, {"op": "version"})
        nginx_exe = ensure_nginx() if ("http" in protocols or args.s3_server == "nginx") else None
        if nginx_exe:
            env["nginx_version"] = subprocess.run([nginx_exe, "-v"], capture_output=True, text=True).stderr.strip().split("/")[-1]
        s3_exe, s3s_build = (None, None)
        if "s3" in protocols and args.s3_server != "nginx":
            s3_exe, s3s_build = ensure_s3s(args) if args.s3_server == "s3s-fs" else (ensure_s3rver(args), None)
        servers["s3s_build_s"] = s3s_build
        proxy_exe = ensure_proxy(args)

        corpus = bench.ensure_corpus(python, args.workdir, args.size_gib)
        raw_path = os.path.join(corpus["dir"], "raw.bin")
        nbytes = corpus["nbytes"]
        for f in ["raw.bin"] + [os.path.join("b2", f"{n}.b2nd") for n in files]:
            read_through(os.path.join(corpus["dir"], f))  # the servers' files warm in the page cache

        upstream = {}
        creds = {"http": None}
        if "http" in protocols or args.s3_server == "nginx":
            s3_dir = None
            if args.s3_server == "nginx":
                # GET/HEAD of /bench/KEY answered by nginx: the S3 clients' own code paths, no server cap.
                s3_dir = os.path.join(args.workdir, "s3nginx")
                os.makedirs(os.path.join(s3_dir, BUCKET), exist_ok=True)
                for n in list(files) + ["raw"]:
                    key = "raw.bin" if n == "raw" else f"{n}.b2nd"
                    src = raw_path if n == "raw" else os.path.join(corpus["dir"], "b2", key)
                    link = os.path.join(s3_dir, BUCKET, key)
                    if os.path.lexists(link):
                        os.remove(link)
                    os.symlink(src, link)
            ng = Nginx(nginx_exe, corpus["dir"], args.workdir, s3_dir)
            upstream["http"] = ng.port
            if s3_dir:
                upstream["s3"] = ng.port
                creds["s3"] = ng.creds
        if "s3" in protocols and args.s3_server != "nginx":
            s3 = (S3sFs if args.s3_server == "s3s-fs" else S3rver)(s3_exe, args.workdir)
            upstream["s3"] = s3.port
            creds["s3"] = s3.creds
            want = {f"{n}.b2nd": os.path.join(corpus["dir"], "b2", f"{n}.b2nd") for n in files}
            want["raw.bin"] = raw_path
            print(f"{args.s3_server}: seeding bucket {BUCKET} through the S3 API (skips what is there) ...", flush=True)
            servers["s3_seed"] = run_worker(python, {"op": "seed_s3", "bucket": BUCKET, "files": want},
                                            env=s3_env(s3.port, s3.creds))
        proxies = {p: Proxy(proxy_exe, upstream[p], args.delay_ms, args.workdir, p) for p in protocols}
        zero = {p: Proxy(proxy_exe, upstream[p], 0, args.workdir, f"{p}-nodelay") for p in protocols}

        # The servers and the proxy must not be what caps the clients.
        for p in protocols:
            path = f"/{BUCKET}/raw.bin" if p == "s3" else "/raw.bin"
            for label, port in (("direct", upstream[p]), ("proxy 0 ms", zero[p].port)):
                url = f"http://127.0.0.1:{port}{path}"
                servers[f"{p} {label}, 1 stream"] = max(server_throughput(url, 1, nbytes // 4, creds[p])
                                                        for _ in range(2))
                c0 = proc_cpu_s(zero[p].proc.pid)
                servers[f"{p} {label}, 4 streams"] = max(server_throughput(url, 4, nbytes, creds[p])
                                                         for _ in range(2))
                if label != "direct" and c0 is not None:
                    servers[f"{p} proxy CPU s/GiB"] = (proc_cpu_s(zero[p].proc.pid) - c0) / 2 / (nbytes / 2**30)
            print(f"server check {p}: " + ", ".join(f"{k[len(p) + 1:]} {v:.2f}" for k, v in servers.items()
                                                      if k.startswith(f"{p} ")), flush=True)
        for z in zero.values():
            stop(z.proc)

        results = {
            "config": {"size_gib": args.size_gib, "rows": corpus["rows"], "cols": corpus["cols"], "nbytes": nbytes,
                       "repeats": args.repeats, "cache_size": args.cache_size, "cache_bytes": cache_bytes,
                       "delay_ms": args.delay_ms, "mode": args.mode, "random_reads": args.random_reads,
                       "random_size": RANDOM_SIZE, "workdir": args.workdir, "corpus_dir": corpus["dir"],
                       "protocols": protocols, "files": files, "s3_server": args.s3_server},
            "env": env, "servers": servers,
            "corpus": {k: v for k, v in corpus.items() if k != "dir"},
            "raw": {"cells": {f"{p}/{n}": {"b2fs_scan_0": [], "py_scan_0": [], "b2fs_scan_d": [], "py_scan_d": [],
                                           "b2fs_random": [], "py_random": []}
                              for p in protocols for n in files}},
            "errors": errors,
        }
        cells = results["raw"]["cells"]

        def attempt(label, fn):
            try:
                return fn()
            except BenchError as e:
                msg = f"{label}: {e}"
            except (OSError, subprocess.SubprocessError) as e:
                msg = f"{label}: {type(e).__name__}: {e}"
            if msg not in errors:
                errors.append(msg)
            print(f"  ERROR {msg}", flush=True)
            return None

        run = Runner(args, corpus, python, raw_path)
        for p in protocols:
            for n in files:
                ep = Endpoint(p, upstream[p], n, creds[p] or ("", ""), args.s3_server != "nginx")
                print(f"verify {p}/{n}: blosc2fs cat gives raw.bin's bytes ...", flush=True)
                attempt(f"{p}/{n}: verify blosc2fs cat", lambda: verify_cat(args, ep, raw_path))

        for rep in range(args.repeats):
            for p in protocols:
                for delay_key, port in (("0", upstream[p]), ("d", proxies[p].port)):
                    proxy = proxies[p] if delay_key == "d" else None
                    for n in files:
                        col = f"{p}/{n}"
                        ep = Endpoint(p, port, n, creds[p] or ("", ""), args.s3_server != "nginx")
                        tag = "no delay" if delay_key == "0" else f"{args.delay_ms} ms"
                        b = attempt(f"{col} {tag}: blosc2fs scan", lambda: run.b2fs_scan(ep, proxy))
                        if b:
                            cells[col][f"b2fs_scan_{delay_key}"].append(b)
                        q = attempt(f"{col} {tag}: python-blosc2 scan",
                                    lambda: run.py_scan(ep, proxy, verify=(rep == 0 and delay_key == "0")))
                        if q:
                            cells[col][f"py_scan_{delay_key}"].append(q)
                        req = lambda x: f" {x['proxy']['requests']} req" if x and "proxy" in x else ""
                        print(f"[{rep + 1}/{args.repeats}] {col:9s} {tag:8s} blosc2fs "
                              f"{fmt(b and b['gbps'])} GB/s (cpu {fmt(b and b.get('cpu_s'))} s, "
                              f"rss {fmt(b and b.get('maxrss_mib'), '.0f')} MiB{req(b)})  python "
                              f"{fmt(q and q['gbps'])} GB/s{req(q)}", flush=True)

        offsets = random_plan(nbytes, args.random_reads)
        for rep in range(args.repeats):
            for p in protocols:
                for n in files:
                    col = f"{p}/{n}"
                    ep = Endpoint(p, upstream[p], n, creds[p] or ("", ""), args.s3_server != "nginx")
                    b = None
                    if args.mode == "mount":
                        b = attempt(f"{col}: blosc2fs random reads", lambda: run.mount_random(ep, offsets))
                        if b:
                            cells[col]["b2fs_random"].append(b)
                    q = attempt(f"{col}: python-blosc2 random reads", lambda: run.py_random(ep, offsets))
                    if q:
                        cells[col]["py_random"].append(q)
                    print(f"[{rep + 1}/{args.repeats}] {col:9s} random p50 blosc2fs "
                          f"{fmt(b and percentile(b['latencies'], 50) * 1e3, '.3f')} ms  python "
                          f"{fmt(q and percentile(q['latencies'], 50) * 1e3, '.3f')} ms", flush=True)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        stop_all()

    summarize(results, cache_bytes)
    results["env"]["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    results["env"]["loadavg_end"] = os.getloadavg()[0]
    out = os.path.join(args.workdir, "results.json")
    with open(out, "w") as f:
        json.dump(results, f, indent=1)
    print()
    print(build_table(results))
    print(f"\nresults: {out}  logs: {args.workdir}/*.log")
    if errors:
        return 2
    if args.strict and any(t["status"] == "FAIL" for ts in results["targets"].values() for t in ts.values()):
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        stop_all()
        print("interrupted", file=sys.stderr)
        sys.exit(130)
