#!/usr/bin/env bash
# Create (or reuse) the Python virtualenv holding the fixture oracle: python-blosc2 4.14.1
# (C-Blosc2 3.3.5) plus numpy, zarr<3, msgpack, Pillow (preview.png tests), the legacy readers
# of the sidecar-header tests (pynrrd, SimpleITK, rasterio with its bundled GDAL) and the servers
# of the remote tests (moto[server] for an S3 API, rangehttpserver for HTTP Range).  Idempotent;
# prints the venv path.
#
#   VENV=/some/where scripts/setup_venv.sh     # default: <repo>/.venv
#   "$(scripts/setup_venv.sh)"/bin/python scripts/gen_fixtures.py tests/fixtures
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$REPO/.venv}"

ok() {
    "$VENV/bin/python" -c "import blosc2; assert blosc2.__version__ == '4.14.1'; import PIL, nrrd, SimpleITK, rasterio" >/dev/null 2>&1
}

if ! ok; then
    if [ ! -x "$VENV/bin/python" ]; then
        python3 -m venv "$VENV" >&2
    fi
    "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
    "$VENV/bin/python" -m pip install --quiet "blosc2==4.14.1" numpy "zarr<3" msgpack Pillow \
        "pynrrd==1.1.3" "SimpleITK==2.5.7" "rasterio==1.4.4" >&2
    ok || { echo "setup_venv.sh: blosc2 4.14.1 not importable from $VENV" >&2; exit 1; }
fi

# Real servers for tests/remote.rs (skipped there when missing).
if ! "$VENV/bin/python" -c "import moto, boto3, RangeHTTPServer" >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip install --quiet "moto[server]" rangehttpserver >&2 \
        || echo "setup_venv.sh: moto[server]/rangehttpserver not installed: remote tests will skip" >&2
fi

echo "$VENV"
