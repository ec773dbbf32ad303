//! Bytes held in memory presented as a source (an embedded frame already
//! decoded by the layer above, tests, fuzzing).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::format::byte_source::{ByteSource, SliceSource, Version, VersionTag};
use crate::format::PResult;

/// Immutable bytes with a name for messages.
#[derive(Debug, Clone)]
pub struct MemorySource {
    name: String,
    bytes: Arc<[u8]>,
    id: u64,
}

impl MemorySource {
    /// `bytes` known as `name`.
    pub fn new(name: impl Into<String>, bytes: impl Into<Arc<[u8]>>) -> MemorySource {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        MemorySource {
            name: name.into(),
            bytes: bytes.into(),
            id: NEXT.fetch_add(1, Ordering::Relaxed),
        }
    }
}

impl ByteSource for MemorySource {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn opened_version(&self) -> Version {
        Version {
            len: self.len(),
            tag: VersionTag::Fixed(self.id),
        }
    }

    fn version(&self) -> PResult<Version> {
        Ok(self.opened_version())
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
        SliceSource(&self.bytes).read_at(offset, buf)
    }

    fn describe(&self) -> String {
        self.name.clone()
    }
}
