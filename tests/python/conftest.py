"""Shared helpers of the Python package's tests (tests/python).

These tests run against the blosc2fs *wheel* installed into a throwaway
virtualenv (scripts/test.sh, step "python wheel"), with no cargo on PATH:
they import the installed `blosc2fs`, never the source tree's. numpy and
python-blosc2 4.14.1 are there only as the oracle. FUSE tests mount for
real: they need root (or a user allowed to mount) and /dev/fuse; they take
the same lock file as the Rust mount tests, so two mounts never overlap.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


def mount_table() -> str:
    """/proc/mounts now."""
    return Path("/proc/mounts").read_text()


def mounted_at(path: os.PathLike) -> bool:
    """Whether a mount point `path` is in /proc/mounts (which escapes
    backslashes, spaces, tabs and newlines in octal)."""
    target = os.path.realpath(path)
    for char in "\\ \t\n":
        target = target.replace(char, f"\\{ord(char):03o}")
    return any(line.split(" ")[1] == target for line in mount_table().splitlines())


def process_gone(pid: int) -> bool:
    """Whether process `pid` has exited (a zombie counts as exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] in "ZX"


@pytest.fixture(scope="session")
def mount_lock() -> Iterator[None]:
    """The Rust mount tests' lock (tests/common/mount.rs), held for the session."""
    if not os.access("/dev/fuse", os.R_OK | os.W_OK):
        pytest.skip("/dev/fuse cannot be opened: FUSE tests need it")
    with open(Path(tempfile.gettempdir()) / "blosc2fs-mount-tests.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield
