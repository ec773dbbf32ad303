//! A CTable as python-blosc2 4.x lays it out, read as its logical columns
//! (docs/tables-format.md): the schema ([`schema`]), the columns and the
//! storage parts each claims ([`model`]), a column's values over some rows
//! ([`read`], msgpack rows through [`build`]), the table as Arrow record
//! batches for the table renderers ([`source`]), what its folder and
//! column folders show ([`present`]), and its schema as text for
//! `blosc2fs info` ([`info`]).

mod build;
pub mod info;
pub mod model;
pub mod present;
pub mod read;
pub mod schema;
pub mod source;

pub use model::{Column, Parts, TableModel};
pub use source::TableBatches;
