//! Statistics a backend reports. The core times every execution itself;
//! the compute start and end of `ReportBatchStatistics` replace its own
//! marks, and the `success` of `ReportStatistics` decides whether an error
//! the backend sends for that request fails it in the statistics.
//! Per-response statistics are accepted and not used (the core counts
//! responses as they are sent).

use crate::{
    error::{ErrorHandle, arg, status, write},
    instance::InstanceHandle,
    request::RequestHandle,
};

use super::instance::with;

/// `TRITONBACKEND_ModelInstanceReportStatistics`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceReportStatistics(
    instance: *mut InstanceHandle,
    request: *mut RequestHandle,
    success: bool,
    _exec_start_ns: u64,
    _compute_start_ns: u64,
    _compute_end_ns: u64,
    _exec_end_ns: u64,
) -> *mut ErrorHandle {
    with(instance, |_| {
        // SAFETY: null or a request the backend holds.
        let request = unsafe { arg(request, "request") }?;
        request.sink.report_success(success);
        Ok(())
    })
}

/// `TRITONBACKEND_ModelInstanceReportBatchStatistics`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceReportBatchStatistics(
    instance: *mut InstanceHandle,
    _batch_size: u64,
    _exec_start_ns: u64,
    compute_start_ns: u64,
    compute_end_ns: u64,
    _exec_end_ns: u64,
) -> *mut ErrorHandle {
    with(instance, |i| {
        *i.batch_compute.lock() = Some((compute_start_ns, compute_end_ns));
        Ok(())
    })
}

/// The object behind `TRITONBACKEND_ModelInstanceResponseStatistics*`
/// (not zero-sized, so that each has its own address).
#[derive(Debug, Default)]
pub struct ResponseStatisticsHandle {
    _unused: u8,
}

/// `TRITONBACKEND_ModelInstanceResponseStatisticsNew`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceResponseStatisticsNew(
    response_statistics: *mut *mut ResponseStatisticsHandle,
) -> *mut ErrorHandle {
    status(|| {
        let handle = Box::into_raw(Box::<ResponseStatisticsHandle>::default());
        // SAFETY: an out-argument, null refused.
        unsafe { write(response_statistics, "response_statistics", handle) }.inspect_err(|_| {
            // SAFETY: just made, not handed out.
            drop(unsafe { Box::from_raw(handle) });
        })
    })
}

/// `TRITONBACKEND_ModelInstanceResponseStatisticsDelete`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceResponseStatisticsDelete(
    response_statistics: *mut ResponseStatisticsHandle,
) -> *mut ErrorHandle {
    status(|| {
        if !response_statistics.is_null() {
            // SAFETY: made by ResponseStatisticsNew; the caller gives it up.
            drop(unsafe { Box::from_raw(response_statistics) });
        }
        Ok(())
    })
}

/// Accepts a setter's call on `response_statistics`.
fn accept(response_statistics: *mut ResponseStatisticsHandle) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or live statistics.
        unsafe { arg(response_statistics, "response_statistics") }.map(|_| ())
    })
}

/// `TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance(
    response_statistics: *mut ResponseStatisticsHandle,
    _model_instance: *mut InstanceHandle,
) -> *mut ErrorHandle {
    accept(response_statistics)
}

/// `TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory(
    response_statistics: *mut ResponseStatisticsHandle,
    _response_factory: *mut std::ffi::c_void,
) -> *mut ErrorHandle {
    accept(response_statistics)
}

/// `TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart(
    response_statistics: *mut ResponseStatisticsHandle,
    _response_start: u64,
) -> *mut ErrorHandle {
    accept(response_statistics)
}

/// `TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart(
    response_statistics: *mut ResponseStatisticsHandle,
    _compute_output_start: u64,
) -> *mut ErrorHandle {
    accept(response_statistics)
}

/// `TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd(
    response_statistics: *mut ResponseStatisticsHandle,
    _response_end: u64,
) -> *mut ErrorHandle {
    accept(response_statistics)
}

/// `TRITONBACKEND_ModelInstanceResponseStatisticsSetError`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceResponseStatisticsSetError(
    response_statistics: *mut ResponseStatisticsHandle,
    _error: *mut ErrorHandle,
) -> *mut ErrorHandle {
    accept(response_statistics)
}

/// `TRITONBACKEND_ModelInstanceReportResponseStatistics`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceReportResponseStatistics(
    response_statistics: *mut ResponseStatisticsHandle,
) -> *mut ErrorHandle {
    accept(response_statistics)
}
