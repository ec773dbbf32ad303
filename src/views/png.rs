//! The PNG encoder behind `preview.png`: 8-bit RGB or RGBA, fixed-length
//! `tEXt` chunks, and image data in *stored* (uncompressed) deflate blocks,
//! so a file's length is a function of its dimensions and text lengths
//! ([`png_len`]) and is known at `stat` time, before any pixel is decoded.
//!
//! Small enough to write here (CRC-32 and Adler-32 included) rather than
//! pull in a crate whose compressed output length could not be predicted.

/// The PNG signature.
const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

/// Largest payload of one stored deflate block.
const STORED_MAX: usize = 65535;

/// One fixed-length text chunk: its keyword and the length its text is padded
/// (with spaces) or cut to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextField {
    /// The `tEXt` keyword (1-79 Latin-1 characters).
    pub keyword: &'static str,
    /// Bytes of its text.
    pub len: usize,
}

/// Bytes of the zlib stream holding `raw` bytes in stored blocks.
fn zlib_len(raw: u64) -> u64 {
    2 + raw + 5 * raw.div_ceil(STORED_MAX as u64).max(1) + 4
}

/// Bytes of the image data before compression: each row is a filter byte
/// (0, none) and its pixels.
fn raw_len(width: u32, height: u32, channels: u8) -> u64 {
    height as u64 * (1 + width as u64 * channels as u64)
}

/// Length of the PNG [`encode`] writes for these dimensions and texts.
pub fn png_len(width: u32, height: u32, channels: u8, texts: &[TextField]) -> u64 {
    let chunk = |data: u64| 12 + data;
    SIGNATURE.len() as u64
        + chunk(13)
        + texts
            .iter()
            .map(|t| chunk(t.keyword.len() as u64 + 1 + t.len as u64))
            .sum::<u64>()
        + chunk(zlib_len(raw_len(width, height, channels)))
        + chunk(0)
}

/// A PNG of `width` x `height` pixels of `channels` (3: RGB, 4: RGBA) bytes
/// each, rows top to bottom in `pixels`, with `texts` (each padded or cut to
/// its field's length; non-Latin-1-printable bytes become `?`).
pub fn encode(
    width: u32,
    height: u32,
    channels: u8,
    pixels: &[u8],
    texts: &[(TextField, &str)],
) -> Vec<u8> {
    let fields: Vec<TextField> = texts.iter().map(|(f, _)| *f).collect();
    let mut out = Vec::with_capacity(png_len(width, height, channels, &fields) as usize);
    out.extend_from_slice(&SIGNATURE);
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    // Bit depth 8; colour type 2 (RGB) or 6 (RGBA); deflate; filter 0; no interlace.
    ihdr.extend_from_slice(&[8, if channels == 4 { 6 } else { 2 }, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    for (field, text) in texts {
        let mut data = Vec::with_capacity(field.keyword.len() + 1 + field.len);
        data.extend_from_slice(field.keyword.as_bytes());
        data.push(0);
        let mut body: Vec<u8> = text
            .bytes()
            .map(|b| if (0x20..0x7f).contains(&b) { b } else { b'?' })
            .take(field.len)
            .collect();
        body.resize(field.len, b' ');
        data.extend_from_slice(&body);
        chunk(&mut out, b"tEXt", &data);
    }
    let row = width as usize * channels as usize;
    let mut raw = Vec::with_capacity(raw_len(width, height, channels) as usize);
    for y in 0..height as usize {
        raw.push(0);
        raw.extend_from_slice(&pixels[y * row..(y + 1) * row]);
    }
    chunk(&mut out, b"IDAT", &zlib_stored(&raw));
    chunk(&mut out, b"IEND", &[]);
    out
}

/// A zlib stream of `raw` in stored deflate blocks.
fn zlib_stored(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(zlib_len(raw.len() as u64) as usize);
    // CMF: deflate, 32 KiB window; FLG: no dictionary, check bits make it a multiple of 31.
    out.extend_from_slice(&[0x78, 0x01]);
    let mut blocks = raw.chunks(STORED_MAX).peekable();
    if blocks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        out.push(if blocks.peek().is_none() { 1 } else { 0 });
        let len = block.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(raw).to_be_bytes());
    out
}

/// Append a chunk: length, type, data, CRC-32 of type and data.
fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// CRC-32 (ISO 3309, as PNG and zlib's `crc32` compute it).
pub fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut n = 0;
        while n < 256 {
            let mut c = n as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            table[n] = c;
            n += 1;
        }
        table
    };
    !bytes.iter().fold(!0u32, |c, &b| {
        TABLE[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8)
    })
}

/// Adler-32 (RFC 1950).
pub fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for block in bytes.chunks(5552) {
        for &x in block {
            a += x as u32;
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    (b << 16) | a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_match_known_values() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b"IEND"), 0xae42_6082);
        assert_eq!(adler32(b"Wikipedia"), 0x11e6_0398);
        assert_eq!(adler32(&[]), 1);
        let big = vec![0xffu8; 100_000];
        // Adler-32 of n 0xff bytes: a = 1 + 255n, b = n + 255 n(n+1)/2, both mod 65521.
        let n = big.len() as u64;
        let a = (1 + 255 * n) % 65521;
        let b = (n + 255 * n * (n + 1) / 2) % 65521;
        assert_eq!(adler32(&big), ((b << 16) | a) as u32);
    }

    #[test]
    fn length_is_known_before_encoding_and_zlib_inflates_back() {
        let texts = [
            TextField {
                keyword: "Comment",
                len: 20,
            },
            TextField {
                keyword: "Range",
                len: 5,
            },
        ];
        for (w, h, ch) in [
            (1u32, 1u32, 3u8),
            (512, 512, 4),
            (300, 7, 3),
            (21845, 1, 3),
            (21844, 3, 3),
        ] {
            let pixels: Vec<u8> = (0..(w * h * ch as u32)).map(|i| (i * 7) as u8).collect();
            let png = encode(
                w,
                h,
                ch,
                &pixels,
                &[(texts[0], "hello\u{e9}"), (texts[1], "too long to fit")],
            );
            assert_eq!(png.len() as u64, png_len(w, h, ch, &texts), "{w}x{h}x{ch}");
            assert_eq!(&png[..8], &SIGNATURE);
            assert!(png.ends_with(&[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82]));
            let comment = png.windows(8).position(|win| win == b"Comment\0").unwrap() + 8;
            assert_eq!(&png[comment..comment + 20], b"hello??             ");
            let range = png.windows(6).position(|win| win == b"Range\0").unwrap() + 6;
            assert_eq!(&png[range..range + 5], b"too l");
            // The IDAT payload inflates to the filtered rows.
            let idat = png.windows(4).position(|win| win == b"IDAT").unwrap();
            let len = u32::from_be_bytes(png[idat - 4..idat].try_into().unwrap()) as usize;
            let mut inflated = Vec::new();
            use std::io::Read;
            flate2::read::ZlibDecoder::new(&png[idat + 4..idat + 4 + len])
                .read_to_end(&mut inflated)
                .unwrap();
            let row = (w * ch as u32) as usize;
            assert_eq!(inflated.len(), h as usize * (row + 1));
            for y in 0..h as usize {
                assert_eq!(inflated[y * (row + 1)], 0);
                assert_eq!(
                    &inflated[y * (row + 1) + 1..(y + 1) * (row + 1)],
                    &pixels[y * row..(y + 1) * row]
                );
            }
        }
    }
}
