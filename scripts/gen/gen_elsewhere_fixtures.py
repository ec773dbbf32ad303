#!/usr/bin/env python3
"""Fixtures for files whose values blosc2fs must not serve, written by python-blosc2 4.14.1.

Usage: gen_elsewhere_fixtures.py OUTDIR

Writes into OUTDIR (tests/fixtures/elsewhere/ in the repository):

  a.b2nd, b.b2nd        small operands (10x10 f8)
  expr.b2nd             (a * 2 + b).save(): metalayer b2o, recipe in vlmeta b2o
  lazyarray.b2nd        a LazyArray saved the pre-b2o way (metalayer LazyArray, vlmeta
                        _LazyArray), which python-blosc2 4.14.1 still writes when it cannot
                        build a b2o carrier (a UDF whose source inspect cannot find)
  proxy.b2nd            the cache of blosc2.Proxy(a) with two rows fetched
  proxy_c2.b2nd         a Proxy cache as older python-blosc2 wrote it for a Caterva2 source:
                        proxy-source urlpath = [path, urlbase, auth token]
  hdf5_placeholder.b2nd a Caterva2 HDF5 placeholder (vlmeta _ftype = "hdf5", _dsetname)
  codec200.b2nd         compressed with a codec registered in Python under id 200
  openzl38.b2nd         the same file with the codec id rewritten to 38 (openzl), as the
                        blosc2-openzl plugin would have written it (header bytes only)
  filter200.b2nd        filtered with a filter registered in Python under id 200

and manifest.json: for each file, what blosc2fs must say ("elsewhere": the marker, or
"unsupported": the expected message) and, for the ordinary operands, the sha256 of their
bytes from the numpy source. Deterministic apart from nothing: no random data.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from typing import Any

import blosc2
import numpy as np

ORACLE_VERSION = "4.14.1"


def sha256(b: Any) -> Any:
    return hashlib.sha256(b).hexdigest()


def main(out: Any) -> None:
    assert blosc2.__version__ == ORACLE_VERSION, blosc2.__version__
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    os.chdir(out)
    manifest = {}

    a_np = np.arange(100, dtype="<f8").reshape(10, 10)
    b_np = np.linspace(-1, 1, 100, dtype="<f8").reshape(10, 10)
    a = blosc2.asarray(a_np, urlpath="a.b2nd", mode="w")
    b = blosc2.asarray(b_np, urlpath="b.b2nd", mode="w")
    manifest["a.b2nd"] = {"sha256": sha256(a_np.tobytes()), "size": a_np.nbytes}
    manifest["b.b2nd"] = {"sha256": sha256(b_np.tobytes()), "size": b_np.nbytes}

    (a * 2 + b).save(urlpath="expr.b2nd")
    manifest["expr.b2nd"] = {
        "elsewhere": "metalayer b2o",
        "expression": "((o0 * 2) + o1)",
        "operands": ["a.b2nd", "b.b2nd"],
    }

    # A UDF defined through exec has no source inspect can find, so python-blosc2 4.14.1
    # falls back to the LazyArray metalayer it used before b2o.
    scope: dict[str, Any] = {}
    exec("def plus_one(inputs, output, offset):\n    output[:] = inputs[0] + 1\n", scope)
    blosc2.lazyudf(scope["plus_one"], (a,), dtype="f8").save(urlpath="lazyarray.b2nd")
    manifest["lazyarray.b2nd"] = {"elsewhere": "metalayer LazyArray", "operands": ["a.b2nd"]}

    proxy = blosc2.Proxy(a, urlpath="proxy.b2nd", mode="w")
    _ = proxy[0:2]
    manifest["proxy.b2nd"] = {"elsewhere": "metalayer proxy-source"}

    token = "c2-token-DO-NOT-SHOW"
    c2 = blosc2.empty(
        (10, 10),
        dtype="<f8",
        urlpath="proxy_c2.b2nd",
        mode="w",
        meta={
            "proxy-source": {
                "source_kind": "caterva2",
                "urlpath": ["root/a.b2nd", "https://cat2.example.org/", token],
                "local_abspath": None,
                "caterva2_env": False,
            }
        },
    )
    del c2
    manifest["proxy_c2.b2nd"] = {"elsewhere": "metalayer proxy-source", "secret": token}

    h5 = blosc2.empty((20,), dtype="<f4", urlpath="hdf5_placeholder.b2nd", mode="w")
    h5.schunk.vlmeta["_ftype"] = "hdf5"
    h5.schunk.vlmeta["_dsetname"] = "/grp/temps"
    del h5
    manifest["hdf5_placeholder.b2nd"] = {"elsewhere": "vlmeta _ftype = hdf5"}

    # A user codec (id 200) that C-Blosc2 calls back into Python: it keeps the low byte of
    # each 4-byte item (the data below fits in one byte), so a stream is a quarter of its size.
    def enc(src: Any, dst: Any, meta: Any, schunk: Any) -> Any:
        kept = src[::4]
        dst[: len(kept)] = kept
        return len(kept)

    def dec(src: Any, dst: Any, meta: Any, schunk: Any) -> Any:
        dst[:] = 0
        dst[::4] = src[: len(dst) // 4]
        return len(dst)

    blosc2.register_codec("reverse200", 200, enc, dec)
    c_np = np.arange(64, dtype="<i4")
    cp = blosc2.CParams(codec=200, filters=[], splitmode=blosc2.SplitMode.NEVER_SPLIT, nthreads=1)
    written = blosc2.asarray(c_np, urlpath="codec200.b2nd", mode="w", cparams=cp, dparams=blosc2.DParams(nthreads=1))
    assert np.array_equal(written[:], c_np)
    del written
    manifest["codec200.b2nd"] = {
        "unsupported": "codec user-defined (id 200) is not one C-Blosc2 ships (a user-registered id?), so blosc2fs cannot decode it"
    }

    # openzl38: the same bytes with the codec id byte of the frame header (byte 77) and of
    # every chunk header (byte 22 of the extended header) rewritten to 38.
    data = bytearray(open("codec200.b2nd", "rb").read())
    assert data[77] == 200, data[77]
    data[77] = 38
    hits = 0
    # Chunk headers start with version 5 and carry flags with codec format 6 (bits 5-7);
    # find them by their user-codec byte 200 at offset 22 and the flag pattern.
    for pos in range(0, len(data) - 32):
        if data[pos + 22] == 200 and data[pos + 2] >> 5 == 6 and data[pos] in (3, 4, 5):
            data[pos + 22] = 38
            hits += 1
    assert hits >= 1, "no chunk header found"
    open("openzl38.b2nd", "wb").write(bytes(data))
    manifest["openzl38.b2nd"] = {
        "unsupported": "codec openzl (id 38) needs the blosc2-openzl plugin, which blosc2fs does not include",
        "chunk_headers_patched": hits,
    }

    def fwd(src: Any, dst: Any, meta: Any, schunk: Any) -> None:
        dst[:] = src[::-1]

    def bwd(src: Any, dst: Any, meta: Any, schunk: Any) -> None:
        dst[:] = src[::-1]

    blosc2.register_filter(200, fwd, bwd, "reverse200")
    f_np = np.arange(32, dtype="<i2")
    cp = blosc2.CParams(codec=blosc2.Codec.ZSTD, filters=[200], filters_meta=[0], nthreads=1)
    written = blosc2.asarray(f_np, urlpath="filter200.b2nd", mode="w", cparams=cp, dparams=blosc2.DParams(nthreads=1))
    assert np.array_equal(written[:], f_np)
    del written
    manifest["filter200.b2nd"] = {
        "unsupported": "filter user-defined (id 200) is not one C-Blosc2 ships (a user-registered id?), so blosc2fs cannot decode it"
    }

    with open("manifest.json", "w") as fh:
        json.dump(manifest, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
