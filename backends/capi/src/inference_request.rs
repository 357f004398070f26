//! `TRITONSERVER_InferenceRequest`: a request a backend makes of another
//! model (BLS), built field by field, then run with
//! `TRITONSERVER_ServerInferAsync`. The server copies what it needs when
//! the request starts and releases it at once (the release function is
//! called before `ServerInferAsync` returns); the responses go to the
//! caller's response function, from whatever thread produced them.

use std::{
    ffi::{CString, c_void},
    sync::Arc,
};

use bytes::Bytes;
use oxiserve_backend::{CancelFlag, EventCallback, ModelHost, StreamEvent};
use oxiserve_types::{
    DataType, Error, InferRequest, ParameterValue, Parameters, RequestedOutput, Result, Tensor,
};

use crate::{
    ffi::{RESPONSE_FINAL, SEQUENCE_END, SEQUENCE_START},
    inference_response::{InferenceResponseHandle, ResponseRoute},
    request::Correlation,
};

/// `TRITONSERVER_InferenceRequestReleaseFn_t`.
pub type ReleaseFn =
    unsafe extern "C" fn(request: *mut InferenceRequestHandle, flags: u32, userp: *mut c_void);

/// `TRITONSERVER_REQUEST_RELEASE_ALL`.
const RELEASE_ALL: u32 = 1;

/// One input: its description and the bytes appended to it.
#[derive(Debug, Clone)]
pub struct InputData {
    pub name: String,
    pub dtype: DataType,
    pub shape: Vec<i64>,
    pub data: Vec<u8>,
}

/// The object behind a `TRITONSERVER_InferenceRequest*`.
#[derive(Debug)]
pub struct InferenceRequestHandle {
    /// The server it runs on.
    pub host: Arc<dyn ModelHost>,
    pub model_name: String,
    /// The version asked for; -1 for the policy's choice.
    pub model_version: i64,
    pub id: CString,
    pub flags: u32,
    pub correlation: Correlation,
    pub priority: u64,
    pub timeout_us: u64,
    pub inputs: Vec<InputData>,
    pub outputs: Vec<String>,
    pub parameters: Parameters,
    /// The release function and its user pointer.
    pub release: Option<(ReleaseFn, usize)>,
    pub route: Option<ResponseRoute>,
    pub cancel: CancelFlag,
}

impl InferenceRequestHandle {
    /// A request for `model_name` (at `model_version`) on `host`.
    pub fn new(host: Arc<dyn ModelHost>, model_name: &str, model_version: i64) -> Self {
        Self {
            host,
            model_name: model_name.to_string(),
            model_version,
            id: CString::default(),
            flags: 0,
            correlation: Correlation::U64(0),
            priority: 0,
            timeout_us: 0,
            inputs: Vec::new(),
            outputs: Vec::new(),
            parameters: Parameters::new(),
            release: None,
            route: None,
            cancel: CancelFlag::default(),
        }
    }

    /// Triton's prefix for the request's errors.
    pub fn log_request(&self) -> String {
        let id = self.id.to_string_lossy();
        let id = if id.is_empty() { "<id_unknown>" } else { &id };
        format!("[request id: {id}] ")
    }

    /// The input called `name`, or Triton's error.
    pub fn input_mut(&mut self, name: &str) -> Result<&mut InputData> {
        let prefix = self.log_request();
        self.inputs
            .iter_mut()
            .find(|i| i.name == name)
            .ok_or_else(|| {
                Error::invalid_arg(format!("{prefix}input '{name}' does not exist in request"))
            })
    }

    /// The request as the server takes it: sequence fields, priority and
    /// timeout as the parameters a client would send.
    fn to_infer_request(&self) -> InferRequest {
        let mut parameters = self.parameters.clone();
        match &self.correlation {
            Correlation::U64(0) => {}
            Correlation::U64(id) => {
                parameters.insert("sequence_id".into(), ParameterValue::Uint(*id));
            }
            Correlation::String(id) => {
                let id = id.to_string_lossy().into_owned();
                parameters.insert("sequence_id".into(), ParameterValue::String(id));
            }
        }
        for (flag, key) in [
            (SEQUENCE_START, "sequence_start"),
            (SEQUENCE_END, "sequence_end"),
        ] {
            if self.flags & flag != 0 {
                parameters.insert(key.into(), ParameterValue::Bool(true));
            }
        }
        if self.priority > 0 {
            parameters.insert("priority".into(), ParameterValue::Uint(self.priority));
        }
        if self.timeout_us > 0 {
            parameters.insert("timeout".into(), ParameterValue::Uint(self.timeout_us));
        }
        InferRequest {
            model_name: self.model_name.clone(),
            model_version: (self.model_version > 0).then_some(self.model_version),
            id: self.id.to_string_lossy().into_owned(),
            inputs: self
                .inputs
                .iter()
                .map(|i| {
                    let data = Bytes::copy_from_slice(&i.data);
                    Tensor::new(&i.name, i.dtype, i.shape.clone(), data)
                })
                .collect(),
            outputs: self
                .outputs
                .iter()
                .map(|name| RequestedOutput {
                    name: name.clone(),
                    ..Default::default()
                })
                .collect(),
            parameters,
        }
    }
}

/// `TRITONSERVER_ServerInferAsync`: starts `request`, then releases it.
/// On an error the caller keeps the request and no response comes.
///
/// # Safety
/// `request` is a live request the caller owns; after a success it may be
/// gone (its release function may delete it).
pub unsafe fn infer(request: *mut InferenceRequestHandle) -> Result<()> {
    // SAFETY: live and owned by the caller, per this function's contract.
    let handle = unsafe { &*request };
    let route = handle.route.ok_or_else(|| {
        Error::invalid_arg(format!(
            "inference request for model '{}' has no response callback",
            handle.model_name
        ))
    })?;
    let model = handle.model_name.clone();
    let on_event: EventCallback = Box::new(move |event: StreamEvent| {
        let flags = if event.is_final { RESPONSE_FINAL } else { 0 };
        let response = event.response.map_or(std::ptr::null_mut(), |response| {
            Box::into_raw(Box::new(InferenceResponseHandle::new(
                response, &model, route,
            )))
        });
        // SAFETY: the caller's response function, given a response it now
        // owns (or null) and its user pointer.
        unsafe { (route.complete)(response, flags, route.response_userp as *mut c_void) };
    });
    let release = handle.release;
    handle.host.infer(
        handle.to_infer_request(),
        handle.cancel.clone(),
        on_event,
        None,
    )?;
    if let Some((release, userp)) = release {
        // SAFETY: the caller's release function, given the request it owns
        // back (it may delete it: nothing here touches it afterwards).
        unsafe { release(request, RELEASE_ALL, userp as *mut c_void) };
    }
    Ok(())
}
