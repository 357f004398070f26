//! The model requests of the frontends, handed to the [`ModelManager`]
//! unchanged: the facade adds nothing to them.

use std::{sync::Arc, time::Duration};

use oxiserve_proto::ModelConfig;
use oxiserve_types::Result;

use super::Server;
use crate::{
    manager::{IndexEntry, ModelManager, Poller, StartUpLoad},
    model::{LoadedModel, ModelMetadata},
    repository::{LoadRequest, PollChanges, PollState},
    stats::ModelStatistics,
};

impl Server {
    fn models(&self) -> &ModelManager {
        &self.inner.manager
    }

    /// See [`ModelManager::load_startup_models`].
    pub fn load_startup_models(&self) -> StartUpLoad {
        self.models().load_startup_models()
    }

    /// See [`ModelManager::load_model`].
    pub fn load_model(&self, name: &str) -> Result<()> {
        self.models().load_model(name)
    }

    /// See [`ModelManager::load_model_with`].
    pub fn load_model_with(&self, name: &str, request: &LoadRequest) -> Result<()> {
        self.models().load_model_with(name, request)
    }

    /// See [`ModelManager::unload_model`].
    pub fn unload_model(&self, name: &str) -> Result<()> {
        self.models().unload_model(name)
    }

    /// See [`ModelManager::unload_model_and_dependents`].
    pub fn unload_model_and_dependents(&self, name: &str) -> Result<()> {
        self.models().unload_model_and_dependents(name)
    }

    /// See [`ModelManager::repository_index`].
    pub fn repository_index(&self, ready_only: bool) -> Vec<IndexEntry> {
        self.models().repository_index(ready_only)
    }

    /// See [`ModelManager::start_polling`].
    pub fn start_polling(&self, interval: Duration) -> std::io::Result<Poller> {
        self.models().start_polling(interval)
    }

    /// See [`ModelManager::poll_repository`].
    pub fn poll_repository(&self, state: &mut PollState) -> PollChanges {
        self.models().poll_repository(state)
    }

    /// See [`ModelManager::model`].
    pub fn model(&self, name: &str, version: Option<i64>) -> Result<Arc<LoadedModel>> {
        self.models().model(name, version)
    }

    /// See [`ModelManager::model_ready`].
    pub fn model_ready(&self, name: &str, version: Option<i64>) -> bool {
        self.models().model_ready(name, version)
    }

    /// See [`ModelManager::model_metadata`].
    pub fn model_metadata(&self, name: &str, version: Option<i64>) -> Result<ModelMetadata> {
        self.models().model_metadata(name, version)
    }

    /// See [`ModelManager::model_config`].
    pub fn model_config(&self, name: &str, version: Option<i64>) -> Result<Arc<ModelConfig>> {
        self.models().model_config(name, version)
    }

    /// See [`ModelManager::loaded_models`].
    pub fn loaded_models(&self) -> Vec<Arc<LoadedModel>> {
        self.models().loaded_models()
    }

    /// See [`ModelManager::statistics`].
    pub fn statistics(
        &self,
        name: Option<&str>,
        version: Option<i64>,
    ) -> Result<Vec<ModelStatistics>> {
        self.models().statistics(name, version)
    }
}
