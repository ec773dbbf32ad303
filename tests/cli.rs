//! The command line as a user meets it: help words for the arguments,
//! completion scripts and the man page printed by the binary itself, and
//! a quiet end when the reader of its output leaves early.

mod common;

use std::process::{Command, Stdio};

use common::fixtures_dir;
use common::mount::binary;

fn run(args: &[&str]) -> String {
    let out = Command::new(binary()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "blosc2fs {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn mount_help_explains_source_and_mountpoint() {
    let help = run(&["mount", "--help"]);
    assert!(help.contains("<SOURCE>      A Blosc2 file"), "{help}");
    assert!(help.contains("<MOUNTPOINT>  An empty directory"), "{help}");
}

#[test]
fn completions_and_man_page_come_from_the_binary() {
    for shell in ["bash", "zsh", "fish"] {
        let script = run(&["completions", shell]);
        assert!(
            script.len() > 2000 && script.contains("unmount") && script.contains("completions"),
            "{shell}"
        );
    }
    let page = run(&["man"]);
    assert!(
        page.contains("\n.TH blosc2fs 1 ") && page.contains("blosc2fs\\-mount(1)"),
        "{page}"
    );
    let page = run(&["man", "mount"]);
    assert!(
        page.contains("\n.TH blosc2fs-mount 1 ") && page.contains("allow_other"),
        "{page}"
    );
    let out = Command::new(binary())
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn long_version_names_what_the_build_has() {
    let short = run(&["-V"]);
    assert_eq!(short, format!("blosc2fs {}\n", env!("CARGO_PKG_VERSION")));
    // The suites run the default build (remote, zstd-c, openzl-c); test.sh checks the
    // local-only binary's own lines.
    let long = run(&["--version"]);
    let openzl = blosc2fs::format::codec::openzl::backend();
    assert!(
        openzl.starts_with("OpenZL ") && openzl.contains("(C), frame formats "),
        "{openzl}"
    );
    assert_eq!(
        long,
        format!(
            "blosc2fs {}\nremote sources: yes\nzstd decoder: libzstd (C)\nopenzl decoder: {}\n",
            env!("CARGO_PKG_VERSION"),
            blosc2fs::format::codec::openzl::backend()
        )
    );
}

/// A reader that stops early (`blosc2fs info FILE | head -c 0`) is no
/// error: each command that writes to stdout ends quietly, with exit 0 and
/// no panic (`info` once died with "failed printing to stdout: Broken
/// pipe", exit 101). The pipe is closed as soon as the child starts, so its
/// first write finds no reader.
#[test]
fn a_reader_closing_the_pipe_early_ends_the_command_quietly() {
    let array = fixtures_dir().join("ndcell2_4d_f4.b2nd");
    let array = array.to_str().unwrap();
    let commands: [&[&str]; 4] = [
        &["info", array],
        &["cat", array],
        &["completions", "bash"],
        &["man"],
    ];
    for args in commands {
        let mut child = Command::new(binary())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && !stderr.contains("panicked"),
            "blosc2fs {args:?} with the pipe closed: {:?}, {stderr}",
            out.status
        );
    }
}
