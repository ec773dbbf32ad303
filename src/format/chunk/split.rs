//! One block's streams decoded by two threads: the reader's own and a helper.
//!
//! A reader that waits on a single block (a random read) leaves the other
//! cores idle, and a split block's streams (one per byte of the item) are
//! independent. The reader decodes streams from the front, the helper from
//! the back, each taking the next one when free. The helper works on its
//! own copy of the stored bytes and into its own buffer, so the reader never
//! waits for a helper that has not started (a busy machine): it takes the
//! helper's streams too, and waits only for a stream the helper is in the
//! middle of. Nothing here owns threads; [`Fork`] hands the job to some.

use parking_lot::{Condvar, Mutex, MutexGuard};
use std::ops::Range;
use std::sync::Arc;

use super::header::Codec;
use super::pipeline::{in_stream, Fork, Stream};
use crate::format::codec::{self, CodecError};
use crate::format::error::{PResult, Problem};

/// How a stream is stored, with its payload as a range of the helper's copy.
enum Part {
    Zeros,
    Fill(u8),
    Payload(Range<usize>),
}

/// Whether `codec` is one of the classic codecs, whose streams are decoded
/// here (plugin codecs never split their blocks).
pub(super) fn is_classic(codec: Codec) -> bool {
    matches!(
        codec,
        Codec::BloscLz | Codec::Lz4 | Codec::Zlib | Codec::Zstd
    )
}

/// Decode `stream` of a classic codec ([`is_classic`]) into all of `dst`.
fn decode_stream(
    codec: Codec,
    dict: &[u8],
    b: usize,
    stream: &Stream<'_>,
    dst: &mut [u8],
) -> PResult<()> {
    match stream.payload_to_decode(dst) {
        Some(payload) => decode_classic(codec, dict, b, payload, dst),
        None => Ok(()),
    }
}

/// Decode `payload`, a compressed stream of a classic codec ([`is_classic`]),
/// into all of `dst`.
pub(super) fn decode_classic(
    codec: Codec,
    dict: &[u8],
    b: usize,
    payload: &[u8],
    dst: &mut [u8],
) -> PResult<()> {
    let result = match codec {
        Codec::BloscLz => codec::blosclz::decompress(payload, dst),
        Codec::Lz4 => codec::lz4::decompress(payload, dst, dict),
        Codec::Zlib => codec::zlib::decompress(payload, dst),
        Codec::Zstd => codec::zstd::decompress(payload, dst, dict),
        other => {
            return Err(Problem::corrupt(
                "chunk",
                format!("block {b}: {} is not a stream codec", other.name()),
            ))
        }
    };
    result.map_err(|source: CodecError| Problem::Codec {
        block: b as u64,
        source,
    })
}

/// What the reader and the helper share.
struct Shared {
    state: Mutex<State>,
    handed_back: Condvar,
}

struct State {
    /// The next stream the reader takes.
    front: usize,
    /// Streams `back..` are the helper's.
    back: usize,
    /// The helper holds decoded streams it has not handed back yet.
    helper_busy: bool,
    /// The helper's buffer (streams `first_helper..` of the block) and its
    /// problem, once it has stopped.
    handed: Option<(Vec<u8>, Option<Problem>)>,
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared.state.lock()
}

/// Decode `streams` (each `stream_len` bytes of `stage`, in order) of block
/// `b`, coded with `codec` (and `dict`), with a helper through `fork`
/// taking streams from the back half.
pub(super) fn decode_streams_forked(
    codec: Codec,
    dict: &[u8],
    b: usize,
    streams: &[Stream<'_>],
    stream_len: usize,
    fork: &dyn Fork,
    stage: &mut [u8],
) -> PResult<()> {
    let n = streams.len();
    // The reader starts at once and the helper later, so the helper never
    // needs more than the back half.
    let first_helper = n / 2;
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            front: 0,
            back: n,
            helper_busy: false,
            handed: None,
        }),
        handed_back: Condvar::new(),
    });
    fork.spawn(helper_job(
        codec,
        dict.to_vec(),
        b,
        &streams[first_helper..],
        first_helper,
        stream_len,
        shared.clone(),
    ));
    loop {
        let s = {
            let mut state = lock(&shared);
            if state.front >= state.back {
                break;
            }
            state.front += 1;
            state.front - 1
        };
        let dst = &mut stage[s * stream_len..(s + 1) * stream_len];
        decode_stream(codec, dict, b, &streams[s], dst).map_err(|p| in_stream(b, s, p))?;
    }
    let mut state = lock(&shared);
    while state.helper_busy {
        shared.handed_back.wait(&mut state);
    }
    let back = state.back;
    match state.handed.take() {
        Some((_, Some(problem))) => Err(problem),
        Some((buf, None)) if back < n => {
            let from = (back - first_helper) * stream_len;
            stage[back * stream_len..].copy_from_slice(&buf[from..]);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The helper's side: its own copy of the stored streams `first..`, taken
/// from the back while the reader has not reached them.
fn helper_job(
    codec: Codec,
    dict: Vec<u8>,
    b: usize,
    streams: &[Stream<'_>],
    first: usize,
    stream_len: usize,
    shared: Arc<Shared>,
) -> Box<dyn FnOnce() + Send> {
    let mut bytes = Vec::with_capacity(
        streams
            .iter()
            .map(|s| {
                if let Stream::Payload(p) = s {
                    p.len()
                } else {
                    0
                }
            })
            .sum(),
    );
    let parts: Vec<Part> = streams
        .iter()
        .map(|stream| match *stream {
            Stream::Zeros => Part::Zeros,
            Stream::Fill(byte) => Part::Fill(byte),
            Stream::Payload(payload) => {
                bytes.extend_from_slice(payload);
                Part::Payload(bytes.len() - payload.len()..bytes.len())
            }
        })
        .collect();
    Box::new(move || {
        let mut work = HelperWork {
            shared,
            buf: Vec::new(),
            problem: None,
        };
        while let Some(s) = work.take(first) {
            if work.buf.is_empty() {
                work.buf.resize(parts.len() * stream_len, 0);
            }
            let i = s - first;
            let stream = match &parts[i] {
                Part::Zeros => Stream::Zeros,
                Part::Fill(byte) => Stream::Fill(*byte),
                Part::Payload(range) => Stream::Payload(&bytes[range.clone()]),
            };
            if let Err(p) = decode_stream(
                codec,
                &dict,
                b,
                &stream,
                &mut work.buf[i * stream_len..(i + 1) * stream_len],
            ) {
                work.problem = Some(in_stream(b, s, p));
            }
        }
    })
}

/// What the helper has decoded; handed back to the reader when dropped, so
/// a reader never waits on a helper that has stopped, however it stopped.
struct HelperWork {
    shared: Arc<Shared>,
    buf: Vec<u8>,
    problem: Option<Problem>,
}

impl HelperWork {
    /// The next stream from the back, not below `first`; none once the
    /// streams have run out or this helper has failed.
    fn take(&mut self, first: usize) -> Option<usize> {
        let mut state = lock(&self.shared);
        if self.problem.is_some() || state.back <= state.front || state.back <= first {
            return None;
        }
        state.back -= 1;
        state.helper_busy = true;
        Some(state.back)
    }
}

impl Drop for HelperWork {
    fn drop(&mut self) {
        if std::thread::panicking() && self.problem.is_none() {
            self.problem = Some(Problem::Io(
                "a decode helper thread stopped in the middle of a stream".to_string(),
            ));
        }
        let mut state = lock(&self.shared);
        if state.helper_busy {
            state.handed = Some((std::mem::take(&mut self.buf), self.problem.take()));
            state.helper_busy = false;
            self.shared.handed_back.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM_LEN: usize = 2048;

    /// How a test's helper runs the job it is given.
    enum Helper {
        /// On another thread, started at once.
        Thread,
        /// Inside `spawn`, before the reader takes anything.
        Before,
        /// Never (the job is dropped).
        Never,
        /// After the reader has finished (the job is kept and run later).
        Late,
    }

    struct TestFork {
        helper: Helper,
        kept: Mutex<Vec<Box<dyn FnOnce() + Send>>>,
        threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
    }

    impl TestFork {
        fn new(helper: Helper) -> TestFork {
            TestFork {
                helper,
                kept: Mutex::default(),
                threads: Mutex::default(),
            }
        }

        /// Run what was kept and wait for every thread started.
        fn finish(&self) {
            for job in self.kept.lock().drain(..) {
                job();
            }
            for thread in self.threads.lock().drain(..) {
                thread.join().unwrap();
            }
        }
    }

    impl Fork for TestFork {
        fn spawn(&self, job: Box<dyn FnOnce() + Send>) {
            match self.helper {
                Helper::Thread => self.threads.lock().push(std::thread::spawn(job)),
                Helper::Before => job(),
                Helper::Never => drop(job),
                Helper::Late => self.kept.lock().push(job),
            }
        }
    }

    /// Eight streams as a block would store them: LZ4 payloads of
    /// different data, one all-zero stream and one filled with 7.
    fn streams() -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        let mut raw = Vec::new();
        let mut stored = Vec::new();
        for s in 0..8u32 {
            let data: Vec<u8> = match s {
                2 => vec![0; STREAM_LEN],
                5 => vec![7; STREAM_LEN],
                _ => (0..STREAM_LEN as u32)
                    .map(|i| ((i / (s + 1)) ^ (i * s) >> 3) as u8)
                    .collect(),
            };
            stored.push(lz4_flex::block::compress(&data));
            raw.push(data);
        }
        (raw, stored)
    }

    fn as_streams(stored: &[Vec<u8>]) -> Vec<Stream<'_>> {
        stored
            .iter()
            .enumerate()
            .map(|(s, bytes)| match s {
                2 => Stream::Zeros,
                5 => Stream::Fill(7),
                _ => Stream::Payload(bytes),
            })
            .collect()
    }

    #[test]
    fn every_helper_timing_gives_the_same_block() {
        let (raw, stored) = streams();
        let expected = raw.concat();
        for helper in [Helper::Thread, Helper::Before, Helper::Never, Helper::Late] {
            let name = match helper {
                Helper::Thread => "thread",
                Helper::Before => "before",
                Helper::Never => "never",
                Helper::Late => "late",
            };
            for _ in 0..20 {
                let fork = TestFork::new(helper_copy(&helper));
                let mut stage = vec![0xA5u8; expected.len()];
                decode_streams_forked(
                    Codec::Lz4,
                    &[],
                    3,
                    &as_streams(&stored),
                    STREAM_LEN,
                    &fork,
                    &mut stage,
                )
                .unwrap();
                fork.finish();
                assert!(
                    stage == expected,
                    "helper {name}: block differs at byte {:?}",
                    stage.iter().zip(&expected).position(|(a, b)| a != b)
                );
            }
        }
    }

    fn helper_copy(helper: &Helper) -> Helper {
        match helper {
            Helper::Thread => Helper::Thread,
            Helper::Before => Helper::Before,
            Helper::Never => Helper::Never,
            Helper::Late => Helper::Late,
        }
    }

    #[test]
    fn a_bad_stream_in_the_readers_half_is_its_error_after_the_helper_finished() {
        let (_, stored) = streams();
        let fork = TestFork::new(Helper::Before);
        let mut broken = as_streams(&stored);
        broken[1] = Stream::Payload(&[0xF0, 1, 2]);
        let mut stage = vec![0u8; 8 * STREAM_LEN];
        let err = decode_streams_forked(Codec::Lz4, &[], 3, &broken, STREAM_LEN, &fork, &mut stage)
            .unwrap_err();
        assert!(matches!(err, Problem::Codec { block: 3, .. }), "{err:?}");
    }

    #[test]
    fn a_bad_stream_in_the_helpers_half_is_the_readers_error() {
        let (_, stored) = streams();
        for helper in [Helper::Thread, Helper::Before, Helper::Never, Helper::Late] {
            let fork = TestFork::new(helper);
            let mut broken = as_streams(&stored);
            broken[6] = Stream::Payload(&[0xF0, 1, 2]);
            let mut stage = vec![0u8; 8 * STREAM_LEN];
            let err =
                decode_streams_forked(Codec::Lz4, &[], 3, &broken, STREAM_LEN, &fork, &mut stage)
                    .unwrap_err();
            fork.finish();
            assert!(matches!(err, Problem::Codec { block: 3, .. }), "{err:?}");
        }
    }

    #[test]
    fn a_helper_that_panics_hands_back_an_error_not_a_hang() {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                front: 0,
                back: 8,
                helper_busy: false,
                handed: None,
            }),
            handed_back: Condvar::new(),
        });
        let in_helper = shared.clone();
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let mut work = HelperWork {
                shared: in_helper,
                buf: vec![0; 4 * STREAM_LEN],
                problem: None,
            };
            assert_eq!(work.take(4), Some(7));
            panic!("a decoder bug in the middle of stream 7");
        }));
        assert!(unwound.is_err());
        let state = lock(&shared);
        assert!(!state.helper_busy, "the reader would wait forever");
        match &state.handed {
            Some((_, Some(Problem::Io(detail)))) => assert_eq!(
                detail,
                "a decode helper thread stopped in the middle of a stream"
            ),
            other => panic!(
                "handed back {:?}",
                other.as_ref().map(|h| h.1.as_ref().map(|p| p.to_string()))
            ),
        }
    }
}
