//! The filesystem logic driven in-process, with no FUSE and no `/dev/fuse`:
//! `blosc2fs::fs::Filesystem` is called directly (lookup, getattr,
//! readdir, open, read, release, access) the way the fuser adapter calls it.
//!
//! Covered here:
//! - the presented tree: source directories, array directories
//!   (`meta.json data data.npy chunks`), `chunks/` (`.zarray` and chunk
//!   names), `.stats`, sizes, missing names, non-Blosc2 files hidden, a
//!   broken `.b2nd` shown with a `meta.json` that explains;
//! - `data` read in odd windows at odd offsets and past its end;
//! - `data.npy`: the header/data splice and `numpy.load` of the result;
//! - `chunks/<coords>`: whole chunks with zero padding at the array's edge;
//! - source changes: replaced (rename) and rewritten in place under an open
//!   handle, and a contiguous frame grown in place by python-blosc2;
//! - a corrupt chunk (EIO naming the file and the chunk, the rest readable);
//! - a block cache smaller than one block;
//! - read-only answers (EROFS).
//!
//! Expected bytes never come from the code under test: arrays are made by
//! the python-blosc2 4.14.1 oracle (`$BLOSC2FS_PYTHON`, else the repo's
//! `.venv`, else `scripts/setup_venv.sh`) from numpy data whose raw bytes it
//! writes beside them, and the committed fixtures are checked against the
//! sha256 of their numpy source in `tests/fixtures/manifest.json`.

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use blosc2fs::fs::{Filesystem, FsConfig, FsError, Kind};
use blosc2fs::read::planner::layout_budget;
use blosc2fs::read::{Blocks, Planner, Prefetcher, Stats};
use common::inproc::{entries as list, walk, ROOT};
use common::*;

// ---------------------------------------------------------------------------
// The python oracle
// ---------------------------------------------------------------------------

/// Writes arrays (and the numpy bytes they were made from) with
/// python-blosc2; every command prints one JSON line.
const ORACLE: &str = r#"
import json, os, sys
import numpy as np
import blosc2

GROW_ITEMS = 65536          # int32 items per chunk of the growing frame (256 KiB)

def save(out, name, arr, **kw):
    blosc2.asarray(arr, urlpath=os.path.join(out, name + ".b2nd"), mode="w", **kw)
    with open(os.path.join(out, name + ".raw"), "wb") as f:
        f.write(np.ascontiguousarray(arr).tobytes())
    np.save(os.path.join(out, name + ".npy"), arr)
    return {"shape": list(arr.shape), "dtype": arr.dtype.str, "chunks": list(kw["chunks"]), "blocks": list(kw["blocks"])}

def arrays(out):
    rng = np.random.default_rng(20240611)
    info = {}
    # 3-D <f8, edge chunks and partial blocks on every axis; blocks of 7680 bytes.
    cube = (rng.standard_normal((41, 67, 33)) * 100).round(2)
    info["cube"] = save(out, "cube", cube, chunks=(16, 24, 20), blocks=(8, 12, 10),
        cparams=blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=5, filters=[blosc2.Filter.SHUFFLE], filters_meta=[0], nthreads=1))
    # 2-D <i4 with DELTA (block 0 needed by the others), edge chunks.
    delta = np.arange(157 * 203, dtype="<i4").reshape(157, 203) * 3 + rng.integers(0, 5, (157, 203), dtype="<i4")
    info["delta"] = save(out, "delta", delta, chunks=(64, 96), blocks=(16, 40),
        cparams=blosc2.CParams(codec=blosc2.Codec.LZ4, clevel=5, filters=[blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE], filters_meta=[0, 0], nthreads=1))
    # Another array altogether (dtype, shape, codec): what a source is replaced with.
    other = rng.integers(0, 60000, (600, 77), dtype="<u2")
    info["other"] = save(out, "other", other, chunks=(256, 40), blocks=(64, 20),
        cparams=blosc2.CParams(codec=blosc2.Codec.BLOSCLZ, clevel=5, filters=[blosc2.Filter.BITSHUFFLE], filters_meta=[0], nthreads=1))
    return info

def same_layout(out):
    # Two arrays of one shape stored uncompressed (clevel 0): frames of the
    # same size, chunks at the same offsets with the same headers; only the
    # values differ.
    rng = np.random.default_rng(99)
    cp = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=0, filters=[blosc2.Filter.SHUFFLE], filters_meta=[0], nthreads=1)
    res = {name: save(out, name, rng.standard_normal((41, 67, 33)), chunks=(16, 24, 20), blocks=(8, 12, 10), cparams=cp)
           for name in ("lay1", "lay2")}
    # The same layout with one more chunk along the first axis: every old
    # chunk offset and header kept, chunks appended, other values.
    res["lay3"] = save(out, "lay3", rng.standard_normal((57, 67, 33)), chunks=(16, 24, 20), blocks=(8, 12, 10), cparams=cp)
    return res

def grow_chunk(i):
    rng = np.random.default_rng(1000 + i)
    return (np.arange(GROW_ITEMS, dtype="<i4") // 7 + rng.integers(0, 50, GROW_ITEMS, dtype="<i4") + i * 1000000).astype("<i4")

def grow(path, start, stop, raw_out):
    if start == 0:
        cparams = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=3, typesize=4, blocksize=16384,
                                 filters=[blosc2.Filter.SHUFFLE], filters_meta=[0], nthreads=1)
        s = blosc2.SChunk(chunksize=GROW_ITEMS * 4, urlpath=path, contiguous=True, mode="w", cparams=cparams)
    else:
        s = blosc2.open(path, mode="a")
        assert s.nchunks == start, (s.nchunks, start)
    for i in range(start, stop):
        n = s.append_data(grow_chunk(i))
        assert n == i + 1, (n, i)
    info = {"nchunks": s.nchunks, "blocksize": s.cparams.blocksize, "chunksize": s.chunksize}
    del s
    with open(raw_out, "wb") as f:
        for i in range(stop):
            f.write(grow_chunk(i).tobytes())
    return info

def nd_rows(a, b):
    return np.arange(a * 64, b * 64, dtype="<f8").reshape(b - a, 64) * 1.5 + 0.25

def ndgrow(path, rows, raw_out):
    if not os.path.exists(path):
        cparams = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=1, nthreads=1)
        a = blosc2.asarray(nd_rows(0, rows), urlpath=path, mode="w", chunks=(16, 64), blocks=(4, 64), cparams=cparams)
    else:
        a = blosc2.open(path, mode="a")
        old = a.shape[0]
        a.resize((rows, 64))
        a[old:rows] = nd_rows(old, rows)
    info = {"shape": list(a.shape), "nchunks": a.schunk.nchunks}
    del a
    with open(raw_out, "wb") as f:
        f.write(nd_rows(0, rows).tobytes())
    return info

def npyload(got, want):
    a, b = np.load(got), np.load(want)
    return {"shape": list(a.shape), "dtype": a.dtype.str,
            "equal": bool(a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes())}

cmd = sys.argv[1]
if cmd == "arrays":
    res = arrays(sys.argv[2])
elif cmd == "same_layout":
    res = same_layout(sys.argv[2])
elif cmd == "grow":
    res = grow(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
elif cmd == "ndgrow":
    res = ndgrow(sys.argv[2], int(sys.argv[3]), sys.argv[4])
elif cmd == "npyload":
    res = npyload(sys.argv[2], sys.argv[3])
else:
    raise SystemExit("unknown command " + cmd)
print(json.dumps(res))
"#;

/// The oracle's Python: `$BLOSC2FS_PYTHON`, the repo's `.venv`, or one made
/// by `scripts/setup_venv.sh`.
fn python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(oracle_python).clone()
}

/// Run an oracle command; its JSON answer.
fn oracle(args: &[&OsStr]) -> serde_json::Value {
    let out = Command::new(python())
        .arg("-c")
        .arg(ORACLE)
        .args(args)
        .output()
        .expect("run the python oracle");
    assert!(
        out.status.success(),
        "python oracle {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "oracle said {:?}: {e}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Arrays written by the oracle into `dir`: `NAME.b2nd`, `NAME.raw` (the
/// numpy bytes in C order) and `NAME.npy`, for cube, delta and other.
fn make_arrays(dir: &Path) -> serde_json::Value {
    oracle(&[OsStr::new("arrays"), dir.as_os_str()])
}

/// The numpy bytes of array `name` made by [`make_arrays`].
fn raw(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(format!("{name}.raw"))).unwrap()
}

fn dims(v: &serde_json::Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .collect()
}

/// Chunk `coords` of a C-order array over its full `chunkshape`, zeros past
/// the array's edge (computed from the numpy bytes, item by item).
fn expected_chunk(
    raw: &[u8],
    shape: &[u64],
    chunkshape: &[u64],
    itemsize: usize,
    coords: &[u64],
) -> Vec<u8> {
    let items: u64 = chunkshape.iter().product();
    let mut out = vec![0u8; items as usize * itemsize];
    let mut local = vec![0u64; shape.len()];
    for i in 0..items as usize {
        let mut rem = i as u64;
        for d in (0..shape.len()).rev() {
            local[d] = rem % chunkshape[d];
            rem /= chunkshape[d];
        }
        let mut linear = 0u64;
        let mut inside = true;
        for d in 0..shape.len() {
            let g = coords[d] * chunkshape[d] + local[d];
            inside &= g < shape[d];
            linear = linear * shape[d] + g;
        }
        if inside {
            let at = linear as usize * itemsize;
            out[i * itemsize..(i + 1) * itemsize].copy_from_slice(&raw[at..at + itemsize]);
        }
    }
    out
}

/// Every chunk coordinate of a grid, in C order.
fn grid_coords(grid: &[u64]) -> Vec<Vec<u64>> {
    let total: u64 = grid.iter().product();
    (0..total)
        .map(|mut c| {
            let mut coords = vec![0; grid.len()];
            for d in (0..grid.len()).rev() {
                coords[d] = c % grid[d];
                c /= grid[d];
            }
            coords
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Driving the filesystem
// ---------------------------------------------------------------------------

/// A filesystem over `source` with a `cache_budget`-byte block cache and
/// `prefetch_workers` prefetch threads (0: no prefetcher).
fn filesystem(source: &Path, cache_budget: usize, prefetch_workers: usize) -> Filesystem {
    let stats = Arc::new(Stats::default());
    let blocks = Arc::new(Blocks::new(
        cache_budget,
        layout_budget(cache_budget),
        stats,
    ));
    let prefetcher =
        (prefetch_workers > 0).then(|| Prefetcher::start(blocks.clone(), prefetch_workers));
    let planner = Arc::new(Planner::new(blocks, prefetcher, 8 << 20));
    Filesystem::new(source, planner, FsConfig::default()).unwrap()
}

fn ino(fs: &Filesystem, path: &str) -> u64 {
    walk(fs, path)
        .unwrap_or_else(|e| panic!("lookup {path}: {e}"))
        .ino
}

fn names(fs: &Filesystem, ino: u64) -> Vec<String> {
    list(fs, ino).into_iter().map(|(_, _, n)| n).collect()
}

fn read(fs: &Filesystem, fh: u64, offset: u64, size: u32) -> Vec<u8> {
    fs.read(fh, offset, size)
        .unwrap_or_else(|e| panic!("read {size} bytes at {offset}: {e}"))
}

/// A whole file through one handle, in windows of `window` bytes.
fn read_through(fs: &Filesystem, fh: u64, window: u32) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let got = read(fs, fh, out.len() as u64, window);
        let short = got.len() < window as usize;
        out.extend_from_slice(&got);
        if short {
            return out;
        }
    }
}

/// Open `path`, read it whole in windows of `window` bytes, release it.
fn read_path(fs: &Filesystem, path: &str, window: u32) -> Vec<u8> {
    let opened = fs.open(ino(fs, path), false).unwrap();
    let bytes = read_through(fs, opened.fh, window);
    fs.release(opened.fh);
    bytes
}

/// The `.stats` document, read through the `.stats` file.
fn stats(fs: &Filesystem) -> serde_json::Value {
    serde_json::from_slice(&read_path(fs, ".stats", 1 << 16)).unwrap()
}

/// `result` failed with `errno`; the error.
#[track_caller]
fn fails<T: std::fmt::Debug>(result: Result<T, FsError>, errno: i32) -> FsError {
    match result {
        Ok(v) => panic!("expected errno {errno}, got Ok({v:?})"),
        Err(e) => {
            assert_eq!(e.errno(), errno, "{e:?}");
            e
        }
    }
}

/// Header length of `.npy` bytes (format 1.0: magic, version, u16 length).
fn npy_header_len(bytes: &[u8]) -> usize {
    assert_eq!(&bytes[..6], b"\x93NUMPY", "npy magic");
    assert_eq!(&bytes[6..8], &[1, 0], "npy format version");
    10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize
}

/// Frame header fields, parsed here: (header_len, cbytes).
fn frame_header(bytes: &[u8]) -> (u64, u64) {
    assert_eq!(&bytes[2..10], b"b2frame\0");
    let header_len = u32::from_be_bytes(bytes[11..15].try_into().unwrap()) as u64;
    let cbytes = i64::from_be_bytes(bytes[39..47].try_into().unwrap()) as u64;
    (header_len, cbytes)
}

// ---------------------------------------------------------------------------
// 1. The tree: lookup, readdir, getattr
// ---------------------------------------------------------------------------

#[test]
fn tree_of_a_source_dir_lists_arrays_and_their_files() {
    let src = tempfile::tempdir().unwrap();
    let manifest = read_manifest(&fixtures_dir());
    let fixtures = ["codec_zstd_shuffle", "shape_3d"];
    for name in fixtures {
        let file = manifest[name]["path"].as_str().unwrap();
        std::fs::copy(fixtures_dir().join(file), src.path().join(file)).unwrap();
    }
    std::fs::write(
        src.path().join("notes.txt"),
        b"plain text, not a Blosc2 frame",
    )
    .unwrap();
    std::fs::write(
        src.path().join("x.b2nd"),
        b"garbage that only looks like an array by its name",
    )
    .unwrap();
    let fs = filesystem(src.path(), 64 << 20, 0);

    // The root: . .. .stats, the arrays and the text file (as itself).
    let root = list(&fs, ROOT);
    let root_names: Vec<&str> = root.iter().map(|(_, _, n)| n.as_str()).collect();
    assert_eq!(
        root_names,
        [
            ".",
            "..",
            ".stats",
            "zarr.json",
            "codec_zstd_shuffle.b2nd",
            "notes.txt",
            "shape_3d.b2nd",
            "x.b2nd"
        ]
    );
    assert_eq!(root[0].0, ROOT);
    for (i, kind, name) in &root[2..] {
        let attr = fs.lookup(ROOT, OsStr::new(name)).unwrap();
        assert_eq!((attr.ino, attr.kind), (*i, *kind), "{name}");
        assert_eq!(
            *kind,
            if name == ".stats" || name == "zarr.json" || name == "notes.txt" {
                Kind::File
            } else {
                Kind::Dir
            },
            "{name}"
        );
    }
    let notes = fs.lookup(ROOT, OsStr::new("notes.txt")).unwrap();
    assert_eq!(notes.size, 30);
    let opened = fs.open(notes.ino, false).unwrap();
    assert_eq!(
        fs.read(opened.fh, 6, 100).unwrap(),
        b"text, not a Blosc2 frame"
    );
    fs.release(opened.fh);
    assert!(matches!(
        fs.lookup(ROOT, OsStr::new("missing.b2nd")),
        Err(FsError::NotFound)
    ));
    fails(fs.lookup(ROOT, OsStr::new("missing.b2nd")), libc::ENOENT);

    for name in fixtures {
        let entry = &manifest[name];
        let dir = entry["path"].as_str().unwrap();
        let dir_ino = ino(&fs, dir);
        let entries = list(&fs, dir_ino);
        let listed: Vec<(&str, Kind)> = entries.iter().map(|(_, k, n)| (n.as_str(), *k)).collect();
        assert_eq!(
            listed,
            [
                (".", Kind::Dir),
                ("..", Kind::Dir),
                ("meta.json", Kind::File),
                ("data", Kind::File),
                ("data.npy", Kind::File),
                ("data.txt", Kind::File),
                ("preview.png", Kind::File),
                ("chunks", Kind::Dir),
                ("data.nhdr", Kind::File),
                ("data.mhd", Kind::File),
                ("data.hdr", Kind::File),
                ("zarr.json", Kind::File)
            ],
            "{name}"
        );
        assert_eq!(entries[0].0, dir_ino);
        assert_eq!(entries[1].0, ROOT, "{name}: .. is the root");
        for (i, _, n) in &entries[2..] {
            assert_eq!(
                fs.lookup(dir_ino, OsStr::new(n)).unwrap().ino,
                *i,
                "{name}/{n}"
            );
        }

        // data: prod(shape) * itemsize bytes, exactly the numpy source's.
        let shape = dims(&entry["shape"]);
        let itemsize = entry["itemsize"].as_u64().unwrap();
        let data_len = shape.iter().product::<u64>() * itemsize;
        assert_eq!(
            data_len,
            entry["size"].as_u64().unwrap(),
            "{name}: manifest size"
        );
        let data = walk(&fs, &format!("{dir}/data")).unwrap();
        assert_eq!(
            (data.kind, data.size),
            (Kind::File, data_len),
            "{name}: data"
        );
        assert_eq!(fs.getattr(data.ino).unwrap().size, data_len);
        let bytes = read_path(&fs, &format!("{dir}/data"), 4099);
        assert_eq!(bytes.len() as u64, data_len, "{name}");
        assert_eq!(
            sha256_hex(&bytes),
            entry["sha256"].as_str().unwrap(),
            "{name}: data bytes"
        );

        // data.npy: its header, then the same bytes.
        let npy_attr = walk(&fs, &format!("{dir}/data.npy")).unwrap();
        let npy = read_path(&fs, &format!("{dir}/data.npy"), 1 << 20);
        let header = npy_header_len(&npy);
        assert_eq!(header % 64, 0, "{name}: npy data starts 64-aligned");
        assert_eq!(
            npy_attr.size,
            header as u64 + data_len,
            "{name}: data.npy size"
        );
        assert_eq!(npy.len() as u64, npy_attr.size);
        assert_eq!(&npy[header..], &bytes[..], "{name}: data.npy body");

        // meta.json: shape and dtype as the manifest says; size as getattr says.
        let meta_attr = walk(&fs, &format!("{dir}/meta.json")).unwrap();
        let meta_bytes = read_path(&fs, &format!("{dir}/meta.json"), 1 << 16);
        assert_eq!(meta_bytes.len() as u64, meta_attr.size);
        let meta: serde_json::Value = serde_json::from_slice(&meta_bytes).unwrap();
        assert_eq!(meta["shape"], entry["shape"], "{name}");
        assert_eq!(meta["dtype"], entry["dtype"], "{name}");

        // chunks/: .zarray, then one name per chunk of the grid, in C order.
        let chunks_ino = ino(&fs, &format!("{dir}/chunks"));
        let chunkshape = dims(&entry["chunkshape"]);
        let grid: Vec<u64> = shape
            .iter()
            .zip(&chunkshape)
            .map(|(s, c)| s.div_ceil(*c))
            .collect();
        let mut want = vec![".".to_string(), "..".to_string(), ".zarray".to_string()];
        want.extend(
            grid_coords(&grid)
                .iter()
                .map(|c| c.iter().map(u64::to_string).collect::<Vec<_>>().join(".")),
        );
        assert_eq!(want.len() as u64 - 3, entry["nchunks"].as_u64().unwrap());
        let chunk_entries = list(&fs, chunks_ino);
        assert_eq!(
            chunk_entries
                .iter()
                .map(|(_, _, n)| n.clone())
                .collect::<Vec<_>>(),
            want,
            "{name}: chunks/"
        );
        assert_eq!(
            chunk_entries[1].0, dir_ino,
            "{name}: chunks/.. is the array directory"
        );
        let chunk_bytes = chunkshape.iter().product::<u64>() * itemsize;
        for (i, kind, n) in &chunk_entries[3..] {
            let attr = fs.lookup(chunks_ino, OsStr::new(n)).unwrap();
            assert_eq!(
                (attr.ino, attr.kind, attr.size),
                (*i, *kind, chunk_bytes),
                "{name}: chunks/{n}"
            );
        }
        let zarray: serde_json::Value =
            serde_json::from_slice(&read_path(&fs, &format!("{dir}/chunks/.zarray"), 1 << 16))
                .unwrap();
        assert_eq!(zarray["shape"], entry["shape"], "{name}: .zarray");
        assert_eq!(zarray["chunks"], entry["chunkshape"], "{name}: .zarray");
        assert_eq!(zarray["dtype"], entry["dtype"], "{name}: .zarray");

        // Missing names at every level.
        fails(fs.lookup(dir_ino, OsStr::new("nope")), libc::ENOENT);
        fails(fs.lookup(chunks_ino, OsStr::new("99.99")), libc::ENOENT);
        let too_far = grid
            .iter()
            .map(|g| g.to_string())
            .collect::<Vec<_>>()
            .join(".");
        fails(fs.lookup(chunks_ino, OsStr::new(&too_far)), libc::ENOENT);
        fails(fs.lookup(data.ino, OsStr::new("x")), libc::ENOTDIR);

        // Extended attributes of data.
        let shape_text = serde_json::to_string(&entry["shape"]).unwrap();
        assert_eq!(
            fs.getxattr(data.ino, OsStr::new("user.blosc2.shape"))
                .unwrap(),
            shape_text.as_bytes(),
            "{name}"
        );
        assert_eq!(
            fs.getxattr(data.ino, OsStr::new("user.blosc2.dtype"))
                .unwrap(),
            entry["dtype"].as_str().unwrap().as_bytes(),
            "{name}"
        );
        fails(
            fs.getxattr(data.ino, OsStr::new("user.nope")),
            libc::ENODATA,
        );
    }

    // The garbage x.b2nd: a directory holding only meta.json, which says why.
    let bad = ino(&fs, "x.b2nd");
    assert_eq!(names(&fs, bad), [".", "..", "meta.json"]);
    let meta: serde_json::Value =
        serde_json::from_slice(&read_path(&fs, "x.b2nd/meta.json", 1 << 16)).unwrap();
    let error = meta["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error field: {meta}"));
    assert!(error.contains("not a Blosc2 file"), "{meta}");
    assert!(meta["file"].as_str().unwrap().ends_with("x.b2nd"), "{meta}");
    for missing in ["data", "data.npy", "chunks"] {
        fails(fs.lookup(bad, OsStr::new(missing)), libc::ENOENT);
    }

    // .stats is a file at the root whose size getattr tells.
    let st = walk(&fs, ".stats").unwrap();
    assert_eq!(st.kind, Kind::File);
    assert!(st.size > 0);
    let doc = stats(&fs);
    assert_eq!(doc["read_errors"], 0, "{doc}");
    assert_eq!(
        doc["open_files"], 1,
        "only .stats is open while it is read: {doc}"
    );

    // One open of .stats is one document, however many reads take it,
    // even when the counters move between them.
    let served_before = doc["bytes_served"].as_u64().unwrap();
    let opened = fs.open(ino(&fs, ".stats"), false).unwrap();
    let mut joined = read(&fs, opened.fh, 0, 16);
    let file = manifest["shape_3d"]["path"].as_str().unwrap();
    let data = read_path(&fs, &format!("{file}/data"), 1 << 20);
    assert!(!data.is_empty());
    loop {
        let got = read(&fs, opened.fh, joined.len() as u64, 7);
        if got.is_empty() {
            break;
        }
        joined.extend_from_slice(&got);
    }
    fs.release(opened.fh);
    let doc: serde_json::Value = serde_json::from_slice(&joined)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&joined)));
    assert_eq!(doc["bytes_served"], served_before, "{doc}");
    assert!(stats(&fs)["bytes_served"].as_u64().unwrap() > served_before);
}

// ---------------------------------------------------------------------------
// 2. data read in odd windows at odd offsets
// ---------------------------------------------------------------------------

/// Reads of `len`-byte `file` through `fh`, compared with `want`:
/// windows of 1, 7, 4093 and 65537 bytes at odd offsets, and past the end.
fn check_odd_windows(fs: &Filesystem, fh: u64, want: &[u8], what: &str) {
    let len = want.len() as u64;
    let check = |offset: u64, size: u32| {
        let got = read(fs, fh, offset, size);
        let start = offset.min(len) as usize;
        let end = offset.saturating_add(size as u64).min(len) as usize;
        assert!(
            got == want[start..end],
            "{what}: {size} bytes at {offset}: {} bytes differ",
            got.len()
        );
    };
    // Tiny windows sampled over the whole file (a prime stride hits every
    // chunk and block position), then contiguous coverage by larger ones.
    for size in [1u32, 7] {
        let mut offset = 1;
        while offset < len {
            check(offset, size);
            offset += 997;
        }
    }
    for (size, first) in [(4093u32, 3u64), (65537, 1)] {
        check(0, first as u32);
        let mut offset = first;
        while offset < len {
            check(offset, size);
            offset += size as u64;
        }
    }
    // Backwards, so no read is sequential to the one before.
    let mut offset = len - 1;
    while offset > 65537 {
        offset -= 65537;
        check(offset, 65537);
    }
    // At and past the end: fewer bytes, then none.
    assert_eq!(
        read(fs, fh, len - 3, 7),
        &want[len as usize - 3..],
        "{what}: tail"
    );
    assert!(read(fs, fh, len, 5).is_empty(), "{what}: at EOF");
    assert!(
        read(fs, fh, len + 100_001, 4096).is_empty(),
        "{what}: past EOF"
    );
    assert_eq!(
        read(fs, fh, 0, len as u32 + 1000).len() as u64,
        len,
        "{what}: larger than the file"
    );
}

#[test]
fn data_reads_at_odd_offsets_and_sizes_match_numpy() {
    let src = tempfile::tempdir().unwrap();
    let info = make_arrays(src.path());
    // The cube with a prefetcher running, the DELTA array without.
    for (name, workers) in [("cube", 2), ("delta", 0)] {
        let fs = filesystem(src.path(), 64 << 20, workers);
        let want = raw(src.path(), name);
        let shape = dims(&info[name]["shape"]);
        let itemsize = if name == "cube" { 8 } else { 4 };
        assert_eq!(want.len() as u64, shape.iter().product::<u64>() * itemsize);
        let path = format!("{name}.b2nd/data");
        let attr = walk(&fs, &path).unwrap();
        assert_eq!(attr.size, want.len() as u64, "{name}");
        let opened = fs.open(attr.ino, false).unwrap();
        check_odd_windows(&fs, opened.fh, &want, &path);
        fs.release(opened.fh);
        // A fresh filesystem read front to back in odd windows (sequential
        // reader, prefetch asked for) gives the same bytes.
        let fresh = filesystem(src.path(), 64 << 20, workers);
        assert!(
            read_path(&fresh, &path, 65537) == want,
            "{name}: sequential read"
        );
        assert_eq!(stats(&fs)["read_errors"], 0);
    }
}

// ---------------------------------------------------------------------------
// 3. data.npy: header splice
// ---------------------------------------------------------------------------

#[test]
fn npy_header_splices_into_data_and_numpy_loads_it() {
    let src = tempfile::tempdir().unwrap();
    make_arrays(src.path());
    let fs = filesystem(src.path(), 64 << 20, 0);
    let want = raw(src.path(), "cube");
    let attr = walk(&fs, "cube.b2nd/data.npy").unwrap();
    let opened = fs.open(attr.ino, false).unwrap();
    let fh = opened.fh;

    // The header, read on its own, by its own length field.
    let head = read(&fs, fh, 0, 10);
    let hlen = npy_header_len(&head);
    assert_eq!(hlen % 64, 0);
    assert_eq!(attr.size, (hlen + want.len()) as u64);
    let header = read(&fs, fh, 0, hlen as u32);
    let text = std::str::from_utf8(&header[10..]).unwrap();
    assert!(
        text.starts_with("{'descr': '<f8', 'fortran_order': False, 'shape': (41, 67, 33), }"),
        "{text:?}"
    );
    assert!(text.ends_with('\n'), "{text:?}");
    assert!(
        text[..text.len() - 1].trim_end_matches(' ').ends_with('}'),
        "padding is spaces: {text:?}"
    );

    // Reads straddling the boundary: header bytes, then data bytes.
    for (before, after) in [(1usize, 1usize), (5, 12), (63, 4093), (hlen - 10, 65537)] {
        let got = read(&fs, fh, (hlen - before) as u64, (before + after) as u32);
        assert_eq!(got.len(), before + after);
        assert_eq!(
            &got[..before],
            &header[hlen - before..],
            "header part of {before}+{after}"
        );
        assert!(
            got[before..] == want[..after],
            "data part of {before}+{after}"
        );
    }
    // Odd windows over the whole file against header + numpy bytes.
    let mut full_want = header.clone();
    full_want.extend_from_slice(&want);
    check_odd_windows(&fs, fh, &full_want, "cube.b2nd/data.npy");
    fs.release(fh);

    // numpy.load of the presented bytes gives the source array.
    let got = read_path(&fs, "cube.b2nd/data.npy", 131072);
    assert!(got == full_want);
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("presented.npy");
    std::fs::write(&path, &got).unwrap();
    let answer = oracle(&[
        OsStr::new("npyload"),
        path.as_os_str(),
        src.path().join("cube.npy").as_os_str(),
    ]);
    assert_eq!(answer["shape"], serde_json::json!([41, 67, 33]), "{answer}");
    assert_eq!(answer["dtype"], "<f8", "{answer}");
    assert_eq!(answer["equal"], true, "{answer}");
}

// ---------------------------------------------------------------------------
// 4. chunks/
// ---------------------------------------------------------------------------

#[test]
fn chunk_files_hold_whole_chunks_with_zero_padding_at_the_edge() {
    let src = tempfile::tempdir().unwrap();
    let info = make_arrays(src.path());
    let fs = filesystem(src.path(), 64 << 20, 0);
    for (name, itemsize) in [("cube", 8usize), ("delta", 4)] {
        let want_raw = raw(src.path(), name);
        let shape = dims(&info[name]["shape"]);
        let chunkshape = dims(&info[name]["chunks"]);
        let grid: Vec<u64> = shape
            .iter()
            .zip(&chunkshape)
            .map(|(s, c)| s.div_ceil(*c))
            .collect();
        let chunk_len = chunkshape.iter().product::<u64>() as usize * itemsize;
        let chunks_ino = ino(&fs, &format!("{name}.b2nd/chunks"));
        let listed = names(&fs, chunks_ino);
        assert_eq!(
            listed.len(),
            3 + grid.iter().product::<u64>() as usize,
            "{name}: {listed:?}"
        );
        for coords in grid_coords(&grid) {
            let cname = coords
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(".");
            assert!(listed.contains(&cname), "{name}: {cname} not listed");
            let want = expected_chunk(&want_raw, &shape, &chunkshape, itemsize, &coords);
            assert_eq!(want.len(), chunk_len);
            let path = format!("{name}.b2nd/chunks/{cname}");
            assert_eq!(walk(&fs, &path).unwrap().size, chunk_len as u64, "{path}");
            let got = read_path(&fs, &path, 4093);
            assert!(got == want, "{path}: bytes differ");
        }
        // The last chunk is an edge chunk on every axis: part of it is padding, read as zeros.
        let last: Vec<u64> = grid.iter().map(|g| g - 1).collect();
        let padding = expected_chunk(
            &vec![0xffu8; want_raw.len()],
            &shape,
            &chunkshape,
            itemsize,
            &last,
        );
        let pad_bytes = padding.iter().filter(|&&b| b == 0).count();
        assert!(
            pad_bytes > 0 && pad_bytes < chunk_len,
            "{name}: last chunk has padding"
        );
        let last_name = last
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(".");
        let got = read_path(&fs, &format!("{name}.b2nd/chunks/{last_name}"), 1 << 20);
        for (i, (&g, &p)) in got.iter().zip(&padding).enumerate() {
            if p == 0 {
                assert_eq!(g, 0, "{name}: padding byte {i} of chunk {last_name}");
            }
        }
        // Odd windows within one edge chunk file.
        let opened = fs
            .open(ino(&fs, &format!("{name}.b2nd/chunks/{last_name}")), false)
            .unwrap();
        let want = expected_chunk(&want_raw, &shape, &chunkshape, itemsize, &last);
        check_odd_windows(&fs, opened.fh, &want, &format!("{name} chunk {last_name}"));
        fs.release(opened.fh);
    }
}

// ---------------------------------------------------------------------------
// 5. Source changes under open handles
// ---------------------------------------------------------------------------

#[test]
fn replaced_source_gives_new_inode_while_open_handle_keeps_old_bytes() {
    let made = tempfile::tempdir().unwrap();
    make_arrays(made.path());
    let src = tempfile::tempdir().unwrap();
    let target = src.path().join("a.b2nd");
    std::fs::copy(made.path().join("cube.b2nd"), &target).unwrap();
    let old = raw(made.path(), "cube");
    let new = raw(made.path(), "other");
    let fs = filesystem(src.path(), 64 << 20, 0);

    let dir_a = walk(&fs, "a.b2nd").unwrap();
    let data_a = walk(&fs, "a.b2nd/data").unwrap();
    assert_eq!(data_a.size, old.len() as u64);
    let handle_a = fs.open(data_a.ino, false).unwrap().fh;
    // Only the first blocks are read (and cached) before the change.
    assert_eq!(read(&fs, handle_a, 0, 4096), &old[..4096]);

    // Replace the source: write another array under a temporary name, rename over.
    std::fs::copy(
        made.path().join("other.b2nd"),
        src.path().join("tmp.partial"),
    )
    .unwrap();
    std::fs::rename(src.path().join("tmp.partial"), &target).unwrap();

    let dir_b = walk(&fs, "a.b2nd").unwrap();
    assert_ne!(dir_b.ino, dir_a.ino, "a replaced source is a new inode");
    let data_b = walk(&fs, "a.b2nd/data").unwrap();
    assert_ne!(data_b.ino, data_a.ino);
    assert_eq!(data_b.size, new.len() as u64);
    assert!(
        read_path(&fs, "a.b2nd/data", 65537) == new,
        "new opens read the new array"
    );
    let meta: serde_json::Value =
        serde_json::from_slice(&read_path(&fs, "a.b2nd/meta.json", 1 << 16)).unwrap();
    assert_eq!(meta["shape"], serde_json::json!([600, 77]));

    // Handle A reads the old version, whole and exact (most blocks decoded only now).
    let mut pos = old.len() as u64;
    while pos > 0 {
        let start = pos.saturating_sub(65537);
        assert!(
            read(&fs, handle_a, start, (pos - start) as u32) == old[start as usize..pos as usize],
            "old bytes at {start}"
        );
        pos = start;
    }
    assert!(read_through(&fs, handle_a, 4093) == old);
    assert!(
        read(&fs, handle_a, old.len() as u64, 100).is_empty(),
        "handle A keeps the old size"
    );
    // The old inodes answer for the old version while it is open...
    assert_eq!(fs.getattr(data_a.ino).unwrap().size, old.len() as u64);
    fs.release(handle_a);
    // ...and, once closed, are stale (the kernel looks the name up again).
    fails(fs.getattr(data_a.ino), libc::ESTALE);
    assert_eq!(stats(&fs)["read_errors"], 0);

    // The array removed: its name is gone.
    std::fs::remove_file(&target).unwrap();
    fails(walk(&fs, "a.b2nd"), libc::ENOENT);
    // (The root stays a Zarr v3 group, empty now.)
    assert_eq!(names(&fs, ROOT), [".", "..", ".stats", "zarr.json"]);
}

#[test]
fn source_rewritten_in_place_gives_eio_to_open_handle_never_other_bytes() {
    let made = tempfile::tempdir().unwrap();
    make_arrays(made.path());
    let src = tempfile::tempdir().unwrap();
    let target = src.path().join("b.b2nd");
    std::fs::copy(made.path().join("cube.b2nd"), &target).unwrap();
    let old = raw(made.path(), "cube");
    let new = raw(made.path(), "other");
    let new_file = std::fs::read(made.path().join("other.b2nd")).unwrap();
    assert_ne!(
        new_file.len() as u64,
        std::fs::metadata(&target).unwrap().len(),
        "the rewrite changes the size"
    );
    let fs = filesystem(src.path(), 64 << 20, 0);

    let data = walk(&fs, "b.b2nd/data").unwrap();
    let handle = fs.open(data.ino, false).unwrap().fh;
    assert_eq!(read(&fs, handle, 0, 4096), &old[..4096]);
    let source_ino = std::fs::metadata(&target).unwrap().ino_of();

    // Truncate and rewrite the same file with another array.
    rewrite_in_place(&target, &new_file);
    assert_eq!(
        std::fs::metadata(&target).unwrap().ino_of(),
        source_ino,
        "rewritten in place"
    );

    // Blocks the handle had not read: EIO, never the new file's bytes.
    let len = old.len() as u64;
    for offset in [len - 4096, len / 2 + 1, 300_001] {
        let err = fails(fs.read(handle, offset, 4096), libc::EIO);
        assert!(matches!(err, FsError::Format(_)), "{err:?}");
        assert!(err.to_string().contains("b.b2nd"), "{err}");
    }
    // What it had read may still come from the cache, but only as the old bytes.
    match fs.read(handle, 0, 4096) {
        Ok(bytes) => assert_eq!(bytes, &old[..4096]),
        Err(e) => assert_eq!(e.errno(), libc::EIO, "{e}"),
    }
    assert!(stats(&fs)["read_errors"].as_u64().unwrap() >= 3);
    fs.release(handle);

    // New lookups see the new array.
    let fresh = walk(&fs, "b.b2nd/data").unwrap();
    assert_ne!(fresh.ino, data.ino);
    assert_eq!(fresh.size, new.len() as u64);
    assert!(read_path(&fs, "b.b2nd/data", 65537) == new);
}

#[test]
fn source_rewritten_in_place_with_same_layout_gives_eio_never_other_bytes() {
    // The rewrite keeps the file's size, its chunk offsets and every chunk
    // header: only the values (and the mtime) tell the versions apart.
    let made = tempfile::tempdir().unwrap();
    oracle(&[OsStr::new("same_layout"), made.path().as_os_str()]);
    let old_file = std::fs::read(made.path().join("lay1.b2nd")).unwrap();
    let new_file = std::fs::read(made.path().join("lay2.b2nd")).unwrap();
    assert_eq!(old_file.len(), new_file.len());
    assert_ne!(old_file, new_file);
    let (old, new) = (raw(made.path(), "lay1"), raw(made.path(), "lay2"));
    let (_src, target, fs, handle) = open_written(&old_file);
    assert_eq!(read(&fs, handle, 0, 4096), &old[..4096]);

    // Let the clock move past the mtime granularity, then rewrite in place.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let before = std::fs::metadata(&target).unwrap();
    rewrite_in_place(&target, &new_file);
    let after = std::fs::metadata(&target).unwrap();
    assert_eq!(after.ino_of(), before.ino_of(), "rewritten in place");
    assert_eq!(after.len(), before.len(), "same size");
    assert_ne!(
        after.modified().unwrap(),
        before.modified().unwrap(),
        "the mtime tells the versions apart"
    );

    // Uncached blocks: EIO. Never the new values under the old handle.
    uncached_reads_fail_with_eio(&fs, handle, &old, &new);
    fs.release(handle);
    // New lookups see the new values.
    assert!(read_path(&fs, "c.b2nd/data", 65537) == new);
}

#[test]
fn source_rewritten_in_place_with_more_chunks_of_the_same_layout_gives_eio_never_other_bytes() {
    // A longer array written over the file: old chunk offsets and headers
    // all kept and chunks appended, so only the values tell it from a
    // growth. The blocks the handle had read are compared.
    let made = tempfile::tempdir().unwrap();
    oracle(&[OsStr::new("same_layout"), made.path().as_os_str()]);
    let old_file = std::fs::read(made.path().join("lay1.b2nd")).unwrap();
    let new_file = std::fs::read(made.path().join("lay3.b2nd")).unwrap();
    let ((old_hlen, old_cbytes), (new_hlen, new_cbytes)) =
        (frame_header(&old_file), frame_header(&new_file));
    assert_eq!(old_hlen, new_hlen, "same header length");
    assert!(new_cbytes > old_cbytes, "chunks appended");
    let chunk0 = old_hlen as usize;
    assert_eq!(
        old_file[chunk0..chunk0 + 32],
        new_file[chunk0..chunk0 + 32],
        "chunk 0 keeps its header"
    );
    let old = raw(made.path(), "lay1");
    let new = raw(made.path(), "lay3");
    // What the handle read first: a few bytes (a block kept in the cache,
    // or a raw block's own bytes) or all of it in large reads (whole blocks
    // decoded straight into the replies, nothing cached).
    for first in [4096usize, old.len()] {
        let (_src, target, fs, handle) = open_written(&old_file);
        let mut got = Vec::new();
        while got.len() < first {
            got.extend(read(
                &fs,
                handle,
                got.len() as u64,
                (first - got.len()).min(1 << 20) as u32,
            ));
        }
        assert!(got == old[..first], "first {first} bytes");

        std::thread::sleep(std::time::Duration::from_millis(50));
        rewrite_in_place(&target, &new_file);
        uncached_reads_fail_with_eio(&fs, handle, &old, &new);
        fs.release(handle);
        assert!(read_path(&fs, "c.b2nd/data", 65537) == new);
    }
}

/// `bytes` written as `c.b2nd` in a new directory, and a filesystem of it
/// with `c.b2nd/data` open: (the directory, the file, the filesystem, the handle).
fn open_written(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf, Filesystem, u64) {
    let src = tempfile::tempdir().unwrap();
    let target = src.path().join("c.b2nd");
    std::fs::write(&target, bytes).unwrap();
    let fs = filesystem(src.path(), 64 << 20, 0);
    let data = walk(&fs, "c.b2nd/data").unwrap();
    let handle = fs.open(data.ino, false).unwrap().fh;
    (src, target, fs, handle)
}

/// Truncate `target` and write `bytes` into the same file (same inode).
fn rewrite_in_place(target: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(target)
        .unwrap();
    f.write_all(bytes).unwrap();
    f.sync_all().unwrap();
}

/// Reads of blocks `handle` never read, after its source was rewritten in
/// place from `old` to `new`: each fails with EIO, none returns bytes.
fn uncached_reads_fail_with_eio(fs: &Filesystem, handle: u64, old: &[u8], new: &[u8]) {
    let len = old.len() as u64;
    for offset in [len - 4096, len / 2 + 1, 300_001] {
        match fs.read(handle, offset, 4096) {
            Err(e) => assert_eq!(e.errno(), libc::EIO, "{e}"),
            Ok(bytes) => {
                let at = offset as usize..offset as usize + bytes.len();
                let which = if bytes == old[at.clone()] {
                    "the old bytes (from where?)"
                } else if new.get(at).is_some_and(|n| bytes == n) {
                    "the NEW version's bytes"
                } else {
                    "bytes of neither version"
                };
                panic!("read of 4096 bytes at {offset} under a handle opened before the rewrite succeeded with {which}");
            }
        }
    }
}

/// The inode number of a file's metadata.
trait InoOf {
    fn ino_of(&self) -> u64;
}

impl InoOf for std::fs::Metadata {
    fn ino_of(&self) -> u64 {
        std::os::unix::fs::MetadataExt::ino(self)
    }
}

// ---------------------------------------------------------------------------
// 6. A corrupt chunk
// ---------------------------------------------------------------------------

#[test]
fn corrupt_chunk_gives_eio_naming_file_and_chunk_and_the_rest_reads_exactly() {
    let made = tempfile::tempdir().unwrap();
    let info = make_arrays(made.path());
    let src = tempfile::tempdir().unwrap();
    let original = made.path().join("cube.b2nd");
    // Damage the compressed streams of chunk 3 (grid coords 0.1.1): locate its
    // block 0 through the format layer and flip every byte after the size prefix.
    let array = blosc2fs::source::open_array(&original).unwrap();
    let layout = array.read_layout(3).unwrap();
    let streams = layout.block_source_range(0);
    assert!(
        streams.end - streams.start < 7680,
        "block 0 of chunk 3 is compressed (not stored as is): {streams:?}"
    );
    let blosc2fs::format::ChunkOffset::Stored(off) = array.frame().offsets[3] else {
        panic!("chunk 3 is special")
    };
    let base = array.frame().header_len + off;
    let mut bytes = std::fs::read(&original).unwrap();
    for b in &mut bytes[(base + streams.start + 4) as usize..(base + streams.end) as usize] {
        *b ^= 0x5a;
    }
    std::fs::write(src.path().join("bad.b2nd"), &bytes).unwrap();
    let want = raw(made.path(), "cube");
    let shape = dims(&info["cube"]["shape"]);
    let chunkshape = dims(&info["cube"]["chunks"]);
    let fs = filesystem(src.path(), 64 << 20, 0);

    // data rows 0..16 cross chunk 3: EIO, naming the file and chunk 3.
    let handle = fs.open(ino(&fs, "bad.b2nd/data"), false).unwrap().fh;
    let row = 67 * 33 * 8u64;
    // (Block 0 of chunk 3 holds rows 0..8, columns 24..36, depth 20..30.)
    for (offset, size) in [
        (0u64, 65537u32),
        (24 * 33 * 8 + 20 * 8, 1),
        (7 * row + 24 * 33 * 8 + 1, 4093),
    ] {
        let err = fails(fs.read(handle, offset, size), libc::EIO);
        match &err {
            FsError::Format(e) => assert_eq!(e.problem.chunk(), Some(3), "{e}"),
            other => panic!("{other:?}"),
        }
        let text = err.to_string();
        assert!(
            text.contains("bad.b2nd") && text.contains("chunk 3"),
            "{text}"
        );
    }
    // Rows 16.. lie in chunks of grid row 1 and 2 only: exact.
    let from = 16 * row;
    let mut pos = from;
    while pos < want.len() as u64 {
        let got = read(&fs, handle, pos, 65537);
        assert!(
            got == want[pos as usize..(pos as usize + got.len())],
            "bytes at {pos}"
        );
        pos += got.len() as u64;
    }
    // Bytes of row 0 before chunk 3 begins (chunk 0.0.0 and 0.0.1 only): exact.
    assert_eq!(read(&fs, handle, 0, 24 * 33 * 8), &want[..24 * 33 * 8]);
    // Asked again, still an error (nothing wrong was cached).
    fails(fs.read(handle, 0, 65537), libc::EIO);
    fs.release(handle);

    // chunks/0.1.1 is chunk 3: EIO; every other chunk file reads exactly.
    let grid: Vec<u64> = shape
        .iter()
        .zip(&chunkshape)
        .map(|(s, c)| s.div_ceil(*c))
        .collect();
    for (c, coords) in grid_coords(&grid).into_iter().enumerate() {
        let cname = coords
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(".");
        let path = format!("bad.b2nd/chunks/{cname}");
        let opened = fs.open(ino(&fs, &path), false).unwrap();
        if c == 3 {
            assert_eq!(cname, "0.1.1");
            let err = fails(fs.read(opened.fh, 0, 4096), libc::EIO);
            assert!(
                err.to_string().contains("bad.b2nd") && err.to_string().contains("chunk 3"),
                "{err}"
            );
        } else {
            let got = read_through(&fs, opened.fh, 65536);
            assert!(
                got == expected_chunk(&want, &shape, &chunkshape, 8, &coords),
                "{path}"
            );
        }
        fs.release(opened.fh);
    }
    // The views: data.txt gives EIO where the damaged chunk lies and exact
    // text elsewhere (row 40 of the last chunk row); preview.png does not open.
    let text = fs.open(ino(&fs, "bad.b2nd/data.txt"), false).unwrap().fh;
    // Item (0, 24, 20) is in block 0 of chunk 3; items before it are not.
    let err = fails(fs.read(text, (24 * 33 + 20) * 25, 25), libc::EIO);
    assert!(err.to_string().contains("chunk 3"), "{err}");
    assert_eq!(
        read(&fs, text, 0, 25),
        format!("{:>24} ", f64::from_le_bytes(want[..8].try_into().unwrap())).as_bytes()
    );
    let line = read(&fs, text, 40 * 67 * 33 * 25, 25);
    let first = f64::from_le_bytes(
        want[40 * 67 * 33 * 8..40 * 67 * 33 * 8 + 8]
            .try_into()
            .unwrap(),
    );
    assert_eq!(
        String::from_utf8(line)
            .unwrap()
            .trim()
            .parse::<f64>()
            .unwrap(),
        first
    );
    fs.release(text);
    let err = fails(fs.open(ino(&fs, "bad.b2nd/preview.png"), false), libc::EIO);
    assert!(err.to_string().contains("chunk 3"), "{err}");
    fails(fs.open(ino(&fs, "bad.b2nd/preview.png"), false), libc::EIO);

    // meta.json still reads; .stats counts the errors.
    let meta: serde_json::Value =
        serde_json::from_slice(&read_path(&fs, "bad.b2nd/meta.json", 1 << 16)).unwrap();
    assert_eq!(meta["shape"], serde_json::json!([41, 67, 33]));
    let doc = stats(&fs);
    assert!(doc["read_errors"].as_u64().unwrap() >= 5, "{doc}");
}

// ---------------------------------------------------------------------------
// 7. A cache smaller than one block
// ---------------------------------------------------------------------------

#[test]
fn cache_smaller_than_a_block_still_reads_exact_bytes() {
    let src = tempfile::tempdir().unwrap();
    make_arrays(src.path());
    let want = raw(src.path(), "cube");
    // Blocks of the cube are 8x12x10 f8 = 7680 bytes; the cache holds 4096.
    let fs = filesystem(src.path(), 4096, 0);
    let got = read_path(&fs, "cube.b2nd/data", 131072);
    assert!(got == want, "128 KiB reads through a 4 KiB cache");
    let doc = stats(&fs);
    eprintln!("after one 128 KiB-window pass: {doc}");
    assert_eq!(doc["cache_budget"], 4096, "{doc}");
    assert!(doc["cache_bytes"].as_u64().unwrap() <= 4096, "{doc}");
    assert!(doc["cache_entries"].as_u64().unwrap() <= 1, "{doc}");
    assert_eq!(doc["bytes_served"], want.len() as u64, "{doc}");
    // Every block is decoded at least once; a window's blocks are decoded
    // once per window (at most two windows share one 8-row block slab), and
    // edge blocks carry padding (48x72x40 decoded for 41x67x33): < 3.5 x.
    let amplification = doc["decode_amplification"].as_f64().unwrap();
    assert!((1.0..3.5).contains(&amplification), "{doc}");

    // Odd windows with the same tiny cache (a DELTA array too: block 0 is
    // needed by every other block of its chunk).
    let opened = fs.open(ino(&fs, "cube.b2nd/data"), false).unwrap();
    check_odd_windows(&fs, opened.fh, &want, "cube with a 4 KiB cache");
    fs.release(opened.fh);
    let delta = raw(src.path(), "delta");
    assert!(
        read_path(&fs, "delta.b2nd/data", 65537) == delta,
        "DELTA array through a 4 KiB cache"
    );
    let opened = fs.open(ino(&fs, "delta.b2nd/data"), false).unwrap();
    check_odd_windows(&fs, opened.fh, &delta, "delta with a 4 KiB cache");
    fs.release(opened.fh);
    let doc = stats(&fs);
    assert!(doc["cache_bytes"].as_u64().unwrap() <= 4096, "{doc}");
    assert_eq!(doc["read_errors"], 0, "{doc}");
}

// ---------------------------------------------------------------------------
// 8. Read-only
// ---------------------------------------------------------------------------

#[test]
fn writes_are_refused_with_erofs() {
    let src = tempfile::tempdir().unwrap();
    let file = manifest_path("codec_zstd_shuffle");
    std::fs::copy(fixtures_dir().join(&file), src.path().join(&file)).unwrap();
    let fs = filesystem(src.path(), 1 << 20, 0);
    for path in [
        format!("{file}/data"),
        format!("{file}/data.npy"),
        format!("{file}/meta.json"),
        format!("{file}/chunks/0.0"),
        format!("{file}/chunks/.zarray"),
        ".stats".into(),
    ] {
        let i = ino(&fs, &path);
        let err = fails(fs.open(i, true), libc::EROFS);
        assert!(matches!(err, FsError::ReadOnly), "{path}: {err:?}");
        fails(fs.access(i, true), libc::EROFS);
        fs.access(i, false)
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let opened = fs.open(i, false).unwrap();
        fs.release(opened.fh);
    }
    for dir in ["", file.as_str(), &format!("{file}/chunks")] {
        let i = walk(&fs, dir).unwrap().ino;
        fails(fs.access(i, true), libc::EROFS);
        fs.access(i, false).unwrap();
        fails(fs.open(i, false), libc::EISDIR);
    }
    // Nothing was opened for writing, so nothing is still open.
    assert_eq!(stats(&fs)["open_files"], 1, "only .stats itself");
    // A closed handle is not readable.
    let opened = fs.open(ino(&fs, &format!("{file}/data")), false).unwrap();
    fs.release(opened.fh);
    fails(fs.read(opened.fh, 0, 16), libc::EBADF);
}

fn manifest_path(name: &str) -> String {
    read_manifest(&fixtures_dir())[name]["path"]
        .as_str()
        .unwrap()
        .to_string()
}

// ---------------------------------------------------------------------------
// 9. A contiguous frame grown in place by python-blosc2
// ---------------------------------------------------------------------------

#[test]
fn frame_grown_in_place_keeps_old_handle_exact_and_shows_new_chunks_to_new_lookups() {
    let src = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let frame = src.path().join("g.b2frame");
    let raw_path = scratch.path().join("g.raw");
    let chunk = 65536 * 4usize;
    let first = oracle(&[
        OsStr::new("grow"),
        frame.as_os_str(),
        OsStr::new("0"),
        OsStr::new("3"),
        raw_path.as_os_str(),
    ]);
    assert_eq!(first["nchunks"], 3, "{first}");
    assert_eq!(first["chunksize"], chunk, "{first}");
    let old = std::fs::read(&raw_path).unwrap();
    assert_eq!(old.len(), 3 * chunk);
    let before_bytes = std::fs::read(&frame).unwrap();
    let before = std::fs::metadata(&frame).unwrap();

    let fs = filesystem(src.path(), 64 << 20, 0);
    let data = walk(&fs, "g.b2frame/data").unwrap();
    assert_eq!(data.size, old.len() as u64);
    let handle = fs.open(data.ino, false).unwrap().fh;
    // Read a little of chunk 0 and of chunk 1 only.
    assert_eq!(read(&fs, handle, 1001, 20_000), &old[1001..21_001]);
    assert_eq!(
        read(&fs, handle, chunk as u64 + 7, 4093),
        &old[chunk + 7..chunk + 4100]
    );

    // python-blosc2 appends three chunks to the same file.
    let second = oracle(&[
        OsStr::new("grow"),
        frame.as_os_str(),
        OsStr::new("3"),
        OsStr::new("6"),
        raw_path.as_os_str(),
    ]);
    assert_eq!(second["nchunks"], 6, "{second}");
    let all = std::fs::read(&raw_path).unwrap();
    assert_eq!(all.len(), 6 * chunk);
    assert_eq!(&all[..old.len()], &old[..]);
    let after = std::fs::metadata(&frame).unwrap();
    assert_eq!(
        after.ino_of(),
        before.ino_of(),
        "python-blosc2 grew the file in place"
    );
    assert!(
        after.len() > before.len(),
        "{} -> {} bytes",
        before.len(),
        after.len()
    );
    // The old chunks' bytes did not move (the header and the index after them did change).
    let after_bytes = std::fs::read(&frame).unwrap();
    let (header_len, cbytes) = frame_header(&before_bytes);
    let (new_header_len, new_cbytes) = frame_header(&after_bytes);
    assert_eq!(new_header_len, header_len);
    assert!(new_cbytes > cbytes);
    let chunks_end = (header_len + cbytes) as usize;
    assert_eq!(
        &after_bytes[header_len as usize..chunks_end],
        &before_bytes[header_len as usize..chunks_end],
        "old chunk bytes unchanged"
    );
    assert_ne!(
        after_bytes[..header_len as usize],
        before_bytes[..header_len as usize],
        "header rewritten"
    );

    // The old handle reads its whole old range, including blocks and chunks
    // it never read before, exactly and without error.
    let mut pos = 0u64;
    while pos < old.len() as u64 {
        let got = fs
            .read(handle, pos, 65537)
            .unwrap_or_else(|e| panic!("old handle at {pos} after growth: {e}"));
        assert!(
            got == old[pos as usize..pos as usize + got.len()],
            "old handle bytes at {pos}"
        );
        pos += got.len() as u64;
    }
    assert_eq!(pos, old.len() as u64, "the old handle keeps the old size");
    assert!(read(&fs, handle, old.len() as u64, 4096).is_empty());
    fs.release(handle);

    // A fresh lookup shows the grown array and reads the appended chunks.
    let grown = walk(&fs, "g.b2frame/data").unwrap();
    assert_eq!(grown.size, all.len() as u64);
    let opened = fs.open(grown.ino, false).unwrap();
    let tail = read(&fs, opened.fh, old.len() as u64 - 5, 3 * chunk as u32 + 100);
    assert!(tail == all[old.len() - 5..], "appended chunks");
    check_odd_windows(&fs, opened.fh, &all, "grown g.b2frame/data");
    fs.release(opened.fh);
    let meta: serde_json::Value =
        serde_json::from_slice(&read_path(&fs, "g.b2frame/meta.json", 1 << 16)).unwrap();
    assert_eq!(meta["nchunks"], 6, "{meta}");
    let doc = stats(&fs);
    assert_eq!(doc["read_errors"], 0, "{doc}");
}

/// A b2nd array grown the way a running simulation grows its output
/// (`resize`, then the new rows written): an open `data` keeps its shape and
/// the bytes of every chunk left as it was, gets EIO (never new bytes) for
/// the edge chunk python-blosc2 rewrote in place, and a new lookup sees the
/// new shape.
#[test]
fn b2nd_array_resized_in_place_keeps_old_handle_exact_outside_the_rewritten_edge_chunk() {
    let src = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let path = src.path().join("sim.b2nd");
    let raw_path = scratch.path().join("sim.raw");
    let first = oracle(&[
        OsStr::new("ndgrow"),
        path.as_os_str(),
        OsStr::new("40"),
        raw_path.as_os_str(),
    ]);
    assert_eq!(first["shape"], serde_json::json!([40, 64]), "{first}");
    let old = std::fs::read(&raw_path).unwrap();
    let before = std::fs::metadata(&path).unwrap();

    let fs = filesystem(src.path(), 64 << 20, 0);
    let data = walk(&fs, "sim.b2nd/data").unwrap();
    assert_eq!(data.size, old.len() as u64);
    let handle = fs.open(data.ino, false).unwrap().fh;
    assert_eq!(read(&fs, handle, 8, 100), &old[8..108]);

    let second = oracle(&[
        OsStr::new("ndgrow"),
        path.as_os_str(),
        OsStr::new("100"),
        raw_path.as_os_str(),
    ]);
    assert_eq!(second["shape"], serde_json::json!([100, 64]), "{second}");
    let all = std::fs::read(&raw_path).unwrap();
    assert_eq!(&all[..old.len()], &old[..]);
    assert_eq!(
        std::fs::metadata(&path).unwrap().ino_of(),
        before.ino_of(),
        "python-blosc2 grew the file in place"
    );

    // Resizing rewrote the edge chunk (2) in place: the old handle reads
    // chunks 0 and 1 (rows 0..32, blocks never read before included)
    // exactly, and gets EIO naming chunk 2 for the rows it had there —
    // never the rewritten chunk's bytes.
    let rows_0_32 = 32 * 64 * 8;
    let got = fs
        .read(handle, 0, rows_0_32 as u32)
        .unwrap_or_else(|e| panic!("old handle after the resize: {e}"));
    assert!(got == old[..rows_0_32], "old handle bytes after the resize");
    let err = fs
        .read(handle, rows_0_32 as u64, 4096)
        .expect_err("chunk 2 was rewritten in place");
    assert_eq!(err.errno(), libc::EIO, "{err}");
    assert!(err.to_string().contains("chunk 2"), "{err}");
    fs.release(handle);

    let grown = walk(&fs, "sim.b2nd/data").unwrap();
    assert_eq!(grown.size, all.len() as u64);
    let opened = fs.open(grown.ino, false).unwrap();
    let whole = fs.read(opened.fh, 0, all.len() as u32).unwrap();
    assert!(whole == all, "grown array bytes");
    fs.release(opened.fh);
    assert_eq!(stats(&fs)["read_errors"], 1);
}

// ---------------------------------------------------------------------------
// Views: data.txt and preview.png
// ---------------------------------------------------------------------------

/// Writes arrays of every numeric dtype (`views DIR`), and checks a
/// `data.txt` against the numpy source with `np.loadtxt` (`loadtxt TXT NPY`).
const VIEWS_ORACLE: &str = r#"
import json, os, sys
import numpy as np
import blosc2

def save(out, name, arr, **kw):
    blosc2.asarray(arr, urlpath=os.path.join(out, name + ".b2nd"), mode="w", **kw)
    np.save(os.path.join(out, name + ".npy"), arr)
    return {"shape": list(arr.shape), "dtype": arr.dtype.str}

def bits(rng, dtype, shape):
    n = int(np.prod(shape))
    size = np.dtype(dtype).itemsize
    return np.frombuffer(rng.bytes(n * size), dtype=dtype).reshape(shape).copy()

def views(out):
    rng = np.random.default_rng(7)
    info = {}
    f2 = np.array([0, -0.0, 1, 0.1, 65504, -65504, 6e-8, 6.1035e-5, np.nan, np.inf, -np.inf, 1/3], dtype="<f2")
    info["f2"] = save(out, "f2", np.concatenate([f2, bits(rng, "<f2", (3000,))]), chunks=(1000,), blocks=(250,))
    f4 = bits(rng, "<f4", (60, 37))
    f4.flat[:9] = [0, -0.0, np.nan, np.inf, -np.inf, 1e-45, 1.1754942e-38, 3.4028235e38, 0.1]
    info["f4"] = save(out, "f4", f4, chunks=(32, 20), blocks=(8, 10))
    f8 = bits(rng, "<f8", (7, 11, 13))
    f8.flat[:10] = [0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e300, 0.1]
    info["f8"] = save(out, "f8", f8, chunks=(4, 6, 13), blocks=(2, 3, 13))
    info["f8be"] = save(out, "f8be", f8.astype(">f8"), chunks=(4, 6, 13), blocks=(2, 3, 13))
    for t in ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8"]:
        a = bits(rng, "<" + t, (40, 9))
        info_ = np.iinfo(a.dtype)
        a.flat[:3] = [info_.min, info_.max, 0]
        info[t] = save(out, t, a, chunks=(16, 9), blocks=(4, 9))
    info["bool"] = save(out, "bool", rng.integers(0, 2, (13, 5)).astype("?"), chunks=(8, 5), blocks=(4, 5))
    c8 = bits(rng, "<c8", (300,))
    c8[:4] = [complex(np.nan, 1), complex(1, -np.inf), complex(-0.0, -0.0), complex(3e38, -1e-45)]
    info["c8"] = save(out, "c8", c8, chunks=(100,), blocks=(50,))
    info["c16"] = save(out, "c16", bits(rng, "<c16", (5, 4, 3)), chunks=(5, 4, 3), blocks=(5, 4, 3))
    rec = np.zeros(500, dtype=[("flag", "?"), ("n", "<i8"), ("x", "<f4"), ("z", "<c16")])
    rec["flag"] = rng.integers(0, 2, 500)
    rec["n"] = rng.integers(-2**63, 2**63 - 1, 500, dtype="<i8")
    rec["x"] = bits(rng, "<f4", (500,))
    rec["z"] = bits(rng, "<c16", (500,))
    info["rec"] = save(out, "rec", rec, chunks=(128,), blocks=(32,))
    info["strings"] = save(out, "strings", np.array(["ab", "cde"]), chunks=(2,), blocks=(2,))
    # Large enough for several hundred blocks: reading its first lines must decode only the first.
    info["big"] = save(out, "big", np.arange(512 * 2048, dtype="<f8").reshape(512, 2048), chunks=(64, 2048), blocks=(8, 256))
    return info

def same(a, b):
    if a.dtype.names:
        return all(same(a[n], b[n]) for n in a.dtype.names)
    if a.dtype.kind == "c":
        return same(a.real.copy(), b.real.copy()) and same(a.imag.copy(), b.imag.copy())
    if a.dtype.kind == "f":
        nan = np.isnan(a) & np.isnan(b)
        u = "u%d" % a.dtype.itemsize
        return bool(np.all(nan | (a.astype(a.dtype.newbyteorder("=")).view(u) == b.astype(a.dtype.newbyteorder("=")).view(u))))
    return bool(np.array_equal(a, b))

def loadtxt(txt, npy):
    want = np.load(npy)
    got = np.loadtxt(txt, dtype=want.dtype, ndmin=1 if want.ndim < 2 else 2)
    flat = want.reshape(-1, want.shape[-1]) if want.ndim >= 2 else want.reshape(-1)
    return {"shape": list(got.shape), "equal": bool(got.shape == flat.shape and same(got, flat))}

VIRIDIS = [[68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
           [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37]]

def colour(t):
    # The colour map of docs/semantics.md: 256 steps, linear between the 9 anchors.
    step = int(np.floor(min(max(t, 0.0), 1.0) * 255.0 + 0.5))
    at = step * 8.0 / 255.0
    i = min(int(np.floor(at)), 7)
    f = at - i
    return tuple(int(np.floor(a + (b - a) * f + 0.5)) for a, b in zip(VIRIDIS[i], VIRIDIS[i + 1]))

def pictures(out):
    rng = np.random.default_rng(11)
    info = {}
    small = np.array([[0, 17, 34, 51, 68], [85, 102, 119, 136, np.nan], [np.inf, -np.inf, 255, 170, 187]], dtype="<f4")
    info["small"] = save(out, "small", small, chunks=(2, 3), blocks=(1, 2))
    info["rgb"] = save(out, "rgb", rng.integers(0, 256, (2, 6, 7, 3), dtype="u1"), chunks=(1, 4, 4, 3), blocks=(1, 2, 2, 3))
    info["rgba"] = save(out, "rgba", rng.integers(0, 256, (5, 4, 4), dtype="u1"), chunks=(3, 4, 4), blocks=(3, 2, 4))
    y, x = np.mgrid[0:1500, 0:700]
    info["wide"] = save(out, "wide", (np.sin(y / 100.0) * np.cos(x / 50.0) * 1000).astype("<f4"), chunks=(256, 256), blocks=(64, 64))
    info["line"] = save(out, "line", np.sin(np.arange(1000) / 40.0) * 3 + np.arange(1000) / 500.0, chunks=(300,), blocks=(100,))
    y, x = np.mgrid[0:2000, 0:1500]
    info["huge"] = save(out, "huge", (y * 1500 + x).astype("<f8"), chunks=(500, 500), blocks=(100, 100))
    info["longline"] = save(out, "longline", np.sin(np.arange(3_000_000) / 20000.0), chunks=(500_000,), blocks=(10_000,))
    return info

def checkpng(png, npy, kind):
    from PIL import Image
    img = Image.open(png)
    img.load()
    arr = np.load(npy)
    px = np.asarray(img)
    res = {"size": list(img.size), "mode": img.mode, "text": {k: v.strip() for k, v in img.text.items()}}
    problems = []
    if kind in ("rgb", "rgba"):
        if not np.array_equal(px, arr[0] if arr.ndim == 4 else arr):
            problems.append("pixels differ from the array")
    elif kind == "map":
        h, w = arr.shape[-2:]
        k = -(-max(h, w) // 512)
        a = arr.reshape(-1, h, w)[0][::k, ::k].astype("f8")
        fin = a[np.isfinite(a)]
        lo, hi = fin.min(), fin.max()
        if res["text"]["Range"].split() != [repr(float(lo)).replace("e+", "e"), repr(float(hi)).replace("e+", "e")] and            [float(v) for v in res["text"]["Range"].split()] != [lo, hi]:
            problems.append("range %s, want %r %r" % (res["text"]["Range"], lo, hi))
        for (r, c), v in np.ndenumerate(a):
            if np.isnan(v):
                want = (255, 0, 255)
            elif v == np.inf:
                want = colour(1.0)
            elif v == -np.inf:
                want = colour(0.0)
            else:
                want = colour((v - lo) / (hi - lo) if hi > lo else 0.5)
            if tuple(int(x) for x in px[r, c]) != want:
                problems.append("pixel %d,%d: %s, want %s (value %r)" % (c, r, tuple(px[r, c]), want, v))
                break
        res["shape"] = list(a.shape)
    elif kind == "line":
        n = arr.shape[0]
        lo, hi = arr.min(), arr.max()
        line = np.all(px == [31, 119, 180], axis=-1)
        for x in range(512):
            s = x * n // 512
            e = min(max((x + 1) * n // 512, s + 1), n)
            seg = arr[s:e]
            top = int(np.floor((1 - (seg.max() - lo) / (hi - lo)) * 255 + 0.5))
            bottom = int(np.floor((1 - (seg.min() - lo) / (hi - lo)) * 255 + 0.5))
            rows = np.nonzero(line[:, x])[0]
            if list(rows) != list(range(top, bottom + 1)):
                problems.append("column %d: rows %s, want %d..%d" % (x, list(rows), top, bottom))
                break
    elif kind == "sampledline":
        lo, hi = [float(v) for v in res["text"]["Range"].split()]
        if not (lo in arr and hi in arr):
            problems.append("range %r %r not values of the array" % (lo, hi))
        line = np.all(px == [31, 119, 180], axis=-1)
        drawn = [x for x in range(512) if line[:, x].any()]
        if len(drawn) != 512:
            problems.append("%d columns drawn" % len(drawn))
        for x in drawn:
            rows = np.nonzero(line[:, x])[0]
            if list(rows) != list(range(rows[0], rows[-1] + 1)):
                problems.append("column %d not one run" % x)
                break
    elif kind == "sampled":
        lo, hi = [float(v) for v in res["text"]["Range"].split()]
        a = arr.reshape(-1)
        if not (lo in a and hi in a and lo < hi):
            problems.append("range %r %r not values of the array" % (lo, hi))
        # Every pixel shows a value of the sample's range through the colour map.
        allowed = {colour(t) for t in np.arange(256) / 255.0}
        seen = {tuple(int(x) for x in p) for p in px.reshape(-1, 3)}
        if not seen <= allowed or len(seen) < 20:
            problems.append("%d colours, %d outside the map" % (len(seen), len(seen - allowed)))
    res["problems"] = problems
    return res

cmd = sys.argv[1]
if cmd == "views":
    res = views(sys.argv[2])
elif cmd == "pictures":
    res = pictures(sys.argv[2])
elif cmd == "checkpng":
    res = checkpng(sys.argv[2], sys.argv[3], sys.argv[4])
elif cmd == "loadtxt":
    res = loadtxt(sys.argv[2], sys.argv[3])
else:
    raise SystemExit("unknown command " + cmd)
print(json.dumps(res))
"#;

/// Run a views-oracle command; its JSON answer.
fn views_oracle(args: &[&OsStr]) -> serde_json::Value {
    let out = Command::new(python())
        .arg("-c")
        .arg(VIEWS_ORACLE)
        .args(args)
        .output()
        .expect("run the python oracle");
    assert!(
        out.status.success(),
        "python oracle {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "oracle said {:?}: {e}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn data_txt_loads_back_exactly_with_numpy_for_every_numeric_dtype() {
    let src = tempfile::tempdir().unwrap();
    let info = views_oracle(&[OsStr::new("views"), src.path().as_os_str()]);
    let fs = filesystem(src.path(), 64 << 20, 0);
    let out = tempfile::tempdir().unwrap();
    for (name, entry) in info.as_object().unwrap() {
        let dir = format!("{name}.b2nd");
        if name == "strings" {
            // ["ab", "cde"] as <U3: quoted, left-aligned in 2 + 10 * 3 bytes, one a line.
            let text = read_path(&fs, &format!("{dir}/data.txt"), 4093);
            assert_eq!(
                String::from_utf8(text).unwrap(),
                format!("{:<32}\n{:<32}\n", "\"ab\"", "\"cde\"")
            );
            continue;
        }
        if name == "big" {
            continue;
        }
        let listed = names(&fs, ino(&fs, &dir));
        assert!(
            listed.contains(&"data.txt".to_string()),
            "{name}: {listed:?}"
        );
        let attr = walk(&fs, &format!("{dir}/data.txt")).unwrap();
        let text = read_path(&fs, &format!("{dir}/data.txt"), 4093);
        assert_eq!(text.len() as u64, attr.size, "{name}: size at stat time");
        // Every line has the same length; lines = rows of the last axis.
        let shape = dims(&entry["shape"]);
        let nlines = if shape.len() >= 2 {
            shape[..shape.len() - 1].iter().product::<u64>()
        } else {
            shape[0]
        };
        assert_eq!(
            text.iter().filter(|&&b| b == b'\n').count() as u64,
            nlines,
            "{name}: lines"
        );
        let line_len = text.iter().position(|&b| b == b'\n').unwrap() + 1;
        assert_eq!(
            text.len(),
            line_len * nlines as usize,
            "{name}: fixed-width lines"
        );
        let path = out.path().join(format!("{name}.txt"));
        std::fs::write(&path, &text).unwrap();
        let check = views_oracle(&[
            OsStr::new("loadtxt"),
            path.as_os_str(),
            src.path().join(format!("{name}.npy")).as_os_str(),
        ]);
        assert_eq!(
            check["equal"], true,
            "{name}: np.loadtxt gives back the array: {check}"
        );

        // A ranged read in the middle equals the same slice of the whole file.
        let opened = fs.open(attr.ino, false).unwrap();
        for (offset, size) in [
            (text.len() as u64 / 3, 1001u32),
            (text.len() as u64 / 2 + 3, 17),
            (text.len() as u64 - 5, 100),
        ] {
            let got = read(&fs, opened.fh, offset, size);
            let end = (offset as usize + size as usize).min(text.len());
            assert_eq!(
                got,
                &text[offset as usize..end],
                "{name}: {size} bytes at {offset}"
            );
        }
        fs.release(opened.fh);
    }
}

#[test]
fn first_lines_of_data_txt_decode_only_the_first_blocks() {
    let src = tempfile::tempdir().unwrap();
    views_oracle(&[OsStr::new("views"), src.path().as_os_str()]);
    let fs = filesystem(src.path(), 64 << 20, 0);
    let attr = walk(&fs, "big.b2nd/data.txt").unwrap();
    assert_eq!(
        attr.size,
        512 * 2048 * 25,
        "24 bytes a value plus a separator"
    );
    let opened = fs.open(attr.ino, false).unwrap();
    let head = read(&fs, opened.fh, 0, 4096);
    let text = String::from_utf8(head).unwrap();
    let values: Vec<&str> = text.split_ascii_whitespace().collect();
    assert_eq!(values[..4], ["0", "1", "2", "3"]);
    assert_eq!(&text[..25], &format!("{:>24} ", 0));
    // The second line starts at item 2048 (row 1, in the same 8 x 256 block).
    let line2 = read(&fs, opened.fh, 2048 * 25, 25);
    assert_eq!(line2, format!("{:>24} ", 2048).as_bytes());
    fs.release(opened.fh);
    let doc = stats(&fs);
    // 4096 bytes = 164 items of row 0, all in block (0, 0) of 8 x 256 items, as is item 2048.
    assert_eq!(doc["blocks_decoded"], 1, "{doc}");
}

#[test]
fn preview_png_decodes_with_pillow_to_the_expected_picture() {
    let src = tempfile::tempdir().unwrap();
    views_oracle(&[OsStr::new("pictures"), src.path().as_os_str()]);
    // Previews to look at: BLOSC2FS_PREVIEW_DIR=/some/dir.
    let keep = std::env::var_os("BLOSC2FS_PREVIEW_DIR").map(PathBuf::from);
    let out = tempfile::tempdir().unwrap();
    let fs = filesystem(src.path(), 64 << 20, 0);
    let cases = [
        ("small", "map", (5, 3), "RGB"),
        ("rgb", "rgb", (7, 6), "RGB"),
        ("rgba", "rgba", (4, 5), "RGBA"),
        ("wide", "map", (234, 500), "RGB"),
        ("line", "line", (512, 256), "RGB"),
    ];
    for (name, kind, (w, h), mode) in cases {
        let path = format!("{name}.b2nd/preview.png");
        assert!(
            names(&fs, ino(&fs, &format!("{name}.b2nd"))).contains(&"preview.png".to_string()),
            "{name}"
        );
        let attr = walk(&fs, &path).unwrap();
        let png = read_path(&fs, &path, 4093);
        assert_eq!(png.len() as u64, attr.size, "{name}: size at stat time");
        let file = out.path().join(format!("{name}.png"));
        std::fs::write(&file, &png).unwrap();
        if let Some(dir) = &keep {
            std::fs::write(dir.join(format!("{name}.png")), &png).unwrap();
        }
        let check = views_oracle(&[
            OsStr::new("checkpng"),
            file.as_os_str(),
            src.path().join(format!("{name}.npy")).as_os_str(),
            OsStr::new(kind),
        ]);
        assert_eq!(check["size"], serde_json::json!([w, h]), "{name}: {check}");
        assert_eq!(check["mode"], mode, "{name}: {check}");
        assert_eq!(check["text"]["Sampled"], "no", "{name}: {check}");
        assert_eq!(check["problems"], serde_json::json!([]), "{name}: {check}");
    }
    let check = views_oracle(&[
        OsStr::new("checkpng"),
        out.path().join("small.png").as_os_str(),
        src.path().join("small.npy").as_os_str(),
        OsStr::new("map"),
    ]);
    assert_eq!(check["text"]["Range"], "0 255", "{check}");

    // Larger than the cache: a sampled mosaic decoding at most 64 blocks.
    let fs = filesystem(src.path(), 4 << 20, 0);
    let png = read_path(&fs, "huge.b2nd/preview.png", 1 << 20);
    let decoded = stats(&fs)["blocks_decoded"].as_u64().unwrap();
    assert!(
        (32..=64).contains(&decoded),
        "one block per tile, at most 64: {decoded}"
    );
    let file = out.path().join("huge.png");
    std::fs::write(&file, &png).unwrap();
    if let Some(dir) = &keep {
        std::fs::write(dir.join("huge.png"), &png).unwrap();
    }
    let check = views_oracle(&[
        OsStr::new("checkpng"),
        file.as_os_str(),
        src.path().join("huge.npy").as_os_str(),
        OsStr::new("sampled"),
    ]);
    assert_eq!(check["size"], serde_json::json!([375, 500]), "{check}");
    assert!(
        check["text"]["Sampled"]
            .as_str()
            .unwrap()
            .starts_with("yes"),
        "{check}"
    );
    assert_eq!(check["problems"], serde_json::json!([]), "{check}");
    // A long 1-D array: a sampled line plot.
    let fs1 = filesystem(src.path(), 4 << 20, 0);
    let line_png = read_path(&fs1, "longline.b2nd/preview.png", 1 << 20);
    let decoded = stats(&fs1)["blocks_decoded"].as_u64().unwrap();
    assert!(
        (32..=64).contains(&decoded),
        "one block per tile, at most 64: {decoded}"
    );
    let file = out.path().join("longline.png");
    std::fs::write(&file, &line_png).unwrap();
    if let Some(dir) = &keep {
        std::fs::write(dir.join("longline.png"), &line_png).unwrap();
    }
    let check = views_oracle(&[
        OsStr::new("checkpng"),
        file.as_os_str(),
        src.path().join("longline.npy").as_os_str(),
        OsStr::new("sampledline"),
    ]);
    assert_eq!(check["size"], serde_json::json!([512, 256]), "{check}");
    assert!(
        check["text"]["Sampled"]
            .as_str()
            .unwrap()
            .starts_with("yes"),
        "{check}"
    );
    assert_eq!(check["problems"], serde_json::json!([]), "{check}");
    // Drawn once per version: a second open decodes nothing more.
    let before = stats(&fs)["blocks_decoded"].clone();
    assert!(read_path(&fs, "huge.b2nd/preview.png", 1 << 20) == png);
    assert_eq!(stats(&fs)["blocks_decoded"], before);
}
