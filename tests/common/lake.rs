//! A lake of small arrays for the scale tests (`tests/lake.rs` in-process,
//! `tests/lake_mount.rs` through a real mount): a few templates made by the
//! python-blosc2 oracle with the numpy bytes (`.raw`) and `np.save` files
//! (`.npy`) they were made from, copied under many names.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Templates: name → (shape, dtype, how stored).
pub const ORACLE: &str = r#"
import json, os, sys
import numpy as np
import blosc2

out = sys.argv[1]
rng = np.random.default_rng(29)
info = {}
def save(name, arr, contiguous=True, **kw):
    path = os.path.join(out, name + ".b2nd")
    blosc2.asarray(arr, urlpath=path, mode="w", contiguous=contiguous, **kw)
    with open(os.path.join(out, name + ".raw"), "wb") as f:
        f.write(np.ascontiguousarray(arr).tobytes())
    np.save(os.path.join(out, name + ".npy"), arr)
    info[name] = {"shape": list(arr.shape), "dtype": arr.dtype.str}

save("f8", (rng.standard_normal((23, 17)) * 10).round(3), chunks=(8, 8), blocks=(4, 4),
     cparams=blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=5, filters=[blosc2.Filter.SHUFFLE]))
save("i4", np.arange(1000, dtype="<i4") * 7 - 300, chunks=(300,), blocks=(64,),
     cparams=blosc2.CParams(codec=blosc2.Codec.LZ4, clevel=5, filters=[blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE]))
save("u1", rng.integers(0, 255, (5, 6, 7), dtype="u1"), chunks=(3, 4, 5), blocks=(2, 2, 3),
     cparams=blosc2.CParams(codec=blosc2.Codec.BLOSCLZ, clevel=5, filters=[blosc2.Filter.BITSHUFFLE]))
save("sparse", rng.integers(-999, 999, (130,), dtype="<i2"), contiguous=False, chunks=(50,), blocks=(10,),
     cparams=blosc2.CParams(codec=blosc2.Codec.ZLIB, clevel=5))
print(json.dumps(info))
"#;

pub const TEMPLATES: [&str; 4] = ["f8", "i4", "u1", "sparse"];

pub fn python() -> PathBuf {
    super::oracle_python()
}

/// The templates, made once per test binary.
pub struct Templates {
    pub dir: tempfile::TempDir,
    pub info: serde_json::Value,
}

pub fn templates() -> &'static Templates {
    static MADE: OnceLock<Templates> = OnceLock::new();
    MADE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(python())
            .arg("-c")
            .arg(ORACLE)
            .arg(dir.path())
            .output()
            .expect("run the python oracle");
        assert!(
            out.status.success(),
            "oracle failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let info = serde_json::from_slice(&out.stdout).unwrap();
        Templates { dir, info }
    })
}

impl Templates {
    pub fn raw(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.dir.path().join(format!("{name}.raw"))).unwrap()
    }
    pub fn npy(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.dir.path().join(format!("{name}.npy"))).unwrap()
    }
    /// Copy template `name` (a file, or a sparse frame's folder) to `to`.
    pub fn copy(&self, name: &str, to: &Path) {
        let from = self.dir.path().join(format!("{name}.b2nd"));
        if from.is_dir() {
            std::fs::create_dir_all(to).unwrap();
            for item in std::fs::read_dir(&from).unwrap() {
                let item = item.unwrap();
                std::fs::copy(item.path(), to.join(item.file_name())).unwrap();
            }
        } else {
            std::fs::copy(&from, to).unwrap();
        }
    }
}

/// `n` arrays in folders of `per_folder`: `dNN/aNNNN.b2nd`, template `i % 4`.
pub fn lake(n: usize, per_folder: usize) -> (tempfile::TempDir, Vec<(String, &'static str)>) {
    let src = tempfile::tempdir().unwrap();
    let arrays = lake_in(src.path(), n, per_folder);
    (src, arrays)
}

/// [`lake`] written into `dir`: the arrays' paths (relative) and templates.
pub fn lake_in(dir: &Path, n: usize, per_folder: usize) -> Vec<(String, &'static str)> {
    let t = templates();
    let mut arrays = Vec::new();
    for i in 0..n {
        let folder = format!("d{:02}", i / per_folder);
        std::fs::create_dir_all(dir.join(&folder)).unwrap();
        let rel = format!("{folder}/a{i:04}.b2nd");
        let name = TEMPLATES[i % TEMPLATES.len()];
        t.copy(name, &dir.join(&rel));
        arrays.push((rel, name));
    }
    arrays
}
