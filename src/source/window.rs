//! A window of another source: bytes `[start, start + len)` of it presented
//! as a source of their own (a frame stored at an offset inside a zip).

use std::ops::Range;
use std::sync::Arc;

use crate::format::byte_source::{ByteSource, Need, Version};
use crate::format::{PResult, Problem};

/// Bytes `[start, start + len)` of `inner`.
#[derive(Debug, Clone)]
pub struct WindowSource {
    inner: Arc<dyn ByteSource>,
    start: u64,
    len: u64,
}

impl WindowSource {
    /// The window; an error when it does not lie inside `inner`.
    pub fn new(inner: Arc<dyn ByteSource>, start: u64, len: u64) -> PResult<WindowSource> {
        let end = start
            .checked_add(len)
            .ok_or_else(|| Problem::corrupt("window", "offset overflows"))?;
        if end > inner.len() {
            return Err(Problem::truncated("window", start, end, inner.len()));
        }
        Ok(WindowSource { inner, start, len })
    }

    fn inner_range(&self, offset: u64, len: u64) -> PResult<Range<u64>> {
        let end = offset
            .checked_add(len)
            .filter(|&e| e <= self.len)
            .ok_or_else(|| {
                Problem::truncated("read", offset, offset.saturating_add(len), self.len)
            })?;
        Ok(self.start + offset..self.start + end)
    }
}

impl ByteSource for WindowSource {
    fn len(&self) -> u64 {
        self.len
    }

    /// The window changes whenever the source around it does.
    fn opened_version(&self) -> Version {
        Version {
            len: self.len,
            ..self.inner.opened_version()
        }
    }

    fn version(&self) -> PResult<Version> {
        Ok(Version {
            len: self.len,
            ..self.inner.version()?
        })
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
        let r = self.inner_range(offset, buf.len() as u64)?;
        self.inner.read_at(r.start, buf)
    }

    fn read_ranges(&self, ranges: &[Range<u64>]) -> PResult<Vec<Vec<u8>>> {
        let shifted = ranges
            .iter()
            .map(|r| self.inner_range(r.start, r.end.saturating_sub(r.start)))
            .collect::<PResult<Vec<_>>>()?;
        self.inner.read_ranges(&shifted)
    }

    fn read_needed(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
        let r = self.inner_range(offset, buf.len() as u64)?;
        self.inner.read_needed(r.start, buf)
    }

    fn will_need(&self, ranges: &[Range<u64>], need: Need) {
        let shifted: Vec<Range<u64>> = ranges
            .iter()
            .filter_map(|r| {
                self.inner_range(r.start, r.end.saturating_sub(r.start))
                    .ok()
            })
            .collect();
        self.inner.will_need(&shifted, need)
    }

    fn takes_hints(&self) -> bool {
        self.inner.takes_hints()
    }

    fn pin(&self) -> PResult<Option<crate::format::byte_source::Pin>> {
        self.inner.pin()
    }

    fn distrust(&self) -> bool {
        self.inner.distrust()
    }

    fn prefetch_hint(&self) -> usize {
        self.inner.prefetch_hint()
    }

    fn may_wait(&self) -> bool {
        self.inner.may_wait()
    }

    fn describe(&self) -> String {
        format!(
            "{} [{}..{}]",
            self.inner.describe(),
            self.start,
            self.start + self.len
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::memory::MemorySource;

    #[test]
    fn window_reads_are_shifted_and_bounded() {
        let bytes: Vec<u8> = (0..100u8).collect();
        let inner: Arc<dyn ByteSource> = Arc::new(MemorySource::new("m", bytes));
        let w = WindowSource::new(inner.clone(), 10, 20).unwrap();
        let mut buf = [0u8; 5];
        w.read_at(3, &mut buf).unwrap();
        assert_eq!(buf, [13, 14, 15, 16, 17]);
        assert_eq!(
            w.read_ranges(&[0..2, 18..20]).unwrap(),
            vec![vec![10, 11], vec![28, 29]]
        );
        assert!(matches!(
            w.read_at(18, &mut buf),
            Err(Problem::Truncated { .. })
        ));
        assert!(WindowSource::new(inner, 90, 20).is_err());
    }
}
