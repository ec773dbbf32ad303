//! Assembling a read's bytes: the pieces of a range (from the format
//! layer's geometry), checked to tile the output, each copied into it from
//! a cached block, a block decoded for it, the source (raw chunks) or
//! zeros; blocks not cached are handled as the read's `Misses` say.

use std::collections::BTreeMap;

use crate::format::{Array, PResult, Piece, PieceSource, Problem, Region};

use super::block_cache::Block;
use super::blocks::Blocks;
use super::view::RowSelection;

/// Blocks one fill keeps at hand (enough for a row crossing 64 chunks), so a
/// request whose rows cross many chunks asks the cache once per block.
const AT_HAND: usize = 64;

/// What a fill does with blocks missing from the cache.
#[derive(Debug, Clone, Copy)]
pub(super) struct Misses {
    /// Whole blocks are decoded straight into the output, not kept.
    pub(super) direct: bool,
    /// Blocks read only in part are decoded into the cache, for the reads
    /// that will want the rest. Otherwise (a small read away from the
    /// last: a random reader) into a per-thread scratch buffer, which
    /// spares the fresh cache memory its page faults.
    pub(super) keep_partial: bool,
}

impl Misses {
    /// Every block through the cache (one-off and standalone reads).
    const CACHED: Misses = Misses {
        direct: false,
        keep_partial: true,
    };
}

/// Fill `out` with bytes `[start, start + out.len())` of `region`.
pub fn fill(
    blocks: &Blocks,
    array: &Array,
    region: Region,
    start: u64,
    out: &mut [u8],
) -> PResult<()> {
    fill_with(blocks, array, region, start, out, Misses::CACHED)
}

/// [`fill`], treating blocks not cached as `misses` says.
pub(super) fn fill_with(
    blocks: &Blocks,
    array: &Array,
    region: Region,
    start: u64,
    out: &mut [u8],
    misses: Misses,
) -> PResult<()> {
    let pieces = tiling_pieces(array, region, start, out.len() as u64)?;
    fill_pieces(blocks, array, pieces, out, misses)
}

/// The pieces of bytes `[start, start + len)` of `region`, checked to tile
/// them exactly: an output buffer may hold bytes of an earlier request, and
/// none of them may be served again.
pub(super) fn tiling_pieces(
    array: &Array,
    region: Region,
    start: u64,
    len: u64,
) -> PResult<Vec<Piece>> {
    let pieces = array.pieces(region, start, len)?;
    let mut covered = 0u64;
    for p in &pieces {
        if p.out_offset != covered {
            return Err(Problem::OutOfRange(format!(
                "bytes {start}..{}: piece at {} where {covered} was expected",
                start + len,
                p.out_offset
            )));
        }
        covered += p.len;
    }
    if covered != len {
        return Err(Problem::OutOfRange(format!(
            "bytes {start}..{} lie past the end",
            start + len
        )));
    }
    Ok(pieces)
}

/// Fill `out` from `pieces`, which tile it ([`tiling_pieces`]).
///
/// Pieces whose block another thread is decoding right now are left for
/// last: two requests that share blocks (a C-order read of narrow chunks
/// uses part of each block, the next request the rest) would otherwise
/// walk them in the same order, one thread decoding while the other waits
/// for it. Left for last, the other thread decodes the next block meanwhile.
///
/// With `misses.direct`, a block not cached whose every byte this read
/// uses, in several pieces, is decoded once into scratch and its pieces
/// copied out from there ([`scatter_whole_blocks`]).
pub(super) fn fill_pieces(
    blocks: &Blocks,
    array: &Array,
    pieces: Vec<Piece>,
    out: &mut [u8],
    misses: Misses,
) -> PResult<()> {
    super::prefetch::announce(blocks, array, &pieces)?;
    let mut resolved = Vec::with_capacity(pieces.len());
    for piece in pieces {
        if let PieceSource::ChunkBytes { .. } = piece.source {
            resolved.extend(blocks.block_pieces(array, piece)?);
        } else {
            resolved.push(piece);
        }
    }
    let pieces = if misses.direct {
        scatter_whole_blocks(blocks, array, resolved, out)?
    } else {
        resolved
    };
    let mut at_hand: Vec<((u64, u64), Block)> = Vec::new();
    let mut later: Vec<Piece> = Vec::new();
    for p in pieces {
        if decoding_elsewhere(blocks, array, &p, &at_hand) {
            later.push(p);
        } else {
            copy_piece(blocks, array, p, out, &mut at_hand, misses)?;
        }
    }
    // Most of these blocks are ready by now; the rest are waited for.
    for p in later {
        copy_piece(blocks, array, p, out, &mut at_hand, misses)?;
    }
    Ok(())
}

/// Serve the pieces whose block is not cached, not stored raw, and used
/// whole by this read in more than one piece: each such block is decoded
/// once into scratch and its pieces copied out while it is hot. Answers
/// the pieces left, in their order.
fn scatter_whole_blocks(
    blocks: &Blocks,
    array: &Array,
    pieces: Vec<Piece>,
    out: &mut [u8],
) -> PResult<Vec<Piece>> {
    let mut by_block: BTreeMap<(u64, u64), Vec<usize>> = BTreeMap::new();
    for (i, p) in pieces.iter().enumerate() {
        if let PieceSource::Block { chunk, block, .. } = p.source {
            by_block.entry((chunk, block)).or_default().push(i);
        }
    }
    let mut served = vec![false; pieces.len()];
    for ((chunk, block), idx) in by_block {
        if idx.len() < 2
            || blocks.contains(array, chunk, block)
            || blocks.decoding(array, chunk, block)
        {
            continue;
        }
        let layout = blocks.block_layout(array, chunk, block)?;
        if layout.stored_raw()
            || !tiles_block(
                &pieces,
                &idx,
                layout.block_range(block as usize).len() as u64,
            )
        {
            continue;
        }
        let scattered = blocks.decode_whole_with(array, chunk, block, |data| {
            for &i in &idx {
                let p = &pieces[i];
                let PieceSource::Block { offset, .. } = p.source else {
                    continue;
                };
                let (src, dst) = (offset as usize, p.out_offset as usize);
                let n = p.len as usize;
                let dst = out
                    .get_mut(dst..dst + n)
                    .ok_or_else(|| Problem::OutOfRange("piece outside the output".into()))?;
                dst.copy_from_slice(data.get(src..src + n).ok_or_else(|| {
                    Problem::corrupt(
                        "chunk",
                        format!("chunk {chunk} block {block} is shorter than its shape"),
                    )
                })?);
            }
            Ok(())
        })?;
        if scattered {
            for &i in &idx {
                served[i] = true;
            }
        }
    }
    Ok(pieces
        .into_iter()
        .zip(served)
        .filter(|(_, s)| !s)
        .map(|(p, _)| p)
        .collect())
}

/// Whether the block pieces `idx` of `pieces` cover bytes `[0, len)` of
/// their block exactly, each byte once.
fn tiles_block(pieces: &[Piece], idx: &[usize], len: u64) -> bool {
    let mut spans: Vec<(u64, u64)> = idx
        .iter()
        .filter_map(|&i| match pieces[i].source {
            PieceSource::Block { offset, .. } => Some((offset, pieces[i].len)),
            _ => None,
        })
        .collect();
    spans.sort_unstable();
    let mut at = 0u64;
    for (offset, n) in spans {
        if offset != at {
            return false;
        }
        at = offset.saturating_add(n);
    }
    at == len
}

/// Whether piece `p` needs a block that is not at hand and that another
/// thread is decoding into the cache now.
fn decoding_elsewhere(
    blocks: &Blocks,
    array: &Array,
    p: &Piece,
    at_hand: &[((u64, u64), Block)],
) -> bool {
    match p.source {
        PieceSource::Block { chunk, block, .. } => {
            !at_hand.iter().any(|(k, _)| *k == (chunk, block))
                && blocks.decoding(array, chunk, block)
        }
        _ => false,
    }
}

/// Fill `out` with presented body bytes `[start, start + out.len())` of a
/// row selection: each stretch inside one run of rows is one [`fill`].
pub(super) fn fill_rows(
    blocks: &Blocks,
    array: &Array,
    rows: &RowSelection,
    start: u64,
    out: &mut [u8],
) -> PResult<()> {
    let mut done = 0usize;
    while done < out.len() {
        let at = start + done as u64;
        let (src, avail) = rows
            .locate(at)
            .ok_or_else(|| Problem::OutOfRange(format!("row byte {at} lies past the end")))?;
        let n = avail.min((out.len() - done) as u64) as usize;
        fill(blocks, array, Region::Data, src, &mut out[done..done + n])?;
        done += n;
    }
    Ok(())
}

/// Copy one block (or zeros) piece into `out`, keeping the blocks used at
/// hand. A block not cached and stored raw is read from the source into
/// place; other blocks not cached are decoded as `misses` says.
fn copy_piece(
    blocks: &Blocks,
    array: &Array,
    p: Piece,
    out: &mut [u8],
    at_hand: &mut Vec<((u64, u64), Block)>,
    misses: Misses,
) -> PResult<()> {
    let dst_start = p.out_offset as usize;
    let dst = out
        .get_mut(dst_start..dst_start + p.len as usize)
        .ok_or_else(|| Problem::OutOfRange("piece outside the output".into()))?;
    match p.source {
        PieceSource::Zeros => dst.fill(0),
        PieceSource::ChunkBytes { chunk, .. } => {
            return Err(Problem::corrupt(
                "chunk",
                format!("chunk {chunk}: bytes not resolved into blocks"),
            ));
        }
        PieceSource::Block {
            chunk,
            block,
            offset,
        } => {
            let key = (chunk, block);
            if !at_hand.iter().any(|(k, _)| *k == key) && !blocks.contains(array, chunk, block) {
                if blocks.read_raw_part(array, chunk, block, offset, dst)? {
                    return Ok(());
                }
                // A block another thread is decoding into the cache (a
                // prefetch) is waited for below, not decoded a second time.
                let elsewhere = blocks.decoding(array, chunk, block);
                if misses.direct
                    && offset == 0
                    && !elsewhere
                    && blocks.decode_whole_into(array, chunk, block, dst)?
                {
                    return Ok(());
                }
                if !misses.keep_partial
                    && !elsewhere
                    && blocks.decode_part_into(array, chunk, block, offset, dst)?
                {
                    return Ok(());
                }
            }
            let data = match at_hand.iter().rev().find(|(k, _)| *k == key) {
                Some((_, data)) => data.clone(),
                None => {
                    let data = blocks.block(array, chunk, block)?;
                    if at_hand.len() == AT_HAND {
                        at_hand.remove(0);
                    }
                    at_hand.push((key, data.clone()));
                    data
                }
            };
            let src = data
                .get(offset as usize..offset as usize + p.len as usize)
                .ok_or_else(|| {
                    Problem::corrupt(
                        "chunk",
                        format!("chunk {chunk} block {block} is shorter than its shape"),
                    )
                })?;
            dst.copy_from_slice(src);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Arc;

    use super::*;
    use crate::read::block_cache::BlockKey;
    use crate::read::testing::{fixture, read_in_steps, sha256_hex};
    use crate::read::{Planner, Served, Stats, View};

    #[test]
    fn blocks_a_read_uses_whole_in_pieces_are_decoded_once_into_scratch() {
        // 33 x 21 float64 in 12 x 8 chunks of 5 x 3 blocks: a C-order read
        // takes each block in pieces of 3 items, one per block row. Per
        // chunk row 3, 3 and 2 block rows hold array rows (2, 2 and 1 of
        // them whole: 12 = 5 + 5 + 2 rows, 9 = 5 + 4), and likewise per
        // chunk column for the columns (8 = 3 + 3 + 2, 5 = 3 + 2): 8 x 8 = 64
        // blocks are used, 5 x 5 = 25 of them whole.
        let (array, entry) = fixture("dtype_le_f8");
        let planner = Planner::one_pass(1 << 20);
        let data = planner.read(&array, &View::Data, 0, u64::MAX).unwrap();
        assert_eq!(sha256_hex(&data), entry["sha256"].as_str().unwrap());
        assert_eq!(
            Stats::get(&planner.stats().blocks_decoded),
            64,
            "each block decoded once"
        );
        assert_eq!(
            planner.blocks().cache().usage().1,
            64 - 25,
            "the whole ones are not kept"
        );

        // Reads of odd sizes through a mount's planner: a block is scattered
        // only when one read uses all of it; the bytes are the same.
        let planner = Planner::new(
            Arc::new(Blocks::new(1 << 20, 1 << 20, Arc::new(Stats::default()))),
            None,
            0,
        );
        assert!(read_in_steps(&planner, &array, &[1000, 1, 2500, 168, 3000]) == data);
        let decoded = Stats::get(&planner.stats().blocks_decoded);
        assert!(
            (64..64 + 25).contains(&decoded),
            "{decoded} block decodes: cached blocks are decoded once, scattered ones at most twice"
        );
    }

    #[test]
    fn raw_chunks_are_read_in_place_and_never_decoded_or_cached() {
        let (array, entry) = fixture("clevel0_zstd");
        assert!(
            array.read_layout(0).unwrap().stored_raw(),
            "clevel 0 stores its chunks raw"
        );
        let want = Planner::standalone(1 << 20)
            .read(&array, &View::Data, 0, u64::MAX)
            .unwrap();
        assert_eq!(sha256_hex(&want), entry["sha256"].as_str().unwrap());
        // Small reads at odd places, through a mount's planner: each reads
        // only its own bytes, none decodes or keeps a block.
        let planner = Planner::new(
            Arc::new(Blocks::new(1 << 20, 1 << 20, Arc::new(Stats::default()))),
            None,
            0,
        );
        let len = want.len() as u64;
        for (start, n) in [
            (0u64, 1u64),
            (3, 17),
            (len / 2 - 5, 1001),
            (len - 9, 9),
            (len / 3, len / 3),
        ] {
            let mut out = vec![0xA5u8; 7];
            let served = planner
                .read_served(&array, &View::Data, start, n, &mut out)
                .unwrap();
            assert!(
                matches!(served, Served::Buffer),
                "raw bytes are read into the reply"
            );
            assert!(
                out == want[start as usize..(start + n) as usize],
                "bytes {start}+{n}"
            );
        }
        assert_eq!(Stats::get(&planner.stats().blocks_decoded), 0);
        assert_eq!(planner.blocks().cache().usage(), (0, 0), "nothing cached");
    }

    #[test]
    fn a_block_another_thread_is_decoding_is_left_for_last() {
        // 33 x 21 float64 in 12 x 8 chunks of 5 x 3 blocks: row 0 of the
        // data starts in block 0 of chunk 0 and also lies in block 0 of
        // chunks 1 and 2 (8 blocks in all).
        let (array, entry) = fixture("dtype_le_f8");
        let array = Arc::new(array);
        let blocks = Arc::new(Blocks::new(1 << 20, 1 << 20, Arc::new(Stats::default())));
        let first = BlockKey {
            array: array.id(),
            chunk: 0,
            block: 0,
        };
        let (started_tx, started) = std::sync::mpsc::channel();
        let (release, release_rx) = std::sync::mpsc::channel::<()>();
        // Another thread is decoding block 0 of chunk 0 (it finishes when released).
        let decoding = {
            let (array, blocks) = (array.clone(), blocks.clone());
            std::thread::spawn(move || {
                blocks.cache().get_or_decode(first, || {
                    started_tx.send(()).unwrap();
                    release_rx.recv().unwrap();
                    Blocks::new(1 << 20, 1 << 20, Arc::new(Stats::default())).block(&array, 0, 0)
                })
            })
        };
        started.recv().unwrap();
        assert!(blocks.decoding(&array, 0, 0));
        let reader = {
            let (array, blocks) = (array.clone(), blocks.clone());
            std::thread::spawn(move || {
                let mut out = vec![0u8; 21 * 8];
                fill(&blocks, &array, Region::Data, 0, &mut out).map(|()| out)
            })
        };
        // The reader decodes the other blocks of the row while the first is
        // still being decoded, instead of waiting for it before anything else.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !(blocks.contains(&array, 1, 0) && blocks.contains(&array, 2, 0)) {
            assert!(
                std::time::Instant::now() < deadline,
                "the reader waited for the block being decoded first"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(
            !reader.is_finished() && blocks.decoding(&array, 0, 0),
            "it still needs the first block"
        );
        release.send(()).unwrap();
        decoding.join().unwrap().unwrap();
        let row = reader.join().unwrap().unwrap();
        let data = Planner::standalone(1 << 20)
            .read(&array, &View::Data, 0, u64::MAX)
            .unwrap();
        assert_eq!(sha256_hex(&data), entry["sha256"].as_str().unwrap());
        assert!(row == data[..21 * 8], "row 0");
        let distinct: HashSet<(u64, u64)> = array
            .pieces(Region::Data, 0, 21 * 8)
            .unwrap()
            .into_iter()
            .filter_map(|p| match p.source {
                PieceSource::Block { chunk, block, .. } => Some((chunk, block)),
                _ => None,
            })
            .collect();
        assert_eq!(distinct.len(), 8);
        assert_eq!(
            Stats::get(&blocks.stats().blocks_decoded),
            8,
            "each block decoded once"
        );
    }
}
