//! Frames whose values are not stored in them.
//!
//! python-blosc2 and Caterva2 save some objects as b2nd frames that hold
//! only a shape, a dtype and a recipe, with every chunk left uninitialised:
//! a lazy expression or lazy UDF (metalayer `b2o`, recipe in vlmeta `b2o`),
//! a legacy LazyArray (metalayer `LazyArray`, recipe in vlmeta `_LazyArray`),
//! a Proxy's local cache (metalayer `proxy-source`, or `proxy`) and
//! Caterva2's HDF5 placeholders (vlmeta `_ftype` = `"hdf5"`). Decoding them
//! gives zeros that look like data, so the array refuses every read
//! ([`super::Problem::ValuesElsewhere`]) and the tree shows only
//! `meta.json`. The decision rests on these markers alone, never on the
//! chunks being uninitialised: `blosc2.empty` writes ordinary arrays whose
//! unwritten chunks read as zeros, like holes in a sparse file. The frame
//! finds its own marker (`Frame::values_elsewhere`).

/// Why an array's values are not in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elsewhere {
    /// A python-blosc2 object carrier (metalayer `b2o`): `kind` is the
    /// carrier's own word for it (`lazyexpr`, `lazyudf`, `remote_array`, ...).
    B2Object {
        /// The `kind` field of the `b2o` metalayer.
        kind: String,
    },
    /// A LazyArray saved before python-blosc2 had `b2o` (metalayer `LazyArray`).
    LegacyLazyArray,
    /// The local cache of a `blosc2.Proxy` (metalayer `proxy-source` or `proxy`):
    /// only the chunks fetched so far are in it.
    Proxy,
    /// A Caterva2 placeholder for an HDF5 dataset (vlmeta `_ftype` = `"hdf5"`).
    Caterva2Hdf5,
    /// A dataset a server keeps in a form of its own (an HDF5 leaf a
    /// Caterva2 server serves): no frame is read, its chunks are regions
    /// the server builds as frames on request.
    ServedRegions,
}

impl Elsewhere {
    /// Where the frame says so: a metalayer or vlmetalayer name.
    pub fn marker(&self) -> &'static str {
        match self {
            Elsewhere::B2Object { .. } => "metalayer b2o",
            Elsewhere::LegacyLazyArray => "metalayer LazyArray",
            Elsewhere::Proxy => "metalayer proxy-source",
            Elsewhere::Caterva2Hdf5 => "vlmeta _ftype = hdf5",
            Elsewhere::ServedRegions => "served without byte ranges",
        }
    }

    /// Which vlmetalayer holds the recipe or reference, if one does.
    pub fn recipe_vlmeta(&self) -> Option<&'static str> {
        match self {
            Elsewhere::B2Object { .. } => Some("b2o"),
            Elsewhere::LegacyLazyArray => Some("_LazyArray"),
            Elsewhere::Proxy | Elsewhere::Caterva2Hdf5 | Elsewhere::ServedRegions => None,
        }
    }
}

impl std::fmt::Display for Elsewhere {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Elsewhere::B2Object { kind } => match kind.as_str() {
                "lazyexpr" => write!(f, "a saved lazy expression, computed from other arrays"),
                "lazyudf" => write!(f, "a saved lazy UDF, computed by a Python function"),
                other => write!(f, "a python-blosc2 object of kind {other:?}, whose values live elsewhere"),
            },
            Elsewhere::LegacyLazyArray => write!(f, "a saved LazyArray, computed from other arrays"),
            Elsewhere::Proxy => write!(f, "the cache of a blosc2.Proxy, holding only the chunks fetched so far"),
            Elsewhere::Caterva2Hdf5 => write!(f, "a Caterva2 placeholder for an HDF5 dataset"),
            Elsewhere::ServedRegions => write!(f, "a dataset the server keeps in another form (an HDF5 dataset, a proxy), read as regions it builds"),
        }
    }
}
