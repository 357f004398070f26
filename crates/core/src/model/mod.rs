//! Models: one loaded version ([`LoadedModel`]) and the table of every
//! model's versions and states ([`ModelTable`]).

mod loaded;
mod metadata;
mod table;
pub(crate) mod warmup;

pub(crate) use loaded::LoadSettings;
pub use loaded::LoadedModel;
pub use metadata::{ModelMetadata, TensorMetadata};
pub(crate) use table::{ModelEntry, ModelTable, VersionSlot};
pub use table::{ModelState, VersionStatus};
