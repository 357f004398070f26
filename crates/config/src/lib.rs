//! Triton model configuration: `config.pbtxt` in protobuf text format parsed
//! into `ModelConfig`, completed and normalized with Triton's defaults,
//! validated with errors a person can act on, and rendered in the JSON form
//! Triton's `/config` endpoint returns.

mod autocomplete;
mod batch_padding;
mod batch_plan;
pub mod ensemble;
mod error;
mod instance_update;
mod json;
mod load;
mod normalize;
pub mod platform;
mod suggest;
pub mod text_format;
mod validate;
mod version_policy;

pub use autocomplete::{VersionContents, complete_backend_fields};
pub use batch_padding::{BatchPadding, PaddingError};
pub use batch_plan::BatchPlan;
pub use error::{ConfigError, join as join_errors};
pub use instance_update::only_instance_groups_differ;
pub use json::{from_json, to_json};
pub use load::{ModelFolder, ParsedConfig, complete_config, complete_config_with, parse_config};
pub use normalize::{SEQUENCE_IDLE_DEFAULT_MICROSECONDS, normalize};
pub use oxiserve_proto::ModelConfig;
pub use suggest::{closest, did_you_mean};
pub use validate::validate;
pub use version_policy::{parse_version_folder, select_versions};
