"""The installed wheel without mounting: the command, `python -m`, the
package's import and its option mapping (every case exact)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import blosc2fs
import pytest
from blosc2fs import _options

VERSION_LINE = f"blosc2fs {blosc2fs.__version__}"


def test_no_rust_toolchain_is_reachable() -> None:
    # The lane's premise: what follows runs the wheel's binary, not a build.
    assert shutil.which("cargo") is None and shutil.which("rustc") is None
    assert "CARGO_HOME" not in os.environ and "RUSTUP_HOME" not in os.environ


def test_the_binary_is_the_wheels() -> None:
    scripts = Path(sysconfig.get_path("scripts"))
    assert blosc2fs.binary() == str(scripts / "blosc2fs")
    assert Path(blosc2fs.__file__).resolve().is_relative_to(Path(sysconfig.get_path("purelib")).resolve())
    assert (Path(blosc2fs.__file__).parent / "py.typed").is_file()


def test_version_three_ways() -> None:
    assert blosc2fs.__version__[0].isdigit()
    cli = subprocess.run(["blosc2fs", "--version"], capture_output=True, text=True, check=True)
    mod = subprocess.run([sys.executable, "-m", "blosc2fs", "--version"], capture_output=True, text=True, check=True)
    assert cli.stdout.splitlines()[0] == VERSION_LINE
    assert mod.stdout == cli.stdout


def test_python_m_passes_arguments_and_exit_status() -> None:
    bad = subprocess.run(
        [sys.executable, "-m", "blosc2fs", "info", "/nonexistent/x.b2nd"], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 1
    assert bad.stderr.startswith("blosc2fs: ") and "/nonexistent/x.b2nd" in bad.stderr


def test_man_page_and_completions_come_with_the_command() -> None:
    man = subprocess.run(["blosc2fs", "man"], capture_output=True, text=True, check=True).stdout
    assert '.TH blosc2fs 1  "blosc2fs ' in man
    mount_page = subprocess.run(["blosc2fs", "man", "mount"], capture_output=True, text=True, check=True).stdout
    assert ".TH blosc2fs-mount 1" in mount_page
    bash = subprocess.run(["blosc2fs", "completions", "bash"], capture_output=True, text=True, check=True).stdout
    assert "complete -F _blosc2fs" in bash and "--cache-size" in bash


def test_import_needs_neither_numpy_nor_blosc2() -> None:
    code = "import sys, blosc2fs, blosc2fs.__main__; assert not {'numpy', 'blosc2', 'distributed'} & set(sys.modules), sorted(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_options_become_flags() -> None:
    flags = _options.flags(
        blosc2fs.binary(),
        {
            "cache_size": "64M",
            "views": ["npy", "chunks"],
            "allow_other": True,
            "direct_io": True,
            "anonymous": False,
            "threads": 3,
            "exit_grace": 0.5,
            "uid": None,
            "readahead_kb": 128,
        },
    )
    assert flags == [
        "--cache-size", "64M", "--views", "npy,chunks", "--direct-io", "--threads", "3",
        "--exit-grace", "0.5", "--readahead-kb", "128", "-o", "allow_other",
    ]  # fmt: skip


def test_every_long_flag_of_mount_is_a_keyword() -> None:
    known = _options.known_flags(blosc2fs.binary())
    helptext = subprocess.run(["blosc2fs", "mount", "--help"], capture_output=True, text=True, check=True).stdout
    longs = {w.split("<")[0].rstrip(".") for w in helptext.split() if w.startswith("--")}
    assert {flag for flag, _ in known.values()} == longs - {"--foreground", "--help"}
    assert known["cache_size"] == ("--cache-size", True) and known["direct_io"] == ("--direct-io", False)


def test_unknown_options_are_refused_before_anything_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # where a mountpoint would be made
    with pytest.raises(TypeError) as e:
        with blosc2fs.mounted("/nonexistent", cache_sise="1M", fore_ground=True):
            pytest.fail("mounted")
    assert str(e.value).startswith("unknown blosc2fs mount option(s): cache_sise, fore_ground (known: ")
    with pytest.raises(TypeError, match="unknown blosc2fs mount option\\(s\\): foreground "):
        blosc2fs.mount("/nonexistent", tmp_path, foreground=True)
    with pytest.raises(TypeError, match="option direct_io is a switch"):
        blosc2fs.mount("/nonexistent", tmp_path, direct_io="yes")
    with pytest.raises(TypeError, match="option cache_size takes a value"):
        blosc2fs.mount("/nonexistent", tmp_path, cache_size=True)
    assert list(temp.iterdir()) == []


def test_blosc2fs_bin_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BLOSC2FS_BIN", str(tmp_path / "none"))
    with pytest.raises(FileNotFoundError, match="BLOSC2FS_BIN="):
        blosc2fs.binary()
    monkeypatch.setenv("BLOSC2FS_BIN", "/bin/true")
    assert blosc2fs.binary() == "/bin/true"
