"""The mount daemon as a process, and the mount as a kernel object: is it
alive, is it mounted, and stopping both for sure.

A daemon is named by its pid *and* its start time (/proc/PID/stat), so a
recycled pid is never taken for it (the Dask plugin keeps daemons started
by other processes in a file). A zombie counts as exited. Stopping is:
SIGTERM (the daemon detaches the mount at once and exits when its open
files are closed, or after `--exit-grace`), wait; SIGKILL if it is still
there; then, if the mount is still in the mount table (the daemon was
killed, or hung), a lazy unmount by `blosc2fs unmount`, by `umount -l`
(root) or `fusermount3 -u -z`: whatever this machine has.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Callable

__all__ = ["Daemon", "device_of", "is_mounted", "lazy_unmount", "stop"]


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command name (state first), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("ascii", "replace")
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


@dataclass(frozen=True)
class Daemon:
    """One process, as its pid and start time (clock ticks since boot)."""

    pid: int
    start: int

    @classmethod
    def of(cls, pid: int) -> Daemon | None:
        """The process `pid` now, or None when there is none."""
        fields = _stat_fields(pid)
        return None if fields is None else cls(pid, int(fields[19]))

    def alive(self) -> bool:
        """Whether this very process still runs (not exited, not a zombie)."""
        fields = _stat_fields(self.pid)
        return fields is not None and fields[0] not in ("Z", "X") and int(fields[19]) == self.start


def device_of(path: str) -> int | None:
    """st_dev of `path`, or None when it cannot be stat'ed."""
    try:
        return os.stat(path).st_dev
    except OSError:
        return None


def _unescape(field: str) -> str:
    """A mountinfo path field with its octal escapes (`\\040`) undone."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def is_mounted(device: int | None, path: str) -> bool:
    """Whether `path` (canonical) is a mount point in this process's mount
    table, of device `device` when it is known (another mount at the same
    place, or the same device number reused elsewhere, is not this one)."""
    wanted = None if device is None else f"{os.major(device)}:{os.minor(device)}"
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                fields = line.split(" ", 5)
                if _unescape(fields[4]) == path and (wanted is None or fields[2] == wanted):
                    return True
    except OSError:
        pass
    return False


def is_dead_mount(path: str) -> bool:
    """Whether `path` is a mount whose daemon is gone (ENOTCONN)."""
    try:
        os.stat(path)
    except OSError as e:
        return e.errno == errno.ENOTCONN
    return False


def lazy_unmount(binary: str, path: str) -> str | None:
    """Detach the mount at `path` lazily; None when done, else why not."""
    tries = [[binary, "unmount", path], ["umount", "-l", path], ["fusermount3", "-u", "-z", path]]
    errors = []
    for command in tries:
        try:
            result = subprocess.run(
                command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            errors.append(f"{command[0]}: {e}")
            continue
        if result.returncode == 0:
            return None
        errors.append(result.stderr.strip() or f"{command[0]} exited with status {result.returncode}")
    return "; ".join(errors)


def _wait(gone: Callable[[], bool], seconds: float) -> bool:
    """Poll `gone` until it is true or `seconds` pass; its last answer."""
    deadline = time.monotonic() + seconds
    while not gone():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def stop(
    daemon: Daemon | None,
    child: subprocess.Popen[bytes] | None,
    device: int | None,
    path: str,
    binary: str,
    grace: float,
    unmount: bool = True,
) -> str | None:
    """End the daemon and its mount at `path` (device `device`).

    `path` is canonical (resolved before the mount was made). `child` is the
    daemon's Popen when this process started it (it is then reaped). Returns None when both are gone, else what is left and why.
    """

    def exited() -> bool:
        if child is not None:
            return child.poll() is not None
        return daemon is None or not daemon.alive()

    def signal_daemon(sig: int) -> None:
        if exited():
            return
        try:
            if child is not None:
                child.send_signal(sig)  # (does nothing once it is reaped)
            elif daemon is not None:
                os.kill(daemon.pid, sig)
        except ProcessLookupError:
            pass

    signal_daemon(signal.SIGTERM)
    if not _wait(exited, grace + 10.0):
        signal_daemon(signal.SIGKILL)
        _wait(exited, 10.0)
    problems = []
    if not exited():
        pid = child.pid if child is not None else daemon.pid if daemon is not None else "?"
        problems.append(f"the daemon (pid {pid}) did not exit")
    if unmount and (is_mounted(device, path) or is_dead_mount(path)):
        why = lazy_unmount(binary, path)
        if why is not None or is_mounted(device, path):
            problems.append(f"{path} is still mounted: {why}")
    return "; ".join(problems) or None
