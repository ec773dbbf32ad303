"""PEP 517 build backend of blosc2fs: maturin's, with the manylinux wheel
as the default on x86-64 glibc Linux.

`pip wheel .` and `pip install .` (and pip building the sdist) reach maturin
through its PEP 517 hooks, which build for "this machine only": they pass
`--compatibility off` and the wheel is tagged `linux_x86_64` (PyPI refuses
it, and nothing says the binary runs elsewhere), whatever `[tool.maturin]
compatibility` says. And the binary linked by this machine's own toolchain
needs the glibc it was built against. So on x86-64 Linux with glibc, unless
the caller chose a tag already (pip's `-C maturin.build-args=...` /
`-C build-args=...`, or `MATURIN_PEP517_ARGS`), these hooks
- add `ziglang` to the build requirements (`get_requires_for_build_wheel`,
  only where zig is used: an environment marker in `[build-system] requires`
  cannot tell glibc from musl, and would have pip fetch 100 MB of zig for
  nothing on musl, or when the caller chose a tag);
- pass `--zig --compatibility <[tool.maturin] compatibility>` to maturin,
  which then links with zig against glibc 2.17's symbols and checks the
  binary against that tag;
- point cargo-zigbuild at this interpreter (`CARGO_ZIGBUILD_PYTHON_PATH`),
  the one that has ziglang (`python3` on PATH may be another).
Elsewhere (aarch64, musl, other systems) maturin's own default stays: a
wheel for this machine, built with its own C compiler, which is what pip
wants when it builds the sdist there. Everything else is maturin's own hook.
"""

from __future__ import annotations

import os
import platform
import shlex
import struct
import sys
from typing import Any, Dict, List, Mapping, Optional, Tuple

import maturin  # type: ignore[import-untyped,unused-ignore]
from maturin import (  # noqa: F401  (re-exported hooks)
    build_sdist,
    get_requires_for_build_sdist,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

_CHOSEN = ("--compatibility", "--manylinux")
# The zig the manylinux build was tested with (docs/design.md, "The Python wheel").
ZIGLANG = "ziglang>=0.14.1,<0.15"
_SETTING_KEYS = ("maturin.build-args", "build-args")


def _names_compatibility(args: List[str]) -> bool:
    """Whether maturin arguments `args` choose a platform tag already."""
    return any(a in _CHOSEN or a.startswith(tuple(c + "=" for c in _CHOSEN)) for a in args)


def zig_manylinux() -> bool:
    """Whether this build links with zig for the manylinux tag: 64-bit
    Python on x86-64 Linux with glibc (musl has no manylinux tag; other
    machines build for themselves)."""
    return (
        sys.platform.startswith("linux")
        and platform.machine() == "x86_64"
        and struct.calcsize("P") == 8
        and platform.libc_ver()[0] == "glibc"
    )


def _given_args(config_settings: Optional[Mapping[str, Any]]) -> Tuple[Optional[str], List[str]]:
    """(the config settings key holding maturin's arguments, or None when
    they come from MATURIN_PEP517_ARGS, which maturin reads when the
    settings have none; those arguments)."""
    settings = dict(config_settings or {})
    key = next((k for k in _SETTING_KEYS if k in settings), None)
    if key is None:
        return None, shlex.split(os.environ.get("MATURIN_PEP517_ARGS", ""))
    given = settings[key]
    return key, shlex.split(given) if isinstance(given, str) else list(given)


def _uses_zig(config_settings: Optional[Mapping[str, Any]]) -> bool:
    """Whether the build adds `--zig` (or the caller asked for it)."""
    args = _given_args(config_settings)[1]
    return "--zig" in args or (zig_manylinux() and not _names_compatibility(args))


def _with_manylinux(config_settings: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The config settings (or MATURIN_PEP517_ARGS) with `--zig
    --compatibility <pyproject's>` added on x86-64 glibc Linux, unless they
    choose a tag already."""
    settings = dict(config_settings or {})
    key, args = _given_args(config_settings)
    if zig_manylinux() and not _names_compatibility(args):
        compatibility = maturin.get_config().get("compatibility") or "manylinux2014"
        args = args + (["--zig"] if "--zig" not in args else []) + ["--compatibility", str(compatibility)]
        if key is None:
            os.environ["MATURIN_PEP517_ARGS"] = shlex.join(args)
        else:
            settings[key] = args
    if "--zig" in args:
        os.environ.setdefault("CARGO_ZIGBUILD_PYTHON_PATH", sys.executable)
        _allow_512_bit_vectors()
    return settings


# C flags for the x86-64 target as cc-rs reads them (the target's own
# variable first, then CFLAGS).
_TARGET_CFLAGS = "CFLAGS_x86_64_unknown_linux_gnu"


def _allow_512_bit_vectors() -> None:
    """Let zig's clang compile OpenZL's AVX-512 kernels (openzl-sys-rs).

    Those functions enable AVX-512 by a `target` attribute that does not
    name `evex512`, which clang 18 and later (zig 0.14's) then refuse to
    use 512-bit vectors in. `-mevex512` only allows them where AVX-512 is
    enabled, so nothing else of the build changes; gcc, used outside zig
    builds, never sees it."""
    if not zig_manylinux():
        return
    flags = os.environ.get(_TARGET_CFLAGS, os.environ.get("CFLAGS", ""))
    if "-mevex512" not in flags.split():
        os.environ[_TARGET_CFLAGS] = (flags + " -mevex512").strip()


def get_requires_for_build_wheel(config_settings: Optional[Mapping[str, Any]] = None) -> List[str]:
    """maturin's build requirements, plus ziglang where the build links with zig."""
    requires: List[str] = list(maturin.get_requires_for_build_wheel(config_settings))
    if _uses_zig(config_settings):
        requires.append(ZIGLANG)
    return requires


def get_requires_for_build_editable(config_settings: Optional[Mapping[str, Any]] = None) -> List[str]:
    """As for a wheel."""
    return get_requires_for_build_wheel(config_settings)


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[Mapping[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    """maturin's build_wheel, linked with zig and tagged manylinux on x86-64 glibc Linux."""
    settings = _with_manylinux(config_settings)
    name: str = maturin.build_wheel(wheel_directory, settings, metadata_directory)
    return name


def build_editable(
    wheel_directory: str,
    config_settings: Optional[Mapping[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    """maturin's build_editable, as build_wheel."""
    settings = _with_manylinux(config_settings)
    name: str = maturin.build_editable(wheel_directory, settings, metadata_directory)
    return name
