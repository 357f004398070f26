//! Model repositories on disk: finding model folders, reading their
//! configurations and choosing the versions to serve, as Triton does; with
//! `--model-namespacing` each repository is a namespace ([`ModelId`]).

mod ensembles;
mod fingerprint;
mod load_request;
mod model_dir;
mod model_id;
mod options;
mod poll;
mod scan;

pub use fingerprint::{Fingerprint, ModelFiles};
pub use load_request::{FILE_PREFIX, LoadRequest};
pub(crate) use load_request::{OverrideFolder, check_model_name};
pub use model_dir::{
    FolderPoll, ModelDir, ModelSpec, NOT_UNIQUE_REASON, ScannedModel, VersionSpec, read_model,
};
pub use model_id::{ModelId, Resolved, resolve};
pub use options::{ModelOverride, ScanOptions};
pub use poll::{PollChanges, PollState, Snapshot, snapshot};
pub use scan::{RepositoryScan, scan};
