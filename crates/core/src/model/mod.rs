//! Models: one loaded version ([`LoadedModel`]), its metadata, and the
//! states a version goes through.

mod instances;
mod loaded;
mod metadata;
mod state;

pub(crate) use loaded::LoadSettings;
pub use loaded::LoadedModel;
pub use metadata::{ModelMetadata, TensorMetadata};
pub use state::{ModelState, VersionStatus};
