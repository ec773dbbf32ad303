"""Mounting from Python: `mount()` gives a handle, `mounted()` a path for a
`with` block.

The daemon is run with `--foreground` as this process's own child, in a
session of its own (a Ctrl-C in a terminal or notebook reaches Python, not
the daemon, so the handle decides when it ends). So its pid is known without
asking anyone, its exit is seen at once, and its stderr (a file, never a
pipe that could fill and stall it) is the message of a failed mount. It is
ready when the mountpoint's device changes (what the daemon itself waits
for before a background `blosc2fs mount` returns); it has failed when it
exits first. Either way nothing is left behind: a failed or interrupted
mount is stopped and unmounted before the exception propagates.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Union

from . import _daemon, _options
from ._binary import binary as _find_binary

__all__ = ["Mount", "MountError", "mount", "mounted"]

PathLike = Union[str, "os.PathLike[str]"]


class MountError(RuntimeError):
    """A mount that could not be made, or an unmount that did not finish.

    Attributes:
        message: what went wrong: for a refused mount, the CLI's own message
            (`blosc2fs: source ... does not exist`).
        returncode: the daemon's exit status, when it exited.
    """

    def __init__(self, message: str, returncode: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.returncode = returncode


# Mounts still made when the interpreter exits are unmounted then.
_LIVE: weakref.WeakSet[Mount] = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()


@atexit.register
def _unmount_leftovers() -> None:
    with _LIVE_LOCK:
        left = list(_LIVE)
    for handle in left:
        with contextlib.suppress(Exception):
            handle.unmount()


class Mount:
    """A mount made by `mount()`: its path, its counters, its end.

    Use it as a context manager, or call `unmount()`; a mount still made
    when Python exits is unmounted then.
    """

    def __init__(
        self,
        path: Path,
        real: str,
        device: int,
        child: subprocess.Popen[bytes],
        stderr: IO[bytes],
        binary: str,
        grace: float,
        made_dir: bool,
    ) -> None:
        self._path = path
        self._real = real
        self._device = device
        self._child = child
        self._daemon = _daemon.Daemon.of(child.pid)
        self._stderr = stderr
        self._binary = binary
        self._grace = grace
        self._made_dir = made_dir
        self._done = False
        with _LIVE_LOCK:
            _LIVE.add(self)

    @property
    def path(self) -> Path:
        """Where the filesystem is mounted."""
        return self._path

    @property
    def pid(self) -> int:
        """The pid of the mount daemon."""
        return self._child.pid

    @property
    def mounted(self) -> bool:
        """Whether the mount is still in the mount table."""
        return _daemon.is_mounted(self._device, self._real)

    def stats(self) -> dict[str, Any]:
        """The mount's counters: its `.stats` file (cache hits and misses,
        bytes decoded and served, ...; docs/semantics.md#stats), parsed."""
        counters: dict[str, Any] = json.loads((self._path / ".stats").read_bytes())
        return counters

    def unmount(self) -> None:
        """Unmount, and wait until the daemon has exited (at most its
        `exit_grace` plus 10 s, then it is killed and the mount detached).
        Idempotent. A temporary mountpoint made by `mount()` is removed.

        Raises:
            MountError: the mount or the daemon could not be ended.
        """
        interrupted: BaseException | None = None
        problem: str | None = None
        for _ in range(3):  # a Ctrl-C in the middle does not leave half a cleanup
            try:
                problem = self._end()
                break
            except KeyboardInterrupt as e:
                interrupted = e
        if interrupted is not None:
            raise interrupted
        if problem is not None:
            raise MountError(problem)

    def _end(self) -> str | None:
        if self._done:
            return None
        problem = _daemon.stop(self._daemon, self._child, self._device, self._real, self._binary, self._grace)
        if problem is None:
            self._done = True
            with _LIVE_LOCK:
                _LIVE.discard(self)
            self._stderr.close()
            if self._made_dir:
                with contextlib.suppress(OSError):
                    os.rmdir(self._real)
        return problem

    def _release(self) -> None:
        """Forget this mount: it is no longer unmounted by this handle or at
        exit (the Dask plugin hands it to the machine's registry)."""
        self._done = True
        with _LIVE_LOCK:
            _LIVE.discard(self)
        self._stderr.close()

    def __enter__(self) -> Mount:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.unmount()

    def __repr__(self) -> str:
        state = "unmounted" if self._done else f"pid {self.pid}"
        return f"<blosc2fs.Mount {str(self._path)!r} ({state})>"


def _read(stderr: IO[bytes]) -> str:
    stderr.flush()
    stderr.seek(0)
    return stderr.read().decode("utf-8", "replace").strip()


def mount(
    source: PathLike | str,
    mountpoint: PathLike | None = None,
    *,
    ready_timeout: float = 60.0,
    **options: Any,
) -> Mount:
    """Mount `source` read-only at `mountpoint` and return once it answers.

    Args:
        source: a Blosc2 file, a folder tree of them, a store, or a URL
            (`s3://bucket/prefix/`, ...), as `blosc2fs mount` takes.
        mountpoint: an empty folder; None makes a temporary one, removed
            again by `unmount()`.
        ready_timeout: seconds to wait for the mount to answer.
        **options: `blosc2fs mount` flags as keywords: `cache_size="64M"`,
            `views=["npy", "chunks"]`, `allow_other=True`, `direct_io=True`,
            `exit_grace=1`; any flag `--foo-bar` of the binary is `foo_bar`.

    Raises:
        TypeError: an unknown option, or a value of the wrong kind (before
            anything runs).
        MountError: the mount was refused (missing source, mountpoint not
            empty, no FUSE, ...: the CLI's message) or did not answer in
            time. Nothing is left mounted or running then.
        FileNotFoundError: no blosc2fs binary.

    The mount lasts until `unmount()`, the end of a `with` block, or the
    interpreter's exit. A Python killed outright (SIGKILL) cannot clean up:
    `blosc2fs unmount MOUNTPOINT` ends such a mount and its daemon.
    """
    binary = _find_binary()
    flags = _options.flags(binary, options)
    made_dir = mountpoint is None
    where = tempfile.mkdtemp(prefix="blosc2fs-") if mountpoint is None else os.fspath(mountpoint)
    real = os.path.realpath(where)
    before = _daemon.device_of(real)
    stderr = tempfile.TemporaryFile(prefix="blosc2fs-daemon-")
    child: subprocess.Popen[bytes] | None = None
    try:
        child = subprocess.Popen(
            [binary, "mount", "--foreground", *flags, "--", os.fspath(source), real],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
            close_fds=True,
        )
        device = _wait_ready(child, real, before, stderr, ready_timeout)
        return Mount(
            Path(os.path.abspath(where)),
            real,
            device,
            child,
            stderr,
            binary,
            _options.exit_grace(options),
            made_dir,
        )
    except BaseException:
        _abandon(child, real, before, binary, _options.exit_grace(options))
        stderr.close()
        if made_dir:
            with contextlib.suppress(OSError):
                os.rmdir(real)
        raise


def _wait_ready(
    child: subprocess.Popen[bytes], real: str, before: int | None, stderr: IO[bytes], timeout: float
) -> int:
    """The mount's device once `real` is served by it; MountError when the
    daemon exits first or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    pause = 0.002
    while True:
        code = child.poll()
        if code is not None:
            message = _read(stderr) or f"blosc2fs mount exited with status {code}"
            raise MountError(message, code)
        device = _daemon.device_of(real)
        if device is not None and before is not None and device != before:
            return device
        if time.monotonic() > deadline:
            message = _read(stderr)
            raise MountError(
                f"the mount at {real} did not answer within {timeout:g} s" + (f": {message}" if message else "")
            )
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _abandon(child: subprocess.Popen[bytes] | None, real: str, before: int | None, binary: str, grace: float) -> None:
    """Stop a daemon whose mount failed or was interrupted, and unmount
    what it may have mounted (only a mount that was not there before)."""
    if child is None:
        return
    now = _daemon.device_of(real)
    ours = now is not None and before is not None and now != before
    # A dead mount (ENOTCONN) that was not there before is ours too.
    dead = before is not None and _daemon.is_dead_mount(real)
    _daemon.stop(_daemon.Daemon.of(child.pid), child, now if ours else None, real, binary, grace, unmount=ours or dead)


@contextlib.contextmanager
def mounted(
    source: PathLike | str,
    mountpoint: PathLike | None = None,
    **options: Any,
) -> Iterator[Path]:
    """Mount `source` for the `with` block; yields the mountpoint's path.

    When the block ends, by an exception or Ctrl-C too, the mount is
    unmounted and the daemon has exited before the next statement runs (a
    temporary mountpoint is removed). Arguments, options and errors are
    those of `mount()`.

    Example:
        >>> with blosc2fs.mounted("arrays/") as mnt:  # doctest: +SKIP
        ...     a = np.load(mnt / "temps.b2nd" / "data.npy")
    """
    handle = mount(source, mountpoint, **options)
    try:
        yield handle.path
    finally:
        handle.unmount()
