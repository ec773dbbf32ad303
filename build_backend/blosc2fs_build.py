"""PEP 517 build backend of blosc2fs: maturin's, with one default changed.

`pip wheel .` and `pip install .` reach maturin through its PEP 517 hooks,
which build for "this machine only": they pass `--compatibility off` and the
wheel is tagged `linux_x86_64` (PyPI refuses it, and nothing says the binary
runs elsewhere), whatever `[tool.maturin] compatibility` says. `maturin
build` itself honours that setting. So that every way of building gives the
same checked manylinux wheel, these hooks pass pyproject.toml's
`compatibility` to maturin unless the caller chose one already (pip's
`-C maturin.build-args=...` / `-C build-args=...`, or `MATURIN_PEP517_ARGS`).
Everything else is maturin's own hook, unchanged.
"""

from __future__ import annotations

import os
import shlex
from typing import Any, Dict, List, Mapping, Optional

import maturin  # type: ignore[import-untyped,unused-ignore]
from maturin import (  # noqa: F401  (re-exported hooks)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

_CHOSEN = ("--compatibility", "--manylinux")


def _names_compatibility(args: List[str]) -> bool:
    """Whether maturin arguments `args` choose a platform tag already."""
    return any(a in _CHOSEN or a.startswith(tuple(c + "=" for c in _CHOSEN)) for a in args)


def _with_compatibility(config_settings: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The config settings (or MATURIN_PEP517_ARGS, which maturin reads
    when the settings have no build args) with pyproject's compatibility
    added, unless they choose a tag already."""
    compatibility = maturin.get_config().get("compatibility")
    settings = dict(config_settings or {})
    key = next((k for k in ("maturin.build-args", "build-args") if k in settings), None)
    if key is not None:
        given = settings[key]
        args = shlex.split(given) if isinstance(given, str) else list(given)
        if compatibility and not _names_compatibility(args):
            settings[key] = args + ["--compatibility", str(compatibility)]
        return settings
    args = shlex.split(os.environ.get("MATURIN_PEP517_ARGS", ""))
    if compatibility and not _names_compatibility(args):
        os.environ["MATURIN_PEP517_ARGS"] = shlex.join(args + ["--compatibility", str(compatibility)])
    return settings


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[Mapping[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    """maturin's build_wheel, tagged as [tool.maturin] compatibility says."""
    settings = _with_compatibility(config_settings)
    name: str = maturin.build_wheel(wheel_directory, settings, metadata_directory)
    return name


def build_editable(
    wheel_directory: str,
    config_settings: Optional[Mapping[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    """maturin's build_editable, tagged as [tool.maturin] compatibility says."""
    settings = _with_compatibility(config_settings)
    name: str = maturin.build_editable(wheel_directory, settings, metadata_directory)
    return name
