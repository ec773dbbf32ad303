//! python-blosc2 stores (DictStore, TreeStore, EmbedStore): which bytes make
//! which key.
//!
//! - `.b2z`: a zip of stored members; `exp/run1/temps.b2nd` is key
//!   `/exp/run1/temps`, read in place as a window of the archive.
//! - `.b2d`: a directory of the same member files.
//! - `.b2e`, and `embed.b2e` inside the other two: a byte frame whose decoded
//!   data holds small values' frames back to back, placed by its embed map.
//!
//! A [`Store`] is one version of a store: the directory listing, the
//! decoded embed data and the version of the file it came from. Member keys
//! win over embedded ones (as in python-blosc2). Internal files (`embed.b2e`,
//! `*.b2lock`, `*.tmp`) are not keys; `…/__vlmeta__` values hold group
//! metadata and are offered through [`Store::group_vlmeta`], not as keys.

pub mod embed;
pub mod members;
pub mod zip;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value as Json};

use crate::format::byte_source::ByteSource;
use crate::format::{looks_like_frame, Array, Error, Problem, Version};

use super::{FileSource, MemorySource, WindowSource};
use embed::{parse_embed_map, EmbedValue, MAX_EMBED_BYTES};
use members::MemberFiles;
use zip::ZipEntry;

/// Name of the embed frame inside `.b2z` and `.b2d` stores.
pub const EMBED_NAME: &str = "embed.b2e";
/// Extensions of member files python-blosc2 writes (NDArray, SChunk, BatchArray).
const VALUE_EXTENSIONS: [&str; 3] = ["b2nd", "b2f", "b2b"];
/// Most member files a `.b2d` directory walk accepts.
const MAX_DIR_MEMBERS: usize = zip::MAX_ENTRIES as usize;
/// Deepest directory nesting walked in a `.b2d`.
const MAX_DIR_DEPTH: usize = 64;

/// The three ways a store is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreFormat {
    /// A zip archive (`.b2z`).
    Zip,
    /// A directory (`.b2d`).
    Dir,
    /// An EmbedStore frame alone (`.b2e`).
    Embed,
}

impl StoreFormat {
    /// The format a local path is kept in, from its name and type: `.b2z`
    /// files, `.b2e` files, `.b2d` directories (or any directory holding
    /// `embed.b2e`). `None` for anything else.
    pub fn of_path(path: &Path) -> Option<StoreFormat> {
        let ext = path.extension().and_then(|e| e.to_str());
        let meta = std::fs::metadata(path).ok()?;
        if meta.is_dir() {
            (ext == Some("b2d") || path.join(EMBED_NAME).is_file()).then_some(StoreFormat::Dir)
        } else if meta.is_file() {
            match ext {
                Some("b2z") => Some(StoreFormat::Zip),
                Some("b2e") => Some(StoreFormat::Embed),
                _ => None,
            }
        } else {
            None
        }
    }

    /// Name used in `meta.json` ("b2z", "b2d", "b2e").
    pub fn name(self) -> &'static str {
        match self {
            StoreFormat::Zip => "b2z",
            StoreFormat::Dir => "b2d",
            StoreFormat::Embed => "b2e",
        }
    }
}

/// Where one key's value lies.
#[derive(Debug, Clone)]
pub enum Home {
    /// A member of the zip archive.
    Member(ZipEntry),
    /// A member file of a `.b2d` directory.
    File(PathBuf),
    /// A member file of a `.b2d` kept elsewhere (a remote prefix), by its
    /// path relative to the store, opened through the store's [`MemberFiles`].
    Listed(String),
    /// A frame inside the embed frame's decoded data.
    Embedded {
        /// First byte in the decoded data.
        offset: u64,
        /// Length of the frame.
        length: u64,
    },
    /// A reference to a remote array (shown in meta.json, not readable here).
    Remote {
        /// The server's base URL.
        urlbase: String,
        /// The array's path on the server.
        path: String,
    },
}

/// One version of a store.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    format: StoreFormat,
    /// `b2dict`, `b2tree` or `b2embed` (the embed frame's metalayer).
    class: String,
    archive: Option<Arc<dyn ByteSource>>,
    /// The member files of a `.b2d` kept elsewhere.
    members: Option<Arc<dyn MemberFiles>>,
    embed_data: Arc<[u8]>,
    embed_vlmeta: Vec<(String, Json)>,
    values: BTreeMap<String, Home>,
    /// Keys whose value cannot be offered, and why (a compressed member).
    skipped: Vec<(String, String)>,
    version: Version,
    /// Read from a local path (not through [`Store::open_source`]).
    local: bool,
}

/// What opening a store gathers before [`Store::finish`] reads its embed
/// frame.
struct Parts {
    /// The zip archive (`.b2z`), read in place.
    archive: Option<Arc<dyn ByteSource>>,
    /// The embed frame (`embed.b2e`, or the `.b2e` itself), if any.
    embed_source: Option<Arc<dyn ByteSource>>,
    /// The member values found by key.
    values: BTreeMap<String, Home>,
    /// Keys whose value cannot be offered, and why.
    skipped: Vec<(String, String)>,
    /// What [`Store::version`] reports.
    version: Version,
    /// Read from a local path.
    local: bool,
}

/// The logical key of a member file path (`exp/run1/temps.b2nd` →
/// `/exp/run1/temps`): its last extension dropped, as `os.path.splitext` does.
pub fn key_of_member(rel: &str) -> String {
    let rel = rel.trim_start_matches('/');
    let base_start = rel.rfind('/').map_or(0, |i| i + 1);
    let base = &rel[base_start..];
    let stem_len = match base.rfind('.') {
        Some(dot) if base[..dot].chars().any(|c| c != '.') => base_start + dot,
        _ => rel.len(),
    };
    format!("/{}", &rel[..stem_len])
}

fn is_internal(rel: &str) -> bool {
    rel == EMBED_NAME || rel.ends_with(".b2lock") || rel.ends_with(".tmp") || rel.ends_with('/')
}

fn has_value_extension(rel: &str) -> bool {
    Path::new(rel)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| VALUE_EXTENSIONS.contains(&e))
}

impl Store {
    /// Open the store at `path` (kept as `format`), reading its directory
    /// and decoding its embed frame. Errors name the store.
    pub fn open(path: &Path, format: StoreFormat) -> Result<Store, Error> {
        let fail = |p: Problem| Error::new(path, p);
        let mut values = BTreeMap::new();
        let mut skipped = Vec::new();
        let (archive, embed_source, version) = match format {
            StoreFormat::Zip => {
                let file: Arc<dyn ByteSource> = Arc::new(FileSource::open(path).map_err(fail)?);
                let embed = read_zip(path, &file, &mut values, &mut skipped)?;
                let version = file.opened_version();
                (Some(file), embed, version)
            }
            StoreFormat::Dir => {
                let mut files = Vec::new();
                walk(path, path, 0, &mut files).map_err(fail)?;
                for (rel, full) in files {
                    if is_internal(&rel) {
                        continue;
                    }
                    if !has_value_extension(&rel)
                        && !FileSource::open_once(&full).is_ok_and(|s| super::sniff_frame(&s))
                    {
                        continue;
                    }
                    values.insert(key_of_member(&rel), Home::File(full));
                }
                let embed_path = path.join(EMBED_NAME);
                let (embed, version) = match FileSource::open(&embed_path) {
                    Ok(f) => {
                        let v = f.opened_version();
                        (Some(Arc::new(f) as Arc<dyn ByteSource>), v)
                    }
                    Err(_) => (
                        None,
                        Version {
                            len: 0,
                            tag: crate::format::VersionTag::Fixed(0),
                        },
                    ),
                };
                (None, embed, version)
            }
            StoreFormat::Embed => {
                let f = FileSource::open(path).map_err(fail)?;
                let v = f.opened_version();
                (None, Some(Arc::new(f) as Arc<dyn ByteSource>), v)
            }
        };
        let parts = Parts {
            archive,
            embed_source,
            values,
            skipped,
            version,
            local: true,
        };
        Store::finish(path, format, parts)
    }

    /// Open the store kept as `format` in `source` (a `.b2z` archive or a
    /// `.b2e` frame: a remote object, say); `name` names it in messages and
    /// is its [`Self::path`]; `version` is what [`Self::version`] reports
    /// (the identity the caller tracks the source by, e.g. a listing's ETag).
    /// A `.b2d` directory has no single source.
    pub fn open_source(
        name: &Path,
        source: Arc<dyn ByteSource>,
        format: StoreFormat,
        version: Version,
    ) -> Result<Store, Error> {
        let mut parts = Parts {
            archive: None,
            embed_source: None,
            values: BTreeMap::new(),
            skipped: Vec::new(),
            version,
            local: false,
        };
        match format {
            StoreFormat::Zip => {
                parts.embed_source =
                    read_zip(name, &source, &mut parts.values, &mut parts.skipped)?;
                parts.archive = Some(source);
                Store::finish(name, format, parts)
            }
            StoreFormat::Embed => {
                parts.embed_source = Some(source);
                Store::finish(name, format, parts)
            }
            StoreFormat::Dir => Err(Error::new(
                name,
                Problem::unsupported("store", "a .b2d directory is not one source"),
            )),
        }
    }

    /// Open the `.b2d` store whose files `members` reaches (a remote
    /// prefix); `name` names it, `version` is what [`Self::version`]
    /// reports (its `embed.b2e`'s identity, say). Members are chosen as in
    /// a local `.b2d`: value extensions, or files that start like a frame.
    pub fn open_members(
        name: &Path,
        members: Arc<dyn MemberFiles>,
        version: Version,
    ) -> Result<Store, Error> {
        let fail = |p: Problem| Error::new(name, p);
        let mut values = BTreeMap::new();
        let files = members.list().map_err(fail)?;
        if files.len() > MAX_DIR_MEMBERS {
            return Err(fail(Problem::Limit(format!(
                "more than {MAX_DIR_MEMBERS} member files"
            ))));
        }
        for rel in files {
            if is_internal(&rel) || rel.split('/').any(|s| s == ".." || s == ".") {
                continue;
            }
            if !has_value_extension(&rel) && !members.is_frame(&rel) {
                continue;
            }
            values.insert(key_of_member(&rel), Home::Listed(rel));
        }
        let embed = members
            .open_embed()
            .map_err(|p| Error::new(&member_name(name, EMBED_NAME), p))?;
        let parts = Parts {
            archive: None,
            embed_source: embed,
            values,
            skipped: Vec::new(),
            version,
            local: false,
        };
        let mut store = Store::finish(name, StoreFormat::Dir, parts)?;
        store.members = Some(members);
        Ok(store)
    }

    /// The store at `path` kept as `format` from the `parts` its open
    /// gathered: the embed frame is read, and its values added under the
    /// member keys (members win).
    fn finish(path: &Path, format: StoreFormat, parts: Parts) -> Result<Store, Error> {
        let Parts {
            archive,
            embed_source,
            mut values,
            skipped,
            version,
            local,
        } = parts;
        let fail = |p: Problem| Error::new(path, p);
        let (class, embed_data, embed_vlmeta) = match embed_source {
            Some(source) => {
                let name = if format == StoreFormat::Embed {
                    path.to_path_buf()
                } else {
                    member_name(path, EMBED_NAME)
                };
                let embed = read_embed(&name, source)?;
                for (key, value) in embed.map {
                    let home = match value {
                        EmbedValue::Frame { offset, length } => Home::Embedded { offset, length },
                        EmbedValue::Remote { urlbase, path } => Home::Remote { urlbase, path },
                    };
                    values.entry(key).or_insert(home);
                }
                (embed.class, embed.data, embed.vlmeta)
            }
            None if format == StoreFormat::Dir => {
                ("b2dict".to_string(), Arc::from(Vec::new()), Vec::new())
            }
            None => {
                return Err(fail(Problem::corrupt(
                    "store",
                    format!("no {EMBED_NAME} member"),
                )))
            }
        };
        Ok(Store {
            path: path.to_path_buf(),
            format,
            class,
            archive,
            members: None,
            embed_data,
            embed_vlmeta,
            values,
            skipped,
            version,
            local,
        })
    }

    /// Whether the store is a local file or directory (not a remote object).
    pub fn is_local(&self) -> bool {
        self.local
    }

    /// The store's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How the store is kept.
    pub fn format(&self) -> StoreFormat {
        self.format
    }

    /// `b2dict`, `b2tree` or `b2embed`: the embed frame's metalayer (stores
    /// written before python-blosc2 4.1 say `b2embed` whatever their class).
    pub fn class(&self) -> &str {
        &self.class
    }

    /// The version of the file this listing was read from (the archive, the
    /// `.b2e` file, or a `.b2d`'s `embed.b2e`, which every change rewrites).
    pub fn version(&self) -> &Version {
        &self.version
    }

    /// Every key holding a value (group metadata `…/__vlmeta__` included),
    /// with where it lies, in key order.
    pub fn values(&self) -> &BTreeMap<String, Home> {
        &self.values
    }

    /// Keys left out, with the reason (compressed zip members).
    pub fn skipped(&self) -> &[(String, String)] {
        &self.skipped
    }

    /// The embed frame's variable-length metadata (`estore_metadata`,
    /// `_object_registry`, ...).
    pub fn embed_vlmeta(&self) -> &[(String, Json)] {
        &self.embed_vlmeta
    }

    /// The name errors about `key` carry: `STORE:KEY`.
    pub fn key_name(&self, key: &str) -> PathBuf {
        PathBuf::from(format!("{}:{key}", self.path.display()))
    }

    /// The bytes of `key`'s frame as a source.
    pub fn value_source(&self, key: &str) -> Result<Arc<dyn ByteSource>, Error> {
        let name = self.key_name(key);
        let fail = |p: Problem| Error::new(&name, p);
        match self.values.get(key) {
            None => Err(fail(Problem::OutOfRange(format!(
                "no key {key} in the store"
            )))),
            Some(Home::Member(entry)) => {
                let archive = self
                    .archive
                    .as_ref()
                    .ok_or_else(|| fail(Problem::corrupt("store", "no archive")))?;
                let (start, len) = entry.data_window(&**archive).map_err(fail)?;
                Ok(Arc::new(
                    WindowSource::new(archive.clone(), start, len).map_err(fail)?,
                ))
            }
            Some(Home::File(path)) => Ok(Arc::new(FileSource::open(path).map_err(fail)?)),
            Some(Home::Listed(rel)) => {
                let members = self
                    .members
                    .as_ref()
                    .ok_or_else(|| fail(Problem::corrupt("store", "no member files")))?;
                members.open(rel).map_err(fail)
            }
            Some(Home::Embedded { offset, length }) => {
                let bytes = &self.embed_data[*offset as usize..(*offset + *length) as usize];
                Ok(Arc::new(MemorySource::new(
                    name.display().to_string(),
                    bytes.to_vec(),
                )))
            }
            Some(Home::Remote { urlbase, path }) => Err(fail(Problem::unsupported(
                "store value",
                format!("a remote reference ({urlbase} {path})"),
            ))),
        }
    }

    /// Open `key`'s value as an array (errors name `STORE:KEY`).
    pub fn open_value(&self, key: &str) -> Result<Array, Error> {
        let source = self.value_source(key)?;
        Array::from_source(&self.key_name(key), source)
    }

    /// The metadata of group `group` (`""` for the root): the vlmeta of the
    /// `GROUP/__vlmeta__` value, as JSON; `None` when there is none.
    pub fn group_vlmeta(&self, group: &str) -> Option<Result<Json, Error>> {
        let key = format!("{}/__vlmeta__", group.trim_end_matches('/'));
        self.values.get(&key)?;
        Some(self.open_value(&key).map(|a| {
            Json::Object(
                a.frame()
                    .vlmeta
                    .iter()
                    .cloned()
                    .collect::<Map<String, Json>>(),
            )
        }))
    }
}

/// Read the zip directory of `file` (the store `path`): its values go to
/// `values`, compressed members to `skipped`; the embed frame's window.
fn read_zip(
    path: &Path,
    file: &Arc<dyn ByteSource>,
    values: &mut BTreeMap<String, Home>,
    skipped: &mut Vec<(String, String)>,
) -> Result<Option<Arc<dyn ByteSource>>, Error> {
    let fail = |p: Problem| Error::new(path, p);
    let entries = zip::read_directory(&**file).map_err(fail)?;
    let mut embed = None;
    for entry in entries {
        if entry.name == EMBED_NAME {
            let (start, len) = entry
                .data_window(&**file)
                .map_err(|p| Error::new(&member_name(path, EMBED_NAME), p))?;
            if !entry.is_stored() {
                return Err(Error::new(
                    &member_name(path, EMBED_NAME),
                    Problem::unsupported("zip member", "compressed (a .b2z is read in place)"),
                ));
            }
            embed = Some(
                Arc::new(WindowSource::new(file.clone(), start, len).map_err(fail)?)
                    as Arc<dyn ByteSource>,
            );
            continue;
        }
        if is_internal(&entry.name) || entry.name.split('/').any(|s| s == "..") {
            continue;
        }
        let key = key_of_member(&entry.name);
        if !has_value_extension(&entry.name) {
            let probe = entry.data_window(&**file).ok().and_then(|(start, len)| {
                let mut head = [0u8; 11];
                (len >= 11 && entry.is_stored() && file.read_at(start, &mut head).is_ok())
                    .then_some(head)
            });
            if !probe.is_some_and(|h| looks_like_frame(&h)) {
                continue;
            }
        }
        if !entry.is_stored() {
            log::warn!("{}: member {} is compressed (method {}); a .b2z is read in place, so it is not shown", path.display(), entry.name, entry.method);
            skipped.push((
                key,
                format!(
                    "member {} is compressed (method {})",
                    entry.name, entry.method
                ),
            ));
            continue;
        }
        values.insert(key, Home::Member(entry));
    }
    Ok(embed)
}

/// What an embed frame holds.
#[derive(Debug)]
pub struct EmbedContents {
    /// `b2dict`, `b2tree` or `b2embed` (its metalayer).
    pub class: String,
    /// Its decoded bytes: the embedded frames back to back.
    pub data: Arc<[u8]>,
    /// Its variable-length metadata.
    pub vlmeta: Vec<(String, Json)>,
    /// Its embed map, checked against `data`.
    pub map: Vec<(String, EmbedValue)>,
}

/// Decode the embed frame in `source` (named `name` in errors): its data
/// (at most [`MAX_EMBED_BYTES`]) and its embed map, checked.
pub fn read_embed(name: &Path, source: Arc<dyn ByteSource>) -> Result<EmbedContents, Error> {
    let array = Array::from_source(name, source)?;
    let frame = array.frame();
    if frame.nbytes > MAX_EMBED_BYTES {
        return Err(Error::new(
            name,
            Problem::Limit(format!(
                "embed frame of {} bytes (at most {MAX_EMBED_BYTES})",
                frame.nbytes
            )),
        ));
    }
    let mut data = Vec::with_capacity(frame.nbytes.min(1 << 20) as usize);
    for c in 0..array.nchunks() {
        data.extend_from_slice(&array.decode_chunk(c).map_err(|p| Error::new(name, p))?);
        if data.len() as u64 > frame.nbytes {
            return Err(Error::new(
                name,
                Problem::corrupt(
                    "embed frame",
                    "chunks decode to more bytes than the frame says",
                ),
            ));
        }
    }
    let class = ["b2tree", "b2dict", "b2embed"]
        .into_iter()
        .find(|c| frame.metalayer(c).is_some())
        .unwrap_or("b2embed")
        .to_string();
    let map = parse_embed_map(&frame.vlmeta, data.len() as u64).map_err(|p| Error::new(name, p))?;
    Ok(EmbedContents {
        class,
        data: Arc::from(data),
        vlmeta: frame.vlmeta.clone(),
        map,
    })
}

/// The frame of embedded value `value` of `embed`, as a source named `name`.
pub fn embedded_source(
    embed: &EmbedContents,
    value: &EmbedValue,
    name: &str,
) -> Option<Arc<dyn ByteSource>> {
    let EmbedValue::Frame { offset, length } = value else {
        return None;
    };
    let bytes = embed
        .data
        .get(*offset as usize..(*offset + *length) as usize)?;
    Some(Arc::new(MemorySource::new(name, bytes.to_vec())))
}

fn member_name(store: &Path, member: &str) -> PathBuf {
    PathBuf::from(format!("{}:{member}", store.display()))
}

/// Regular files under `dir` (symlinks not followed), as (relative path, full path).
fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    out: &mut Vec<(String, PathBuf)>,
) -> Result<(), Problem> {
    if depth > MAX_DIR_DEPTH {
        return Err(Problem::Limit(format!(
            "directories nested deeper than {MAX_DIR_DEPTH}"
        )));
    }
    let mut items: Vec<_> = std::fs::read_dir(dir)?.filter_map(Result::ok).collect();
    items.sort_by_key(|e| e.file_name());
    for item in items {
        let Ok(kind) = item.file_type() else { continue };
        let full = item.path();
        if kind.is_dir() {
            walk(root, &full, depth + 1, out)?;
        } else if kind.is_file() {
            let Ok(rel) = full.strip_prefix(root) else {
                continue;
            };
            let Some(rel) = rel.to_str() else { continue };
            out.push((rel.to_string(), full.clone()));
            if out.len() > MAX_DIR_MEMBERS {
                return Err(Problem::Limit(format!(
                    "more than {MAX_DIR_MEMBERS} member files"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_paths_map_to_keys() {
        assert_eq!(key_of_member("exp/run1/temps.b2nd"), "/exp/run1/temps");
        assert_eq!(key_of_member("a.b/c"), "/a.b/c");
        assert_eq!(key_of_member("x.tar.b2f"), "/x.tar");
        assert_eq!(key_of_member(".hidden"), "/.hidden");
        assert_eq!(key_of_member("__vlmeta__.b2f"), "/__vlmeta__");
    }
}
