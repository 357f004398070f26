//! A finished trace as the spans Triton makes of it: `InferRequest` (the
//! frontend's timestamps) over one span per model request (named after the
//! model; an ensemble step's or BLS call's under its parent's), each
//! execution a `compute` span under its model's span. All are server spans.

use std::{collections::HashMap, time::Instant};

use opentelemetry::{
    Context, KeyValue,
    trace::{Event, SpanKind, TraceContextExt, Tracer},
};
use opentelemetry_sdk::trace::SdkTracer;

use crate::{
    activity::Activity,
    clock::WallClock,
    record::{FinishedTrace, Record},
};

/// Starts and ends the spans of `trace` (the processor exports them).
pub(super) fn build(tracer: &SdkTracer, trace: &FinishedTrace) {
    let FinishedTrace {
        started,
        remote_parent,
        records,
    } = trace;
    let ended = Instant::now();
    let wall = WallClock::now();
    if records
        .iter()
        .any(|(_, r)| matches!(r, Record::Tensor { .. }))
    {
        log::error!("Tensor level tracing is not supported by the mode: opentelemetry");
    }
    let parent = match remote_parent {
        Some(remote) => Context::new().with_remote_span_context(remote.clone()),
        None => Context::new(),
    };
    let frontend: Vec<(Activity, Instant)> = timestamps(records)
        .filter(|(_, activity, _)| activity.is_frontend())
        .map(|(_, activity, at)| (activity, at))
        .collect();
    let request = tracer
        .span_builder("InferRequest")
        .with_kind(SpanKind::Server)
        .with_start_time(wall.at(*started))
        .with_events(events(&wall, &frontend))
        .start_with_context(tracer, &parent);
    let request = Context::new().with_span(request);
    let mut ids: Vec<u64> = records.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut models: HashMap<u64, Context> = HashMap::new();
    for id in ids {
        let Some((model, stamps)) = model_request(records, id) else {
            continue;
        };
        let parent = models.get(&model.parent_id).unwrap_or(&request);
        let span = model_span(tracer, &wall, &model, &stamps, ended, parent);
        models.insert(id, span);
    }
    request.span().end_with_timestamp(wall.at(ended));
}

/// One trace id's model and its core timestamps.
struct ModelRequest<'a> {
    id: u64,
    name: &'a str,
    version: i64,
    request_id: &'a str,
    parent_id: u64,
}

fn model_request(
    records: &[(u64, Record)],
    id: u64,
) -> Option<(ModelRequest<'_>, Vec<(Activity, Instant)>)> {
    let model = records.iter().find_map(|(of, record)| match record {
        Record::Model {
            name,
            version,
            request_id,
            parent_id,
        } if *of == id => Some(ModelRequest {
            id,
            name,
            version: *version,
            request_id,
            parent_id: *parent_id,
        }),
        _ => None,
    })?;
    let stamps = timestamps(records)
        .filter(|(of, activity, _)| *of == id && !activity.is_frontend())
        .map(|(_, activity, at)| (activity, at))
        .collect();
    Some((model, stamps))
}

/// The model's span (ended at `REQUEST_END`) with its `compute` spans;
/// returns its context, the parent of its children's spans.
fn model_span(
    tracer: &SdkTracer,
    wall: &WallClock,
    model: &ModelRequest<'_>,
    stamps: &[(Activity, Instant)],
    ended: Instant,
    parent: &Context,
) -> Context {
    let at = |wanted: Activity| {
        stamps
            .iter()
            .find(|(activity, _)| *activity == wanted)
            .map(|(_, at)| *at)
    };
    let start = at(Activity::RequestStart).unwrap_or(ended);
    let end = at(Activity::RequestEnd).unwrap_or(ended);
    let own: Vec<(Activity, Instant)> = stamps
        .iter()
        .copied()
        .filter(|(activity, _)| !activity.is_compute())
        .collect();
    let mut attributes = vec![
        KeyValue::new("triton.model_name", model.name.to_string()),
        KeyValue::new("triton.model_version", model.version),
        KeyValue::new("triton.trace_id", model.id as i64),
        KeyValue::new("triton.trace_parent_id", model.parent_id as i64),
    ];
    if !model.request_id.is_empty() {
        attributes.push(KeyValue::new(
            "triton.request_id",
            model.request_id.to_string(),
        ));
    }
    let span = tracer
        .span_builder(model.name.to_string())
        .with_kind(SpanKind::Server)
        .with_start_time(wall.at(start))
        .with_attributes(attributes)
        .with_events(events(wall, &own))
        .start_with_context(tracer, parent);
    let context = Context::new().with_span(span);
    for execution in executions(stamps) {
        let (first, last) = (execution[0].1, execution[execution.len() - 1].1);
        let compute = tracer
            .span_builder("compute")
            .with_kind(SpanKind::Server)
            .with_start_time(wall.at(first))
            .with_events(events(wall, &execution))
            .start_with_context(tracer, &context);
        let compute = Context::new().with_span(compute);
        compute.span().end_with_timestamp(wall.at(last));
    }
    context.span().end_with_timestamp(wall.at(end));
    context
}

/// The compute timestamps, one run from each `COMPUTE_START`.
fn executions(stamps: &[(Activity, Instant)]) -> Vec<Vec<(Activity, Instant)>> {
    let mut runs: Vec<Vec<(Activity, Instant)>> = Vec::new();
    for &(activity, at) in stamps.iter().filter(|(a, _)| a.is_compute()) {
        match runs.last_mut() {
            Some(run) if activity != Activity::ComputeStart => run.push((activity, at)),
            _ => runs.push(vec![(activity, at)]),
        }
    }
    runs
}

fn timestamps(records: &[(u64, Record)]) -> impl Iterator<Item = (u64, Activity, Instant)> + '_ {
    records.iter().filter_map(|(id, record)| match record {
        Record::Timestamp { activity, at } => Some((*id, *activity, *at)),
        _ => None,
    })
}

fn events(wall: &WallClock, stamps: &[(Activity, Instant)]) -> Vec<Event> {
    stamps
        .iter()
        .map(|(activity, at)| Event::new(activity.name(), wall.at(*at), Vec::new(), 0))
        .collect()
}
