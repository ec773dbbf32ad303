//! What a NumPy dtype string says, as types: a plain item ([`Scalar`]: kind,
//! byte order, size, time unit), a record of named fields at offsets, or a
//! subarray; and why a string is not one ([`DtypeError`]). The parsers
//! (`scalar.rs`, `literal.rs`, `record.rs`) build these.

/// Deepest nesting of lists, tuples and dicts read (records in records).
pub const MAX_DEPTH: usize = 32;

/// Largest item size accepted, in bytes: NumPy's (a C `int`).
pub const MAX_ITEMSIZE: u64 = i32::MAX as u64;

/// How the bytes of one stored value are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// Least significant byte first (`<`; also `=`, `|` or none for a
    /// multi-byte number on a little-endian machine).
    Little,
    /// Most significant byte first (`>`).
    Big,
    /// The value has no byte order: one-byte numbers, booleans, bytes
    /// (`S`), voids (`V`) and objects, whatever prefix was written.
    NotApplicable,
}

/// What a plain (non-structured) item is: NumPy's `dtype.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// `b1` / `?`: one byte, 0 or not.
    Bool,
    /// `i1`, `i2`, `i4`, `i8`.
    Int,
    /// `u1`, `u2`, `u4`, `u8`.
    UInt,
    /// `f2`, `f4`, `f8`, `f16` (the last: x86's extended precision).
    Float,
    /// `c8`, `c16`, `c32`: two floats of half the size.
    Complex,
    /// `S<n>`: `n` bytes, NUL-padded.
    Bytes,
    /// `U<n>`: `n` UCS-4 code points (4 bytes each), NUL-padded.
    Unicode,
    /// `V<n>`: `n` raw bytes.
    Void,
    /// `M8[unit]`: a signed 64-bit count of the unit since 1970.
    Datetime,
    /// `m8[unit]`: a signed 64-bit count of the unit.
    Timedelta,
    /// `O`: a Python object reference (8 bytes).
    Object,
}

/// The base unit of a datetime or timedelta.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeBase {
    /// `Y`
    Year,
    /// `M`
    Month,
    /// `W`
    Week,
    /// `D`
    Day,
    /// `h`
    Hour,
    /// `m`
    Minute,
    /// `s`
    Second,
    /// `ms`
    Milli,
    /// `us` (also written `μs`)
    Micro,
    /// `ns`
    Nano,
    /// `ps`
    Pico,
    /// `fs`
    Femto,
    /// `as`
    Atto,
}

/// A datetime's unit: `count` times its `base` (`[ns]` is 1 ns, `[25s]`
/// is 25 s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeUnit {
    /// How many of the base make one unit (1 unless written).
    pub count: u32,
    /// The base unit.
    pub base: TimeBase,
}

/// One plain item: its kind, size and byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scalar {
    /// What the item is.
    pub kind: ItemKind,
    /// Bytes per item (`U<n>`: 4n). May be 0 only for `S0`, `U0`, `V0`.
    pub size: u64,
    /// The byte order; [`ByteOrder::NotApplicable`] exactly for the kinds
    /// and sizes that have none.
    pub order: ByteOrder,
    /// The unit of a datetime or timedelta, `None` when the string names
    /// none (NumPy's generic unit) and for every other kind.
    pub unit: Option<TimeUnit>,
}

/// How a structured dtype was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordForm {
    /// A list of fields, each right after the one before (what a `.npy`
    /// header's `descr` takes as it is).
    List,
    /// A dict of names, formats and offsets (fields may leave gaps, and the
    /// item may be longer than its fields).
    Dict,
}

/// One field of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Its name.
    pub name: String,
    /// Its title, when the field was given one.
    pub title: Option<String>,
    /// Where its bytes start inside the item.
    pub offset: u64,
    /// What it holds (a [`NumpyDtype::Subarray`] for a field with a shape).
    pub dtype: NumpyDtype,
    /// Its dtype as the string wrote it, when it wrote a string (`'S3'`,
    /// `'<f8'`, also for a field with a shape); `None` for a nested record
    /// or a subarray written as a tuple.
    pub spelled: Option<String>,
}

/// A structured item: named fields at offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The fields in the order written; names are distinct, and every
    /// field lies inside the item (`offset + size <= itemsize`).
    pub fields: Vec<Field>,
    /// Bytes per item.
    pub itemsize: u64,
    /// How it was written.
    pub form: RecordForm,
}

/// A fixed-shape block of one dtype as one item (`('<i4', (2, 3))`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subarray {
    /// The dtype of each element.
    pub base: Box<NumpyDtype>,
    /// The block's shape: at least one axis.
    pub shape: Vec<u64>,
}

/// What a NumPy dtype string says one item is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumpyDtype {
    /// A plain item (`<f8`, `|S5`, `<M8[ns]`).
    Scalar(Scalar),
    /// A structured item of named fields.
    Record(Record),
    /// A block of elements of another dtype.
    Subarray(Subarray),
}

/// Why a string is not a NumPy dtype this reader knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a NumPy dtype: {what} at byte {at}")]
pub struct DtypeError {
    /// Byte offset in the string where reading stopped.
    pub at: usize,
    /// What was expected or is wrong there.
    pub what: &'static str,
}

impl DtypeError {
    pub(super) fn new(at: usize, what: &'static str) -> DtypeError {
        DtypeError { at, what }
    }
}

impl NumpyDtype {
    /// Bytes per item (at most [`MAX_ITEMSIZE`]).
    pub fn itemsize(&self) -> u64 {
        match self {
            NumpyDtype::Scalar(s) => s.size,
            NumpyDtype::Record(r) => r.itemsize,
            NumpyDtype::Subarray(s) => s
                .shape
                .iter()
                .fold(s.base.itemsize(), |n, &d| n.saturating_mul(d)),
        }
    }

    /// The plain item, when this is one.
    pub fn as_scalar(&self) -> Option<&Scalar> {
        match self {
            NumpyDtype::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The record, when this is one.
    pub fn as_record(&self) -> Option<&Record> {
        match self {
            NumpyDtype::Record(r) => Some(r),
            _ => None,
        }
    }
}

impl Scalar {
    /// Whether this is a number or boolean (not bytes, text, time, object).
    pub fn is_numeric(&self) -> bool {
        matches!(
            self.kind,
            ItemKind::Bool | ItemKind::Int | ItemKind::UInt | ItemKind::Float | ItemKind::Complex
        )
    }

    /// Whether the stored bytes are most significant first.
    pub fn is_big_endian(&self) -> bool {
        self.order == ByteOrder::Big
    }
}
