//! `TRITONBACKEND_Request` and `TRITONBACKEND_Input`: one request of a
//! batch as the backend reads it. Every pointer handed out (names, shapes,
//! buffers, parameters) lives as long as the request, until the backend
//! releases it.

use std::{collections::HashMap, ffi::CString, sync::Arc};

use bytes::Bytes;
use oxiserve_backend::{BackendRequest, REQUEST_FIELD_PARAMETERS};
use oxiserve_types::{DataType, ParameterValue, Tensor};
use parking_lot::Mutex;

use crate::{
    buffer::BufferAttributesHandle,
    ffi::{SEQUENCE_END, SEQUENCE_START, c_string},
    model_info::ModelInfo,
    parameter::{CValue, ParameterHandle},
    sink::SharedSink,
    state::StateHandle,
};

/// A request's correlation id.
#[derive(Debug, Clone, PartialEq)]
pub enum Correlation {
    U64(u64),
    String(CString),
}

/// The object behind a `TRITONBACKEND_Input*`.
#[derive(Debug)]
pub struct InputHandle {
    pub name: CString,
    pub dtype: DataType,
    /// With the batch dimension, as Triton's `ShapeWithBatchDim`.
    pub shape: Vec<i64>,
    pub data: Bytes,
    pub attributes: BufferAttributesHandle,
}

impl InputHandle {
    fn of(tensor: Tensor) -> Self {
        Self {
            name: c_string(&tensor.name),
            dtype: tensor.datatype,
            attributes: BufferAttributesHandle::cpu(tensor.data.len()),
            shape: tensor.shape,
            data: tensor.data,
        }
    }
}

/// The requests of one instance that the backend holds: by address, the
/// request id (to name the ones never released).
pub type Outstanding = Mutex<HashMap<usize, String>>;

/// The object behind a `TRITONBACKEND_Request*`.
#[derive(Debug)]
pub struct RequestHandle {
    pub id: CString,
    pub correlation: Correlation,
    pub flags: u32,
    pub timeout_us: u64,
    pub inputs: Vec<InputHandle>,
    /// The outputs to produce.
    pub outputs: Vec<CString>,
    pub parameters: Vec<ParameterHandle>,
    pub sink: Arc<SharedSink>,
    /// The states the backend created for it; freed with it.
    #[expect(
        clippy::vec_box,
        reason = "the backend holds each state's address while more are added"
    )]
    pub states: Mutex<Vec<Box<StateHandle>>>,
    /// Its instance's list of requests the backend holds.
    pub outstanding: Arc<Outstanding>,
}

impl RequestHandle {
    /// The handle of `request`, for a model described by `model`.
    pub fn new(
        request: BackendRequest,
        model: Arc<ModelInfo>,
        outstanding: Arc<Outstanding>,
    ) -> Self {
        let BackendRequest {
            request,
            requested_outputs,
            sink,
            trace: _,
        } = request;
        let parameters = &request.parameters;
        let flag = |key: &str, bit: u32| match parameters.get(key).and_then(ParameterValue::as_bool)
        {
            Some(true) => bit,
            _ => 0,
        };
        let correlation = match parameters.get("sequence_id") {
            Some(ParameterValue::String(s)) => Correlation::String(c_string(s)),
            Some(value) => Correlation::U64(value.as_u64().unwrap_or(0)),
            None => Correlation::U64(0),
        };
        Self {
            id: c_string(&request.id),
            correlation,
            flags: flag("sequence_start", SEQUENCE_START) | flag("sequence_end", SEQUENCE_END),
            timeout_us: parameters
                .get("timeout")
                .and_then(ParameterValue::as_u64)
                .unwrap_or(0),
            parameters: parameters
                .iter()
                .filter(|(name, _)| !REQUEST_FIELD_PARAMETERS.contains(&name.as_str()))
                .map(|(name, value)| ParameterHandle::new(name, CValue::of(value)))
                .collect(),
            inputs: request.inputs.into_iter().map(InputHandle::of).collect(),
            outputs: requested_outputs.iter().map(|o| c_string(o)).collect(),
            sink: SharedSink::new(sink, model),
            states: Mutex::default(),
            outstanding,
        }
    }

    /// The request id as text.
    pub fn id(&self) -> String {
        self.id.to_string_lossy().into_owned()
    }

    /// The input called `name`.
    pub fn input(&self, name: &str) -> Option<&InputHandle> {
        self.inputs
            .iter()
            .find(|i| i.name.to_bytes() == name.as_bytes())
    }
}
