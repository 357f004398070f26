//! Protocol-neutral types shared by every oxiserve crate: tensor element types,
//! tensors, inference requests and responses, parameters and errors. No async,
//! no I/O.

mod data_type;
mod error;
mod parameters;
mod request;
mod response;
mod shape;
mod tensor;

pub use data_type::DataType;
pub use error::{Error, ErrorKind, Result};
pub use parameters::{ParameterValue, Parameters};
pub use request::{InferRequest, RequestedOutput};
pub use response::InferResponse;
pub use shape::{element_count, format_shape};
pub use tensor::{Tensor, bytes_elements, encode_bytes_elements};
