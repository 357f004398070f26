//! Model repositories on disk: finding model folders, reading their
//! configurations and choosing the versions to serve, as Triton does.

mod ensembles;
mod model_dir;
mod scan;

pub use model_dir::{ModelDir, ModelSpec, VersionSpec, read_model};
pub use scan::{RepositoryScan, ScanOptions, ScannedModel, scan};
