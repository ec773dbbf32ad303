//! Files whose values blosc2fs must not serve, and codecs it cannot decode.
//!
//! The fixtures in `tests/fixtures/elsewhere/` were written by python-blosc2
//! 4.14.1 (`scripts/gen/gen_elsewhere_fixtures.py`): a saved lazy expression, a
//! legacy LazyArray, two Proxy caches (one recording a Caterva2 auth token),
//! a Caterva2 HDF5 placeholder, and arrays compressed with a user codec, a
//! plugin codec id (openzl) and a user filter. Their chunks decode to zeros or
//! not at all; every read must fail with an error that says why, and the
//! tree must show only `meta.json`, which says where the values are.

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use blosc2fs::format::Problem;
use blosc2fs::fs::{Attr, Filesystem, FsConfig, FsError};
use blosc2fs::read::planner::layout_budget;
use blosc2fs::read::{Blocks, Planner, Stats};
use blosc2fs::source::open_array;
use common::mount::binary;
use common::*;

fn dir() -> PathBuf {
    fixtures_dir().join("elsewhere")
}

fn manifest() -> serde_json::Map<String, serde_json::Value> {
    read_manifest(&dir())
}

fn filesystem(source: &Path) -> Filesystem {
    let budget = 8 << 20;
    let blocks = Arc::new(Blocks::new(
        budget,
        layout_budget(budget),
        Arc::new(Stats::default()),
    ));
    Filesystem::new(
        source,
        Arc::new(Planner::new(blocks, None, 1 << 20)),
        FsConfig::default(),
    )
    .unwrap()
}

fn walk(fs: &Filesystem, path: &str) -> Result<Attr, FsError> {
    let mut attr = fs.getattr(1)?;
    for part in path.split('/').filter(|p| !p.is_empty()) {
        attr = fs.lookup(attr.ino, OsStr::new(part))?;
    }
    Ok(attr)
}

fn names(fs: &Filesystem, ino: u64) -> Vec<String> {
    let fh = fs.opendir(ino).unwrap();
    let names = fs
        .readdir(ino, fh, 0)
        .unwrap()
        .into_iter()
        .map(|(_, _, n)| n.to_string_lossy().into_owned())
        .collect();
    fs.releasedir(fh);
    names
}

fn read_file(fs: &Filesystem, path: &str) -> Vec<u8> {
    let opened = fs.open(walk(fs, path).unwrap().ino, false).unwrap();
    let bytes = fs.read(opened.fh, 0, 1 << 20).unwrap();
    fs.release(opened.fh);
    bytes
}

fn meta_of(name: &str) -> serde_json::Value {
    let array = open_array(&dir().join(name)).unwrap();
    blosc2fs::views::meta_json::render(&array)
}

fn elsewhere_cases() -> Vec<(String, serde_json::Value)> {
    manifest()
        .into_iter()
        .filter(|(_, e)| e.get("elsewhere").is_some())
        .collect()
}

fn unsupported_cases() -> Vec<(String, serde_json::Value)> {
    manifest()
        .into_iter()
        .filter(|(_, e)| e.get("unsupported").is_some())
        .collect()
}

#[test]
fn every_case_of_the_generator_is_present() {
    assert_eq!(elsewhere_cases().len(), 5);
    assert_eq!(unsupported_cases().len(), 3);
}

#[test]
fn arrays_whose_values_live_elsewhere_refuse_every_read() {
    for (name, entry) in elsewhere_cases() {
        let array = open_array(&dir().join(&name)).unwrap();
        let why = array
            .values_elsewhere()
            .unwrap_or_else(|| panic!("{name}: not recognised as a placeholder"));
        assert_eq!(why.marker(), entry["elsewhere"].as_str().unwrap(), "{name}");
        let err = read_all(&array, 4096).expect_err(&name);
        assert!(
            matches!(err, Problem::ValuesElsewhere(_)),
            "{name}: {err:?}"
        );
        for c in 0..array.nchunks() {
            assert!(
                matches!(array.decode_chunk(c), Err(Problem::ValuesElsewhere(_))),
                "{name} chunk {c}"
            );
        }
    }
}

#[test]
fn operands_are_ordinary_arrays_that_read_exactly() {
    for name in ["a.b2nd", "b.b2nd"] {
        let entry = &manifest()[name];
        let array = open_array(&dir().join(name)).unwrap();
        assert!(array.values_elsewhere().is_none());
        let bytes = read_all(&array, 4096).unwrap();
        assert_eq!(bytes.len() as u64, entry["size"].as_u64().unwrap());
        assert_eq!(
            sha256_hex(&bytes),
            entry["sha256"].as_str().unwrap(),
            "{name}"
        );
        let meta = meta_of(name);
        assert_eq!(
            meta["values"],
            serde_json::json!({"stored": true, "uninitialized_chunks": 0})
        );
        assert_eq!(meta["decodable"], true);
    }
}

#[test]
fn meta_json_gives_the_recipe_and_hides_secrets() {
    for (name, entry) in elsewhere_cases() {
        let meta = meta_of(&name);
        let values = &meta["values"];
        assert_eq!(values["stored"], false, "{name}");
        assert_eq!(values["marker"], entry["elsewhere"], "{name}");
        if let Some(expression) = entry.get("expression") {
            assert_eq!(&values["expression"], expression, "{name}");
        }
        if let Some(operands) = entry.get("operands") {
            let shown = values["operands"].to_string();
            for operand in operands.as_array().unwrap() {
                assert!(
                    shown.contains(operand.as_str().unwrap()),
                    "{name}: operand {operand} missing from {shown}"
                );
            }
        }
        let text = serde_json::to_string(&meta).unwrap();
        if let Some(secret) = entry.get("secret").and_then(|s| s.as_str()) {
            assert!(!text.contains(secret), "{name}: the token is shown: {text}");
            assert!(text.contains("<redacted>"), "{name}");
        }
    }
    assert_eq!(
        meta_of("hdf5_placeholder.b2nd")["values"]["hdf5_dataset"],
        "/grp/temps"
    );
    assert_eq!(
        meta_of("proxy.b2nd")["values"]["source"]["source_kind"],
        "local"
    );
}

/// The saved expression whose operands sit beside it is computed (see
/// tests/computed.rs); every other file here holds no values the mount can
/// give.
const COMPUTED: &str = "expr.b2nd";

#[test]
fn tree_shows_only_meta_json_for_arrays_without_values() {
    let fs = filesystem(&dir());
    for (name, _) in elsewhere_cases().into_iter().filter(|(n, _)| n != COMPUTED) {
        let folder = walk(&fs, &name).unwrap();
        assert_eq!(names(&fs, folder.ino), [".", "..", "meta.json"], "{name}");
        for missing in ["data", "data.npy", "chunks"] {
            let err = walk(&fs, &format!("{name}/{missing}")).expect_err(missing);
            assert_eq!(err.errno(), libc::ENOENT, "{name}/{missing}");
        }
        let meta: serde_json::Value =
            serde_json::from_slice(&read_file(&fs, &format!("{name}/meta.json"))).unwrap();
        assert_eq!(meta["values"]["stored"], false);
    }
    // The operands beside them are ordinary arrays with their data files.
    let a = walk(&fs, "a.b2nd").unwrap();
    assert!(names(&fs, a.ino).contains(&"data".to_string()));
    // The expression over them, `(o0 * 2) + o1` of two (10, 10) float64 arrays, reads as
    // that arithmetic on the operands' bytes (float64 throughout: exact).
    let meta: serde_json::Value =
        serde_json::from_slice(&read_file(&fs, &format!("{COMPUTED}/meta.json"))).unwrap();
    assert_eq!(
        (
            meta["values"]["computed"].clone(),
            meta["values"]["stored"].clone()
        ),
        (serde_json::json!(true), serde_json::json!(false))
    );
    assert_eq!(meta["dtype"], "<f8");
    let f8 = |bytes: Vec<u8>| {
        bytes
            .chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect::<Vec<_>>()
    };
    let (a, b, e) = (
        f8(read_file(&fs, "a.b2nd/data")),
        f8(read_file(&fs, "b.b2nd/data")),
        f8(read_file(&fs, &format!("{COMPUTED}/data"))),
    );
    assert_eq!(e.len(), 100);
    let want: Vec<f64> = a.iter().zip(&b).map(|(a, b)| a * 2.0 + b).collect();
    assert_eq!(e, want);
    // The legacy LazyArray here is a UDF: named as such, not computed.
    let meta: serde_json::Value =
        serde_json::from_slice(&read_file(&fs, "lazyarray.b2nd/meta.json")).unwrap();
    assert!(
        meta["values"]["why_not_computed"]
            .as_str()
            .unwrap()
            .contains("user-defined function"),
        "{meta}"
    );
}

/// Whether this build decodes OpenZL (the default feature `openzl-c`).
/// Then `openzl38.b2nd`, whose streams are another codec's bytes under
/// OpenZL's id, is a corrupt OpenZL file rather than an unsupported codec:
/// still EIO, with the reason named.
fn openzl_decoded() -> bool {
    blosc2fs::format::codec_support(38).decoded()
}

/// What a read of `openzl38.b2nd` fails with in this build.
fn openzl38_error() -> String {
    if openzl_decoded() {
        "openzl stream corrupt: not an OpenZL frame".to_string()
    } else {
        manifest()["openzl38.b2nd"]["unsupported"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

#[test]
fn unsupported_codecs_and_filters_are_named_in_meta_json_and_in_the_read_error() {
    for (name, entry) in unsupported_cases() {
        if name == "openzl38.b2nd" && openzl_decoded() {
            let meta = meta_of(&name);
            assert_eq!(meta["decodable"], true, "{name}");
            let array = open_array(&dir().join(&name)).unwrap();
            let err = read_all(&array, 4096).expect_err(&name);
            assert!(err.to_string().contains(&openzl38_error()), "{name}: {err}");
            continue;
        }
        let expected = entry["unsupported"].as_str().unwrap();
        let meta = meta_of(&name);
        assert_eq!(meta["decodable"], false, "{name}");
        assert_eq!(meta["unsupported"], serde_json::json!([expected]), "{name}");
        let array = open_array(&dir().join(&name)).unwrap();
        let err = read_all(&array, 4096).expect_err(&name);
        assert!(err.to_string().ends_with(expected), "{name}: {err}");
    }
    assert_eq!(meta_of("openzl38.b2nd")["codec"], "openzl");
    assert_eq!(meta_of("openzl38.b2nd")["codec_decoded"], openzl_decoded());
    assert_eq!(meta_of("filter200.b2nd")["codec_decoded"], true);
    assert_eq!(meta_of("filter200.b2nd")["filters"][0]["decoded"], false);
}

#[test]
fn data_of_an_unsupported_codec_gives_eio_and_meta_json_still_reads() {
    let fs = filesystem(&dir());
    let data = walk(&fs, "openzl38.b2nd/data").unwrap();
    let opened = fs.open(data.ino, false).unwrap();
    let err = fs.read(opened.fh, 0, 4096).expect_err("openzl data");
    assert_eq!(err.errno(), libc::EIO);
    assert!(err.to_string().contains(&openzl38_error()), "{err}");
    fs.release(opened.fh);
    let meta: serde_json::Value =
        serde_json::from_slice(&read_file(&fs, "openzl38.b2nd/meta.json")).unwrap();
    assert_eq!(meta["codec"], "openzl");
}

#[test]
fn cat_refuses_with_a_message_naming_the_file_and_the_reason() {
    for (name, expected) in [
        (
            "lazyarray.b2nd",
            "not computed: not evaluated: a LazyArray of a user-defined function".to_string(),
        ),
        (
            "proxy.b2nd",
            "values are not stored in this file".to_string(),
        ),
        ("openzl38.b2nd", openzl38_error()),
    ] {
        let out = Command::new(binary())
            .arg("cat")
            .arg(dir().join(name))
            .output()
            .unwrap();
        assert!(!out.status.success(), "{name}");
        assert!(
            out.stdout.is_empty(),
            "{name}: cat wrote {} bytes",
            out.stdout.len()
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(name) && stderr.contains(&expected),
            "{name}: {stderr}"
        );
    }
}
