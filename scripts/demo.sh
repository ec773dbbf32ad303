#!/usr/bin/env bash
# Build blosc2fs and run it on the bundled sample arrays (tests/fixtures):
# mount them, look around as a user would, and unmount.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -j2
BIN="$PWD/target/release/blosc2fs"
MNT="${1:-/tmp/blosc2fs-demo}"
mkdir -p "$MNT"
"$BIN" mount tests/fixtures "$MNT" --cache-size 64M
trap '"$BIN" unmount "$MNT"' EXIT
set -x
ls "$MNT" | head -n 8
ls -l "$MNT/dtype_le_f8.b2nd" "$MNT/dtype_le_f8.b2nd/chunks" | head -n 12
cat "$MNT/dtype_le_f8.b2nd/meta.json"
od -A d -t f8 -N 32 "$MNT/dtype_le_f8.b2nd/data"
cmp <("$BIN" cat tests/fixtures/dtype_le_f8.b2nd) "$MNT/dtype_le_f8.b2nd/data" && echo "cat and the mount agree"
cat "$MNT/.stats"
