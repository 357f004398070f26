//! One loaded version of a TorchScript model: its module, loaded once and
//! shared by the instances, and the plan checked against forward().

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Once},
};

use oxiserve_backend::{InstanceContext, InstanceKind, Model, ModelContext, ModelInstance};
use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, ErrorKind, Result};
use tch::CModule;

use crate::{errors, instance::TorchInstance, plan::Plan, signature::Signature};

pub(crate) struct TorchModel {
    module: Arc<CModule>,
    plan: Arc<Plan>,
}

impl TorchModel {
    /// Loads the module and checks the configuration against forward().
    pub(crate) fn load(model: &ModelContext) -> Result<Self> {
        let config = &model.config;
        let file = model_file(config, &model.version_path);
        let module = open(&file, &model.name)?;
        let plan = Plan::new(config, Signature::of(&module).as_ref())?;
        if let Some(threads) = plan.params.inter_op_threads {
            set_inter_op_threads(threads);
        }
        Ok(Self {
            module: Arc::new(module),
            plan: Arc::new(plan),
        })
    }
}

impl Model for TorchModel {
    fn create_instance(&self, instance: &InstanceContext) -> Result<Box<dyn ModelInstance>> {
        if instance.kind == InstanceKind::Gpu {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "model instance '{}': oxiserve's PyTorch backend runs on the CPU only (use KIND_CPU)",
                    instance.name
                ),
            ));
        }
        // Called on the instance's own thread: libtorch's intra-op thread
        // count is per thread once that thread has read it.
        tch::get_num_threads();
        tch::set_num_threads(self.plan.params.intra_op_threads as i32);
        Ok(Box::new(TorchInstance {
            module: self.module.clone(),
            plan: self.plan.clone(),
        }))
    }
}

/// The model's file: `default_model_filename` (or `model.pt`) in the
/// version folder.
pub(crate) fn model_file(config: &ModelConfig, version_path: &Path) -> PathBuf {
    let name = if config.default_model_filename.is_empty() {
        "model.pt"
    } else {
        &config.default_model_filename
    };
    version_path.join(name)
}

/// Loads a TorchScript module in evaluation mode.
pub(crate) fn open(file: &Path, model: &str) -> Result<CModule> {
    if !file.is_file() {
        return Err(Error::unavailable(format!(
            "unable to find '{}' for model '{model}'",
            file.display()
        )));
    }
    let mut module = CModule::load(file).map_err(|e| {
        Error::invalid_arg(format!(
            "model '{model}': {} is not a TorchScript model libtorch can load: {}",
            file.display(),
            errors::message(&e)
        ))
    })?;
    module.f_set_eval().map_err(|e| {
        Error::internal(format!("model '{model}': eval(): {}", errors::message(&e)))
    })?;
    Ok(module)
}

/// Sizes libtorch's process-wide inter-op pool; only the first model that
/// asks gets its way, as in Triton, and only before the pool has started.
fn set_inter_op_threads(threads: usize) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let set = std::panic::catch_unwind(|| tch::set_num_interop_threads(threads as i32));
        if set.is_err() {
            log::warn!("PyTorch backend: INTER_OP_THREAD_COUNT={threads} ignored, the inter-op pool had started");
        }
    });
}
