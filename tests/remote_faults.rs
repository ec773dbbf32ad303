//! A mounted S3 prefix under faults (issue 51): moto on 127.0.0.1, behind
//! a fault proxy (tests/common/fault_proxy.rs) where a test needs one.
//! Odd but legal keys and forged listings cost only themselves; 503s,
//! resets and truncations are retried to exact bytes; stalled GETs hold up
//! only their own reads. Expected bytes are numpy's (`tobytes()` of the
//! arrays python-blosc2 wrote). Each test takes seconds.
#![cfg(feature = "remote")]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::fault_proxy::{FaultProxy, Rules};
use common::moto::{env_refs, Moto};
use common::mount::{run_python, serial_with_fuse, Mount};

/// Arrays named `names` written by python-blosc2 into `dir` as
/// `NAME.b2nd`, each with its C-order bytes as numpy gives them in
/// `NAME.raw` (array `i` holds `arange * (i + 1)`, 4 chunks of 5 blocks;
/// one named `big*` 3.2 MB of random doubles, more than an open fetches;
/// one named `wide*` 3.2 MB of `arange`, which compresses).
fn arrays(dir: &Path, names: &[&str]) -> Vec<(PathBuf, Vec<u8>)> {
    let mut args = vec![dir.to_str().unwrap()];
    args.extend_from_slice(names);
    run_python(
        r#"
import sys, numpy as np, blosc2
out = sys.argv[1]
for i, name in enumerate(sys.argv[2:]):
    if name.startswith("big"):
        a = np.random.default_rng(i).random(400_000).reshape(400, 1000)
        blosc2.asarray(a, chunks=(100, 1000), blocks=(20, 1000), urlpath=f"{out}/{name}.b2nd", mode="w")
        open(f"{out}/{name}.raw", "wb").write(a.tobytes())
        continue
    if name.startswith("wide"):
        a = (np.arange(400_000, dtype="f8") * (i + 1)).reshape(400, 1000)
        blosc2.asarray(a, chunks=(100, 1000), blocks=(20, 1000), urlpath=f"{out}/{name}.b2nd", mode="w")
        open(f"{out}/{name}.raw", "wb").write(a.tobytes())
        continue
    a = (np.arange(20000, dtype="f8") * (i + 1)).reshape(200, 100)
    blosc2.asarray(a, chunks=(50, 100), blocks=(10, 100), urlpath=f"{out}/{name}.b2nd", mode="w")
    open(f"{out}/{name}.raw", "wb").write(a.tobytes())
"#,
        &args,
    );
    names
        .iter()
        .map(|n| {
            let raw = std::fs::read(dir.join(format!("{n}.raw"))).unwrap();
            (dir.join(format!("{n}.b2nd")), raw)
        })
        .collect()
}

/// The environment reaching `endpoint` with moto's credentials.
fn env_at(moto: &Moto, endpoint: &str) -> Vec<(&'static str, String)> {
    let mut env = moto.env();
    for (k, v) in &mut env {
        if *k == "AWS_ENDPOINT_URL" {
            *v = endpoint.to_string();
        }
    }
    env
}

fn names(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

fn remote(mount: &Mount) -> serde_json::Value {
    mount.stats()["remote"].clone()
}

/// Every file under `dir`, at any depth.
fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            out.extend(walk_files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// How long `f` took, and its answer.
fn timed<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let start = Instant::now();
    let answer = f();
    (start.elapsed(), answer)
}

#[test]
fn odd_keys_cost_only_themselves_and_percent_keys_read() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let Some(moto) = Moto::start("odd_keys_cost_only_themselves_and_percent_keys_read") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let made = arrays(dir.path(), &["ok", "pct", "good", "odd"]);
    let long = format!("{}.b2nd", "n".repeat(300));
    let odd = made[3].0.clone();
    let key = |i: usize, key: &str| (made[i].0.clone(), key.to_string());
    moto.upload(
        "odd",
        &[
            key(0, "ok.b2nd"),
            key(1, "50% x.b2nd"),
            key(2, "sub/good.b2nd"),
            (odd.clone(), "//lead.b2nd".into()),
            (odd.clone(), "tab\there.b2nd".into()),
            (odd.clone(), long.clone()),
            (odd.clone(), "sub/../escape.b2nd".into()),
            (odd.clone(), "sub/./x.b2nd".into()),
            (odd, "sub//y.b2nd".into()),
        ],
    );
    let env = moto.env();
    let mount = Mount::start_with_env(Path::new("s3://odd/"), &[], &env_refs(&env));
    let root = mount.path();
    let (took, shown) = timed(|| names(root));
    assert!(took < Duration::from_secs(10), "ls took {took:?}");
    for name in ["ok.b2nd", "50% x.b2nd", "sub"] {
        assert!(shown.contains(&name.to_string()), "{name} in {shown:?}");
    }
    assert!(
        shown.iter().all(|n| n.len() <= 255 && !n.contains('\t')),
        "{shown:?}"
    );
    let sub = names(&root.join("sub"));
    assert!(
        sub.iter().all(|n| n == "good.b2nd" || n == "zarr.json")
            && sub.contains(&"good.b2nd".into()),
        "{sub:?}"
    );
    for (path, i) in [("ok.b2nd", 0), ("50% x.b2nd", 1), ("sub/good.b2nd", 2)] {
        let got = std::fs::read(root.join(path).join("data")).unwrap();
        assert!(got == made[i].1, "{path}: wrong bytes");
    }
    let stats = remote(&mount);
    assert!(
        stats["skipped_keys"].as_u64().unwrap() >= 5,
        "skipped keys counted: {stats}"
    );
    assert!(
        mount.log_text().contains("not shown"),
        "{}",
        mount.log_text()
    );
}

#[test]
fn forged_listings_fail_their_folder_only() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let Some(moto) = Moto::start("forged_listings_fail_their_folder_only") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let made = arrays(dir.path(), &["ok"]);
    let ok = made[0].0.clone();
    moto.upload(
        "forged",
        &[
            (ok.clone(), "ok.b2nd".into()),
            (ok.clone(), "loop/x.b2nd".into()),
            (ok, "far/y.b2nd".into()),
        ],
    );
    let page = |inner: &str| {
        format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult><Name>forged</Name><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>{inner}</ListBucketResult>")
    };
    let rules = Rules {
        forged: vec![
            (
                "loop/".into(),
                page("<Prefix>loop/</Prefix><CommonPrefixes><Prefix>loop/</Prefix></CommonPrefixes>"),
            ),
            (
                "far/".into(),
                page("<Prefix>far/</Prefix><Contents><Key>elsewhere/z.b2nd</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>\"e\"</ETag><Size>5</Size></Contents>"),
            ),
        ],
        ..Rules::default()
    };
    let proxy = FaultProxy::start(moto.port, rules);
    let env = env_at(&moto, &proxy.endpoint());
    let mount = Mount::start_with_env(Path::new("s3://forged/"), &[], &env_refs(&env));
    let root = mount.path();
    let (took, err) = timed(|| std::fs::read_dir(root.join("loop")).map(|d| d.count()));
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert_eq!(err.unwrap_err().raw_os_error(), Some(libc::EIO));
    let err = std::fs::read_dir(root.join("far")).map(|d| d.count());
    assert_eq!(err.unwrap_err().raw_os_error(), Some(libc::EIO));
    assert!(names(root).contains(&"ok.b2nd".to_string()));
    let got = std::fs::read(root.join("ok.b2nd/data")).unwrap();
    assert!(got == made[0].1, "wrong bytes");
    assert!(remote(&mount)["forged_listings"].as_u64().unwrap() >= 2);
    assert!(proxy.seen().lists < 20, "{:?}", proxy.seen());
}

#[test]
fn failed_attempts_are_retried_to_exact_bytes_and_counted() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let Some(moto) = Moto::start("failed_attempts_are_retried_to_exact_bytes_and_counted") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let made = arrays(dir.path(), &["a", "b", "c", "big"]);
    let files: Vec<_> = ["a", "b", "c", "big"]
        .iter()
        .zip(&made)
        .map(|(n, (p, _))| (p.clone(), format!("{n}.b2nd")))
        .collect();
    moto.upload("flaky", &files);
    let proxy = FaultProxy::start(moto.port, Rules::default());
    let env = env_at(&moto, &proxy.endpoint());
    let mount = Mount::start_with_env(
        Path::new("s3://flaky/"),
        &["--remote-timeout", "6"],
        &env_refs(&env),
    );
    let root = mount.path();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        let faults = Rules {
            fail_503: 1,
            reset: 1,
            truncate: 1,
            ..Rules::default()
        };
        proxy.set(faults);
        let got = std::fs::read(root.join(format!("{name}.b2nd/data"))).unwrap();
        assert!(got == made[i].1, "{name}: wrong bytes");
    }
    let stats = remote(&mount);
    assert!(
        stats["retried"]["get"].as_u64().unwrap() >= 6,
        "retries counted: {stats}"
    );
    assert!(mount.log_text().contains("attempt failed"));
    // A fault that does not end gives EIO in bounded time, and the mount
    // lives on (the array's header is fetched first, by its lookup: an
    // array that cannot be opened shows only its meta.json, with the error).
    std::fs::metadata(root.join("big.b2nd/data")).unwrap();
    proxy.set(Rules {
        fail_503: 1_000,
        ..Rules::default()
    });
    let (took, err) = timed(|| std::fs::read(root.join("big.b2nd/data")).map(|b| b.len()));
    assert!(took < Duration::from_secs(9), "took {took:?}");
    let e = err.expect_err("a failing server gives no bytes");
    assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}");
    proxy.set(Rules::default());
    assert!(names(root).contains(&"a.b2nd".to_string()));
    assert!(remote(&mount)["failed"]["get"].as_u64().unwrap() >= 1);
}

#[test]
fn stalled_gets_hold_up_only_their_own_reads() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let Some(moto) = Moto::start("stalled_gets_hold_up_only_their_own_reads") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let names_made = ["s0", "s1", "s2", "o0", "o1"];
    let made = arrays(dir.path(), &names_made);
    let files: Vec<_> = names_made
        .iter()
        .zip(&made)
        .map(|(n, (p, _))| (p.clone(), format!("{n}.b2nd")))
        .collect();
    moto.upload("slow", &files);
    let proxy = FaultProxy::start(moto.port, Rules::default());
    let env = env_at(&moto, &proxy.endpoint());
    let mount = Mount::start_with_env(
        Path::new("s3://slow/"),
        &["--remote-timeout", "8"],
        &env_refs(&env),
    );
    let root = mount.path().to_path_buf();
    // Listed and known before the stall (as a browsing user would have).
    let listed = names(&root);
    assert!(
        names_made
            .iter()
            .all(|n| listed.contains(&format!("{n}.b2nd"))),
        "{listed:?}"
    );
    proxy.set(Rules {
        stall: vec!["/slow/s".into()],
        ..Rules::default()
    });
    let stalled: Vec<_> = ["s0", "s1", "s2"]
        .iter()
        .map(|n| {
            let path = root.join(format!("{n}.b2nd/data"));
            std::thread::spawn(move || std::fs::read(path).map(|b| b.len()))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let mut slow = Vec::new();
    let mut check = |what: &str, took: Duration| {
        eprintln!("{what}: {took:?}");
        if took > Duration::from_secs(1) {
            slow.push(format!("{what}: {took:?}"));
        }
    };
    let (took, _) = timed(|| names(&root));
    check("ls /", took);
    let (took, _) = timed(|| std::fs::read(root.join(".stats")).unwrap());
    check(".stats", took);
    for (i, n) in ["o0", "o1"].iter().enumerate() {
        let (took, _) = timed(|| std::fs::metadata(root.join(format!("{n}.b2nd/data"))).unwrap());
        check(&format!("stat {n}/data"), took);
        let (took, _) = timed(|| std::fs::read(root.join(format!("{n}.b2nd/meta.json"))).unwrap());
        check(&format!("{n}/meta.json"), took);
        let (took, got) = timed(|| std::fs::read(root.join(format!("{n}.b2nd/data"))).unwrap());
        check(&format!("read {n}/data"), took);
        assert!(got == made[3 + i].1, "{n}: wrong bytes");
    }
    assert!(slow.is_empty(), "held up by the stalled GETs: {slow:?}");
    let (took, _) = timed(|| {
        for t in stalled {
            let answer = t.join().unwrap();
            assert!(
                answer.is_err(),
                "a stalled object gives no bytes: {answer:?}"
            );
        }
    });
    assert!(
        took < Duration::from_secs(12),
        "stalled reads ended after {took:?}"
    );
    assert!(remote(&mount)["timeouts"]["get"].as_u64().unwrap() >= 1);
}

/// The disk cache heals: a store that swaps bytes under the right ETag
/// gives EIO after one fresh fetch (the entry dropped first, counted
/// `healed`), and bytes gone bad in the cache file are dropped on the
/// first decode error (logged, counted), fetched again from the store and
/// served exactly; the mount after that reads the healed cache with no GET.
#[test]
fn a_disk_cache_holding_bad_bytes_heals() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let Some(moto) = Moto::start("a_disk_cache_holding_bad_bytes_heals") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let made = arrays(dir.path(), &["big_liar", "wide"]);
    moto.upload(
        "heal",
        &[
            (made[0].0.clone(), "big_liar.b2nd".to_string()),
            (made[1].0.clone(), "wide.b2nd".to_string()),
        ],
    );
    let cache = tempfile::tempdir().unwrap();
    let proxy = FaultProxy::start(moto.port, Rules::default());
    let env = env_at(&moto, &proxy.endpoint());
    let args = [
        "--remote-timeout",
        "6",
        "--disk-cache",
        cache.path().to_str().unwrap(),
    ];
    {
        let mount = Mount::start_with_env(Path::new("s3://heal/"), &args, &env_refs(&env));
        // A lying store: opened (its header fetched) while it answers
        // right, then every GET of it flipped.
        let lying = mount.path().join("big_liar.b2nd/data");
        std::fs::metadata(&lying).unwrap();
        proxy.set(Rules {
            corrupt: vec!["/heal/big_liar".into()],
            ..Rules::default()
        });
        let e = std::fs::read(&lying).expect_err("flipped bytes do not decode");
        assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}");
        let st = mount.stats();
        assert!(
            st["disk_cache"]["healed"].as_u64().unwrap() >= 1,
            "the entry was dropped once before the EIO: {st}"
        );
        proxy.set(Rules::default());
        // The other object, read whole: its bytes land in the cache.
        let got = std::fs::read(mount.path().join("wide.b2nd/data")).unwrap();
        assert!(got == made[1].1);
        let deadline = Instant::now() + Duration::from_secs(20);
        while mount.stats()["disk_cache"]["queued_bytes"] != 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    // Bytes gone bad in the remote tier's files (the middle half of the
    // objects' stored, compressed bytes: the damage shows as a decode
    // error; the cache keeps no checksums of its own). Decoded
    // `data` entries are removed, so the next read decodes again.
    let mut flipped = 0;
    let files = walk_files(cache.path());
    for path in &files {
        if path.extension().is_none_or(|x| x != "data") {
            continue;
        }
        let map = std::fs::read(path.with_extension("map")).unwrap_or_default();
        let remote = map.windows(13).any(|w| w == b"remote object");
        if !remote {
            std::fs::remove_file(path).unwrap();
            let _ = std::fs::remove_file(path.with_extension("map"));
            continue;
        }
        let mut bytes = std::fs::read(path).unwrap();
        let n = bytes.len();
        bytes[n / 4..n * 3 / 4].iter_mut().for_each(|b| *b ^= 0x5a);
        std::fs::write(path, bytes).unwrap();
        flipped += 1;
    }
    assert!(flipped >= 1, "an entry holds wide.b2nd: {files:?}");
    let gets_before = proxy.seen().gets;
    {
        let mount = Mount::start_with_env(Path::new("s3://heal/"), &args, &env_refs(&env));
        let got = std::fs::read(mount.path().join("wide.b2nd/data")).unwrap();
        assert!(
            got == made[1].1,
            "the remount after bad bytes reads exactly"
        );
        let st = mount.stats();
        assert!(st["disk_cache"]["healed"].as_u64().unwrap() >= 1, "{st}");
        assert!(
            mount.log_text().contains("did not decode"),
            "the heal is logged"
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while mount.stats()["disk_cache"]["queued_bytes"] != 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    assert!(
        proxy.seen().gets > gets_before,
        "the healing mount fetched again"
    );
    let gets_before = proxy.seen().gets;
    let mount = Mount::start_with_env(Path::new("s3://heal/"), &args, &env_refs(&env));
    let got = std::fs::read(mount.path().join("wide.b2nd/data")).unwrap();
    assert!(got == made[1].1, "the healed cache reads exactly");
    assert_eq!(mount.stats()["disk_cache"]["healed"].as_u64(), Some(0));
    assert_eq!(
        proxy.seen().gets,
        gets_before,
        "served from the healed cache"
    );
}

/// One `read()` waits at most `--remote-timeout` in total and gives EIO:
/// the kernel asks again, page by page, for a readahead that failed, and
/// a range that timed out just now fails at once instead of waiting again.
#[test]
fn one_read_waits_at_most_the_remote_timeout_in_total() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let Some(moto) = Moto::start("one_read_waits_at_most_the_remote_timeout_in_total") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let made = arrays(dir.path(), &["big"]);
    moto.upload("budget", &[(made[0].0.clone(), "big.b2nd".to_string())]);
    let proxy = FaultProxy::start(moto.port, Rules::default());
    let env = env_at(&moto, &proxy.endpoint());
    let mount = Mount::start_with_env(
        Path::new("s3://budget/"),
        &["--remote-timeout", "3"],
        &env_refs(&env),
    );
    let data = mount.path().join("big.b2nd/data");
    std::fs::metadata(&data).unwrap();
    proxy.set(Rules {
        stall: vec!["/budget/big".into()],
        ..Rules::default()
    });
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(&data).unwrap();
    let mut buf = vec![0u8; 128 << 10];
    // Past what the open fetched: the chunk's header, then its blocks.
    let (took, answer) = timed(|| file.read_at(&mut buf, 2 << 20));
    let e = answer.expect_err("a stalled store gives no bytes");
    assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}");
    assert!(
        took < Duration::from_millis(4_500),
        "one read took {took:?} with --remote-timeout 3: {:?}",
        proxy.seen()
    );
}
