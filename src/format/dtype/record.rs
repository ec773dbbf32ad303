//! Structured dtypes and subarrays from their Python literals: a list of
//! `(name, dtype[, shape])` fields (the name may be a `(title, name)`
//! pair), a dict of `names`, `formats`, `offsets`, `titles`, `itemsize` and
//! `aligned`, and a `(dtype, shape)` subarray. Fields of a list follow each
//! other; a dict places them. Every field's dtype is read the same way, so
//! records nest.

use std::collections::HashSet;

use super::literal::{self, Literal, Located};
use super::model::{DtypeError, Field, NumpyDtype, Record, RecordForm, Subarray, MAX_ITEMSIZE};
use super::scalar;

/// Read `text`, a Python literal, as a dtype.
pub(super) fn parse(text: &str) -> Result<NumpyDtype, DtypeError> {
    dtype_of(&literal::parse(text)?)
}

/// The dtype a literal spells: a string is a plain dtype, a list or dict a
/// record, a pair a subarray.
fn dtype_of(lit: &Located) -> Result<NumpyDtype, DtypeError> {
    match &lit.value {
        Literal::Str(text) => scalar::parse(text, lit.at + 1).map(NumpyDtype::Scalar),
        Literal::List(fields) => list_record(fields),
        Literal::Dict(entries) => dict_record(lit.at, entries),
        Literal::Tuple(pair) => match pair.as_slice() {
            [base, shape] => subarray(dtype_of(base)?, shape),
            _ => Err(DtypeError::new(lit.at, "a (dtype, shape) pair")),
        },
        _ => Err(DtypeError::new(lit.at, "a dtype")),
    }
}

/// The string a literal holds, if it is one.
fn string(lit: &Located) -> Option<&str> {
    match &lit.value {
        Literal::Str(s) => Some(s),
        _ => None,
    }
}

/// `base` repeated in `shape` (an integer or a tuple of them); `base`
/// itself for an empty shape, as NumPy has it.
fn subarray(base: NumpyDtype, shape: &Located) -> Result<NumpyDtype, DtypeError> {
    let bad = || DtypeError::new(shape.at, "a shape: an integer or a tuple of them");
    let dims = match &shape.value {
        Literal::Int(n) => vec![*n],
        Literal::Tuple(dims) => dims
            .iter()
            .map(|d| match d.value {
                Literal::Int(n) => Ok(n),
                _ => Err(bad()),
            })
            .collect::<Result<_, _>>()?,
        _ => return Err(bad()),
    };
    if dims.is_empty() {
        return Ok(base);
    }
    dims.iter()
        .try_fold(base.itemsize(), |n, &d| n.checked_mul(d))
        .filter(|&n| n <= MAX_ITEMSIZE)
        .ok_or(DtypeError::new(shape.at, "a subarray below 2^31 bytes"))?;
    Ok(NumpyDtype::Subarray(Subarray {
        base: Box::new(base),
        shape: dims,
    }))
}

/// Names and titles seen in one record (NumPy refuses a repeated one), or
/// the keys of one dict.
struct Names(HashSet<String>);

impl Names {
    /// Note `name`, found at `at`; an error if it was seen before.
    fn add(&mut self, name: &str, at: usize) -> Result<(), DtypeError> {
        match self.0.insert(name.to_owned()) {
            true => Ok(()),
            false => Err(DtypeError::new(at, "a name, title or key not used before")),
        }
    }
}

/// `[(name, dtype), (name, dtype, shape), ((title, name), dtype), ...]`.
fn list_record(items: &[Located]) -> Result<NumpyDtype, DtypeError> {
    let mut names = Names(HashSet::new());
    let mut fields = Vec::with_capacity(items.len());
    let mut offset = 0u64;
    for item in items {
        let bad = |what| DtypeError::new(item.at, what);
        let Literal::Tuple(parts) = &item.value else {
            return Err(bad("a (name, dtype) field"));
        };
        let (label, ty, shape) = match parts.as_slice() {
            [label, ty] => (label, ty, None),
            [label, ty, shape] => (label, ty, Some(shape)),
            _ => return Err(bad("a (name, dtype) or (name, dtype, shape) field")),
        };
        let (name, title) = match &label.value {
            Literal::Str(name) => (name.clone(), None),
            Literal::Tuple(pair) => match pair.as_slice() {
                [title, name] => match (string(title), string(name)) {
                    (Some(t), Some(n)) => (n.to_owned(), Some(t.to_owned())),
                    _ => return Err(bad("a (title, name) pair of strings")),
                },
                _ => return Err(bad("a (title, name) pair")),
            },
            _ => return Err(bad("a field name")),
        };
        names.add(&name, label.at)?;
        if let Some(title) = &title {
            names.add(title, label.at)?;
        }
        let mut dtype = dtype_of(ty)?;
        if let Some(shape) = shape {
            dtype = subarray(dtype, shape)?;
        }
        let end = offset
            .checked_add(dtype.itemsize())
            .filter(|&end| end <= MAX_ITEMSIZE)
            .ok_or(bad("a record below 2^31 bytes"))?;
        fields.push(Field {
            name,
            title,
            offset,
            dtype,
            spelled: string(ty).map(str::to_owned),
        });
        offset = end;
    }
    Ok(NumpyDtype::Record(Record {
        fields,
        itemsize: offset,
        form: RecordForm::List,
    }))
}

/// What a dict-form record says, each list one entry per field.
#[derive(Default)]
struct DictForm<'a> {
    names: Option<&'a [Located]>,
    formats: Option<&'a [Located]>,
    offsets: Option<&'a [Located]>,
    titles: Option<&'a [Located]>,
    itemsize: Option<u64>,
    aligned: bool,
}

impl<'a> DictForm<'a> {
    fn read(entries: &'a [(Located, Located)]) -> Result<DictForm<'a>, DtypeError> {
        let mut form = DictForm::default();
        let mut seen = Names(HashSet::new());
        for (key, value) in entries {
            let name = string(key).ok_or(DtypeError::new(key.at, "a string key"))?;
            seen.add(name, key.at)?;
            let list = || match &value.value {
                Literal::List(items) => Ok(items.as_slice()),
                _ => Err(DtypeError::new(value.at, "a list")),
            };
            match (name, &value.value) {
                ("names", _) => form.names = Some(list()?),
                ("formats", _) => form.formats = Some(list()?),
                ("offsets", _) => form.offsets = Some(list()?),
                ("titles", _) => form.titles = Some(list()?),
                ("itemsize", Literal::Int(n)) => form.itemsize = Some(*n),
                ("aligned", Literal::Bool(b)) => form.aligned = *b,
                _ => return Err(DtypeError::new(
                    key.at,
                    "names, formats, offsets, titles, itemsize or aligned with a value of its type",
                )),
            }
        }
        Ok(form)
    }
}

/// `{'names': [...], 'formats': [...], 'offsets': [...], 'itemsize': n}`
/// (also `titles`, `aligned`): fields where the offsets put them, or one
/// after the other without offsets.
fn dict_record(at: usize, entries: &[(Located, Located)]) -> Result<NumpyDtype, DtypeError> {
    let form = DictForm::read(entries)?;
    let (Some(names), Some(formats)) = (form.names, form.formats) else {
        return Err(DtypeError::new(at, "names and formats"));
    };
    let n = names.len();
    let same = |list: Option<&[Located]>| list.is_none_or(|l| l.len() == n);
    if formats.len() != n || !same(form.offsets) || !same(form.titles) {
        return Err(DtypeError::new(
            at,
            "as many formats, offsets and titles as names",
        ));
    }
    if form.aligned && form.offsets.is_none() {
        return Err(DtypeError::new(
            at,
            "offsets (alignment is not worked out here)",
        ));
    }
    let mut seen = Names(HashSet::new());
    let mut fields = Vec::with_capacity(n);
    let mut next = 0u64;
    let mut end = 0u64;
    for (i, (name, ty)) in names.iter().zip(formats).enumerate() {
        let field_name = string(name).ok_or(DtypeError::new(name.at, "a string name"))?;
        seen.add(field_name, name.at)?;
        let title = match form.titles.map(|t| &t[i]) {
            None => None,
            Some(Located {
                value: Literal::None,
                ..
            }) => None,
            Some(t) => {
                let title = string(t).ok_or(DtypeError::new(t.at, "a string title or None"))?;
                seen.add(title, t.at)?;
                Some(title.to_owned())
            }
        };
        let offset = match form.offsets.map(|o| &o[i]) {
            None => next,
            Some(Located {
                value: Literal::Int(o),
                ..
            }) => *o,
            Some(o) => return Err(DtypeError::new(o.at, "an integer offset")),
        };
        let dtype = dtype_of(ty)?;
        next = offset
            .checked_add(dtype.itemsize())
            .filter(|&e| e <= MAX_ITEMSIZE)
            .ok_or(DtypeError::new(ty.at, "a field ending below 2^31 bytes"))?;
        end = end.max(next);
        fields.push(Field {
            name: field_name.to_owned(),
            title,
            offset,
            dtype,
            spelled: string(ty).map(str::to_owned),
        });
    }
    let itemsize = form.itemsize.unwrap_or(end);
    if itemsize < end || itemsize > MAX_ITEMSIZE {
        return Err(DtypeError::new(at, "an itemsize that holds every field"));
    }
    Ok(NumpyDtype::Record(Record {
        fields,
        itemsize,
        form: RecordForm::Dict,
    }))
}
