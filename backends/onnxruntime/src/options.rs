//! Session options from a model's configuration: the `parameters` and
//! `optimization` settings Triton's onnxruntime backend reads.

use std::collections::HashMap;

use ort::{
    environment::Environment,
    ep::{self, ArbitrarilyConfigurableExecutionProvider, ExecutionProviderDispatch},
    session::builder::{GraphOptimizationLevel, SessionBuilder},
};
use oxiserve_backend::InstanceKind;
use oxiserve_proto::{ModelConfig, inference::ModelParameter};
use oxiserve_types::{Error, Result};

/// How every session of one model is built.
#[derive(Debug, Clone)]
pub(crate) struct SessionOptions {
    model: String,
    level: GraphOptimizationLevel,
    parallel: bool,
    /// Threads within an operator; `None` when the global pool is used.
    intra_op_threads: Option<usize>,
    inter_op_threads: Option<usize>,
    use_global_pool: bool,
    mem_arena: Option<bool>,
    mem_pattern: Option<bool>,
    config_entries: Vec<(String, String)>,
    gpu_accelerators: Vec<Accelerator>,
    op_libraries: Vec<String>,
}

/// A GPU execution accelerator (`tensorrt` or `cuda`) and its parameters.
#[derive(Debug, Clone)]
struct Accelerator {
    name: String,
    parameters: HashMap<String, String>,
}

/// Model parameters passed to ONNX Runtime as session config entries: every
/// `session.*` key (Triton passes `session.use_device_allocator_for_initializers`;
/// oxiserve passes all of ONNX Runtime's, e.g. `session.intra_op.allow_spinning`).
const CONFIG_PREFIX: &str = "session.";

/// Session config entries set unless the model's parameters say otherwise.
/// Spinning thread pools burn the cores the server's request threads need
/// between batches; ONNX Runtime's own default is to spin.
const DEFAULT_ENTRIES: &[(&str, &str)] = &[
    ("session.intra_op.allow_spinning", "0"),
    ("session.inter_op.allow_spinning", "0"),
];

impl SessionOptions {
    /// Reads the options of `config`. Without `intra_op_thread_count`, the
    /// cores are shared between the model's instances so that several
    /// sessions don't each start one thread per core (Triton users hit that:
    /// onnxruntime_backend #265).
    pub(crate) fn from_config(config: &ModelConfig, use_global_pool: bool) -> Result<Self> {
        let params = Params { config };
        let level = match config
            .optimization
            .as_ref()
            .and_then(|o| o.graph.as_ref())
            .map_or(0, |g| g.level)
        {
            -1 => GraphOptimizationLevel::Level1,
            1 => GraphOptimizationLevel::Level2,
            2 => GraphOptimizationLevel::Disable,
            _ => GraphOptimizationLevel::All,
        };
        let execution_mode = params.number("execution_mode")?.unwrap_or(0);
        if execution_mode > 1 {
            return Err(Error::invalid_arg(format!(
                "Invalid configuration value provided. Expected values for execution_mode are \
                 0 or 1 but got {execution_mode}."
            )));
        }
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let instances: usize = config
            .instance_group
            .iter()
            .map(|g| g.count.max(1) as usize * g.gpus.len().max(1))
            .sum();
        let intra_op_threads = params
            .number("intra_op_thread_count")?
            .filter(|&n| n > 0)
            .unwrap_or_else(|| (cores / instances.max(1)).max(1));
        let accelerators = config
            .optimization
            .as_ref()
            .and_then(|o| o.execution_accelerators.as_ref());
        if let Some(cpu) = accelerators.and_then(|a| a.cpu_execution_accelerator.first()) {
            return Err(Error::invalid_arg(format!(
                "unknown Execution Accelerator '{}' is requested",
                cpu.name
            )));
        }
        let gpu_accelerators = accelerators
            .map(|a| &a.gpu_execution_accelerator[..])
            .unwrap_or_default()
            .iter()
            .map(|a| match a.name.as_str() {
                "tensorrt" | "cuda" => Ok(Accelerator {
                    name: a.name.clone(),
                    parameters: a.parameters.clone(),
                }),
                other => Err(Error::invalid_arg(format!(
                    "unknown Execution Accelerator '{other}' is requested"
                ))),
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            model: config.name.clone(),
            level,
            parallel: execution_mode == 1,
            intra_op_threads: (!use_global_pool).then_some(intra_op_threads),
            inter_op_threads: params
                .number("inter_op_thread_count")?
                .filter(|&n| n > 0 && !use_global_pool),
            use_global_pool,
            mem_arena: params.flag("enable_mem_arena")?,
            mem_pattern: params.flag("enable_mem_pattern")?,
            config_entries: config_entries(config),
            gpu_accelerators,
            op_libraries: config
                .model_operations
                .as_ref()
                .map(|ops| ops.op_library_filename.clone())
                .unwrap_or_default(),
        })
    }

    /// Options for a short-lived session that only reads the model's
    /// signature: one thread, no graph optimization.
    pub(crate) fn probe(model: &str) -> Self {
        Self {
            model: model.to_string(),
            level: GraphOptimizationLevel::Disable,
            parallel: false,
            intra_op_threads: Some(1),
            inter_op_threads: Some(1),
            use_global_pool: false,
            mem_arena: None,
            mem_pattern: None,
            config_entries: Vec::new(),
            gpu_accelerators: Vec::new(),
            op_libraries: Vec::new(),
        }
    }

    /// A session builder for an instance of `kind` on `device_id`.
    pub(crate) fn builder(
        &self,
        environment: &Environment,
        kind: InstanceKind,
        device_id: i32,
    ) -> Result<SessionBuilder> {
        let fail = |e: ort::Error<SessionBuilder>| {
            Error::internal(format!(
                "onnxruntime: session options of model '{}': {e}",
                self.model
            ))
        };
        let mut builder = ort::session::Session::builder(environment)
            .map_err(|e| Error::internal(format!("onnxruntime: {e}")))?
            .with_optimization_level(self.level)
            .map_err(fail)?
            .with_parallel_execution(self.parallel)
            .map_err(fail)?;
        if let Some(n) = self.intra_op_threads {
            builder = builder.with_intra_threads(n).map_err(fail)?;
        }
        if let Some(n) = self.inter_op_threads {
            builder = builder.with_inter_threads(n).map_err(fail)?;
        }
        if !self.use_global_pool {
            builder = builder.with_independent_thread_pool().map_err(fail)?;
        }
        if let Some(enable) = self.mem_pattern {
            builder = builder.with_memory_pattern(enable).map_err(fail)?;
        }
        for (key, value) in &self.config_entries {
            builder = builder.with_config_entry(key, value).map_err(fail)?;
        }
        for library in &self.op_libraries {
            builder = builder.with_operator_library(library).map_err(fail)?;
        }
        if kind == InstanceKind::Gpu {
            for provider in self.gpu_providers(device_id) {
                let name = provider.name();
                builder = match builder.with_execution_providers([provider]) {
                    Ok(builder) => builder,
                    Err(e) => {
                        log::warn!(
                            "onnxruntime: model '{}': {name} is not available in this ONNX Runtime \
                             library ({}); the instance runs without it (onnxruntime-gpu's library \
                             has CUDA and TensorRT)",
                            self.model,
                            e.message()
                        );
                        e.recover()
                    }
                };
            }
        }
        // ONNX Runtime's (and Triton's) default keeps the CPU arena; the
        // `ort` crate's CPU provider turns it off unless asked.
        let cpu = ep::CPU::default().with_arena_allocator(self.mem_arena.unwrap_or(true));
        builder
            .with_execution_providers([cpu.build()])
            .map_err(|e| {
                Error::internal(format!(
                    "onnxruntime: model '{}': CPU execution provider: {e}",
                    self.model
                ))
            })
    }

    /// TensorRT when asked for, then CUDA: the providers of a GPU instance.
    fn gpu_providers(&self, device_id: i32) -> Vec<ExecutionProviderDispatch> {
        let mut providers = Vec::new();
        let mut cuda = ep::CUDA::default().with_device_id(device_id);
        for accelerator in &self.gpu_accelerators {
            if accelerator.name == "tensorrt" {
                let mut trt = ep::TensorRT::default().with_device_id(device_id);
                for (key, value) in &accelerator.parameters {
                    trt = match key.as_str() {
                        "precision_mode" if value == "FP16" => trt.with_fp16(true),
                        "precision_mode" if value == "INT8" => trt.with_int8(true),
                        "max_workspace_size_bytes" => {
                            trt.with_arbitrary_config("trt_max_workspace_size", value)
                        }
                        _ => trt.with_arbitrary_config(key, value),
                    };
                }
                providers.push(trt.build().error_on_failure());
            } else {
                for (key, value) in &accelerator.parameters {
                    cuda = cuda.with_arbitrary_config(key, value);
                }
            }
        }
        providers.push(cuda.build().error_on_failure());
        providers
    }
}

/// The defaults, then every `session.*` parameter of `config` (sorted).
fn config_entries(config: &ModelConfig) -> Vec<(String, String)> {
    let mut given: Vec<(String, String)> = config
        .parameters
        .iter()
        .filter(|(key, _)| key.starts_with(CONFIG_PREFIX))
        .map(|(key, p)| (key.clone(), p.string_value.trim().to_string()))
        .collect();
    given.sort();
    let mut entries: Vec<(String, String)> = DEFAULT_ENTRIES
        .iter()
        .filter(|(key, _)| !given.iter().any(|(k, _)| k == key))
        .map(|&(key, value)| (key.to_string(), value.to_string()))
        .collect();
    entries.extend(given);
    entries
}

/// A model's string parameters, read as Triton's backend reads them.
struct Params<'a> {
    config: &'a ModelConfig,
}

impl Params<'_> {
    fn get(&self, key: &str) -> Option<&ModelParameter> {
        self.config.parameters.get(key)
    }

    fn number(&self, key: &str) -> Result<Option<usize>> {
        let Some(p) = self.get(key) else {
            return Ok(None);
        };
        let text = p.string_value.trim();
        text.parse::<usize>().map(Some).map_err(|_| {
            Error::invalid_arg(format!(
                "model '{}': parameter '{key}' must be a whole number, got '{text}'",
                self.config.name
            ))
        })
    }

    fn flag(&self, key: &str) -> Result<Option<bool>> {
        let Some(p) = self.get(key) else {
            return Ok(None);
        };
        match p.string_value.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "on" | "yes" => Ok(Some(true)),
            "false" | "0" | "off" | "no" => Ok(Some(false)),
            other => Err(Error::invalid_arg(format!(
                "model '{}': parameter '{key}' must be true or false, got '{other}'",
                self.config.name
            ))),
        }
    }
}
