//! Saved lazy expressions read as their values, in-process: the cases
//! scripts/gen/gen_expressions.py writes with python-blosc2 4.14.1 (operands of
//! other grids, broadcasting, nested expressions, a store member, the
//! legacy form, a private operand) must read exactly as python-blosc2
//! evaluates them (within the tolerances for transcendental
//! functions), through `data`, small reads and chunk files; the refused
//! ones (operands outside the tree, cycles, hostile expressions) must
//! present `meta.json` alone, saying why; an operand that changes gives new
//! values to new lookups. With `allow_other`, a computed array's entries
//! take what every file it reads allows (the kernel's side of that is
//! tests/permissions.rs).

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

use blosc2fs::fs::{Filesystem, FsConfig, FsError};
use blosc2fs::read::planner::layout_budget;
use blosc2fs::read::{Blocks, Planner, Stats};
use common::inproc::*;
use common::*;

fn filesystem(source: &Path) -> Filesystem {
    filesystem_with(source, FsConfig::default())
}

fn filesystem_with(source: &Path, config: FsConfig) -> Filesystem {
    let stats = Arc::new(Stats::default());
    let blocks = Arc::new(Blocks::new(16 << 20, layout_budget(16 << 20), stats));
    Filesystem::new(
        source,
        Arc::new(Planner::new(blocks, None, 1 << 20)),
        config,
    )
    .unwrap()
}

/// The cases, written now into a temporary folder.
fn generate() -> (
    tempfile::TempDir,
    serde_json::Map<String, serde_json::Value>,
) {
    let dir = tempfile::tempdir().unwrap();
    gen_expressions(&oracle_python(), dir.path());
    let manifest = read_manifest(dir.path());
    (dir, manifest)
}

fn read_path(fs: &Filesystem, path: &str) -> Result<Vec<u8>, FsError> {
    read_ino(fs, walk(fs, path)?.ino)
}

fn meta(fs: &Filesystem, dir: &str) -> serde_json::Value {
    serde_json::from_slice(&read_path(fs, &format!("{dir}/meta.json")).unwrap()).unwrap()
}

/// Compare `got` with `want` (C-order items of `dtype`): exactly, or for
/// floats within `rtol` relative to the value or, near zero (where a sum
/// cancels), to the array's mean magnitude; NaN where NaN, infinities equal.
fn agree(got: &[u8], want: &[u8], dtype: &str, rtol: f64) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} bytes, expected {}", got.len(), want.len()));
    }
    if rtol == 0.0 || got == want {
        return if got == want {
            Ok(())
        } else {
            Err("bytes differ".into())
        };
    }
    let size = match dtype {
        "<f8" => 8,
        "<f4" => 4,
        other => return Err(format!("bytes differ ({other} is compared exactly)")),
    };
    let value = |b: &[u8]| {
        if size == 8 {
            f64::from_le_bytes(b.try_into().unwrap())
        } else {
            f32::from_le_bytes(b.try_into().unwrap()) as f64
        }
    };
    let finite: Vec<f64> = want
        .chunks(size)
        .map(value)
        .filter(|w| w.is_finite())
        .collect();
    let mean = finite.iter().map(|w| w.abs()).sum::<f64>() / finite.len().max(1) as f64;
    for (i, (g, w)) in got.chunks(size).zip(want.chunks(size)).enumerate() {
        let (g, w) = (value(g), value(w));
        let ok = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= rtol * w.abs().max(mean);
        if !ok {
            return Err(format!(
                "item {i}: {g:e} vs {w:e} (relative {:e})",
                ((g - w) / w).abs()
            ));
        }
    }
    Ok(())
}

#[test]
fn saved_expressions_read_as_python_blosc2_evaluates_them() {
    let (dir, manifest) = generate();
    let fs = filesystem(&dir.path().join("src"));
    let mut failures = Vec::new();
    let mut computed = 0;
    for (name, entry) in &manifest {
        let path = entry["path"].as_str().unwrap();
        let Some(expected) = entry["expected"].as_str() else {
            continue;
        };
        computed += 1;
        let want = std::fs::read(
            dir.path()
                .join("expected")
                .join(expected.replace(".npy", ".bin")),
        )
        .unwrap();
        let dtype = entry["dtype"].as_str().unwrap();
        let rtol = entry["rtol"].as_f64().unwrap();
        let values = &meta(&fs, path)["values"];
        if values["computed"] != true {
            failures.push(format!("{name}: not computed: {values}"));
            continue;
        }
        match read_path(&fs, &format!("{path}/data")) {
            Ok(got) => {
                if let Err(e) = agree(&got, &want, dtype, rtol) {
                    failures.push(format!("{name}: data: {e}"));
                }
            }
            Err(e) => failures.push(format!("{name}: data: {e:?}")),
        }
        // Small reads across block edges give the same bytes as the whole read.
        let data = walk(&fs, &format!("{path}/data")).unwrap();
        let fh = fs.open(data.ino, false).unwrap().fh;
        let mut pieces = Vec::new();
        let mut at = 0u64;
        while at < data.size {
            let got = fs.read(fh, at, 37).unwrap();
            assert!(!got.is_empty(), "{name}: short read at {at}");
            at += got.len() as u64;
            pieces.extend(got);
        }
        fs.release(fh);
        if let Err(e) = agree(&pieces, &want, dtype, rtol) {
            failures.push(format!("{name}: 37-byte reads: {e}"));
        }
        // A first-class array: the same folder as a stored one, chunks of the saved grid.
        let listed: Vec<String> = children(&fs, walk(&fs, path).unwrap().ino)
            .into_iter()
            .map(|(_, _, n)| n)
            .collect();
        for file in ["meta.json", "data", "data.npy", "data.txt", "chunks"] {
            if !listed.contains(&file.to_string()) {
                failures.push(format!("{name}: no {file} in {listed:?}"));
            }
        }
        let shape: Vec<u64> = entry["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let chunks: Vec<u64> = entry["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let nchunks: u64 = shape
            .iter()
            .zip(&chunks)
            .map(|(s, c)| s.div_ceil(*c))
            .product();
        let chunk_files = children(&fs, walk(&fs, &format!("{path}/chunks")).unwrap().ino)
            .into_iter()
            .filter(|(_, _, n)| n != ".zarray")
            .count() as u64;
        if chunk_files != nchunks {
            failures.push(format!(
                "{name}: {chunk_files} chunk files, the saved grid has {nchunks}"
            ));
        }
        let npy = read_path(&fs, &format!("{path}/data.npy")).unwrap();
        if !String::from_utf8_lossy(&npy[..npy.len().min(128)])
            .contains(&format!("'descr': '{}'", dtype.replace("<b1", "|b1")))
        {
            failures.push(format!(
                "{name}: data.npy header {:?}",
                String::from_utf8_lossy(&npy[..80])
            ));
        }
    }
    assert_eq!(computed, 16, "the generator's computed cases");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn refused_expressions_show_meta_json_saying_why_and_no_values() {
    let (dir, manifest) = generate();
    let fs = filesystem(&dir.path().join("src"));
    let mut refused = 0;
    for (name, entry) in &manifest {
        let Some(why) = entry["why"].as_str() else {
            continue;
        };
        refused += 1;
        let path = entry["path"].as_str().unwrap();
        let values = &meta(&fs, path)["values"];
        assert_eq!(values["computed"], false, "{name}: {values}");
        let said = values["why_not_computed"].as_str().unwrap_or_default();
        assert!(said.contains(why), "{name}: {said:?} does not say {why:?}");
        assert!(
            said.len() < 400,
            "{name}: the reason repeats the whole expression ({} bytes)",
            said.len()
        );
        let listed: Vec<String> = children(&fs, walk(&fs, path).unwrap().ino)
            .into_iter()
            .map(|(_, _, n)| n)
            .collect();
        assert_eq!(listed, ["meta.json"], "{name}");
        assert!(
            matches!(walk(&fs, &format!("{path}/data")), Err(FsError::NotFound)),
            "{name}"
        );
    }
    assert_eq!(refused, 18, "the generator's refused cases");
    // The operand outside the tree exists and holds values: only the rule keeps it out.
    assert!(dir.path().join("outside/a.b2nd").is_file());
}

/// An operand replaced on disk: a new lookup of the expression computes
/// from the new operand; the handle opened before keeps its version's
/// bytes (or fails), never a mix.
#[test]
fn a_changed_operand_gives_new_values_to_new_lookups() {
    let (dir, manifest) = generate();
    let src = dir.path().join("src");
    let fs = filesystem(&src);
    let path = manifest["e_arith"]["path"].as_str().unwrap().to_string();
    let before = std::fs::read(dir.path().join("expected/e_arith.bin")).unwrap();
    let after = std::fs::read(dir.path().join("expected/e_arith_b2.bin")).unwrap();
    assert_ne!(before, after);
    assert_eq!(read_path(&fs, &format!("{path}/data")).unwrap(), before);
    let old = walk(&fs, &format!("{path}/data")).unwrap();
    let fh = fs.open(old.ino, false).unwrap().fh;
    std::fs::rename(src.join("ops/b2.b2nd"), src.join("ops/b.b2nd")).unwrap();
    let now = walk(&fs, &format!("{path}/data")).unwrap();
    assert_ne!(now.ino, old.ino, "a changed operand makes a new version");
    assert_eq!(read_ino(&fs, now.ino).unwrap(), after);
    // The old handle: the blocks it computed before are cached; the rest fail or are old.
    match fs.read(fh, 0, before.len() as u32) {
        Ok(bytes) => assert_eq!(bytes, before),
        Err(e) => assert_eq!(e.errno(), libc::EIO, "{e:?}"),
    }
    fs.release(fh);
}

/// With `allow_other`, a computed array's folder and files take what its
/// expression and every file it reads allow together (docs/semantics.md,
/// "Computed arrays"): a 0600 operand or store leaves them to its owner, a
/// 0700 folder on the way to the operands too; an operand of another owner
/// that only its owner may read leaves no reader, and the expression is
/// refused, saying so; a chown or chmod of an operand makes a new version.
#[test]
fn with_allow_other_computed_arrays_show_what_every_file_they_read_allows() {
    let (dir, manifest) = generate();
    let src = dir.path().join("src");
    let fs = filesystem_with(
        &src,
        FsConfig {
            allow_other: true,
            ..FsConfig::default()
        },
    );
    let owner = std::fs::metadata(&src).unwrap();
    let owner = Some((owner.uid(), owner.gid()));
    // (folder, chunks/) and (meta.json, data, data.npy, data.txt) of `path`.
    let modes = |path: &str| {
        let perm = |rel: &str| walk(&fs, &format!("{path}{rel}")).unwrap().perm;
        let files = ["/meta.json", "/data", "/data.npy", "/data.txt"].map(perm);
        assert!(files.iter().all(|m| *m == files[0]), "{path}: {files:?}");
        assert_eq!(perm(""), perm("/chunks"), "{path}");
        (perm(""), files[0])
    };
    let values = |path: &str| meta(&fs, path)["values"].clone();
    let mut computed = 0;
    for (name, entry) in &manifest {
        let Some(expected) = entry["expected"].as_str() else {
            continue;
        };
        computed += 1;
        let path = entry["path"].as_str().unwrap();
        assert_eq!(values(path)["computed"], true, "{name}");
        // e_private reads a 0600 operand, e_store a DictStore (written 0600).
        let private = matches!(name.as_str(), "e_private" | "e_store");
        let want = if private {
            (0o500, 0o400)
        } else {
            (0o555, 0o444)
        };
        assert_eq!(modes(path), want, "{name}");
        for rel in ["", "/data", "/meta.json"] {
            let attr = walk(&fs, &format!("{path}{rel}")).unwrap();
            assert_eq!(attr.owner, owner, "{name}{rel}: the expression's owner");
        }
        let want = std::fs::read(
            dir.path()
                .join("expected")
                .join(expected.replace(".npy", ".bin")),
        );
        let rtol = entry["rtol"].as_f64().unwrap();
        let got = read_path(&fs, &format!("{path}/data")).unwrap();
        agree(&got, &want.unwrap(), entry["dtype"].as_str().unwrap(), rtol)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    assert_eq!(computed, 16);

    // A 0700 folder on the way to the operands: their owner alone may pass.
    let ops = src.join("ops");
    std::fs::set_permissions(&ops, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(modes("e_arith.b2nd"), (0o500, 0o400));
    assert_eq!(modes("sub/e_nested.b2nd"), (0o500, 0o400));
    std::fs::set_permissions(&ops, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(modes("e_arith.b2nd"), (0o555, 0o444));

    // Another owner's private operand (chown needs root).
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped the operand of another owner: chown needs root");
        return;
    }
    let private = src.join("ops/private.b2nd");
    std::os::unix::fs::chown(&private, Some(4242), Some(4242)).unwrap();
    let refused = values("e_private.b2nd");
    assert_eq!(refused["computed"], false, "{refused}");
    let why = refused["why_not_computed"].as_str().unwrap();
    assert!(
        why.contains("no reader left: ops/private.b2nd (owner 4242, group 4242, mode 0600)"),
        "{why}"
    );
    // meta.json alone, with the expression's own access, says why.
    let perm = |rel: &str| walk(&fs, &format!("e_private.b2nd{rel}")).unwrap().perm;
    assert_eq!((perm(""), perm("/meta.json")), (0o555, 0o444));
    assert!(matches!(
        walk(&fs, "e_private.b2nd/data"),
        Err(FsError::NotFound)
    ));
    // Readable by all: nothing withheld, whoever owns it.
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(values("e_private.b2nd")["computed"], true);
    assert_eq!(modes("e_private.b2nd"), (0o555, 0o444));
}
