//! Where a request's sink sends its responses: a response factory of the
//! host request, so responses may come after the request went back to the
//! host (and from any thread).

use std::{
    ffi::c_void,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use oxiserve_backend::{BackendResponse, ResponseEvent, ResponseTarget};
use oxiserve_types::{Error, ParameterValue, Result, Tensor};

use crate::abi::{
    self, MEMORY_CPU, RESPONSE_COMPLETE_FINAL, TRITONBACKEND_Request, TRITONBACKEND_Response,
    TRITONBACKEND_ResponseFactory,
};
use crate::request::data_type_code;
use crate::status::{c_string, check, to_status};

/// Whether a request's responses failed it, for its statistics.
#[derive(Debug, Default)]
pub(crate) struct Outcome(AtomicBool);

impl Outcome {
    /// Whether a response failed the request.
    pub(crate) fn failed(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Sends a sink's events through a response factory of the request.
pub(crate) struct FactoryTarget {
    factory: *mut TRITONBACKEND_ResponseFactory,
    outcome: Arc<Outcome>,
}

// SAFETY: the C API lets a response factory and the responses it makes be
// used from any thread; this target is used by one thread at a time (the
// sink that owns it).
unsafe impl Send for FactoryTarget {}

impl FactoryTarget {
    /// A target for `request`'s responses.
    pub(crate) fn new(request: *mut TRITONBACKEND_Request) -> Result<Self> {
        let mut factory = std::ptr::null_mut();
        // SAFETY: `request` is a request of the running execute; the
        // factory is ours until we delete it in `drop`.
        check(unsafe { abi::TRITONBACKEND_ResponseFactoryNew(&mut factory, request) })?;
        Ok(Self {
            factory,
            outcome: Arc::default(),
        })
    }

    /// The outcome this target records.
    pub(crate) fn outcome(&self) -> Arc<Outcome> {
        self.outcome.clone()
    }

    fn send(&mut self, event: ResponseEvent) -> Result<()> {
        let flags = if event.is_final {
            RESPONSE_COMPLETE_FINAL
        } else {
            0
        };
        let Some(result) = event.response else {
            // SAFETY: the factory is live until `drop`.
            return check(unsafe {
                abi::TRITONBACKEND_ResponseFactorySendFlags(self.factory, flags)
            });
        };
        let mut response = std::ptr::null_mut();
        // SAFETY: the factory is live; the response is ours until sent.
        check(unsafe { abi::TRITONBACKEND_ResponseNewFromFactory(&mut response, self.factory) })?;
        let error = match result.and_then(|r| write(response, &r)) {
            Ok(()) => std::ptr::null_mut(),
            Err(error) => {
                if event.fails_request {
                    self.outcome.0.store(true, Ordering::Relaxed);
                }
                to_status(&error)
            }
        };
        // SAFETY: sending hands the response to the host whatever the
        // result; the host only reads `error`, which we delete after.
        let sent = check(unsafe { abi::TRITONBACKEND_ResponseSend(response, flags, error) });
        if !error.is_null() {
            // SAFETY: `error` is the one we made above, deleted once.
            unsafe { abi::TRITONSERVER_ErrorDelete(error) };
        }
        sent
    }
}

impl ResponseTarget for FactoryTarget {
    fn deliver(&mut self, event: ResponseEvent) {
        if let Err(error) = self.send(event) {
            log::error!("failed to send a response: {}", error.message);
        }
    }
}

impl Drop for FactoryTarget {
    fn drop(&mut self) {
        // SAFETY: the factory made in `new`, deleted once.
        if let Err(error) = check(unsafe { abi::TRITONBACKEND_ResponseFactoryDelete(self.factory) })
        {
            log::error!("failed to delete a response factory: {}", error.message);
        }
    }
}

/// Writes a response's outputs and parameters into the host's response.
fn write(response: *mut TRITONBACKEND_Response, contents: &BackendResponse) -> Result<()> {
    for tensor in &contents.outputs {
        output(response, tensor)?;
    }
    for (name, value) in &contents.parameters {
        parameter(response, name, value)?;
    }
    Ok(())
}

fn output(response: *mut TRITONBACKEND_Response, tensor: &Tensor) -> Result<()> {
    let name = c_string(&tensor.name);
    let mut output = std::ptr::null_mut();
    let mut buffer: *mut c_void = std::ptr::null_mut();
    let mut memory_type = MEMORY_CPU;
    let mut memory_type_id = 0i64;
    // SAFETY: `response` is ours until sent; the host copies the name and
    // shape, and its buffer holds the `data.len()` bytes asked for.
    unsafe {
        check(abi::TRITONBACKEND_ResponseOutput(
            response,
            &mut output,
            name.as_ptr(),
            data_type_code(tensor.datatype),
            tensor.shape.as_ptr(),
            tensor.shape.len() as u32,
        ))?;
        check(abi::TRITONBACKEND_OutputBuffer(
            output,
            &mut buffer,
            tensor.data.len() as u64,
            &mut memory_type,
            &mut memory_type_id,
        ))?;
        if memory_type > abi::MEMORY_CPU_PINNED {
            return Err(Error::internal(format!(
                "output '{}': the server gave GPU memory to a CPU backend",
                tensor.name
            )));
        }
        if !tensor.data.is_empty() {
            std::ptr::copy_nonoverlapping(
                tensor.data.as_ptr(),
                buffer.cast::<u8>(),
                tensor.data.len(),
            );
        }
    }
    Ok(())
}

fn parameter(
    response: *mut TRITONBACKEND_Response,
    name: &str,
    value: &ParameterValue,
) -> Result<()> {
    let key = c_string(name);
    // SAFETY: `response` is ours until sent; the host copies key and value.
    check(unsafe {
        match value {
            ParameterValue::Bool(b) => {
                abi::TRITONBACKEND_ResponseSetBoolParameter(response, key.as_ptr(), *b)
            }
            ParameterValue::Int(i) => {
                abi::TRITONBACKEND_ResponseSetIntParameter(response, key.as_ptr(), *i)
            }
            ParameterValue::Uint(u) => abi::TRITONBACKEND_ResponseSetIntParameter(
                response,
                key.as_ptr(),
                i64::try_from(*u).unwrap_or(i64::MAX),
            ),
            ParameterValue::Double(d) => {
                abi::TRITONBACKEND_ResponseSetDoubleParameter(response, key.as_ptr(), *d)
            }
            ParameterValue::String(s) => {
                let value = c_string(s);
                abi::TRITONBACKEND_ResponseSetStringParameter(
                    response,
                    key.as_ptr(),
                    value.as_ptr(),
                )
            }
        }
    })
}
