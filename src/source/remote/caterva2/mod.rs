//! Caterva2 servers (`c2+https://HOST[/PREFIX]/@ROOT[/DIR]`): the Blosc
//! world's own dataset server, read through its HTTP API as one more
//! store behind [`super::store::Connection`].
//!
//! - [`session`]: the HTTP client of one server: the login (a `c2subauth`
//!   cookie from `CATERVA2_USERNAME` / `CATERVA2_PASSWORD` or the client's
//!   `caterva2.toml`, renewed on a 401), retries of 5xx answers and resets,
//!   and requests counted by endpoint.
//! - [`store`]: the server as an `object_store` store, so the sources,
//!   pools and listings of the other stores serve it too: `/api/list` is
//!   the delimiter listing, byte ranges of `/api/fetch` are the GETs.
//! - [`info`]: what `/api/info` says of a dataset (shape, grid, dtype,
//!   whether it is served in byte ranges, its ETag).
//! - [`sliced`]: datasets the server does not keep as a Blosc2 frame
//!   (HDF5 leaves, proxies): each chunk read as the frames `/api/fetch?slice_=`
//!   builds of its regions, checked against the ETag it was opened with.
//! - [`split`]: which regions a chunk is asked for (the whole chunk, or
//!   boxes of its blocks when it is larger than a region may be).
//! - [`recheck`]: when that ETag is asked again (at most once per TTL).

pub(crate) mod config;
pub(crate) mod info;
pub(crate) mod recheck;
pub(crate) mod session;
pub(crate) mod sliced;
pub(crate) mod split;
pub(crate) mod store;

pub use info::DatasetInfo;
pub use session::Endpoint;

/// Extensions of the files a Caterva2 server lists as folders of datasets
/// (HDF5 files, whose leaves are datasets, and `.b2z` stores, whose keys are).
pub const CONTAINERS: [&str; 3] = ["h5", "hdf5", "b2z"];

/// Extensions of stored frames, which the server serves in byte ranges.
const FRAMES: [&str; 4] = ["b2nd", "b2frame", "b2f", "b2"];

fn extension(name: &str) -> Option<&str> {
    name.rsplit_once('.')
        .map(|(_, ext)| ext)
        .filter(|e| !e.is_empty())
}

/// Whether dataset path `key` lies inside a container (an HDF5 file, a
/// `.b2z` store): the server lists inside it, and its leaves are datasets
/// whatever their names.
pub fn in_container(key: &str) -> bool {
    let parents = key
        .trim_end_matches('/')
        .rsplit_once('/')
        .map_or("", |(p, _)| p);
    parents
        .split('/')
        .any(|p| extension(p).is_some_and(|e| CONTAINERS.contains(&e)))
}

/// Whether dataset path `key` lies inside an HDF5 file, whose leaves the
/// server never serves in byte ranges.
pub fn in_hdf5(key: &str) -> bool {
    let parents = key
        .trim_end_matches('/')
        .rsplit_once('/')
        .map_or("", |(p, _)| p);
    parents
        .split('/')
        .any(|p| matches!(extension(p), Some("h5" | "hdf5")))
}

/// Whether `key` names a stored frame by its name alone (a frame
/// extension, outside containers): read in byte ranges, its `/api/info`
/// never needed.
pub fn is_stored_frame(key: &str) -> bool {
    let name = key
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    extension(name).is_some_and(|e| FRAMES.contains(&e)) && !in_container(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_by_name_and_containers() {
        assert!(is_stored_frame("@public/dir/a.b2nd") && is_stored_frame("@public/x.b2frame"));
        assert!(
            !is_stored_frame("@public/s.b2z/a.b2nd"),
            "a store's leaf: ask the server"
        );
        assert!(
            !is_stored_frame("@public/x.h5/grid/temp") && !is_stored_frame("@public/notes.txt")
        );
        assert!(in_container("@public/x.h5/grid/temp") && in_container("s.b2z/y"));
        assert!(!in_container("@public/x.h5") && !in_container("dir/a.b2nd"));
        assert!(
            in_hdf5("@public/x.hdf5/g/t")
                && !in_hdf5("@public/s.b2z/y")
                && !in_hdf5("@public/x.h5")
        );
    }
}
