"""Python keywords → `blosc2fs mount` flags.

The flags are not listed here: they are read from the binary's own `mount
--help` (once per binary), so every flag the binary has is a keyword, with
no table to keep in step (`cache_size="64M"` → `--cache-size 64M`;
`foo_bar=...` → `--foo-bar ...` for any flag `--foo-bar` the binary
knows). A flag that takes no value is a bool keyword (`direct_io=True` →
`--direct-io`, False leaves it out); a list or tuple is joined with commas
(`views=["npy", "chunks"]` → `--views npy,chunks`); None leaves a flag out.
Mount options that exist only as `-o NAME` (`allow_other`, `allow_root`)
are bool keywords too. An unknown keyword, or a value of the wrong kind,
raises before anything runs. `foreground` is not a keyword: the package
always runs the daemon in the foreground as its own child.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from collections.abc import Mapping
from typing import Any

__all__ = ["exit_grace", "flags", "known_flags"]

# `-o` options with no flag of their own, given as bool keywords.
_O_ONLY = ("allow_other", "allow_root")
# Flags the package sets itself, or that are not mount options.
_RESERVED = ("foreground", "help", "version")
# `      --cache-size <CACHE_SIZE>` / `  -f, --foreground` / `  -v, --verbose...`
_FLAG_LINE = re.compile(r"^\s+(?:-\w, )?--([a-z][a-z0-9-]*)(?: <[A-Z0-9_]+>)?(\.\.\.)?\s*$")


@functools.cache
def known_flags(binary: str) -> dict[str, tuple[str, bool]]:
    """The long flags of `binary mount`: keyword → (flag, takes a value).

    `--verbose` is a counted flag: its keyword takes an int (the number of
    `-v`).
    """
    result = subprocess.run(
        [binary, "mount", "--help"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=30,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"{binary} mount --help failed: {result.stderr.strip()}")
    known: dict[str, tuple[str, bool]] = {}
    for line in result.stdout.splitlines():
        match = _FLAG_LINE.match(line)
        if match and match.group(1) not in _RESERVED:
            name = match.group(1)
            known[name.replace("-", "_")] = ("--" + name, "<" in line)
    return known


def _text(name: str, value: Any) -> str:
    """One flag value as the command line spells it."""
    if isinstance(value, bool):
        raise TypeError(f"option {name} takes a value, not {value!r}")
    if isinstance(value, (list, tuple)):
        return ",".join(_text(name, v) for v in value)
    if isinstance(value, (str, int, float, os.PathLike)):
        return os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    raise TypeError(f"option {name}: cannot pass a {type(value).__name__} ({value!r})")


def flags(binary: str, options: Mapping[str, Any]) -> list[str]:
    """The `blosc2fs mount` arguments for the keyword `options`.

    Raises:
        TypeError: an option the binary does not know (all of them named),
            or a value of the wrong kind.
    """
    known = known_flags(binary)
    unknown = sorted(k for k in options if k not in known and k not in _O_ONLY)
    if unknown:
        raise TypeError(
            f"unknown blosc2fs mount option(s): {', '.join(unknown)} (known: {', '.join(sorted([*known, *_O_ONLY]))})"
        )
    args: list[str] = []
    o_options: list[str] = []
    for name, value in options.items():
        if value is None:
            continue
        if name in _O_ONLY or not known[name][1]:
            if name == "verbose" and isinstance(value, int) and not isinstance(value, bool):
                args += ["-v"] * value
                continue
            if not isinstance(value, bool):
                raise TypeError(f"option {name} is a switch: pass True or False, not {value!r}")
            if value:
                (o_options if name in _O_ONLY else args).append(name if name in _O_ONLY else known[name][0])
            continue
        args += [known[name][0], _text(name, value)]
    if o_options:
        args += ["-o", ",".join(o_options)]
    return args


def exit_grace(options: Mapping[str, Any], default: float = 5.0) -> float:
    """The `--exit-grace` the daemon was given (seconds)."""
    value = options.get("exit_grace")
    try:
        return float(value) if value is not None else default
    except (TypeError, ValueError):
        return default
