//! The `pytorch` backend (`platform: "pytorch_libtorch"`): TorchScript
//! `model.pt` files, traced or scripted, run by libtorch through `tch`.
//!
//! Inputs reach forward() by Triton's naming rules (forward()'s argument
//! names, else `INPUT__<i>`, else the configuration's order); outputs come
//! from a tensor, a tuple or list of tensors, lists of strings (BYTES) or a
//! dict keyed by output name. One module per model version is shared by its
//! instances; each instance runs on its own thread with one intra-op thread
//! unless `INTRA_OP_THREAD_COUNT` says otherwise. Configuration errors name
//! what forward() takes, at load and in `oxiserve validate`.

mod dtype;
mod errors;
mod inputs;
mod instance;
mod model;
mod naming;
mod outputs;
mod params;
mod plan;
mod signature;

use std::sync::Arc;

use oxiserve_backend::{Backend, Model, ModelContext};
use oxiserve_types::Result;

use crate::model::TorchModel;

// The library's entry points (libtriton_pytorch.so); a unit-test binary has
// no host to call.
#[cfg(not(test))]
oxiserve_backend_library::export_backend!(PyTorchBackend);

/// The backend called `pytorch`.
#[derive(Debug, Default)]
pub struct PyTorchBackend;

impl Backend for PyTorchBackend {
    fn name(&self) -> &str {
        "pytorch"
    }

    fn load(&self, model: &ModelContext) -> Result<Arc<dyn Model>> {
        Ok(Arc::new(TorchModel::load(model)?))
    }

    fn check(&self, model: &ModelContext) -> Result<()> {
        TorchModel::load(model).map(drop)
    }
}
