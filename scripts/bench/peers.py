"""The peers of the mount and tree scenarios: squashfuse_ll over squashfs images of the same bytes.

One job: make the peer comparable. squashfuse_ll is the mature C filesystem for compressed
read-only images; `peer_tools` finds it and mksquashfs (with their versions),
`ensure_peer_images` builds (or reuses) squashfs images of the corpus's raw.bin with the block
size of the blosc2 array each is paired with, and `PeerMount` runs `squashfuse_ll -f IMG MNT` the
way benchlib runs blosc2fs: in the foreground, waited for, always unmounted.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import time
from typing import Any

from benchlib import MIB, ForegroundDaemon, Json, cleanup_mountpoint, unmount_fuse

# squashfuse_ll on squashfs images of raw.bin, each paired with the array whose block size it
# takes and whose cold dd it stands beside.
PEER_OF = {"zstd": "zstd", "lz4": "lz4", "clevel0": "none"}  # array -> image kind
PEER_OF_ARRAY = {kind: array for array, kind in PEER_OF.items()}
PEER_KINDS = ("zstd", "lz4", "none")
PEER_COMP = {
    "zstd": ["-comp", "zstd", "-Xcompression-level", "3"],
    "lz4": ["-comp", "lz4"],
    "none": ["-noI", "-noD", "-noF", "-noX"],
}
PEER_INSTALL = "apt-get install -y squashfuse squashfs-tools"
PEER_IMAGES_VERSION = 1


def peer_tools() -> tuple[Json | None, str | None]:
    """squashfuse_ll and mksquashfs with their versions, or (None, why they cannot be used)."""
    found = {name: shutil.which(name) for name in ("squashfuse_ll", "mksquashfs")}
    missing = [name for name, path in found.items() if not path]
    if missing:
        return None, (
            f"{' and '.join(missing)} not found: the peer rows need them; install them as root with "
            f"`{PEER_INSTALL}` (Debian/Ubuntu), or pass --no-peers"
        )
    if not (shutil.which("umount") or shutil.which("fusermount3")):
        return None, "neither umount nor fusermount3 found (needed to unmount squashfuse_ll)"

    def version_line(cmd: Any, word: Any) -> Any:
        """The first output line starting with `word` (squashfuse_ll -V also prints its usage)."""
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        lines = [x.strip() for x in (p.stderr + "\n" + p.stdout).splitlines() if x.strip()]
        return next((x for x in lines if x.startswith(word)), lines[0] if lines else None)

    tools = {
        "squashfuse_ll": found["squashfuse_ll"],
        "mksquashfs": found["mksquashfs"],
        "squashfuse_ll_version": version_line([found["squashfuse_ll"], "-V"], "squashfuse"),
        "mksquashfs_version": version_line([found["mksquashfs"], "-version"], "mksquashfs"),
        "packages": {},
    }
    if shutil.which("dpkg-query"):
        for pkg in ("squashfuse", "squashfs-tools"):
            p = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True, text=True)
            if p.returncode == 0 and p.stdout.strip():
                tools["packages"][pkg] = p.stdout.strip()
    return tools, None


def squashfs_block(nbytes: int) -> int:
    """The power of two in mksquashfs's -b range (4 KiB..1 MiB) nearest to `nbytes`."""
    return 1 << max(12, min(20, round(math.log2(max(1, nbytes)))))


def ensure_peer_images(corpus: dict[str, Any], tools: dict[str, Any]) -> dict[str, Any]:
    """squashfs images of raw.bin in CORPUS/squashfs/, rebuilt only when stale.

    Returns {kind: {"path", "block_size", "array_block_size", "array", "options", "image_bytes",
    "ratio", "built"}} or {kind: {"error": text}} for an image that could not be made.
    """
    cdir = corpus["dir"]
    raw_path = os.path.join(cdir, "raw.bin")
    sqdir = os.path.join(cdir, "squashfs")
    os.makedirs(sqdir, exist_ok=True)
    stamp_path = os.path.join(sqdir, "images.json")
    st = os.stat(raw_path)
    raw_id = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino}
    try:
        with open(stamp_path) as f:
            stamp = json.load(f)
        if (
            stamp.get("version") != PEER_IMAGES_VERSION
            or stamp.get("raw") != raw_id
            or stamp.get("mksquashfs") != tools["mksquashfs_version"]
        ):
            stamp = None
    except (OSError, ValueError):
        stamp = None
    old = (stamp or {}).get("images", {})
    itemsize = {"float64": 8}.get(corpus.get("dtype", "float64"), 8)
    out = {}
    for kind in PEER_KINDS:
        array = PEER_OF_ARRAY[kind]
        array_bs = math.prod(corpus["files"][array]["blocks"]) * itemsize
        bs = squashfs_block(array_bs)
        options = PEER_COMP[kind] + ["-b", f"{bs // 1024}K", "-noappend", "-no-xattrs"]
        path = os.path.join(sqdir, f"{kind}.sqfs")
        info = {
            "path": path,
            "array": array,
            "array_block_size": array_bs,
            "block_size": bs,
            "options": options,
            "built": False,
        }
        prev = old.get(kind)
        if (
            prev
            and prev.get("options") == options
            and os.path.exists(path)
            and os.path.getsize(path) == prev.get("image_bytes")
        ):
            info["image_bytes"] = prev["image_bytes"]
        else:
            tmp = path + ".tmp"
            if os.path.exists(tmp):
                os.unlink(tmp)
            cmd = [tools["mksquashfs"], raw_path, tmp] + options + ["-no-progress", "-quiet"]
            print(f"peers: building {kind}.sqfs (mksquashfs {' '.join(options)}) ...", flush=True)
            t0 = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if p.returncode != 0 or not os.path.exists(tmp):
                out[kind] = {
                    "error": f"`{' '.join(cmd)}` failed (exit {p.returncode}): {(p.stdout + p.stderr).strip()[-1000:]}"
                }
                continue
            os.rename(tmp, path)
            info["image_bytes"] = os.path.getsize(path)
            info["built"] = True
            info["build_seconds"] = time.perf_counter() - t0
            print(
                f"peers: {kind}.sqfs done in {info['build_seconds']:.1f} s ({info['image_bytes'] / MIB:.0f} MiB)",
                flush=True,
            )
        info["ratio"] = st.st_size / info["image_bytes"]
        out[kind] = info
    good = {k: {x: v[x] for x in ("options", "image_bytes")} for k, v in out.items() if "error" not in v}
    with open(stamp_path + ".tmp", "w") as f:
        json.dump(
            {"version": PEER_IMAGES_VERSION, "raw": raw_id, "mksquashfs": tools["mksquashfs_version"], "images": good},
            f,
            indent=2,
        )
    os.rename(stamp_path + ".tmp", stamp_path)
    if not any(v.get("built") for v in out.values()):
        print(f"peers: reusing the squashfs images in {sqdir}", flush=True)
    return out


class PeerMount(ForegroundDaemon):
    """`squashfuse_ll -f IMG MNT` in the background (its PID is the daemon's); always cleaned up."""

    def __init__(self, squashfuse: str, image: str, mnt: str, log_path: str) -> None:
        self.squashfuse, self.image, self.mnt, self.log_path = squashfuse, image, mnt, log_path
        self.proc = None

    def __enter__(self) -> PeerMount:
        cleanup_mountpoint(self.mnt)
        self.start([self.squashfuse, "-f", self.image, self.mnt], f"squashfuse_ll {self.image} {self.mnt}")
        return self

    def unmount(self) -> None:
        unmount_fuse(self.mnt)
