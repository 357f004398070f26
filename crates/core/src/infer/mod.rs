//! One request's way through the core: validation, the response stream the
//! frontend reads, and the classification extension.

mod output_shaping;
mod reshape;
mod stream;
mod trace;
pub(crate) mod validate;

pub(crate) use output_shaping::{OutputInfo, OutputShaping};
pub(crate) use stream::{EventOut, StreamTarget, response_channel};
pub use stream::{ResponseStream, StreamEvent};
pub(crate) use trace::RequestTrace;
