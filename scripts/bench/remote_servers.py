"""The servers of the remote benchmark: nginx, an S3 API server and the delay proxy, on 127.0.0.1.

One job: have each server bench_remote.py reads from running and known not to be the cap. It
finds or installs them (nginx from apt, s3s-fs from crates.io, s3rver from npm, the delay proxy
from examples/, the python side into a venv of its own), starts them as children of the run
(benchlib.spawn: stopped at exit), seeds nothing itself (bench_remote's worker seeds the S3
bucket through the S3 API), and measures their own throughput with parallel curl range GETs
(`server_throughput`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from typing import Any

from benchlib import REPO, BenchError, free_port, gbps, spawn, wait_port

BUCKET = "bench"
ACCESS_KEY = "benchkey"
SECRET_KEY = "benchsecret0123456789"
REGION = "us-east-1"
S3S_VERSION = "0.14.1"  # the newest s3s-fs that builds with the machine's rustc 1.95
S3RVER_VERSION = "3.7.1"
PY_PACKAGES = ["blosc2==4.14.1", "numpy", "fsspec", "aiohttp", "requests", "s3fs"]
PY_MODULES = ["blosc2", "numpy", "fsspec", "aiohttp", "requests", "s3fs"]


# ---------------------------------------------------------------- tools


def ensure_python(args: Any) -> str:
    """The bench interpreter: --python, or WORKDIR/pyenv made here with PY_PACKAGES."""
    check = [f"import {m}" for m in PY_MODULES] + ["assert blosc2.__version__ == '4.14.1', blosc2.__version__"]

    def probe(py: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([py, "-c", "; ".join(check)], capture_output=True, text=True)

    if args.python:
        p = probe(args.python)
        if p.returncode == 0:
            return str(args.python)
        if not args.install_missing:
            raise BenchError(
                f"{args.python} lacks one of {PY_MODULES} (or blosc2 is not 4.14.1): "
                f"{p.stderr.strip()[-300:]}; pass --install-missing to pip-install {PY_PACKAGES} into it"
            )
        py = str(args.python)
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


def ensure_s3s(args: Any) -> tuple[str, float | None]:
    """WORKDIR/tools/bin/s3s-fs (or --s3s-fs); (path, build seconds when built now)."""
    if args.s3s_fs:
        return args.s3s_fs, None
    exe = os.path.join(args.workdir, "tools", "bin", "s3s-fs")
    if os.access(exe, os.X_OK):
        return exe, None
    print(
        f"s3s-fs: cargo install s3s-fs --version {S3S_VERSION} --locked --features binary (a few minutes) ...",
        flush=True,
    )
    t0 = time.perf_counter()
    p = subprocess.run(
        [
            "cargo",
            "install",
            "s3s-fs",
            "--version",
            S3S_VERSION,
            "--locked",
            "--features",
            "binary",
            "--root",
            os.path.join(args.workdir, "tools"),
            "-j2",
        ],
        capture_output=True,
        text=True,
    )
    dt = time.perf_counter() - t0
    if p.returncode != 0 or not os.access(exe, os.X_OK):
        raise BenchError(f"cargo install s3s-fs failed: {p.stderr.strip()[-800:]}")
    print(f"s3s-fs: built in {dt:.0f} s", flush=True)
    return exe, dt


def ensure_s3rver(args: Any) -> str:
    """WORKDIR/tools/node/node_modules/.bin/s3rver, npm-installed when missing."""
    prefix = os.path.join(args.workdir, "tools", "node")
    exe = os.path.join(prefix, "node_modules", ".bin", "s3rver")
    if os.access(exe, os.X_OK):
        return exe
    os.makedirs(prefix, exist_ok=True)
    print(f"s3rver: npm install s3rver@{S3RVER_VERSION} ...", flush=True)
    p = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--prefix", prefix, f"s3rver@{S3RVER_VERSION}"],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0 or not os.access(exe, os.X_OK):
        raise BenchError(f"npm install s3rver failed: {p.stderr.strip()[-800:]}")
    return exe


def ensure_proxy(args: Any) -> str:
    exe = args.proxy or os.path.join(REPO, "target", "release", "examples", "delay_proxy")
    if os.access(exe, os.X_OK):
        return exe
    print("delay_proxy: cargo build --release -j2 --example delay_proxy ...", flush=True)
    p = subprocess.run(
        ["cargo", "build", "--release", "-j2", "--example", "delay_proxy"], cwd=REPO, capture_output=True, text=True
    )
    if p.returncode != 0 or not os.access(exe, os.X_OK):
        raise BenchError(f"building examples/delay_proxy failed: {p.stderr.strip()[-800:]}")
    return exe


# ---------------------------------------------------------------- servers


class Nginx:
    """nginx in the foreground serving `root` (and, with `s3_dir`, path-style /BUCKET/KEY from s3_dir/BUCKET)."""

    creds = (ACCESS_KEY, SECRET_KEY)  # sent by the S3 clients, never checked

    def __init__(self, exe: str, root: str, workdir: str, s3_dir: str | None = None) -> None:
        self.dir = os.path.join(workdir, "nginx")
        os.makedirs(os.path.join(self.dir, "tmp"), exist_ok=True)
        self.port = free_port()
        self.log = os.path.join(self.dir, "nginx.log")
        user = "user root root;\n" if os.geteuid() == 0 else ""
        t = os.path.join(self.dir, "tmp")
        conf = f"""# written by scripts/bench/bench_remote.py
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

    def __init__(self, exe: str, workdir: str) -> None:
        self.root = os.path.join(workdir, "s3root")
        os.makedirs(self.root, exist_ok=True)
        self.port = free_port()
        self.log = os.path.join(workdir, "s3s-fs.log")
        self.proc = spawn(
            [
                exe,
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--access-key",
                ACCESS_KEY,
                "--secret-key",
                SECRET_KEY,
                self.root,
            ],
            self.log,
            env=dict(os.environ, RUST_LOG="warn"),
        )
        wait_port(self.port, self.proc, "s3s-fs", self.log)


class S3rver:
    """s3rver (npm; Node) with its data in WORKDIR/s3rver-data; its fixed key pair is S3RVER/S3RVER."""

    creds = ("S3RVER", "S3RVER")

    def __init__(self, exe: str, workdir: str) -> None:
        self.root = os.path.join(workdir, "s3rver-data")
        os.makedirs(self.root, exist_ok=True)
        self.port = free_port()
        self.log = os.path.join(workdir, "s3rver.log")
        self.proc = spawn(
            [
                exe,
                "-d",
                self.root,
                "-a",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-s",
                "--no-vhost-buckets",
                "--configure-bucket",
                BUCKET,
            ],
            self.log,
        )
        wait_port(self.port, self.proc, "s3rver", self.log)


class Proxy:
    def __init__(self, exe: str, upstream_port: int, delay_ms: int, workdir: str, tag: str) -> None:
        self.stats_file = os.path.join(workdir, f"proxy-{tag}.json")
        self.log = os.path.join(workdir, f"proxy-{tag}.log")
        self.port = free_port()
        self.proc = spawn(
            [
                exe,
                "--listen",
                f"127.0.0.1:{self.port}",
                "--upstream",
                f"127.0.0.1:{upstream_port}",
                "--delay-ms",
                str(delay_ms),
                "--threads",
                "2",
                "--stats-file",
                self.stats_file,
            ],
            self.log,
        )
        wait_port(self.port, self.proc, "delay_proxy", self.log)

    def stats(self) -> dict[str, int]:
        time.sleep(0.25)  # the proxy rewrites its file every 100 ms
        try:
            with open(self.stats_file) as f:
                counts: dict[str, int] = json.load(f)
                return counts
        except (OSError, ValueError):
            return {"connections": 0, "requests": 0, "bytes_up": 0, "bytes_down": 0}


def s3_env(endpoint_port: int, creds: tuple[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("AWS_"):
            del env[k]
    env.update(
        {
            "AWS_ACCESS_KEY_ID": creds[0],
            "AWS_SECRET_ACCESS_KEY": creds[1],
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{endpoint_port}",
            "AWS_ALLOW_HTTP": "true",
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": "/dev/null",
            "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        }
    )
    return env


def server_throughput(url: str, streams: int, total: int, creds: tuple[str, str] | None) -> float:
    """GB/s of `streams` parallel curl range GETs splitting the first `total` bytes of `url`
    (SigV4-signed with `creds` for S3)."""
    part = total // streams
    procs = []
    t0 = time.perf_counter()
    for i in range(streams):
        cmd = [
            "curl",
            "-f",
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{size_download}",
            "-r",
            f"{i * part}-{(i + 1) * part - 1}",
            url,
        ]
        if creds:
            cmd[1:1] = [
                "--aws-sigv4",
                f"aws:amz:{REGION}:s3",
                "--user",
                f"{creds[0]}:{creds[1]}",
                "-H",
                "x-amz-content-sha256: UNSIGNED-PAYLOAD",
            ]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for p in procs:
        out, err = p.communicate()
        if p.returncode != 0 or out.strip() != str(part).encode():
            raise BenchError(
                f"curl {url}: exit {p.returncode}, {out.decode(errors='replace')!r} bytes: "
                f"{err.decode(errors='replace')[-300:]}"
            )
    return gbps(part * streams, time.perf_counter() - t0)
