#!/usr/bin/env bash
# Run every test of blosc2fs on a fresh machine: installs what the tests use
# (fuse3 for fusermount3/mount.fuse3, attr for getfattr), creates the Python
# virtualenv with python-blosc2 4.14.1, checks formatting and lints (cargo
# fmt, cargo clippy both ways; ruff and mypy over the Python once the
# virtualenv is ready), builds blosc2fs both ways and tests both:
# the default build (remote sources included) runs every suite; the
# local-only build (--no-default-features) runs the library's unit tests and
# a smoke test of its binary. Then the Python wheel: built as users build it
# (`pip wheel .`, a release build), installed into a throwaway virtualenv,
# and its tests (tests/python) run there with no cargo on PATH; then its
# portability (scripts/check/check_wheel.sh: glibc symbols, a Debian 11 chroot,
# the sdist built and installed by pip). Ends with the wall time of each step.
# Mount tests need root (or a user allowed to mount FUSE).
#
# Both builds use the `ci` profile (Cargo.toml: release without LTO), and so
# share the dependencies whose features do not differ (zstd-sys among them);
# PROFILE=release scripts/test.sh tests what users install instead (slower).
# Cargo's --timings reports of each build land in target/cargo-timings/.
# The Python side is set up while the builds run. The suites run in two
# lanes side by side: one for the suites that mount, one for the rest.
# Mount tests also take a lock file (tests/common/mount.rs), so two mounts
# never overlap whatever runs where.
set -euo pipefail
cd "$(dirname "$0")/.."

PROFILE="${PROFILE:-ci}"
JOBS=2  # the machine's cores, CI's too
TARGET="$(realpath -m "${CARGO_TARGET_DIR:-target}")"   # absolute: steps run in other folders
LOGS="$TARGET/test-logs"
rm -rf "$LOGS"
mkdir -p "$LOGS"
TIMES="$LOGS/times.tsv"  # one line per step: name, seconds, result
START=$EPOCHREALTIME
LOAD_AT_START="$(cut -d' ' -f1-3 /proc/loadavg)"

# timed NAME COMMAND...: run COMMAND, record its wall time under NAME.
# (bash ignores `set -e` inside COMMAND here: the functions below check
# each step themselves.)
timed() {
    local name=$1 t0=$EPOCHREALTIME status=0
    shift
    "$@" || status=$?
    printf '%s\t%s\t%s\n' "$name" "$(elapsed "$t0")" "$([ $status = 0 ] && echo ok || echo FAILED)" >>"$TIMES"
    return $status
}

# elapsed T0: seconds since T0 (an $EPOCHREALTIME), one decimal.
elapsed() {
    awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'
}

install_packages() {
    if [ "$(id -u)" = 0 ] && ! command -v fusermount3 >/dev/null 2>&1; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null && apt-get install -y -qq fuse3 attr >/dev/null
    fi
}
setup_venv() {
    scripts/setup_venv.sh | tail -n 1 >"$LOGS/venv.path"
}
# Packages and the virtualenv in the background, beside the builds (they
# wait on the network more than on the CPU); their output goes to a log.
echo "== fuse3, attr and the python virtualenv (log: $LOGS/setup.log)"
{
    timed "apt (fuse3, attr; beside the builds)" install_packages && timed "python venv (beside the builds)" setup_venv
} >"$LOGS/setup.log" 2>&1 &
SETUP=$!

# The wheel's tests run in a virtualenv of their own, made afresh each run:
# the wheel, pytest, and the tests' oracle only (numpy, python-blosc2
# 4.14.1, dask[distributed]: the package itself needs none of them).
WHEEL_DIR="$TARGET/wheel-test"
WHEEL_VENV="$WHEEL_DIR/venv"
wheel_venv() {
    rm -rf "$WHEEL_VENV" && python3 -m venv "$WHEEL_VENV" \
        && "$WHEEL_VENV/bin/python" -m pip install --quiet --upgrade pip \
        && "$WHEEL_VENV/bin/python" -m pip install --quiet pytest numpy "blosc2==4.14.1" "dask[distributed]"
}
echo "== the wheel's test virtualenv (log: $LOGS/wheel-venv.log)"
timed "wheel test venv (beside the builds)" wheel_venv >"$LOGS/wheel-venv.log" 2>&1 &
WHEEL_SETUP=$!

# The wheel's portability (scripts/check/check_wheel.sh, issue 44): its symbols,
# a Debian 11 chroot, the sdist. wheel_step NAME SUBCOMMAND ARGS... runs one
# step, logged to $LOGS/wheel-SUBCOMMAND.log and timed; exit status 77 is a
# skip (an unreachable Debian archive), SKIPPED in the table and said loudly.
wheel_step() {
    local name=$1 log="$LOGS/wheel-$2.log" t0=$EPOCHREALTIME status=0 result=ok
    shift
    scripts/check/check_wheel.sh "$@" >"$log" 2>&1 </dev/null || status=$?
    case $status in 0) ;; 77) result=SKIPPED ;; *) result=FAILED ;; esac
    printf '%s\t%s\t%s\n' "$name" "$(elapsed "$t0")" "$result" >>"$TIMES"
    flock "$LOGS/.print" sh -c 'echo "== $1 ($2)"; cat "$3"' - "$name" "$result" "$log"
}
# The Debian 11 root (cached under target/) is made beside the builds.
wheel_step "debian 11 root (beside the builds)" debian-root >/dev/null &
DEBIAN_ROOT=$!

# Formatting (rustfmt.toml) and lints first, beside the setup: the main
# crate and the fuzz crate (its own workspace; rustfmt reads none of its
# dependencies, so no libfuzzer is needed), then clippy with warnings denied
# on every target of both builds (a lint is allowed only where a comment
# says why). Clippy checks with the builds' profile: the build scripts'
# runs (aws-lc's and zstd's C) and the proc-macros it needs are then the
# builds' own, not built twice (the dev profile had them built again at
# -O0). A failure is printed here; the tests still run, and the script
# exits non-zero at the end (the table counts the step FAILED).
lint() {
    local status=0
    # rustup's minimal profile installs neither component.
    if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
        rustup component add clippy rustfmt || return
    fi
    cargo fmt --all --check || status=1
    cargo fmt --check --manifest-path fuzz/Cargo.toml || status=1
    cargo clippy --quiet --profile "$PROFILE" --locked -j$JOBS --all-targets -- -D warnings || status=1
    cargo clippy --quiet --profile "$PROFILE" --locked -j$JOBS --all-targets --no-default-features \
        -- -D warnings || status=1
    # Doc links and HTML in `//!`/`///` comments (the default build's docs,
    # private items included: `cargo doc --document-private-items` is how
    # docs/design.md says to read them).
    RUSTDOCFLAGS="-D warnings -A rustdoc::private_intra_doc_links" cargo doc --quiet --no-deps \
        --document-private-items --profile "$PROFILE" --locked -j$JOBS || status=1
    return $status
}
echo "== lint: cargo fmt --check, cargo clippy both ways, cargo doc (log: $LOGS/lint.log)"
if ! timed "lint (fmt, clippy both ways, doc)" lint >"$LOGS/lint.log" 2>&1; then
    cat "$LOGS/lint.log"
    echo "== lint FAILED: the output above; the tests still run, and the script fails at the end"
fi

# The test executables a `cargo test --no-run --message-format=json` built,
# one "NAME PATH" per line (NAME: lib, bin, or the tests/*.rs file's name).
executables() {
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["profile"]["test"] and m.get("executable"):
        kind = m["target"]["kind"][0]
        print(kind if kind in ("lib", "bin") else m["target"]["name"], m["executable"])
'
}

# The local-only build first: its binary is copied aside, because the default
# build writes the same path, the one the mount tests run (cargo writes it
# at every build, also when nothing was recompiled).
echo "== build local-only (--no-default-features)"
LOCAL_BIN="$TARGET/$PROFILE/local-only/blosc2fs"
# C-Blosc2's own files, where the tests find them (tests/common/mod.rs).
CONFORMANCE=
for d in "${BLOSC2FS_CONFORMANCE:-}" ../shared/conformance/c-blosc2 /work/shared/conformance/c-blosc2; do
    [ -n "$d" ] && [ -f "$d/manifest.json" ] && { CONFORMANCE="$d"; break; }
done
build_local_only() {
    cargo build --profile "$PROFILE" --locked -j$JOBS --timings --no-default-features --bin blosc2fs \
        && mkdir -p "$(dirname "$LOCAL_BIN")" && cp "$TARGET/$PROFILE/blosc2fs" "$LOCAL_BIN" \
        && cargo test --profile "$PROFILE" --locked -j$JOBS --timings --no-default-features --lib --no-run --message-format=json \
        | executables >"$LOGS/local-only.list"
}
timed "build local-only (bin, lib tests)" build_local_only

echo "== build (bin, every test, examples)"
build_default() {
    cargo test --profile "$PROFILE" --locked -j$JOBS --timings --no-run --message-format=json | executables >"$LOGS/default.list"
}
timed "build default (bin, tests, examples)" build_default
DEFAULT_BIN="$TARGET/$PROFILE/blosc2fs"

# The wheel, as `pip wheel .` builds it (pyproject.toml: maturin through
# build_backend/, the release profile whatever PROFILE says), after the other
# builds (one cargo at a time). It must be tagged manylinux and weigh at most
# 20 MB; it is then installed into the wheel's virtualenv.
WHEELHOUSE="$WHEEL_DIR/wheelhouse"
build_wheel() {
    local wheel size
    rm -rf "$WHEELHOUSE"
    CARGO_TARGET_DIR="$TARGET" CARGO_BUILD_JOBS=$JOBS MATURIN_PEP517_ARGS="--locked" \
        python3 -m pip wheel . --no-deps -w "$WHEELHOUSE" || return
    wheel="$(echo "$WHEELHOUSE"/blosc2fs-*.whl)"
    [ -f "$wheel" ] || { echo "no wheel in $WHEELHOUSE"; return 1; }
    size="$(stat -c %s "$wheel")"
    echo "wheel: $(basename "$wheel"), $size bytes"
    case "$(basename "$wheel")" in
        *-manylinux*) ;;
        *) echo "not a manylinux wheel: $(basename "$wheel")"; return 1 ;;
    esac
    [ "$size" -le $((20 * 1000 * 1000)) ] || { echo "the wheel is over 20 MB"; return 1; }
    wait $WHEEL_SETUP || { cat "$LOGS/wheel-venv.log"; return 1; }
    "$WHEEL_VENV/bin/python" -m pip install --quiet "$wheel"
}
echo "== build the wheel (pip wheel ., log: $LOGS/wheel.log)"
WHEEL_OK=1
if ! timed "build wheel (pip wheel ., release; install)" build_wheel >"$LOGS/wheel.log" 2>&1; then
    cat "$LOGS/wheel.log"
    WHEEL_OK=0
fi
tail -n 1 "$LOGS/wheel.log"
[ $WHEEL_OK = 0 ] || wheel_step "wheel symbols (glibc <= 2.17, no libfuse)" symbols "$(echo "$WHEELHOUSE"/blosc2fs-*.whl)"

wait $SETUP || { cat "$LOGS/setup.log"; exit 1; }
VENV="$(cat "$LOGS/venv.path")"
export BLOSC2FS_PYTHON="$VENV/bin/python"

# The Python lint (pyproject.toml's [tool.ruff] and [tool.mypy]: the package under python/
# and the scripts), once the virtualenv that holds ruff and mypy is ready. Like the Rust
# lint: a failure is printed, the tests still run, and the script fails at the end.
python_lint() {
    local status=0
    "$VENV/bin/ruff" check --no-cache || status=1
    "$VENV/bin/ruff" format --check --no-cache || status=1
    "$VENV/bin/mypy" || status=1
    return $status
}
echo "== python lint: ruff check, ruff format --check, mypy --strict (log: $LOGS/python-lint.log)"
if ! timed "python lint (ruff, mypy)" python_lint >"$LOGS/python-lint.log" 2>&1; then
    cat "$LOGS/python-lint.log"
    echo "== python lint FAILED: the output above; the tests still run, and the script fails at the end"
fi
# The compute oracle draws 300 random expressions from a seed; CI replays one
# fixed seed so a run is reproducible (unset it, or set another, to explore:
# python-blosc2's engines disagree with numpy in rare cases, docs/testing.md).
export BLOSC2FS_COMPUTE_SEED="${BLOSC2FS_COMPUTE_SEED:-719069}"

# run_suite NAME EXECUTABLE: run one test executable (two tests at a time, as
# `cargo test -- --test-threads=2` did), log to $LOGS/NAME.log, then print
# the log whole (lanes finish in any order; whole logs do not interleave).
run_suite() {
    local name=$1 exe=$2 t0=$EPOCHREALTIME result=ok
    "$exe" --test-threads=2 </dev/null >"$LOGS/$name.log" 2>&1 || result=FAILED
    local counts
    counts="$(sed -n 's/^test result: [a-zA-Z]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored.*/\1 \2 \3/p' "$LOGS/$name.log" | tail -n 1)"
    printf '%s\t%s\t%s %s\n' "$name" "$(elapsed "$t0")" "$result" "${counts:-0 0 0}" >>"$TIMES"
    flock "$LOGS/.print" sh -c 'echo "== $1 ($2)"; cat "$3"' - "$name" "$result" "$LOGS/$name.log"
}

# The local-only build compiles no C (its dependency tree has no cc, no
# -sys crate); it refuses OpenZL (plugin codec 38) naming the plugin; its
# binary, whose zstd is ruzstd rather than libzstd, gives
# every array the default binary gives (exact bytes, or an error in both),
# reads stores, mounts, and refuses a URL by name.
local_only_smoke() {
    local a=tests/fixtures/clevel1_lz4.b2nd store=tests/fixtures/stores/tree.b2z out mnt status f n=0
    out="$(cargo tree --locked --offline --no-default-features -e normal,build --prefix none | grep -E '^cc v|-sys v' | sort -u)"
    [ -z "$out" ] || { echo "the local-only build compiles C: $out"; return 1; }
    out="$("$LOCAL_BIN" --version)"
    grep -qx 'zstd decoder: ruzstd (pure Rust)' <<<"$out" && grep -q '^remote sources: no' <<<"$out" \
        || { echo "not the local-only build's --version: $out"; return 1; }
    grep -qx 'openzl decoder: none (built without the cargo feature `openzl-c`)' <<<"$out" \
        || { echo "not the local-only build's --version: $out"; return 1; }
    # OpenZL (plugin codec 38) needs C: refused, with the plugin named.
    if "$LOCAL_BIN" cat tests/fixtures/plugins/openzl_zstd_i4.b2nd >/dev/null 2>"$LOGS/smoke.err"; then
        echo "the local-only build read an OpenZL array"
        return 1
    fi
    grep -qF "needs the blosc2-openzl plugin" "$LOGS/smoke.err" \
        || { echo "not the expected OpenZL refusal: $(cat "$LOGS/smoke.err")"; return 1; }
    for f in tests/fixtures/*.b2nd tests/fixtures/*.b2frame tests/fixtures/*.caterva "$CONFORMANCE"/*.b2frame "$CONFORMANCE"/*.b2nd; do
        [ -e "$f" ] || continue  # (sparse frames are folders)
        if "$DEFAULT_BIN" cat "$f" >"$LOGS/smoke.default" 2>/dev/null; then
            "$LOCAL_BIN" cat "$f" >"$LOGS/smoke.local" && cmp -s "$LOGS/smoke.default" "$LOGS/smoke.local" \
                || { echo "local-only cat differs: $f"; return 1; }
            n=$((n + 1))
        elif "$LOCAL_BIN" cat "$f" >/dev/null 2>&1; then
            echo "local-only cat read what the default one refused: $f"
            return 1
        fi
    done
    rm -f "$LOGS/smoke.default" "$LOGS/smoke.local"
    echo "$n arrays: the same bytes from both binaries"
    cmp <("$LOCAL_BIN" info --tree "$store") <("$DEFAULT_BIN" info --tree "$store") || return
    if out="$("$LOCAL_BIN" info s3://bucket/x.b2nd 2>&1)"; then
        echo "a URL was not refused: $out"
        return 1
    fi
    grep -qF "built without remote sources (cargo feature \`remote\`)" <<<"$out" || { echo "not the expected refusal: $out"; return 1; }
    if ! [ -r /dev/fuse ] || ! [ -w /dev/fuse ]; then
        echo "smoke mount skipped: /dev/fuse cannot be opened"
        return 0
    fi
    mnt="$(mktemp -d)"
    # Under the mount tests' lock (flock(2), which File::lock takes too).
    (
        flock 9 && "$LOCAL_BIN" mount tests/fixtures "$mnt" || exit
        cmp "$mnt/clevel1_lz4.b2nd/data" <("$DEFAULT_BIN" cat "$a") && [ -f "$mnt/stores/tree.b2z/meta.json" ]
        status=$?
        "$LOCAL_BIN" unmount "$mnt"
        exit $status
    ) 9>"${TMPDIR:-/tmp}/blosc2fs-mount-tests.lock" || return
    rmdir "$mnt"
    echo "local-only smoke test: ok (no C, $n arrays cat the same, info --tree, a mount, a URL refused)"
}

# tests/python against the installed wheel, with every folder holding cargo,
# rustc or rustup left off PATH and Rust's variables unset: the wheel's
# binary is all there is. (rustup's folder is ~/.cargo/bin; a cargo from apt
# in /usr/bin would take /usr/bin off too, and the tests would fail loudly.)
# Counted in the table like a suite.
python_tests() {
    local t0=$EPOCHREALTIME result=ok path="" dir counts
    local IFS=:
    for dir in $PATH; do
        [ -x "$dir/cargo" ] || [ -x "$dir/rustc" ] || [ -x "$dir/rustup" ] || path="$path${path:+:}$dir"
    done
    unset IFS
    if [ $WHEEL_OK = 1 ]; then
        (cd tests/python && env -u CARGO_HOME -u RUSTUP_HOME -u RUSTUP_TOOLCHAIN -u CARGO_TARGET_DIR -u BLOSC2FS_BIN \
            PATH="$(cd "$WHEEL_VENV/bin" && pwd):$path" "$WHEEL_VENV/bin/python" -m pytest -q -p no:cacheprovider .) \
            </dev/null >"$LOGS/python-wheel.log" 2>&1 || result=FAILED
    else
        echo "not run: the wheel was not built" >"$LOGS/python-wheel.log"
        result=FAILED
    fi
    # pytest's closing line: "236 passed, 1 failed, 2 skipped in 11.2s" (any order, any subset).
    counts="$(tail -n 1 "$LOGS/python-wheel.log" | awk '{ for (i = 2; i <= NF; i++) { w = $i; sub(/,$/, "", w)
        if (w == "passed") p = $(i - 1); if (w == "failed" || w == "errors" || w == "error") f += $(i - 1); if (w == "skipped") s = $(i - 1) }
        printf "%d %d %d", p, f, s }')"
    printf '%s\t%s\t%s %s\n' "python wheel (tests/python, no cargo)" "$(elapsed "$t0")" "$result" "$counts" >>"$TIMES"
    flock "$LOGS/.print" sh -c 'echo "== python wheel tests ($1)"; cat "$2"' - "$result" "$LOGS/python-wheel.log"
}

lane() {
    local name exe
    while read -r name exe; do
        run_suite "$name" "$exe"
    done
}

# Suites that mount run one after the other in one lane, the wheel's tests
# last; the rest, longest first, and the local-only build's tests in the other.
MOUNTING="mount plain_files hostile plugins stores permissions remote remote_faults caterva2 caterva2_operands lake_mount zarr_v3 disk_cache tables_render nnunet"
echo "== tests"
T0=$EPOCHREALTIME
{
    grep -E "^($(tr ' ' '|' <<<"$MOUNTING")) " "$LOGS/default.list" | lane
    python_tests
} &
LANE_A=$!
{
    order="differential fixtures fs lib zfp conformance elsewhere fuzz_regressions cli bin"
    for name in $order; do grep "^$name " "$LOGS/default.list" || true; done
    grep -vE "^($(tr ' ' '|' <<<"$MOUNTING $order")) " "$LOGS/default.list" || true
    sed 's/^lib /local-only-lib /' "$LOGS/local-only.list"
} | lane
timed "local-only smoke test" local_only_smoke >"$LOGS/local-only-smoke.log" 2>&1 || true
flock "$LOGS/.print" sh -c 'echo "== local-only smoke test"; cat "$1"' - "$LOGS/local-only-smoke.log"
wait $LANE_A || true
printf '%s\t%s\t%s\n' "tests, two lanes side by side" "$(elapsed "$T0")" "-" >>"$TIMES"
# After the lanes: the chroot mounts, and the sdist's build is a cargo build.
wait $DEBIAN_ROOT || true
[ $WHEEL_OK = 0 ] || wheel_step "wheel in Debian 11 (chroot, Python 3.9)" old-system \
    "$(echo "$WHEELHOUSE"/blosc2fs-*.whl)" "$WHEEL_VENV/bin/python"
wheel_step "sdist (build, pip install, mount)" sdist
printf '%s\t%s\t%s\n' "total" "$(elapsed "$START")" "-" >>"$TIMES"

# The table, and one closing line for all suites.
echo
if grep -q $'\tSKIPPED$' "$TIMES"; then
    echo "== SKIPPED, not passed: $(awk -F'\t' '$3 == "SKIPPED" { printf "%s%s", sep, $1; sep = "; " }' "$TIMES")"
fi
echo "== wall time per step (load average at start $LOAD_AT_START, at end $(cut -d' ' -f1-3 /proc/loadavg))"
awk -F'\t' '
    { split($3, r, " "); passed += r[2]; failed += r[3]; ignored += r[4]; if (r[1] == "FAILED") bad++
      counts = (r[2] == "" ? "" : sprintf("%5d passed %d failed %d ignored", r[2], r[3], r[4]))
      printf "  %-48s %7s s  %-6s %s\n", $1, $2, r[1], counts }
    END { printf "\ntests: %d passed, %d failed, %d skipped\n", passed, failed, ignored; exit (bad > 0) }
' "$TIMES"
