//! Tests for NDCELL and NDMEAN's cell reordering: our decoders against a
//! step-by-step transcription of C-Blosc2's backward functions (including
//! their quirks) on random geometries, a forward round trip, and bad input.

use super::super::ndmean::undo_ndmean;
use super::*;
use crate::test_rng::Rng;
use proptest::prelude::*;

/// Row-major index of `i` in a grid of `shape` (C's unidim_to_multidim).
fn unflatten(shape: &[i64], mut i: i64) -> Vec<i64> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = i % shape[d];
        i /= shape[d];
    }
    idx
}

/// C-Blosc2's ndcell_backward (`mean` false) / ndmean_backward (`mean`
/// true), transcribed: `None` where C returns an error. The output starts
/// as garbage, as C's scratch buffers do.
fn c_backward(mean: bool, meta: u8, bs: &[i64], ts: i64, input: &[u8]) -> Option<Vec<u8>> {
    let ndim = bs.len();
    if ndim == 0 || ndim > 8 {
        return None;
    }
    let len = input.len() as i64;
    let cellshape: Vec<i64> = if mean {
        let m = meta as i8 as i64;
        if m <= 0 {
            return None;
        }
        bs.iter().map(|&b| if m > b { b } else { m }).collect()
    } else {
        if meta == 0 {
            return None;
        }
        vec![meta as i64; ndim]
    };
    let cell_size: i64 = if mean {
        cellshape.iter().product()
    } else {
        let mut c: i64 = 1;
        for _ in 0..ndim {
            c = c.checked_mul(meta as i64)?;
        }
        c
    };
    let ts = if mean { ts as u8 as i8 as i64 } else { ts };
    if ts <= 0 {
        return None;
    }
    let mut blocksize = ts;
    for &b in bs {
        if b <= 0 {
            return None;
        }
        blocksize *= b;
        if blocksize > len {
            return None;
        }
    }
    if blocksize != len {
        return None;
    }
    if (!mean && cell_size > len / ts) || (mean && len < cell_size * ts) {
        return None;
    }
    let i_shape: Vec<i64> = (0..ndim)
        .map(|i| (bs[i] + cellshape[i] - 1) / cellshape[i])
        .collect();
    let ncells: i64 = i_shape.iter().product();
    let mut out = vec![0xEEu8; input.len()];
    let mut ip = 0usize;
    let mut ind: i64 = 0;
    let mut pad = vec![0i64; ndim];
    for cell_ind in 0..ncells {
        let ii = unflatten(&i_shape, cell_ind);
        let mut orig: i64 = 0;
        let mut nd_aux = cellshape[0];
        for i in (0..ndim).rev() {
            orig += ii[i] * nd_aux;
            nd_aux *= bs[i];
        }
        for d in 0..ndim {
            pad[d] = if bs[d] % cellshape[d] != 0 && ii[d] == i_shape[d] - 1 {
                bs[d] % cellshape[d]
            } else {
                cellshape[d]
            };
        }
        let ncopies: i64 = pad[..ndim - 1].iter().product();
        for copy_ind in 0..ncopies {
            let kk = unflatten(&pad[..ndim - 1], copy_ind);
            let mut nd_aux = bs[ndim - 1];
            ind = orig;
            for i in (0..ndim - 1).rev() {
                ind += kk[i] * nd_aux;
                nd_aux *= bs[i];
            }
            let n = (pad[ndim - 1] * ts) as usize;
            let at = (ind * ts) as usize;
            out.get_mut(at..at + n)?
                .copy_from_slice(input.get(ip..ip + n)?);
            ip += n;
        }
    }
    ind += pad[ndim - 1];
    (ind == blocksize / ts).then_some(out)
}

/// Forward cell gather (what C-Blosc2's ndcell_forward stores).
fn gather(shape: &[usize], cells: &[usize], ts: usize, block: &[u8]) -> Vec<u8> {
    let n = shape.len();
    let grid: Vec<i64> = shape
        .iter()
        .zip(cells)
        .map(|(&b, &c)| b.div_ceil(c) as i64)
        .collect();
    let mut out = Vec::with_capacity(block.len());
    for ci in 0..grid.iter().product::<i64>() {
        let cell = unflatten(&grid, ci);
        let pad: Vec<i64> = (0..n)
            .map(|d| (shape[d] as i64 - cell[d] * cells[d] as i64).min(cells[d] as i64))
            .collect();
        for item in 0..pad.iter().product::<i64>() {
            let k = unflatten(&pad, item);
            let mut flat = 0usize;
            for d in 0..n {
                flat = flat * shape[d] + (cell[d] * cells[d] as i64 + k[d]) as usize;
            }
            out.extend_from_slice(&block[flat * ts..flat * ts + ts]);
        }
    }
    out
}

fn random_geometry(rng: &mut Rng) -> (Vec<u64>, usize, u8) {
    let ndim = 1 + (rng.next_u64() % 5) as usize;
    let shape: Vec<u64> = (0..ndim)
        .map(|_| 1 + rng.next_u64() % if ndim <= 2 { 13 } else { 6 })
        .collect();
    let ts = [1usize, 2, 4, 8, 3, 16][(rng.next_u64() % 6) as usize];
    let meta = [1u8, 2, 3, 4, 5, 7, 8, 0, 200][(rng.next_u64() % 9) as usize];
    (shape, ts, meta)
}

#[test]
fn ndcell_matches_c_blosc2_on_random_geometries() {
    let mut rng = Rng::new(0x00c3_11ce_0000_0001);
    let (mut ok, mut refused) = (0, 0);
    for case in 0..3000 {
        let (shape, ts, meta) = random_geometry(&mut rng);
        let len = shape.iter().product::<u64>() as usize * ts;
        let src = rng.bytes(len);
        let bs: Vec<i64> = shape.iter().map(|&b| b as i64).collect();
        let expected = c_backward(false, meta, &bs, ts as i64, &src);
        let mut dst = vec![0u8; len];
        let got = undo_ndcell(meta, &shape, ts, &src, &mut dst);
        match expected {
            Some(e) => {
                assert!(
                    got.is_ok(),
                    "case {case}: {shape:?} ts {ts} meta {meta}: {got:?}"
                );
                assert_eq!(dst, e, "case {case}: {shape:?} ts {ts} meta {meta}");
                ok += 1;
            }
            None => {
                assert!(
                    got.is_err(),
                    "case {case}: {shape:?} ts {ts} meta {meta}: C refuses"
                );
                refused += 1;
            }
        }
    }
    assert!(
        ok > 1000 && refused > 100,
        "{ok} decoded, {refused} refused"
    );
}

#[test]
fn ndmean_matches_c_blosc2_on_random_geometries() {
    let mut rng = Rng::new(0x00c3_11ce_0000_0002);
    let (mut ok, mut refused) = (0, 0);
    for case in 0..3000 {
        let (shape, ts, meta) = random_geometry(&mut rng);
        let ts = if rng.next_u64().is_multiple_of(8) {
            130
        } else {
            ts
        };
        let len = shape.iter().product::<u64>() as usize * ts;
        let src = rng.bytes(len);
        let bs: Vec<i64> = shape.iter().map(|&b| b as i64).collect();
        let expected = c_backward(true, meta, &bs, ts as i64, &src);
        let mut dst = vec![0u8; len];
        let got = undo_ndmean(meta, &shape, ts, &src, &mut dst);
        match expected {
            Some(e) => {
                assert!(
                    got.is_ok(),
                    "case {case}: {shape:?} ts {ts} meta {meta}: {got:?}"
                );
                assert_eq!(dst, e, "case {case}: {shape:?} ts {ts} meta {meta}");
                ok += 1;
            }
            None => {
                assert!(
                    got.is_err(),
                    "case {case}: {shape:?} ts {ts} meta {meta}: C refuses"
                );
                refused += 1;
            }
        }
    }
    assert!(
        ok > 1000 && refused > 100,
        "{ok} decoded, {refused} refused"
    );
}

#[test]
fn ndmean_inconsistent_grid_is_refused() {
    // First dimension 3 < meta 5 < 13: C-Blosc2 writes it but cannot read it.
    let src = vec![0u8; 3 * 13 * 4];
    let mut dst = src.clone();
    let err = undo_ndmean(5, &[3, 13], 4, &src, &mut dst).unwrap_err();
    assert!(
        matches!(err, CellError::InconsistentGrid { meta: 5, .. }),
        "{err}"
    );
    // First dimension long enough: fine.
    undo_ndmean(5, &[13, 3], 4, &src, &mut dst).unwrap();
}

#[test]
fn gather_then_undo_is_the_identity() {
    let mut rng = Rng::new(0x00c3_11ce_0000_0003);
    for _ in 0..500 {
        let (shape, ts, meta) = random_geometry(&mut rng);
        if meta == 0 || meta > 127 {
            continue;
        }
        let us: Vec<usize> = shape.iter().map(|&b| b as usize).collect();
        let cells: Vec<usize> = us.iter().map(|&b| b.min(meta as usize)).collect();
        let block = rng.bytes(us.iter().product::<usize>() * ts);
        let stored = gather(&us, &cells, ts, &block);
        let mut back = vec![0u8; block.len()];
        uncell(&us, &cells, ts, &stored, &mut back);
        assert_eq!(back, block, "{shape:?} ts {ts} meta {meta}");
    }
}

#[test]
fn bad_geometry_is_refused() {
    let src = vec![1u8; 24];
    let mut dst = vec![0u8; 24];
    let no_shape = undo_ndcell(2, &[], 1, &src, &mut dst).unwrap_err();
    assert!(matches!(no_shape, CellError::NoBlockShape { ndim: 0, .. }));
    assert!(matches!(
        undo_ndcell(2, &[4, 5], 1, &src, &mut dst),
        Err(CellError::BlockSize { .. })
    ));
    assert!(matches!(
        undo_ndcell(2, &[0, 5], 1, &src, &mut dst),
        Err(CellError::BlockSize { .. })
    ));
    assert!(matches!(
        undo_ndcell(2, &[u64::MAX, 2], 1, &src, &mut dst),
        Err(CellError::BlockSize { .. })
    ));
    assert!(matches!(
        undo_ndcell(0, &[4, 6], 1, &src, &mut dst),
        Err(CellError::BadCellEdge { .. })
    ));
    assert!(matches!(
        undo_ndcell(5, &[4, 6], 1, &src, &mut dst),
        Err(CellError::CellTooLarge { .. })
    ));
    assert!(matches!(
        undo_ndcell(2, &[4, 6], 1, &src, &mut dst[..23]),
        Err(CellError::LengthMismatch { .. })
    ));
    assert!(matches!(
        undo_ndmean(128, &[4, 6], 1, &src, &mut dst),
        Err(CellError::BadCellEdge { .. })
    ));
    let wide = vec![0u8; 130];
    let mut wide_dst = wide.clone();
    assert!(matches!(
        undo_ndmean(2, &[1], 130, &wide, &mut wide_dst),
        Err(CellError::BadTypesize { typesize: 130, .. })
    ));
}

proptest! {
    #[test]
    fn arbitrary_geometry_never_panics(shape in proptest::collection::vec(0u64..9, 0..10), ts in 0usize..10,
                                       meta in any::<u8>(), len in 0usize..400) {
        let src = vec![7u8; len];
        let mut dst = vec![0u8; len];
        let _ = undo_ndcell(meta, &shape, ts, &src, &mut dst);
        let _ = undo_ndmean(meta, &shape, ts, &src, &mut dst);
    }
}
