//! Saved lazy expressions whose operands are `c2array` references, on a
//! mounted Caterva2 root: an operand on the mounted server, inside the
//! mounted folder, is read from the mount's own dataset (the expression's
//! `data` has numpy's bytes exactly); an operand on another server, outside
//! the mounted folder, or on a server the recipe does not name is not
//! read, meta.json says why, there is no `data` file, and the other server
//! is never asked.
//!
//! The server is scripts/check/fake_c2.py (the three endpoints blosc2fs uses for
//! stored frames: roots, list, ranged fetch), because the real Caterva2
//! server cannot serve saved lazy expressions (it answers 500). The arrays
//! and recipes are written by python-blosc2 (the test virtualenv).
//! Skips (saying why) without the virtualenv's Python or /dev/fuse.
//!
//! Built only with the cargo feature `remote` (on by default).
#![cfg(feature = "remote")]

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::mount::{serial_with_fuse, Mount};
use common::repo_root;

const ENOENT: i32 = 2;

/// The virtualenv's Python (`$BLOSC2FS_PYTHON` or the repo's `.venv`), or
/// `None` after saying why `test` skips.
fn venv_python(test: &str) -> Option<PathBuf> {
    let python = std::env::var_os("BLOSC2FS_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv/bin/python"));
    if !python.exists() {
        eprintln!("SKIP {test}: {} missing (scripts/setup_venv.sh makes the virtualenv with python-blosc2)", python.display());
        return None;
    }
    Some(python)
}

/// scripts/check/fake_c2.py serving `dir` as `@public` on a port of its choice,
/// logging each request to `log`; killed when dropped.
struct FakeC2 {
    child: Option<Child>,
    port: u16,
    log: PathBuf,
    stderr: PathBuf,
}

impl FakeC2 {
    fn start(python: &Path, dir: &Path, log: &Path) -> FakeC2 {
        std::fs::create_dir_all(dir).unwrap();
        let stderr = log.with_extension("stderr");
        let mut child = Command::new(python)
            .arg(repo_root().join("scripts/check/fake_c2.py"))
            .arg(dir)
            .arg("0")
            .arg("--log")
            .arg(log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(std::fs::File::create(&stderr).unwrap()))
            .spawn()
            .expect("start scripts/check/fake_c2.py");
        // Its first line, `listening PORT`, comes once it accepts connections.
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut server = FakeC2 {
            child: Some(child),
            port: 0,
            log: log.to_path_buf(),
            stderr,
        };
        let line = rx.recv_timeout(Duration::from_secs(20)).unwrap_or_default();
        server.port = line
            .trim()
            .strip_prefix("listening ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| {
                panic!(
                    "fake_c2.py did not say its port (said {line:?}); stderr:\n{}",
                    std::fs::read_to_string(&server.stderr).unwrap_or_default()
                )
            });
        server
    }

    /// The requests it answered, one line each (`METHOD PATH RANGE`).
    fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for FakeC2 {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Writes into argv[1] (server A's folder): ops/a.b2nd (float64 200x300)
/// and ops/b.b2nd (int32, same shape), in grids unlike the expression's;
/// numpy's bytes of `a * 2 + b` into argv[4]; and the saved expression
/// `a * 2 + b` (python-blosc2's own save()) four times, its operands then
/// rewritten in the `b2o` vlmeta as c2array references: good.b2nd (both on
/// server A, argv[2]), other.b2nd (a on server B, argv[3]), outside.b2nd
/// (a at @personal/a.b2nd on A), nourl.b2nd (a with no urlbase). Each
/// rewritten recipe is read back.
const GENERATE: &str = r#"
import os, sys
import numpy as np
import blosc2
from blosc2 import blosc2_ext

d, port_a, port_b, expected = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
os.makedirs(os.path.join(d, "ops"), exist_ok=True)
rng = np.random.default_rng(20261126)
a = rng.normal(size=(200, 300))
b = rng.integers(-100000, 100000, size=(200, 300), dtype=np.int32)
A = blosc2.asarray(a, urlpath=os.path.join(d, "ops/a.b2nd"), mode="w", chunks=(64, 128), blocks=(16, 32))
B = blosc2.asarray(b, urlpath=os.path.join(d, "ops/b.b2nd"), mode="w", chunks=(50, 300), blocks=(10, 100))
want = a * 2 + b
assert want.dtype == np.float64, want.dtype
e = A * 2 + B
local = e[:]
assert local.dtype == np.float64 and np.array_equal(local, want), "python-blosc2 disagrees with numpy"
with open(expected, "wb") as f:
    f.write(want.tobytes())

url_a, url_b = f"http://127.0.0.1:{port_a}/", f"http://127.0.0.1:{port_b}/"
def c2(path, urlbase):
    return {"kind": "c2array", "version": 1, "path": path, "urlbase": urlbase}
good = {"a": c2("@public/ops/a.b2nd", url_a), "b": c2("@public/ops/b.b2nd", url_a)}
cases = {
    "good": good,
    "other": dict(good, a=c2("@public/ops/a.b2nd", url_b)),
    "outside": dict(good, a=c2("@personal/a.b2nd", url_a)),
    "nourl": dict(good, a=c2("@public/ops/a.b2nd", None)),
}
for name, refs in cases.items():
    path = os.path.join(d, name + ".b2nd")
    e.save(urlpath=path)
    # Opened raw: blosc2.open() would resolve (or refuse) the recipe.
    carrier = blosc2_ext.open(path, "a", 0)
    assert tuple(carrier.chunks) not in [(64, 128), (50, 300)], carrier.chunks
    payload = carrier.schunk.vlmeta["b2o"]
    assert payload["kind"] == "lazyexpr" and payload["version"] == 1, payload
    by_file = {}
    for key, ref in payload["operands"].items():
        assert ref["kind"] == "urlpath", ref
        by_file[os.path.basename(ref["urlpath"])] = key
    assert sorted(by_file) == ["a.b2nd", "b.b2nd"], payload
    payload["operands"] = {by_file["a.b2nd"]: refs["a"], by_file["b.b2nd"]: refs["b"]}
    carrier.schunk.vlmeta["b2o"] = payload
    del carrier
    reread = blosc2_ext.open(path, "r", 0)
    assert reread.schunk.meta["b2o"]["kind"] == "lazyexpr", reread.schunk.meta["b2o"]
    back = reread.schunk.vlmeta["b2o"]
    assert back == payload, (back, payload)
    print(name, back)
"#;

fn read_json(path: &Path) -> serde_json::Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()))
}

/// good.b2nd (both operands on the mounted server, in the mounted folder)
/// reads numpy's bytes of `a * 2 + b`; other.b2nd, outside.b2nd and
/// nourl.b2nd are not computed, say why, have no `data`; server B is never
/// asked, and server A is asked for nothing outside `@public`.
#[test]
fn c2array_operands_are_read_from_the_mounted_server_and_folder_only() {
    let test = "c2array_operands_are_read_from_the_mounted_server_and_folder_only";
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let Some(python) = venv_python(test) else {
        return;
    };
    let t0 = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let (dir_a, dir_b) = (tmp.path().join("a"), tmp.path().join("b"));
    let server_a = FakeC2::start(&python, &dir_a, &tmp.path().join("a.log"));
    let server_b = FakeC2::start(&python, &dir_b, &tmp.path().join("b.log"));
    let expected_path = tmp.path().join("expected.bin");
    let out = Command::new(&python)
        .arg("-c")
        .arg(GENERATE)
        .arg(&dir_a)
        .arg(server_a.port.to_string())
        .arg(server_b.port.to_string())
        .arg(&expected_path)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "generating the arrays and recipes failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("recipes written:\n{}", String::from_utf8_lossy(&out.stdout));
    // Server B holds the same operand, so a wrong request to it would be answered (and logged).
    std::fs::create_dir_all(dir_b.join("ops")).unwrap();
    std::fs::copy(dir_a.join("ops/a.b2nd"), dir_b.join("ops/a.b2nd")).unwrap();
    let expected = std::fs::read(&expected_path).unwrap();
    assert_eq!(expected.len(), 200 * 300 * 8);

    let url = format!("c2+http://127.0.0.1:{}/@public", server_a.port);
    let mount = Mount::start(Path::new(&url), &[]);
    let root = mount.path();
    let context = |what: &str| {
        format!(
            "{what}\nserver A requests:\n{}\ndaemon log:\n{}",
            server_a.requests().join("\n"),
            mount.log_text()
        )
    };

    // The expression over operands of the mounted server: exact bytes.
    let good = root.join("good.b2nd");
    let meta = read_json(&good.join("meta.json"));
    let values = &meta["values"];
    assert_eq!(
        values["computed"],
        true,
        "{}",
        context(&format!("good.b2nd meta.json values: {values}"))
    );
    assert_eq!(
        meta["shape"],
        serde_json::json!([200, 300]),
        "good.b2nd meta.json shape"
    );
    assert_eq!(
        meta["itemsize"], 8,
        "good.b2nd meta.json itemsize (float64)"
    );
    let data = std::fs::read(good.join("data"))
        .unwrap_or_else(|e| panic!("{}", context(&format!("good.b2nd/data: {e}"))));
    if data != expected {
        let first = data.iter().zip(&expected).position(|(x, y)| x != y);
        panic!("{}", context(&format!("good.b2nd/data: WRONG BYTES ({} bytes, {} expected; first difference at byte {first:?})", data.len(), expected.len())));
    }

    // Operands that are not read: why, and no data file.
    let b_url = format!("127.0.0.1:{}", server_b.port);
    let cases: [(&str, &str, &str); 3] = [
        ("other.b2nd", b_url.as_str(), "the other server"),
        (
            "outside.b2nd",
            "outside the mounted folder",
            "outside the mounted folder",
        ),
        (
            "nourl.b2nd",
            "not on the mounted server",
            "not on the mounted server",
        ),
    ];
    for (name, must_say, meaning) in cases {
        let folder = root.join(name);
        let meta = read_json(&folder.join("meta.json"));
        let values = &meta["values"];
        assert_eq!(
            values["computed"],
            false,
            "{}",
            context(&format!("{name}: meta.json values: {values}"))
        );
        let why = values["why_not_computed"].as_str().unwrap_or_else(|| {
            panic!(
                "{}",
                context(&format!("{name}: no why_not_computed text: {values}"))
            )
        });
        assert!(
            why.contains(must_say),
            "{name}: why_not_computed should mention {meaning} ({must_say:?}): {why:?}"
        );
        eprintln!("{name}: {why}");
        match std::fs::metadata(folder.join("data")) {
            Err(e) if e.raw_os_error() == Some(ENOENT) => {}
            other => panic!(
                "{}",
                context(&format!("{name}/data: {other:?}, expected ENOENT"))
            ),
        }
        let listed: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            !listed.iter().any(|n| n == "data"),
            "{name} lists a data file: {listed:?}"
        );
    }
    // other.b2nd is refused by the rule (another server), not by a failed request there.
    let other = read_json(&root.join("other.b2nd/meta.json"));
    assert!(
        other["values"]["why_not_computed"]
            .as_str()
            .unwrap_or_default()
            .contains("not on the mounted server"),
        "{}",
        other["values"]
    );

    drop(mount);
    let b_requests = server_b.requests();
    assert!(
        b_requests.is_empty(),
        "server B was asked {} times:\n{}",
        b_requests.len(),
        b_requests.join("\n")
    );
    let a_requests = server_a.requests();
    assert!(
        a_requests.iter().any(|l| l.contains("/ops/a.b2nd")),
        "server A was never asked for ops/a.b2nd:\n{}",
        a_requests.join("\n")
    );
    let elsewhere: Vec<&String> = a_requests
        .iter()
        .filter(|l| l.contains("personal"))
        .collect();
    assert!(
        elsewhere.is_empty(),
        "server A was asked outside @public: {elsewhere:?}"
    );
    eprintln!(
        "server A: {} requests, server B: none; {:.1} s\n{}",
        a_requests.len(),
        t0.elapsed().as_secs_f64(),
        a_requests.join("\n")
    );
}
