//! `TRITONSERVER_InferenceResponse`: a response to an in-process request,
//! handed to the caller's response function, which owns it until it
//! deletes it. Its outputs lie in buffers the caller's allocator gave; they
//! go back to it (the allocator's release function) when the response is
//! deleted.

use std::{
    ffi::{CString, c_void},
    ptr,
};

use oxiserve_types::{DataType, Error, InferResponse, Result};

use crate::{
    allocator::AllocatorHandle,
    error::ErrorHandle,
    ffi::{MEMORY_CPU, MEMORY_GPU, c_string},
    parameter::{CValue, ParameterHandle},
};

/// Where a request's responses go: the caller's allocator and response
/// function, with their user pointers.
#[derive(Debug, Clone, Copy)]
pub struct ResponseRoute {
    /// The allocator's address (passed back to its functions).
    pub allocator: usize,
    pub functions: AllocatorHandle,
    pub alloc_userp: usize,
    pub complete: CompleteFn,
    pub response_userp: usize,
}

/// `TRITONSERVER_InferenceResponseCompleteFn_t`.
pub type CompleteFn =
    unsafe extern "C" fn(response: *mut InferenceResponseHandle, flags: u32, userp: *mut c_void);

/// One output in a buffer of the caller's allocator.
#[derive(Debug)]
pub struct OutputBuffer {
    pub name: CString,
    pub dtype: DataType,
    pub shape: Vec<i64>,
    /// The buffer's address (null for an empty output).
    pub buffer: usize,
    pub buffer_userp: usize,
    pub byte_size: usize,
    pub memory_type: u32,
    pub memory_type_id: i64,
}

/// The object behind a `TRITONSERVER_InferenceResponse*`.
#[derive(Debug)]
pub struct InferenceResponseHandle {
    pub model_name: CString,
    pub model_version: i64,
    pub id: CString,
    pub error: Option<Error>,
    pub parameters: Vec<ParameterHandle>,
    pub outputs: Vec<OutputBuffer>,
    route: ResponseRoute,
}

impl InferenceResponseHandle {
    /// The response `response` in the form `route`'s caller reads it, its
    /// outputs copied into buffers of the caller's allocator (a failed
    /// allocation makes it an error response).
    pub fn new(response: Result<InferResponse>, model: &str, route: ResponseRoute) -> Self {
        let mut handle = Self {
            model_name: c_string(model),
            model_version: -1,
            id: CString::default(),
            error: None,
            parameters: Vec::new(),
            outputs: Vec::new(),
            route,
        };
        if let Some(start) = route.functions.start {
            // SAFETY: the caller's start function with its allocator and user pointer.
            let error = unsafe { start(route.allocator as *mut _, route.alloc_userp as *mut _) };
            // SAFETY: an error the caller's function made with TRITONSERVER_ErrorNew.
            if let Some(error) = unsafe { ErrorHandle::take(error) } {
                // As Triton: logged, and the response goes on.
                log::error!("response allocation start failed: {}", error.message);
            }
        }
        match response {
            Err(error) => handle.error = Some(error),
            Ok(response) => {
                handle.model_name = c_string(&response.model_name);
                handle.model_version = response.model_version;
                handle.id = c_string(&response.id);
                handle.parameters = response
                    .parameters
                    .iter()
                    .map(|(name, value)| ParameterHandle::new(name, CValue::of(value)))
                    .collect();
                for tensor in response.outputs {
                    if let Err(error) = handle.add_output(&tensor) {
                        handle.error = Some(error);
                        break;
                    }
                }
            }
        }
        handle
    }

    /// Copies `tensor` into a buffer of the caller's allocator.
    fn add_output(&mut self, tensor: &oxiserve_types::Tensor) -> Result<()> {
        let name = c_string(&tensor.name);
        let size = tensor.data.len();
        let (mut buffer, mut buffer_userp) = (ptr::null_mut(), ptr::null_mut());
        let (mut memory_type, mut memory_type_id) = (MEMORY_CPU, 0);
        let route = self.route;
        // SAFETY: the caller's allocation function with its documented
        // arguments, every out-pointer valid.
        let error = unsafe {
            (route.functions.alloc)(
                route.allocator as *mut _,
                name.as_ptr(),
                size,
                MEMORY_CPU,
                0,
                route.alloc_userp as *mut _,
                &mut buffer,
                &mut buffer_userp,
                &mut memory_type,
                &mut memory_type_id,
            )
        };
        // SAFETY: an error the caller's function made with TRITONSERVER_ErrorNew.
        if let Some(error) = unsafe { ErrorHandle::take(error) } {
            return Err(error);
        }
        self.outputs.push(OutputBuffer {
            name,
            dtype: tensor.datatype,
            shape: tensor.shape.clone(),
            buffer: buffer as usize,
            buffer_userp: buffer_userp as usize,
            byte_size: size,
            memory_type,
            memory_type_id,
        });
        if size == 0 {
            return Ok(());
        }
        if memory_type == MEMORY_GPU || buffer.is_null() {
            return Err(Error::unavailable(format!(
                "output '{}': the response allocator gave no CPU buffer (this server has no CUDA)",
                tensor.name
            )));
        }
        // SAFETY: the allocator gave `size` writable bytes of CPU memory at `buffer`.
        unsafe { ptr::copy_nonoverlapping(tensor.data.as_ptr(), buffer.cast::<u8>(), size) };
        Ok(())
    }
}

impl Drop for InferenceResponseHandle {
    fn drop(&mut self) {
        let route = self.route;
        for output in self.outputs.drain(..).filter(|o| o.buffer != 0) {
            // SAFETY: the caller's release function with a buffer its
            // allocation function gave, as documented.
            let error = unsafe {
                (route.functions.release)(
                    route.allocator as *mut _,
                    output.buffer as *mut _,
                    output.buffer_userp as *mut _,
                    output.byte_size,
                    output.memory_type,
                    output.memory_type_id,
                )
            };
            // SAFETY: an error the caller's function made with TRITONSERVER_ErrorNew.
            if let Some(error) = unsafe { ErrorHandle::take(error) } {
                log::error!(
                    "failed to release the buffer of output '{}': {}",
                    output.name.to_string_lossy(),
                    error.message
                );
            }
        }
    }
}
