//! The command line as a user meets it: help words for the arguments,
//! completion scripts and the man page printed by the binary itself.

mod common;

use std::process::Command;

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
    // The suites run the default build (remote, zstd-c); test.sh checks the
    // local-only binary's own lines.
    let long = run(&["--version"]);
    assert_eq!(
        long,
        format!(
            "blosc2fs {}\nremote sources: yes\nzstd decoder: libzstd (C)\n",
            env!("CARGO_PKG_VERSION")
        )
    );
}
