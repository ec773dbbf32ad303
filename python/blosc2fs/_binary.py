"""Where the `blosc2fs` binary is.

The wheel carries the binary as a script (maturin's `bindings = "bin"`), so
it lands in the `bin/` of the environment the package was installed into,
which need not be on PATH (a notebook kernel started from a venv's python).
So that environment's scripts folder is looked at first, then the user
scheme's (`pip install --user`), then PATH. `BLOSC2FS_BIN` overrides all
of them (a development build: `BLOSC2FS_BIN=target/release/blosc2fs`).
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

__all__ = ["binary"]

_NAME = "blosc2fs"


def _candidates() -> list[Path]:
    """The folders a wheel install may have put the binary in, most likely first."""
    folders: list[Path] = []
    for scheme in (None, f"{os.name}_user"):
        try:
            path = sysconfig.get_path("scripts") if scheme is None else sysconfig.get_path("scripts", scheme)
        except KeyError:
            continue
        if path and Path(path) not in folders:
            folders.append(Path(path))
    return folders


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def binary() -> str:
    """The path of the `blosc2fs` executable to run.

    Raises:
        FileNotFoundError: `BLOSC2FS_BIN` names no executable file, or no
            binary was found at all.
    """
    override = os.environ.get("BLOSC2FS_BIN")
    if override:
        if not _runnable(Path(override)):
            raise FileNotFoundError(f"BLOSC2FS_BIN={override} is not an executable file")
        return override
    for folder in _candidates():
        if _runnable(folder / _NAME):
            return str(folder / _NAME)
    found: str | None = shutil.which(_NAME)
    if found:
        return found
    raise FileNotFoundError(
        "the blosc2fs binary was not found (it is installed with the blosc2fs wheel "
        "beside python, or set BLOSC2FS_BIN to its path)"
    )
