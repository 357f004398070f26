//! One loaded version of a TensorFlow model: its SavedModel folder or
//! GraphDef file, its parameters, and the sessions its instances share
//! (`MAX_SESSION_SHARE_COUNT` instances each; one by default).

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use oxiserve_backend::{InstanceContext, InstanceKind, Model, ModelContext, ModelInstance};
use oxiserve_config::BatchPlan;
use oxiserve_proto::{ModelConfig, inference::model_instance_group::Kind};
use oxiserve_types::{Error, ErrorKind, Result};
use parking_lot::Mutex;

use crate::{
    capi::Api,
    instance::{Plan, TfInstance},
    meta_graph::MetaGraphDef,
    parameters::ModelParameters,
    session::Session,
    signature::Signature,
};

/// Where a model version's graph comes from.
#[derive(Debug, Clone)]
pub(crate) struct ModelSource {
    pub model: String,
    pub path: PathBuf,
    pub graph_def: bool,
    pub parameters: ModelParameters,
    /// `TF_INIT_OPS_FILE`'s operations, run once per session.
    pub init_ops: Vec<String>,
}

impl ModelSource {
    /// The model file of `config` in `version_path`, and its parameters.
    pub(crate) fn of(
        config: &ModelConfig,
        version_path: &Path,
        model_path: &Path,
        allow_soft_placement: bool,
    ) -> Result<Self> {
        let graph_def = match config.platform.as_str() {
            "tensorflow_graphdef" => true,
            "tensorflow_savedmodel" => false,
            other => {
                return Err(Error::invalid_arg(format!(
                    "platform {other} not supported for TensorFlow model '{}'",
                    config.name
                )));
            }
        };
        let file = match config.default_model_filename.as_str() {
            "" if graph_def => "model.graphdef",
            "" => "model.savedmodel",
            name => name,
        };
        let parameters = ModelParameters::of(config, allow_soft_placement)?;
        let init_ops = parameters.init_ops(version_path, model_path)?;
        Ok(Self {
            model: config.name.clone(),
            path: version_path.join(file),
            graph_def,
            parameters,
            init_ops,
        })
    }

    /// Opens a session on the model and reads its signature.
    pub(crate) fn open(&self, api: &'static Api) -> Result<(Session, Signature)> {
        let model = &self.model;
        let present = if self.graph_def {
            self.path.is_file()
        } else {
            self.path.is_dir()
        };
        if !present {
            return Err(Error::unavailable(format!(
                "unable to find '{}' for model instance '{model}'",
                self.path.display()
            )));
        }
        let failed = |e: String| {
            Error::invalid_arg(format!(
                "unable to load model '{model}': {}: {e}",
                self.path.display()
            ))
        };
        let config = &self.parameters.session_config;
        let (session, signature) = if self.graph_def {
            let session = Session::graph_def(api, config, &self.path).map_err(failed)?;
            let signature = Signature::of_graph(&session);
            (session, signature)
        } else {
            let (session, meta_graph) =
                Session::saved_model(api, config, &self.path, &self.parameters.graph_tag)
                    .map_err(failed)?;
            let meta_graph = MetaGraphDef::decode_from(&meta_graph).map_err(failed)?;
            let wanted = self.parameters.signature_def.as_deref();
            let signature = Signature::of_saved_model(&meta_graph, wanted, model)?;
            (session, signature)
        };
        self.initialize(&session)?;
        Ok((session, signature))
    }

    /// Runs the `TF_INIT_OPS_FILE` operations.
    fn initialize(&self, session: &Session) -> Result<()> {
        for name in &self.init_ops {
            let op = session.operation(name).ok_or_else(|| {
                Error::invalid_arg(format!(
                    "unable to load model '{}': init operation '{name}' is not in the graph",
                    self.model
                ))
            })?;
            session.run(&[], &[], &[op]).map_err(|e| {
                Error::invalid_arg(format!(
                    "unable to load model '{}': init operation '{name}' failed: {e}",
                    self.model
                ))
            })?;
        }
        Ok(())
    }
}

/// A session and how many instances use it.
struct Shared {
    session: Arc<Session>,
    users: usize,
}

/// A TensorFlow model whose configuration matched its signature.
pub(crate) struct TfModel {
    api: &'static Api,
    source: ModelSource,
    plan: Arc<Plan>,
    sessions: Mutex<Vec<Shared>>,
}

impl TfModel {
    /// Opens the model and checks its configuration against it.
    pub(crate) fn load(
        api: &'static Api,
        model: &ModelContext,
        allow_soft_placement: bool,
    ) -> Result<Self> {
        let config = &model.config;
        if !config.batch_input.is_empty() || !config.batch_output.is_empty() {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "model '{}': batch_input and batch_output (ragged batching) are not supported \
                     by oxiserve's tensorflow backend yet",
                    model.name
                ),
            ));
        }
        if let Some(group) = config
            .instance_group
            .iter()
            .find(|g| g.kind == Kind::Gpu as i32)
        {
            return Err(Error::invalid_arg(format!(
                "model '{}': instance group '{}' is KIND_GPU, but oxiserve's tensorflow backend \
                 runs the CPU build of TensorFlow (tensorflow-cpu); use KIND_CPU",
                model.name, group.name
            )));
        }
        let source = ModelSource::of(
            config,
            &model.version_path,
            &model.model_path,
            allow_soft_placement,
        )?;
        let (session, signature) = source.open(api)?;
        signature.check(config)?;
        let plan = Plan {
            model: model.name.clone(),
            batching: BatchPlan::of(config).is_batching(),
            inputs: signature
                .inputs
                .iter()
                .map(|(name, info)| (name.clone(), info.tensor.clone()))
                .collect::<HashMap<_, _>>(),
            outputs: config
                .output
                .iter()
                .filter_map(|o| {
                    let info = signature.outputs.get(&o.name)?;
                    Some((o.name.clone(), info.tensor.clone()))
                })
                .collect(),
        };
        Ok(Self {
            api,
            source,
            plan: Arc::new(plan),
            sessions: Mutex::new(vec![Shared {
                session: Arc::new(session),
                users: 0,
            }]),
        })
    }

    /// A session with room for one more instance, opened when none has.
    fn session(&self) -> Result<Arc<Session>> {
        let limit = self.source.parameters.max_session_share_count;
        let mut sessions = self.sessions.lock();
        if let Some(shared) = sessions.iter_mut().find(|s| s.users < limit) {
            shared.users += 1;
            return Ok(shared.session.clone());
        }
        let (session, _) = self.source.open(self.api)?;
        let session = Arc::new(session);
        sessions.push(Shared {
            session: session.clone(),
            users: 1,
        });
        Ok(session)
    }
}

impl Model for TfModel {
    fn create_instance(&self, instance: &InstanceContext) -> Result<Box<dyn ModelInstance>> {
        if instance.kind == InstanceKind::Gpu {
            return Err(Error::invalid_arg(format!(
                "model instance '{}': oxiserve's tensorflow backend runs on CPUs only",
                instance.name
            )));
        }
        let session = self.session()?;
        Ok(Box::new(TfInstance::new(
            self.api,
            session,
            self.plan.clone(),
        )?))
    }
}
