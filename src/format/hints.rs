//! Hints to a source where every read is a round trip (a remote object):
//! which stored bytes a chunk or some of its blocks occupy, handed to
//! [`ByteSource::will_need`](super::byte_source::ByteSource::will_need) before
//! they are read.
//!
//! Apart from [`Array`]'s definition because only a remote source acts on
//! them; for the others [`Array::takes_hints`] says not to work them out.

use super::array::{Array, Container};
use super::byte_source::Need;
use super::chunk::{ChunkLayout, Storage};
use super::frame::ChunkOffset;

impl Array {
    /// Whether the array's source acts on [`Self::will_need_chunks`] hints
    /// (a remote object); for others, working hints out is wasted.
    pub fn takes_hints(&self) -> bool {
        match &self.container {
            Container::Contiguous(source) => source.takes_hints(),
            Container::Sparse { .. } => false,
        }
    }

    /// The stored bytes of chunk `c` in the frame's source: from its offset
    /// to the next chunk's (in file order) or the end of the chunks.
    fn chunk_stored_range(&self, c: u64) -> Option<std::ops::Range<u64>> {
        let Some(ChunkOffset::Stored(pos)) = self.frame.offsets.get(c as usize) else {
            return None;
        };
        let order = self.stored_order.get_or_init(|| {
            let mut v: Vec<u64> = self
                .frame
                .offsets
                .iter()
                .filter_map(|o| {
                    if let ChunkOffset::Stored(p) = o {
                        Some(*p)
                    } else {
                        None
                    }
                })
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        });
        let next = order
            .get(order.partition_point(|&p| p <= *pos))
            .copied()
            .unwrap_or(self.frame.cbytes);
        let limit = (self.frame.header_len + self.frame.cbytes).min(self.frame.frame_len);
        let start = self.frame.header_len + pos;
        let end = (self.frame.header_len + next.max(*pos)).min(limit);
        (start < end).then_some(start..end)
    }

    /// Hint that chunks `chunks` will be read (`need`: how soon): their
    /// stored bytes are handed to the source in one
    /// [`ByteSource::will_need`](super::byte_source::ByteSource::will_need) call
    /// (it may fetch neighbours together). Never blocks; special
    /// chunks and sparse frames are skipped.
    pub fn will_need_chunks(&self, chunks: &[u64], need: Need) {
        if !self.takes_hints() {
            return;
        }
        let ranges: Vec<_> = chunks
            .iter()
            .filter_map(|&c| self.chunk_stored_range(c))
            .collect();
        if !ranges.is_empty() {
            self.frame_source().will_need(&ranges, need);
        }
    }

    /// Hint that blocks `blocks` of chunk `c` (whose layout is `layout`)
    /// will be read (`need`: how soon): their stored bytes exactly, in one call.
    pub fn will_need_blocks(&self, layout: &ChunkLayout, c: u64, blocks: &[u64], need: Need) {
        if !self.takes_hints() || matches!(layout.storage, Storage::Special { .. }) {
            return;
        }
        let Some(chunk) = self.chunk_stored_range(c) else {
            return;
        };
        let ranges: Vec<_> = blocks
            .iter()
            .filter(|&&b| (b as usize) < layout.nblocks())
            .map(|&b| layout.block_source_range(b as usize))
            .filter(|r| !r.is_empty() && chunk.start + r.end <= chunk.end)
            .map(|r| chunk.start + r.start..chunk.start + r.end)
            .collect();
        if !ranges.is_empty() {
            self.frame_source().will_need(&ranges, need);
        }
    }
}
