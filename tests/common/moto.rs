//! A moto S3 server for the tests that mount S3 prefixes: one way to start
//! it (a free port, waited for, killed when dropped), to reach it (the
//! environment a blosc2fs child needs) and to fill its buckets (boto3 from
//! the oracle's virtualenv).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::oracle_python;

/// A moto server on 127.0.0.1, killed when dropped.
pub struct Moto {
    child: Child,
    /// Its port.
    pub port: u16,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The boto3 client every upload script starts with (argv[1] the port).
const CLIENT: &str = r#"
import os, sys, boto3
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{sys.argv[1]}", aws_access_key_id="testing",
                  aws_secret_access_key="testing", region_name="us-east-1")
def bucket(name):
    if name not in [b["Name"] for b in s3.list_buckets()["Buckets"]]:
        s3.create_bucket(Bucket=name)
"#;

impl Moto {
    /// A started server, or `None` (with a SKIP line naming `test`) when
    /// the oracle's python cannot import moto and boto3.
    pub fn start(test: &str) -> Option<Moto> {
        let python = oracle_python();
        let imports = Command::new(&python)
            .args(["-c", "import moto, boto3"])
            .stderr(Stdio::null())
            .status();
        if !imports.is_ok_and(|s| s.success()) {
            eprintln!(
                "SKIP {test}: moto or boto3 not importable from {} (run scripts/setup_venv.sh)",
                python.display()
            );
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(python.with_file_name("moto_server"))
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut moto = Moto { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "moto did not start");
            if let Ok(Some(status)) = moto.child.try_wait() {
                panic!("moto exited early: {status}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(moto)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The environment that lets a blosc2fs child reach this server.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", "testing".into()),
            ("AWS_SECRET_ACCESS_KEY", "testing".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ENDPOINT_URL", self.endpoint()),
        ]
    }

    /// Run `body` after [`CLIENT`] with argv `[port, args...]`; panics when
    /// it fails.
    pub fn run(&self, body: &str, args: &[&str]) {
        let port = self.port.to_string();
        let status = Command::new(oracle_python())
            .arg("-c")
            .arg(format!("{CLIENT}{body}"))
            .arg(&port)
            .args(args)
            .status()
            .unwrap();
        assert!(status.success(), "moto script failed:\n{body}");
    }

    /// Upload `files` (local path, key) to `bucket` (made if missing).
    pub fn upload(&self, bucket: &str, files: &[(PathBuf, String)]) {
        let mut args = vec![bucket.to_string()];
        for (path, key) in files {
            args.push(path.display().to_string());
            args.push(key.clone());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.run(
            r#"
bucket(sys.argv[2])
for path, key in zip(sys.argv[3::2], sys.argv[4::2]):
    s3.upload_file(path, sys.argv[2], key)
"#,
            &args,
        );
    }

    /// Upload every file under `dir` to `bucket` (made if missing), keyed
    /// by its path under `dir`, but those whose key starts with a prefix
    /// of `skip`.
    pub fn upload_dir(&self, bucket: &str, dir: &Path, skip: &[&str]) {
        let mut args = vec![bucket, dir.to_str().unwrap()];
        args.extend_from_slice(skip);
        self.run(
            r#"
name, root, skip = sys.argv[2], sys.argv[3], tuple(sys.argv[4:])
bucket(name)
for base, _, files in os.walk(root):
    for f in files:
        key = os.path.relpath(os.path.join(base, f), root)
        if not (skip and key.startswith(skip)):
            s3.upload_file(os.path.join(base, f), name, key)
"#,
            &args,
        );
    }
}

/// `env` as the borrowed pairs a mount's environment is given as.
pub fn env_refs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}
