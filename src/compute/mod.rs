//! Computed arrays: the values of a lazy expression python-blosc2 saved
//! (`blosc2.lazyexpr("a * 2 + sin(b) - c", operands).save("e.b2nd")`),
//! computed block by block in Rust.
//!
//! This layer is pure: it knows expressions, dtypes and shapes, not files.
//! A caller reads the recipe ([`recipe`]), opens the operands itself,
//! compiles the expression against their dtypes and shapes
//! ([`Program::compile`]), and for each region of the result it wants asks
//! which region of each operand that needs ([`Program::operand_region`]),
//! reads those bytes and hands them to [`Program::evaluate`].
//!
//! Values follow python-blosc2 4.14.1 as far as it is self-consistent; its
//! two engines (miniexpr when every operand has the result's shape, chunks
//! and blocks; numexpr otherwise) disagree in places, and the choices made
//! here are listed in [`promote`] (dtypes) and [`eval`] (values). Where
//! the result is float64 or complex128 but float32 parts take part,
//! python-blosc2 computes them its own way (`typed::Typing`): an integer
//! meeting float32 in arithmetic is float32 (`i4 + f4` is computed in
//! float32 and reported float64), float functions of float32 are taken in
//! float64 only when a float64 operand or a float literal takes part
//! (`a * 2 + sin(b)` with float64 `a`), and float functions of integers
//! in float64 (`i8 + cosh(i2)`).
//!
//! Bounds against hostile input: [`MAX_NODES`] syntax nodes, [`MAX_DEPTH`]
//! nesting, [`MAX_NDIM`] dimensions, [`MAX_ELEMENTS`] result elements,
//! [`MAX_REGION_ELEMENTS`] elements per `evaluate` call.

mod blocks;
mod broadcast;
pub mod dtype;
pub mod error;
mod eval;
mod funcs;
mod math;
mod parse;
mod program;
mod promote;
pub mod recipe;
mod typed;
mod values;

pub use blocks::ComputedBlocks;
pub use broadcast::{MAX_ELEMENTS, MAX_NDIM};
pub use dtype::{ByteOrder, DType};
pub use error::ComputeError;
pub use parse::{MAX_DEPTH, MAX_NODES};
pub use program::{OperandInfo, Program, MAX_REGION_ELEMENTS};
pub use recipe::{OperandRef, Recipe, RecipeError};
