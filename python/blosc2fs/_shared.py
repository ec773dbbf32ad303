"""One mount per machine, shared by the processes that use it.

Several processes of one machine (Dask workers) may each ask for the same
mountpoint. The first mounts; the others join; the last to leave unmounts.
Who uses a mountpoint is kept in a small JSON file of this user's, under
the temporary folder, one per mountpoint, read and rewritten under an
exclusive flock(2) of that file: so two processes never mount twice, nor
unmount what another still reads. Users are processes named by pid and
start time; one that died without leaving (a killed worker) is pruned by
the next process to take the lock. The daemon is not any user's: it runs in
a session of its own and outlives the process that started it for as long
as another process uses the mount.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import _daemon
from ._binary import binary as _find_binary
from ._mount import MountError, mount

__all__ = ["acquire", "registry_file", "release"]


def _folder() -> Path:
    folder = Path(tempfile.gettempdir()) / f"blosc2fs-shared-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def registry_file(mountpoint: str) -> Path:
    """The file that says who uses `mountpoint` (canonical) on this machine."""
    digest = hashlib.sha256(mountpoint.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return _folder() / f"{digest}.json"


@contextlib.contextmanager
def _locked(mountpoint: str) -> Iterator[dict[str, Any]]:
    """The registry entry of `mountpoint`, read under its lock and written
    back when the block ends (removed when left empty)."""
    path = registry_file(mountpoint)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                break  # the file is still the registry: it was not removed while we waited
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        with os.fdopen(os.dup(fd), "r+", encoding="utf-8") as f:
            text = f.read()
            state: dict[str, Any] = json.loads(text) if text.strip() else {}
            yield state
            f.seek(0)
            f.truncate()
            if state:
                json.dump(state, f)
            f.flush()
        if not state:
            os.unlink(path)  # still under the lock: a newcomer recreates it
    finally:
        os.close(fd)


def _me() -> dict[str, int]:
    me = _daemon.Daemon.of(os.getpid())
    assert me is not None  # this process exists
    return {"pid": me.pid, "start": me.start}


def _alive(entry: dict[str, int]) -> bool:
    return _daemon.Daemon(entry["pid"], entry["start"]).alive()


def _serving(state: dict[str, Any]) -> bool:
    """Whether the registered daemon still runs and its mount is made."""
    return bool(state) and _alive(state["daemon"]) and _daemon.is_mounted(state["device"], state["mountpoint"])


def _end(state: dict[str, Any]) -> str | None:
    daemon = state["daemon"]
    return _daemon.stop(
        _daemon.Daemon(daemon["pid"], daemon["start"]),
        None,
        state["device"],
        state["mountpoint"],
        state.get("binary") or _find_binary(),
        state.get("grace", 5.0),
    )


def acquire(source: str, mountpoint: str, options: dict[str, Any]) -> dict[str, Any]:
    """Use the mount of `source` at `mountpoint` (made now if no live
    process of this machine made it); returns its registry entry.

    Raises:
        MountError: the mount failed, or `mountpoint` is in use for another
            source.
    """
    real = os.path.realpath(mountpoint)
    with _locked(real) as state:
        users: list[dict[str, int]] = [u for u in state.get("users", []) if _alive(u)]
        if state and not _serving(state):
            _end(state)  # a daemon that died or a mount that is gone: start again
            state.clear()
        if state and state["source"] != source:
            raise MountError(f"{real} is already mounted from {state['source']} by this machine's workers")
        if not state:
            os.makedirs(real, exist_ok=True)
            handle = mount(source, real, **options)
            state.update(
                source=source,
                mountpoint=real,
                device=handle._device,
                daemon={"pid": handle.pid, "start": handle._daemon.start if handle._daemon else 0},
                binary=handle._binary,
                grace=handle._grace,
            )
            handle._release()
            users = []
        me = _me()
        if me not in users:
            users.append(me)
        state["users"] = users
        return dict(state)


def release(mountpoint: str) -> None:
    """Stop using the mount at `mountpoint`; the last user unmounts it.

    Raises:
        MountError: the mount could not be ended.
    """
    real = os.path.realpath(mountpoint)
    problem = None
    with _locked(real) as state:
        if not state:
            return
        me = _me()
        state["users"] = [u for u in state.get("users", []) if u != me and _alive(u)]
        if not state["users"]:
            problem = _end(state)
            if problem is None:
                state.clear()
    if problem is not None:
        raise MountError(problem)
