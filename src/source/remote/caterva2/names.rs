//! What a Caterva2 dataset path says by itself, before the server is
//! asked: HDF5 files and `.b2z` stores are containers whose leaves are
//! datasets whatever their names, and a frame extension outside them names
//! a stored frame, served in byte ranges.

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

/// Whether a listed name is a container's (an HDF5 file, a `.b2z` store),
/// which the server lists as a folder of datasets.
pub fn is_container(name: &str) -> bool {
    extension(name).is_some_and(|e| CONTAINERS.contains(&e))
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
        assert!(is_container("x.hdf5") && is_container("s.b2z") && !is_container("a.b2nd"));
        assert!(in_container("@public/x.h5/grid/temp") && in_container("s.b2z/y"));
        assert!(!in_container("@public/x.h5") && !in_container("dir/a.b2nd"));
        assert!(
            in_hdf5("@public/x.hdf5/g/t")
                && !in_hdf5("@public/s.b2z/y")
                && !in_hdf5("@public/x.h5")
        );
    }
}
