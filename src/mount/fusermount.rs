//! Mounting as a user who is not root: the `fusermount3` handshake.
//!
//! Only root may call mount(2) for FUSE, and `/dev/fuse` may be readable by
//! root alone. The setuid helper `fusermount3` (package fuse3) does both for
//! a user: it is run with the mount options and the mountpoint, and with
//! `_FUSE_COMMFD` naming one end of a socket pair; it opens `/dev/fuse`,
//! mounts, and sends the opened descriptor back over that socket
//! (`SCM_RIGHTS`). The session then serves that descriptor. fuser 0.18 falls
//! back to this helper only when mount(2) says EPERM, not when `/dev/fuse`
//! cannot be opened, so the handshake is done here, the same way for every
//! user mount. Unmounting is `fusermount3 -u`.

use std::io::IoSliceMut;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};

/// The helpers looked for, in order (`fusermount` is fuse2's, same protocol).
const HELPERS: [&str; 2] = ["fusermount3", "fusermount"];

/// Where to look when `PATH` is not set.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

/// The mount helper found on `PATH` (`fusermount3`, else `fusermount`).
pub fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    HELPERS.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// Escape a value for the helper's `-o` list (`,` separates options, `\`
/// escapes).
pub fn escape_option_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if c == ',' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Mount at `mountpoint` through `helper` with the comma-separated
/// `options`; returns the opened `/dev/fuse` descriptor of the new mount.
/// The error carries the helper's own message.
pub fn mount(helper: &Path, mountpoint: &Path, options: &str) -> Result<OwnedFd, String> {
    let name = helper
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (ours, theirs) = UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    // The helper's end is its standard input (descriptor 0), so no descriptor
    // has to survive exec by other means.
    let child = {
        let mut command = Command::new(helper);
        command
            .arg("-o")
            .arg(options)
            .arg("--")
            .arg(mountpoint)
            .env("_FUSE_COMMFD", "0")
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", helper.display()))?
        // `command` (holding our copy of the helper's end) is dropped here, so
        // the receive below sees end-of-file when the helper exits early.
    };
    let received = receive_fd(&ours);
    drop(ours);
    let output = child
        .wait_with_output()
        .map_err(|e| format!("{name}: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
    match received {
        Ok(Some(fd)) => {
            if !stderr.is_empty() {
                log::info!("{name}: {stderr}");
            }
            Ok(fd)
        }
        Ok(None) if !stderr.is_empty() => Err(format!("{name} failed: {stderr}")),
        Ok(None) => Err(format!(
            "{name} sent no /dev/fuse descriptor ({})",
            output.status
        )),
        Err(e) => Err(format!("{name}: receiving the /dev/fuse descriptor: {e}")),
    }
}

/// One descriptor sent over `socket` with `SCM_RIGHTS`; `None` when the
/// other end closed without sending one.
fn receive_fd(socket: &UnixStream) -> std::io::Result<Option<OwnedFd>> {
    let mut byte = [0u8; 1];
    let mut iov = [IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([std::os::fd::RawFd; 4]);
    let msg = loop {
        match recvmsg::<()>(
            socket.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Ok(msg) => break msg,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
    };
    let mut found = None;
    for cmsg in msg.cmsgs().map_err(std::io::Error::from)? {
        if let ControlMessageOwned::ScmRights(fds) = cmsg {
            for fd in fds {
                // SAFETY: the kernel just installed `fd` in this process for
                // us (SCM_RIGHTS); nothing else owns it.
                let owned = unsafe { OwnedFd::from_raw_fd(fd) };
                if found.is_none() {
                    found = Some(owned);
                }
            }
        }
    }
    Ok(found)
}

/// Unmount `mountpoint` through `helper` (`-z`: lazily, so open files do not
/// block it).
pub fn unmount(helper: &Path, mountpoint: &Path, lazy: bool) -> Result<(), String> {
    let mut command = Command::new(helper);
    command.arg("-u");
    if lazy {
        command.arg("-z");
    }
    let output = command
        .arg("--")
        .arg(mountpoint)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", helper.display()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} -u {} failed: {}",
            helper.display(),
            mountpoint.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_values_escape_commas_and_backslashes() {
        assert_eq!(escape_option_value("/data/a,b\\c"), "/data/a\\,b\\\\c");
        assert_eq!(escape_option_value("/plain"), "/plain");
    }

    #[test]
    fn a_helper_that_sends_nothing_gives_its_message() {
        let err = mount(Path::new("/bin/sh"), Path::new("/nonexistent"), "ro").unwrap_err();
        assert!(err.starts_with("sh failed: "), "{err}");
    }
}
