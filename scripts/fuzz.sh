#!/usr/bin/env bash
# Fuzz the blosc2fs format layer with cargo-fuzz (libFuzzer) on stable Rust.
#
#   scripts/fuzz.sh                 # every target, FUZZ_SECONDS (60) each
#   FUZZ_SECONDS=300 scripts/fuzz.sh chunk frame
#
# Environment:
#   FUZZ_SECONDS    seconds per target (default 60)
#   FUZZ_RSS_MB     libFuzzer -rss_limit_mb (default 2048)
#   FUZZ_TIMEOUT    libFuzzer per-input -timeout in seconds (default 10)
#   FUZZ_JOBS       cargo build jobs (default 2)
#   FUZZ_KEEP_GOING 1 (default): libFuzzer -fork=1 with -ignore_crashes,
#                   -ignore_timeouts and -ignore_ooms, so one known crash does
#                   not end the run; 0: stop at the first crash (plain mode,
#                   with libFuzzer's stat:: lines)
#   BLOSC2FS_CONFORMANCE  seed directory (default ../shared/conformance/c-blosc2)
#
# Seeds fuzz/corpus/<target>/ from the conformance files and tests/fixtures,
# runs each target, prints libFuzzer's final stats and any crash / timeout /
# OOM inputs written by this run (under fuzz/artifacts/<target>/), and exits
# non-zero if there were any. Targets are built with -s none (no sanitizer:
# stable toolchain) and --debug-assertions (overflow checks on, as in the
# test profile).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FUZZ="$ROOT/fuzz"
SECONDS_PER_TARGET="${FUZZ_SECONDS:-60}"
RSS_MB="${FUZZ_RSS_MB:-2048}"
TIMEOUT="${FUZZ_TIMEOUT:-10}"
HOST="$(rustc -vV | sed -n 's/^host: //p')"
EXTRA=()
if [ "${FUZZ_KEEP_GOING:-1}" = 1 ]; then
    EXTRA=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi
export CARGO_BUILD_JOBS="${FUZZ_JOBS:-2}"
CONFORMANCE="${BLOSC2FS_CONFORMANCE:-$ROOT/../shared/conformance/c-blosc2}"
ALL_TARGETS=(frame chunk metalayer codecs zip_directory embed_map expression listing)
if [ "$#" -gt 0 ]; then TARGETS=("$@"); else TARGETS=("${ALL_TARGETS[@]}"); fi

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

# ---------------------------------------------------------------- seeding
seed() { # seed TARGET FILE...
    local dir="$FUZZ/corpus/$1"; shift
    mkdir -p "$dir"
    local f
    for f in "$@"; do
        [ -f "$f" ] || continue
        # libFuzzer's default -max_len is derived from the corpus; keep seeds
        # reasonably small so mutation stays fast.
        [ "$(stat -c %s "$f")" -le $((1 << 20)) ] || continue
        # Sparse frames repeat file names (00000000.chunk): add a content hash.
        cp -f "$f" "$dir/seed-$(basename "$f")-$(sha1sum "$f" | cut -c1-8)"
    done
}

is_frame() { [ "$(head -c 9 "$1" 2>/dev/null | tail -c 7)" = "b2frame" ]; }

frames=() cdata=() chunks=() others=()
add_file() {
    local f="$1"
    case "$f" in
        *.cdata) cdata+=("$f") ;;
        *.chunk) chunks+=("$f") ;;
        *) if is_frame "$f"; then frames+=("$f"); else others+=("$f"); fi ;;
    esac
}
if [ -d "$CONFORMANCE" ]; then
    while IFS= read -r -d '' f; do add_file "$f"; done < <(find "$CONFORMANCE" -type f -print0)
else
    echo "note: no conformance files at $CONFORMANCE"
fi
if [ -d "$ROOT/tests/fixtures" ]; then
    while IFS= read -r -d '' f; do add_file "$f"; done < <(find "$ROOT/tests/fixtures" -type f -print0)
fi

seed frame "${frames[@]}"
seed chunk "${cdata[@]}" "${chunks[@]}"
seed metalayer "${frames[@]}"
if [ -d "$ROOT/tests/fixtures/stores" ]; then
    mapfile -d '' zips < <(find "$ROOT/tests/fixtures/stores" -name '*.b2z' -type f -print0)
    mapfile -d '' embeds < <(find "$ROOT/tests/fixtures/stores" -name '*.b2e' -type f -print0)
    seed zip_directory "${zips[@]}"
    seed embed_map "${embeds[@]}"
fi
# Expressions: the hostile ones kept as regressions, and a few ordinary ones
# (first byte: the region pick; then the text).
mkdir -p "$FUZZ/corpus/expression"
for e in 'a * 2 + sin(b) - c' 'where(c, a / b, real(d)) + e % g' 'arctan2(a, f) > 0.5' '(b << 2) & 7 | ~g'; do
    printf '\x01%s' "$e" >"$FUZZ/corpus/expression/seed-$(printf '%s' "$e" | sha1sum | cut -c1-8)"
done
seed expression "$ROOT"/tests/fuzz_regressions/expression-*.bin
seed listing "$ROOT"/tests/fuzz_regressions/listing-*.bin

# Metalayer contents (msgpack bin32 fields holding a fixarray) cut out of the
# frames, plus a few hand-written values.
mkdir -p "$FUZZ/corpus/metalayer" "$FUZZ/corpus/codecs"
if command -v python3 >/dev/null 2>&1; then
    python3 - "$FUZZ/corpus" "${frames[@]}" <<'PY'
import os, struct, sys, zlib
corpus, frames = sys.argv[1], sys.argv[2:]
meta = os.path.join(corpus, "metalayer")
for path in frames:
    data = open(path, "rb").read()
    at = 0
    while True:
        at = data.find(b"\xc6", at)
        if at < 0 or at + 6 > len(data):
            break
        (n,) = struct.unpack(">I", data[at + 1:at + 5])
        body = data[at + 5:at + 5 + n]
        if 0 < n < 4096 and len(body) == n and body[0] & 0xF0 == 0x90:
            name = "ml-%s-%d" % (os.path.basename(path), at)
            open(os.path.join(meta, name), "wb").write(body)
        at += 1
# Codec seeds: op byte, u16 LE output length, stream.
codecs = os.path.join(corpus, "codecs")
raw = bytes(range(256)) * 8
def put(name, op, out_len, payload):
    open(os.path.join(codecs, name), "wb").write(bytes([op]) + struct.pack("<H", out_len) + payload)
put("zlib", 2, len(raw), zlib.compress(raw, 6))
put("zlib-short", 2, 100, zlib.compress(raw[:100], 9))
try:
    import lz4.block
    put("lz4", 1, len(raw), lz4.block.compress(raw, store_size=False))
except ImportError:
    pass
try:
    import zstandard
    put("zstd", 3, len(raw), zstandard.ZstdCompressor().compress(raw))
except ImportError:
    pass
for op, name in [(6, "shuffle"), (7, "bitshuffle"), (8, "delta"), (9, "bytedelta"), (10, "bytedelta-buggy")]:
    put(name, op, 0, bytes([4, 5]) + raw[:256])
PY
fi
# [0, 2, [400, 3], [110, 3], [57, 3], 0, "|u1"] and a caterva-style 5-field array.
printf '\x97\x00\x02\x92\xcd\x01\x90\x03\x92\x6e\x03\x92\x39\x03\x00\xa3|u1' > "$FUZZ/corpus/metalayer/hand-b2nd"
printf '\x95\x00\x01\x91\x64\x91\x0a\x91\x05' > "$FUZZ/corpus/metalayer/hand-caterva"
printf '\x82\xa1a\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00\xa1b\xd4\x2c\x00' > "$FUZZ/corpus/metalayer/hand-map"

# ---------------------------------------------------------------- running
failed=0
summary=()
mkdir -p "$FUZZ/artifacts/logs"
for t in "${TARGETS[@]}"; do
    mkdir -p "$FUZZ/artifacts/$t" "$FUZZ/corpus/$t"
    marker="$(mktemp)"
    log="$FUZZ/artifacts/logs/$t.log"
    echo "== fuzzing $t for ${SECONDS_PER_TARGET}s (log: $log)"
    set +e
    (cd "$FUZZ" && cargo fuzz run "$t" -s none --debug-assertions -- \
        -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb="$RSS_MB" -timeout="$TIMEOUT" \
        -print_final_stats=1 "${EXTRA[@]}") >"$log" 2>&1
    rc=$?
    set -e
    execs="$(grep -E '^stat::number_of_executed_units' "$log" | tail -1 | awk '{print $2}' || true)"
    done_line="$(grep -E '^Done [0-9]+ runs' "$log" | tail -1 || true)"
    if [ -z "$execs" ]; then
        # -fork mode prints no stat:: lines; take the last status line's #N.
        execs="$(grep -E '^#[0-9]+:? ' "$log" | tail -1 | sed -E 's/^#([0-9]+).*/\1/' || true)"
    fi
    grep -E '^(stat::|Done [0-9]+ runs|INFO: (fuzzed for|exiting))' "$log" || true
    new_crashes=()
    while IFS= read -r -d '' f; do new_crashes+=("$f"); done < <(
        find "$FUZZ/artifacts/$t" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' -o -name 'leak-*' \) \
            -newer "$marker" -print0)
    rm -f "$marker"
    if [ "$rc" -ne 0 ] || [ "${#new_crashes[@]}" -gt 0 ]; then
        failed=1
        echo "!! $t: cargo fuzz exited $rc"
        echo "   distinct panics (count, location, message):"
        grep -E -A1 "panicked at" "$log" | grep -v -- '^--$' | paste - - | sed -E "s/^thread '[^']*' \([0-9]+\) //" |
            sort | uniq -c | sort -rn | sed 's/^/     /' || true
        grep -E "ERROR: libFuzzer: (out-of-memory|timeout|malloc)" "$log" | sort | uniq -c | sed 's/^/     /' || true
        # Replay (up to 10 of) them to show what each one hits: in -fork
        # mode the children's panic messages are not in the log.
        bin="$FUZZ/target/$HOST/release/$t"
        n=0
        for f in "${new_crashes[@]}"; do
            echo "!! crash input: $f"
            n=$((n + 1))
            if [ "$n" -le 10 ] && [ -x "$bin" ]; then
                "$bin" -rss_limit_mb="$RSS_MB" -timeout="$TIMEOUT" "$f" 2>&1 |
                    grep -E -A1 'panicked at|ERROR: libFuzzer: (out-of-memory|timeout)' | grep -v -- '^--$' |
                    head -2 | sed 's/^/     /' || true
            fi
        done
        summary+=("$t: FAILED (rc $rc, ${#new_crashes[@]} crash file(s)), ${execs:-?} executions")
    else
        summary+=("$t: ok, ${execs:-?} executions${done_line:+ ($done_line)}")
    fi
done

echo "== summary"
for s in "${summary[@]}"; do echo "   $s"; done
exit "$failed"
