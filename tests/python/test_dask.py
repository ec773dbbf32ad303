"""`blosc2fs.dask.MountOnWorkers` on a real LocalCluster of 2 worker
processes (one machine: one mount, shared), and the machine registry
beneath it: the daemon outlives the process that started it for as long as
another process uses the mount."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, Tuple

import blosc2
import numpy as np
import pytest
from conftest import FIXTURES, mounted_at, process_gone

ENTRY = json.loads((FIXTURES / "manifest.json").read_text())["dict_zstd_sparse"]  # 12000 int32


def partial_sum(mountpoint: str, part: int, parts: int) -> Tuple[int, int, int]:
    """(worker pid, mount device, sum of this part of the array) on a worker."""
    values = np.fromfile(Path(mountpoint) / ENTRY["path"] / "data", dtype=ENTRY["dtype"])
    n = len(values)
    piece = values[part * n // parts : (part + 1) * n // parts]
    return os.getpid(), os.stat(mountpoint).st_dev, int(piece.astype(np.int64).sum())


def registry(mountpoint: Path) -> Dict:
    from blosc2fs import _shared

    return json.loads(_shared.registry_file(os.path.realpath(mountpoint)).read_text())


def test_mount_on_two_worker_processes_sums_exactly(mount_lock: None, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    from blosc2fs.dask import MountOnWorkers

    expected = int(np.asarray(blosc2.open(str(FIXTURES / ENTRY["path"]))[...]).astype(np.int64).sum())
    mnt = tmp_path / "mnt"  # made by the plugin
    plugin = MountOnWorkers(str(FIXTURES), str(mnt), cache_size="16M")
    with (
        distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        client.register_plugin(plugin)
        workers = sorted(client.scheduler_info()["workers"])
        assert len(workers) == 2
        futures = [client.submit(partial_sum, str(mnt), i, 2, workers=[w], pure=False) for i, w in enumerate(workers)]
        results = client.gather(futures)
        assert len({pid for pid, _, _ in results}) == 2  # two processes read...
        assert len({dev for _, dev, _ in results}) == 1  # ...one mount
        assert sum(s for _, _, s in results) == expected
        state = registry(mnt)
        assert len(state["users"]) == 2 and state["mountpoint"] == os.path.realpath(mnt)
        daemon = state["daemon"]["pid"]
        assert not process_gone(daemon) and mounted_at(mnt)
        assert sum(line.split(" ")[1] == str(mnt) for line in Path("/proc/mounts").read_text().splitlines()) == 1
        client.unregister_worker_plugin(plugin.name)
        assert not mounted_at(mnt)
        assert process_gone(daemon)
    assert not mounted_at(mnt)


USER = textwrap.dedent(
    """
    import sys
    from blosc2fs import _shared
    source, mountpoint = sys.argv[1], sys.argv[2]
    state = _shared.acquire(source, mountpoint, {})
    print(state["daemon"]["pid"], flush=True)
    sys.stdin.readline()  # until told to leave
    _shared.release(mountpoint)
    print("left", flush=True)
    """
)


def test_the_mount_outlives_its_starter_while_another_uses_it(mount_lock: None, tmp_path: Path) -> None:
    mnt = tmp_path / "mnt"

    def user() -> "subprocess.Popen[str]":
        return subprocess.Popen(
            [sys.executable, "-c", USER, str(FIXTURES), str(mnt)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    first = user()
    daemon = int(first.stdout.readline())
    second = user()
    assert int(second.stdout.readline()) == daemon  # joined, not mounted again
    first.stdin.write("\n")
    first.stdin.flush()
    assert first.stdout.readline() == "left\n" and first.wait(30) == 0
    # The starter is gone; the mount is not, and still reads.
    assert mounted_at(mnt) and not process_gone(daemon)
    assert len((mnt / ENTRY["path"] / "data").read_bytes()) == ENTRY["size"]
    assert len(registry(mnt)["users"]) == 1
    second.stdin.write("\n")
    second.stdin.flush()
    assert second.stdout.readline() == "left\n" and second.wait(30) == 0
    assert not mounted_at(mnt) and process_gone(daemon)
    from blosc2fs import _shared

    assert not _shared.registry_file(os.path.realpath(mnt)).exists()


def test_a_killed_user_is_pruned(mount_lock: None, tmp_path: Path) -> None:
    mnt = tmp_path / "mnt"
    victim = subprocess.Popen(
        [sys.executable, "-c", USER, str(FIXTURES), str(mnt)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    daemon = int(victim.stdout.readline())
    victim.kill()
    victim.wait()
    from blosc2fs import _shared

    state = _shared.acquire(str(FIXTURES), str(mnt), {})  # joins the orphaned mount
    assert state["daemon"]["pid"] == daemon and len(state["users"]) == 1
    _shared.release(str(mnt))  # the last live user: unmounts
    assert not mounted_at(mnt) and process_gone(daemon)
