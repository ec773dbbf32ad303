//! The central directory of a zip archive (a `.b2z` store): which member
//! names lie where, read with every count and size capped before anything
//! is allocated.
//!
//! Only what a store needs is read: the end-of-central-directory record (and
//! its zip64 form), the central entries (name, method, flags, sizes, local
//! header offset, zip64 extra field) and, per member on demand, the local
//! header whose name and extra lengths fix where the member's bytes start
//! (its extra field may differ from the central directory's copy).
//! Compression is not undone: stores keep their members stored (method 0),
//! and a member that is not is reported, never decoded.

use crate::format::byte_source::{read_exact, ByteSource};
use crate::format::{PResult, Problem};

/// Most central-directory entries accepted (a "zip bomb" of entries is refused
/// before any is allocated).
pub const MAX_ENTRIES: u64 = 1 << 20;
/// Largest central directory accepted, in bytes.
pub const MAX_DIRECTORY_BYTES: u64 = 64 << 20;

const EOCD_SIG: u32 = 0x0605_4b50;
const EOCD_LEN: u64 = 22;
const LOCATOR_SIG: u32 = 0x0706_4b50;
const LOCATOR_LEN: u64 = 20;
const EOCD64_SIG: u32 = 0x0606_4b50;
const EOCD64_LEN: u64 = 56;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const CENTRAL_LEN: usize = 46;
const LOCAL_SIG: u32 = 0x0403_4b50;
const LOCAL_LEN: u64 = 30;
const ZIP64_EXTRA: u16 = 0x0001;

/// One member as the central directory describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZipEntry {
    /// The member's name (a `/`-separated path; invalid UTF-8 replaced).
    pub name: String,
    /// Compression method (0 = stored).
    pub method: u16,
    /// General-purpose flags (bit 0: encrypted).
    pub flags: u16,
    /// Bytes the member occupies in the archive.
    pub compressed_size: u64,
    /// Bytes of the member once extracted.
    pub size: u64,
    /// Where its local header starts.
    pub header_offset: u64,
}

impl ZipEntry {
    /// Whether the member's bytes can be read in place (stored, not encrypted).
    pub fn is_stored(&self) -> bool {
        self.method == 0 && self.flags & 1 == 0 && self.compressed_size == self.size
    }

    /// Where the member's bytes start and how many there are, from its local
    /// header; an error when the header or the bytes lie outside `archive`.
    pub fn data_window(&self, archive: &dyn ByteSource) -> PResult<(u64, u64)> {
        let head = read_exact(
            archive,
            self.header_offset,
            LOCAL_LEN as usize,
            "zip local header",
        )?;
        if u32_at(&head, 0) != LOCAL_SIG {
            return Err(Problem::corrupt(
                "zip local header",
                format!("no local header signature at offset {}", self.header_offset),
            ));
        }
        let name_len = u16_at(&head, 26) as u64;
        let extra_len = u16_at(&head, 28) as u64;
        let start = self.header_offset + LOCAL_LEN + name_len + extra_len;
        let end = start
            .checked_add(self.compressed_size)
            .ok_or_else(|| Problem::corrupt("zip entry", "size overflows"))?;
        if end > archive.len() {
            return Err(Problem::truncated("zip member", start, end, archive.len()));
        }
        Ok((start, self.compressed_size))
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// Where the central directory lies: (offset, size, entry count).
fn locate_directory(archive: &dyn ByteSource) -> PResult<(u64, u64, u64)> {
    let len = archive.len();
    if len < EOCD_LEN {
        return Err(Problem::corrupt(
            "zip archive",
            format!("{len} bytes is too short for a zip archive"),
        ));
    }
    // The record sits at the end, followed by a comment of at most 64 KiB.
    let tail_len = len.min(EOCD_LEN + u16::MAX as u64);
    let tail_start = len - tail_len;
    let tail = read_exact(
        archive,
        tail_start,
        tail_len as usize,
        "zip end of central directory",
    )?;
    let at = (0..=tail.len() - EOCD_LEN as usize)
        .rev()
        .find(|&i| {
            u32_at(&tail, i) == EOCD_SIG
                && i + EOCD_LEN as usize + u16_at(&tail, i + 20) as usize == tail.len()
        })
        .or_else(|| {
            (0..=tail.len() - EOCD_LEN as usize)
                .rev()
                .find(|&i| u32_at(&tail, i) == EOCD_SIG)
        })
        .ok_or_else(|| Problem::corrupt("zip archive", "no end-of-central-directory record"))?;
    let eocd = &tail[at..];
    let eocd_pos = tail_start + at as u64;
    let mut count = u16_at(eocd, 10) as u64;
    let mut size = u32_at(eocd, 12) as u64;
    let mut offset = u32_at(eocd, 16) as u64;
    if (u16_at(eocd, 4) != 0 || u16_at(eocd, 6) != 0 || u16_at(eocd, 8) != u16_at(eocd, 10))
        && count != 0xffff
    {
        return Err(Problem::unsupported(
            "zip archive",
            "spanning several disks",
        ));
    }
    if (count == 0xffff || size == 0xffff_ffff || offset == 0xffff_ffff) && eocd_pos >= LOCATOR_LEN
    {
        let locator = read_exact(
            archive,
            eocd_pos - LOCATOR_LEN,
            LOCATOR_LEN as usize,
            "zip64 locator",
        )?;
        if u32_at(&locator, 0) == LOCATOR_SIG {
            let pos = u64_at(&locator, 8);
            let rec = read_exact(
                archive,
                pos,
                EOCD64_LEN as usize,
                "zip64 end of central directory",
            )?;
            if u32_at(&rec, 0) != EOCD64_SIG {
                return Err(Problem::corrupt(
                    "zip64 end of central directory",
                    format!("no signature at offset {pos}"),
                ));
            }
            if u32_at(&rec, 16) != 0
                || u32_at(&rec, 20) != 0
                || u64_at(&rec, 24) != u64_at(&rec, 32)
            {
                return Err(Problem::unsupported(
                    "zip archive",
                    "spanning several disks",
                ));
            }
            count = u64_at(&rec, 32);
            size = u64_at(&rec, 40);
            offset = u64_at(&rec, 48);
        }
    }
    if count > MAX_ENTRIES {
        return Err(Problem::Limit(format!(
            "zip directory of {count} entries (at most {MAX_ENTRIES})"
        )));
    }
    if size > MAX_DIRECTORY_BYTES {
        return Err(Problem::Limit(format!(
            "zip directory of {size} bytes (at most {MAX_DIRECTORY_BYTES})"
        )));
    }
    let end = offset
        .checked_add(size)
        .ok_or_else(|| Problem::corrupt("zip directory", "offset overflows"))?;
    if end > len {
        return Err(Problem::truncated(
            "zip central directory",
            offset,
            end,
            len,
        ));
    }
    if count.saturating_mul(CENTRAL_LEN as u64) > size {
        return Err(Problem::corrupt(
            "zip directory",
            format!("{count} entries cannot fit in {size} bytes"),
        ));
    }
    Ok((offset, size, count))
}

/// The members of the zip archive in `archive`, in directory order.
pub fn read_directory(archive: &dyn ByteSource) -> PResult<Vec<ZipEntry>> {
    let (offset, size, count) = locate_directory(archive)?;
    let dir = read_exact(archive, offset, size as usize, "zip central directory")?;
    parse_directory(&dir, count)
}

/// Parse `count` central entries from the directory bytes `dir`.
pub fn parse_directory(dir: &[u8], count: u64) -> PResult<Vec<ZipEntry>> {
    let bad = |detail: String| Problem::corrupt("zip central directory", detail);
    let mut entries = Vec::with_capacity(count.min(dir.len() as u64 / CENTRAL_LEN as u64) as usize);
    let mut pos = 0usize;
    for i in 0..count {
        let fixed = dir
            .get(pos..pos + CENTRAL_LEN)
            .ok_or_else(|| bad(format!("entry {i} runs past the directory")))?;
        if u32_at(fixed, 0) != CENTRAL_SIG {
            return Err(bad(format!("entry {i} has no signature")));
        }
        let flags = u16_at(fixed, 8);
        let method = u16_at(fixed, 10);
        let mut compressed_size = u32_at(fixed, 20) as u64;
        let mut size = u32_at(fixed, 24) as u64;
        let name_len = u16_at(fixed, 28) as usize;
        let extra_len = u16_at(fixed, 30) as usize;
        let comment_len = u16_at(fixed, 32) as usize;
        let mut header_offset = u32_at(fixed, 42) as u64;
        let var_start = pos + CENTRAL_LEN;
        let var_end = var_start + name_len + extra_len + comment_len;
        let var = dir.get(var_start..var_end).ok_or_else(|| {
            bad(format!(
                "entry {i}'s name and extra fields run past the directory"
            ))
        })?;
        let name = String::from_utf8_lossy(&var[..name_len]).into_owned();
        let mut extra = &var[name_len..name_len + extra_len];
        while extra.len() >= 4 {
            let id = u16_at(extra, 0);
            let n = u16_at(extra, 2) as usize;
            let body = extra
                .get(4..4 + n)
                .ok_or_else(|| bad(format!("entry {i}'s extra field is cut short")))?;
            if id == ZIP64_EXTRA {
                let mut fields = body.chunks_exact(8).map(|c| u64_at(c, 0));
                let mut take = |v: &mut u64, what: &str| -> PResult<()> {
                    if *v == 0xffff_ffff {
                        *v = fields.next().ok_or_else(|| {
                            bad(format!("entry {i}'s zip64 field lacks its {what}"))
                        })?;
                    }
                    Ok(())
                };
                take(&mut size, "size")?;
                take(&mut compressed_size, "compressed size")?;
                take(&mut header_offset, "header offset")?;
            }
            extra = &extra[4 + n..];
        }
        entries.push(ZipEntry {
            name,
            method,
            flags,
            compressed_size,
            size,
            header_offset,
        });
        pos = var_end;
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::byte_source::SliceSource;

    /// A minimal archive of stored members, built by hand.
    fn archive(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut central = Vec::new();
        for (name, data) in members {
            let off = out.len() as u32;
            out.extend_from_slice(&LOCAL_SIG.to_le_bytes());
            out.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(&4u16.to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&[0xfe, 0xca, 0, 0]);
            out.extend_from_slice(data);
            central.extend_from_slice(&CENTRAL_SIG.to_le_bytes());
            central.extend_from_slice(&[20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            central.extend_from_slice(&(data.len() as u32).to_le_bytes());
            central.extend_from_slice(&(data.len() as u32).to_le_bytes());
            central.extend_from_slice(&(name.len() as u16).to_le_bytes());
            central.extend_from_slice(&[0; 12]);
            central.extend_from_slice(&off.to_le_bytes());
            central.extend_from_slice(name.as_bytes());
        }
        let cd_off = out.len() as u32;
        out.extend_from_slice(&central);
        out.extend_from_slice(&EOCD_SIG.to_le_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]);
        out.extend_from_slice(&(members.len() as u16).to_le_bytes());
        out.extend_from_slice(&(members.len() as u16).to_le_bytes());
        out.extend_from_slice(&(central.len() as u32).to_le_bytes());
        out.extend_from_slice(&cd_off.to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out
    }

    #[test]
    fn reads_members_and_local_offsets() {
        let bytes = archive(&[("a/b.b2nd", b"hello"), ("embed.b2e", b"xyz")]);
        let src = SliceSource(&bytes);
        let entries = read_directory(&src).unwrap();
        assert_eq!(
            entries.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
            ["a/b.b2nd", "embed.b2e"]
        );
        let (start, len) = entries[0].data_window(&src).unwrap();
        assert_eq!(&bytes[start as usize..(start + len) as usize], b"hello");
        let (start, len) = entries[1].data_window(&src).unwrap();
        assert_eq!(&bytes[start as usize..(start + len) as usize], b"xyz");
    }

    #[test]
    fn entry_bomb_is_refused_before_allocation() {
        let mut bytes = archive(&[("a", b"1")]);
        let n = bytes.len();
        bytes[n - 12..n - 10].copy_from_slice(&0xfffeu16.to_le_bytes());
        bytes[n - 14..n - 12].copy_from_slice(&0xfffeu16.to_le_bytes());
        let err = read_directory(&SliceSource(&bytes)).unwrap_err();
        assert!(err.to_string().contains("cannot fit"), "{err}");
    }

    #[test]
    fn garbage_is_not_a_zip() {
        assert!(read_directory(&SliceSource(&[0u8; 100])).is_err());
        assert!(read_directory(&SliceSource(b"PK")).is_err());
    }
}
