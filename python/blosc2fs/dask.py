"""`MountOnWorkers`: every machine of a Dask cluster gets the mount.

    from blosc2fs.dask import MountOnWorkers
    client.register_plugin(MountOnWorkers("s3://bucket/runs/", "/mnt/runs"))
    # now any task, on any worker, reads /mnt/runs/...

A worker plugin runs in every worker process, and a machine may run many:
the first worker of a machine mounts, the others join, the last to leave
(plugin removed, worker closed) unmounts ([_shared] keeps who uses what in
a locked file). A worker killed outright (no teardown) leaves its share
behind until the next worker of that machine joins or leaves, which prunes
it; if none ever does, `blosc2fs unmount MOUNTPOINT` ends the mount.
`distributed` is needed only here: importing `blosc2fs` does not import it.
"""

from __future__ import annotations

import os
from typing import Any

try:
    from distributed import WorkerPlugin  # type: ignore[import-not-found,unused-ignore]
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("blosc2fs.dask needs the distributed package: pip install 'blosc2fs[dask]'") from e

from . import _options, _shared
from ._binary import binary as _find_binary

__all__ = ["MountOnWorkers"]


class MountOnWorkers(WorkerPlugin):  # type: ignore[misc,unused-ignore]
    """A worker plugin that mounts `source` at `mountpoint` on each machine
    of the cluster, once per machine, for as long as one of its workers runs
    it.

    Args:
        source: what to mount, as every machine sees it (a URL, or a path on
            a shared filesystem; a relative path is taken from the client's
            working folder).
        mountpoint: where, the same path on every machine (created when
            missing).
        **options: `blosc2fs mount` flags as keywords, as in
            `blosc2fs.mount()`.

    Raises:
        TypeError: an unknown option (checked here when a blosc2fs binary
            is at hand, else on the workers).
    """

    def __init__(self, source: str | os.PathLike[str], mountpoint: str | os.PathLike[str], **options: Any) -> None:
        # Paths made absolute here: workers do not share the client's
        # working folder. URLs are kept as they are.
        text = os.fspath(source)
        self.source = text if "://" in text else os.path.abspath(text)
        self.mountpoint = os.path.abspath(os.fspath(mountpoint))
        self.options = dict(options)
        self.name = f"blosc2fs-mount:{self.mountpoint}"
        try:
            binary: str | None = _find_binary()
        except FileNotFoundError:
            binary = None
        if binary is not None:
            _options.flags(binary, self.options)

    def setup(self, worker: Any) -> None:
        """Join this machine's mount, making it when it is the first."""
        _shared.acquire(self.source, self.mountpoint, self.options)

    def teardown(self, worker: Any) -> None:
        """Leave this machine's mount; the last worker unmounts it."""
        _shared.release(self.mountpoint)
