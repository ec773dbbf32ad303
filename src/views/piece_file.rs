//! A file rendered piece by piece ([`PieceFile`]): a table's `table.csv`
//! and `table.arrow`, a table column's `items.jsonl`, and the `items.jsonl`
//! of an ObjectArray or a BatchArray: never whole in memory, yet sized
//! before a byte of it is read.
//!
//! A file is a run of pieces (a header, one piece per record batch of the
//! table, a trailer); its renderer ([`PieceRenderer`]) can say how long
//! every piece is (the measuring pass, which reads each batch once and
//! keeps only the lengths, when the file's size is first asked) and render
//! any one piece on its own. A read renders only the pieces it covers; the
//! last few rendered stay in memory ([`KEPT_PIECES`]), so a sequential
//! reader renders each piece once. A piece rendered to another length than
//! measured is an error, never served.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use arrow_schema::ArrowError;

use crate::format::{Error, Problem};

use crate::tables::{piece_starts, TableError};

/// Pieces a file keeps rendered (the last ones read): two, so that a
/// reader crossing from one batch into the next, or two readers of the
/// file, do not render the same piece again and again.
pub const KEPT_PIECES: usize = 2;

/// What renders a [`PieceFile`], piece by piece.
pub trait PieceRenderer: Send + Sync {
    /// The length of every piece of the file, in order: reads every batch
    /// of the table once. The renderer may keep what it learns (a
    /// trailer's bytes, a column's widest timestamp) for [`Self::render`],
    /// which is only called once this succeeded.
    fn measure(&self) -> Result<Vec<u64>, RenderError>;
    /// The bytes of piece `piece`.
    fn render(&self, piece: usize) -> Result<Vec<u8>, RenderError>;
}

/// Why a renderer could not measure or render a piece.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The table could not give a batch.
    #[error(transparent)]
    Table(#[from] TableError),
    /// The Arrow IPC writer refused the table's schema or a batch.
    #[error("arrow ipc: {0}")]
    Ipc(#[from] ArrowError),
    /// A batch whose schema is not the table's.
    #[error("batch {batch} has another schema than the table")]
    OtherSchema {
        /// The batch.
        batch: usize,
    },
    /// An item could not be read, decoded or written as JSON (a
    /// container's or a column's `items.jsonl`).
    #[error(transparent)]
    Items(#[from] Problem),
    /// A piece asked for before the file was measured, or past its end.
    #[error("piece {piece} asked of a file of {count} pieces")]
    NoSuchPiece {
        /// The piece asked for.
        piece: usize,
        /// How many there are (0 before measuring).
        count: usize,
    },
}

/// Why a piece file could not be measured or read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PieceFileError {
    /// The table could not give a batch, or the renderer refused it.
    #[error("{file}: {source}")]
    Table {
        /// The presented file (`grp/tbl/table.arrow`).
        file: String,
        /// Why.
        source: Arc<RenderError>,
    },
    /// A piece came out at another length than the measuring pass found
    /// (the table changed under the mount, or a renderer is wrong).
    #[error("{file}: piece {piece} rendered to {got} bytes where {measured} were measured")]
    Remeasured {
        /// The presented file.
        file: String,
        /// Which piece.
        piece: usize,
        /// Its measured length.
        measured: u64,
        /// The length it rendered to.
        got: u64,
    },
}

impl From<PieceFileError> for Error {
    fn from(e: PieceFileError) -> Error {
        match e {
            PieceFileError::Table { file, source } => match &*source {
                RenderError::Table(TableError::Part { part, problem }) => {
                    Error::new(&Path::new(&file).join(part), problem.clone())
                }
                RenderError::Items(problem) => Error::new(Path::new(&file), problem.clone()),
                other => Error::new(
                    Path::new(&file),
                    Problem::corrupt("table", other.to_string()),
                ),
            },
            PieceFileError::Remeasured { ref file, .. } => Error::new(
                Path::new(file),
                Problem::corrupt("table file", e.to_string()),
            ),
        }
    }
}

/// A file rendered piece by piece (a table's `table.csv` or `table.arrow`,
/// an `items.jsonl`): its renderer, the pieces' starts once measured, the
/// last pieces rendered.
pub struct PieceFile {
    name: String,
    renderer: Box<dyn PieceRenderer>,
    may_wait: bool,
    /// Where each piece starts, and the file's end last.
    starts: OnceLock<Result<Vec<u64>, PieceFileError>>,
    kept: Mutex<VecDeque<(usize, Arc<Vec<u8>>)>>,
}

impl std::fmt::Debug for PieceFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PieceFile")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl PieceFile {
    /// The file `name` (as messages show it) that `renderer` renders;
    /// `may_wait` when reading the table may wait on a network.
    pub fn new(name: String, renderer: Box<dyn PieceRenderer>, may_wait: bool) -> PieceFile {
        PieceFile {
            name,
            renderer,
            may_wait,
            starts: OnceLock::new(),
            kept: Mutex::new(VecDeque::new()),
        }
    }

    /// Whether reading it may wait on a network.
    pub fn may_wait(&self) -> bool {
        self.may_wait
    }

    /// The pieces' starts (measured on the first call).
    fn starts(&self) -> Result<&[u64], PieceFileError> {
        let measured = self.starts.get_or_init(|| {
            let lengths = self.renderer.measure().map_err(|e| PieceFileError::Table {
                file: self.name.clone(),
                source: Arc::new(e),
            })?;
            Ok(piece_starts(&lengths))
        });
        measured.as_deref().map_err(Clone::clone)
    }

    /// The file's size (measuring it on the first call), or why it has
    /// none.
    pub fn size(&self) -> Result<u64, PieceFileError> {
        Ok(self.starts()?.last().copied().unwrap_or(0))
    }

    /// The file's size, or `None` (logged once per file) when it cannot
    /// be measured: the file is then not presented.
    pub fn len(&self) -> Option<u64> {
        let first = self.starts.get().is_none();
        match self.size() {
            Ok(n) => Some(n),
            Err(e) => {
                if first {
                    log::error!("{e} (not presented)");
                }
                None
            }
        }
    }

    /// Whether measuring the file was tried and failed (known without
    /// measuring: listing a folder asks it).
    pub fn failed(&self) -> bool {
        matches!(self.starts.get(), Some(Err(_)))
    }

    /// Bytes it holds now (the pieces' starts once measured, the pieces
    /// kept), roughly: what a cache of versions charges when it takes one.
    pub fn held_bytes(&self) -> usize {
        let starts = match self.starts.get() {
            Some(Ok(starts)) => starts.len() * 8,
            _ => 0,
        };
        let kept: usize = self.kept.lock().iter().map(|(_, b)| b.len()).sum();
        256 + self.name.len() + starts + kept
    }

    /// Whether the file is empty (once measured).
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// Piece `piece`, kept or rendered now, at its measured length.
    fn piece(&self, piece: usize, measured: u64) -> Result<Arc<Vec<u8>>, PieceFileError> {
        if let Some((_, bytes)) = self.kept.lock().iter().find(|(p, _)| *p == piece) {
            return Ok(bytes.clone());
        }
        let bytes = self
            .renderer
            .render(piece)
            .map_err(|e| PieceFileError::Table {
                file: self.name.clone(),
                source: Arc::new(e),
            })?;
        if bytes.len() as u64 != measured {
            return Err(PieceFileError::Remeasured {
                file: self.name.clone(),
                piece,
                measured,
                got: bytes.len() as u64,
            });
        }
        let bytes = Arc::new(bytes);
        let mut kept = self.kept.lock();
        if !kept.iter().any(|(p, _)| *p == piece) {
            if kept.len() == KEPT_PIECES {
                kept.pop_front();
            }
            kept.push_back((piece, bytes.clone()));
        }
        Ok(bytes)
    }

    /// Bytes `[offset, offset + size)` of the file (shorter at its end):
    /// only the pieces they cover are rendered.
    pub fn read(&self, offset: u64, size: u64) -> Result<Vec<u8>, PieceFileError> {
        let starts = self.starts()?;
        let len = starts.last().copied().unwrap_or(0);
        let end = offset.saturating_add(size).min(len);
        let mut out = Vec::with_capacity(end.saturating_sub(offset) as usize);
        if offset >= end {
            return Ok(out);
        }
        // The last piece starting at or before `offset`.
        let mut piece = starts.partition_point(|&s| s <= offset) - 1;
        while piece + 1 < starts.len() && starts[piece] < end {
            let (from, to) = (starts[piece], starts[piece + 1]);
            if to > offset {
                let bytes = self.piece(piece, to - from)?;
                let a = (offset.max(from) - from) as usize;
                let b = (end.min(to) - from) as usize;
                out.extend_from_slice(&bytes[a..b]);
            }
            piece += 1;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Pieces of given lengths, each byte its piece number; counts renders.
    struct Pieces {
        lengths: Vec<u64>,
        renders: AtomicUsize,
        wrong: Option<usize>,
    }

    impl PieceRenderer for Pieces {
        fn measure(&self) -> Result<Vec<u64>, RenderError> {
            Ok(self.lengths.clone())
        }
        fn render(&self, piece: usize) -> Result<Vec<u8>, RenderError> {
            self.renders.fetch_add(1, Ordering::Relaxed);
            let extra = usize::from(self.wrong == Some(piece));
            Ok(vec![piece as u8; self.lengths[piece] as usize + extra])
        }
    }

    fn file(lengths: &[u64], wrong: Option<usize>) -> (PieceFile, Arc<Pieces>) {
        struct Shared(Arc<Pieces>);
        impl PieceRenderer for Shared {
            fn measure(&self) -> Result<Vec<u64>, RenderError> {
                self.0.measure()
            }
            fn render(&self, piece: usize) -> Result<Vec<u8>, RenderError> {
                self.0.render(piece)
            }
        }
        let pieces = Arc::new(Pieces {
            lengths: lengths.to_vec(),
            renders: AtomicUsize::new(0),
            wrong,
        });
        let f = PieceFile::new(
            "t/table.csv".into(),
            Box::new(Shared(pieces.clone())),
            false,
        );
        (f, pieces)
    }

    #[test]
    fn any_window_is_that_slice_of_the_whole_file() {
        let lengths = [3u64, 0, 5, 1, 0, 7];
        let (f, _) = file(&lengths, None);
        let whole: Vec<u8> = lengths
            .iter()
            .enumerate()
            .flat_map(|(i, &n)| vec![i as u8; n as usize])
            .collect();
        assert_eq!(f.len(), Some(whole.len() as u64));
        assert_eq!(f.read(0, u64::MAX).unwrap(), whole);
        for offset in 0..=whole.len() as u64 + 2 {
            for size in 0..=whole.len() as u64 + 2 {
                let start = (offset as usize).min(whole.len());
                let end = (offset + size).min(whole.len() as u64) as usize;
                assert_eq!(
                    f.read(offset, size).unwrap(),
                    &whole[start..end.max(start)],
                    "{size} at {offset}"
                );
            }
        }
    }

    #[test]
    fn a_sequential_reader_renders_each_piece_once() {
        let (f, pieces) = file(&[10, 10, 10], None);
        for offset in (0..30).step_by(3) {
            f.read(offset, 3).unwrap();
        }
        assert_eq!(pieces.renders.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn a_file_that_cannot_be_measured_has_no_size_and_says_so() {
        struct Broken;
        impl PieceRenderer for Broken {
            fn measure(&self) -> Result<Vec<u64>, RenderError> {
                Err(RenderError::NoSuchPiece { piece: 0, count: 0 })
            }
            fn render(&self, piece: usize) -> Result<Vec<u8>, RenderError> {
                Err(RenderError::NoSuchPiece { piece, count: 0 })
            }
        }
        let f = PieceFile::new("t/table.arrow".into(), Box::new(Broken), false);
        assert!(!f.failed(), "not measured yet");
        assert_eq!(f.len(), None);
        assert!(f.failed());
        let e = f.read(0, 10).unwrap_err();
        assert!(e.to_string().starts_with("t/table.arrow: "), "{e}");
    }

    #[test]
    fn a_piece_of_another_length_than_measured_is_refused() {
        let (f, _) = file(&[4, 4], Some(1));
        assert_eq!(f.read(0, 4).unwrap(), [0; 4]);
        let e = f.read(2, 4).unwrap_err();
        assert!(
            matches!(
                e,
                PieceFileError::Remeasured {
                    piece: 1,
                    measured: 4,
                    got: 5,
                    ..
                }
            ),
            "{e}"
        );
        let format: Error = e.into();
        assert!(format.to_string().contains("t/table.csv"), "{format}");
    }
}

/// A table held in memory, for the renderers' unit tests.
#[cfg(test)]
pub(crate) mod in_memory {
    use arrow_array::RecordBatch;
    use arrow_schema::SchemaRef;

    use crate::tables::{TableError, TableSource};

    /// Record batches given as they are.
    pub struct Batches {
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
        rows: Vec<u64>,
    }

    impl Batches {
        /// The table of `batches`, whose schema is `schema`.
        pub fn new(schema: SchemaRef, batches: Vec<RecordBatch>) -> Batches {
            let rows = batches.iter().map(|b| b.num_rows() as u64).collect();
            Batches {
                schema,
                batches,
                rows,
            }
        }
    }

    impl TableSource for Batches {
        fn schema(&self) -> SchemaRef {
            self.schema.clone()
        }
        fn batch_rows(&self) -> &[u64] {
            &self.rows
        }
        fn batch(&self, i: usize) -> Result<RecordBatch, TableError> {
            self.batches.get(i).cloned().ok_or(TableError::NoSuchBatch {
                index: i,
                count: self.batches.len(),
            })
        }
        fn left_out(&self) -> &[(String, String)] {
            &[]
        }
    }
}
