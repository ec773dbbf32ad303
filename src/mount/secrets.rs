//! Secrets the mount process stops showing once it has read them.
//!
//! `blosc2fs mount` forks without exec, so the daemon keeps the argument
//! and environment blocks the kernel laid out when `blosc2fs` was started.
//! `/proc/PID/cmdline` (what `ps` prints, readable by every user) and
//! `/proc/PID/environ` show those blocks as they are in memory
//! (`arg_start..arg_end` and `env_start..env_end` of `/proc/PID/stat`);
//! `unsetenv` only drops a pointer and changes neither. So, once the
//! filesystem is built (the Caterva2 session holds its login, the object
//! store clients their keys, a signed URL's query lives in the client),
//! [`scrub`] overwrites the secrets in place with `*` and removes the secret
//! variables from the environment, which children (`fusermount3`) inherit.
//!
//! One rule, for these and for any future secret:
//!
//! - **Environment:** the value of every variable named in
//!   [`SECRET_VARIABLES`]. Only variables that are read once, while the
//!   filesystem is built, may be listed: `src/source/remote/store.rs` hands
//!   the `AWS_*`, `GOOGLE_*` and `AZURE_*` variables to `object_store`'s
//!   builders as settings when it connects, and `object_store` keeps them
//!   in memory from then on. Azure's `IDENTITY_HEADER` is not listed:
//!   `object_store` reads it from the environment at every managed-identity
//!   token request.
//! - **Command line:** in every argument that is a remote URL
//!   ([`is_remote_url`]), its user information (`user:pass@`) and its
//!   query (presigned S3 and Azure SAS signatures) with what follows it.
//!
//! Each secret byte becomes `*`; lengths and separators stay, so `ps`
//! still shows which URL is mounted (`https://host/key.b2nd?*****`).
//!
//! Why in place rather than a re-exec with a clean command line and the
//! secrets over a pipe: the stores read their credentials from the
//! environment, and that would have to change for every store; in place,
//! nothing changes for them. The blocks are rewritten through
//! `/proc/self/mem` ([`mask_in_place`], tested on a child process), the
//! kernel's own way for a process to write its memory, so no `unsafe`
//! reference into memory other pointers may reach is ever made.

use std::ops::Range;

use crate::source::urls::is_remote_url;

/// Environment variables holding a secret, masked and removed by [`scrub`]:
/// the Caterva2 password and the cloud stores' keys, tokens and secrets
/// (each an `object_store` setting `store.rs` reads only when connecting).
pub const SECRET_VARIABLES: &[&str] = &[
    "CATERVA2_PASSWORD",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_TOKEN",
    "AWS_SSE_CUSTOMER_KEY_BASE64",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_ACCESS_KEY",
    "AZURE_STORAGE_MASTER_KEY",
    "AZURE_STORAGE_SAS_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_STORAGE_TOKEN",
    "AZURE_STORAGE_CLIENT_SECRET",
    "AZURE_CLIENT_SECRET",
    "AZURE_FABRIC_SESSION_TOKEN",
    "AZURE_STORAGE_ENCRYPTION_KEY",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
    "GOOGLE_BEARER_TOKEN",
];

/// What every secret byte becomes.
const MASK: u8 = b'*';

/// Why the blocks could not be masked (the variables are removed anyway).
#[derive(Debug, thiserror::Error)]
pub enum ScrubError {
    /// `/proc/self/stat` or `/proc/self/mem` could not be read or written
    /// (no `/proc`: nobody sees the blocks either).
    #[error("cannot hide secrets from ps and /proc (through /proc/self/stat and mem): {0}")]
    Stat(#[from] std::io::Error),
    /// `/proc/self/stat` has no block bounds (a kernel before 3.5).
    #[error("/proc/self/stat gives no argument and environment blocks; secrets may stay visible in /proc")]
    NoBlocks,
}

/// How many secrets [`scrub`] masked.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Scrubbed {
    /// Command-line arguments (URLs) with a part masked.
    pub arguments: usize,
    /// Environment entries whose value was masked.
    pub variables: usize,
}

/// Remove the secret variables from the environment, then mask every
/// secret in this process's argument and environment blocks. Call it once
/// everything secret has been read.
pub fn scrub() -> Result<Scrubbed, ScrubError> {
    // First out of `environ`, so no later getenv reaches the bytes masked
    // below. Threads are running by now: std's own lock guards Rust's
    // readers, and glibc's unsetenv only moves pointers down the array,
    // never freeing, so a concurrent C getenv still sees a valid array.
    for name in SECRET_VARIABLES {
        if std::env::var_os(name).is_some() {
            std::env::remove_var(name);
        }
    }
    let blocks =
        Blocks::parse(&std::fs::read_to_string("/proc/self/stat")?).ok_or(ScrubError::NoBlocks)?;
    Ok(Scrubbed {
        arguments: mask_in_place(blocks.arguments, mask_argument)?,
        variables: mask_in_place(blocks.environment, mask_variable)?,
    })
}

/// The argument and environment blocks of a process, as its
/// `/proc/PID/stat` gives them (fields 48 to 51, Linux 3.5 and later).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Blocks {
    arguments: Range<usize>,
    environment: Range<usize>,
}

impl Blocks {
    /// The blocks named by `stat`, the text of `/proc/PID/stat`; `None` when
    /// it has no such fields or they are zero (another process's, unreadable).
    fn parse(stat: &str) -> Option<Blocks> {
        // The command name (field 2) may hold spaces and parentheses: the
        // fields are counted from the last `)`, whose next field is field 3.
        let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
        let field = |n: usize| fields.get(n - 3)?.parse::<usize>().ok();
        let range = |start: usize, end: usize| -> Option<Range<usize>> {
            let (start, end) = (field(start)?, field(end)?);
            (start != 0 && start <= end).then_some(start..end)
        };
        Some(Blocks {
            arguments: range(48, 49)?,
            environment: range(50, 51)?,
        })
    }
}

/// Apply `mask` to each NUL-separated string of the block at `range` of
/// this process's memory (its argument or environment block, as
/// `/proc/self/stat` gives it); how many strings it changed. The block is
/// read and the changed bytes written back through `/proc/self/mem`. Bytes
/// are only rewritten, never a NUL, so every C string in the block keeps
/// its length and terminator; [`scrub`] has removed the secret variables
/// from `environ` first, so no `getenv` hands out what is masked here.
fn mask_in_place(range: Range<usize>, mask: fn(&mut [u8]) -> bool) -> std::io::Result<usize> {
    use std::io::{Read, Seek, SeekFrom, Write};
    if range.is_empty() {
        return Ok(0);
    }
    let mut memory = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/proc/self/mem")?;
    let mut block = vec![0u8; range.len()];
    memory.seek(SeekFrom::Start(range.start as u64))?;
    memory.read_exact(&mut block)?;
    let before = block.clone();
    let changed = mask_block(&mut block, mask);
    if changed > 0 {
        // Only the span that changed is written back.
        let first = before
            .iter()
            .zip(&block)
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let last = before
            .iter()
            .zip(&block)
            .rposition(|(a, b)| a != b)
            .unwrap_or(0);
        memory.seek(SeekFrom::Start((range.start + first) as u64))?;
        memory.write_all(&block[first..=last])?;
    }
    Ok(changed)
}

/// Apply `mask` to each NUL-separated string of `block`; how many it changed.
fn mask_block(block: &mut [u8], mask: fn(&mut [u8]) -> bool) -> usize {
    block
        .split_mut(|&b| b == 0)
        .map(mask)
        .filter(|&changed| changed)
        .count()
}

/// Mask the secrets of one command-line argument: when it is a remote URL,
/// its user information and its query with what follows. Whether it changed.
pub fn mask_argument(argument: &mut [u8]) -> bool {
    let Ok(text) = std::str::from_utf8(argument) else {
        return false;
    };
    if !is_remote_url(text) {
        return false;
    }
    let secrets = url_secrets(text);
    let mut changed = false;
    for range in secrets {
        for byte in &mut argument[range] {
            changed |= *byte != MASK;
            *byte = MASK;
        }
    }
    changed
}

/// The byte ranges of `url` that are secret: the user information (before
/// the `@` of the authority) and everything after the query's `?`.
fn url_secrets(url: &str) -> Vec<Range<usize>> {
    let Some(sep) = url.find("://") else {
        return Vec::new();
    };
    let rest_at = sep + 3;
    let rest = &url[rest_at..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let mut out = Vec::new();
    if let Some(at) = rest[..authority_len].rfind('@') {
        out.push(rest_at..rest_at + at);
    }
    let tail_at = rest_at + authority_len;
    let tail = &url[tail_at..];
    let path_len = tail.find(['?', '#']).unwrap_or(tail.len());
    if tail[path_len..].starts_with('?') {
        out.push(tail_at + path_len + 1..url.len());
    }
    out
}

/// Mask the value of one environment entry (`NAME=value`) when `NAME` is
/// one of [`SECRET_VARIABLES`]. Whether it changed.
pub fn mask_variable(entry: &mut [u8]) -> bool {
    let Some(eq) = entry.iter().position(|&b| b == b'=') else {
        return false;
    };
    if !SECRET_VARIABLES
        .iter()
        .any(|v| v.as_bytes() == &entry[..eq])
    {
        return false;
    }
    let value = &mut entry[eq + 1..];
    let changed = value.iter().any(|&b| b != MASK);
    value.fill(MASK);
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked_argument(text: &str) -> (String, bool) {
        let mut bytes = text.as_bytes().to_vec();
        let changed = mask_argument(&mut bytes);
        (String::from_utf8(bytes).unwrap(), changed)
    }

    #[test]
    fn a_url_argument_loses_its_user_information_and_query() {
        let signed = "https://bucket.s3.amazonaws.com/runs/t.b2nd?X-Amz-Credential=AKIA&X-Amz-Signature=0badc0de";
        let (shown, changed) = masked_argument(signed);
        assert!(changed);
        assert_eq!(
            shown,
            format!(
                "https://bucket.s3.amazonaws.com/runs/t.b2nd?{}",
                "*".repeat("X-Amz-Credential=AKIA&X-Amz-Signature=0badc0de".len())
            )
        );
        assert_eq!(
            masked_argument("http://alice:s3cret@127.0.0.1:8/a.b2nd").0,
            "http://************@127.0.0.1:8/a.b2nd"
        );
        assert_eq!(
            masked_argument("https://u:p@acct.blob.core.windows.net/c/k?sv=1&sig=zz#f").0,
            format!(
                "https://***@acct.blob.core.windows.net/c/k?{}",
                "*".repeat("sv=1&sig=zz#f".len())
            )
        );
        // A `?` inside the fragment is no query; a `@` in the path no user.
        assert_eq!(
            masked_argument("https://h/a@b#x?y"),
            ("https://h/a@b#x?y".to_string(), false)
        );
        // Masking twice changes nothing more.
        assert_eq!(masked_argument(&shown), (shown.clone(), false));
    }

    #[test]
    fn other_arguments_are_left_alone() {
        for text in [
            "/data/arrays?x=1",
            "mount",
            "-o",
            "ro,allow_other,cache_size=1G",
            "s3://bucket/prefix/",
            "c2+https://cat2.example.org/@public/dir",
            "ftp://user:pw@host/file?x",
            "",
        ] {
            assert_eq!(masked_argument(text), (text.to_string(), false), "{text}");
        }
        let mut latin1 = b"https://h/k?\xff".to_vec();
        assert!(
            !mask_argument(&mut latin1),
            "not UTF-8: not an argument we took"
        );
    }

    #[test]
    fn only_the_values_of_secret_variables_are_masked() {
        let mut block = b"HOME=/root\0CATERVA2_USERNAME=alice\0CATERVA2_PASSWORD=pw=1\0AWS_SECRET_ACCESS_KEY=abc\0AWS_ACCESS_KEY_ID=AKIA\0XCATERVA2_PASSWORD=keep\0CATERVA2_PASSWORD=\0NOEQUALS\0".to_vec();
        assert_eq!(mask_block(&mut block, mask_variable), 2);
        assert_eq!(
            &block[..],
            b"HOME=/root\0CATERVA2_USERNAME=alice\0CATERVA2_PASSWORD=****\0AWS_SECRET_ACCESS_KEY=***\0AWS_ACCESS_KEY_ID=AKIA\0XCATERVA2_PASSWORD=keep\0CATERVA2_PASSWORD=\0NOEQUALS\0"
        );
    }

    #[test]
    fn an_argument_block_keeps_its_shape() {
        let mut block = b"blosc2fs\0mount\0https://h/k.b2nd?sig=1\0/mnt/x\0".to_vec();
        let len = block.len();
        assert_eq!(mask_block(&mut block, mask_argument), 1);
        assert_eq!(
            &block[..],
            b"blosc2fs\0mount\0https://h/k.b2nd?*****\0/mnt/x\0"
        );
        assert_eq!(block.len(), len);
    }

    #[test]
    fn the_blocks_are_fields_48_to_51_of_stat() {
        // A command name with spaces and a parenthesis, then fields 3 to 52.
        let mut stat = "4242 (a) b (c) S".to_string();
        for n in 4..=52 {
            stat.push_str(&format!(" {}", n * 10));
        }
        assert_eq!(
            Blocks::parse(&stat),
            Some(Blocks {
                arguments: 480..490,
                environment: 500..510
            })
        );
        assert_eq!(Blocks::parse("1 (x) S 1 2 3"), None, "an old kernel");
        let zeros = stat.replace(" 480 490 500 510", " 0 0 0 0");
        assert_eq!(Blocks::parse(&zeros), None, "another process's, unreadable");
    }

    /// Every cloud variable listed is a real `object_store` setting of its
    /// store (so store.rs hands it to the builder when connecting).
    #[cfg(feature = "remote")]
    #[test]
    fn the_cloud_variables_are_store_settings() {
        use object_store::aws::AmazonS3ConfigKey;
        use object_store::azure::AzureConfigKey;
        use object_store::gcp::GoogleConfigKey;
        for name in SECRET_VARIABLES {
            let key = name.to_ascii_lowercase();
            let known = match name.split('_').next() {
                Some("AWS") => key.parse::<AmazonS3ConfigKey>().is_ok(),
                Some("AZURE") => key.parse::<AzureConfigKey>().is_ok(),
                Some("GOOGLE") => key.parse::<GoogleConfigKey>().is_ok(),
                _ => *name == "CATERVA2_PASSWORD",
            };
            assert!(known, "{name} is read by no store");
        }
    }

    /// The variable that makes the test below its own child.
    const CHILD: &str = "BLOSC2FS_SECRETS_CHILD";

    /// [`scrub`] on a real process: this test runs itself again with a
    /// signed URL among its arguments and a password in its environment,
    /// and the child checks its own `/proc/self/cmdline` and `environ`.
    #[test]
    fn scrubbing_a_process_hides_its_secrets_from_proc() {
        const NAME: &str = "mount::secrets::tests::scrubbing_a_process_hides_its_secrets_from_proc";
        const URL: &str = "https://h:1/k.b2nd?X-Amz-Signature=feedfacecafe";
        const PASSWORD: &str = "pw-9d2e-hunter2";
        if std::env::var_os(CHILD).is_some() {
            let read = |file: &str| std::fs::read(format!("/proc/self/{file}")).unwrap();
            let (cmdline, environ) = (read("cmdline"), read("environ"));
            let text = |b: &[u8]| String::from_utf8_lossy(b).replace('\0', " ");
            assert!(text(&cmdline).contains(URL) && text(&environ).contains(PASSWORD));
            let done = scrub().unwrap();
            assert_eq!(
                done,
                Scrubbed {
                    arguments: 1,
                    variables: 1
                }
            );
            let (after_cmdline, after_environ) = (read("cmdline"), read("environ"));
            assert_eq!(after_cmdline.len(), cmdline.len());
            let shown = text(&after_cmdline);
            let query = URL.split_once('?').unwrap().1;
            let masked = format!("https://h:1/k.b2nd?{}", "*".repeat(query.len()));
            assert!(shown.contains(&masked), "{shown}");
            assert!(shown.contains(NAME), "{shown}");
            let environ = text(&after_environ);
            assert!(!environ.contains(PASSWORD), "{environ}");
            let masked = format!("CATERVA2_PASSWORD={}", "*".repeat(PASSWORD.len()));
            assert!(environ.contains(&masked), "{environ}");
            assert!(environ.contains("CATERVA2_USERNAME=alice"), "{environ}");
            assert_eq!(std::env::var_os("CATERVA2_PASSWORD"), None);
            assert_eq!(std::env::var("CATERVA2_USERNAME").unwrap(), "alice");
            return;
        }
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        for name in SECRET_VARIABLES {
            child.env_remove(name);
        }
        let out = child
            .args([NAME, "--exact", "--test-threads=1", URL])
            .env(CHILD, "1")
            .env("CATERVA2_USERNAME", "alice")
            .env("CATERVA2_PASSWORD", PASSWORD)
            .output()
            .unwrap();
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && report.contains("1 passed"),
            "{report}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
