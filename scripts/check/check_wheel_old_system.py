"""The installed wheel on an older system: run by `scripts/check/check_wheel.sh
old-system` inside a Debian 11 chroot (glibc 2.31, Python 3.9), with the
wheel pip-installed into the venv that runs this file.

Usage: python check_wheel_old_system.py DIR, where DIR holds `fixtures/` (a
copy of tests/fixtures) and `expected/` (each array's C-order bytes as
python-blosc2 4.14.1 decoded them outside the chroot, `<path>.bin`, for the
arrays it is an oracle of). Standard library only: python-blosc2 4.14.1,
numpy and pytest are not needed here (python-blosc2 4.14.1 has no build for
Python 3.9). Prints one line per check and closes with "N passed, N failed".
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import blosc2fs

DIR = Path(sys.argv[1])
FIXTURES = DIR / "fixtures"
EXPECTED = DIR / "expected"
NOBODY = 65534
CHECKS: list[tuple[str, Callable[[], str]]] = []


def check(fn: Callable[[], str]) -> Callable[[], str]:
    CHECKS.append((fn.__name__, fn))
    return fn


def mounts() -> list[tuple[str, str]]:
    """(mount point, type) of every line of /proc/mounts (its octal escapes undone)."""
    out = []
    for line in Path("/proc/mounts").read_text().splitlines():
        fields = line.split(" ")
        point = fields[1]
        for char in "\\ \t\n":
            point = point.replace(f"\\{ord(char):03o}", char)
        out.append((point, fields[2]))
    return out


def fuse_mounts() -> list[str]:
    return [point for point, kind in mounts() if kind.startswith("fuse")]


def mounted_at(path: Path) -> bool:
    return any(point == os.path.realpath(path) for point, _ in mounts())


def process_gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] in "ZX"


def corpus() -> list[tuple[str, dict[str, Any]]]:
    """(path under fixtures/, manifest entry) of both fixture manifests."""
    cases = []
    for manifest in (FIXTURES / "manifest.json", FIXTURES / "zfp" / "manifest.json"):
        folder = manifest.parent.relative_to(FIXTURES)
        for entry in json.loads(manifest.read_text()).values():
            cases.append((str(folder / entry["path"]), entry))
    return cases


@check
def the_system_is_old() -> str:
    glibc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    assert sys.version_info[:2] == (3, 9), sys.version
    assert glibc.startswith("glibc 2.") and int(glibc.split(".")[1]) < 35, glibc
    return f"{glibc}, Python {sys.version.split()[0]}"


@check
def the_binary_needs_no_libfuse() -> str:
    binary = blosc2fs.binary()
    assert Path(binary).parent == Path(sys.executable).parent, binary  # the venv's own
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    assert "not found" not in out and "fuse" not in out, out
    return f"ldd: {', '.join(line.split()[0] for line in out.splitlines())}"


@check
def version_by_module_and_command() -> str:
    cli = subprocess.run(["blosc2fs", "--version"], capture_output=True, text=True, check=True).stdout
    mod = subprocess.run(
        [sys.executable, "-m", "blosc2fs", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert cli.splitlines()[0] == f"blosc2fs {blosc2fs.__version__}", cli
    assert mod == cli, (mod, cli)
    return cli.splitlines()[0]


@check
def mounted_reads_every_fixture_exactly() -> str:
    cases = corpus()
    exact = 0
    with blosc2fs.mounted(FIXTURES) as mnt:
        assert mounted_at(mnt)
        pid = daemon_of(mnt)
        for relpath, entry in cases:
            data = (mnt / relpath / "data").read_bytes()
            assert len(data) == entry["size"], relpath
            assert hashlib.sha256(data).hexdigest() == entry["sha256"], relpath
            expected = EXPECTED / (relpath + ".bin")
            if expected.exists():
                assert data == expected.read_bytes(), relpath
                exact += 1
    assert not mounted_at(mnt) and not mnt.exists(), mnt  # the temporary mountpoint is gone too
    assert process_gone(pid)
    assert exact >= len(cases) - 30, exact  # python-blosc2 was the oracle of most (not of DELTA arrays)
    return f"{len(cases)} arrays: sha256 of all, bytes equal to python-blosc2's for {exact}"


def daemon_of(mnt: Path) -> int:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "mount" in args and str(mnt) in args:
            return int(pid)
    raise AssertionError(f"no daemon serves {mnt}")


@check
def a_missing_source_raises_mount_error() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        missing = Path(tmp) / "nope"
        t0 = time.monotonic()
        try:
            with blosc2fs.mounted(missing, Path(tmp) / "mnt"):
                raise AssertionError("mounted")
        except blosc2fs.MountError as e:
            assert e.message == f"blosc2fs: source {missing} does not exist", e.message
            assert e.returncode == 1
        assert time.monotonic() - t0 < 10
        return "MountError: " + f"blosc2fs: source {missing} does not exist"


@check
def a_non_empty_mountpoint_raises_mount_error() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "file").write_text("x")
        try:
            blosc2fs.mount(FIXTURES, tmp)
            raise AssertionError("mounted")
        except blosc2fs.MountError as e:
            assert e.message == f"blosc2fs: mountpoint {tmp} is not empty", e.message
        assert not mounted_at(Path(tmp)) and (Path(tmp) / "file").read_text() == "x"
        return "MountError: not empty"


USER_MOUNT = """
import hashlib, json, sys, blosc2fs
entry = json.load(open(sys.argv[1] + "/manifest.json"))["clevel1_lz4"]
with blosc2fs.mounted(sys.argv[1]) as mnt:
    data = (mnt / entry["path"] / "data").read_bytes()
    assert hashlib.sha256(data).hexdigest() == entry["sha256"]
print(len(data))
"""


@check
def a_user_mounts_through_fusermount3() -> str:
    # Not root: the daemon gets /dev/fuse from the system's setuid fusermount3.
    out = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--reset-env"]
        + ["env", f"PATH={Path(sys.executable).parent}:/usr/bin:/bin", "TMPDIR=/tmp"]
        + [sys.executable, "-c", USER_MOUNT, str(FIXTURES)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return f"as uid {NOBODY}: {out.stdout.strip()} bytes read exactly, unmounted"


@check
def nothing_is_left_mounted() -> str:
    left = fuse_mounts()
    assert left == [], left
    return "no FUSE mount in /proc/mounts"


def main() -> int:
    passed = failed = 0
    for name, fn in CHECKS:
        try:
            note = fn()
        except Exception:  # noqa: BLE001 - each check reports its own failure
            failed += 1
            print(f"FAILED {name}\n{traceback.format_exc()}", flush=True)
        else:
            passed += 1
            print(f"ok     {name}: {note}", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
