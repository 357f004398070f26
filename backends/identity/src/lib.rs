//! The `identity` backend, as Triton ships one for tests and benchmarks: each
//! output `OUTPUTn` is the input `INPUTn` (or, for other names, the input at
//! the output's position in the configuration), for any datatype and shape.
//! Output bytes share the input's buffer: nothing is copied.
//!
//! Config parameters: `execute_delay_ms` sleeps that long in every execution.

use std::{sync::Arc, time::Duration};

use oxiserve_backend::{
    Backend, BackendRequest, BackendResponse, ComputeTiming, InstanceContext, Model, ModelContext,
    ModelInstance,
};
use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, ErrorKind, Result, Tensor};

/// The backend called `identity`.
#[derive(Debug, Default)]
pub struct IdentityBackend;

impl Backend for IdentityBackend {
    fn name(&self) -> &str {
        "identity"
    }

    fn load(&self, model: &ModelContext) -> Result<Arc<dyn Model>> {
        Ok(Arc::new(IdentityModel::new(&model.config)?))
    }
}

/// One identity model: which input feeds each output, and the delay.
#[derive(Debug)]
struct IdentityModel {
    /// (output name, input name) pairs.
    routes: Arc<Vec<(String, String)>>,
    delay: Duration,
}

impl IdentityModel {
    fn new(config: &ModelConfig) -> Result<Self> {
        let mut routes = Vec::new();
        for (position, output) in config.output.iter().enumerate() {
            let by_name = output
                .name
                .strip_prefix("OUTPUT")
                .map(|suffix| format!("INPUT{suffix}"))
                .filter(|name| config.input.iter().any(|i| &i.name == name));
            let input = by_name
                .or_else(|| config.input.get(position).map(|i| i.name.clone()))
                .ok_or_else(|| {
                    Error::invalid_arg(format!(
                        "identity model '{}': no input feeds output '{}'; name it OUTPUTn for an input INPUTn",
                        config.name, output.name
                    ))
                })?;
            routes.push((output.name.clone(), input));
        }
        let delay = match config.parameters.get("execute_delay_ms") {
            None => Duration::ZERO,
            Some(p) => Duration::from_millis(p.string_value.trim().parse().map_err(|_| {
                Error::invalid_arg(format!(
                    "identity model '{}': parameter 'execute_delay_ms' must be a whole number of milliseconds, got '{}'",
                    config.name, p.string_value
                ))
            })?),
        };
        Ok(Self {
            routes: Arc::new(routes),
            delay,
        })
    }
}

impl Model for IdentityModel {
    fn create_instance(&self, _instance: &InstanceContext) -> Result<Box<dyn ModelInstance>> {
        Ok(Box::new(IdentityInstance {
            routes: self.routes.clone(),
            delay: self.delay,
        }))
    }

    /// Copying references to the inputs is cheaper than handing the request
    /// to another thread; a model told to sleep runs on its instance thread.
    fn executes_inline(&self) -> bool {
        self.delay.is_zero()
    }
}

struct IdentityInstance {
    routes: Arc<Vec<(String, String)>>,
    delay: Duration,
}

impl ModelInstance for IdentityInstance {
    fn execute(&mut self, requests: Vec<BackendRequest>, timing: &mut ComputeTiming) {
        timing.start_compute();
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        timing.end_compute();
        for request in requests {
            let response = if request.sink.is_cancelled() {
                Err(Error::new(ErrorKind::Cancelled, "request was cancelled"))
            } else {
                Ok(self.outputs(&request))
            };
            request.sink.respond(response);
        }
    }
}

impl IdentityInstance {
    fn outputs(&self, request: &BackendRequest) -> BackendResponse {
        let outputs = self
            .routes
            .iter()
            .filter(|(output, _)| request.wants_output(output))
            .filter_map(|(output, input)| {
                let input = request.input(input)?;
                Some(Tensor::new(
                    output.clone(),
                    input.datatype,
                    input.shape.clone(),
                    input.data.clone(),
                ))
            })
            .collect();
        BackendResponse::new(outputs)
    }
}

#[cfg(test)]
mod tests;
