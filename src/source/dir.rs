//! The chunk files of a sparse frame in a local directory.

use std::path::PathBuf;
use std::sync::Arc;

use crate::format::byte_source::{sparse_chunk_name, ByteSource, SparseChunks};
use crate::format::{PResult, Problem};

use super::file::FileSource;

/// Opens `XXXXXXXX.chunk` files of the sparse frame in `dir`.
#[derive(Debug, Clone)]
pub struct DirChunks {
    dir: PathBuf,
}

impl DirChunks {
    /// The sparse frame's directory.
    pub fn new(dir: PathBuf) -> DirChunks {
        DirChunks { dir }
    }
}

impl SparseChunks for DirChunks {
    fn open_chunk(&self, n: u64) -> PResult<Arc<dyn ByteSource>> {
        let name = sparse_chunk_name(n);
        let file = FileSource::open_once(&self.dir.join(&name))
            .map_err(|p| Problem::corrupt("sparse frame", format!("chunk file {name}: {p}")))?;
        Ok(Arc::new(file))
    }
}
