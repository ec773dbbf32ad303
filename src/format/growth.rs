//! Which state of its source an array trusts, and how that trust moves on
//! when the source changes under it.
//!
//! Every read checks the source is still in the trusted version
//! (`confirm_trusted`). A file that grew by appended chunks
//! (python-blosc2 appends in place) is still trusted once
//! [`Array::accept_growth`] has checked that the chunks it knows are where
//! and what they were; chunks rewritten in place are marked so that only
//! their reads fail. The trusted version also names the array's bytes for
//! the disk cache ([`Array::version_identity`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use super::array::{Array, Container, Trust};
use super::byte_source::{ByteSource, VersionTag};
use super::chunk::header::{ChunkHeader, EXTENDED_HEADER_LEN};
use super::chunk::{BlockContext, ChunkLayout, Storage};
use super::chunk_reads::read_and_decode;
use super::error::{PResult, Problem};
use super::frame::{ChunkOffset, Frame};

/// Bytes of a block served before, for [`Array::accept_growth`] to compare:
/// decoded bytes `[offset, offset + bytes.len())` of block `block` of chunk
/// `chunk`.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    /// Chunk number.
    pub chunk: u64,
    /// Block number within the chunk.
    pub block: u64,
    /// Where `bytes` start in the decoded block.
    pub offset: usize,
    /// The bytes served.
    pub bytes: &'a [u8],
}

impl Array {
    /// Whether the source is still in the version this array trusts, and
    /// chunk `c` still as it was.
    pub(super) fn confirm_trusted(&self, c: u64) -> PResult<()> {
        let source = self.frame_source();
        let now = source.version()?;
        let trust = self.trusted.lock();
        if now != trust.version {
            return Err(Problem::SourceChanged(format!(
                "{} is no longer the version opened",
                source.describe()
            )));
        }
        if trust.rewritten.contains(&c) {
            return Err(Problem::SourceChanged(format!(
                "{} was rewritten where chunk {c} was",
                source.describe()
            )));
        }
        Ok(())
    }

    /// The source changed: trust its current version if it is this array's
    /// frame grown the way C-Blosc2 grows a frame in place — something
    /// written past the old chunks, the same header length and typesize,
    /// and every old chunk still at its offset (or replaced by one written
    /// past the old chunks, which leaves the old bytes where they were).
    /// Old chunks whose header changed (compared with the layouts in
    /// `known`) or no longer fits the room the chunk had are marked
    /// rewritten: their reads fail, the others go on. Bytes served before
    /// (`seen`) must decode the same from the current state, so a rewrite
    /// that kept every header is caught.
    /// Otherwise a [`Problem::SourceChanged`]. Metalayers may change (a b2nd
    /// array's shape grows); this array keeps presenting the shape it opened.
    pub fn accept_growth(
        &self,
        known: &[(u64, Arc<ChunkLayout>)],
        seen: &[Seen<'_>],
    ) -> PResult<()> {
        let source = self.frame_source();
        let changed = |why: String| {
            Problem::SourceChanged(format!("{} was rewritten: {why}", source.describe()))
        };
        let current = source
            .current()?
            .ok_or_else(|| changed("this source cannot be re-read".into()))?;
        let now = current.opened_version();
        if now == self.trusted.lock().version {
            return Ok(());
        }
        if let Container::Sparse { .. } = self.container {
            // The chunks live in their own files (checked as they are read):
            // a rewritten index moves none of them.
            self.trusted.lock().version = now;
            return Ok(());
        }
        let old = &self.frame;
        let chunks_end = old.header_len + old.cbytes;
        if now.len < chunks_end {
            return Err(changed(format!(
                "it is now {} bytes, its chunks ended at {chunks_end}",
                now.len
            )));
        }
        let new = Frame::read(&*current, false)
            .map_err(|p| changed(format!("its frame cannot be read now ({p})")))?;
        if new.header_len != old.header_len || new.typesize != old.typesize {
            return Err(changed("its header is not the one opened".into()));
        }
        // Something must have been appended: a rewrite in place with the
        // same layout would otherwise pass every check below.
        if new.offsets.len() <= old.offsets.len() && new.cbytes <= old.cbytes {
            return Err(changed("nothing was appended".into()));
        }
        let kept = |(c, old_offset): (usize, &ChunkOffset)| match (old_offset, new.offsets.get(c)) {
            (_, None) => false,
            (was, Some(now)) if was == now => true,
            (ChunkOffset::Stored(_), Some(ChunkOffset::Stored(now))) => *now >= old.cbytes,
            _ => false,
        };
        if !old.offsets.iter().enumerate().all(kept) {
            return Err(changed("its chunks are no longer where they were".into()));
        }
        let rewritten = self.rewritten_chunks(&*current, known)?;
        if let Some((c, b)) = self.first_changed_block(&*current, known, &rewritten, seen) {
            return Err(changed(format!(
                "block {b} of chunk {c} now holds other values"
            )));
        }
        if !rewritten.is_empty() {
            log::warn!(
                "{}: chunks {rewritten:?} were rewritten in place; open files get errors for them",
                source.describe()
            );
        }
        log::info!(
            "{} grew to {} chunks; open files keep reading their {} chunks",
            source.describe(),
            new.offsets.len(),
            old.offsets.len()
        );
        *self.trusted.lock() = Trust {
            version: now,
            rewritten,
        };
        Ok(())
    }

    /// The first block of `seen` (of chunks not `rewritten`) whose bytes
    /// decode differently from `current`, or that cannot be decoded alone.
    fn first_changed_block(
        &self,
        current: &dyn ByteSource,
        known: &[(u64, Arc<ChunkLayout>)],
        rewritten: &BTreeSet<u64>,
        seen: &[Seen<'_>],
    ) -> Option<(u64, u64)> {
        let context = BlockContext {
            block0: None,
            blockshape: self.blockshape(),
            fork: None,
        };
        for &Seen {
            chunk: c,
            block: b,
            offset,
            bytes,
        } in seen
        {
            let (Some(ChunkOffset::Stored(pos)), Some((_, layout))) = (
                self.frame.offsets.get(c as usize),
                known.iter().find(|(k, _)| *k == c),
            ) else {
                continue;
            };
            if rewritten.contains(&c)
                || (b > 0 && layout.needs_block0())
                || b >= layout.nblocks() as u64
                || matches!(layout.storage, Storage::Special { .. })
            {
                continue;
            }
            let mut out = vec![0u8; layout.block_range(b as usize).len()];
            let decoded_now = read_and_decode(
                current,
                self.frame.header_len + pos,
                layout,
                b as usize,
                || Ok(()),
                |stored| layout.decode_block(b as usize, stored, &context, &mut out),
            );
            if decoded_now.is_err()
                || out.get(offset..offset.saturating_add(bytes.len())) != Some(bytes)
            {
                return Some((c, b));
            }
        }
        None
    }

    /// Old chunks whose stored header in `current` differs from the one
    /// read before (`known`) or claims more room than the chunk had.
    fn rewritten_chunks(
        &self,
        current: &dyn ByteSource,
        known: &[(u64, Arc<ChunkLayout>)],
    ) -> PResult<BTreeSet<u64>> {
        let old = &self.frame;
        let mut stored: Vec<(u64, u64)> = old
            .offsets
            .iter()
            .enumerate()
            .filter_map(|(c, offset)| match offset {
                ChunkOffset::Stored(pos) => Some((*pos, c as u64)),
                ChunkOffset::Special(_) => None,
            })
            .collect();
        stored.sort_unstable();
        let ranges: Vec<_> = stored
            .iter()
            .map(|&(pos, _)| {
                let start = old.header_len + pos;
                start..(start + EXTENDED_HEADER_LEN as u64).min(current.len())
            })
            .collect();
        let headers = current.read_ranges(&ranges)?;
        let mut rewritten = BTreeSet::new();
        for (i, (&(pos, c), bytes)) in stored.iter().zip(&headers).enumerate() {
            let next = stored[i + 1..]
                .iter()
                .map(|&(p, _)| p)
                .find(|&p| p > pos)
                .unwrap_or(old.cbytes);
            let room = next.saturating_sub(pos);
            let as_before = match ChunkHeader::parse(bytes) {
                Ok(header) => {
                    let same_as_known = known
                        .iter()
                        .find(|(k, _)| *k == c)
                        .is_none_or(|(_, layout)| layout.header == header);
                    same_as_known && header.cbytes as u64 <= room
                }
                Err(_) => false,
            };
            if !as_before {
                rewritten.insert(c);
            }
        }
        Ok(rewritten)
    }

    /// What names the bytes this array reads for a cache that outlives
    /// the process (the disk cache): the source's description and the
    /// version it is trusted in; for produced values (a saved expression)
    /// also the producer's inputs (the recipe is in the source, so its
    /// version covers it). `None` where that would not pin the bytes down:
    /// a sparse frame (its chunk files change on their own), values kept
    /// elsewhere, a producer that cannot name its inputs, a source whose
    /// version cannot change (bytes in memory, taken from who knows which
    /// state of a file), or chunks rewritten by a growth.
    pub fn version_identity(&self) -> Option<String> {
        let produced = match &self.producer {
            Some(producer) => Some(producer.version_identity()?),
            None if self.elsewhere.is_some() => return None,
            None => None,
        };
        let Container::Contiguous(source) = &self.container else {
            return None;
        };
        let trust = self.trusted.lock();
        if !trust.rewritten.is_empty() || matches!(trust.version.tag, VersionTag::Fixed(_)) {
            return None;
        }
        let own = format!("{}\n{:?}", source.describe(), trust.version);
        Some(match produced {
            Some(inputs) => format!("{own}\nproduced from\n{inputs}"),
            None => own,
        })
    }
}

#[cfg(test)]
mod tests {
    //! Growth checked on real frames: `frame_bytes_typesize1.b2frame` from
    //! tests/fixtures (a plain zlib frame of the text below in chunks of
    //! 1,500 bytes, one block each) as opened, and states of the same file
    //! put together here by hand from its parts, the way C-Blosc2 changes a
    //! frame in place (or does not). What each state should read is known
    //! from how it was put together.

    use super::*;
    use crate::format::byte_source::{SliceSource, Version};
    use parking_lot::Mutex;
    use std::path::Path;

    /// The text the fixture holds (scripts/gen/fixture_cases.py): 6,840 bytes.
    fn text() -> Vec<u8> {
        b"Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(120)
    }

    /// Decoded bytes of chunk `c` of the fixture (chunks of 1,500 bytes).
    fn chunk_text(c: usize) -> Vec<u8> {
        let text = text();
        text[c * 1500..(c * 1500 + 1500).min(text.len())].to_vec()
    }

    fn fixture() -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join("frame_bytes_typesize1.b2frame");
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// A contiguous frame cut into its parts by hand (Blosc2 frame format:
    /// msgpack header with big-endian sizes, the chunks section, the chunk
    /// offsets index as a raw-stored chunk of little-endian i64, the
    /// trailer), to be put together again with some of them changed.
    #[derive(Clone)]
    struct Parts {
        header: Vec<u8>,
        /// The chunks section: what the header's compressed size covers.
        chunks: Vec<u8>,
        offsets: Vec<i64>,
        /// The header's uncompressed size.
        nbytes: i64,
        /// The offsets chunk's 32-byte header, reused with new sizes.
        index_header: Vec<u8>,
        trailer: Vec<u8>,
    }

    fn be32(b: &[u8], at: usize) -> usize {
        i32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize
    }

    fn be64(b: &[u8], at: usize) -> i64 {
        i64::from_be_bytes(b[at..at + 8].try_into().unwrap())
    }

    fn le32(b: &[u8], at: usize) -> usize {
        i32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
    }

    impl Parts {
        fn cut(frame: &[u8]) -> Parts {
            let header_len = be32(frame, 11);
            let frame_len = be64(frame, 16) as usize;
            let cbytes = be64(frame, 39) as usize;
            let index_at = header_len + cbytes;
            let index_nbytes = le32(frame, index_at + 4);
            assert_eq!(
                le32(frame, index_at + 12),
                32 + index_nbytes,
                "the offsets are stored raw after a 32-byte header"
            );
            let index_end = index_at + 32 + index_nbytes;
            let trailer_len =
                u32::from_be_bytes(frame[frame_len - 22..frame_len - 18].try_into().unwrap());
            assert_eq!(index_end, frame_len - trailer_len as usize);
            Parts {
                header: frame[..header_len].to_vec(),
                chunks: frame[header_len..index_at].to_vec(),
                offsets: frame[index_at + 32..index_end]
                    .chunks_exact(8)
                    .map(|o| i64::from_le_bytes(o.try_into().unwrap()))
                    .collect(),
                nbytes: be64(frame, 30),
                index_header: frame[index_at..index_at + 32].to_vec(),
                trailer: frame[index_end..frame_len].to_vec(),
            }
        }

        fn assemble(&self) -> Vec<u8> {
            let index_nbytes = self.offsets.len() * 8;
            let frame_len =
                self.header.len() + self.chunks.len() + 32 + index_nbytes + self.trailer.len();
            let mut header = self.header.clone();
            header[16..24].copy_from_slice(&(frame_len as i64).to_be_bytes());
            header[30..38].copy_from_slice(&self.nbytes.to_be_bytes());
            header[39..47].copy_from_slice(&(self.chunks.len() as i64).to_be_bytes());
            let mut index = self.index_header.clone();
            index[4..8].copy_from_slice(&(index_nbytes as i32).to_le_bytes());
            index[8..12].copy_from_slice(&(index_nbytes as i32).to_le_bytes());
            index[12..16].copy_from_slice(&(32 + index_nbytes as i32).to_le_bytes());
            let mut out = header;
            out.extend_from_slice(&self.chunks);
            out.extend_from_slice(&index);
            for o in &self.offsets {
                out.extend_from_slice(&o.to_le_bytes());
            }
            out.extend_from_slice(&self.trailer);
            out
        }

        /// The stored bytes of chunk `c` (its header's cbytes from its offset).
        fn stored(&self, c: usize) -> Vec<u8> {
            let at = self.offsets[c] as usize;
            self.chunks[at..at + le32(&self.chunks, at + 12)].to_vec()
        }

        /// Append `stored` past the chunks; its offset.
        fn append(&mut self, stored: &[u8]) -> i64 {
            let at = self.chunks.len() as i64;
            self.chunks.extend_from_slice(stored);
            at
        }

        /// Append `stored` as a new chunk of `nbytes` decoded bytes.
        fn append_chunk(&mut self, stored: &[u8], nbytes: i64) {
            let at = self.append(stored);
            self.offsets.push(at);
            self.nbytes += nbytes;
        }

        /// Overwrite the bytes at chunk `c`'s offset with `stored` (the
        /// chunks section grows if they run past its end).
        fn overwrite(&mut self, c: usize, stored: &[u8]) {
            let at = self.offsets[c] as usize;
            let end = at + stored.len();
            if end > self.chunks.len() {
                self.chunks.resize(end, 0);
            }
            self.chunks[at..end].copy_from_slice(stored);
        }
    }

    /// What the file holds now, and a count of its changes.
    #[derive(Debug)]
    struct Disk {
        bytes: Vec<u8>,
        generation: u64,
    }

    impl Disk {
        fn version(&self) -> Version {
            Version {
                len: self.bytes.len() as u64,
                tag: VersionTag::Token(format!("generation {}", self.generation)),
            }
        }
    }

    /// A file that can change under its readers: reads see what it holds
    /// now, like `pread` on a file rewritten in place.
    #[derive(Debug, Clone)]
    struct TestFile {
        disk: Arc<Mutex<Disk>>,
        opened: Version,
        rereadable: bool,
    }

    impl TestFile {
        fn new(bytes: Vec<u8>) -> TestFile {
            let disk = Disk {
                bytes,
                generation: 0,
            };
            TestFile {
                opened: disk.version(),
                disk: Arc::new(Mutex::new(disk)),
                rereadable: true,
            }
        }

        fn write(&self, bytes: Vec<u8>) {
            let mut disk = self.disk.lock();
            disk.bytes = bytes;
            disk.generation += 1;
        }
    }

    impl ByteSource for TestFile {
        fn len(&self) -> u64 {
            self.opened.len
        }

        fn opened_version(&self) -> Version {
            self.opened.clone()
        }

        fn version(&self) -> PResult<Version> {
            Ok(self.disk.lock().version())
        }

        fn read_at(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
            SliceSource(&self.disk.lock().bytes).read_at(offset, buf)
        }

        fn current(&self) -> PResult<Option<Arc<dyn ByteSource>>> {
            if !self.rereadable {
                return Ok(None);
            }
            Ok(Some(Arc::new(TestFile {
                opened: self.disk.lock().version(),
                ..self.clone()
            })))
        }

        fn describe(&self) -> String {
            "test file".into()
        }
    }

    /// The fixture opened over a file that can change, and the layouts of
    /// its five chunks as read when opened.
    fn opened() -> (TestFile, Array, Vec<(u64, Arc<ChunkLayout>)>) {
        let file = TestFile::new(fixture());
        let array = Array::from_source(Path::new("t"), Arc::new(file.clone())).unwrap();
        let known = (0..5)
            .map(|c| (c, Arc::new(array.read_layout(c).unwrap())))
            .collect();
        (file, array, known)
    }

    /// The message of a [`Problem::SourceChanged`].
    fn refusal(result: PResult<()>) -> String {
        match result {
            Err(Problem::SourceChanged(why)) => why,
            other => panic!("expected a SourceChanged refusal, got {other:?}"),
        }
    }

    fn reads_every_chunk_as_opened(array: &Array) {
        for c in 0..5 {
            assert_eq!(
                array.decode_chunk(c as u64).unwrap(),
                chunk_text(c),
                "chunk {c}"
            );
        }
    }

    #[test]
    fn the_parts_put_together_again_are_the_fixture() {
        let frame = fixture();
        let parts = Parts::cut(&frame);
        assert_eq!(parts.offsets.len(), 5);
        assert_eq!(parts.nbytes, 6840);
        assert!(parts.assemble() == frame);
    }

    #[test]
    fn appended_chunks_are_accepted_and_old_chunks_read_as_before() {
        let (file, array, known) = opened();
        reads_every_chunk_as_opened(&array);
        let before = array.version_identity().unwrap();
        let mut grown = Parts::cut(&fixture());
        let first = grown.stored(0);
        grown.append_chunk(&first, 1500);
        grown.append_chunk(&first, 1500);
        let grown = grown.assemble();
        file.write(grown.clone());

        // Until the growth is accepted, reads refuse the changed source.
        assert!(array.decode_chunk(1).unwrap_err().is_source_changed());
        let (served, last) = (chunk_text(1), chunk_text(4));
        let seen = [seen(1, 7, &served[7..100]), seen(4, 0, &last)];
        array.accept_growth(&known, &seen).unwrap();
        assert_eq!(array.nchunks(), 5, "the opened shape is kept");
        reads_every_chunk_as_opened(&array);
        let after = array.version_identity().unwrap();
        assert_ne!(before, after, "the identity names the grown version");

        // The grown state is a frame of seven chunks in its own right, the
        // two appended ones past the old 595 bytes of chunks.
        let fresh = Frame::read(&SliceSource(&grown), false).unwrap();
        assert_eq!(
            fresh.offsets[5..],
            [ChunkOffset::Stored(595), ChunkOffset::Stored(715)]
        );
    }

    #[test]
    fn a_chunk_updated_past_the_old_chunks_leaves_its_old_bytes_readable() {
        let (file, array, known) = opened();
        let mut updated = Parts::cut(&fixture());
        let third = updated.stored(3);
        updated.offsets[2] = updated.append(&third);
        let updated = updated.assemble();
        file.write(updated.clone());
        array.accept_growth(&known, &[]).unwrap();
        reads_every_chunk_as_opened(&array);
        assert!(array.version_identity().is_some(), "nothing was rewritten");
        let fresh = Array::from_source(Path::new("t"), Arc::new(TestFile::new(updated))).unwrap();
        assert_eq!(fresh.decode_chunk(2).unwrap(), chunk_text(3));
    }

    /// Chunk 1 (120 stored bytes) overwritten in place by chunk 4's stored
    /// bytes (115, another header: 840 decoded bytes), and a chunk appended.
    fn chunk_1_overwritten_and_one_appended() -> Vec<u8> {
        let mut parts = Parts::cut(&fixture());
        let last = parts.stored(4);
        parts.overwrite(1, &last);
        let first = parts.stored(0);
        parts.append_chunk(&first, 1500);
        parts.assemble()
    }

    #[test]
    fn a_known_chunk_whose_header_changed_is_marked_rewritten() {
        let (file, array, known) = opened();
        file.write(chunk_1_overwritten_and_one_appended());
        let current = file.current().unwrap().unwrap();
        assert_eq!(
            array.rewritten_chunks(&*current, &known).unwrap(),
            BTreeSet::from([1])
        );
        array.accept_growth(&known, &[]).unwrap();
        assert!(array.read_layout(1).unwrap_err().is_source_changed());
        assert!(array.decode_chunk(1).unwrap_err().is_source_changed());
        for c in [0, 2, 3, 4] {
            assert_eq!(array.decode_chunk(c as u64).unwrap(), chunk_text(c));
        }
        assert_eq!(array.version_identity(), None, "a chunk was rewritten");
    }

    #[test]
    fn a_changed_header_that_fits_its_room_is_compared_only_when_known() {
        let (file, array, known) = opened();
        file.write(chunk_1_overwritten_and_one_appended());
        let current = file.current().unwrap().unwrap();
        let others: Vec<_> = known.iter().filter(|(c, _)| *c != 1).cloned().collect();
        assert_eq!(
            array.rewritten_chunks(&*current, &others).unwrap(),
            BTreeSet::new()
        );
    }

    #[test]
    fn a_chunk_that_outgrew_its_room_is_marked_rewritten() {
        let (file, array, _) = opened();
        // Chunk 4 (115 stored bytes, the last) overwritten by chunk 0's 120:
        // past the old end of the chunks, so the section grows.
        let mut parts = Parts::cut(&fixture());
        let first = parts.stored(0);
        parts.overwrite(4, &first);
        file.write(parts.assemble());
        let current = file.current().unwrap().unwrap();
        assert_eq!(
            array.rewritten_chunks(&*current, &[]).unwrap(),
            BTreeSet::from([4])
        );
        array.accept_growth(&[], &[]).unwrap();
        // Its read fails (its header now claims more than its room).
        assert!(array.decode_chunk(4).is_err());
        assert_eq!(array.version_identity(), None, "a chunk was rewritten");
        assert_eq!(array.decode_chunk(3).unwrap(), chunk_text(3));
    }

    #[test]
    fn an_unchanged_source_needs_nothing() {
        let (file, array, known) = opened();
        let current = file.current().unwrap().unwrap();
        assert_eq!(
            array.rewritten_chunks(&*current, &known).unwrap(),
            BTreeSet::new()
        );
        let before = array.version_identity();
        array.accept_growth(&known, &[]).unwrap();
        assert_eq!(array.version_identity(), before);
        reads_every_chunk_as_opened(&array);
    }

    /// `result` refused for `why`, and the array still trusting the state
    /// it opened (generation 0 of its [`TestFile`]).
    fn refused(array: &Array, result: PResult<()>, why: &str) {
        let message = refusal(result);
        assert!(message.contains(why), "{message:?} does not say {why:?}");
        let identity = array.version_identity().unwrap();
        assert!(
            identity.contains("generation 0"),
            "still trusts the opened state: {identity}"
        );
    }

    #[test]
    fn a_source_cut_short_is_refused() {
        let (file, array, known) = opened();
        // 500 bytes: the header (97) and part of the chunks (595).
        file.write(fixture()[..500].to_vec());
        refused(&array, array.accept_growth(&known, &[]), "now 500 bytes");
    }

    #[test]
    fn a_rewrite_that_appends_nothing_is_refused() {
        let (file, array, known) = opened();
        let mut parts = Parts::cut(&fixture());
        let mut last = parts.stored(4);
        last.resize(120, 0);
        parts.overwrite(1, &last);
        file.write(parts.assemble());
        refused(
            &array,
            array.accept_growth(&known, &[]),
            "nothing was appended",
        );
    }

    #[test]
    fn another_header_is_refused() {
        let (file, array, known) = opened();
        let mut parts = Parts::cut(&fixture());
        parts.header[48..52].copy_from_slice(&2i32.to_be_bytes()); // typesize
        let first = parts.stored(0);
        parts.append_chunk(&first, 1500);
        file.write(parts.assemble());
        refused(
            &array,
            array.accept_growth(&known, &[]),
            "header is not the one opened",
        );
    }

    #[test]
    fn moved_dropped_or_special_chunks_are_refused() {
        let swapped = |p: &mut Parts| p.offsets.swap(0, 1);
        let dropped = |p: &mut Parts| {
            p.offsets.pop();
            p.nbytes -= 840;
        };
        // A special chunk of zeros: sign bit and kind 1 in the top byte.
        let zeros = |p: &mut Parts| p.offsets[2] = (0x81u64 << 56) as i64;
        for change in [&swapped as &dyn Fn(&mut Parts), &dropped, &zeros] {
            let (file, array, known) = opened();
            let mut parts = Parts::cut(&fixture());
            change(&mut parts);
            let first = parts.stored(0);
            parts.append(&first);
            file.write(parts.assemble());
            refused(
                &array,
                array.accept_growth(&known, &[]),
                "no longer where they were",
            );
        }
    }

    /// Chunk 2 overwritten in place by chunk 0's stored bytes (the same
    /// header: 1,500 bytes in 120, so only the values differ), and a chunk
    /// appended.
    fn chunk_2_holds_chunk_0() -> Vec<u8> {
        let mut parts = Parts::cut(&fixture());
        let first = parts.stored(0);
        assert_eq!(first[..32], parts.stored(2)[..32], "same chunk header");
        parts.overwrite(2, &first);
        parts.append_chunk(&first, 1500);
        parts.assemble()
    }

    #[test]
    fn values_changed_under_kept_headers_are_refused_when_seen() {
        let (file, array, known) = opened();
        file.write(chunk_2_holds_chunk_0());
        let served = chunk_text(2);
        let seen = [seen(2, 1000, &served[1000..1010])];
        refused(
            &array,
            array.accept_growth(&known, &seen),
            "block 0 of chunk 2 now holds other values",
        );
    }

    #[test]
    fn values_changed_where_nothing_was_seen_go_unnoticed() {
        let (file, array, known) = opened();
        file.write(chunk_2_holds_chunk_0());
        let served = chunk_text(3);
        array.accept_growth(&known, &[seen(3, 0, &served)]).unwrap();
    }

    #[test]
    fn a_source_that_cannot_be_read_again_is_refused() {
        let file = TestFile {
            rereadable: false,
            ..TestFile::new(fixture())
        };
        let array = Array::from_source(Path::new("t"), Arc::new(file.clone())).unwrap();
        let mut grown = Parts::cut(&fixture());
        let first = grown.stored(0);
        grown.append_chunk(&first, 1500);
        file.write(grown.assemble());
        refused(&array, array.accept_growth(&[], &[]), "cannot be re-read");
    }

    /// The chunk files of `frame_f32_sparse.b2frame`, which never change.
    #[derive(Debug)]
    struct FixtureChunks;

    impl crate::format::byte_source::SparseChunks for FixtureChunks {
        fn open_chunk(&self, n: u64) -> PResult<Arc<dyn ByteSource>> {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/frame_f32_sparse.b2frame")
                .join(crate::format::byte_source::sparse_chunk_name(n));
            Ok(Arc::new(TestFile::new(std::fs::read(path)?)))
        }
    }

    #[test]
    fn a_sparse_frame_trusts_its_rewritten_index() {
        let index_path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/frame_f32_sparse.b2frame/chunks.b2frame");
        let index = TestFile::new(std::fs::read(index_path).unwrap());
        let array = Array::from_sparse(
            Path::new("t"),
            Arc::new(index.clone()),
            Arc::new(FixtureChunks),
        )
        .unwrap();
        let before = array.decode_chunk(0).unwrap();
        // The index written again: its chunks stay in their own files.
        let same = index.disk.lock().bytes.clone();
        index.write(same);
        assert!(array.decode_chunk(0).unwrap_err().is_source_changed());
        array.accept_growth(&[], &[]).unwrap();
        assert_eq!(array.decode_chunk(0).unwrap(), before);
        assert_eq!(array.version_identity(), None, "a sparse frame has none");
    }

    /// Block 0 of chunk `chunk` served `bytes` at `offset`.
    fn seen(chunk: u64, offset: usize, bytes: &[u8]) -> Seen<'_> {
        Seen {
            chunk,
            block: 0,
            offset,
            bytes,
        }
    }

    #[test]
    fn first_changed_block_is_the_first_seen_block_that_decodes_otherwise() {
        let (file, array, known) = opened();
        file.write(chunk_2_holds_chunk_0());
        let current = file.current().unwrap().unwrap();
        let (t0, t2, t3) = (chunk_text(0), chunk_text(2), chunk_text(3));
        let none = BTreeSet::new();
        let first =
            |known: &[(u64, Arc<ChunkLayout>)], rewritten: &BTreeSet<u64>, seen: &[Seen<'_>]| {
                array.first_changed_block(&*current, known, rewritten, seen)
            };

        // Chunks 0 and 3 are as served; chunk 2 now decodes as chunk 0.
        assert_eq!(
            first(&known, &none, &[seen(0, 0, &t0), seen(3, 0, &t3)]),
            None
        );
        assert_eq!(
            first(&known, &none, &[seen(0, 0, &t0), seen(2, 0, &t2)]),
            Some((2, 0))
        );
        assert_eq!(
            first(&known, &none, &[seen(2, 0, &t0)]),
            None,
            "what chunk 2 holds now"
        );
        // The first that differs, in the order seen.
        assert_eq!(
            first(
                &known,
                &none,
                &[seen(0, 0, &t0), seen(3, 0, &t2), seen(2, 0, &t2)]
            ),
            Some((3, 0))
        );
        // Bytes running past the end of the block were not served by it.
        assert_eq!(first(&known, &none, &[seen(3, 1, &t3)]), Some((3, 0)));
        // Skipped: chunks marked rewritten, chunks without a known layout,
        // blocks the chunk does not have (each chunk is one block).
        assert_eq!(
            first(&known, &BTreeSet::from([2]), &[seen(2, 0, &t2)]),
            None
        );
        let others: Vec<_> = known.iter().filter(|(c, _)| *c != 2).cloned().collect();
        assert_eq!(first(&others, &none, &[seen(2, 0, &t2)]), None);
        let second_block = Seen {
            block: 1,
            ..seen(2, 0, &t2)
        };
        assert_eq!(first(&known, &none, &[second_block]), None);
    }
}
