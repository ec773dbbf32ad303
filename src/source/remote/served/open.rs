//! A Caterva2 dataset opened as its `/api/info` describes it: a stored
//! frame read in byte ranges where the server serves them, else (an HDF5
//! leaf, a proxy) an array described by its info whose chunks are the
//! regions the server builds ([`super::sliced`]).

use std::sync::Arc;

use crate::format::{Array, Description, Error};
use crate::source::remote::caterva2::info::{DatasetInfo, InfoKind};
use crate::source::remote::caterva2::names::in_hdf5;
use crate::source::remote::error::RemoteError;
use crate::source::remote::location::RemoteLocation;

use super::sliced::{ServedSource, SlicedBlocks};

/// The Caterva2 dataset at `loc`, as its `info` describes
/// it: a stored frame read in byte ranges when the server says it
/// serves them (or says nothing, outside HDF5 files, and a ranged read
/// works: a store's leaf kept whole), else as regions the server builds.
pub fn open_dataset(loc: &RemoteLocation, info: &DatasetInfo) -> Result<Array, Error> {
    let shown = loc.redacted();
    let name = std::path::PathBuf::from(&shown);
    let fail = |e: RemoteError| Error::new(&name, e.into());
    match &info.kind {
        InfoKind::Dataset {
            description,
            ranges,
        } => {
            let try_ranges = ranges.unwrap_or_else(|| !in_hdf5(loc.key()));
            if try_ranges {
                match loc.open() {
                    Ok(source) => return Array::from_source(&name, source),
                    // 416: nothing kept to take ranges of.
                    Err(RemoteError::Changed { .. }) if ranges.is_none() => {}
                    Err(e) => return Err(fail(e)),
                }
            }
            open_regions(loc, description, info)
        }
        InfoKind::Frame {
            ranges: Some(false),
        } => Err(fail(RemoteError::Unsupported {
            url: shown.clone(),
            detail: "a frame the server does not serve in byte ranges".into(),
        })),
        InfoKind::Frame { .. } => Array::from_source(&name, loc.open().map_err(fail)?),
        InfoKind::Group => Err(fail(RemoteError::Unsupported {
            url: shown.clone(),
            detail: "a folder or group, not a dataset".into(),
        })),
        InfoKind::Other(what) => Err(fail(RemoteError::Unsupported {
            url: shown.clone(),
            detail: what.clone(),
        })),
    }
}

/// The Caterva2 dataset at `loc`, which it serves as regions
/// only (an HDF5 leaf), as `description` and the ETag of `info` give it.
fn open_regions(
    loc: &RemoteLocation,
    description: &Description,
    info: &DatasetInfo,
) -> Result<Array, Error> {
    let etag = info.etag.as_deref();
    let shown = loc.redacted();
    let name = std::path::PathBuf::from(&shown);
    let (geometry, _) = description.nd().map_err(|p| Error::new(&name, p))?;
    let blocks = SlicedBlocks::new(
        loc.connection().clone(),
        loc.object_path().clone(),
        shown.clone(),
        geometry,
        description.dtype.clone(),
        etag.map(|e| (e.to_string(), info.asked)),
    );
    Array::described(
        &name,
        description,
        Arc::new(ServedSource::new(shown, etag)),
        Arc::new(blocks),
    )
}
