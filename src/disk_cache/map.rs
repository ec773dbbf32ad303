//! Which parts of an entry's `data` are whole in its sparse file: one bit
//! per granule of [`GRANULE`] bytes (the last granule ends with the data),
//! and the map's form on disk.
//!
//! On disk a map is: a magic line, the granule size, the data length, the
//! inode of the data file it describes, the key text, the bit words, and a
//! checksum of all that. A map that does not parse, or names another key,
//! length or data file, is ignored (the entry starts empty): a map is only
//! ever a promise about the one data file it names.

use super::key::fnv1a_128;

/// Bytes per bit: large enough that a 1 GiB entry's map is 1 KiB, small
/// enough that the kernel's readahead requests (128 KiB to 1 MiB, aligned)
/// cover whole granules.
pub const GRANULE: u64 = 128 << 10;

const MAGIC: &[u8; 8] = b"B2FSDCM1";

/// Granule bits of one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bitmap {
    len: u64,
    words: Vec<u64>,
    whole: u64,
}

/// Why a stored map was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapMismatch {
    /// Too short, wrong magic or checksum: torn or not ours.
    Damaged,
    /// Another key, length, granule size or data file.
    Other,
}

impl Bitmap {
    /// An empty map of `len` bytes of data.
    pub fn new(len: u64) -> Bitmap {
        let granules = len.div_ceil(GRANULE);
        Bitmap {
            len,
            words: vec![0; granules.div_ceil(64) as usize],
            whole: 0,
        }
    }

    /// Number of granules.
    pub fn granules(&self) -> u64 {
        self.len.div_ceil(GRANULE)
    }

    /// Granules whole.
    pub fn whole(&self) -> u64 {
        self.whole
    }

    /// Every byte is whole.
    pub fn is_complete(&self) -> bool {
        self.whole == self.granules()
    }

    fn get(&self, g: u64) -> bool {
        self.words[(g / 64) as usize] & (1 << (g % 64)) != 0
    }

    fn set(&mut self, g: u64) {
        let word = &mut self.words[(g / 64) as usize];
        let bit = 1 << (g % 64);
        if *word & bit == 0 {
            *word |= bit;
            self.whole += 1;
        }
    }

    /// Whether every byte of `[start, end)` is whole (an empty range is).
    pub fn covers(&self, start: u64, end: u64) -> bool {
        let end = end.min(self.len);
        start >= end || (start / GRANULE..end.div_ceil(GRANULE)).all(|g| self.get(g))
    }

    /// The granules that hold any byte of `[start, end)` and are not whole.
    pub fn missing(&self, start: u64, end: u64) -> Vec<u64> {
        let end = end.min(self.len);
        if start >= end {
            return Vec::new();
        }
        (start / GRANULE..end.div_ceil(GRANULE))
            .filter(|&g| !self.get(g))
            .collect()
    }

    /// The granules `bytes` at `offset` fill completely, as the byte range
    /// they span, or `None` when they fill none that is not whole yet.
    pub fn fillable(&self, offset: u64, n: u64) -> Option<(u64, u64)> {
        let end = offset.saturating_add(n).min(self.len);
        let first = offset.div_ceil(GRANULE);
        // The last granule is whole when the bytes reach the data's end.
        let last = if end == self.len {
            end.div_ceil(GRANULE)
        } else {
            end / GRANULE
        };
        if first >= last || (first..last).all(|g| self.get(g)) {
            return None;
        }
        Some((first * GRANULE, (last * GRANULE).min(self.len)))
    }

    /// Mark `[start, end)` whole (`start` on a granule boundary; `end` on
    /// one or the data's end).
    pub fn mark(&mut self, start: u64, end: u64) {
        debug_assert!(start.is_multiple_of(GRANULE));
        debug_assert!(end.is_multiple_of(GRANULE) || end == self.len);
        for g in start / GRANULE..end.div_ceil(GRANULE) {
            self.set(g);
        }
    }

    /// Add what `other` (a map of the same data) knows is whole.
    pub fn merge(&mut self, other: &Bitmap) {
        if other.len != self.len {
            return;
        }
        for g in 0..self.granules() {
            if other.get(g) {
                self.set(g);
            }
        }
    }

    /// The map on disk, for data file inode `data_ino` under `key_text`.
    pub fn encode(&self, key_text: &str, data_ino: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(48 + key_text.len() + self.words.len() * 8);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&GRANULE.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&data_ino.to_le_bytes());
        out.extend_from_slice(&(key_text.len() as u64).to_le_bytes());
        out.extend_from_slice(key_text.as_bytes());
        for w in &self.words {
            out.extend_from_slice(&w.to_le_bytes());
        }
        let sum = fnv1a_128(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// The map in `bytes` if it describes `len` bytes of data file
    /// `data_ino` under `key_text`.
    pub fn decode(
        bytes: &[u8],
        key_text: &str,
        len: u64,
        data_ino: u64,
    ) -> Result<Bitmap, MapMismatch> {
        let body_len = bytes.len().checked_sub(16).ok_or(MapMismatch::Damaged)?;
        let (body, sum) = bytes.split_at(body_len);
        if sum != fnv1a_128(body).to_le_bytes() || !body.starts_with(MAGIC) {
            return Err(MapMismatch::Damaged);
        }
        let word = |i: usize| -> Result<u64, MapMismatch> {
            body.get(8 + 8 * i..16 + 8 * i)
                .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
                .ok_or(MapMismatch::Damaged)
        };
        if word(0)? != GRANULE || word(1)? != len || word(2)? != data_ino {
            return Err(MapMismatch::Other);
        }
        let key_len = usize::try_from(word(3)?).map_err(|_| MapMismatch::Damaged)?;
        let key_end = 40usize.checked_add(key_len).ok_or(MapMismatch::Damaged)?;
        if body.get(40..key_end) != Some(key_text.as_bytes()) {
            return Err(MapMismatch::Other);
        }
        let mut map = Bitmap::new(len);
        let words = &body[key_end..];
        if words.len() != map.words.len() * 8 {
            return Err(MapMismatch::Damaged);
        }
        for (i, chunk) in words.chunks_exact(8).enumerate() {
            map.words[i] = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        }
        // Bits past the last granule would claim bytes that do not exist.
        let granules = map.granules();
        if !granules.is_multiple_of(64) {
            if let Some(last) = map.words.last() {
                if last >> (granules % 64) != 0 {
                    return Err(MapMismatch::Damaged);
                }
            }
        }
        map.whole = map.words.iter().map(|w| u64::from(w.count_ones())).sum();
        Ok(map)
    }
}

/// The fraction whole and the key text of a stored map (for `blosc2fs
/// cache DIR`), if it is a sound map of `len` bytes of data file `data_ino`.
pub fn describe_stored(bytes: &[u8], len: u64, data_ino: u64) -> Option<(f64, String)> {
    let key_len = usize::try_from(u64::from_le_bytes(bytes.get(32..40)?.try_into().ok()?)).ok()?;
    let key = std::str::from_utf8(bytes.get(40..40usize.checked_add(key_len)?)?).ok()?;
    let map = Bitmap::decode(bytes, key, len, data_ino).ok()?;
    let fraction = map.whole() as f64 / map.granules().max(1) as f64;
    Some((fraction, key.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_granules_filled_completely_become_fillable() {
        let len = 3 * GRANULE + 100;
        let map = Bitmap::new(len);
        // Inside one granule: nothing whole.
        assert_eq!(map.fillable(10, 1000), None);
        // Straddling: only the granule fully inside.
        assert_eq!(
            map.fillable(GRANULE - 1, GRANULE + 2),
            Some((GRANULE, 2 * GRANULE))
        );
        // Reaching the end: the short last granule counts.
        assert_eq!(
            map.fillable(2 * GRANULE, GRANULE + 100),
            Some((2 * GRANULE, len))
        );
    }

    #[test]
    fn marks_cover_and_complete() {
        let len = 2 * GRANULE + 5;
        let mut map = Bitmap::new(len);
        assert!(map.covers(0, 0) && !map.covers(0, 1));
        map.mark(0, GRANULE);
        assert!(map.covers(0, GRANULE) && !map.covers(0, GRANULE + 1));
        assert_eq!(map.missing(5, len), vec![1, 2], "touched, not whole");
        assert_eq!(map.missing(GRANULE, GRANULE), Vec::<u64>::new());
        assert_eq!(map.missing(2 * GRANULE + 4, u64::MAX), vec![2]);
        assert_eq!(map.fillable(0, GRANULE), None, "already whole");
        map.mark(GRANULE, len);
        assert!(map.is_complete() && map.covers(0, len) && map.covers(5, len + 99));
        assert_eq!(map.whole(), 3);
    }

    #[test]
    fn a_stored_map_round_trips_and_refuses_anything_else() {
        let len = 70 * GRANULE;
        let mut map = Bitmap::new(len);
        map.mark(GRANULE, 3 * GRANULE);
        map.mark(65 * GRANULE, len);
        let bytes = map.encode("key", 42);
        assert_eq!(Bitmap::decode(&bytes, "key", len, 42), Ok(map.clone()));
        let (fraction, key) = describe_stored(&bytes, len, 42).unwrap();
        assert_eq!((fraction, key.as_str()), (7.0 / 70.0, "key"));
        assert_eq!(
            Bitmap::decode(&bytes, "kez", len, 42),
            Err(MapMismatch::Other)
        );
        assert_eq!(
            Bitmap::decode(&bytes, "key", len, 43),
            Err(MapMismatch::Other),
            "a map names its data file: a replaced data file is not trusted"
        );
        assert_eq!(
            Bitmap::decode(&bytes, "key", len + 1, 42),
            Err(MapMismatch::Other)
        );
        // Any torn prefix, any flipped byte: refused.
        for cut in 0..bytes.len() {
            assert!(Bitmap::decode(&bytes[..cut], "key", len, 42).is_err());
        }
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert!(Bitmap::decode(&bad, "key", len, 42).is_err(), "byte {i}");
        }
    }

    /// The bytes a map is stored as, written out by hand: a change to them
    /// is a new format, which must come with a new [`MAGIC`] (its last byte
    /// is the version) so that older builds refuse the new maps and newer
    /// builds the old ones, instead of reading one as the other.
    #[test]
    fn a_stored_map_has_these_bytes_in_version_1() {
        assert_eq!(MAGIC, b"B2FSDCM1", "a new version: add its golden bytes");
        let len = 3 * GRANULE + 100;
        let mut map = Bitmap::new(len);
        map.mark(GRANULE, 2 * GRANULE);
        map.mark(3 * GRANULE, len);
        let golden: Vec<u8> = [
            &b"B2FSDCM1"[..],               // magic, version 1
            &[0, 0, 2, 0, 0, 0, 0, 0],      // granule: 128 KiB
            &[100, 0, 6, 0, 0, 0, 0, 0],    // data length: 3 granules + 100
            &[7, 0, 0, 0, 0, 0, 0, 0],      // data file inode
            &[1, 0, 0, 0, 0, 0, 0, 0],      // key text length
            b"k",                           // key text
            &[0b1010, 0, 0, 0, 0, 0, 0, 0], // granules 1 and 3 whole
            // FNV-1a 128 of all the above
            &[
                74, 36, 54, 0, 14, 0, 106, 212, 147, 201, 58, 236, 89, 2, 168, 62,
            ],
        ]
        .concat();
        assert_eq!(map.encode("k", 7), golden);
        assert_eq!(Bitmap::decode(&golden, "k", len, 7), Ok(map));
    }

    #[test]
    fn merging_two_fills_keeps_both() {
        let len = 4 * GRANULE;
        let (mut a, mut b) = (Bitmap::new(len), Bitmap::new(len));
        a.mark(0, GRANULE);
        b.mark(2 * GRANULE, 3 * GRANULE);
        a.merge(&b);
        assert_eq!(a.whole(), 2);
        assert!(a.covers(0, GRANULE) && a.covers(2 * GRANULE, 3 * GRANULE));
    }
}
