//! One model instance: the object behind `TRITONBACKEND_ModelInstance*`,
//! made on the instance's own thread, where every batch runs through
//! `TRITONBACKEND_ModelInstanceExecute`.

use std::{
    ffi::{CString, c_void},
    ptr,
    sync::{Arc, atomic::AtomicPtr},
};

use oxiserve_backend::{
    BackendRequest, ComputeTiming, InstanceContext, InstanceKind, ModelInstance,
};
use oxiserve_proto::inference::{ModelInstanceGroup, model_instance_group::secondary_device};
use oxiserve_types::Result;
use parking_lot::Mutex;
use serde_json::{Map, Value};

use crate::{
    clock::instant_of,
    error::ErrorHandle,
    ffi::{KIND_CPU, KIND_GPU, KIND_MODEL, c_string},
    library::{call_entry_point, load_failure},
    message::MessageHandle,
    model::ModelHandle,
    request::{Outstanding, RequestHandle},
};

/// The object behind a `TRITONBACKEND_ModelInstance*`.
#[derive(Debug)]
pub struct InstanceHandle {
    pub name: CString,
    pub kind: u32,
    pub device_id: i32,
    pub passive: bool,
    pub profiles: Vec<CString>,
    /// (kind, id) of each secondary device.
    pub secondary_devices: Vec<(CString, i64)>,
    pub host_policy: MessageHandle,
    pub model: Arc<ModelHandle>,
    pub state: AtomicPtr<c_void>,
    /// The compute start and end (steady-clock ns) the backend reported for
    /// the batch running now (`TRITONBACKEND_ModelInstanceReportBatchStatistics`).
    pub batch_compute: Mutex<Option<(u64, u64)>>,
    /// The requests the backend holds.
    pub outstanding: Arc<Outstanding>,
}

/// A running instance.
#[derive(Debug)]
pub struct CapiInstance {
    /// Boxed: the backend holds its address.
    handle: Box<InstanceHandle>,
}

impl CapiInstance {
    /// Makes `instance` of `model` and initializes it; on failure it is
    /// finalized (as Triton does) and the error names the model.
    pub fn create(model: Arc<ModelHandle>, instance: &InstanceContext) -> Result<Self> {
        let config = model.config.lock().clone();
        let group = config
            .instance_group
            .iter()
            .filter(|g| is_instance_of(&instance.name, &g.name))
            .max_by_key(|g| g.name.len());
        let handle = Box::new(InstanceHandle {
            name: c_string(&instance.name),
            kind: match instance.kind {
                InstanceKind::Cpu => KIND_CPU,
                InstanceKind::Gpu => KIND_GPU,
                InstanceKind::Model => KIND_MODEL,
            },
            device_id: instance.device_id,
            passive: group.is_some_and(|g| g.passive),
            profiles: group.map_or_else(Vec::new, |g| {
                g.profile.iter().map(|p| c_string(p)).collect()
            }),
            secondary_devices: group.map_or_else(Vec::new, secondary_devices),
            host_policy: host_policy(group, instance),
            model,
            state: AtomicPtr::new(ptr::null_mut()),
            batch_compute: Mutex::default(),
            outstanding: Arc::default(),
        });
        let created = Self { handle };
        if let Some(initialize) = created.handle.model.backend.entry.instance_initialize {
            call_entry_point(
                "TRITONBACKEND_ModelInstanceInitialize",
                initialize,
                created.as_ptr(),
            )
            .map_err(|e| {
                let model = &created.handle.model;
                load_failure(&model.name(), &model.backend.path, e)
            })?;
        }
        Ok(created)
    }

    fn as_ptr(&self) -> *mut c_void {
        ptr::from_ref(&*self.handle).cast_mut().cast()
    }
}

impl ModelInstance for CapiInstance {
    fn execute(&mut self, requests: Vec<BackendRequest>, timing: &mut ComputeTiming) {
        let handle = &*self.handle;
        *handle.batch_compute.lock() = None;
        let info = handle.model.info();
        let mut batch: Vec<*mut RequestHandle> = requests
            .into_iter()
            .map(|request| {
                let request = Box::new(RequestHandle::new(
                    request,
                    info.clone(),
                    handle.outstanding.clone(),
                ));
                let id = request.id();
                let request = Box::into_raw(request);
                handle.outstanding.lock().insert(request as usize, id);
                request
            })
            .collect();
        let count = u32::try_from(batch.len()).unwrap_or(u32::MAX);
        let execute = handle.model.backend.entry.execute;
        // SAFETY: the library's TRITONBACKEND_ModelInstanceExecute with its
        // instance and `count` live requests; the array outlives the call.
        let error = unsafe { execute(self.as_ptr(), batch.as_mut_ptr().cast(), count) };
        if let Some((start, end)) = handle.batch_compute.lock().take() {
            timing.mark_compute(instant_of(start), instant_of(end));
        }
        // SAFETY: an error a backend returns is one TRITONSERVER_ErrorNew
        // made, handed over to the caller.
        let Some(error) = (unsafe { ErrorHandle::take(error) }) else {
            return;
        };
        // The requests stay the server's: each one not yet answered fails
        // with the backend's error.
        for request in batch {
            if handle
                .outstanding
                .lock()
                .remove(&(request as usize))
                .is_none()
            {
                continue;
            }
            // SAFETY: made by Box::into_raw above and, still outstanding,
            // not released by the backend.
            let request = unsafe { Box::from_raw(request) };
            if !request.sink.is_finished() {
                let _ = request.sink.send(Err(error.clone()), true);
            }
        }
    }
}

impl Drop for CapiInstance {
    fn drop(&mut self) {
        let model = self.handle.model.clone();
        if let Some(finalize) = model.backend.entry.instance_finalize
            && let Err(e) = call_entry_point(
                "TRITONBACKEND_ModelInstanceFinalize",
                finalize,
                self.as_ptr(),
            )
        {
            log::error!(
                "failed finalizing instance '{}' of model '{}': {}",
                self.handle.name.to_string_lossy(),
                model.name(),
                e.message
            );
        }
        for (request, id) in self.handle.outstanding.lock().drain() {
            log::warn!(
                "model '{}': the backend never released request '{id}'; its client gets an error",
                model.name()
            );
            // SAFETY: a request the backend never released is never freed
            // (the backend may still read it), so it is alive.
            let request = unsafe { &*(request as *const RequestHandle) };
            request.sink.abandon();
        }
    }
}

/// Whether `instance` (`<group>_<index>`) is an instance of `group`.
fn is_instance_of(instance: &str, group: &str) -> bool {
    instance
        .strip_prefix(group)
        .and_then(|rest| rest.strip_prefix('_'))
        .is_some_and(|index| !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()))
}

fn secondary_devices(group: &ModelInstanceGroup) -> Vec<(CString, i64)> {
    group
        .secondary_devices
        .iter()
        .map(|d| {
            let kind = secondary_device::SecondaryDeviceKind::try_from(d.kind)
                .map_or("KIND_NVDLA", |k| k.as_str_name());
            (c_string(kind), d.device_id)
        })
        .collect()
}

/// `{"<policy>": {}}`: the group's host policy, else Triton's default name
/// for the instance's device (`cpu`, `gpu_<id>`); no settings, as this
/// server takes no `--host-policy`.
fn host_policy(group: Option<&ModelInstanceGroup>, instance: &InstanceContext) -> MessageHandle {
    let name = match group.map(|g| g.host_policy.as_str()) {
        Some(policy) if !policy.is_empty() => policy.to_string(),
        _ if instance.kind == InstanceKind::Gpu => format!("gpu_{}", instance.device_id),
        _ => "cpu".to_string(),
    };
    let mut policy = Map::new();
    policy.insert(name, Value::Object(Map::new()));
    MessageHandle::of(&Value::Object(policy))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instance_belongs_to_the_group_its_name_starts_with() {
        assert!(is_instance_of("m_0_1", "m_0"));
        assert!(is_instance_of("m_0", "m"));
        assert!(!is_instance_of("m_0_x", "m_0"));
        assert!(!is_instance_of("mm_0", "m"));
        assert!(!is_instance_of("m_", "m"));
    }
}
