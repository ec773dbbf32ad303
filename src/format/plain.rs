//! Plain frames (no b2nd or caterva metalayer): the array is its chunks'
//! bytes one after the other, and chunks may differ in size and block size.
//!
//! Where a byte lies is known at the chunk level from the frame alone
//! ([`chunk_starts`], [`pieces`]); which block holds it needs the chunk's
//! layout ([`block_pieces`]), which the caller reads or keeps.

use super::chunk::ChunkLayout;
use super::error::{PResult, Problem};
use super::frame::Frame;
use super::geometry::{Piece, PieceSource};

/// Start of each chunk in the 1-D stream, plus the total at the end;
/// `chunk_nbytes(c)` tells a chunk's decoded size when the frame's chunks
/// differ in size (it reads the chunk's header).
pub(crate) fn chunk_starts(
    frame: &Frame,
    mut chunk_nbytes: impl FnMut(u64) -> PResult<u64>,
) -> PResult<Vec<u64>> {
    let n = frame.nchunks() as u64;
    let total = frame.nbytes;
    let mut starts = Vec::with_capacity(n as usize + 1);
    if frame.chunksize > 0 {
        for c in 0..=n {
            starts.push((c * frame.chunksize).min(total));
        }
    } else {
        // Chunks of different sizes: each one's header tells its size.
        let mut pos = 0u64;
        starts.push(0);
        for c in 0..n {
            pos += chunk_nbytes(c)?;
            starts.push(pos);
        }
    }
    let sum = starts.last().copied().unwrap_or(0);
    if sum != total {
        return Err(Problem::corrupt(
            "frame",
            format!("chunks add up to {sum} bytes, the header says {total}"),
        ));
    }
    Ok(starts)
}

/// Chunk-byte pieces serving `[start, start + len)` of the stream (already
/// clipped to its end).
pub(crate) fn pieces(chunk_starts: &[u64], start: u64, len: u64) -> Vec<Piece> {
    let end = start + len;
    let mut out = Vec::new();
    let mut pos = start;
    while pos < end {
        let c = chunk_starts.partition_point(|&s| s <= pos) - 1;
        let chunk_end = chunk_starts[c + 1].min(end);
        out.push(Piece {
            out_offset: pos - start,
            len: chunk_end - pos,
            source: PieceSource::ChunkBytes {
                chunk: c as u64,
                offset: pos - chunk_starts[c],
            },
        });
        pos = chunk_end;
    }
    out
}

/// Split one chunk-byte piece of chunk `c` into block pieces using its layout.
pub(crate) fn block_pieces(layout: &ChunkLayout, c: u64, piece: Piece) -> PResult<Vec<Piece>> {
    let PieceSource::ChunkBytes {
        chunk,
        offset: first,
    } = piece.source
    else {
        return Ok(vec![piece]);
    };
    if chunk != c {
        return Err(Problem::OutOfRange(format!(
            "a piece of chunk {chunk} split with the layout of chunk {c}"
        )));
    }
    let end = first + piece.len;
    if end > layout.nbytes() as u64 {
        return Err(Problem::corrupt(
            "chunk",
            format!(
                "chunk {c} holds {} bytes, a read needs {end}",
                layout.nbytes()
            ),
        ));
    }
    let mut out = Vec::new();
    let mut offset = first;
    while offset < end {
        let b = layout.block_at(offset as usize);
        let r = layout.block_range(b);
        let take = (r.end as u64).saturating_sub(offset).min(end - offset);
        if take == 0 {
            return Err(Problem::corrupt(
                "chunk",
                format!("chunk {c}: block layout does not cover offset {offset}"),
            ));
        }
        out.push(Piece {
            out_offset: piece.out_offset + (offset - first),
            len: take,
            source: PieceSource::Block {
                chunk: c,
                block: b as u64,
                offset: offset - r.start as u64,
            },
        });
        offset += take;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_follow_chunk_starts() {
        let starts = [0, 10, 25, 25, 40];
        let got = pieces(&starts, 5, 30);
        let want = [(0, 5, 0, 5), (5, 15, 1, 0), (20, 10, 3, 0)];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (p, (out, len, chunk, offset)) in got.iter().zip(want) {
            assert_eq!(
                (p.out_offset, p.len, p.source),
                (out, len, PieceSource::ChunkBytes { chunk, offset })
            );
        }
    }
}
