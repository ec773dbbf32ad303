//! JPEG 2000 plugin codecs, decoded in pure Rust: grok (37) and j2k (39)
//! with `hayro-jpeg2000`, HTJ2K (openhtj2k 36, htj2k 40) with OpenJPEG's
//! Rust port (`openjp2`, through `jpeg2k`).
//!
//! Both plugins compress one image per block: the block's shape, leading
//! 1s skipped, is (height, width) or (height, width, components), and the
//! block holds the samples pixel-interleaved (component fastest) at the
//! array's item size. The payload is a whole JP2 file or a raw J2K
//! codestream (grok's `cod_format`; j2k always writes JP2). The plugins'
//! decoder zeroes the block, then writes each component's samples as the
//! low `precision / 8` bytes (little-endian) of their integer value at
//! `(pixel * components + component) * (precision / 8)`; this file does
//! exactly that, with `hayro-jpeg2000` decoding the codestream.
//!
//! j2k's float mode (float32 arrays) first quantizes each block to 8, 16
//! or 32-bit integers between a scale minimum and maximum, compresses
//! those as an image, and prefixes a 64-byte header (`B2JPF32\0`, the
//! quantization and the scale); decoding undoes it as the plugin does:
//! `f32(scale_min + q * (scale_max - scale_min) / qmax)` in f64.
//!
//! The htj2k plugins write raw HTJ2K codestreams (Rsiz bit 14, a CAP
//! marker) with the same image layout; `hayro-jpeg2000` does not read
//! HTJ2K, so those go to OpenJPEG.
//!
//! What is refused (an error, never guessed bytes): an HTJ2K codestream
//! under j2k (its plugin refuses it too), signed or
//! subsampled components, precisions outside 8-16 bits, image offsets, and
//! images that would not fit the block (the plugin would write past its
//! buffer). The image size is checked before anything is decoded, so a
//! hostile header cannot make the decoder allocate more than the block.

use super::CodecError;

const CODEC: &str = "jpeg2000";

/// The float-mode header's magic, version and size (j2k's `float_quantization.cpp`).
const FLOAT_MAGIC: &[u8; 8] = b"B2JPF32\0";
const FLOAT_VERSION: u16 = 1;
const FLOAT_HEADER_LEN: usize = 64;
/// Float-mode flag: every value of the block is `scale_min` (no image follows).
const FLOAT_FLAG_CONSTANT: u16 = 0x04;

fn corrupt(detail: impl Into<String>) -> CodecError {
    CodecError::Corrupt {
        codec: CODEC,
        detail: detail.into(),
    }
}

fn unsupported(detail: impl Into<String>) -> CodecError {
    CodecError::Unsupported {
        codec: CODEC,
        detail: detail.into(),
    }
}

/// Decode one block `payload` of codec `id` (grok 37 or j2k 39) into all of `dst`.
pub fn decompress(id: u8, payload: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    // Only j2k has a float mode; grok hands any payload to its decoder.
    if id == super::codec_id::J2K
        && payload.len() >= FLOAT_HEADER_LEN
        && payload.starts_with(FLOAT_MAGIC)
    {
        decode_float(payload, dst)
    } else {
        decode_image(id, payload, dst)
    }
}

/// What the codestream's SIZ marker says about each component.
struct Component {
    precision: u8,
    signed: bool,
    subsampled: bool,
}

/// The main header facts checked before decoding.
struct Siz {
    rsiz: u16,
    width: u64,
    height: u64,
    offset: bool,
    components: Vec<Component>,
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The codestream inside `payload`: the payload itself, or a JP2 file's
/// contiguous codestream box (`jp2c`), found by walking the top-level boxes.
fn codestream(payload: &[u8]) -> Result<&[u8], CodecError> {
    if payload.starts_with(&[0xff, 0x4f, 0xff, 0x51]) {
        return Ok(payload);
    }
    let mut at = 0usize;
    while at + 8 <= payload.len() {
        let len = be32(payload, at).unwrap_or(0) as u64;
        let kind = &payload[at + 4..at + 8];
        let (header, body_len) = match len {
            0 => (8, (payload.len() - at - 8) as u64),
            1 => {
                let Some(big) = payload.get(at + 8..at + 16) else {
                    break;
                };
                let big = u64::from_be_bytes(big.try_into().unwrap_or([0; 8]));
                (
                    16,
                    big.checked_sub(16)
                        .ok_or_else(|| corrupt("JP2 box too short"))?,
                )
            }
            2..=7 => return Err(corrupt(format!("JP2 box of length {len}"))),
            _ => (8, len - 8),
        };
        let start = at + header;
        let end = usize::try_from(start as u64 + body_len)
            .ok()
            .filter(|&e| e <= payload.len())
            .ok_or_else(|| corrupt("JP2 box runs past the end of the block"))?;
        if kind == b"jp2c" {
            return Ok(&payload[start..end]);
        }
        at = end;
    }
    Err(corrupt("neither a J2K codestream nor a JP2 file with one"))
}

/// Parse the SIZ marker that follows SOC at the start of `cs`.
fn parse_siz(cs: &[u8]) -> Result<Siz, CodecError> {
    let short = || corrupt("codestream header truncated");
    if cs.get(0..4) != Some(&[0xff, 0x4f, 0xff, 0x51]) {
        return Err(corrupt("codestream does not start with SOC and SIZ"));
    }
    let rsiz = be16(cs, 6).ok_or_else(short)?;
    let xsiz = be32(cs, 8).ok_or_else(short)?;
    let ysiz = be32(cs, 12).ok_or_else(short)?;
    let xo = be32(cs, 16).ok_or_else(short)?;
    let yo = be32(cs, 20).ok_or_else(short)?;
    let csiz = be16(cs, 40).ok_or_else(short)?;
    let mut components = Vec::with_capacity(csiz as usize);
    for c in 0..csiz as usize {
        let at = 42 + 3 * c;
        let s = *cs.get(at).ok_or_else(short)?;
        let xr = *cs.get(at + 1).ok_or_else(short)?;
        let yr = *cs.get(at + 2).ok_or_else(short)?;
        components.push(Component {
            precision: (s & 0x7f) + 1,
            signed: s & 0x80 != 0,
            subsampled: xr != 1 || yr != 1,
        });
    }
    Ok(Siz {
        rsiz,
        width: u64::from(xsiz.saturating_sub(xo)),
        height: u64::from(ysiz.saturating_sub(yo)),
        offset: xo != 0 || yo != 0,
        components,
    })
}

/// Decode a JP2 file or J2K codestream of codec `id` into `dst` as the plugins lay it out.
fn decode_image(id: u8, payload: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    let siz = parse_siz(codestream(payload)?)?;
    let ht = siz.rsiz & 0x4000 != 0;
    if ht && id == super::codec_id::J2K {
        // blosc2-j2k refuses these too ("use the separate 'htj2k' codec").
        return Err(corrupt("an HTJ2K codestream under the j2k codec"));
    }
    let ncomp = siz.components.len();
    if ncomp == 0 {
        return Err(corrupt("image with no components"));
    }
    let precision = siz.components[0].precision;
    for c in &siz.components {
        if c.signed || c.subsampled || c.precision != precision {
            return Err(unsupported(
                "signed, subsampled or mixed-precision components (the plugins write none)",
            ));
        }
    }
    if !(8..=16).contains(&precision) {
        return Err(unsupported(format!(
            "{precision}-bit samples (the plugins write 8 or 16)"
        )));
    }
    if siz.offset {
        return Err(unsupported("an image offset (the plugins write none)"));
    }
    let itemsize = usize::from(precision / 8);
    let needed = siz
        .width
        .checked_mul(siz.height)
        .and_then(|p| p.checked_mul((ncomp * itemsize) as u64))
        .filter(|&n| n <= dst.len() as u64)
        .ok_or_else(|| {
            corrupt(format!(
                "a {}x{} image of {ncomp} {precision}-bit components does not fit a {}-byte block",
                siz.width,
                siz.height,
                dst.len()
            ))
        })? as usize;

    if ht || id == super::codec_id::HTJ2K || id == super::codec_id::OPENHTJ2K {
        return decode_with_openjpeg(payload, &siz, precision, needed, dst);
    }
    let settings = hayro_jpeg2000::DecodeSettings {
        resolve_palette_indices: false,
        strict: false,
        target_resolution: None,
    };
    let image =
        hayro_jpeg2000::Image::new(payload, &settings).map_err(|e| corrupt(format!("{e:?}")))?;
    if u64::from(image.width()) != siz.width || u64::from(image.height()) != siz.height {
        return Err(corrupt("JP2 and codestream disagree on the image size"));
    }
    let mut context = hayro_jpeg2000::DecoderContext::default();
    let decoded = image
        .decode(&mut context)
        .map_err(|e| corrupt(format!("{e:?}")))?;
    let components = decoded.components();
    let pixels = needed / (ncomp * itemsize);
    if components.len() != ncomp
        || components
            .iter()
            .any(|c| c.samples().len() != pixels || c.bit_depth() != precision)
    {
        return Err(corrupt(
            "decoded components differ from the codestream header",
        ));
    }
    dst.fill(0);
    let top = ((1u32 << precision) - 1) as f32;
    for (k, component) in components.iter().enumerate() {
        let samples = component.samples();
        let out = dst[..needed].chunks_exact_mut(ncomp * itemsize);
        for (pixel, &sample) in out.zip(samples) {
            // Lossless (5/3) samples are whole numbers already; lossy (9/7)
            // ones are rounded to the nearest (ties to even) and clamped to
            // the precision's range, as the plugin's decoder stores them.
            let value = sample.round_ties_even().clamp(0.0, top) as u32;
            pixel[k * itemsize..(k + 1) * itemsize]
                .copy_from_slice(&value.to_le_bytes()[..itemsize]);
        }
    }
    Ok(())
}

/// Decode with OpenJPEG (its Rust port), which reads HTJ2K: each
/// component's integer samples, their low bytes stored as the plugins do.
/// `siz` was checked already and the image fits `needed` bytes of `dst`.
fn decode_with_openjpeg(
    payload: &[u8],
    siz: &Siz,
    precision: u8,
    needed: usize,
    dst: &mut [u8],
) -> Result<(), CodecError> {
    let ncomp = siz.components.len();
    let itemsize = usize::from(precision / 8);
    let pixels = needed / (ncomp * itemsize);
    // Strict: a truncated codestream is an error, not a partly decoded image.
    let params = jpeg2k::DecodeParameters::new().strict(true);
    // The port is translated C; a hostile codestream must not take the
    // daemon down even if it trips an index check in there.
    let decoded = std::panic::catch_unwind(|| {
        let image = jpeg2k::Image::from_bytes_with(payload, params)
            .map_err(|e| corrupt(format!("OpenJPEG: {e}")))?;
        let components = image.components();
        if components.len() != ncomp
            || components.iter().any(|c| {
                c.width() as usize * c.height() as usize != pixels
                    || u64::from(c.width()) != siz.width
                    || c.precision() != u32::from(precision)
                    || c.is_signed()
            })
        {
            return Err(corrupt(
                "decoded components differ from the codestream header",
            ));
        }
        Ok(components
            .iter()
            .map(|c| c.data().to_vec())
            .collect::<Vec<_>>())
    })
    .map_err(|_| corrupt("OpenJPEG failed on this codestream"))??;
    dst.fill(0);
    for (k, samples) in decoded.iter().enumerate() {
        let out = dst[..needed].chunks_exact_mut(ncomp * itemsize);
        for (pixel, &sample) in out.zip(samples) {
            // The plugins copy the low bytes of each 32-bit sample.
            pixel[k * itemsize..(k + 1) * itemsize]
                .copy_from_slice(&sample.to_le_bytes()[..itemsize]);
        }
    }
    Ok(())
}

fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn le_f64(b: &[u8], at: usize) -> f64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&b[at..at + 8]);
    f64::from_le_bytes(raw)
}

/// Decode j2k's float mode: header, quantized image, dequantized f32 values.
fn decode_float(payload: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    let version = le_u16(payload, 8);
    let header_len = le_u16(payload, 10);
    if version != FLOAT_VERSION || usize::from(header_len) != FLOAT_HEADER_LEN {
        return Err(unsupported(format!(
            "float header version {version}, size {header_len}"
        )));
    }
    let bits = payload[12];
    let nan_policy = payload[13];
    let flags = le_u16(payload, 14);
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&payload[16..24]);
    let inner_len = u64::from_le_bytes(raw);
    let scale_min = le_f64(payload, 24);
    let scale_max = le_f64(payload, 32);
    if !matches!(bits, 8 | 16 | 32) || nan_policy != 0 {
        return Err(unsupported(format!(
            "float mode with {bits}-bit quantization, NaN policy {nan_policy}"
        )));
    }
    if dst.len() % 4 != 0 {
        return Err(corrupt(format!(
            "a float block of {} bytes (not whole float32 values)",
            dst.len()
        )));
    }
    if inner_len > (payload.len() - FLOAT_HEADER_LEN) as u64 {
        return Err(CodecError::Truncated { codec: CODEC });
    }
    let n = dst.len() / 4;
    if flags & FLOAT_FLAG_CONSTANT != 0 {
        let value = (scale_min as f32).to_le_bytes();
        for item in dst.chunks_exact_mut(4) {
            item.copy_from_slice(&value);
        }
        return Ok(());
    }
    if bits == 32 {
        // hayro's samples are f32, exact only to 24 bits.
        return Err(unsupported("float mode quantized to 32 bits"));
    }
    let qbytes = usize::from(bits / 8);
    let inner = &payload[FLOAT_HEADER_LEN..FLOAT_HEADER_LEN + inner_len as usize];
    let mut quantized = vec![0u8; n * qbytes];
    decode_image(super::codec_id::J2K, inner, &mut quantized)?;
    let qmax = if bits == 8 { 255.0 } else { 65535.0 };
    let scale = (scale_max - scale_min) / qmax;
    for (out, q) in dst.chunks_exact_mut(4).zip(quantized.chunks_exact(qbytes)) {
        let q = if qbytes == 1 {
            f64::from(q[0])
        } else {
            f64::from(u16::from_le_bytes([q[0], q[1]]))
        };
        out.copy_from_slice(&((scale_min + q * scale) as f32).to_le_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_and_truncated_payloads_are_errors() {
        let mut dst = vec![0u8; 64];
        assert!(decompress(39, b"", &mut dst).is_err());
        assert!(decompress(39, &[0xff, 0x4f, 0xff, 0x51, 0, 0x29], &mut dst).is_err());
        assert!(decompress(39, b"B2JPF32\0short", &mut dst).is_err());
        let mut header = b"B2JPF32\0".to_vec();
        header.extend_from_slice(&[1, 0, 64, 0, 16, 0, 0, 0]);
        header.extend_from_slice(&1000u64.to_le_bytes());
        header.resize(64, 0);
        assert!(matches!(
            decompress(39, &header, &mut dst),
            Err(CodecError::Truncated { .. })
        ));
        assert!(decompress(39, &[0, 0, 0, 12, b'j', b'P', b' ', b' '], &mut dst).is_err());
    }

    #[test]
    fn an_image_larger_than_the_block_is_refused_before_decoding() {
        // SOC, SIZ of a 65535 x 65535 single 16-bit component image.
        let mut cs = vec![0xff, 0x4f, 0xff, 0x51, 0, 41, 0, 0];
        cs.extend_from_slice(&65535u32.to_be_bytes());
        cs.extend_from_slice(&65535u32.to_be_bytes());
        cs.extend_from_slice(&[0; 8]);
        cs.extend_from_slice(&65535u32.to_be_bytes());
        cs.extend_from_slice(&65535u32.to_be_bytes());
        cs.extend_from_slice(&[0; 8]);
        cs.extend_from_slice(&[0, 1, 15, 1, 1]);
        let mut dst = vec![0u8; 128];
        let err = decompress(37, &cs, &mut dst).unwrap_err();
        assert!(err.to_string().contains("does not fit"), "{err}");
    }
}
