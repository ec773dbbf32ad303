//! Caterva2 servers for real: `cat2-server` (the `caterva2[services]`
//! package of the test virtualenv, installed by scripts/setup_venv.sh)
//! started on 127.0.0.1 over a state directory the test fills, mounted as
//! `c2+http://127.0.0.1:PORT/@ROOT`. Every fixture, HDF5 leaf and store
//! value reads exactly (bytes checked against numpy's, computed by the
//! generators, never by blosc2fs); a cold random read costs few requests;
//! a login is made, kept secret and renewed; a killed server, 503s and a
//! replaced dataset give errors or right bytes, never wrong ones.
//! Skips (saying why) when `cat2-server` is not installed.
//!
//! Built only with the cargo feature `remote` (on by default).
#![cfg(feature = "remote")]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::mount::{is_mountpoint, python, run_python_bytes, serial_with_fuse, Daemon, Mount};
use common::*;

const EIO: i32 = 5;

// ---------------------------------------------------------------- helpers

/// A program of the virtualenv (`cat2-server`, `cat2-admin`).
fn venv_bin(name: &str) -> PathBuf {
    python().with_file_name(name)
}

/// Whether `cat2-server` is installed; says why `test` skips if not.
fn have_caterva2(test: &str) -> bool {
    let server = venv_bin("cat2-server");
    let ok = server.exists() && venv_bin("cat2-admin").exists();
    if !ok {
        eprintln!(
            "SKIP {test}: {} missing (scripts/setup_venv.sh installs caterva2[services])",
            server.display()
        );
    }
    ok
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A python-blosc2 array of `n` random float64 (seed `seed`) at `out`, in
/// chunks and blocks of `chunk` and `block` values; numpy's bytes of it.
fn random_array(out: &Path, n: usize, chunk: usize, block: usize, seed: u64) -> Vec<u8> {
    let script = r#"
import sys, numpy as np, blosc2
n, chunk, block, seed, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
a = np.random.default_rng(seed).random(n)
blosc2.asarray(a, urlpath=out, mode="w", chunks=(chunk,), blocks=(block,), cparams=dict(codec=blosc2.Codec.LZ4, clevel=5))
sys.stdout.buffer.write(a.tobytes())
"#;
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let raw = run_python_bytes(
        script,
        &[
            &n.to_string(),
            &chunk.to_string(),
            &block.to_string(),
            &seed.to_string(),
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(raw.len(), n * 8);
    raw
}

/// Copy the tree at `from` to `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Run scripts/gen/gen_c2_fixtures.py into `dir`; its manifest.
fn gen_c2_fixtures(dir: &Path) -> serde_json::Map<String, serde_json::Value> {
    let out = Command::new(python())
        .arg(repo_root().join("scripts/gen/gen_c2_fixtures.py"))
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gen_c2_fixtures.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    read_manifest(dir)
}

/// One raw HTTP/1.1 request to 127.0.0.1:`port`: (status, head, body).
fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String, Vec<u8>) {
    let mut conn = TcpStream::connect(("127.0.0.1", port)).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes()).unwrap();
    conn.write_all(body).unwrap();
    let mut answer = Vec::new();
    conn.read_to_end(&mut answer).unwrap();
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP answer");
    let head = String::from_utf8_lossy(&answer[..split]).to_string();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head, answer[split + 4..].to_vec())
}

/// A `cat2-server` on 127.0.0.1, killed (SIGKILL) when dropped.
struct C2Server {
    child: Option<Child>,
    port: u16,
    work: PathBuf,
}

impl C2Server {
    /// Start it over `state` (`state/public` is `@public`), in working
    /// directory `work` (its log goes there), on `port`. Without a
    /// `secret` there are no users (`login = false` in the working
    /// directory's caterva2-server.toml); with one, `CATERVA2_SECRET`.
    fn start(state: &Path, work: &Path, port: u16, secret: Option<&str>) -> C2Server {
        std::fs::create_dir_all(work).unwrap();
        let toml = work.join("caterva2-server.toml");
        match secret {
            None => std::fs::write(&toml, "[server]\nlogin = false\n").unwrap(),
            Some(_) => {
                let _ = std::fs::remove_file(&toml);
            }
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(work.join("server.log"))
            .unwrap();
        let mut cmd = Command::new(venv_bin("cat2-server"));
        cmd.args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--statedir",
            state.to_str().unwrap(),
        ])
        .current_dir(work)
        .env_remove("CATERVA2_SECRET")
        .stdin(Stdio::null())
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log));
        if let Some(s) = secret {
            cmd.env("CATERVA2_SECRET", s);
        }
        let child = cmd.spawn().expect("start cat2-server");
        let mut server = C2Server {
            child: Some(child),
            port,
            work: work.to_path_buf(),
        };
        let deadline = Instant::now() + Duration::from_secs(40);
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok()
                && http(port, "GET", "/api/roots", &[], b"").0 == 200
            {
                break;
            }
            if let Ok(Some(status)) = server.child.as_mut().unwrap().try_wait() {
                panic!(
                    "cat2-server exited at start ({status}); log:\n{}",
                    server.log()
                );
            }
            assert!(
                Instant::now() < deadline,
                "cat2-server did not answer on port {port}; log:\n{}",
                server.log()
            );
            thread::sleep(Duration::from_millis(100));
        }
        server
    }

    /// A fresh state directory and server without logins, on a free port.
    fn public(tmp: &Path) -> C2Server {
        std::fs::create_dir_all(tmp.join("state/public")).unwrap();
        C2Server::start(&tmp.join("state"), &tmp.join("work"), free_port(), None)
    }

    fn url(&self, root: &str) -> String {
        format!("c2+http://127.0.0.1:{}/{root}", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.work.join("server.log")).unwrap_or_default()
    }

    /// SIGKILL, and wait for it.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for C2Server {
    fn drop(&mut self) {
        self.kill();
    }
}

fn blosc2fs(args: &[&str], env: &[(&str, &str)], cwd: Option<&Path>) -> std::process::Output {
    let mut cmd = Command::new(common::mount::binary());
    cmd.args(args)
        .env_remove("CATERVA2_USERNAME")
        .env_remove("CATERVA2_PASSWORD")
        .stdin(Stdio::null());
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// `.stats` remote endpoint counts of `mount`, as (name, count).
fn endpoints(mount: &Mount) -> serde_json::Map<String, serde_json::Value> {
    let stats = mount.stats();
    stats["remote"]["endpoints"]
        .as_object()
        .unwrap_or_else(|| panic!("no remote.endpoints in .stats: {stats}"))
        .clone()
}

fn count(e: &serde_json::Map<String, serde_json::Value>, name: &str) -> u64 {
    e.get(name)
        .and_then(|v| v.as_u64())
        .unwrap_or_else(|| panic!("no endpoint {name} in {e:?}"))
}

/// Requests for data and descriptions (info + fetch + slice) between two
/// snapshots of the endpoint counts.
fn data_requests(
    before: &serde_json::Map<String, serde_json::Value>,
    after: &serde_json::Map<String, serde_json::Value>,
) -> u64 {
    ["info", "fetch", "slice"]
        .iter()
        .map(|k| count(after, k) - count(before, k))
        .sum()
}

/// Wait until the mount's request counts stop moving (prefetches over).
fn settle(mount: &Mount) -> serde_json::Map<String, serde_json::Value> {
    let mut last = endpoints(mount);
    loop {
        thread::sleep(Duration::from_millis(400));
        let now = endpoints(mount);
        if now == last {
            return now;
        }
        last = now;
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// Read `file` from `from` to `to` in `step`-byte reads, checking each
/// against `want` at its offset: Ok(bytes read) if all of it came, or
/// Err((bytes read before the error, errno)). Panics on a single wrong byte.
fn read_checked(
    file: &std::fs::File,
    want: &[u8],
    from: usize,
    to: usize,
    step: usize,
    what: &str,
) -> Result<usize, (usize, Option<i32>)> {
    let mut pos = from;
    let mut buf = vec![0u8; step];
    while pos < to {
        let n = step.min(to - pos);
        match file.read_exact_at(&mut buf[..n], pos as u64) {
            Ok(()) => assert!(
                buf[..n] == want[pos..pos + n],
                "{what}: wrong bytes at {pos}..{}",
                pos + n
            ),
            Err(e) => return Err((pos - from, e.raw_os_error())),
        }
        pos += n;
    }
    Ok(pos - from)
}

// ------------------------------------------ every dataset of a real server

/// Every committed fixture (copied under `@public/fix`) and every dataset
/// of scripts/gen/gen_c2_fixtures.py (an HDF5 file, a .b2z store, plain .b2nd
/// in a subfolder) through one mounted `@public` root: each array's `data`
/// has numpy's bytes exactly, store values too; HDF5 leaves are served
/// arrays; datasets without values have a meta.json saying why and no
/// readable `data`. `blosc2fs cat` / `info` of c2+ URLs agree.
#[test]
fn a_mounted_caterva2_root_reads_every_fixture_hdf5_leaf_and_store_value_exactly() {
    let test = "a_mounted_caterva2_root_reads_every_fixture_hdf5_leaf_and_store_value_exactly";
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_caterva2(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let public = tmp.path().join("state/public");
    copy_tree(&fixtures_dir(), &public.join("fix"));
    let c2 = gen_c2_fixtures(&public);
    let server = C2Server::public(tmp.path());
    let t0 = Instant::now();
    let mount = Mount::start(Path::new(&server.url("@public")), &[]);
    let root = mount.path();
    let top = names(root);
    for want in ["fix", "lab.h5", "store.b2z", "sub"] {
        assert!(top.contains(&want.to_string()), "{want} not in {top:?}");
    }
    assert!(
        !top.contains(&"manifest.json".to_string()),
        "a file that is no dataset is not shown: {top:?}"
    );
    let mut failures = Vec::new();
    fn check(failures: &mut Vec<String>, what: String, path: PathBuf, sha: &str) {
        match std::fs::read(&path) {
            Ok(bytes) if sha256_hex(&bytes) == sha => {}
            Ok(bytes) => failures.push(format!("{what}: WRONG BYTES ({} bytes)", bytes.len())),
            Err(e) => failures.push(format!("{what}: {e}")),
        }
    }
    // The committed fixtures and the stores' values. What the server
    // cannot serve, by its own API: sparse frames (it fetches no `.chunk`
    // files), `.caterva` files (not a dataset suffix of its fetch API) and
    // files it fails to open (a ranged /api/fetch answers 500). Those must
    // give an error or exact bytes, never others; every other fixture reads
    // exactly, those whose /api/info fails (500) too: a stored frame is
    // read in byte ranges, its info never asked.
    let manifest = read_manifest(&fixtures_dir());
    let (mut unservable, mut frames_failed) = (Vec::new(), Vec::new());
    for (name, entry) in &manifest {
        let path = entry["path"].as_str().unwrap();
        let data = root.join("fix").join(path).join("data");
        let sha = entry["sha256"].as_str().unwrap();
        let info = http(
            server.port,
            "GET",
            &format!("/api/fetch/@public/fix/{path}"),
            &[("Range", "bytes=0-10")],
            b"",
        )
        .0;
        if entry["storage"] == "sparse" || entry["kind"] == "caterva" || info != 206 {
            match std::fs::read(&data) {
                Ok(bytes) if sha256_hex(&bytes) != sha => failures.push(format!(
                    "fix/{name} (not servable): WRONG BYTES ({} bytes)",
                    bytes.len()
                )),
                _ => unservable.push(format!(
                    "{name} ({}, {}, ranged /api/fetch {info})",
                    entry["kind"], entry["storage"]
                )),
            }
        } else if entry["kind"] == "frame" {
            // Stored SChunk frames: ranged fetches work, /api/info gives no shape or dtype.
            match std::fs::read(&data) {
                Ok(bytes) if sha256_hex(&bytes) == sha => {}
                Ok(bytes) => {
                    failures.push(format!("fix/{name}: WRONG BYTES ({} bytes)", bytes.len()))
                }
                Err(e) => frames_failed.push(format!("fix/{name}: {e}")),
            }
        } else {
            check(&mut failures, format!("fix/{name}"), data, sha);
        }
    }
    let stored = store_values(&root.join("fix/stores"), &["dict.b2z", "tree.b2z"]);
    for v in &stored {
        check(
            &mut failures,
            format!("fix/stores/{}", v.label),
            v.data.clone(),
            &v.sha256,
        );
    }
    let values = stored.len();
    assert_eq!(values, 8);
    // The generated HDF5 file, store and arrays.
    let (mut exact, mut meta_only, mut unlisted) = (0, 0, 0);
    for (path, entry) in &c2 {
        let dir = root.join(path);
        match entry["expect"].as_str().unwrap() {
            "exact" => {
                check(
                    &mut failures,
                    path.clone(),
                    dir.join("data"),
                    entry["sha256"].as_str().unwrap(),
                );
                exact += 1;
                if path.starts_with("lab.h5/") {
                    // A served HDF5 leaf: no stored frame behind it.
                    match std::fs::read(dir.join("meta.json"))
                        .map(|b| serde_json::from_slice::<serde_json::Value>(&b))
                    {
                        Ok(Ok(meta)) => {
                            if meta["values"]["stored"] != false || meta["values"]["served"] != true
                            {
                                failures.push(format!(
                                    "{path}: meta.json values are not served-not-stored: {}",
                                    meta["values"]
                                ));
                            }
                            if meta["shape"].as_array().map(|s| s.len())
                                != entry["shape"].as_array().map(|s| s.len())
                            {
                                failures.push(format!(
                                    "{path}: meta.json shape {} for {}",
                                    meta["shape"], entry["shape"]
                                ));
                            }
                        }
                        other => failures.push(format!("{path}: meta.json: {other:?}")),
                    }
                }
            }
            "meta_only" => {
                if !dir.exists() && entry["may_be_unlisted"] == true {
                    unlisted += 1;
                    continue;
                }
                meta_only += 1;
                let meta: serde_json::Value = match std::fs::read(dir.join("meta.json"))
                    .map(|b| serde_json::from_slice(&b))
                {
                    Ok(Ok(m)) => m,
                    other => {
                        failures.push(format!("{path}: meta.json: {other:?}"));
                        continue;
                    }
                };
                let why = [
                    meta.get("error"),
                    meta.pointer("/values/why_not_served"),
                    meta.pointer("/values/why_not_computed"),
                    meta.pointer("/values/why"),
                ]
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str())
                .find(|s| !s.is_empty());
                if why.is_none() {
                    failures.push(format!(
                        "{path}: meta.json does not say why there are no values: {meta}"
                    ));
                }
                if let Ok(bytes) = std::fs::read(dir.join("data")) {
                    failures.push(format!(
                        "{path}: expected no values, `data` read {} bytes",
                        bytes.len()
                    ));
                }
            }
            other => panic!("{path}: unknown expect {other}"),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failed:\n{}\nlog:\n{}",
        failures.len(),
        failures.join("\n"),
        mount.log_text()
    );
    assert!(
        exact >= 19 && meta_only + unlisted >= 1,
        "{exact} exact, {meta_only} meta-only, {unlisted} unlisted"
    );
    assert!(
        unservable.len() <= 16,
        "{} fixtures not served: {unservable:?}",
        unservable.len()
    );
    assert!(
        root.join("lab.h5/grid/level2").is_dir(),
        "HDF5 groups are folders"
    );
    eprintln!(
        "{} fixtures ({} the server cannot serve: {unservable:?}), {values} store values, {exact} generated datasets exact; {meta_only} without values ({unlisted} not listed by the server) in {:?}; .stats remote: {}",
        manifest.len(),
        unservable.len(),
        t0.elapsed(),
        mount.stats()["remote"]
    );
    drop(mount);
    // cat and info of c2+ URLs: a stored .b2nd and an HDF5 leaf.
    for path in ["sub/x.b2nd", "lab.h5/grid/level2/temp", "store.b2z/a/b"] {
        let url = format!("{}/{path}", server.url("@public"));
        let out = blosc2fs(&["cat", &url], &[], None);
        assert!(
            out.status.success(),
            "cat {url}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            sha256_hex(&out.stdout),
            c2[path]["sha256"].as_str().unwrap(),
            "cat {url}"
        );
        let out = blosc2fs(&["info", &url], &[], None);
        assert!(
            out.status.success(),
            "info {url}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("info {url}: {e}: {}", String::from_utf8_lossy(&out.stdout))
        });
        assert_eq!(info["shape"], c2[path]["shape"], "info {url}: {info}");
    }
    let out = blosc2fs(
        &[
            "cat",
            &format!("{}/sub/no_such.b2nd", server.url("@public")),
        ],
        &[],
        None,
    );
    assert!(
        !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("not found"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Stored .b2frame files are datasets the server fetches in byte ranges.
    assert!(
        frames_failed.is_empty(),
        "{} stored .b2frame fixtures not read:\n{}",
        frames_failed.len(),
        frames_failed.join("\n")
    );
}

// ------------------------------------------------------- request shaping

/// On a fresh mount, opening a stored 8 MiB `.b2nd` costs at most 2
/// requests (info + fetch + slice) and a 4 KiB read at a random offset
/// (not in the first chunk), prefetches included, at most 3 more; the
/// bytes are numpy's. The `.stats` counts equal the requests a proxy saw.
/// The Zarr v3 hierarchy over a served root (issue 37): the generated part
/// of tests/zarr_v3.rs's corpus (big-endian arrays of every rank 0 to 5,
/// vlmeta attributes, a DELTA array, saved dimension names shared in a
/// folder: contiguous files the server serves), under `@public/gen`, read
/// exactly by zarr-python 3, xarray's datatree, tensorstore zarr3 and a
/// 2-process Dask cluster (scripts/check/check_zarr_v3.py).
#[test]
fn a_served_root_reads_exactly_through_every_zarr_v3_reader() {
    let test = "a_served_root_reads_exactly_through_every_zarr_v3_reader";
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_caterva2(test) {
        return;
    }
    let readers = Command::new(python())
        .args([
            "-c",
            "import xarray, tensorstore, dask.distributed, zarr; assert zarr.__version__ >= '3'",
        ])
        .status()
        .is_ok_and(|s| s.success());
    if !readers {
        eprintln!("SKIP {test}: the Zarr v3 readers are not importable (scripts/setup_venv.sh)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("corpus");
    let out = Command::new(python())
        .arg(repo_root().join("scripts/gen/gen_zarr3_corpus.py"))
        .arg(&corpus)
        .arg(fixtures_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gen_zarr3_corpus.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    copy_tree(
        &corpus.join("src/gen"),
        &tmp.path().join("state/public/gen"),
    );
    let mut expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(corpus.join("expected.json")).unwrap()).unwrap();
    expected["arrays"]
        .as_object_mut()
        .unwrap()
        .retain(|k, _| k.starts_with("gen/"));
    expected["not_v3"] = serde_json::json!([]);
    let n = expected["arrays"].as_object().unwrap().len() as u64;
    assert!(n >= 10, "{n} arrays");
    let expected_path = tmp.path().join("expected-served.json");
    std::fs::write(&expected_path, serde_json::to_vec(&expected).unwrap()).unwrap();
    let server = C2Server::public(tmp.path());
    let mount = Mount::start(Path::new(&server.url("@public")), &[]);
    assert!(names(mount.path()).contains(&"zarr.json".to_string()));
    let out = Command::new(python())
        .arg(repo_root().join("scripts/check/check_zarr_v3.py"))
        .arg(mount.path())
        .arg(&expected_path)
        .env("PYTHONWARNINGS", "ignore")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "check_zarr_v3.py failed:\n{}\nlog:\n{}",
        String::from_utf8_lossy(&out.stderr),
        mount.log_text()
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let counts: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap();
    for reader in ["expected", "zarr", "xarray", "tensorstore", "dask"] {
        assert_eq!(counts[reader].as_u64(), Some(n), "{reader}: {counts}");
    }
}

#[test]
fn opening_a_served_b2nd_and_a_cold_random_4k_read_cost_few_requests() {
    let test = "opening_a_served_b2nd_and_a_cold_random_4k_read_cost_few_requests";
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_caterva2(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // 1 Mi float64 (8 MiB, random: stored about as large), chunks of 1 MiB, blocks of 32 KiB.
    let raw = random_array(
        &tmp.path().join("state/public/shape/big.b2nd"),
        1 << 20,
        128 << 10,
        4 << 10,
        5,
    );
    let stored = std::fs::metadata(tmp.path().join("state/public/shape/big.b2nd"))
        .unwrap()
        .len();
    assert!(stored > 7 << 20, "{stored}");
    let server = C2Server::public(tmp.path());
    // (through a proxy that only lists what is asked, for the messages)
    let proxy = Proxy::start(server.port);
    let (seed, cases) = seed_and_cases("cold 4 KiB reads", "C2_SEED", "C2_CASES", 3);
    let mut rng = common::rng::Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut costly_opens = Vec::new();
    for case in 0..cases {
        let mount = Mount::start(
            Path::new(&format!("c2+http://127.0.0.1:{}/@public", proxy.port)),
            &[],
        );
        assert_eq!(
            names(&mount.path().join("shape")),
            ["big.b2nd", "zarr.json"]
        );
        let before = settle(&mount);
        proxy.take_seen();
        let file = std::fs::File::open(mount.path().join("shape/big.b2nd/data")).unwrap();
        let opened = settle(&mount);
        let open_requests = proxy.take_seen();
        let open_cost = data_requests(&before, &opened);
        assert_eq!(
            open_cost as usize,
            open_requests.len(),
            "the counts are the requests sent: {open_requests:?}"
        );
        // 4 KiB-aligned (one 32 KiB block), past the first 2 MiB (which the open may fetch).
        let offset = (2 << 20) + (rng.below((raw.len() as u64 - (2 << 20) - 4096) / 4096)) * 4096;
        let mut buf = vec![0u8; 4096];
        file.read_exact_at(&mut buf, offset).unwrap();
        assert!(
            buf == raw[offset as usize..offset as usize + 4096],
            "case {case}: bytes at {offset}"
        );
        let read = settle(&mount);
        let read_requests = proxy.take_seen();
        let read_cost = data_requests(&opened, &read);
        eprintln!("case {case}: open cost {open_cost} requests {open_requests:?}; 4 KiB at {offset} cost {read_cost}: {read_requests:?}");
        assert_eq!(
            read_cost as usize,
            read_requests.len(),
            "the counts are the requests sent: {read_requests:?}"
        );
        assert!(read_cost <= 3, "case {case}: a cold 4 KiB read at {offset} cost {read_cost} requests: {read_requests:?}");
        if open_cost > 2 {
            costly_opens.push(format!(
                "case {case}: opening cost {open_cost} requests: {open_requests:?}"
            ));
        }
        assert_eq!(
            count(&read, "slice"),
            0,
            "a stored frame is read in byte ranges"
        );
    }
    assert!(costly_opens.is_empty(), "{}", costly_opens.join("\n"));
}

// ------------------------------------------------------------------ login

/// A state directory at `state` (with `public`) holding one user, added
/// with `cat2-admin`; that user's `@personal` folder.
fn add_user(state: &Path, user: &str, password: &str) -> PathBuf {
    std::fs::create_dir_all(state.join("public")).unwrap();
    let out = Command::new(venv_bin("cat2-admin"))
        .args([
            "--statedir",
            state.to_str().unwrap(),
            "adduser",
            user,
            password,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cat2-admin adduser: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = String::from_utf8(run_python_bytes("import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('select id from user').fetchone()[0])", &[state.join("db.sqlite").to_str().unwrap()]))
        .unwrap()
        .trim()
        .replace('-', "");
    let id = format!(
        "{}-{}-{}-{}-{}",
        &id[0..8],
        &id[8..12],
        &id[12..16],
        &id[16..20],
        &id[20..32]
    );
    state.join("personal").join(&id)
}

/// The JWT header every `c2subauth` cookie starts with (`{"alg":"HS256",...`).
const JWT_PREFIX: &str = "eyJhbGciOi";

/// `@personal` needs a login: without credentials the mount fails at once
/// naming CATERVA2_USERNAME; with them (environment) the files read
/// exactly; the password and the session cookie are nowhere to be seen;
/// after the server restarts with another secret (every cookie now
/// refused) the mount logs in again, once, and reads on.
#[test]
fn personal_roots_log_in_keep_the_secrets_and_log_in_again_after_a_new_server_secret() {
    let test = "personal_roots_log_in_keep_the_secrets_and_log_in_again_after_a_new_server_secret";
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_caterva2(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let (user, password) = ("alice@example.org", "pw-Zq8-7f3b1c-hunter2");
    let personal = add_user(&state, user, password);
    let p1 = random_array(&personal.join("p1.b2nd"), 100_000, 16_384, 4096, 21);
    let p2 = random_array(&personal.join("dir/p2.b2nd"), 70_000, 16_384, 4096, 22);
    let secret1 = "first-secret-of-the-test-server-0123456789abcdef";
    let secret2 = "second-secret-of-the-test-server-fedcba9876543210";
    let work = tmp.path().join("work");
    let mut server = C2Server::start(&state, &work, free_port(), Some(secret1));
    let url = server.url("@personal");
    let home = tempfile::tempdir().unwrap(); // no ~/.caterva2.toml, no ./caterva2.toml
                                             // Without credentials: refused at mount time, naming what to set.
    let mnt = tempfile::tempdir().unwrap();
    let out = blosc2fs(
        &["mount", &url, mnt.path().to_str().unwrap()],
        &[("HOME", home.path().to_str().unwrap())],
        Some(home.path()),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        let _ = Command::new(common::mount::binary())
            .arg("unmount")
            .arg(mnt.path())
            .status();
    }
    assert_eq!(
        out.status.code(),
        Some(1),
        "mounting @personal without a login: {stderr}"
    );
    assert!(stderr.contains("CATERVA2_USERNAME"), "{stderr}");
    assert!(!is_mountpoint(mnt.path()));
    // A login of our own: the cookie the server hands out looks like this.
    let form = format!("username={}&password={password}", user.replace('@', "%40"));
    let (status, head, _) = http(
        server.port,
        "POST",
        "/auth/jwt/login",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        form.as_bytes(),
    );
    assert_eq!(status, 204, "{head}");
    let cookie = head
        .lines()
        .find_map(|l| l.split_once("c2subauth="))
        .map(|(_, v)| v.split(';').next().unwrap().to_string())
        .expect("a c2subauth cookie");
    assert!(cookie.starts_with(JWT_PREFIX), "{cookie}");
    // With credentials in the environment, debug logging on.
    let env = [
        ("CATERVA2_USERNAME", user),
        ("CATERVA2_PASSWORD", password),
        ("RUST_LOG", "debug"),
        ("HOME", home.path().to_str().unwrap()),
    ];
    // Listings kept 0.2 s: after the restart below, the read asks the
    // server again whatever the restart took (a quick restart once found
    // everything still fresh, so no new login was needed).
    let mount = Mount::start_with_env(Path::new(&url), &["--attr-timeout", "0.2"], &env);
    let root = mount.path();
    assert_eq!(names(root), [".stats", "dir", "p1.b2nd", "zarr.json"]);
    let got = std::fs::read(root.join("p1.b2nd/data"))
        .unwrap_or_else(|e| panic!("{e}\n{}", mount.log_text()));
    assert!(got == p1, "p1 read exactly");
    let logins = count(&endpoints(&mount), "login");
    assert!(logins >= 1, "{:?}", endpoints(&mount));
    let assert_secrets_hidden = |when: &str| {
        let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", mount.pid())).unwrap();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        assert!(cmdline.contains("@personal"), "{cmdline}");
        let mut places = vec![
            ("/proc/mounts".to_string(), mounts),
            ("cmdline".into(), cmdline),
            ("the daemon's log".into(), mount.log_text()),
        ];
        places.push((
            ".stats".into(),
            std::fs::read_to_string(root.join(".stats")).unwrap(),
        ));
        for meta in ["p1.b2nd/meta.json", "dir/p2.b2nd/meta.json"] {
            if let Ok(text) = std::fs::read_to_string(root.join(meta)) {
                places.push((meta.to_string(), text));
            }
        }
        assert!(places.len() >= 5, "{when}: a meta.json was read");
        for (place, text) in &places {
            for (secret, name) in [
                (password, "the password"),
                (cookie.as_str(), "the cookie"),
                (JWT_PREFIX, "a JWT"),
                ("c2subauth=", "a cookie header"),
            ] {
                assert!(
                    !text.contains(secret),
                    "{when}: {name} is in {place}:\n{text}"
                );
            }
        }
        assert!(
            mount.log_text().contains("DEBUG") || mount.log_text().contains("debug"),
            "{when}: the daemon logged at debug level:\n{}",
            mount.log_text()
        );
    };
    assert_secrets_hidden("after the first reads");
    // The server restarts with another secret: the mount's cookie is void.
    let port = server.port;
    server.kill();
    server = C2Server::start(&state, &work, port, Some(secret2));
    let (status, _, _) = http(
        port,
        "GET",
        "/api/list/@personal",
        &[("Cookie", &format!("c2subauth={cookie}"))],
        b"",
    );
    assert_eq!(
        status, 401,
        "the old cookie is refused by the restarted server"
    );
    thread::sleep(Duration::from_millis(500));
    let got = std::fs::read(root.join("dir/p2.b2nd/data"))
        .unwrap_or_else(|e| panic!("after the restart: {e}\n{}", mount.log_text()));
    assert!(got == p2, "p2 read exactly after the restart");
    let after = endpoints(&mount);
    assert_eq!(
        count(&after, "login"),
        logins + 1,
        "one new login: {after:?}"
    );
    assert_secrets_hidden("after the new login");
    drop(mount);
    drop(server);
}

/// The daemon of a mount with a login (`blosc2fs mount` without `-f`, as
/// users run it) keeps no password where other users look: its
/// `/proc/PID/environ` shows `CATERVA2_PASSWORD=` masked with `*`, its
/// command line the URL; yet the password is still held in memory: after
/// the server restarts with another secret, the next read logs in again
/// and reads exactly.
#[test]
fn a_mount_daemon_shows_no_password_in_proc_and_still_logs_in_again() {
    let test = "a_mount_daemon_shows_no_password_in_proc_and_still_logs_in_again";
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_caterva2(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let (user, password) = ("bob@example.org", "pw-4Kd9-e1c7aa-swordfish");
    let personal = add_user(&state, user, password);
    let p1 = random_array(&personal.join("p1.b2nd"), 60_000, 16_384, 4096, 31);
    let p2 = random_array(&personal.join("p2.b2nd"), 50_000, 16_384, 4096, 32);
    let work = tmp.path().join("work");
    let mut server = C2Server::start(
        &state,
        &work,
        free_port(),
        Some("secret-one-0123456789abcdef"),
    );
    let url = server.url("@personal");
    let home = tempfile::tempdir().unwrap(); // no caterva2.toml anywhere
    let daemon = Daemon::start(
        &url,
        &[],
        &[
            ("CATERVA2_USERNAME", user),
            ("CATERVA2_PASSWORD", password),
            ("HOME", home.path().to_str().unwrap()),
        ],
    );
    let shown = |name: &str| String::from_utf8_lossy(&daemon.proc_file(name)).replace('\0', "\n");
    let assert_no_password = |when: &str| {
        let (cmdline, environ) = (shown("cmdline"), shown("environ"));
        assert!(cmdline.lines().any(|arg| arg == url), "{when}: {cmdline}");
        for (place, text) in [("cmdline", &cmdline), ("environ", &environ)] {
            assert!(
                !text.contains(password),
                "{when}: the password is in {place}:\n{text}"
            );
        }
        let masked = format!("CATERVA2_PASSWORD={}", "*".repeat(password.len()));
        assert!(environ.lines().any(|v| v == masked), "{when}: {environ}");
        assert!(
            environ
                .lines()
                .any(|v| v == format!("CATERVA2_USERNAME={user}")),
            "{when}: the username is no secret: {environ}"
        );
    };
    assert_no_password("once mounted");
    let got = std::fs::read(daemon.path().join("p1.b2nd/data"))
        .unwrap_or_else(|e| panic!("{e}\n{}", daemon.log_text()));
    assert!(got == p1, "p1 read exactly");
    let logins = daemon.stats()["remote"]["endpoints"]["login"]
        .as_u64()
        .unwrap();
    assert!(logins >= 1, "{}", daemon.stats());
    // Every cookie void: the next read must log in with the password in memory.
    let port = server.port;
    server.kill();
    server = C2Server::start(&state, &work, port, Some("secret-two-fedcba9876543210"));
    let got = std::fs::read(daemon.path().join("p2.b2nd/data"))
        .unwrap_or_else(|e| panic!("after the restart: {e}\n{}", daemon.log_text()));
    assert!(got == p2, "p2 read exactly after the restart");
    assert_eq!(
        daemon.stats()["remote"]["endpoints"]["login"].as_u64(),
        Some(logins + 1),
        "one new login"
    );
    assert_no_password("after the new login");
    drop(daemon);
    drop(server);
}

// ------------------------------------------------------------------ faults

/// The server dies (SIGKILL) during and between reads of a 16 MiB dataset
/// on a mount with `--remote-timeout 5`: a reader in flight gets right
/// bytes then EIO, a read of an unread region fails with EIO in time, the
/// mount stays up (`.stats` reads) and reads again once the server is back.
#[test]
fn a_killed_server_gives_eio_in_time_never_wrong_bytes_and_the_mount_lives_on() {
    let test = "a_killed_server_gives_eio_in_time_never_wrong_bytes_and_the_mount_lives_on";
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_caterva2(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // 2 Mi float64 (16 MiB), chunks of 1 MiB, blocks of 64 KiB.
    let raw = Arc::new(random_array(
        &tmp.path().join("state/public/big/k.b2nd"),
        2 << 20,
        128 << 10,
        8 << 10,
        9,
    ));
    // A second one, opened before the kill and read only after it.
    let other = random_array(
        &tmp.path().join("state/public/big/other.b2nd"),
        1 << 20,
        128 << 10,
        8 << 10,
        10,
    );
    let mut server = C2Server::public(tmp.path());
    let port = server.port;
    // (a 32 MiB cache: hints ahead of a sequential reader reach 4 MiB, not the whole file)
    let mount = Mount::start(
        Path::new(&server.url("@public")),
        &["--remote-timeout", "5", "--cache-size", "32M"],
    );
    let data = mount.path().join("big/k.b2nd/data");
    let file = std::fs::File::open(&data).unwrap();
    read_checked(&file, &raw, 0, 1 << 20, 128 << 10, "before the kill").unwrap();
    let unread = std::fs::File::open(mount.path().join("big/other.b2nd/data")).unwrap();
    // A sequential reader of 2..12 MiB, the server killed under it.
    let progress = Arc::new(AtomicUsize::new(0));
    let reader = {
        let (raw, progress, data) = (raw.clone(), progress.clone(), data.clone());
        thread::spawn(move || {
            let f = std::fs::File::open(&data).unwrap();
            let mut pos = 2 << 20;
            let mut buf = vec![0u8; 64 << 10];
            while pos < 12 << 20 {
                match f.read_exact_at(&mut buf, pos as u64) {
                    Ok(()) => assert!(
                        buf == raw[pos..pos + buf.len()],
                        "the reader got wrong bytes at {pos}"
                    ),
                    Err(e) => return Err((pos, e.raw_os_error())),
                }
                pos += buf.len();
                progress.store(pos, Ordering::SeqCst);
                thread::sleep(Duration::from_millis(5));
            }
            Ok(pos)
        })
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while progress.load(Ordering::SeqCst) < (3 << 20) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
    server.kill();
    let t = Instant::now();
    let result = reader.join().expect("the reader saw only right bytes");
    eprintln!("the reader in flight: {result:?} after {:?}", t.elapsed());
    if let Err((_, errno)) = result {
        assert_eq!(errno, Some(EIO), "{result:?}");
    }
    // An unread region, between reads: the middle of the other dataset.
    let t = Instant::now();
    let mut buf = vec![0u8; 4096];
    let err = unread
        .read_exact_at(&mut buf, (5 << 20) + 8192)
        .expect_err("a read of an unread region with the server dead");
    let took = t.elapsed();
    assert_eq!(err.raw_os_error(), Some(EIO), "{err}");
    assert!(
        took < Duration::from_secs(9),
        "the error took {took:?} (timeout 5 s)"
    );
    eprintln!("unread region with the server dead: {err} after {took:?}");
    assert!(is_mountpoint(mount.path()));
    let stats = mount.stats();
    assert!(
        stats["remote"]["errors"].as_u64().unwrap() >= 1,
        "{}",
        stats["remote"]
    );
    // Back up: the same region reads exactly (the failure was not kept).
    let _server = C2Server::start(
        &tmp.path().join("state"),
        &tmp.path().join("work"),
        port,
        None,
    );
    read_checked(
        &unread,
        &other,
        5 << 20,
        6 << 20,
        128 << 10,
        "after the restart",
    )
    .unwrap_or_else(|e| panic!("after the restart: {e:?}\n{}", mount.log_text()));
    read_checked(
        &unread,
        &other,
        0,
        8 << 20,
        1 << 20,
        "all of the other after the restart",
    )
    .unwrap_or_else(|e| panic!("the other after the restart: {e:?}\n{}", mount.log_text()));
    read_checked(&file, &raw, 0, 16 << 20, 1 << 20, "all after the restart")
        .unwrap_or_else(|e| panic!("all after the restart: {e:?}\n{}", mount.log_text()));
}

/// A proxy in front of cat2-server answering 503 to the first `budget`
/// requests for `/api/fetch`, forwarding every other request (one per
/// connection, `Connection: close` both ways).
struct Proxy {
    port: u16,
    budget: Arc<AtomicUsize>,
    fetches: Arc<AtomicUsize>,
    refused: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    /// Every request seen: its path and Range header.
    seen: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Proxy {
    fn start(upstream: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let proxy = Proxy {
            port,
            budget: Arc::new(AtomicUsize::new(0)),
            fetches: Arc::new(AtomicUsize::new(0)),
            refused: Arc::new(AtomicUsize::new(0)),
            stop: Arc::new(AtomicBool::new(false)),
            seen: Arc::default(),
        };
        let (budget, fetches, refused, stop, seen) = (
            proxy.budget.clone(),
            proxy.fetches.clone(),
            proxy.refused.clone(),
            proxy.stop.clone(),
            proxy.seen.clone(),
        );
        thread::spawn(move || {
            for conn in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (budget, fetches, refused, seen) = (
                    budget.clone(),
                    fetches.clone(),
                    refused.clone(),
                    seen.clone(),
                );
                thread::spawn(move || {
                    let _ = forward(conn, upstream, &budget, &fetches, &refused, &seen);
                });
            }
        });
        proxy
    }

    fn refuse_next(&self, n: usize) {
        self.budget.store(n, Ordering::SeqCst);
    }

    /// The requests seen since the last call.
    fn take_seen(&self) -> Vec<String> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Read an HTTP head (through the blank line) from `r`: its lines.
fn read_head(r: &mut impl BufRead) -> std::io::Result<Vec<String>> {
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "closed in the head",
            ));
        }
        let line = line.trim_end_matches(['\r', '\n']).to_string();
        if line.is_empty() {
            return Ok(lines);
        }
        lines.push(line);
    }
}

/// `head` without its Connection header, with `Connection: close`, as bytes.
fn closing(head: &[String]) -> Vec<u8> {
    let mut out = String::new();
    for l in head
        .iter()
        .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
    {
        out.push_str(l);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    out.into_bytes()
}

fn forward(
    conn: TcpStream,
    upstream: u16,
    budget: &AtomicUsize,
    fetches: &AtomicUsize,
    refused: &AtomicUsize,
    seen: &std::sync::Mutex<Vec<String>>,
) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut client_in = BufReader::new(conn.try_clone()?);
    let mut client_out = conn;
    let head = read_head(&mut client_in)?;
    let path = head
        .first()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("")
        .to_string();
    let length: usize = head
        .iter()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap_or(0))
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    client_in.read_exact(&mut body)?;
    let range = head.iter().find_map(|l| {
        l.to_ascii_lowercase()
            .strip_prefix("range:")
            .map(|v| v.trim().to_string())
    });
    seen.lock().unwrap().push(format!(
        "{path}{}",
        range.map(|r| format!(" [{r}]")).unwrap_or_default()
    ));
    if path.starts_with("/api/fetch") {
        fetches.fetch_add(1, Ordering::SeqCst);
        if budget
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |b| b.checked_sub(1))
            .is_ok()
        {
            refused.fetch_add(1, Ordering::SeqCst);
            client_out.write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")?;
            return client_out.flush();
        }
    }
    let up = TcpStream::connect(("127.0.0.1", upstream))?;
    up.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut up_out = up.try_clone()?;
    up_out.write_all(&closing(&head))?;
    up_out.write_all(&body)?;
    let mut up_in = BufReader::new(up);
    let answer = read_head(&mut up_in)?;
    client_out.write_all(&closing(&answer))?;
    std::io::copy(&mut up_in, &mut client_out)?;
    client_out.flush()
}

/// 503s from a proxy before the server: retried (every attempt counted in
/// `.stats`), reads exact; more 503s than retries give EIO, and the same
/// dataset reads exactly once the server answers again.
#[test]
fn answers_503_are_retried_counted_and_never_give_wrong_bytes() {
    let test = "answers_503_are_retried_counted_and_never_give_wrong_bytes";
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_caterva2(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let c2 = gen_c2_fixtures(&tmp.path().join("state/public"));
    let server = C2Server::public(tmp.path());
    let proxy = Proxy::start(server.port);
    let mount = Mount::start(
        Path::new(&format!("c2+http://127.0.0.1:{}/@public", proxy.port)),
        &["--prefetch-threads", "0"],
    );
    let root = mount.path();
    let sha = |p: &str| c2[p]["sha256"].as_str().unwrap().to_string();
    // A stored frame (ranged fetches) and an HDF5 leaf (slices), 3 refusals before each.
    let mut refused = 0;
    for path in ["sub/x.b2nd", "lab.h5/grid/level2/temp"] {
        proxy.refuse_next(3);
        let bytes = std::fs::read(root.join(path).join("data"))
            .unwrap_or_else(|e| panic!("{path}: {e}\n{}", mount.log_text()));
        assert_eq!(sha256_hex(&bytes), sha(path), "{path}");
        refused += 3;
        assert_eq!(
            proxy.refused.load(Ordering::SeqCst),
            refused,
            "{path}: the proxy refused 3 fetches"
        );
    }
    let e = endpoints(&mount);
    let fetches = proxy.fetches.load(Ordering::SeqCst) as u64;
    eprintln!("proxy: {fetches} /api/fetch requests, {refused} refused; .stats endpoints {e:?}, errors {}", mount.stats()["remote"]["errors"]);
    assert_eq!(
        count(&e, "fetch") + count(&e, "slice"),
        fetches,
        "every attempt is counted: {e:?}"
    );
    assert!(count(&e, "slice") >= 3 && count(&e, "fetch") >= 4, "{e:?}");
    // More 503s than retries: EIO (never bytes); then the same dataset reads.
    // (a dataset not looked at yet fails at its first look: no `data` file
    // then, or EIO; an open file fails its reads with EIO)
    let mut stuck = Vec::new();
    for (path, what) in [
        ("sub/y.b2nd", "a stored frame never looked at"),
        ("lab.h5/i4_shuffle_gzip", "an HDF5 leaf never looked at"),
    ] {
        proxy.refuse_next(1000);
        let t = Instant::now();
        let err = std::fs::read(root.join(path).join("data"))
            .expect_err("a read while every fetch is refused");
        let spent = 1000 - proxy.budget.load(Ordering::SeqCst);
        eprintln!(
            "{path} ({what}) with every fetch refused: {err} after {:?}, {spent} attempts",
            t.elapsed()
        );
        assert!(
            matches!(err.raw_os_error(), Some(EIO) | Some(2)),
            "{path}: {err}"
        );
        assert!(
            spent >= 2,
            "{path}: the refused fetch was retried ({spent} attempts)"
        );
        proxy.refuse_next(0);
        // Once the server answers, the dataset reads (within a few attribute timeouts).
        let t = Instant::now();
        let got = loop {
            thread::sleep(Duration::from_millis(500));
            match std::fs::read(root.join(path).join("data")) {
                Ok(bytes) => break Ok(bytes),
                Err(e) if t.elapsed() > Duration::from_secs(5) => break Err(e),
                Err(_) => {}
            }
        };
        match got {
            Ok(bytes) => assert_eq!(sha256_hex(&bytes), sha(path), "{path}"),
            Err(e) => stuck.push(format!(
                "{path} ({what}): still `{e}` {:?} after the server answers again; meta.json: {}",
                t.elapsed(),
                std::fs::read_to_string(root.join(path).join("meta.json"))
                    .unwrap_or_else(|e| e.to_string())
            )),
        }
    }
    // An open handle of a dataset not read yet: reads fail with EIO while
    // refused, and give the exact bytes once the server answers.
    let path = "lab.h5/u2_lzf";
    let file = std::fs::File::open(root.join(path).join("data")).unwrap();
    proxy.refuse_next(1000);
    let mut buf = vec![0u8; 64];
    let err = file
        .read_exact_at(&mut buf, 0)
        .expect_err("a read of an open file while every fetch is refused");
    assert_eq!(err.raw_os_error(), Some(EIO), "{path}: {err}");
    proxy.refuse_next(0);
    let mut all = Vec::new();
    std::fs::File::open(root.join(path).join("data"))
        .unwrap()
        .read_to_end(&mut all)
        .unwrap_or_else(|e| panic!("{path} once the server answers: {e}"));
    assert_eq!(sha256_hex(&all), sha(path), "{path}");
    let e = endpoints(&mount);
    assert_eq!(
        count(&e, "fetch") + count(&e, "slice"),
        proxy.fetches.load(Ordering::SeqCst) as u64,
        "every attempt is counted: {e:?}"
    );
    assert!(
        stuck.is_empty(),
        "a failure at the first look is kept after the server recovers:\n{}",
        stuck.join("\n")
    );
}

// --------------------------------------------------------- served regions

/// An HDF5 leaf of 10 chunks read whole after its open costs exactly 10
/// `slice` requests and no `/api/info` within the attribute timeout (a
/// region carries no validator; the ETag is asked again at most once per
/// TTL, not after every region). Past the TTL, the next region costs one
/// `info` more, and the region after it none. Bytes are h5py's.
#[test]
fn an_hdf5_leaf_costs_one_slice_per_chunk_and_its_etag_once_per_ttl() {
    let test = "an_hdf5_leaf_costs_one_slice_per_chunk_and_its_etag_once_per_ttl";
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_caterva2(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let want = h5_file(&tmp.path().join("state/public/h5/lab.h5"), 5);
    let chunk = 160_000; // 20,000 float64
    let chunks = want.len().div_ceil(chunk) as u64;
    assert_eq!(chunks, 10);
    let server = C2Server::public(tmp.path());
    // Within one TTL: one request per chunk, page cache and prefetch as usual.
    let mount = Mount::start(Path::new(&server.url("@public")), &["--attr-timeout", "60"]);
    let leaf = mount.path().join("h5/lab.h5/v/data");
    let mut file =
        std::fs::File::open(&leaf).unwrap_or_else(|e| panic!("{e}\n{}", mount.log_text()));
    let opened = settle(&mount);
    let mut got = Vec::new();
    file.read_to_end(&mut got)
        .unwrap_or_else(|e| panic!("{e}\n{}", mount.log_text()));
    assert!(got == want, "the leaf's bytes are h5py's");
    let read = settle(&mount);
    let cost = |k: &str| count(&read, k) - count(&opened, k);
    eprintln!(
        "a leaf of {chunks} chunks read whole: {} slice, {} info, {} fetch",
        cost("slice"),
        cost("info"),
        cost("fetch")
    );
    assert_eq!(cost("slice"), chunks, "one region per chunk: {read:?}");
    assert_eq!(cost("info"), 0, "no ETag asked within the TTL: {read:?}");
    assert_eq!(cost("fetch"), 0, "{read:?}");
    drop(file);
    drop(mount);
    // Past the TTL: one `info` before the next region is served, then none
    // for a TTL. Direct I/O and no prefetch, so each read is one region.
    let mount = Mount::start(
        Path::new(&server.url("@public")),
        &[
            "--attr-timeout",
            "1",
            "--direct-io",
            "--prefetch-threads",
            "0",
        ],
    );
    let file = std::fs::File::open(mount.path().join("h5/lab.h5/v/data"))
        .unwrap_or_else(|e| panic!("{e}\n{}", mount.log_text()));
    let read_chunk = |c: usize| {
        read_checked(&file, &want, c * chunk, (c + 1) * chunk, chunk, "a chunk")
            .unwrap_or_else(|e| panic!("chunk {c}: {e:?}\n{}", mount.log_text()));
        endpoints(&mount)
    };
    read_chunk(0);
    let before = read_chunk(1);
    thread::sleep(Duration::from_millis(1300));
    let late = read_chunk(2);
    let next = read_chunk(3);
    let delta = |a: &serde_json::Map<String, serde_json::Value>,
                 b: &serde_json::Map<String, serde_json::Value>,
                 k: &str| count(b, k) - count(a, k);
    eprintln!(
        "past the TTL: {} slice {} info; right after: {} slice {} info",
        delta(&before, &late, "slice"),
        delta(&before, &late, "info"),
        delta(&late, &next, "slice"),
        delta(&late, &next, "info")
    );
    assert_eq!(
        (
            delta(&before, &late, "slice"),
            delta(&before, &late, "info")
        ),
        (1, 1),
        "a region past the TTL asks the ETag once"
    );
    assert_eq!(
        (delta(&late, &next, "slice"), delta(&late, &next, "info")),
        (1, 0),
        "the next region, within the new TTL, does not"
    );
    drop(file);
    drop(mount);
    drop(server);
}

/// An HDF5 dataset of two chunks, 128 MiB and 3 MiB (uncompressed, written
/// at test time), on a mount with `--cache-size 4M`: its regions are at
/// most a quarter of the remote budget (2 MiB: rows of its 4x4096 blocks),
/// so it is read exactly in more requests than chunks, and the daemon's
/// peak resident memory stays below one chunk (about 70 MiB, most of it
/// the program, the 8 MiB block cache and 16 MiB of kept regions; it was
/// 233 MiB when a chunk was one region).
#[test]
fn a_chunk_larger_than_a_region_is_read_in_parts_within_the_budget() {
    let test = "a_chunk_larger_than_a_region_is_read_in_parts_within_the_budget";
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_caterva2(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state/public/big/big.h5");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let script = r#"
import sys, hashlib, numpy as np, h5py, blosc2
out = sys.argv[1]
a = (np.arange(4200 * 4096, dtype=np.float64) * 1.000001).reshape(4200, 4096)
with h5py.File(out, "w") as f:
    f.create_dataset("v", data=a, chunks=(4096, 4096))
with h5py.File(out, "r") as f:
    assert f["v"][()].tobytes() == a.tobytes()
# The grid the server describes the leaf with (its blocks are python-blosc2's).
blocks = blosc2.empty(a.shape, dtype=a.dtype, chunks=(4096, 4096)).blocks
print(hashlib.sha256(a.tobytes()).hexdigest(), a.nbytes, " ".join(map(str, blocks)))
"#;
    let out = String::from_utf8(run_python_bytes(script, &[path.to_str().unwrap()])).unwrap();
    let fields: Vec<&str> = out.split_whitespace().collect();
    let (sha, size): (&str, usize) = (fields[0], fields[1].parse().unwrap());
    let blocks: Vec<u64> = fields[2..].iter().map(|b| b.parse().unwrap()).collect();
    let chunk_bytes: u64 = 4096 * 4096 * 8;
    let server = C2Server::public(tmp.path());
    let mount = Mount::start(
        Path::new(&server.url("@public")),
        &["--cache-size", "4M", "--attr-timeout", "60"],
    );
    let budget = mount.stats()["remote"]["budget"].as_u64().unwrap();
    let limit = (budget / 4).clamp(1 << 20, 16 << 20);
    // Rows of whole blocks within the limit: so many regions per chunk.
    assert_eq!(blocks[1], 4096, "blocks of whole rows: {blocks:?}");
    let row = blocks[0] * 4096 * 8;
    let rows_per_region = (limit / row).max(1) * blocks[0];
    let regions = 4096u64.div_ceil(rows_per_region) + (4200u64 - 4096).div_ceil(rows_per_region);
    let mut file = std::fs::File::open(mount.path().join("big/big.h5/v/data"))
        .unwrap_or_else(|e| panic!("{e}\n{}", mount.log_text()));
    let opened = settle(&mount);
    let t = Instant::now();
    let mut got = Vec::with_capacity(size);
    file.read_to_end(&mut got)
        .unwrap_or_else(|e| panic!("{e}\n{}", mount.log_text()));
    let spent = t.elapsed();
    assert_eq!(got.len(), size);
    assert_eq!(sha256_hex(&got), sha, "the dataset's bytes are numpy's");
    drop(got);
    let read = settle(&mount);
    let slices = count(&read, "slice") - count(&opened, "slice");
    let status = std::fs::read_to_string(format!("/proc/{}/status", mount.pid())).unwrap();
    let hwm_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in {status}"));
    eprintln!(
        "2 chunks ({chunk_bytes} bytes the larger), blocks {blocks:?}, remote budget {budget}, region limit {limit}: {slices} slice requests (expected {regions}), {} info, read in {spent:?}; daemon peak RSS {} MiB",
        count(&read, "info") - count(&opened, "info"),
        hwm_kib >> 10
    );
    assert_eq!(
        slices, regions,
        "regions of at most {limit} bytes: {read:?}"
    );
    assert!(slices > 2, "more requests than chunks");
    assert!(
        hwm_kib << 10 < chunk_bytes,
        "the daemon's peak RSS ({hwm_kib} KiB) stays below one chunk ({chunk_bytes} bytes)"
    );
    drop(file);
    drop(mount);
    drop(server);
}

/// A dataset replaced on the server (a new file renamed over it), a stored
/// `.b2nd` and an HDF5 file: after the attribute timeout a new open reads
/// the new bytes, and a handle opened before reads the old bytes or EIO,
/// never the new ones (an HDF5 leaf's regions carry no validator: past the
/// TTL its ETag is asked once, and every unread region is then refused).
#[test]
fn a_dataset_replaced_on_the_server_is_new_for_new_opens_and_never_mixed() {
    let test = "a_dataset_replaced_on_the_server_is_new_for_new_opens_and_never_mixed";
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_caterva2(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("state/public/rep/r.b2nd");
    let old = random_array(&target, 1 << 20, 64 << 10, 16 << 10, 1);
    let staged = tmp.path().join("state/staging/r.b2nd");
    let new = random_array(&staged, 1 << 20, 64 << 10, 16 << 10, 2);
    let server = C2Server::public(tmp.path());
    let mount = Mount::start(
        Path::new(&server.url("@public")),
        &["--attr-timeout", "0.5", "--prefetch-threads", "0"],
    );
    let data = mount.path().join("rep/r.b2nd/data");
    let held = std::fs::File::open(&data).unwrap();
    read_checked(&held, &old, 0, 4096, 4096, "the held handle before").unwrap();
    thread::sleep(Duration::from_millis(1100)); // another mtime, whatever the clock's grain
    std::fs::rename(&staged, &target).unwrap();
    thread::sleep(Duration::from_millis(1500));
    let fresh = std::fs::read(&data).unwrap_or_else(|e| panic!("{e}\n{}", mount.log_text()));
    assert!(fresh == new, "a new open reads the new dataset");
    let step = 1 << 20;
    let (mut ok, mut failed) = (0, 0);
    for at in (step..old.len()).step_by(step) {
        match read_checked(
            &held,
            &old,
            at,
            at + step,
            step,
            "the held handle after the replacement",
        ) {
            Ok(_) => ok += 1,
            Err((_, errno)) => {
                assert_eq!(errno, Some(EIO));
                failed += 1;
            }
        }
    }
    eprintln!("held handle after the replacement: {ok} MiB old bytes, {failed} MiB refused");
    assert!(
        failed > 0,
        "uncached bytes of the replaced dataset are refused"
    );
    // The same with an HDF5 file replaced: its leaves are read as regions,
    // served on the ETag the leaf was opened with for one TTL, then asked
    // again.
    let h5_old = h5_file(&tmp.path().join("state/public/rep/lab.h5"), 3);
    let h5_new = h5_file(&tmp.path().join("state/staging/lab.h5"), 4);
    thread::sleep(Duration::from_millis(1500));
    let leaf = mount.path().join("rep/lab.h5/v/data");
    let held = std::fs::File::open(&leaf).unwrap_or_else(|e| panic!("{e}\n{}", mount.log_text()));
    read_checked(&held, &h5_old, 0, 4096, 4096, "the held HDF5 leaf before").unwrap();
    thread::sleep(Duration::from_millis(1100));
    std::fs::rename(
        tmp.path().join("state/staging/lab.h5"),
        tmp.path().join("state/public/rep/lab.h5"),
    )
    .unwrap();
    thread::sleep(Duration::from_millis(1500));
    let fresh = std::fs::read(&leaf).unwrap_or_else(|e| panic!("{e}\n{}", mount.log_text()));
    assert!(fresh == h5_new, "a new open reads the new HDF5 leaf");
    let step = 160_000; // one chunk of the leaf
    let before = settle(&mount);
    let (mut ok, mut failed) = (0, 0);
    for at in (step..h5_old.len()).step_by(step) {
        match read_checked(
            &held,
            &h5_old,
            at,
            (at + step).min(h5_old.len()),
            step,
            "the held HDF5 leaf after the replacement",
        ) {
            Ok(_) => ok += 1,
            Err((_, errno)) => {
                assert_eq!(errno, Some(EIO));
                failed += 1;
            }
        }
    }
    let after = settle(&mount);
    let asked = |k: &str| count(&after, k) - count(&before, k);
    eprintln!(
        "held HDF5 leaf after the replacement: {ok} chunks old bytes, {failed} refused, at the cost of {} info and {} slice requests",
        asked("info"),
        asked("slice")
    );
    assert!(
        failed > 0,
        "uncached regions of the replaced HDF5 leaf are refused"
    );
    assert_eq!(
        asked("info"),
        1,
        "past the TTL the ETag is asked once; the change is then known"
    );
    drop(mount);
    drop(server);
}

/// An HDF5 file at `path` with one dataset `v`: 200,000 random float64
/// (seed `seed`) in gzip chunks of 20,000; numpy's bytes of it.
fn h5_file(path: &Path, seed: u64) -> Vec<u8> {
    let script = r#"
import sys, numpy as np, hdf5plugin, h5py
seed, out = int(sys.argv[1]), sys.argv[2]
a = np.random.default_rng(seed).random(200_000)
with h5py.File(out, "w") as f:
    f.create_dataset("v", data=a, chunks=(20_000,), compression="gzip")
sys.stdout.buffer.write(a.tobytes())
"#;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    run_python_bytes(script, &[&seed.to_string(), path.to_str().unwrap()])
}

// ------------------------------------------------------------ disk cache

/// With `--disk-cache`, a remount reads a stored frame's every file from
/// the bytes the first mount was sent: per object one validation (a
/// one-byte `/api/fetch`, the server's HEAD), no other data request.
#[test]
fn a_stored_frame_read_again_after_a_remount_costs_one_byte_per_object() {
    let test = "a_stored_frame_read_again_after_a_remount_costs_one_byte_per_object";
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_caterva2(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // 256 Ki float64 (2 MiB, more than the open's first MiB), chunks of 256 KiB.
    let raw = random_array(
        &tmp.path().join("state/public/shape/big.b2nd"),
        1 << 18,
        32 << 10,
        4 << 10,
        9,
    );
    let server = C2Server::public(tmp.path());
    let url = format!("c2+http://127.0.0.1:{}/@public", server.port);
    let cache = tmp.path().join("cache");
    let args = [
        "--disk-cache",
        cache.to_str().unwrap(),
        // (long: the one validation per object is not repeated mid-test)
        "--attr-timeout",
        "30",
    ];
    let first = {
        let mount = Mount::start(Path::new(&url), &args);
        let files = read_tree(&mount.path().join("shape/big.b2nd"));
        assert_eq!(files[Path::new("data")], raw);
        let deadline = Instant::now() + Duration::from_secs(20);
        while mount.stats()["disk_cache"]["queued_bytes"] != 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        let first = settle(&mount);
        assert!(count(&first, "fetch") > 0);
        eprintln!("first mount: {first:?}");
        files
    };
    let mount = Mount::start(Path::new(&url), &args);
    let before = settle(&mount);
    let files = read_tree(&mount.path().join("shape/big.b2nd"));
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        first.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &files {
        assert!(bytes == &first[path], "{}", path.display());
    }
    let after = settle(&mount);
    let stats = mount.stats();
    eprintln!("remount: {after:?}; {stats}");
    assert_eq!(count(&after, "slice"), count(&before, "slice"));
    assert!(
        count(&after, "fetch") - count(&before, "fetch") <= 1,
        "only validations: {before:?} -> {after:?}"
    );
    assert!(
        stats["remote"]["bytes_fetched"].as_u64().unwrap() <= 8,
        "{stats}"
    );
    assert!(
        stats["disk_cache"]["remote_hits"].as_u64().unwrap() > 0,
        "{stats}"
    );
}
