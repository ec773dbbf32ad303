"""`python -m blosc2fs ARGS...`: the bundled `blosc2fs` command with the same
arguments (for environments whose `bin/` is not on PATH). The process
becomes the binary (exec), so its exit status and signals are the binary's.
"""

from __future__ import annotations

import os
import sys

from ._binary import binary


def main() -> None:
    """Replace this process with `blosc2fs` and this process's arguments."""
    try:
        path = binary()
    except FileNotFoundError as e:
        sys.stderr.write(f"blosc2fs: {e}\n")
        sys.exit(127)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, [path, *sys.argv[1:]])


if __name__ == "__main__":
    main()
