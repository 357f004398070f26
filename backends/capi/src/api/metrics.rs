//! `TRITONSERVER_MetricFamily*`, `TRITONSERVER_MetricArgs*` and
//! `TRITONSERVER_Metric*`: custom metrics on the server's `/metrics`.

use std::{
    ffi::c_char,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use oxiserve_backend::metrics::{Metric, MetricFamily, MetricKind};
use oxiserve_types::{Error, Result};

use crate::{
    error::{ErrorHandle, arg, status, write},
    ffi::{null_argument, str_of},
    metrics::registry,
    parameter::{CValue, ParameterHandle},
};

/// The object behind a `TRITONSERVER_MetricFamily*`.
#[derive(Debug)]
pub struct FamilyHandle {
    family: Arc<MetricFamily>,
    /// How many metrics made from this handle are not deleted yet.
    metrics: Arc<AtomicUsize>,
}

/// The object behind a `TRITONSERVER_MetricArgs*`.
#[derive(Debug, Default)]
pub struct MetricArgsHandle {
    buckets: Option<Vec<f64>>,
}

/// The object behind a `TRITONSERVER_Metric*`.
#[derive(Debug)]
pub struct MetricHandle {
    metric: Metric,
    kind: MetricKind,
    family_metrics: Arc<AtomicUsize>,
}

fn kind_of(code: u32) -> Option<MetricKind> {
    match code {
        0 => Some(MetricKind::Counter),
        1 => Some(MetricKind::Gauge),
        2 => Some(MetricKind::Histogram),
        _ => None,
    }
}

fn code_of(kind: MetricKind) -> u32 {
    match kind {
        MetricKind::Counter => 0,
        MetricKind::Gauge => 1,
        MetricKind::Histogram => 2,
    }
}

/// `TRITONSERVER_MetricFamilyNew`: a family the caller owns, on the
/// server's `/metrics` once it has a metric.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MetricFamilyNew(
    family: *mut *mut FamilyHandle,
    kind: u32,
    name: *const c_char,
    description: *const c_char,
) -> *mut ErrorHandle {
    status(|| {
        let kind = kind_of(kind).ok_or_else(|| {
            Error::invalid_arg("Unsupported kind passed to MetricFamily constructor.")
        })?;
        // SAFETY: each is null or a C string.
        let (name, description) = unsafe { (str_of(name), str_of(description)) };
        let name = name.ok_or_else(|| null_argument("name"))?;
        let registered = registry().family(name, description.unwrap_or_default(), kind)?;
        let handle = Box::into_raw(Box::new(FamilyHandle {
            family: registered,
            metrics: Arc::default(),
        }));
        // SAFETY: an out-argument, null refused.
        unsafe { write(family, "family", handle) }.inspect_err(|_| {
            // SAFETY: just made, not handed out.
            drop(unsafe { Box::from_raw(handle) });
        })
    })
}

/// `TRITONSERVER_MetricFamilyDelete`: refused while metrics of it live.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MetricFamilyDelete(family: *mut FamilyHandle) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a family the caller owns.
        let handle = unsafe { arg(family, "family") }?;
        if handle.metrics.load(Ordering::Acquire) > 0 {
            return Err(Error::internal(
                "Must call MetricDelete on all dependent metrics before calling \
                 MetricFamilyDelete.",
            ));
        }
        // SAFETY: the caller gives it up.
        drop(unsafe { Box::from_raw(family) });
        Ok(())
    })
}

/// `TRITONSERVER_GetMetricFamilyKind`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_GetMetricFamilyKind(
    family: *mut FamilyHandle,
    kind: *mut u32,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a live family.
        let handle = unsafe { arg(family, "family") }?;
        // SAFETY: an out-argument, null refused.
        unsafe { write(kind, "kind", code_of(handle.family.kind())) }
    })
}

/// `TRITONSERVER_MetricArgsNew`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MetricArgsNew(args: *mut *mut MetricArgsHandle) -> *mut ErrorHandle {
    status(|| {
        let handle = Box::into_raw(Box::<MetricArgsHandle>::default());
        // SAFETY: an out-argument, null refused.
        unsafe { write(args, "args", handle) }.inspect_err(|_| {
            // SAFETY: just made, not handed out.
            drop(unsafe { Box::from_raw(handle) });
        })
    })
}

/// `TRITONSERVER_MetricArgsSetHistogram`: the buckets' upper bounds.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MetricArgsSetHistogram(
    args: *mut MetricArgsHandle,
    buckets: *const f64,
    buckets_count: u64,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or arguments the caller owns.
        let args = unsafe { args.as_mut() }.ok_or_else(|| null_argument("args"))?;
        let bounds = if buckets_count == 0 {
            Vec::new()
        } else if buckets.is_null() {
            return Err(null_argument("buckets"));
        } else {
            // SAFETY: the caller gives `buckets_count` bounds at `buckets`.
            unsafe { std::slice::from_raw_parts(buckets, buckets_count as usize) }.to_vec()
        };
        args.buckets = Some(bounds);
        Ok(())
    })
}

/// `TRITONSERVER_MetricArgsDelete`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MetricArgsDelete(args: *mut MetricArgsHandle) -> *mut ErrorHandle {
    status(|| {
        if !args.is_null() {
            // SAFETY: arguments the caller owned and gives up.
            drop(unsafe { Box::from_raw(args) });
        }
        Ok(())
    })
}

/// `TRITONSERVER_MetricNew`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MetricNew(
    metric: *mut *mut MetricHandle,
    family: *mut FamilyHandle,
    labels: *const *const ParameterHandle,
    label_count: u64,
) -> *mut ErrorHandle {
    TRITONSERVER_MetricNewWithArgs(metric, family, labels, label_count, std::ptr::null())
}

/// `TRITONSERVER_MetricNewWithArgs`: a metric of `family` with string
/// labels, the caller's until `TRITONSERVER_MetricDelete`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MetricNewWithArgs(
    metric: *mut *mut MetricHandle,
    family: *mut FamilyHandle,
    labels: *const *const ParameterHandle,
    label_count: u64,
    args: *const MetricArgsHandle,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a live family.
        let family = unsafe { arg(family, "family") }?;
        let labels = label_pairs(labels, label_count)?;
        // SAFETY: null or live arguments.
        let buckets = unsafe { args.as_ref() }.and_then(|a| a.buckets.as_deref());
        let made = family.family.metric(labels, buckets)?;
        family.metrics.fetch_add(1, Ordering::AcqRel);
        let handle = Box::into_raw(Box::new(MetricHandle {
            metric: made,
            kind: family.family.kind(),
            family_metrics: family.metrics.clone(),
        }));
        // SAFETY: an out-argument, null refused.
        unsafe { write(metric, "metric", handle) }.inspect_err(|_| {
            // SAFETY: just made, not handed out.
            let handle = unsafe { Box::from_raw(handle) };
            handle.family_metrics.fetch_sub(1, Ordering::AcqRel);
            handle.metric.delete();
        })
    })
}

/// The (name, value) pairs of string parameters `labels`.
fn label_pairs(labels: *const *const ParameterHandle, count: u64) -> Result<Vec<(String, String)>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if labels.is_null() {
        return Err(null_argument("labels"));
    }
    // SAFETY: the caller gives `count` parameter pointers at `labels`.
    let given = unsafe { std::slice::from_raw_parts(labels, count as usize) };
    given
        .iter()
        .map(|&label| {
            // SAFETY: null or a live parameter.
            let label = unsafe { arg(label, "label") }?;
            match &label.value {
                CValue::String(value) => Ok((label.name(), value.to_string_lossy().into_owned())),
                _ => Err(Error::invalid_arg(format!(
                    "metric label '{}' is not a string",
                    label.name()
                ))),
            }
        })
        .collect()
}

/// `TRITONSERVER_MetricDelete`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MetricDelete(metric: *mut MetricHandle) -> *mut ErrorHandle {
    status(|| {
        if metric.is_null() {
            return Err(null_argument("metric"));
        }
        // SAFETY: a metric the caller owned and gives up.
        let handle = unsafe { Box::from_raw(metric) };
        handle.family_metrics.fetch_sub(1, Ordering::AcqRel);
        handle.metric.delete();
        Ok(())
    })
}

/// Runs `f` on the metric `metric` points to.
fn with(
    metric: *mut MetricHandle,
    f: impl FnOnce(&MetricHandle) -> Result<()>,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a live metric.
        f(unsafe { arg(metric, "metric") }?)
    })
}

/// `TRITONSERVER_MetricValue`: a counter's or gauge's value.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MetricValue(
    metric: *mut MetricHandle,
    value: *mut f64,
) -> *mut ErrorHandle {
    with(metric, |m| {
        let current = m.metric.value()?;
        // SAFETY: an out-argument, null refused.
        unsafe { write(value, "value", current) }
    })
}

/// `TRITONSERVER_MetricIncrement`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MetricIncrement(
    metric: *mut MetricHandle,
    value: f64,
) -> *mut ErrorHandle {
    with(metric, |m| m.metric.increment(value))
}

/// `TRITONSERVER_MetricSet`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MetricSet(
    metric: *mut MetricHandle,
    value: f64,
) -> *mut ErrorHandle {
    with(metric, |m| m.metric.set(value))
}

/// `TRITONSERVER_MetricObserve`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MetricObserve(
    metric: *mut MetricHandle,
    value: f64,
) -> *mut ErrorHandle {
    with(metric, |m| m.metric.observe(value))
}

/// `TRITONSERVER_GetMetricKind`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_GetMetricKind(
    metric: *mut MetricHandle,
    kind: *mut u32,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(metric, |m| unsafe { write(kind, "kind", code_of(m.kind)) })
}
