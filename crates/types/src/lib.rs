//! Protocol-neutral types shared by every oxiserve crate: tensor element types
//! and errors. No async, no I/O.

mod data_type;
mod error;

pub use data_type::DataType;
pub use error::{Error, ErrorKind, Result};
