//! Implicit state (`sequence_batching { state [ ... ] }`): the tensor a
//! model's state output produced for one request of a sequence is its state
//! input in the next request. At the sequence's start the input is the
//! configured `initial_state` (zeros, or the bytes of a file in
//! `<model>/initial_state/`), else zeros with every variable dimension 1, as
//! in Triton. The state output reaches the client only when the model's
//! configuration lists it as an output and the request asks for it.

use std::{
    collections::HashMap,
    path::Path,
    sync::Arc,
    time::{Duration, Instant},
};

use bytes::Bytes;
use oxiserve_backend::{ResponseEvent, ResponseTarget};
use oxiserve_config::BatchPlan;
use oxiserve_proto::{
    ModelConfig,
    inference::{
        ModelSequenceBatching,
        model_sequence_batching::{State as StateConfig, initial_state::StateData},
    },
};
use oxiserve_types::{DataType, Error, Result, Tensor, element_count};
use parking_lot::Mutex;

use super::state::CorrId;

/// One state: its input and output names and the tensor a sequence starts with.
#[derive(Debug, Clone)]
struct StateSpec {
    input: String,
    output: String,
    initial: Tensor,
}

/// The states of one model and the latest value of each sequence's states.
#[derive(Debug)]
pub(crate) struct ImplicitState {
    specs: Vec<StateSpec>,
    /// Outputs the configuration lists, which a client may ask for.
    listed_outputs: Vec<String>,
    stored: Mutex<HashMap<CorrId, Stored>>,
    /// A sequence silent for longer has lost its slot; its state is dropped.
    max_idle: Duration,
    /// When idle states were last dropped: at most every half idle time.
    swept: Mutex<Instant>,
}

#[derive(Debug)]
struct Stored {
    tensors: Vec<Tensor>,
    touched: Instant,
}

impl ImplicitState {
    /// The states `batching` declares, or `None` without any.
    pub fn new(
        config: &ModelConfig,
        batching: &ModelSequenceBatching,
        model_path: &Path,
        max_idle: Duration,
    ) -> Result<Option<Arc<Self>>> {
        if batching.state.is_empty() {
            return Ok(None);
        }
        let specs = batching
            .state
            .iter()
            .map(|state| spec(state, BatchPlan::of(config).is_batching(), model_path))
            .collect::<Result<_>>()?;
        Ok(Some(Arc::new(Self {
            specs,
            listed_outputs: config.output.iter().map(|o| o.name.clone()).collect(),
            stored: Mutex::new(HashMap::new()),
            max_idle,
            swept: Mutex::new(Instant::now()),
        })))
    }

    /// The output names of every state.
    pub fn outputs(&self) -> impl Iterator<Item = &str> {
        self.specs.iter().map(|s| s.output.as_str())
    }

    /// The state inputs of a request of sequence `corrid`: the initial state
    /// when the request starts the sequence (or nothing was stored), else
    /// what its previous request produced.
    pub fn inputs(&self, corrid: &CorrId, start: bool) -> Vec<Tensor> {
        let mut stored = self.stored.lock();
        if start {
            stored.remove(corrid);
        }
        match stored.get(corrid) {
            Some(found) => found.tensors.clone(),
            None => self.specs.iter().map(|s| s.initial.clone()).collect(),
        }
    }

    /// Drops the state of sequences that have been silent past the idle
    /// time; cheap when called often (it looks at most every half idle time).
    pub fn forget_idle(&self, now: Instant) {
        {
            let mut swept = self.swept.lock();
            if now.saturating_duration_since(*swept) < self.max_idle / 2 {
                return;
            }
            *swept = now;
        }
        let mut stored = self.stored.lock();
        stored.retain(|_, s| now.saturating_duration_since(s.touched) <= self.max_idle);
    }

    /// A target that keeps the state outputs of a request of `corrid` (its
    /// last if `end`) and passes the rest on; `wanted` are the outputs the
    /// client asked for.
    pub fn capture(
        self: &Arc<Self>,
        corrid: CorrId,
        end: bool,
        wanted: &[String],
        inner: Box<dyn ResponseTarget>,
    ) -> Box<dyn ResponseTarget> {
        let shown = self
            .specs
            .iter()
            .map(|s| self.listed_outputs.contains(&s.output) && wanted.contains(&s.output))
            .collect();
        Box::new(Capture {
            states: self.clone(),
            corrid,
            end,
            shown,
            inner,
        })
    }

    fn keep(&self, corrid: &CorrId, end: bool, tensors: Option<Vec<Tensor>>) {
        let mut stored = self.stored.lock();
        match tensors {
            Some(tensors) if !end => {
                stored.insert(
                    corrid.clone(),
                    Stored {
                        tensors,
                        touched: Instant::now(),
                    },
                );
            }
            _ if end => {
                stored.remove(corrid);
            }
            _ => {}
        }
    }
}

/// Takes the state outputs out of a sequence request's response.
struct Capture {
    states: Arc<ImplicitState>,
    corrid: CorrId,
    end: bool,
    /// Per state: whether its output also goes to the client.
    shown: Vec<bool>,
    inner: Box<dyn ResponseTarget>,
}

impl ResponseTarget for Capture {
    fn deliver(&mut self, mut event: ResponseEvent) {
        let mut kept = None;
        if let Some(Ok(response)) = &mut event.response {
            let mut tensors = Vec::with_capacity(self.states.specs.len());
            let mut missing = None;
            for (spec, &shown) in self.states.specs.iter().zip(&self.shown) {
                let found = response.outputs.iter().position(|t| t.name == spec.output);
                match found {
                    Some(i) => {
                        let output = if shown {
                            response.outputs[i].clone()
                        } else {
                            response.outputs.remove(i)
                        };
                        tensors.push(Tensor::new(
                            &spec.input,
                            output.datatype,
                            output.shape,
                            output.data,
                        ));
                    }
                    None => missing = Some(spec.output.clone()),
                }
            }
            match missing {
                None => kept = Some(tensors),
                Some(name) => {
                    event.response = Some(Err(Error::internal(format!(
                        "the model produced no state output '{name}' for sequence {}",
                        self.corrid
                    ))));
                }
            }
        }
        if event.is_final || kept.is_some() {
            self.states
                .keep(&self.corrid, self.end && event.is_final, kept);
        }
        self.inner.deliver(event);
    }
}

fn spec(state: &StateConfig, batched: bool, model_path: &Path) -> Result<StateSpec> {
    let name = &state.input_name;
    let dtype = DataType::from_config_number(state.data_type)
        .ok_or_else(|| Error::invalid_arg(format!("state '{name}' has no valid data_type")))?;
    let mut shape: Vec<i64> = batched.then_some(1).into_iter().collect();
    let data = match state.initial_state.as_slice() {
        [] => {
            shape.extend(state.dims.iter().map(|&d| if d == -1 { 1 } else { d }));
            zeros(dtype, &shape)
        }
        [initial] => {
            if initial.data_type != state.data_type {
                return Err(Error::invalid_arg(format!(
                    "The data type used for 'initial_state' field of state '{name}' does not \
                     match the state data type."
                )));
            }
            if initial.dims.len() != state.dims.len() {
                return Err(Error::invalid_arg(format!(
                    "Number of dimensions in 'initial_state' doesn't match the size of 'state' \
                     dimensions for state input '{name}'. {} != {}",
                    initial.dims.len(),
                    state.dims.len()
                )));
            }
            for (&dim, &declared) in initial.dims.iter().zip(&state.dims) {
                if dim == -1 {
                    return Err(Error::invalid_arg(format!(
                        "'initial_state' field for state input name '{name}' contains variable dimensions."
                    )));
                }
                if declared != -1 && dim != declared {
                    return Err(Error::invalid_arg(format!(
                        "'initial_state' dim for input name '{name}' doesn't match 'state' dim \
                         description. {dim} != {declared}"
                    )));
                }
            }
            shape.extend(&initial.dims);
            match &initial.state_data {
                Some(StateData::DataFile(file)) => {
                    let path = model_path.join("initial_state").join(file);
                    let bytes = std::fs::read(&path).map_err(|e| {
                        Error::invalid_arg(format!(
                            "initial state of '{name}': cannot read {}: {e}",
                            path.display()
                        ))
                    })?;
                    let need =
                        element_count(&shape).unwrap_or(0) * dtype.element_size().unwrap_or(0);
                    if dtype != DataType::Bytes && bytes.len() < need {
                        return Err(Error::invalid_arg(format!(
                            "initial_state setting expects {need} bytes, but the data provided \
                             from {} only has {} bytes",
                            path.display(),
                            bytes.len()
                        )));
                    }
                    let end = if dtype == DataType::Bytes {
                        bytes.len()
                    } else {
                        need
                    };
                    Bytes::from(bytes).slice(..end)
                }
                _ => zeros(dtype, &shape),
            }
        }
        _ => {
            return Err(Error::invalid_arg(format!(
                "state '{name}': only one initial_state may be given"
            )));
        }
    };
    Ok(StateSpec {
        input: state.input_name.clone(),
        output: state.output_name.clone(),
        initial: Tensor::new(&state.input_name, dtype, shape, data),
    })
}

/// A tensor of zeros; BYTES elements are empty strings.
fn zeros(dtype: DataType, shape: &[i64]) -> Bytes {
    let count = element_count(shape).unwrap_or(0);
    Bytes::from(vec![0u8; count * dtype.element_size().unwrap_or(4)])
}

#[cfg(test)]
mod tests;
