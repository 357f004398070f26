//! Protobuf messages <-> the core's protocol-neutral types.

pub(crate) mod contents;
pub(crate) mod parameters;
pub(crate) mod request;
pub(crate) mod response;

#[cfg(test)]
mod tests;
