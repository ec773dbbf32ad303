#!/usr/bin/env bash
# Run every test of blosc2fs on a fresh machine: installs what the tests use
# (fuse3 for fusermount3/mount.fuse3, attr for getfattr), creates the Python
# virtualenv with python-blosc2 4.14.1, builds, and runs the test suite.
# Mount tests need root (or a user allowed to mount FUSE).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && ! command -v fusermount3 >/dev/null 2>&1; then
    echo "== installing fuse3 and attr"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null && apt-get install -y -qq fuse3 attr >/dev/null
fi

echo "== python virtualenv"
VENV="$(scripts/setup_venv.sh | tail -n 1)"
export BLOSC2FS_PYTHON="$VENV/bin/python"

echo "== build"
cargo build --release --locked -j2

echo "== tests"
# Mount tests serialise themselves; the rest run two at a time.
cargo test --release --locked -j2 -- --test-threads=2
