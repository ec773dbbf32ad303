//! The one place blosc2fs calls OpenZL's C library (through
//! `openzl-sys-rs`), and so the one module of the codecs with `unsafe` in
//! it.
//!
//! No safe OpenZL decoder exists (no pure-Rust port, no safe wrapper crate),
//! so this module keeps the surface as small as decoding needs: a
//! decompression context that frees itself ([`DecompressionContext`]), the
//! size a frame header claims ([`decompressed_size`]), decoding one frame
//! into a caller's buffer ([`DecompressionContext::decompress_into`]), and
//! OpenZL's error reports turned into [`OpenZlError`]. Every pointer handed
//! to C comes from a live Rust slice with its true length, and every output
//! is bounded by the caller's buffer: OpenZL never learns a capacity larger
//! than the slice it writes into. OpenZL sizes its internal streams from
//! the frame's graph, not from the output's size (a few dozen bytes of
//! frame can ask for gigabytes), so each decode also runs under an
//! allocation budget the caller sets (`openzl-sys-rs`'s per-thread budget
//! on OpenZL's allocation layer).

use openzl_sys_rs as sys;
use std::ffi::{c_void, CStr};
use std::ptr::NonNull;

/// The OpenZL library's version (major, minor, patch), from its header.
pub const LIBRARY_VERSION: (u32, u32, u32) = (
    sys::ZL_LIBRARY_VERSION_MAJOR,
    sys::ZL_LIBRARY_VERSION_MINOR,
    sys::ZL_LIBRARY_VERSION_PATCH,
);

/// The oldest and newest frame format versions the library decodes.
pub const FORMAT_VERSIONS: (u32, u32) = (sys::ZL_MIN_FORMAT_VERSION, sys::ZL_MAX_FORMAT_VERSION);

/// What OpenZL reported, or what this wrapper refused before asking it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenZlError {
    /// OpenZL could not create a decompression context.
    #[error("OpenZL could not create a decompression context")]
    NoContext,
    /// Decoding needed more of OpenZL's own memory than the budget allows.
    #[error("OpenZL frame needs more than {limit} bytes of working memory")]
    OverBudget { limit: usize },
    /// OpenZL rejected the frame; `name` is its error code's name
    /// (`ZL_ErrorCode_toString`), `detail` its first context line, if any.
    #[error("OpenZL error {name}{}", detail_suffix(.detail))]
    Report { name: String, detail: String },
    /// The frame's single output is not serial bytes or fixed-width
    /// structs (numeric and string outputs are not what Blosc2's plugin
    /// writes, and numeric ones would need an aligned buffer).
    #[error("OpenZL frame has an output of type {0}, not serial bytes or structs")]
    OutputType(String),
}

fn detail_suffix(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}

/// What one frame decoded into: the kind of its single output and the
/// bytes written at the start of the caller's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    /// `None` for serial (untyped) bytes, `Some(width)` for structs.
    pub struct_width: Option<usize>,
    /// Bytes written, never more than the buffer's length.
    pub len: usize,
    /// Bytes OpenZL allocated while decoding, as its budget counts them
    /// (cumulatively: a free gives nothing back).
    pub allocated: usize,
}

/// Whether `report` is an error, and if so the typed error for it (with
/// the context's message when a context made the report).
fn check(
    report: sys::ZL_Report,
    dctx: Option<&DecompressionContext>,
) -> Result<usize, OpenZlError> {
    // SAFETY: a report is a C union whose every variant starts with the
    // error code (the field OpenZL's own `ZL_isError` reads), 0 on success;
    // the function that returned it initialised it whole.
    let code = unsafe { report._code };
    if code == sys::ZL_ErrorCode_ZL_ErrorCode_no_error {
        // SAFETY: a success holds the value variant (the code, then the value).
        return Ok(unsafe { report._value._value });
    }
    // SAFETY: `ZL_ErrorCode_toString` returns a pointer to a static
    // NUL-terminated string for any code (an "unknown" one for codes it
    // does not know), or null, which is checked.
    let name = unsafe { c_text(sys::ZL_ErrorCode_toString(code)) };
    let detail = match dctx {
        // SAFETY: the context is alive (borrowed), and the report came from
        // its last call. The string lives inside the context until its next
        // call; it is copied out here, before any other call.
        Some(ctx) => unsafe {
            c_text(sys::ZL_DCtx_getErrorContextString(ctx.raw.as_ptr(), report))
        },
        None => String::new(),
    };
    Err(OpenZlError::Report {
        name: if name.is_empty() {
            format!("code {code}")
        } else {
            name
        },
        detail: first_line(&detail),
    })
}

/// Copy a C string OpenZL returned (null gives "").
///
/// # Safety
/// `ptr` is null or points at a NUL-terminated string that stays valid
/// for the duration of the call.
unsafe fn c_text(ptr: *const std::os::raw::c_char) -> String {
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: non-null, NUL-terminated and alive, as the caller promises.
    unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

/// The first non-empty line of OpenZL's (multi-line, sometimes long)
/// context message, capped at 200 characters for a log line.
fn first_line(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    line.unwrap_or("").chars().take(200).collect()
}

/// The decompressed size a frame's header claims for its single output,
/// read from the header alone (nothing is decoded or allocated).
pub fn decompressed_size(frame: &[u8]) -> Result<u64, OpenZlError> {
    // SAFETY: the pointer and length are those of a live slice, which
    // OpenZL only reads; OpenZL checks the length before every read.
    let report = unsafe { sys::ZL_getDecompressedSize(frame.as_ptr().cast(), frame.len()) };
    check(report, None).map(|n| n as u64)
}

/// An OpenZL decompression context (`ZL_DCtx`), freed on drop. Not shared
/// between threads: keep one per thread.
#[derive(Debug)]
pub struct DecompressionContext {
    raw: NonNull<sys::ZL_DCtx>,
}

impl DecompressionContext {
    /// A new context with OpenZL's default parameters (checksums the
    /// frame carries are verified).
    pub fn new() -> Result<Self, OpenZlError> {
        // SAFETY: no arguments; the result is null or a context we own.
        let raw = unsafe { sys::ZL_DCtx_create() };
        NonNull::new(raw)
            .map(|raw| DecompressionContext { raw })
            .ok_or(OpenZlError::NoContext)
    }

    /// Decode the one frame in `frame` into the start of `dst`, never
    /// writing past `dst.len()` (a frame that needs more is an error from
    /// OpenZL), with at most `budget` bytes of OpenZL's own allocations
    /// (charged cumulatively). Only serial and struct outputs are
    /// accepted, checked from the header before decoding.
    pub fn decompress_into(
        &mut self,
        frame: &[u8],
        dst: &mut [u8],
        budget: usize,
    ) -> Result<Decoded, OpenZlError> {
        let (result, spent) = sys::with_alloc_budget(budget, || self.decode(frame, dst));
        match result {
            Ok(decoded) => Ok(Decoded {
                allocated: spent.used,
                ..decoded
            }),
            Err(_) if spent.exceeded => Err(OpenZlError::OverBudget { limit: budget }),
            Err(e) => Err(e),
        }
    }

    fn decode(&mut self, frame: &[u8], dst: &mut [u8]) -> Result<Decoded, OpenZlError> {
        let mut kind: sys::ZL_Type = 0;
        // SAFETY: `kind` is a live local OpenZL writes one value into;
        // the frame pointer and length are a live slice's, only read.
        let report =
            unsafe { sys::ZL_getOutputType(&mut kind, frame.as_ptr().cast(), frame.len()) };
        check(report, None)?;
        if kind != sys::ZL_Type_ZL_Type_serial && kind != sys::ZL_Type_ZL_Type_struct {
            return Err(OpenZlError::OutputType(type_name(kind)));
        }
        let mut info = sys::ZL_OutputInfo {
            type_: 0,
            fixedWidth: 0,
            decompressedByteSize: 0,
            numElts: 0,
        };
        // SAFETY: the context is ours and alive, and `&mut self` makes this
        // its only user. `info` is a live local. `dst` is a live, exclusively
        // borrowed slice and OpenZL is told its exact length, which bounds
        // every write (serial and struct outputs need no alignment: numeric
        // ones, which would, were refused above). The frame is a live slice
        // of the given length, only read.
        let report = unsafe {
            sys::ZL_DCtx_decompressTyped(
                self.raw.as_ptr(),
                &mut info,
                dst.as_mut_ptr().cast::<c_void>(),
                dst.len(),
                frame.as_ptr().cast::<c_void>(),
                frame.len(),
            )
        };
        let written = check(report, Some(self))?;
        // (`written` is the output's byte size, which OpenZL never lets
        // exceed the capacity it was given.)
        let len = written.min(dst.len());
        let struct_width = match info.type_ {
            sys::ZL_Type_ZL_Type_serial => None,
            sys::ZL_Type_ZL_Type_struct => Some(info.fixedWidth as usize),
            other => return Err(OpenZlError::OutputType(type_name(other))),
        };
        Ok(Decoded {
            struct_width,
            len,
            allocated: 0,
        })
    }
}

impl Drop for DecompressionContext {
    fn drop(&mut self) {
        // SAFETY: the pointer came from `ZL_DCtx_create`, is owned by this
        // value alone and is freed exactly once, here.
        unsafe { sys::ZL_DCtx_free(self.raw.as_ptr()) }
    }
}

fn type_name(kind: sys::ZL_Type) -> String {
    match kind {
        sys::ZL_Type_ZL_Type_serial => "serial".into(),
        sys::ZL_Type_ZL_Type_struct => "struct".into(),
        sys::ZL_Type_ZL_Type_numeric => "numeric".into(),
        sys::ZL_Type_ZL_Type_string => "string".into(),
        other => format!("{other}"),
    }
}
