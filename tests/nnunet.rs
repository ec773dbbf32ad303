//! An nnU-Net v2 dataset tree, written by nnU-Net's own `save_case` and
//! `save_seg` (scripts/gen/gen_nnunet.py), mounted: every case opens in
//! SimpleITK through `data.nhdr` and `data.mhd` with its channels, the
//! plans' spacing and exact values (scripts/check/check_nnunet.py decides
//! from the generator's manifest, not from the mount). Runs as root with
//! /dev/fuse; skipped when the test venv has no nnunetv2 (scripts/setup_venv.sh
//! installs it).

mod common;

use std::path::Path;
use std::process::Command;

use common::mount::{python, run_python, serial_with_fuse, Mount};
use common::*;

/// The generated tree in a temporary folder, or `None` (said on stderr)
/// when the test venv cannot import nnU-Net.
fn generate() -> Option<tempfile::TempDir> {
    let probe = Command::new(python())
        .args(["-c", "import nnunetv2.training.dataloading.nnunet_dataset"])
        .output()
        .unwrap();
    if !probe.status.success() {
        eprintln!(
            "skipped: no nnunetv2 in {} (scripts/setup_venv.sh installs it)",
            python().display()
        );
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(python())
        .arg(repo_root().join("scripts/gen/gen_nnunet.py"))
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gen_nnunet.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(dir)
}

fn check(mount: &Path, manifest: &Path, suffix: &str) -> serde_json::Value {
    let out = Command::new(python())
        .arg(repo_root().join("scripts/check/check_nnunet.py"))
        .arg(mount)
        .arg(manifest)
        .arg(suffix)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "check_nnunet.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn simpleitk_opens_every_case_with_its_channels_spacing_and_values() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let Some(dir) = generate() else { return };
    let m = Mount::start(dir.path(), &[]);
    let doc = check(m.path(), &dir.path().join("manifest.json"), "");
    assert_eq!(doc["failures"], serde_json::json!([]), "{doc}");
    // Two datasets × two cases × three configurations × (image, segmentation),
    // plus two next-stage segmentations each: 28 arrays, every check on each.
    assert_eq!(
        doc["counts"],
        serde_json::json!({"arrays": 28, "data.nhdr": 28, "data.mhd": 28, "zarr.json": 28})
    );
}

#[test]
fn plans_that_do_not_fit_are_ignored_and_the_headers_are_as_without_them() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let Some(dir) = generate() else { return };
    let ds = dir.path().join("nnUNet_preprocessed/Dataset001_MR");
    // Malformed plans for one dataset; for the other, a spacing of four
    // entries for the 3d_fullres folder (its arrays have three spatial axes;
    // two entries would be a 2d configuration's, which nnU-Net takes too).
    std::fs::write(ds.join("nnUNetPlans.json"), b"{\"configurations\": {").unwrap();
    let ct = dir
        .path()
        .join("nnUNet_preprocessed/Dataset002_CT/nnUNetPlans.json");
    let mut plans: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&ct).unwrap()).unwrap();
    plans["configurations"]["3d_fullres"]["spacing"] = serde_json::json!([1.5, 1.5, 1.5, 1.5]);
    std::fs::write(&ct, serde_json::to_vec(&plans).unwrap()).unwrap();
    let m = Mount::start(dir.path(), &[]);
    for case in [
        "nnUNet_preprocessed/Dataset001_MR/nnUNetPlans_3d_fullres/mr_000.b2nd",
        "nnUNet_preprocessed/Dataset002_CT/nnUNetPlans_3d_fullres/ct_000.b2nd",
    ] {
        let nhdr = std::fs::read_to_string(m.path().join(case).join("data.nhdr")).unwrap();
        assert!(
            !nhdr.contains("kinds")
                && nhdr.contains("dimension: 4\n")
                && nhdr.contains("spacings: 1 1 1 1\n"),
            "{case}: {nhdr}"
        );
        // The values are there all the same.
        let data = std::fs::metadata(m.path().join(case).join("data")).unwrap();
        assert!(data.len() > 0);
    }
    let log = m.log_text();
    assert!(
        log.contains("not used as nnU-Net plans"),
        "malformed plans logged: {log}"
    );
    assert!(
        log.contains("nnU-Net plans ignored"),
        "mismatch logged: {log}"
    );
}

/// One epoch over a mounted dataset (argv: the source tree, the mount):
/// every source file read byte-exact under its own name, and every case of
/// every configuration read by nnU-Net's own loader
/// (`nnUNetDatasetBlosc2.load_case`, with the cascade's previous-stage
/// segmentations), its values against the generator's manifest. Prints
/// `{"files": N, "cases": M}`.
const EPOCH: &str = r#"
import hashlib, json, os, sys
import numpy as np
from nnunetv2.training.dataloading.nnunet_dataset import nnUNetDatasetBlosc2
src, mnt = sys.argv[1], sys.argv[2]
files = 0
for root, _, names in os.walk(src):
    for n in names:
        p = os.path.join(root, n)
        rel = os.path.relpath(p, src)
        with open(p, "rb") as a, open(os.path.join(mnt, rel), "rb") as b:
            assert a.read() == b.read(), rel
        files += 1
manifest = {e["path"]: e for e in json.load(open(os.path.join(src, "manifest.json")))}
sha = lambda a: hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
cases = 0
for ds in ("Dataset001_MR", "Dataset002_CT"):
    pre = f"nnUNet_preprocessed/{ds}"
    prev = os.path.join(mnt, f"nnUNet_results/{ds}/nnUNetTrainer__nnUNetPlans__3d_lowres/predicted_next_stage/3d_cascade_fullres")
    for conf in ("nnUNetPlans_3d_fullres", "nnUNetPlans_3d_lowres", "nnUNetPlans_2d"):
        folder = os.path.join(mnt, pre, conf)
        cascade = prev if conf == "nnUNetPlans_3d_fullres" else None
        ids = nnUNetDatasetBlosc2.get_identifiers(folder)
        loader = nnUNetDatasetBlosc2(folder, ids, folder_with_segs_from_previous_stage=cascade)
        for i in ids:
            data, seg, seg_prev, props = loader.load_case(i)
            assert sha(data[:]) == manifest[f"{pre}/{conf}/{i}.b2nd"]["sha256"], i
            assert sha(seg[:]) == manifest[f"{pre}/{conf}/{i}_seg.b2nd"]["sha256"], i
            if cascade:
                rel = os.path.relpath(os.path.join(cascade, i + ".b2nd"), mnt)
                assert sha(seg_prev[:]) == manifest[rel]["sha256"], i
            assert props["spacing"], i
            cases += 1
print(json.dumps({"files": files, "cases": cases}))
"#;

/// With `--originals`: every file of the source is shown byte-exact under
/// its own name, nnU-Net's own loader (`nnUNetDatasetBlosc2.load_case`,
/// with the cascade's previous-stage segmentations) reads every case
/// exactly, and the folders of views (`NAME.d/`) keep their geometry.
#[test]
fn with_originals_nnunets_loader_reads_every_case_and_the_views_keep_their_geometry() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let Some(dir) = generate() else { return };
    let m = Mount::start(dir.path(), &["--originals"]);
    let code = EPOCH;
    let out = run_python(
        code,
        &[dir.path().to_str().unwrap(), m.path().to_str().unwrap()],
    );
    let got: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    // 2 datasets: 4 json + 2 .nii.gz, 3 folders × 2 cases × 3 files, the trainer's
    // 2 json + 2 segmentations = 28 each; and manifest.json.
    assert_eq!(got, serde_json::json!({"files": 57, "cases": 12}), "{out}");
    let doc = check(m.path(), &dir.path().join("manifest.json"), ".d");
    assert_eq!(doc["failures"], serde_json::json!([]), "{doc}");
}

/// `.stats` in one read call (it is rendered afresh at each read).
fn stats(m: &Mount) -> serde_json::Value {
    use std::io::Read;
    let mut buf = vec![0; 1 << 20];
    let mut file = std::fs::File::open(m.path().join(".stats")).unwrap();
    let n = file.read(&mut buf).unwrap();
    serde_json::from_slice(&buf[..n]).unwrap()
}

fn counter(stats: &serde_json::Value, path: &[&str]) -> u64 {
    path.iter()
        .fold(stats, |v, k| &v[*k])
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {path:?} in {stats}"))
}

/// The mount's GETs once none has been sent for 300 ms (the prefetcher's
/// and the disk cache's writer done), its disk cache idle.
fn settled_gets(m: &Mount) -> u64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut last = None;
    loop {
        let st = stats(m);
        let busy = counter(&st, &["disk_cache", "queued_bytes"]) > 0
            || counter(&st, &["disk_cache", "wanted_bytes"]) > 0;
        let gets = counter(&st, &["remote", "gets"]);
        if !busy && last == Some(gets) {
            return gets;
        }
        assert!(std::time::Instant::now() < deadline, "never idle: {st}");
        last = Some(gets);
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
}

/// The same dataset in S3 (moto), mounted with `--originals --disk-cache`:
/// every file byte-exact, nnU-Net's loader reads every case, SimpleITK
/// sees the geometry as it does locally; a second epoch, in the same mount
/// and after a remount over the same cache folder, sends no GET.
#[test]
fn from_s3_with_the_disk_cache_a_second_epoch_sends_no_get() {
    use common::moto::{env_refs, Moto};
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let Some(moto) = Moto::start("nnunet_from_s3") else {
        return;
    };
    let Some(dir) = generate() else { return };
    moto.upload_dir("nnunet", dir.path(), &[]);
    let cache = tempfile::tempdir().unwrap();
    let env = moto.env();
    let env = env_refs(&env);
    let args = [
        "--originals",
        "--disk-cache",
        cache.path().to_str().unwrap(),
    ];
    let url = Path::new("s3://nnunet/");
    let src = dir.path().to_str().unwrap();
    let manifest = dir.path().join("manifest.json");
    let epoch = |m: &Mount| {
        let out = run_python(EPOCH, &[src, m.path().to_str().unwrap()]);
        let got: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(got, serde_json::json!({"files": 57, "cases": 12}), "{out}");
        let doc = check(m.path(), &manifest, ".d");
        assert_eq!(doc["failures"], serde_json::json!([]), "{doc}");
        assert_eq!(doc["counts"]["data.mhd"], 28, "{doc}");
    };
    {
        let m = Mount::start_with_env(url, &args, &env);
        epoch(&m);
        let first = settled_gets(&m);
        assert!(first > 0, "the first epoch reads S3: {}", stats(&m));
        epoch(&m);
        let second = settled_gets(&m) - first;
        eprintln!("first epoch: {first} GETs; second, same mount: {second}");
        assert_eq!(second, 0, "GETs in the second epoch: {}", stats(&m));
    }
    let m = Mount::start_with_env(url, &args, &env);
    epoch(&m);
    let st = stats(&m);
    let again = settled_gets(&m);
    eprintln!(
        "after a remount: {again} GETs, {} HEADs, {} LISTs; disk {}",
        counter(&st, &["remote", "heads"]),
        counter(&st, &["remote", "lists"]),
        st["disk_cache"]
    );
    assert_eq!(again, 0, "GETs in an epoch after a remount: {st}");
}
