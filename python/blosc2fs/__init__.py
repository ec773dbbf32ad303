"""blosc2fs from Python: mount Blosc2 data as plain files for the length of
a `with` block, a handle, or a Dask cluster.

The package runs the `blosc2fs` binary installed with it (`bin/blosc2fs`
of the same environment, or `BLOSC2FS_BIN`); it needs neither numpy nor
python-blosc2, and reads nothing itself.

    import numpy as np, blosc2fs

    with blosc2fs.mounted("arrays/") as mnt:
        temps = np.load(mnt / "temps.b2nd" / "data.npy")

`mounted()` yields the mountpoint (a temporary folder unless one is given)
and always unmounts, and waits for the daemon to exit, when the block ends.
`mount()` returns a `Mount` handle (`.path`, `.stats()`, `.unmount()`).
Options are `blosc2fs mount` flags as keywords (`cache_size="64M"`,
`views=["npy", "chunks"]`, `allow_other=True`); a refused mount raises
`MountError` with the command's message. `blosc2fs.dask.MountOnWorkers`
mounts once per machine of a Dask cluster.
"""

from __future__ import annotations

from ._binary import binary
from ._mount import Mount, MountError, mount, mounted

__all__ = ["Mount", "MountError", "__version__", "binary", "mount", "mounted"]


def _version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - Python < 3.8
        return "unknown"
    try:
        return version("blosc2fs")
    except PackageNotFoundError:
        return "unknown"


__version__: str = _version()
