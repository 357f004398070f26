//! The traits: Backend -> Model -> ModelInstance.

use std::{path::PathBuf, sync::Arc};

use oxiserve_proto::ModelConfig;
use oxiserve_types::Result;

use crate::host::ModelHost;
use crate::request::BackendRequest;
use crate::timing::ComputeTiming;

/// A kind of model (`backend: "identity"` in config.pbtxt). Shared by every
/// model it loads.
pub trait Backend: Send + Sync {
    /// The name `config.pbtxt` uses in `backend: "..."`.
    fn name(&self) -> &str;

    /// Loads one version of a model.
    fn load(&self, model: &ModelContext) -> Result<Arc<dyn Model>>;

    /// Completes a model's configuration before it is normalized and
    /// validated (Triton's auto-complete, on unless `--strict-model-config`
    /// or `--disable-auto-complete-config`). The default keeps it as it is.
    fn auto_complete(
        &self,
        _model: &AutoCompleteContext,
        config: ModelConfig,
    ) -> Result<ModelConfig> {
        Ok(config)
    }

    /// Checks a model version's files against its configuration without
    /// serving it (`oxiserve validate`). The default finds nothing wrong;
    /// problems then show when the model loads.
    fn check(&self, _model: &ModelContext) -> Result<()> {
        Ok(())
    }
}

/// The model whose configuration [`Backend::auto_complete`] completes.
#[derive(Debug, Clone)]
pub struct AutoCompleteContext {
    pub name: String,
    /// The model's folder in the repository (`<repo>/<name>`).
    pub model_path: PathBuf,
    /// The highest version folder, if the model has one.
    pub version_path: Option<PathBuf>,
}

/// What a backend knows about the model version it loads.
#[derive(Debug, Clone)]
pub struct ModelContext {
    pub name: String,
    pub version: i64,
    /// The complete, normalized configuration.
    pub config: Arc<ModelConfig>,
    /// The model's folder in the repository (`<repo>/<name>`).
    pub model_path: PathBuf,
    /// The version's folder (`<repo>/<name>/<version>`).
    pub version_path: PathBuf,
    /// The server, for models that call other models.
    pub host: Arc<dyn ModelHost>,
}

/// One loaded model version; creates its instances.
pub trait Model: Send + Sync {
    /// Creates an instance; called on the instance's own thread.
    fn create_instance(&self, instance: &InstanceContext) -> Result<Box<dyn ModelInstance>>;

    /// Whether its instances' `execute` is short and never blocks (no I/O,
    /// no sleeping, no waiting for another thread) while the instance is
    /// [ready inline](ModelInstance::ready_inline), so that the server may
    /// run it on the thread that admitted the request while an instance is
    /// idle, instead of handing the request to the instance's thread. The
    /// default is `false`: every batch runs on the instance's own thread.
    fn executes_inline(&self) -> bool {
        false
    }
}

/// Where an instance runs (`instance_group.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstanceKind {
    Cpu,
    Gpu,
    Model,
}

/// What an instance is told about itself.
#[derive(Debug, Clone)]
pub struct InstanceContext {
    /// Triton's instance name: `<group name>_<index>`, e.g. `identity_0_1`.
    pub name: String,
    pub kind: InstanceKind,
    /// The GPU for `KIND_GPU`, else 0.
    pub device_id: i32,
}

/// One instance of a model, created, warmed up and dropped on its own thread;
/// never used by two threads at the same time, so it may hold mutable state
/// (a session, a subprocess). Its batches run on that thread, or, where its
/// model [executes inline](Model::executes_inline), on the admitting thread.
pub trait ModelInstance: Send {
    /// Runs a batch. Every request must be answered through its sink, with a
    /// final flag last (dropping a sink answers with an error). The instance
    /// marks where its computation starts and ends on `timing`.
    fn execute(&mut self, requests: Vec<BackendRequest>, timing: &mut ComputeTiming);

    /// For a model that [executes inline](Model::executes_inline): whether
    /// the next `execute` would return without waiting, asked (holding the
    /// instance) just before an admitting thread executes on it. The
    /// default is `true`.
    fn ready_inline(&mut self) -> bool {
        true
    }
}
