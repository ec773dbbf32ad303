//! What names a cache entry: the source's identity and version as text
//! (kept whole in the entry's map, compared on every open) and a file name
//! derived from it by a stable 128-bit hash (FNV-1a), so a new version of a
//! source lands in a new entry and is never served an old one's bytes.

/// The key of one cached `data`: which source, in which version, how long.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    text: String,
    name: String,
}

/// Version of the key text's layout: a new layout misses every old entry.
const KEY_LAYOUT: &str = "blosc2fs-disk-cache-key 1";

impl Key {
    /// The key of the `len` bytes of `data` presented from the source state
    /// `identity` names (a source's description and its version: for a
    /// local file device, inode, size and mtime in ns; for a remote object
    /// its ETag and size).
    pub fn new(identity: &str, len: u64) -> Key {
        let text = format!("{KEY_LAYOUT}\n{identity}\nlen {len}");
        let name = format!("{:032x}", fnv1a_128(text.as_bytes()));
        Key { text, name }
    }

    /// The full key text (stored in the entry's map and checked on open).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The entry's file name stem (32 hex digits).
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// FNV-1a over 128 bits: stable across builds and platforms (std's hasher
/// is not promised to be), and collisions are caught by the key text anyway.
pub(super) fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    bytes.iter().fold(OFFSET, |hash, &b| {
        (hash ^ u128::from(b)).wrapping_mul(PRIME)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_version_or_length_is_a_new_name() {
        let a = Key::new("/x/a.b2nd File { dev: 1, ino: 2, mtime_ns: 3 }", 100);
        let b = Key::new("/x/a.b2nd File { dev: 1, ino: 2, mtime_ns: 4 }", 100);
        let c = Key::new("/x/a.b2nd File { dev: 1, ino: 2, mtime_ns: 3 }", 101);
        assert_ne!(a.name(), b.name());
        assert_ne!(a.name(), c.name());
        assert_eq!(
            a,
            Key::new("/x/a.b2nd File { dev: 1, ino: 2, mtime_ns: 3 }", 100)
        );
        assert_eq!(a.name().len(), 32);
    }

    /// Entry names are found again by later mounts: a change to the key
    /// text or its hash must come with a new [`KEY_LAYOUT`] (then every old
    /// entry is missed, and evicted in time, instead of half matching).
    #[test]
    fn a_key_has_this_text_and_name_in_layout_1() {
        assert_eq!(KEY_LAYOUT, "blosc2fs-disk-cache-key 1");
        let key = Key::new("x", 5);
        assert_eq!(key.text(), "blosc2fs-disk-cache-key 1\nx\nlen 5");
        assert_eq!(key.name(), "3892543ad74141c7b1bd4a4a948a2da5");
    }

    #[test]
    fn the_hash_is_the_published_fnv1a_128() {
        // FNV-1a 128 of the empty input is its offset basis.
        assert_eq!(fnv1a_128(b""), 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d);
        assert_eq!(fnv1a_128(b"a"), 0xd228_cb69_6f1a_8caf_7891_2b70_4e4a_8964);
    }
}
