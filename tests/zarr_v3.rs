//! The mount as a Zarr v3 hierarchy (issue 37), mounted for real and read
//! by the real readers: a corpus of python-blosc2 files
//! (scripts/gen/gen_zarr3_corpus.py: the committed fixtures of every codec,
//! filter, numeric dtype and rank, the committed stores, big-endian arrays,
//! vlmeta, saved dimension names, saved lazy expressions) is read through
//! zarr-python 3, xarray's datatree, tensorstore's zarr3 driver and a
//! 2-process Dask cluster by scripts/check/check_zarr_v3.py, exactly, from a
//! local tree and from an S3 prefix (moto). The shell view is checked too:
//! an array folder gains one entry, `c/` is reachable but not listed, and
//! `--views` without `zarr3` shows no `zarr.json`.
//!
//! The reader tests skip (printing why) when a reader is not importable
//! from the oracle's Python (scripts/setup_venv.sh installs them).

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::mount::{serial_with_fuse, Mount};
use common::*;

/// Whether the oracle's Python has every reader; prints why a test skips.
fn have_readers(test: &str, extra: &[&str]) -> bool {
    let mut modules = vec!["zarr", "xarray", "tensorstore", "dask.distributed"];
    modules.extend_from_slice(extra);
    let code = format!(
        "import {}; import zarr; assert int(zarr.__version__.split('.')[0]) >= 3, zarr.__version__",
        modules.join(", ")
    );
    let out = Command::new(oracle_python())
        .args(["-c", &code])
        .output()
        .expect("run python");
    if !out.status.success() {
        eprintln!(
            "SKIP {test}: the Zarr v3 readers ({}, zarr>=3) are not importable from {} (run scripts/setup_venv.sh): {}",
            modules.join(", "),
            oracle_python().display(),
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")
        );
    }
    out.status.success()
}

/// The corpus, built in a temporary folder: (folder, its `src` tree, the
/// expectations).
fn corpus() -> (tempfile::TempDir, PathBuf, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(oracle_python())
        .arg(repo_root().join("scripts/gen/gen_zarr3_corpus.py"))
        .arg(dir.path())
        .arg(fixtures_dir())
        .output()
        .expect("run gen_zarr3_corpus.py");
    assert!(
        out.status.success(),
        "gen_zarr3_corpus.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("expected.json")).unwrap()).unwrap();
    let src = dir.path().join("src");
    (dir, src, expected)
}

/// Run scripts/check/check_zarr_v3.py on `mnt` with `expected`; its counts.
fn check(mnt: &Path, expected: &serde_json::Value, dir: &Path) -> serde_json::Value {
    let path = dir.join("expected-here.json");
    fs::write(&path, serde_json::to_vec(expected).unwrap()).unwrap();
    let out = Command::new(oracle_python())
        .arg(repo_root().join("scripts/check/check_zarr_v3.py"))
        .arg(mnt)
        .arg(&path)
        .env("PYTHONWARNINGS", "ignore")
        .output()
        .expect("run check_zarr_v3.py");
    assert!(
        out.status.success(),
        "check_zarr_v3.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap()
}

/// Every reader reached every expected array.
fn assert_all_read(counts: &serde_json::Value, expected: &serde_json::Value) {
    let n = expected["arrays"].as_object().unwrap().len() as u64;
    for reader in ["expected", "zarr", "xarray", "tensorstore", "dask"] {
        assert_eq!(counts[reader].as_u64(), Some(n), "{reader}: {counts}");
    }
}

#[test]
fn a_local_tree_reads_exactly_through_every_v3_reader() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    if !have_readers("a_local_tree_reads_exactly_through_every_v3_reader", &[]) {
        return;
    }
    let (dir, src, expected) = corpus();
    let arrays = expected["arrays"].as_object().unwrap();
    // The corpus covers what it says: every core dtype (both byte orders
    // where they have one), ranks 0 to 8, computed arrays, store values.
    let dtypes: BTreeSet<&str> = arrays
        .values()
        .map(|e| e["dtype"].as_str().unwrap())
        .collect();
    for d in [
        "|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8", "<c8",
        "<c16", ">i2", ">i4", ">u4", ">f4", ">f8", ">c16",
    ] {
        assert!(dtypes.contains(d), "the corpus has no {d} array");
    }
    let ranks: BTreeSet<usize> = arrays
        .values()
        .map(|e| e["shape"].as_array().unwrap().len())
        .collect();
    assert!(
        (0..=6).all(|r| ranks.contains(&r)) && ranks.contains(&8),
        "{ranks:?}"
    );
    assert!(arrays.keys().any(|k| k.starts_with("computed/sum_ab")));
    assert!(arrays
        .keys()
        .any(|k| k.starts_with("stores/tree.b2z/exp/run2/delta")));
    let m = Mount::start(&src, &[]);
    let counts = check(m.path(), &expected, dir.path());
    assert_all_read(&counts, &expected);
    assert_eq!(
        counts["not_v3"].as_u64(),
        Some(expected["not_v3"].as_array().unwrap().len() as u64)
    );
    assert!(counts["not_v3"].as_u64().unwrap() >= 5, "{counts}");
}

fn names(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// Every path under `dir` (not following symlinks), relative.
fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
    for name in names(dir) {
        let path = dir.join(&name);
        let rel = format!("{rel}{name}");
        if fs::symlink_metadata(&path).unwrap().is_dir() {
            walk(&path, &format!("{rel}/"), out);
        }
        out.push(rel);
    }
}

const EVERY_VIEW_BUT_ZARR3: &str = "npy,text,preview,chunks,items,nrrd,metaimage,envi,table";

#[test]
fn an_array_folder_gains_only_zarr_json_and_its_chunk_keys_are_hidden() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let fixtures = fixtures_dir();
    let m = Mount::start(&fixtures, &["--views", "all"]);
    let f8 = m.path().join("dtype_le_f8.b2nd");
    let before = [
        "chunks",
        "data",
        "data.hdr",
        "data.mhd",
        "data.nhdr",
        "data.npy",
        "data.txt",
        "meta.json",
        "preview.png",
    ];
    let mut after: Vec<&str> = before.to_vec();
    after.push("zarr.json");
    after.sort();
    assert_eq!(names(&f8), after, "ls gains exactly zarr.json");
    // The chunk tree is there by name only.
    assert!(!names(&f8).contains(&"c".to_string()));
    assert!(fs::metadata(f8.join("c")).unwrap().is_dir());
    assert_eq!(names(&f8.join("c")), ["0", "1", "2"]);
    assert_eq!(names(&f8.join("c/1")), ["0", "1", "2"]);
    // (33, 21) in (12, 8) chunks: a grid of 3 x 3, every chunk file full.
    for (i, j) in [(0, 0), (1, 2), (2, 1)] {
        let v3 = f8.join(format!("c/{i}/{j}"));
        let meta = fs::metadata(&v3).unwrap();
        assert!(meta.is_file());
        assert_eq!(meta.len(), 12 * 8 * 8);
        assert_eq!(
            fs::read(&v3).unwrap(),
            fs::read(f8.join(format!("chunks/{i}.{j}"))).unwrap(),
            "c/{i}/{j}"
        );
    }
    for missing in ["c/3", "c/0/3", "c/01/0", "c/0/0/0", "c/x"] {
        assert!(fs::metadata(f8.join(missing)).is_err(), "{missing}");
    }
    let doc: serde_json::Value =
        serde_json::from_slice(&fs::read(f8.join("zarr.json")).unwrap()).unwrap();
    assert_eq!(doc["node_type"], "array");
    assert_eq!(doc["shape"], serde_json::json!([33, 21]));
    assert_eq!(doc["data_type"], "float64");
    assert_eq!(
        doc["chunk_grid"]["configuration"]["chunk_shape"],
        serde_json::json!([12, 8])
    );
    assert_eq!(
        doc["dimension_names"],
        serde_json::json!(["dtype_le_f8.b2nd_dim0", "dtype_le_f8.b2nd_dim1"])
    );
    // Big-endian: the bytes codec says so.
    let be: serde_json::Value =
        serde_json::from_slice(&fs::read(m.path().join("dtype_be_i4.b2nd/zarr.json")).unwrap())
            .unwrap();
    assert_eq!(
        be["codecs"],
        serde_json::json!([{"name": "bytes", "configuration": {"endian": "big"}}])
    );
    // A 0-d array's one chunk is the file `c`.
    let scalar = m.path().join("shape_0d_f8.b2nd");
    assert!(fs::metadata(scalar.join("c")).unwrap().is_file());
    assert_eq!(
        fs::read(scalar.join("c")).unwrap(),
        fs::read(scalar.join("chunks/0")).unwrap()
    );
    // Strings and records are left out, and meta.json says why.
    for name in ["dtype_S7.b2nd", "dtype_U5.b2nd", "dtype_struct.b2nd"] {
        let dir = m.path().join(name);
        assert!(!names(&dir).contains(&"zarr.json".to_string()), "{name}");
        assert!(fs::metadata(dir.join("c")).is_err(), "{name}");
        let meta: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.join("meta.json")).unwrap()).unwrap();
        assert_eq!(meta["zarr"]["v3"], false, "{name}");
        assert!(
            meta["zarr"]["reason"]
                .as_str()
                .unwrap()
                .starts_with("Zarr v3 has no core data type for dtype"),
            "{name}: {}",
            meta["zarr"]
        );
    }
    // Folders are groups: the mount root, a store, its nested group.
    let group = |p: &Path| -> serde_json::Value {
        serde_json::from_slice(&fs::read(p.join("zarr.json")).unwrap()).unwrap()
    };
    assert_eq!(
        group(m.path()),
        serde_json::json!({"zarr_format": 3, "node_type": "group",
                           "attributes": {"blosc2fs": {"kind": "folder", "name": "fixtures"}}})
    );
    let tree = m.path().join("stores/tree.b2z");
    assert_eq!(
        group(&tree)["attributes"],
        serde_json::json!({"author": "blosc2fs tests", "n": 3,
                           "blosc2fs": {"kind": "store", "format": "b2z", "class": "b2tree"}})
    );
    assert_eq!(
        group(&tree.join("exp"))["attributes"]["note"],
        "experiment group"
    );
    assert_eq!(
        group(&m.path().join("stores/table.b2d"))["attributes"]["blosc2fs"]["columns"],
        serde_json::json!(["a", "b"])
    );
    drop(m);

    // Without zarr3 in --views (also through -o views=) there is no
    // zarr.json anywhere and no chunk tree.
    for args in [
        vec!["--views", EVERY_VIEW_BUT_ZARR3],
        vec!["-o", "views=npy:chunks"],
    ] {
        let m = Mount::start(&fixtures, &args);
        let f8 = m.path().join("dtype_le_f8.b2nd");
        if args[0] == "--views" {
            assert_eq!(names(&f8), before, "{args:?}");
        }
        assert!(fs::metadata(f8.join("c")).is_err(), "{args:?}");
        assert!(
            fs::metadata(m.path().join("zarr.json")).is_err(),
            "{args:?}"
        );
        let mut all = Vec::new();
        walk(m.path(), "", &mut all);
        assert!(all.len() > 500, "{}", all.len());
        let zarr_json: Vec<_> = all.iter().filter(|p| p.ends_with("zarr.json")).collect();
        assert!(zarr_json.is_empty(), "{args:?}: {zarr_json:?}");
    }
    // With it, `find` sees one zarr.json per folder and per v3 array, and no
    // chunk key.
    let m = Mount::start(&fixtures, &[]);
    let mut all = Vec::new();
    walk(m.path(), "", &mut all);
    assert!(all
        .iter()
        .any(|p| p == "stores/tree.b2z/exp/run1/zarr.json"));
    let listed: BTreeSet<&str> = all.iter().map(String::as_str).collect();
    let mut arrays = 0;
    for p in all.iter().filter(|p| p.ends_with("zarr.json")) {
        let doc: serde_json::Value =
            serde_json::from_slice(&fs::read(m.path().join(p)).unwrap()).unwrap();
        if doc["node_type"] == "array" {
            arrays += 1;
            let folder = p.trim_end_matches("zarr.json");
            assert!(
                !listed.contains(format!("{folder}c").as_str()),
                "{folder}c was listed"
            );
            assert!(
                fs::metadata(m.path().join(format!("{folder}c"))).is_ok(),
                "{folder}c"
            );
        }
    }
    assert!(arrays > 150, "{arrays} v3 arrays");
}

// ---------------------------------------------------------------- S3 (moto)

/// The same corpus from an S3 prefix (a moto server).
#[cfg(feature = "remote")]
mod s3 {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::process::{Child, Stdio};
    use std::time::{Duration, Instant};

    /// A server process, killed when dropped.
    struct Server(Child);

    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn start_moto() -> (Server, u16) {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new(oracle_python().with_file_name("moto_server"))
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "moto did not start");
            assert!(child.try_wait().unwrap().is_none(), "moto exited");
            std::thread::sleep(Duration::from_millis(100));
        }
        (Server(child), port)
    }

    /// Upload every file under `dir` but those under `skip` to `bucket`.
    fn upload_dir(port: u16, bucket: &str, dir: &Path, skip: &str) {
        let script = r#"
import os, sys, boto3
port, bucket, root, skip = sys.argv[1:5]
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", aws_access_key_id="testing",
                  aws_secret_access_key="testing", region_name="us-east-1")
s3.create_bucket(Bucket=bucket)
for base, _, files in os.walk(root):
    for f in files:
        key = os.path.relpath(os.path.join(base, f), root)
        if not key.startswith(skip):
            s3.upload_file(os.path.join(base, f), bucket, key)
"#;
        let status = Command::new(oracle_python())
            .args([
                "-c",
                script,
                &port.to_string(),
                bucket,
                dir.to_str().unwrap(),
                skip,
            ])
            .status()
            .unwrap();
        assert!(status.success(), "upload to moto failed");
    }

    #[test]
    fn an_s3_prefix_reads_exactly_through_every_v3_reader() {
        let test = "an_s3_prefix_reads_exactly_through_every_v3_reader";
        let Some(_guard) = serial_with_fuse() else {
            return;
        };
        if !have_readers(test, &["moto", "boto3"]) {
            return;
        }
        let (dir, src, mut expected) = corpus();
        // Saved expressions name their operands by local path: they are the
        // local test's. Everything else goes to the bucket.
        expected["arrays"]
            .as_object_mut()
            .unwrap()
            .retain(|k, _| !k.starts_with("computed/"));
        let (_server, port) = start_moto();
        upload_dir(port, "zarr3", &src, "computed/");
        let endpoint = format!("http://127.0.0.1:{port}");
        let env = [
            ("AWS_ACCESS_KEY_ID", "testing"),
            ("AWS_SECRET_ACCESS_KEY", "testing"),
            ("AWS_REGION", "us-east-1"),
            ("AWS_ALLOW_HTTP", "true"),
            ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ];
        let m = Mount::start_with_env(Path::new("s3://zarr3/"), &[], &env);
        assert!(names(m.path()).contains(&"zarr.json".to_string()));
        let counts = check(m.path(), &expected, dir.path());
        assert_all_read(&counts, &expected);
        assert!(counts["expected"].as_u64().unwrap() > 150, "{counts}");
    }
}
