//! A sampled request's trace and the traces it spawns (ensemble steps, BLS
//! calls): what they record, and the hand-over of the records to the
//! trace's setting once every handle of the request's trace is gone.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Instant,
};

use opentelemetry::trace::SpanContext;
use oxiserve_types::Tensor;
use parking_lot::Mutex;

use crate::{
    activity::{Activity, TensorActivity},
    record::{FinishedTrace, Record},
    sampler::Sampler,
    tensor_text::TensorText,
};

/// Trace ids count from 1 over the process (0 means "no parent").
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One trace: a handle on a sampled request or on one it spawned. Clones
/// are the same trace; the records are written (or exported) when the
/// last handle of the request's trace and of every trace it spawned is
/// dropped.
#[derive(Clone, Debug)]
pub struct Trace {
    id: u64,
    parent_id: u64,
    root: Arc<Root>,
}

/// The records of a request's trace and of the traces it spawned.
#[derive(Debug)]
struct Root {
    sampler: Arc<Sampler>,
    started: Instant,
    remote_parent: Option<SpanContext>,
    records: Mutex<Vec<(u64, Record)>>,
}

impl Drop for Root {
    fn drop(&mut self) {
        self.sampler.finish(FinishedTrace {
            started: self.started,
            remote_parent: self.remote_parent.take(),
            records: std::mem::take(self.records.get_mut()),
        });
    }
}

impl Trace {
    /// A new request's trace, sampled by `sampler`.
    pub(crate) fn start(sampler: Arc<Sampler>, remote_parent: Option<SpanContext>) -> Self {
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            parent_id: 0,
            root: Arc::new(Root {
                sampler,
                started: Instant::now(),
                remote_parent,
                records: Mutex::new(Vec::new()),
            }),
        }
    }

    /// A trace for a request this one spawns (an ensemble step, a BLS
    /// call): a new id whose parent is this one.
    pub fn child(&self) -> Trace {
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            parent_id: self.id,
            root: self.root.clone(),
        }
    }

    /// The request reached model `name` (version `version`) at `at`: records
    /// the model, then `REQUEST_START`.
    pub fn request_start(&self, name: &str, version: i64, request_id: &str, at: Instant) {
        if !self.root.sampler.level().timestamps {
            return;
        }
        let model = Record::Model {
            name: name.to_string(),
            version,
            request_id: request_id.to_string(),
            parent_id: self.parent_id,
        };
        let start = Record::Timestamp {
            activity: Activity::RequestStart,
            at,
        };
        let mut records = self.root.records.lock();
        records.push((self.id, model));
        records.push((self.id, start));
    }

    /// Records `activity` at `at` (with level `TIMESTAMPS`). The frontend's
    /// activities are the whole request's: report them on the request's
    /// own trace.
    pub fn report(&self, activity: Activity, at: Instant) {
        if self.root.sampler.level().timestamps {
            let record = Record::Timestamp { activity, at };
            self.root.records.lock().push((self.id, record));
        }
    }

    /// Records `tensors` seen at `activity` (with level `TENSORS`).
    pub fn report_tensors(&self, activity: TensorActivity, tensors: &[Tensor]) {
        if !self.root.sampler.level().tensors {
            return;
        }
        let mut records = self.root.records.lock();
        for tensor in tensors {
            let tensor = TensorText::new(tensor);
            records.push((self.id, Record::Tensor { activity, tensor }));
        }
    }
}
