//! Inputs the fuzzers (`fuzz/`, `scripts/fuzz.sh`) found, replayed through
//! the very calls the fuzz targets make, plus known-bad inputs whose error
//! message must name the problem.
//!
//! Every file in `tests/fuzz_regressions/` is named `<target>-<name>.bin`
//! (target: `frame`, `chunk`, `metalayer`, `codecs`, `expression`, ...). Each one runs in a
//! child process (this test binary re-run with `BLOSC2FS_FUZZ_ONE` set) with
//! a CPU-time limit and an address-space limit, so a hang or a runaway
//! allocation fails the test instead of taking the machine down. The limit
//! is on CPU seconds (the kernel stops the child), so a busy machine does
//! not make a quick input look like a hang; a much longer wall-clock limit
//! catches a child that sleeps or blocks.

mod common;

#[path = "../fuzz/src/harness.rs"]
mod harness;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use blosc2fs::format::chunk::decode_chunk;
use blosc2fs::format::{codec, msgpack, Flavor, NdMeta};
use blosc2fs::source::open_memory;

/// CPU time allowed for one input (all of its target's calls).
const PER_INPUT_CPU_SECONDS: u64 = 5;
/// Wall time allowed for one input, for a child that blocks instead of working.
const PER_INPUT: Duration = Duration::from_secs(120);
/// Address space allowed to the child replaying one input.
const CHILD_AS_LIMIT: u64 = 4 << 30;
const ONE_VAR: &str = "BLOSC2FS_FUZZ_ONE";

fn regressions_dir() -> PathBuf {
    common::repo_root().join("tests/fuzz_regressions")
}

/// Run `path` through the harness function its name selects.
fn replay(path: &Path) {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let target = name.split('-').next().unwrap_or_default();
    match target {
        "frame" => harness::frame(&data),
        "chunk" => harness::chunk(&data),
        "metalayer" => harness::metalayer(&data),
        "codecs" => harness::codecs(&data),
        "zip_directory" => harness::zip_directory(&data),
        "embed_map" => harness::embed_frame(&data),
        "expression" => harness::expression(&data),
        "listing" => harness::listing(&data),
        _ => panic!("{name}: file name must start with frame-, chunk-, metalayer-, codecs-, zip_directory-, embed_map-, expression- or listing-"),
    }
}

#[test]
fn fuzz_regressions_do_not_panic_or_hang() {
    // Child: replay one input in-process; a panic makes the exit status non-zero.
    if let Some(one) = std::env::var_os(ONE_VAR) {
        replay(Path::new(&one));
        return;
    }
    let dir = regressions_dir();
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect(),
        Err(_) => {
            eprintln!("no {} — nothing to replay", dir.display());
            return;
        }
    };
    files.sort();
    let exe = std::env::current_exe().expect("test binary path");
    let mut failures = Vec::new();
    for file in &files {
        let started = Instant::now();
        let mut cmd = Command::new(&exe);
        cmd.args([
            "fuzz_regressions_do_not_panic_or_hang",
            "--exact",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(ONE_VAR, file)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        limit_child(&mut cmd);
        let mut child = cmd.spawn().expect("spawn the test binary");
        // Drain the pipes on threads so a chatty child cannot block.
        let mut out = child.stdout.take().expect("stdout");
        let mut err = child.stderr.take().expect("stderr");
        let out_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut out, &mut s);
            s
        });
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut err, &mut s);
            s
        });
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for the child") {
                break Some(status);
            }
            if started.elapsed() > PER_INPUT {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let output = out_reader.join().unwrap_or_default() + &err_reader.join().unwrap_or_default();
        let name = file
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        match status {
            None => failures.push(format!("{name}: still running after {PER_INPUT:?} of wall time (blocked)")),
            Some(s) if s.signal() == Some(libc::SIGXCPU) || s.signal() == Some(libc::SIGKILL) => {
                failures.push(format!("{name}: used more than {PER_INPUT_CPU_SECONDS} s of CPU (hang or runaway work)"))
            }
            Some(s) if !s.success() => {
                let why: Vec<&str> = output
                    .lines()
                    .skip_while(|l| !l.contains("panicked at") && !l.contains("memory allocation"))
                    .take(3)
                    .collect();
                let why = if why.is_empty() { format!("exit status {s}") } else { why.join(" / ") };
                failures.push(format!("{name}: {why}"));
            }
            Some(_) => eprintln!("{name}: ok in {:?}", started.elapsed()),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fuzz regression inputs fail:\n  {}",
        failures.len(),
        files.len(),
        failures.join("\n  ")
    );
}

/// Cap the child's address space so an absurd allocation fails fast, and
/// its CPU time so endless work is stopped (SIGXCPU, then SIGKILL).
fn limit_child(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            let space = libc::rlimit {
                rlim_cur: CHILD_AS_LIMIT as libc::rlim_t,
                rlim_max: CHILD_AS_LIMIT as libc::rlim_t,
            };
            libc::setrlimit(libc::RLIMIT_AS, &space);
            let cpu = libc::rlimit {
                rlim_cur: PER_INPUT_CPU_SECONDS as libc::rlim_t,
                rlim_max: PER_INPUT_CPU_SECONDS as libc::rlim_t + 1,
            };
            libc::setrlimit(libc::RLIMIT_CPU, &cpu);
            Ok(())
        });
    }
}

// ----------------------------------------------------------------------------
// Known-bad inputs: an Err whose message names the problem.

fn open_err(bytes: Vec<u8>) -> String {
    match open_memory(Path::new("bad.b2nd"), bytes) {
        Ok(_) => panic!("a bad frame opened"),
        Err(e) => e.to_string(),
    }
}

/// A frame header start: fixarray, "b2frame\0" magic, then zeros.
fn frame_magic(len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    b[0] = 0x9e;
    b[1] = 0xa8;
    b[2..10].copy_from_slice(b"b2frame\0");
    b
}

fn conformance_frames() -> Vec<(String, Vec<u8>)> {
    let dir = common::conformance_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("no conformance files at {}", dir.display());
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<u8>)> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter_map(|p| {
            let bytes = std::fs::read(&p).ok()?;
            blosc2fs::format::looks_like_frame(&bytes).then(|| (p.display().to_string(), bytes))
        })
        .collect();
    out.sort();
    out
}

fn conformance_cdata() -> Vec<(String, Vec<u8>)> {
    let dir = common::conformance_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<u8>)> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cdata"))
        .filter_map(|p| Some((p.display().to_string(), std::fs::read(&p).ok()?)))
        .collect();
    out.sort();
    out
}

#[test]
fn frame_truncated_at_50_bytes_says_truncated() {
    let msg = open_err(frame_magic(50));
    assert!(msg.contains("truncated"), "{msg}");
    assert!(msg.contains("bad.b2nd"), "message names the file: {msg}");
    for (name, bytes) in conformance_frames() {
        let msg = open_err(bytes[..50].to_vec());
        assert!(msg.contains("truncated"), "{name} cut at 50 bytes: {msg}");
    }
}

#[test]
fn frame_missing_its_tail_is_an_error() {
    for (name, bytes) in conformance_frames() {
        let cut = bytes.len() - 10;
        let msg = open_err(bytes[..cut].to_vec());
        assert!(
            msg.contains("frame length") || msg.contains("truncated"),
            "{name} cut to {cut} bytes: {msg}"
        );
    }
}

#[test]
fn not_a_frame_says_so() {
    let msg = open_err(b"This is a plain text file, long enough to pass the minimal frame header length check.....".to_vec());
    assert!(msg.contains("not a Blosc2 file"), "{msg}");
    let msg = open_err(b"tiny".to_vec());
    assert!(msg.contains("not a Blosc2 file"), "{msg}");
}

#[test]
fn frame_with_bad_header_length_is_corrupt() {
    let mut b = frame_magic(200);
    b[11..15].copy_from_slice(&i32::MAX.to_be_bytes()); // header_len
    b[16..24].copy_from_slice(&200i64.to_be_bytes()); // frame_len
    let msg = open_err(b);
    assert!(msg.contains("header length"), "{msg}");
}

/// A 16-byte Blosc1-style chunk header.
fn chunk_header(nbytes: i32, blocksize: i32, cbytes: i32) -> Vec<u8> {
    let mut h = vec![2u8, 1, 0x00, 1];
    h.extend_from_slice(&nbytes.to_le_bytes());
    h.extend_from_slice(&blocksize.to_le_bytes());
    h.extend_from_slice(&cbytes.to_le_bytes());
    h
}

#[test]
fn truncated_chunk_says_truncated() {
    let mut c = chunk_header(64, 64, 100);
    c.extend_from_slice(&[0u8; 20]);
    let msg = decode_chunk(&c)
        .expect_err("a truncated chunk decoded")
        .to_string();
    assert!(msg.contains("truncated"), "{msg}");
    for (name, bytes) in conformance_cdata() {
        let cut = bytes.len() / 2;
        let msg = decode_chunk(&bytes[..cut])
            .expect_err("a truncated chunk decoded")
            .to_string();
        assert!(
            msg.contains("truncated"),
            "{name} cut to {cut} bytes: {msg}"
        );
    }
    let msg = decode_chunk(&[2, 1, 0])
        .expect_err("3 bytes decoded")
        .to_string();
    assert!(msg.contains("truncated"), "{msg}");
}

#[test]
fn chunk_with_zero_blocksize_is_corrupt() {
    let mut c = chunk_header(64, 0, 80);
    c.extend_from_slice(&[0u8; 64]);
    let msg = decode_chunk(&c)
        .expect_err("blocksize 0 decoded")
        .to_string();
    assert!(msg.contains("blocksize"), "{msg}");
}

/// msgpack int64 (0xd3) of `v`.
fn mp_i64(v: i64) -> Vec<u8> {
    let mut b = vec![0xd3];
    b.extend_from_slice(&v.to_be_bytes());
    b
}

/// b2nd metalayer `[0, ndim, shape, chunkshape, blockshape, 0, "|u1"]`.
fn b2nd_meta(shape: &[i64], chunkshape: &[i64], blockshape: &[i64]) -> Vec<u8> {
    let mut b = vec![0x97, 0x00, shape.len() as u8];
    for dims in [shape, chunkshape, blockshape] {
        b.push(0x90 | dims.len() as u8);
        for &d in dims {
            b.extend(mp_i64(d));
        }
    }
    b.extend_from_slice(&[0x00, 0xa3, b'|', b'u', b'1']);
    b
}

#[test]
fn bad_metalayers_name_the_problem() {
    let ok = b2nd_meta(&[400, 3], &[110, 3], &[57, 3]);
    NdMeta::parse(&ok, Flavor::B2nd).expect("a good b2nd metalayer");
    harness::metalayer(&ok);

    let too_many = b2nd_meta(&[1; 17], &[1; 17], &[1; 17]);
    let msg = NdMeta::parse(&too_many, Flavor::B2nd)
        .expect_err("17 dimensions accepted")
        .to_string();
    assert!(msg.contains("dimensions"), "{msg}");

    let big_block = b2nd_meta(&[100], &[10], &[20]);
    let msg = NdMeta::parse(&big_block, Flavor::B2nd)
        .expect_err("block > chunk accepted")
        .to_string();
    assert!(msg.contains("exceeds chunkshape"), "{msg}");

    let negative = b2nd_meta(&[-5], &[10], &[5]);
    let msg = NdMeta::parse(&negative, Flavor::Caterva)
        .expect_err("negative extent accepted")
        .to_string();
    assert!(msg.contains("non-negative"), "{msg}");

    let truncated = &ok[..ok.len() - 3];
    let msg = NdMeta::parse(truncated, Flavor::B2nd)
        .expect_err("truncated msgpack accepted")
        .to_string();
    assert!(msg.contains("msgpack"), "{msg}");

    // Nesting deeper than the parser's limit is refused, not a stack overflow.
    let deep = vec![0x91u8; 100_000];
    let msg = msgpack::parse(&deep, "deep")
        .expect_err("100000 nested arrays accepted")
        .to_string();
    assert!(msg.contains("msgpack"), "{msg}");
}

#[test]
fn bad_codec_streams_are_errors() {
    let mut dst = vec![0u8; 64];
    for (name, result) in [
        ("blosclz", codec::blosclz::decompress(&[], &mut dst.clone())),
        ("lz4", codec::lz4::decompress(&[], &mut dst.clone(), &[])),
        (
            "zlib",
            codec::zlib::decompress(b"not a zlib stream", &mut dst.clone()),
        ),
        (
            "zstd",
            codec::zstd::decompress(b"not a zstd frame", &mut dst, &[]),
        ),
    ] {
        let err = result.expect_err(name);
        assert!(!err.to_string().is_empty(), "{name}");
    }
}

/// `meta.json` derives an item size from the b2nd dtype string; any string a
/// frame may carry must give `None` or a size, never a panic.
#[test]
fn dtype_itemsize_of_hostile_strings_does_not_panic() {
    use blosc2fs::format::simple_dtype_itemsize;
    assert_eq!(simple_dtype_itemsize("<f8"), Some(8));
    assert_eq!(simple_dtype_itemsize("<U5"), Some(20));
    let panicked: Vec<&str> = [
        "",
        "<",
        "|S",
        "ę8",
        "<ę8",
        "<U",
        "<U18446744073709551615",
        "<U5000000000000000000",
        "<f99999999999999999999",
    ]
    .into_iter()
    .filter(|dtype| std::panic::catch_unwind(|| simple_dtype_itemsize(dtype)).is_err())
    .collect();
    assert!(
        panicked.is_empty(),
        "simple_dtype_itemsize panicked for {panicked:?}"
    );
}

/// The store harnesses (zip directory, embed map) on the store fixtures and
/// on deterministic mutations of them: byte flips, cuts, and counts and
/// sizes in the zip records set to their largest values.
#[test]
fn store_harnesses_survive_mutated_store_fixtures() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stores");
    let zip = std::fs::read(dir.join("dict.b2z")).unwrap();
    let embed = std::fs::read(dir.join("values.b2e")).unwrap();
    harness::zip_directory(&zip);
    harness::embed_frame(&embed);
    let mut rng = common::rng::Rng::new(0x9e37_79b9_7f4a_7c15);
    let mut next = move || rng.next_u64();
    for round in 0..400 {
        for (base, run) in [
            (&zip, harness::zip_directory as fn(&[u8])),
            (&embed, harness::embed_frame as fn(&[u8])),
        ] {
            let mut b = base.clone();
            match round % 4 {
                0 => {
                    let at = (next() % b.len() as u64) as usize;
                    b[at] ^= 1 << (next() % 8);
                }
                1 => b.truncate((next() % b.len() as u64) as usize),
                2 => {
                    // Tail records (where the zip directory and a frame's trailer live).
                    let at = b.len() - 1 - (next() % 200.min(b.len() as u64)) as usize;
                    b[at] = 0xff;
                }
                _ => {
                    let at = (next() % (b.len() as u64 - 4)) as usize;
                    b[at..at + 4].copy_from_slice(&[0xff, 0xff, 0xff, 0xff]);
                }
            }
            run(&b);
        }
    }
}
