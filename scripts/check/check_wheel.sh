#!/usr/bin/env bash
# The wheel's portability checks (issue 44), steps of scripts/test.sh that
# also run by hand. Each subcommand is one step; exit 0 passed, 77 skipped
# (said plainly on the last line), anything else failed.
#
#   scripts/check/check_wheel.sh symbols WHEEL
#       The wheel is tagged manylinux_2_17 (manylinux2014), weighs at most
#       20 MB, and its binary asks for no glibc symbol newer than 2.17
#       (objdump -T) and links no libfuse (objdump -p: FUSE goes through
#       /dev/fuse, or fusermount3 for a user).
#   scripts/check/check_wheel.sh debian-root
#       Makes (once; cached under target/) a Debian 11 root with debootstrap:
#       minbase, python3 (3.9), python3-venv, fuse3. Skipped when the Debian
#       archive cannot be reached.
#   scripts/check/check_wheel.sh old-system WHEEL ORACLE_PYTHON
#       In a chroot into that root (glibc 2.31, Python 3.9): pip installs
#       WHEEL with --no-index into a venv, then scripts/check/check_wheel_old_system.py
#       mounts the fixtures with blosc2fs.mounted() and compares every array
#       with the bytes ORACLE_PYTHON (a python with python-blosc2 4.14.1,
#       which has no Python 3.9 build) decoded here beforehand, and the
#       manifests' sha256, and mounts as root (/dev/fuse) and as a user
#       (fusermount3). /proc, /sys and a small /dev of its own are mounted
#       for it and unmounted after, whatever happens.
#   scripts/check/check_wheel.sh sdist
#       Builds the sdist as a release would (`python -m build --sdist`,
#       through build_backend/), checks it holds what a build needs, installs
#       it into a fresh venv (pip builds it: cargo must be on PATH) and
#       mounts a fixture with the installed binary, comparing bytes.
#
# Work files go to $TARGET/wheel-check (TARGET: CARGO_TARGET_DIR or target/).
set -euo pipefail
cd "$(dirname "$0")/../.."

TARGET="$(realpath -m "${CARGO_TARGET_DIR:-target}")"
WORK="$TARGET/wheel-check"
ROOT="$TARGET/debian11-root"     # the cached Debian 11 root
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
MOUNT_LOCK="${TMPDIR:-/tmp}/blosc2fs-mount-tests.lock"  # tests/common/mount.rs's
SKIP=77
mkdir -p "$WORK"

# skip REASON: say so plainly, exit "skipped".
skip() {
    echo "SKIPPED: $*"
    exit $SKIP
}

# wheel_binary WHEEL DIR: unpack WHEEL's blosc2fs into DIR, print its path.
wheel_binary() {
    rm -rf "$2" && mkdir -p "$2"
    python3 -m zipfile -e "$1" "$2"
    local bin
    bin="$(echo "$2"/blosc2fs-*.data/scripts/blosc2fs)"
    [ -f "$bin" ] || { echo "no blosc2fs binary in $1" >&2; return 1; }
    chmod +x "$bin"
    echo "$bin"
}

symbols() {
    local wheel=$1 bin size newest needed
    case "$(basename "$wheel")" in
        *manylinux_2_17_x86_64*) ;;
        *) echo "not tagged manylinux_2_17_x86_64: $(basename "$wheel")"; return 1 ;;
    esac
    size="$(stat -c %s "$wheel")"
    [ "$size" -le $((20 * 1000 * 1000)) ] || { echo "the wheel is over 20 MB: $size bytes"; return 1; }
    bin="$(wheel_binary "$wheel" "$WORK/unpacked")"
    newest="$(objdump -T "$bin" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)"
    needed="$(objdump -p "$bin" | awk '$1 == "NEEDED" { print $2 }' | sort | tr '\n' ' ')"
    echo "$(basename "$wheel"): $size bytes; binary $(stat -c %s "$bin") bytes, newest glibc symbol $newest; needs $needed"
    if [ "$(printf '%s\n' "$newest" GLIBC_2.17 | sort -V | tail -n 1)" != GLIBC_2.17 ]; then
        echo "the binary needs $newest, newer than GLIBC_2.17:"
        objdump -T "$bin" | grep -E 'GLIBC_2\.(1[89]|[2-9][0-9])' || true
        return 1
    fi
    if grep -q fuse <<<"$needed"; then
        echo "the binary links libfuse: $needed"
        return 1
    fi
    # glibc's own libraries only (libgcc_s would be a dependency the tag does not promise).
    for lib in $needed; do
        case "$lib" in
            libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 | ld-linux-x86-64.so.2) ;;
            *) echo "the binary needs $lib, not part of glibc"; return 1 ;;
        esac
    done
    "$bin" --version | head -n 1
}

# The archive answers: its bullseye Release file can be fetched.
archive_reachable() {
    python3 - "$MIRROR/dists/bullseye/Release" <<'EOF'
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=20) as r:
        r.read(1)
except Exception as e:  # noqa: BLE001 - any failure means "cannot be reached"
    print(f"{sys.argv[1]}: {e}")
    sys.exit(1)
EOF
}

debian_root() {
    local why new
    if [ -f "$ROOT/.blosc2fs-complete" ]; then
        echo "Debian 11 root: cached in $ROOT"
        return 0
    fi
    [ "$(id -u)" = 0 ] || skip "making a Debian root and chrooting need root"
    why="$(archive_reachable)" || skip "the Debian archive cannot be reached ($why); the wheel was not tried in Debian 11"
    if ! command -v debootstrap >/dev/null 2>&1; then
        # (waiting for the lock: test.sh's own apt-get may run beside this)
        local apt=(apt-get -o DPkg::Lock::Timeout=600 -y -qq)
        DEBIAN_FRONTEND=noninteractive "${apt[@]}" install debootstrap >/dev/null \
            || { "${apt[@]}" update >/dev/null && DEBIAN_FRONTEND=noninteractive "${apt[@]}" install debootstrap >/dev/null; } \
            || { echo "apt-get install debootstrap failed"; return 1; }
    fi
    # Into a fresh folder, renamed once complete: an interrupted run leaves no half root behind.
    new="$ROOT.new"
    rm -rf "$new"
    debootstrap --variant=minbase --include=python3,python3-venv,fuse3,ca-certificates \
        bullseye "$new" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
        || { tail -n 20 "$WORK/debootstrap.log"; echo "debootstrap failed (log: $WORK/debootstrap.log)"; return 1; }
    touch "$new/.blosc2fs-complete"
    rm -rf "$ROOT" && mv "$new" "$ROOT"
    echo "Debian 11 root: made in $ROOT ($(du -sh "$ROOT" | cut -f1))"
}

# Every mount under the root, deepest first (FUSE mounts a failed test left
# too), lazily if need be. The EXIT trap of old_system.
unmount_root() {
    local m
    for m in $(awk -v r="$ROOT/" 'index($2 "/", r) == 1 { print $2 }' /proc/mounts | sort -r); do
        umount "$m" 2>/dev/null || umount -l "$m" || echo "could not unmount $m"
    done
}

old_system() {
    local wheel=$1 oracle=$2 check="$ROOT/blosc2fs-check" status=0
    [ -f "$ROOT/.blosc2fs-complete" ] || debian_root || return
    # The expected bytes, decoded here by python-blosc2 4.14.1 (tests/python's
    # oracle: the same rule for which files it is one).
    # What a booted Debian has (systemd-tmpfiles makes it; debootstrap does
    # not), and fusermount3 reads when it unmounts.
    [ -e "$ROOT/etc/mtab" ] || [ -L "$ROOT/etc/mtab" ] || ln -s ../proc/self/mounts "$ROOT/etc/mtab"
    rm -rf "$check" && mkdir -p "$check/wheel" "$check/expected"
    (cd tests/python && "$oracle" - "$check/expected" <<'EOF'
import sys
from pathlib import Path
from test_mounted import CORPUS, FIXTURES, python_blosc2_bytes
out, n = Path(sys.argv[1]), 0
for relpath, entry in CORPUS:
    data = python_blosc2_bytes(FIXTURES / relpath, entry)
    if data is not None:
        (out / relpath).parent.mkdir(parents=True, exist_ok=True)
        (out / (relpath + ".bin")).write_bytes(data)
        n += 1
print(f"expected bytes of {n} of {len(CORPUS)} arrays written by python-blosc2")
EOF
    ) || { echo "the oracle failed"; return 1; }
    cp -r tests/fixtures "$check/fixtures"
    cp "$wheel" "$check/wheel/"
    cp scripts/check/check_wheel_old_system.py "$check/"
    chmod -R a+rX "$check"   # the user mount runs as nobody
    trap unmount_root EXIT
    trap 'exit 143' TERM INT HUP   # so that the EXIT trap runs then too
    mount -t proc proc "$ROOT/proc"
    mount --bind /sys "$ROOT/sys"
    # /dev as a container has it, rather than this machine's own bound: its
    # /dev/fuse may be 0600 (it is here), and a user's mount through
    # fusermount3 is to be tried too. Only the nodes Python and FUSE use.
    mount -t tmpfs -o mode=755,size=64k blosc2fs-dev "$ROOT/dev"
    mknod -m 666 "$ROOT/dev/null" c 1 3 && mknod -m 666 "$ROOT/dev/zero" c 1 5
    mknod -m 666 "$ROOT/dev/random" c 1 8 && mknod -m 666 "$ROOT/dev/urandom" c 1 9
    mknod -m 666 "$ROOT/dev/fuse" c 10 229
    ln -s /proc/self/fd "$ROOT/dev/fd"
    # A clean environment: nothing of this machine's pip settings or PATH.
    in_root() {
        chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
    }
    echo "in the root: $(in_root ldd --version | head -n 1), $(in_root python3 --version)"
    in_root python3 -m venv /blosc2fs-check/venv \
        && in_root /blosc2fs-check/venv/bin/python -m pip install --quiet --no-index /blosc2fs-check/wheel/"$(basename "$wheel")" \
        || { echo "pip could not install the wheel in Debian 11"; return 1; }
    # Under the mount tests' lock, so no other mount of the test command overlaps.
    (
        flock 9
        chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/blosc2fs-check/venv/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            /blosc2fs-check/venv/bin/python /blosc2fs-check/check_wheel_old_system.py /blosc2fs-check
    ) 9>"$MOUNT_LOCK" || status=$?
    unmount_root
    trap - EXIT TERM INT HUP
    if awk -v r="$ROOT/" 'index($2 "/", r) == 1 { bad = 1 } END { exit !bad }' /proc/mounts; then
        echo "still mounted under $ROOT:"
        grep -F "$ROOT/" /proc/mounts
        return 1
    fi
    return $status
}

sdist() {
    local dist="$WORK/sdist" tools="$WORK/sdist-tools" venv="$WORK/sdist-venv" archive listing missing="" f mnt status
    command -v cargo >/dev/null 2>&1 || { echo "cargo is not on PATH: pip cannot build the sdist"; return 1; }
    rm -rf "$dist" "$venv"
    if [ ! -x "$tools/bin/pyproject-build" ]; then
        python3 -m venv "$tools" && "$tools/bin/python" -m pip install --quiet build || return
    fi
    "$tools/bin/python" -m build --sdist --outdir "$dist" . >"$WORK/sdist-build.log" 2>&1 \
        || { cat "$WORK/sdist-build.log"; return 1; }
    archive="$(echo "$dist"/blosc2fs-*.tar.gz)"
    [ -f "$archive" ] || { echo "no sdist in $dist"; return 1; }
    listing="$(tar tzf "$archive" | sed 's|^[^/]*/||')"
    for f in PKG-INFO pyproject.toml Cargo.toml Cargo.lock README.md LICENSE build_backend/blosc2fs_build.py \
        python/blosc2fs/__init__.py python/blosc2fs/py.typed src/main.rs src/lib.rs; do
        grep -qxF "$f" <<<"$listing" || missing="$missing $f"
    done
    [ -z "$missing" ] || { echo "the sdist lacks:$missing"; return 1; }
    echo "sdist: $(basename "$archive"), $(stat -c %s "$archive") bytes, $(wc -l <<<"$listing") files"
    # As pip on a machine with no fitting wheel: build isolation, maturin
    # (and ziglang, on x86-64 glibc) from the index, a release build in a
    # temporary folder of its own.
    python3 -m venv "$venv" && "$venv/bin/python" -m pip install --quiet --upgrade pip || return
    local t0=$EPOCHREALTIME
    env -u CARGO_TARGET_DIR CARGO_BUILD_JOBS="${JOBS:-2}" "$venv/bin/python" -m pip install --no-deps "$archive" \
        >"$WORK/sdist-install.log" 2>&1 || { tail -n 40 "$WORK/sdist-install.log"; return 1; }
    echo "pip built and installed it in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s: $(grep -o 'blosc2fs-[^ ]*\.whl' "$WORK/sdist-install.log" | head -n 1)"
    "$venv/bin/blosc2fs" --version | head -n 1
    if ! [ -r /dev/fuse ] || ! [ -w /dev/fuse ]; then
        echo "the mount is not tried: /dev/fuse cannot be opened"
        return 1
    fi
    mnt="$(mktemp -d)"
    (
        flock 9 && "$venv/bin/blosc2fs" mount tests/fixtures "$mnt" || exit
        f=clevel9_zstd
        python3 - "$mnt/$f.b2nd/data" "$f" <<'EOF'
import hashlib, json, sys
entry = json.load(open("tests/fixtures/manifest.json"))[sys.argv[2]]
data = open(sys.argv[1], "rb").read()
assert len(data) == entry["size"] and hashlib.sha256(data).hexdigest() == entry["sha256"], "bytes differ"
print(f"mounted with the sdist's binary: {sys.argv[2]} reads exactly ({len(data)} bytes)")
EOF
        status=$?
        "$venv/bin/blosc2fs" unmount "$mnt"
        exit $status
    ) 9>"$MOUNT_LOCK" || { rmdir "$mnt" 2>/dev/null; return 1; }
    rmdir "$mnt"
}

case "${1:-}" in
    symbols) symbols "$2" ;;
    debian-root) debian_root ;;
    old-system) old_system "$2" "$3" ;;
    sdist) sdist ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
