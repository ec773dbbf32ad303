//! A CTable as its logical columns: from a table group's storage keys and
//! its `_meta` schema, each column in `to_pandas` order with the storage
//! parts it claims (values, offsets and bytes, codes and dictionary, null
//! mask, BatchArray, ListArray) opened, its live rows (`_valid_rows`), the
//! keys no column claims, and the index sidecars under `_indexes/`.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value as Json};

use super::batch_array::{self as batches, Serializer};
use super::schema::{self, ColumnSpec, Kind, Nulls, Schema};
use super::seam::piece_starts;
use crate::compute::{OperandInfo, Program};
use crate::format::{Array, Error, Problem, Region};
use crate::read::{read_uncached, RowMap};
use crate::source::store::Store;

/// Most runs of valid rows a table's row map holds (bounds its memory).
const MAX_ROW_RUNS: usize = 1 << 22;
/// Bytes of the valid-rows mask decoded at a time.
const MASK_STEP: u64 = 1 << 20;
/// Physical rows per batch (record batch, chunk of rows) at most.
pub const BATCH_PHYSICAL_ROWS: u64 = 1 << 16;
/// Largest dictionary (decoded bytes) read.
const MAX_DICTIONARY_BYTES: u64 = 256 << 20;

/// The opened storage parts of a column.
#[derive(Debug)]
pub enum Parts {
    /// One NDArray, one row per physical row (numbers, bools, timestamps,
    /// fixed text and bytes, ndarray items); `mask`: its `.notnull`.
    Fixed {
        /// The values.
        values: Arc<Array>,
        /// Its numpy dtype as presented.
        dtype: String,
        /// Bytes per row.
        row_bytes: u64,
        /// The null mask, when the column has one.
        mask: Option<Arc<Array>>,
    },
    /// int64 offsets and the UTF-8 bytes.
    Utf8 {
        /// `P` (one more entry than rows).
        offsets: Arc<Array>,
        /// `P.utf8`.
        bytes: Arc<Array>,
        /// The null mask, when the column has one.
        mask: Option<Arc<Array>>,
    },
    /// int32 codes and the words.
    Dictionary {
        /// `P`.
        codes: Arc<Array>,
        /// The words of `P_dict` (a string array), code `k` is word `k`.
        words: arrow_array::ArrayRef,
    },
    /// A BatchArray whose items are the rows (varlen columns, a ListArray
    /// on a BatchArray).
    Batches {
        /// The array.
        array: Arc<Array>,
        /// Its serializer.
        serializer: Serializer,
        /// First row of each batch, and the row count at the end.
        starts: Arc<Vec<u64>>,
    },
    /// An ObjectArray layout, one row per chunk (a ListArray `vl`).
    PerChunk {
        /// The array.
        array: Arc<Array>,
    },
    /// A computed column: its program over the stored columns `deps`.
    Computed {
        /// The compiled expression, operands in `deps` order.
        program: Arc<Program>,
        /// The columns `o0, o1, …` (indexes into the table's columns).
        deps: Vec<usize>,
    },
    /// Nothing can be read (the column says why).
    Missing,
}

impl Parts {
    /// Whether reading these parts may wait on a network.
    pub fn may_wait(&self) -> bool {
        match self {
            Parts::Fixed { values, mask, .. } => {
                values.may_wait() || mask.as_ref().is_some_and(|m| m.may_wait())
            }
            Parts::Utf8 {
                offsets,
                bytes,
                mask,
            } => {
                offsets.may_wait()
                    || bytes.may_wait()
                    || mask.as_ref().is_some_and(|m| m.may_wait())
            }
            Parts::Dictionary { codes, .. } => codes.may_wait(),
            Parts::Batches { array, .. } | Parts::PerChunk { array } => array.may_wait(),
            Parts::Computed { .. } | Parts::Missing => false,
        }
    }
}

/// One logical column.
#[derive(Debug)]
pub struct Column {
    /// What the schema says of it.
    pub spec: ColumnSpec,
    /// The storage keys it claims.
    pub keys: Vec<String>,
    /// Its opened parts.
    pub parts: Parts,
    /// Why its values cannot be given (then `parts` is `Missing`).
    pub problem: Option<String>,
}

impl Column {
    /// Its name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// Whether its values are one fixed-width NDArray row per row.
    pub fn is_fixed(&self) -> bool {
        matches!(self.parts, Parts::Fixed { .. })
    }
}

/// A table's index, as `_meta`'s `index_catalog` names it.
#[derive(Debug, Clone)]
pub struct IndexEntry {
    /// The column indexed.
    pub column: String,
    /// Its kind (`full`, `bucket`, `partial`, `summary`).
    pub kind: String,
}

/// A CTable as logical columns.
#[derive(Debug)]
pub struct TableModel {
    /// The table's root key (`""`: the store root).
    pub key: String,
    /// Its name in messages (the store path and key).
    pub name: PathBuf,
    /// The schema.
    pub schema: Schema,
    /// The columns in `to_pandas` order.
    pub columns: Vec<Column>,
    /// The live rows (physical row runs).
    pub rows: Arc<RowMap>,
    /// Length of `_valid_rows`.
    pub physical_rows: u64,
    /// Keys of the table no column claims (not `_meta`, `_valid_rows`,
    /// `_vlmeta`, nor under `_indexes/`).
    pub unclaimed: Vec<String>,
    /// Keys under `_indexes/`.
    pub index_keys: Vec<String>,
    /// The index catalog.
    pub indexes: Vec<IndexEntry>,
    /// `_meta`'s vlmeta but the schema.
    pub meta_vlmeta: Map<String, Json>,
    /// The user's vlmeta (`_vlmeta`), when there is one.
    pub user_vlmeta: Option<Json>,
}

/// The storage path of column `name` under `_cols/`: split at unescaped
/// dots, each segment's `%`, `/`, `.` and `\` percent-encoded.
pub fn column_path(name: &str) -> String {
    let mut segments = vec![String::new()];
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        let c = match c {
            '\\' => chars.next().unwrap_or('\\'),
            '.' => {
                segments.push(String::new());
                continue;
            }
            c => c,
        };
        let seg = segments.last_mut().expect("one segment at least");
        match c {
            '%' => seg.push_str("%25"),
            '/' => seg.push_str("%2F"),
            '.' => seg.push_str("%2E"),
            '\\' => seg.push_str("%5C"),
            c => seg.push(c),
        }
    }
    segments.join("/")
}

impl TableModel {
    /// Read the table rooted at `key` of `store`.
    pub fn load(store: &Store, key: &str) -> Result<TableModel, Error> {
        let name = store.key_name(if key.is_empty() { "/" } else { key });
        let meta = store.open_value(&format!("{key}/_meta"))?;
        let mut meta_vlmeta: Map<String, Json> = meta.frame().vlmeta.iter().cloned().collect();
        let schema_value = meta_vlmeta.remove("schema");
        let schema = schema::parse(schema_value.as_ref())
            .map_err(|e| Error::new(&name, Problem::corrupt("table schema", e.to_string())))?;
        let (rows, physical_rows) = read_valid_rows(store, key)?;
        let indexes = meta_vlmeta
            .remove("index_catalog")
            .and_then(|c| c.as_object().cloned())
            .map(|m| {
                m.iter()
                    .map(|(col, d)| IndexEntry {
                        column: col.clone(),
                        kind: d
                            .get("kind")
                            .and_then(Json::as_str)
                            .unwrap_or("?")
                            .to_owned(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let prefix = format!("{key}/");
        let table_keys: Vec<&String> = store
            .values()
            .keys()
            .filter(|k| k.starts_with(&prefix))
            .collect();
        let has = |k: &str| store.values().contains_key(k);
        let mut claimed: Vec<String> = ["_meta", "_valid_rows", "_vlmeta"]
            .iter()
            .map(|s| format!("{key}/{s}"))
            .collect();
        let mut columns: Vec<Column> = Vec::new();
        for spec in &schema.columns {
            let column = open_column(store, key, spec, &has, &columns, physical_rows);
            claimed.extend(column.keys.iter().cloned());
            columns.push(column);
        }
        let index_prefix = format!("{key}/_indexes/");
        let index_keys: Vec<String> = table_keys
            .iter()
            .filter(|k| k.starts_with(&index_prefix))
            .map(|k| (*k).clone())
            .collect();
        let unclaimed = table_keys
            .iter()
            .filter(|k| !k.starts_with(&index_prefix) && !claimed.contains(k))
            .map(|k| (*k).clone())
            .collect();
        let user_vlmeta = store
            .values()
            .contains_key(&format!("{key}/_vlmeta"))
            .then(|| {
                store
                    .open_value(&format!("{key}/_vlmeta"))
                    .ok()
                    .map(|a| Json::Object(a.frame().vlmeta.iter().cloned().collect()))
            })
            .flatten();
        Ok(TableModel {
            key: key.to_owned(),
            name,
            schema,
            columns,
            rows: Arc::new(rows),
            physical_rows,
            unclaimed,
            index_keys,
            indexes,
            meta_vlmeta,
            user_vlmeta,
        })
    }

    /// Index of the column named `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name() == name)
    }

    /// Rows deleted (physical rows that are not live).
    pub fn deleted_rows(&self) -> u64 {
        self.physical_rows - self.rows.count
    }
}

/// The live rows of the table at `key` and the length of its `_valid_rows`.
fn read_valid_rows(store: &Store, key: &str) -> Result<(RowMap, u64), Error> {
    let rows_key = format!("{key}/_valid_rows");
    let mask = store.open_value(&rows_key)?;
    let name = store.key_name(&rows_key);
    if mask.frame().typesize != 1 {
        return Err(Error::new(
            &name,
            Problem::corrupt(
                "valid rows",
                format!("items of {} bytes, not bool", mask.frame().typesize),
            ),
        ));
    }
    let total = mask.data_len();
    let mut rows = RowMap::default();
    let mut buf = Vec::new();
    let mut at = 0;
    while at < total {
        let n = MASK_STEP.min(total - at);
        buf.resize(n as usize, 0);
        read_uncached(&mask, Region::Data, at, &mut buf).map_err(|p| Error::new(&name, p))?;
        for (i, &b) in buf.iter().enumerate() {
            if b != 0 {
                let row = at + i as u64;
                match rows.runs.last_mut() {
                    Some((start, n)) if *start + *n == row => *n += 1,
                    _ => {
                        if rows.runs.len() == MAX_ROW_RUNS {
                            return Err(Error::new(
                                &name,
                                Problem::Limit(format!(
                                    "more than {MAX_ROW_RUNS} runs of valid rows"
                                )),
                            ));
                        }
                        rows.runs.push((row, 1));
                    }
                }
                rows.count += 1;
            }
        }
        at += n;
    }
    Ok((rows, total))
}

/// Column `spec` of the table at `key`: its keys claimed and parts opened
/// (`earlier`: the columns before it, which a computed column reads).
fn open_column(
    store: &Store,
    key: &str,
    spec: &ColumnSpec,
    has: &dyn Fn(&str) -> bool,
    earlier: &[Column],
    physical_rows: u64,
) -> Column {
    let p = format!("{key}/_cols/{}", column_path(&spec.name));
    let mut keys = Vec::new();
    let mut claim = |k: &str| -> Option<String> {
        has(k).then(|| {
            keys.push(k.to_owned());
            k.to_owned()
        })
    };
    let open = |k: &str| -> Result<Arc<Array>, String> {
        store
            .open_value(k)
            .map(Arc::new)
            .map_err(|e| format!("{}: {}", e.file.display(), e.problem))
    };
    let values = claim(&p);
    let mask_key = claim(&format!("{p}.notnull"));
    let result: Result<Parts, String> = (|| {
        let missing = || format!("its storage {p} is missing");
        let mask = || -> Result<Option<Arc<Array>>, String> {
            match (&spec.nulls, &mask_key) {
                (Nulls::Mask, Some(k)) => open(k).map(Some),
                _ => Ok(None),
            }
        };
        match &spec.kind {
            Kind::Number { .. }
            | Kind::Timestamp { .. }
            | Kind::FixedText
            | Kind::FixedBytes
            | Kind::NdArray { .. } => {
                let values = open(values.as_ref().ok_or_else(missing)?)?;
                let dtype = values.item_dtype();
                let row_bytes = crate::read::row_bytes(&values)
                    .unwrap_or(values.frame().typesize as u64)
                    .max(1);
                Ok(Parts::Fixed {
                    values,
                    dtype,
                    row_bytes,
                    mask: mask()?,
                })
            }
            Kind::Utf8 => {
                let offsets = open(values.as_ref().ok_or_else(missing)?)?;
                let bytes_key = claim(&format!("{p}.utf8"))
                    .ok_or_else(|| format!("its bytes {p}.utf8 are missing"))?;
                Ok(Parts::Utf8 {
                    offsets,
                    bytes: open(&bytes_key)?,
                    mask: mask()?,
                })
            }
            Kind::Dictionary { .. } => {
                let codes = open(values.as_ref().ok_or_else(missing)?)?;
                let dict_key = claim(&format!("{p}_dict"))
                    .ok_or_else(|| format!("its dictionary {p}_dict is missing"))?;
                let dict = open(&dict_key)?;
                Ok(Parts::Dictionary {
                    codes,
                    words: Arc::new(arrow_array::StringArray::from(dictionary_words(&dict)?)),
                })
            }
            Kind::Varlen { .. } | Kind::List => {
                let array = open(values.as_ref().ok_or_else(missing)?)?;
                if array.frame().metalayer("vlarray").is_some() {
                    return Ok(Parts::PerChunk { array });
                }
                let serializer = batches::serializer(&array)
                    .ok_or_else(|| format!("{p} is neither a BatchArray nor an ObjectArray"))?;
                if let Serializer::Unknown(name) = &serializer {
                    return Err(format!(
                        "its BatchArray serializer {name:?} is not one this reader knows"
                    ));
                }
                let starts = batch_starts(&array, &serializer)?;
                Ok(Parts::Batches {
                    array,
                    serializer,
                    starts: Arc::new(starts),
                })
            }
            Kind::Computed {
                expression, deps, ..
            } => computed_parts(spec, expression, deps, earlier, physical_rows),
            Kind::Unknown(why) => Err(why.clone()),
        }
    })();
    match result {
        Ok(parts) => Column {
            spec: spec.clone(),
            keys,
            parts,
            problem: None,
        },
        Err(why) => Column {
            spec: spec.clone(),
            keys,
            parts: Parts::Missing,
            problem: Some(why),
        },
    }
}

/// The words of a dictionary BatchArray, in code order.
fn dictionary_words(dict: &Array) -> Result<Vec<String>, String> {
    if dict.data_len() > MAX_DICTIONARY_BYTES {
        return Err(format!(
            "a dictionary of {} decoded bytes (at most {MAX_DICTIONARY_BYTES} are read)",
            dict.data_len()
        ));
    }
    let mut words = Vec::new();
    for c in 0..dict.nchunks() {
        for v in batches::msgpack_batch(dict, c).map_err(|p| p.to_string())? {
            match v {
                rmpv::Value::String(s) => {
                    words.push(s.into_str().ok_or("a dictionary word that is not UTF-8")?)
                }
                other => return Err(format!("a dictionary item that is not a string: {other}")),
            }
        }
    }
    Ok(words)
}

/// First row of each batch of a BatchArray (and the count at the end),
/// from its `_batch_array_metadata.batch_lengths`, or counted by decoding
/// each batch when absent.
fn batch_starts(array: &Array, serializer: &Serializer) -> Result<Vec<u64>, String> {
    let lengths: Option<Vec<u64>> = array
        .frame()
        .vlmeta
        .iter()
        .find(|(k, _)| k == "_batch_array_metadata")
        .and_then(|(_, v)| v.get("batch_lengths")?.as_array().cloned())
        .and_then(|l| l.iter().map(Json::as_u64).collect());
    let lengths = match lengths {
        Some(l) if l.len() as u64 == array.nchunks() => l,
        _ => (0..array.nchunks())
            .map(|c| {
                Ok(match serializer {
                    Serializer::Arrow => batches::arrow_batch(array, c)
                        .map_err(|p| p.to_string())?
                        .len() as u64,
                    _ => batches::msgpack_batch(array, c)
                        .map_err(|p| p.to_string())?
                        .len() as u64,
                })
            })
            .collect::<Result<Vec<u64>, String>>()?,
    };
    Ok(piece_starts(&lengths))
}

/// The program of a computed column over the stored columns it names.
fn computed_parts(
    spec: &ColumnSpec,
    expression: &str,
    deps: &[String],
    earlier: &[Column],
    physical_rows: u64,
) -> Result<Parts, String> {
    let mut operands = Vec::new();
    let mut indexes = Vec::new();
    for (i, dep) in deps.iter().enumerate() {
        let at = earlier
            .iter()
            .position(|c| c.name() == dep)
            .ok_or_else(|| format!("it reads column {dep:?}, which the table does not have"))?;
        let Parts::Fixed { dtype, .. } = &earlier[at].parts else {
            return Err(format!(
                "it reads column {dep:?}, which is not a stored fixed-width column"
            ));
        };
        if !matches!(earlier[at].spec.kind, Kind::Number { .. }) {
            return Err(format!(
                "it reads column {dep:?}, which is not a number column"
            ));
        }
        operands.push((
            format!("o{i}"),
            OperandInfo {
                dtype_str: dtype.clone(),
                shape: vec![physical_rows],
            },
        ));
        indexes.push(at);
    }
    let program = Program::compile(expression, &operands).map_err(|e| e.to_string())?;
    if let Ok(declared) = &spec.arrow {
        let got = schema::number_type(&numpy_kind(program.dtype().numpy_str()));
        if got.as_ref() != Some(declared) {
            return Err(format!(
                "the expression {expression:?} gives {} where the schema says {:?}",
                program.dtype().numpy_str(),
                spec.entry.get("dtype")
            ));
        }
    }
    Ok(Parts::Computed {
        program: Arc::new(program),
        deps: indexes,
    })
}

/// The schema kind name of a numpy dtype string (`<f8` → `float64`).
pub fn numpy_kind(dtype: &str) -> String {
    let code = dtype.trim_start_matches(['<', '>', '=', '|']);
    match code {
        "b1" => "bool".into(),
        "i1" => "int8".into(),
        "i2" => "int16".into(),
        "i4" => "int32".into(),
        "i8" => "int64".into(),
        "u1" => "uint8".into(),
        "u2" => "uint16".into(),
        "u4" => "uint32".into(),
        "u8" => "uint64".into(),
        "f4" => "float32".into(),
        "f8" => "float64".into(),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_paths_split_at_unescaped_dots() {
        assert_eq!(column_path("trip.begin.lon"), "trip/begin/lon");
        assert_eq!(column_path("a\\.b"), "a%2Eb");
        assert_eq!(column_path("50%/x"), "50%25%2Fx");
        assert_eq!(column_path("plain"), "plain");
    }
}
