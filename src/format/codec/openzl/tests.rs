//! The OpenZL wrapper against the streams blosc2-openzl itself wrote (the
//! `openzl_*` fixtures of tests/fixtures/plugins, whose manifest holds
//! python-blosc2's decode of each chunk), and against hostile streams:
//! truncated, garbage, empty, and frames claiming another size.

use super::*;
use crate::format::byte_source::SliceSource;
use crate::format::codec::test_chunks::{self, sha256_hex};
use crate::format::{ChunkOffset, Frame};

/// One fixture's streams, per chunk in stored order, and its typesize.
struct Fixture {
    name: String,
    typesize: usize,
    /// Per chunk: its blocks' streams (csize, payload, raw length).
    chunks: Vec<Vec<(i32, Vec<u8>, usize)>>,
    chunk_sha256: Vec<String>,
}

fn fixtures() -> Vec<Fixture> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plugins");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let mut out = Vec::new();
    for (name, entry) in manifest.as_object().unwrap() {
        if entry["codec_id"] != 38 {
            continue;
        }
        let bytes = std::fs::read(dir.join(entry["path"].as_str().unwrap())).unwrap();
        let frame = Frame::read(&SliceSource(&bytes), false).unwrap();
        let mut chunks = Vec::new();
        let mut typesize = 0;
        for offset in &frame.offsets {
            let ChunkOffset::Stored(at) = *offset else {
                panic!("{name}: special chunk");
            };
            let at = (frame.header_len + at) as usize;
            let cbytes = u32::from_le_bytes(bytes[at + 12..at + 16].try_into().unwrap()) as usize;
            let chunk_bytes = &bytes[at..at + cbytes];
            if chunk_bytes[2] & 0x02 != 0 {
                // Memcpyed: OpenZL could not shrink it, the raw bytes follow
                // the (extended, 32-byte) header.
                let raw = chunk_bytes[32..].to_vec();
                chunks.push(vec![(raw.len() as i32, raw.clone(), raw.len())]);
                continue;
            }
            let chunk = test_chunks::parse(chunk_bytes);
            assert_eq!(
                chunk.codec, 6,
                "{name}: a user-defined codec in the chunk header"
            );
            typesize = chunk.typesize;
            let streams = chunk
                .blocks
                .iter()
                .flatten()
                .map(|s| (s.csize, s.data.to_vec(), s.raw_len))
                .collect();
            chunks.push(streams);
        }
        let chunk_sha256 = entry["chunk_sha256"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect();
        out.push(Fixture {
            name: name.clone(),
            typesize,
            chunks,
            chunk_sha256,
        });
    }
    assert!(out.len() >= 6, "only {} OpenZL fixtures", out.len());
    out
}

/// Decode one stream as the pipeline does: zeros, runs and stored streams
/// need no codec.
fn decode_stream(
    csize: i32,
    payload: &[u8],
    dst: &mut [u8],
    typesize: usize,
) -> Result<bool, CodecError> {
    if csize == 0 {
        dst.fill(0);
        Ok(false)
    } else if csize < 0 {
        dst.fill((-csize) as u8);
        Ok(false)
    } else if csize as usize == dst.len() {
        dst.copy_from_slice(payload);
        Ok(false)
    } else {
        decompress(payload, dst, typesize).map(|()| true)
    }
}

/// The payloads that went through OpenZL, with their raw length and typesize.
#[cfg(feature = "openzl-c")]
fn coded_payloads() -> Vec<(String, Vec<u8>, usize, usize)> {
    let mut out = Vec::new();
    for f in fixtures() {
        for streams in &f.chunks {
            for (csize, payload, raw_len) in streams {
                if *csize > 0 && *csize as usize != *raw_len {
                    out.push((f.name.clone(), payload.clone(), *raw_len, f.typesize));
                }
            }
        }
    }
    out
}

#[cfg(feature = "openzl-c")]
#[test]
fn every_fixture_chunk_decodes_to_python_blosc2s_bytes() {
    let mut coded = 0;
    for f in fixtures() {
        for (c, streams) in f.chunks.iter().enumerate() {
            let mut chunk = Vec::new();
            for (csize, payload, raw_len) in streams {
                let at = chunk.len();
                chunk.resize(at + raw_len, 0x5a);
                let used = decode_stream(*csize, payload, &mut chunk[at..], f.typesize)
                    .unwrap_or_else(|e| panic!("{}: chunk {c}: {e}", f.name));
                coded += used as usize;
            }
            assert_eq!(
                sha256_hex(&chunk),
                f.chunk_sha256[c],
                "{}: chunk {c}",
                f.name
            );
        }
    }
    assert!(coded >= 10, "only {coded} streams went through OpenZL");
}

/// OpenZL's working memory for the fixtures' honest frames, against the
/// budget each decode gets: well inside it (so no honest frame is refused).
#[cfg(feature = "openzl-c")]
#[test]
fn honest_frames_need_far_less_than_the_budget() {
    let mut ctx = super::ffi::DecompressionContext::new().unwrap();
    for (name, payload, raw_len, _) in coded_payloads() {
        let mut dst = vec![0u8; raw_len];
        let budget = super::backend::budget(raw_len);
        let first = ctx.decompress_into(&payload, &mut dst, budget).unwrap();
        let again = ctx.decompress_into(&payload, &mut dst, budget).unwrap();
        let most = first.allocated.max(again.allocated);
        eprintln!("{name}: {raw_len}-byte stream, OpenZL allocated {most} bytes (budget {budget})");
        assert!(most < budget / 2, "{name}: {most} bytes of {budget}");
        // Too small a budget is an error naming it, not a crash.
        let err = ctx.decompress_into(&payload, &mut dst, 64).unwrap_err();
        assert!(err.to_string().contains("working memory"), "{name}: {err}");
    }
}

#[cfg(feature = "openzl-c")]
#[test]
fn every_cut_of_a_frame_is_an_error() {
    for (name, payload, raw_len, typesize) in coded_payloads().into_iter().take(4) {
        let mut dst = vec![0u8; raw_len];
        for cut in (0..payload.len()).step_by(payload.len() / 61 + 1) {
            let result = decompress(&payload[..cut], &mut dst, typesize);
            assert!(
                result.is_err(),
                "{name}: cut at {cut} of {} decoded",
                payload.len()
            );
        }
    }
}

#[cfg(feature = "openzl-c")]
#[test]
fn flipped_bytes_never_panic_and_never_return_other_bytes_as_success() {
    // Without checksums a flipped literal may decode to other values (as
    // with any codec); what must hold is: no panic, and an Ok fills the
    // whole block (the same bytes whatever the buffer held before).
    for (name, payload, raw_len, typesize) in coded_payloads() {
        let mut whole = vec![0u8; raw_len];
        decompress(&payload, &mut whole, typesize).unwrap();
        for at in (0..payload.len()).step_by(payload.len() / 37 + 1) {
            let mut bad = payload.clone();
            bad[at] ^= 0x5a;
            let (mut a, mut b) = (vec![0u8; raw_len], vec![0xffu8; raw_len]);
            let (ra, rb) = (
                decompress(&bad, &mut a, typesize),
                decompress(&bad, &mut b, typesize),
            );
            assert_eq!(ra.is_ok(), rb.is_ok(), "{name}: flip at {at}");
            if ra.is_ok() {
                assert!(a == b, "{name}: flip at {at}: Ok with bytes left unwritten");
            }
        }
    }
}

#[cfg(feature = "openzl-c")]
#[test]
fn a_frame_claiming_another_size_than_the_block_is_refused_before_decoding() {
    let (name, payload, raw_len, typesize) = coded_payloads().remove(0);
    for len in [raw_len - typesize, raw_len + typesize, 0, 2 * raw_len] {
        let mut dst = vec![0u8; len];
        let err = decompress(&payload, &mut dst, typesize).unwrap_err();
        assert!(err.to_string().contains("claims"), "{name}: {len}: {err}");
    }
}

#[cfg(feature = "openzl-c")]
#[test]
fn a_frame_of_other_items_than_the_chunks_is_refused() {
    let (name, payload, raw_len, typesize) =
        coded_payloads().into_iter().find(|p| p.3 == 4).unwrap();
    assert_eq!(typesize, 4);
    let mut dst = vec![0u8; raw_len];
    for other in [1, 2, 8, 3] {
        let err = decompress(&payload, &mut dst, other).unwrap_err();
        assert!(
            err.to_string().contains("structs"),
            "{name}: {other}: {err}"
        );
    }
}

#[cfg(feature = "openzl-c")]
#[test]
fn empty_short_and_garbage_inputs_are_errors() {
    let mut dst = vec![0u8; 64];
    assert!(matches!(
        decompress(b"", &mut dst, 4),
        Err(CodecError::Truncated { .. })
    ));
    assert!(matches!(
        decompress(&[0xd7, 0xa5], &mut dst, 4),
        Err(CodecError::Truncated { .. })
    ));
    let err = decompress(&[0u8; 64], &mut dst, 4).unwrap_err();
    assert!(err.to_string().contains("not an OpenZL frame"), "{err}");
    // The magic of every version from before OpenZL's first to far past its
    // last, followed by garbage or nothing.
    for version in 0u8..64 {
        for tail in [
            &[][..],
            &[0u8; 8][..],
            &[0xff; 40][..],
            &[1, 2, 3, 4, 5, 6, 7][..],
        ] {
            let mut frame = vec![0xc0u8.wrapping_add(version), 0xa5, 0xb1, 0xd7];
            frame.extend_from_slice(tail);
            assert!(
                decompress(&frame, &mut dst, 4).is_err(),
                "version {version} {tail:?}"
            );
        }
    }
    let mut empty: [u8; 0] = [];
    assert!(decompress(&[0xd7, 0xa5, 0xb1, 0xd7, 0, 0], &mut empty, 4).is_err());
}

/// Without the feature every frame is refused naming it; chunks OpenZL
/// could not shrink (stored raw) still read exactly.
#[cfg(not(feature = "openzl-c"))]
#[test]
fn without_the_feature_every_frame_is_refused_naming_the_feature() {
    let (mut refused, mut stored) = (0, 0);
    for f in fixtures() {
        for (c, streams) in f.chunks.iter().enumerate() {
            let mut chunk = Vec::new();
            let mut failed = false;
            for (csize, payload, raw_len) in streams {
                let at = chunk.len();
                chunk.resize(at + raw_len, 0);
                if let Err(e) = decode_stream(*csize, payload, &mut chunk[at..], f.typesize) {
                    assert!(e.to_string().contains("openzl-c"), "{e}");
                    failed = true;
                }
            }
            if failed {
                refused += 1;
            } else {
                assert_eq!(
                    sha256_hex(&chunk),
                    f.chunk_sha256[c],
                    "{}: chunk {c}",
                    f.name
                );
                stored += 1;
            }
        }
    }
    assert!(
        refused >= 10 && stored >= 1,
        "{refused} refused, {stored} stored"
    );
}

/// Random mutations of the fixtures' frames (flips, overwrites, cuts,
/// inserts) for `SOAK_SECS` seconds (30 by default): no panic, no crash.
/// Run by hand, e.g. under valgrind:
/// `SOAK_SECS=100 valgrind --error-exitcode=9 <lib test binary> --ignored random_mutations`.
#[cfg(feature = "openzl-c")]
#[test]
#[ignore]
fn random_mutations_of_fixture_frames_soak() {
    let payloads = coded_payloads();
    let secs: u64 = std::env::var("SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let start = std::time::Instant::now();
    let mut state = 0x9e3779b97f4a7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut n, mut ok) = (0u64, 0u64);
    while start.elapsed().as_secs() < secs {
        let (_, p, raw_len, typesize) = &payloads[next() as usize % payloads.len()];
        let mut bad = p.clone();
        let k = 1 + next() % 8;
        for _ in 0..k {
            let at = next() as usize % bad.len();
            match next() % 4 {
                0 => bad[at] ^= 1 << (next() % 8),
                1 => bad[at] = next() as u8,
                2 => bad.truncate(at.max(4)),
                _ => {
                    let v = next() as u8;
                    bad.insert(at, v)
                }
            }
        }
        let mut dst = vec![0u8; *raw_len];
        if decompress(&bad, &mut dst, *typesize).is_ok() {
            ok += 1;
        }
        n += 1;
    }
    eprintln!("{n} mutated frames, {ok} decoded Ok");
}
