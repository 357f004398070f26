//! The part of Triton's C API (`tritonbackend.h` 1.19, `tritonserver.h`)
//! that a backend library calls: opaque handles, the enum values the ABI
//! fixes, and the host's functions, which resolve when the server opens the
//! library.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

/// Declares opaque C handle types.
macro_rules! opaque {
    ($($name:ident),* $(,)?) => {$(
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
        }
    )*};
}

opaque!(
    TRITONSERVER_Error,
    TRITONSERVER_Message,
    TRITONBACKEND_Backend,
    TRITONBACKEND_Model,
    TRITONBACKEND_ModelInstance,
    TRITONBACKEND_Request,
    TRITONBACKEND_Input,
    TRITONBACKEND_Response,
    TRITONBACKEND_ResponseFactory,
    TRITONBACKEND_Output,
);

/// The API version this library is built for.
pub const API_VERSION_MAJOR: u32 = 1;
pub const API_VERSION_MINOR: u32 = 19;

/// `TRITONSERVER_Error_Code`.
pub mod error_code {
    pub const UNKNOWN: u32 = 0;
    pub const INTERNAL: u32 = 1;
    pub const NOT_FOUND: u32 = 2;
    pub const INVALID_ARG: u32 = 3;
    pub const UNAVAILABLE: u32 = 4;
    pub const UNSUPPORTED: u32 = 5;
    pub const ALREADY_EXISTS: u32 = 6;
    pub const CANCELLED: u32 = 7;
}

/// `TRITONSERVER_DataType`: 1 (`BOOL`) to 14 (`BF16`), 0 invalid.
pub type DataTypeCode = u32;
/// `TRITONSERVER_MemoryType`: CPU, and CPU pinned (also CPU memory).
pub const MEMORY_CPU: u32 = 0;
pub const MEMORY_CPU_PINNED: u32 = 1;
/// `TRITONSERVER_InstanceGroupKind`.
pub mod instance_kind {
    pub const GPU: u32 = 2;
    pub const MODEL: u32 = 3;
}
/// `TRITONSERVER_ParameterType`.
pub mod parameter_type {
    pub const STRING: u32 = 0;
    pub const INT: u32 = 1;
    pub const BOOL: u32 = 2;
    pub const DOUBLE: u32 = 3;
}
/// `TRITONSERVER_REQUEST_RELEASE_ALL`.
pub const REQUEST_RELEASE_ALL: u32 = 1;
/// `TRITONSERVER_RESPONSE_COMPLETE_FINAL`.
pub const RESPONSE_COMPLETE_FINAL: u32 = 1;
/// `TRITONSERVER_REQUEST_FLAG_SEQUENCE_START` and `_END`.
pub const REQUEST_FLAG_SEQUENCE_START: u32 = 1;
pub const REQUEST_FLAG_SEQUENCE_END: u32 = 2;

type Status = *mut TRITONSERVER_Error;

unsafe extern "C" {
    pub fn TRITONSERVER_ErrorNew(code: u32, msg: *const c_char) -> Status;
    pub fn TRITONSERVER_ErrorCode(error: Status) -> u32;
    pub fn TRITONSERVER_ErrorMessage(error: Status) -> *const c_char;
    pub fn TRITONSERVER_ErrorDelete(error: Status);
    pub fn TRITONSERVER_MessageSerializeToJson(
        message: *mut TRITONSERVER_Message,
        base: *mut *const c_char,
        byte_size: *mut usize,
    ) -> Status;
    pub fn TRITONSERVER_MessageDelete(message: *mut TRITONSERVER_Message) -> Status;

    pub fn TRITONBACKEND_ApiVersion(major: *mut u32, minor: *mut u32) -> Status;

    pub fn TRITONBACKEND_ModelName(
        model: *mut TRITONBACKEND_Model,
        name: *mut *const c_char,
    ) -> Status;
    pub fn TRITONBACKEND_ModelVersion(model: *mut TRITONBACKEND_Model, version: *mut u64)
    -> Status;
    pub fn TRITONBACKEND_ModelRepository(
        model: *mut TRITONBACKEND_Model,
        artifact_type: *mut u32,
        location: *mut *const c_char,
    ) -> Status;
    pub fn TRITONBACKEND_ModelConfig(
        model: *mut TRITONBACKEND_Model,
        config_version: u32,
        config: *mut *mut TRITONSERVER_Message,
    ) -> Status;
    pub fn TRITONBACKEND_ModelSetState(
        model: *mut TRITONBACKEND_Model,
        state: *mut c_void,
    ) -> Status;
    pub fn TRITONBACKEND_ModelState(
        model: *mut TRITONBACKEND_Model,
        state: *mut *mut c_void,
    ) -> Status;

    pub fn TRITONBACKEND_ModelInstanceName(
        instance: *mut TRITONBACKEND_ModelInstance,
        name: *mut *const c_char,
    ) -> Status;
    pub fn TRITONBACKEND_ModelInstanceKind(
        instance: *mut TRITONBACKEND_ModelInstance,
        kind: *mut u32,
    ) -> Status;
    pub fn TRITONBACKEND_ModelInstanceDeviceId(
        instance: *mut TRITONBACKEND_ModelInstance,
        device_id: *mut i32,
    ) -> Status;
    pub fn TRITONBACKEND_ModelInstanceModel(
        instance: *mut TRITONBACKEND_ModelInstance,
        model: *mut *mut TRITONBACKEND_Model,
    ) -> Status;
    pub fn TRITONBACKEND_ModelInstanceSetState(
        instance: *mut TRITONBACKEND_ModelInstance,
        state: *mut c_void,
    ) -> Status;
    pub fn TRITONBACKEND_ModelInstanceState(
        instance: *mut TRITONBACKEND_ModelInstance,
        state: *mut *mut c_void,
    ) -> Status;
    pub fn TRITONBACKEND_ModelInstanceReportStatistics(
        instance: *mut TRITONBACKEND_ModelInstance,
        request: *mut TRITONBACKEND_Request,
        success: bool,
        exec_start_ns: u64,
        compute_start_ns: u64,
        compute_end_ns: u64,
        exec_end_ns: u64,
    ) -> Status;
    pub fn TRITONBACKEND_ModelInstanceReportBatchStatistics(
        instance: *mut TRITONBACKEND_ModelInstance,
        batch_size: u64,
        exec_start_ns: u64,
        compute_start_ns: u64,
        compute_end_ns: u64,
        exec_end_ns: u64,
    ) -> Status;

    pub fn TRITONBACKEND_RequestId(
        request: *mut TRITONBACKEND_Request,
        id: *mut *const c_char,
    ) -> Status;
    pub fn TRITONBACKEND_RequestCorrelationId(
        request: *mut TRITONBACKEND_Request,
        id: *mut u64,
    ) -> Status;
    pub fn TRITONBACKEND_RequestFlags(
        request: *mut TRITONBACKEND_Request,
        flags: *mut u32,
    ) -> Status;
    pub fn TRITONBACKEND_RequestInputCount(
        request: *mut TRITONBACKEND_Request,
        count: *mut u32,
    ) -> Status;
    pub fn TRITONBACKEND_RequestInputByIndex(
        request: *mut TRITONBACKEND_Request,
        index: u32,
        input: *mut *mut TRITONBACKEND_Input,
    ) -> Status;
    pub fn TRITONBACKEND_RequestOutputCount(
        request: *mut TRITONBACKEND_Request,
        count: *mut u32,
    ) -> Status;
    pub fn TRITONBACKEND_RequestOutputName(
        request: *mut TRITONBACKEND_Request,
        index: u32,
        name: *mut *const c_char,
    ) -> Status;
    pub fn TRITONBACKEND_RequestParameterCount(
        request: *mut TRITONBACKEND_Request,
        count: *mut u32,
    ) -> Status;
    pub fn TRITONBACKEND_RequestParameter(
        request: *mut TRITONBACKEND_Request,
        index: u32,
        key: *mut *const c_char,
        kind: *mut u32,
        value: *mut *const c_void,
    ) -> Status;
    pub fn TRITONBACKEND_RequestRelease(request: *mut TRITONBACKEND_Request, flags: u32) -> Status;

    pub fn TRITONBACKEND_InputProperties(
        input: *mut TRITONBACKEND_Input,
        name: *mut *const c_char,
        datatype: *mut DataTypeCode,
        shape: *mut *const i64,
        dims_count: *mut u32,
        byte_size: *mut u64,
        buffer_count: *mut u32,
    ) -> Status;
    pub fn TRITONBACKEND_InputBuffer(
        input: *mut TRITONBACKEND_Input,
        index: u32,
        buffer: *mut *const c_void,
        byte_size: *mut u64,
        memory_type: *mut u32,
        memory_type_id: *mut i64,
    ) -> Status;

    pub fn TRITONBACKEND_ResponseFactoryNew(
        factory: *mut *mut TRITONBACKEND_ResponseFactory,
        request: *mut TRITONBACKEND_Request,
    ) -> Status;
    pub fn TRITONBACKEND_ResponseFactoryDelete(
        factory: *mut TRITONBACKEND_ResponseFactory,
    ) -> Status;
    pub fn TRITONBACKEND_ResponseFactorySendFlags(
        factory: *mut TRITONBACKEND_ResponseFactory,
        flags: u32,
    ) -> Status;
    pub fn TRITONBACKEND_ResponseNewFromFactory(
        response: *mut *mut TRITONBACKEND_Response,
        factory: *mut TRITONBACKEND_ResponseFactory,
    ) -> Status;
    pub fn TRITONBACKEND_ResponseDelete(response: *mut TRITONBACKEND_Response) -> Status;
    pub fn TRITONBACKEND_ResponseOutput(
        response: *mut TRITONBACKEND_Response,
        output: *mut *mut TRITONBACKEND_Output,
        name: *const c_char,
        datatype: DataTypeCode,
        shape: *const i64,
        dims_count: u32,
    ) -> Status;
    pub fn TRITONBACKEND_OutputBuffer(
        output: *mut TRITONBACKEND_Output,
        buffer: *mut *mut c_void,
        byte_size: u64,
        memory_type: *mut u32,
        memory_type_id: *mut i64,
    ) -> Status;
    pub fn TRITONBACKEND_ResponseSetStringParameter(
        response: *mut TRITONBACKEND_Response,
        name: *const c_char,
        value: *const c_char,
    ) -> Status;
    pub fn TRITONBACKEND_ResponseSetIntParameter(
        response: *mut TRITONBACKEND_Response,
        name: *const c_char,
        value: i64,
    ) -> Status;
    pub fn TRITONBACKEND_ResponseSetBoolParameter(
        response: *mut TRITONBACKEND_Response,
        name: *const c_char,
        value: bool,
    ) -> Status;
    pub fn TRITONBACKEND_ResponseSetDoubleParameter(
        response: *mut TRITONBACKEND_Response,
        name: *const c_char,
        value: f64,
    ) -> Status;
    pub fn TRITONBACKEND_ResponseSend(
        response: *mut TRITONBACKEND_Response,
        flags: u32,
        error: Status,
    ) -> Status;
}
