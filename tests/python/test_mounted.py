"""`blosc2fs.mounted` and `blosc2fs.mount` for real: every array of the
fixture corpus reads exactly through a mount, nothing stays mounted or
running after the block (also after an exception or Ctrl-C inside it),
refused mounts raise at once with the command's message."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import blosc2
import blosc2fs
import numpy as np
import pytest
from conftest import FIXTURES, mounted_at, process_gone


def corpus() -> List[Tuple[str, Dict]]:
    """(path under tests/fixtures, manifest entry) of every real
    python-blosc2 file with values: the main fixtures and the ZFP ones."""
    cases = []
    for manifest in (FIXTURES / "manifest.json", FIXTURES / "zfp" / "manifest.json"):
        folder = manifest.parent.relative_to(FIXTURES)
        for entry in json.loads(manifest.read_text()).values():
            cases.append((str(folder / entry["path"]), entry))
    return cases


CORPUS = corpus()


def python_blosc2_bytes(path: Path, entry: Dict) -> "bytes | None":
    """The array's C-order bytes as python-blosc2 4.14.1 decodes them, or
    None where it cannot be the oracle: legacy Caterva files (whose chunks
    are not in C order), files it cannot open, and files whose manifest says
    its slicing is wrong (DELTA on disk, dictionaries) or that have
    uninitialized chunks (undefined there; zeros here)."""
    notes = entry.get("notes", "")
    if entry.get("kind") == "caterva" or "arr[...] returns different data" in notes or "uninitialized" in notes:
        return None
    try:
        array = blosc2.open(str(path), mode="r")
    except Exception:  # noqa: BLE001 - python-blosc2 refuses some valid files
        return None
    if isinstance(array, blosc2.NDArray):
        if blosc2.Filter.DELTA in array.schunk.cparams.filters:
            # Its slicing of on-disk DELTA arrays is wrong at times, not
            # only where the manifest noted it (a Debian 11 run found
            # ndmean2_delta_shuffle_f4 so): the manifest's sha256 judges them.
            return None
        values = array[()] if array.ndim == 0 else array[...]
        return np.ascontiguousarray(values).tobytes()
    # A plain frame: its chunks in order.
    return b"".join(array.decompress_chunk(i) for i in range(array.nchunks))


@pytest.fixture(scope="module")
def fixtures_mount(mount_lock: None) -> Iterator[Path]:
    with blosc2fs.mounted(FIXTURES, views=["npy"]) as mnt:
        yield mnt


@pytest.mark.parametrize("relpath,entry", CORPUS, ids=[c[0] for c in CORPUS])
def test_every_fixture_reads_exactly(fixtures_mount: Path, relpath: str, entry: Dict) -> None:
    data = (fixtures_mount / relpath / "data").read_bytes()
    assert len(data) == entry["size"]
    assert hashlib.sha256(data).hexdigest() == entry["sha256"]
    oracle = python_blosc2_bytes(FIXTURES / relpath, entry)
    if oracle is not None:
        assert data == oracle


def test_the_corpus_is_the_whole_corpus() -> None:
    # Every .b2nd/.b2frame/.caterva file of the two folders is in a manifest.
    on_disk = {
        str(p.relative_to(FIXTURES))
        for folder in (FIXTURES, FIXTURES / "zfp")
        for pattern in ("*.b2nd", "*.b2frame", "*.caterva")
        for p in folder.glob(pattern)
    }
    assert on_disk == {c[0] for c in CORPUS}
    assert len(CORPUS) > 150


def test_python_blosc2_is_the_oracle_of_most() -> None:
    # The exact comparison above is not vacuous: python-blosc2 decodes most of them.
    decoded = sum(python_blosc2_bytes(FIXTURES / p, e) is not None for p, e in CORPUS)  # (DELTA arrays: by sha256 only)
    assert decoded >= len(CORPUS) - 30, decoded


def test_notebook_idiom_and_cleanup(mount_lock: None) -> None:
    entry = json.loads((FIXTURES / "manifest.json").read_text())["dict_zstd_sparse"]
    with blosc2fs.mounted(FIXTURES) as mnt:
        assert isinstance(mnt, Path) and mounted_at(mnt)
        a = np.fromfile(mnt / entry["path"] / "data", dtype=entry["dtype"]).reshape(entry["shape"])
        b = np.load(mnt / entry["path"] / "data.npy", mmap_mode="r")
        assert np.array_equal(a, b)
        assert np.array_equal(a, blosc2.open(str(FIXTURES / entry["path"]))[...])
        pid = _daemon_of(mnt)
    assert not mounted_at(mnt) and not mnt.exists()  # the temporary mountpoint is removed too
    assert process_gone(pid)


def _cmdline(pid: str) -> List[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[1:]
    except OSError:
        return []


def test_handle_stats_and_unmount(mount_lock: None, tmp_path: Path) -> None:
    where = tmp_path / "mnt"
    where.mkdir()
    handle = blosc2fs.mount(FIXTURES / "clevel1_lz4.b2nd", where, cache_size="8M")
    with handle:
        assert handle.path == where and handle.mounted and mounted_at(where)
        stats = handle.stats()
        assert stats["cache_budget"] == 8 << 20 and stats["read_errors"] == 0
        size = len((where / "data").read_bytes())
        assert size == json.loads((FIXTURES / "manifest.json").read_text())["clevel1_lz4"]["size"]
        assert handle.stats()["bytes_served"] >= size
    assert not handle.mounted and not mounted_at(where) and process_gone(handle.pid)
    assert where.is_dir() and list(where.iterdir()) == []  # a given mountpoint stays
    handle.unmount()  # idempotent


class Boom(Exception):
    pass


def test_exception_inside_the_block_unmounts_and_ends_the_daemon(mount_lock: None, tmp_path: Path) -> None:
    with pytest.raises(Boom):
        with blosc2fs.mounted(FIXTURES, tmp_path) as mnt:
            pid = _daemon_of(mnt)
            with open(mnt / "clevel1_lz4.b2nd" / "data", "rb") as f:
                f.read(10)
                raise Boom()
    assert not mounted_at(tmp_path) and process_gone(pid)


def test_ctrl_c_inside_the_block_unmounts_and_ends_the_daemon(mount_lock: None, tmp_path: Path) -> None:
    # Python raises KeyboardInterrupt only where SIGINT was not ignored at its
    # start, and a run launched in the background (`cmd &` in a script)
    # inherits it ignored: Ctrl-C at a terminal is what this test plays.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _ctrl_c_inside_the_block(tmp_path)
    finally:
        signal.signal(signal.SIGINT, previous)


def _ctrl_c_inside_the_block(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt):
        with blosc2fs.mounted(FIXTURES, tmp_path, exit_grace=1) as mnt:
            pid = _daemon_of(mnt)
            f = open(mnt / "clevel1_lz4.b2nd" / "data", "rb")  # still open at the unmount
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
    with pytest.raises(OSError):  # the daemon served it for exit_grace, then left
        f.read(10)
    with contextlib.suppress(OSError):  # (its flush cannot reach the daemon either)
        f.close()
    assert not mounted_at(tmp_path) and process_gone(pid)


def _daemon_of(mnt: Path) -> int:
    """The pid of the daemon serving `mnt` (its command line names it)."""
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and str(mnt) in _cmdline(p) and "mount" in _cmdline(p)]
    assert len(pids) == 1, pids
    return pids[0]


def test_missing_source_raises_at_once(tmp_path: Path) -> None:
    t0 = time.monotonic()
    with pytest.raises(blosc2fs.MountError) as e:
        with blosc2fs.mounted(tmp_path / "nope", tmp_path / "mnt"):
            pytest.fail("mounted")
    assert time.monotonic() - t0 < 10
    assert e.value.message == f"blosc2fs: source {tmp_path / 'nope'} does not exist"
    assert e.value.returncode == 1 and str(e.value) == e.value.message


def test_missing_source_with_a_temporary_mountpoint_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    with pytest.raises(blosc2fs.MountError, match="does not exist"):
        blosc2fs.mount(tmp_path / "nope")
    assert list(temp.iterdir()) == []


def test_mountpoint_not_empty_raises(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(blosc2fs.MountError) as e:
        blosc2fs.mount(FIXTURES, tmp_path)
    assert e.value.message == f"blosc2fs: mountpoint {tmp_path} is not empty"
    assert not mounted_at(tmp_path) and (tmp_path / "file").read_text() == "x"


def test_a_refused_url_raises_its_message(tmp_path: Path) -> None:
    # A URL source: refused by the command's checks of URLs, with its message.
    with pytest.raises(blosc2fs.MountError) as e:
        blosc2fs.mount("http://127.0.0.1:9/dir/", tmp_path)
    assert "a web server cannot be listed" in e.value.message
    assert not mounted_at(tmp_path)


def test_relative_source_and_a_mountpoint_with_spaces(
    mount_lock: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = tmp_path / "my arrays\tand tabs"
    where.mkdir()
    monkeypatch.chdir(FIXTURES)
    entry = json.loads((FIXTURES / "manifest.json").read_text())["clevel1_lz4"]
    with blosc2fs.mounted(".", where) as mnt:
        assert mounted_at(where)  # /proc/mounts escapes the space and the tab
        assert hashlib.sha256((mnt / entry["path"] / "data").read_bytes()).hexdigest() == entry["sha256"]
        pid = _daemon_of(mnt)
    assert not mounted_at(where) and process_gone(pid) and where.is_dir()


def test_unmount_after_the_daemon_was_killed(mount_lock: None, tmp_path: Path) -> None:
    # The fallback: SIGTERM finds no daemon, the dead mount is detached lazily.
    handle = blosc2fs.mount(FIXTURES, tmp_path)
    os.kill(handle.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not process_gone(handle.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(OSError):  # ENOTCONN: a dead mount
        os.listdir(tmp_path)
    assert mounted_at(tmp_path)
    handle.unmount()
    assert not mounted_at(tmp_path) and os.listdir(tmp_path) == [] and not handle.mounted


NO_FUSE = """
import sys, blosc2fs
try:
    blosc2fs.mount(sys.argv[1], sys.argv[2])
except blosc2fs.MountError as e:
    print(e.message)
"""


def test_no_fuse_raises_the_commands_message(tmp_path: Path) -> None:
    # A machine without FUSE: a mount namespace whose /dev holds only null.
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) to hide /dev/fuse")
    hide = 'mount -t tmpfs tmpfs /dev && mknod -m 666 /dev/null c 1 3 && exec "$0" -c "$1" "$2" "$3"'
    t0 = time.monotonic()
    out = subprocess.run(
        [
            "unshare",
            "-m",
            "--propagation",
            "private",
            "sh",
            "-c",
            hide,
            sys.executable,
            NO_FUSE,
            str(FIXTURES),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert time.monotonic() - t0 < 10
    assert out.stdout == (
        "blosc2fs: FUSE is not available: /dev/fuse does not exist; load the fuse module (modprobe fuse),"
        " or in a container pass the device (--device /dev/fuse)\n"
    ), out.stderr
    assert not mounted_at(tmp_path) and os.listdir(tmp_path) == []
