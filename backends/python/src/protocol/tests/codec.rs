//! The other direction of each message, for round-trip tests only: the stub's
//! encoding of [`FromStub`] and its decoding of [`ToStub`].

use oxiserve_types::Result;

use crate::protocol::decode::Reader;
use crate::protocol::encode::Writer;
use crate::protocol::{
    ExecuteRequest, FromStub, FromStubKind, MetricCall, ModelControlCall, SEND_FAILED, SEND_FINAL,
    ToStub, ToStubKind, frame_len, metric::kind_code,
};

impl FromStub {
    pub(super) fn encode(&self) -> Result<Vec<u8>> {
        let (kind, tag) = match self {
            FromStub::InitDone { .. } => (FromStubKind::InitDone, 0),
            FromStub::ExecuteDone { batch_id, .. } => (FromStubKind::ExecuteDone, *batch_id),
            FromStub::Send { rid, .. } => (FromStubKind::Send, *rid),
            FromStub::Bls { bls_id, .. } => (FromStubKind::Bls, *bls_id),
            FromStub::BlsCancel { bls_id } => (FromStubKind::BlsCancel, *bls_id),
            FromStub::IsCancelled { call_id, .. } => (FromStubKind::IsCancelled, *call_id),
            FromStub::Log { .. } => (FromStubKind::Log, 0),
            FromStub::Release { .. } => (FromStubKind::Release, 0),
            FromStub::FinalizeDone { .. } => (FromStubKind::FinalizeDone, 0),
            FromStub::AutoCompleteDone { .. } => (FromStubKind::AutoCompleteDone, 0),
            FromStub::Reschedule { .. } => (FromStubKind::Reschedule, 0),
            FromStub::Metric(call) => match call {
                MetricCall::FamilyNew { call_id, .. } => (FromStubKind::MetricFamilyNew, *call_id),
                MetricCall::New { metric_id, .. } => (FromStubKind::MetricNew, *metric_id),
                MetricCall::Update { metric_id, .. } => (FromStubKind::MetricUpdate, *metric_id),
                MetricCall::Value { call_id, .. } => (FromStubKind::MetricValue, *call_id),
                MetricCall::Delete { metric_id } => (FromStubKind::MetricDelete, *metric_id),
            },
            FromStub::ModelControl { call_id, call } => match call {
                ModelControlCall::Load { .. } => (FromStubKind::LoadModel, *call_id),
                ModelControlCall::Unload { .. } => (FromStubKind::UnloadModel, *call_id),
                ModelControlCall::IsReady { .. } => (FromStubKind::ModelReady, *call_id),
            },
            FromStub::LaneExecuted { .. } => (FromStubKind::LaneExecuted, 0),
        };
        let mut out = Vec::new();
        let mut w = Writer::frame(&mut out, kind as u32, tag);
        match self {
            FromStub::InitDone { error } | FromStub::FinalizeDone { error } => w.error(error),
            FromStub::ExecuteDone {
                batch_error,
                block,
                responses,
                ..
            } => {
                w.error(batch_error);
                w.count32(responses.len(), "responses");
                w.u64(*block);
                for r in responses {
                    w.response(r);
                }
            }
            FromStub::Send {
                is_final,
                failed,
                response,
                ..
            } => {
                let final_bit = if *is_final { SEND_FINAL } else { 0 };
                w.u32(final_bit | if *failed { SEND_FAILED } else { 0 });
                w.bool(response.is_some());
                if let Some(p) = response {
                    w.u64(p.block);
                    w.response(&p.response);
                }
            }
            FromStub::Bls {
                decoupled,
                model_name,
                model_version,
                block,
                request,
                parent_rid,
                ..
            } => {
                w.bool(*decoupled);
                w.str(model_name);
                w.i64(*model_version);
                w.u64(*block);
                w.request(request);
                w.u64(*parent_rid);
            }
            FromStub::BlsCancel { .. } => {}
            FromStub::IsCancelled { rid, .. } => w.u64(*rid),
            FromStub::Log {
                level,
                file,
                line,
                message,
            } => {
                w.u8(*level as u8);
                w.str(file);
                w.u32(*line);
                w.str(message);
            }
            FromStub::Release { offsets } => w.offsets(offsets),
            FromStub::Reschedule { rids } => w.offsets(rids),
            FromStub::AutoCompleteDone { error, config_json } => {
                w.error(error);
                w.str(config_json);
            }
            FromStub::Metric(call) => match call {
                MetricCall::FamilyNew {
                    name,
                    description,
                    kind,
                    ..
                } => {
                    w.str(name);
                    w.str(description);
                    w.u8(kind_code(*kind));
                }
                MetricCall::New {
                    family,
                    labels_json,
                    buckets,
                    ..
                } => {
                    w.str(family);
                    w.str(labels_json);
                    w.bool(buckets.is_some());
                    if let Some(buckets) = buckets {
                        w.count32(buckets.len(), "buckets");
                        buckets.iter().for_each(|b| w.f64(*b));
                    }
                }
                MetricCall::Update { op, value, .. } => {
                    w.u8(op.code());
                    w.f64(*value);
                }
                MetricCall::Value { metric_id, .. } => w.u64(*metric_id),
                MetricCall::Delete { .. } => {}
            },
            FromStub::ModelControl { call, .. } => match call {
                ModelControlCall::Load {
                    model_name,
                    config,
                    files,
                } => {
                    w.str(model_name);
                    w.str(config);
                    w.count32(files.len(), "files");
                    for (name, contents) in files {
                        w.str(name);
                        w.blob(contents);
                    }
                }
                ModelControlCall::Unload {
                    model_name,
                    unload_dependents,
                } => {
                    w.str(model_name);
                    w.bool(*unload_dependents);
                }
                ModelControlCall::IsReady {
                    model_name,
                    model_version,
                } => {
                    w.str(model_name);
                    w.str(model_version);
                }
            },
            FromStub::LaneExecuted { executions } => {
                w.count32(executions.len(), "executions");
                for e in executions {
                    w.u64(e.compute.as_nanos() as u64);
                    w.bool(e.failed);
                }
            }
        }
        w.finish()?;
        Ok(out)
    }
}

impl ToStub {
    /// Decodes a whole frame (length prefix included).
    pub(super) fn decode(frame: &[u8]) -> Result<ToStub> {
        let len = frame_len(frame[..4].try_into().unwrap())?;
        assert_eq!(len, frame.len() - 4, "length prefix");
        let mut r = Reader::new(&frame[4..]);
        let kind = ToStubKind::from_code(r.u32()?).expect("kind");
        let tag = r.u64()?;
        let msg = match kind {
            ToStubKind::Init => {
                let n = r.u16()? as usize;
                let args = r.list(n, |r| Ok((r.str()?, r.str()?)))?;
                ToStub::Init {
                    args,
                    model_file: r.str()?,
                    decoupled: r.bool()?,
                    idle_spin_us: r.u32()?,
                    lane: r.str()?,
                }
            }
            ToStubKind::Execute => {
                let block = r.u64()?;
                let n = r.u32()? as usize;
                let requests = r.list(n, |r| {
                    Ok(ExecuteRequest {
                        rid: r.u64()?,
                        request: r.request()?,
                    })
                })?;
                ToStub::Execute {
                    batch_id: tag,
                    block,
                    requests,
                }
            }
            ToStubKind::Finalize => ToStub::Finalize,
            ToStubKind::BlsResponse => {
                let is_final = r.bool()?;
                let response = if r.bool()? { Some(r.payload()?) } else { None };
                ToStub::BlsResponse {
                    bls_id: tag,
                    is_final,
                    response,
                }
            }
            ToStubKind::Reply => ToStub::Reply {
                call_id: tag,
                value: r.bool()?,
            },
            ToStubKind::Release => ToStub::Release {
                offsets: r.offsets()?,
            },
            ToStubKind::AutoComplete => ToStub::AutoComplete {
                model_file: r.str()?,
                config_json: r.str()?,
            },
            ToStubKind::MetricReply => {
                let error = r.error()?;
                let value = r.f64()?;
                ToStub::MetricReply {
                    call_id: tag,
                    result: error.map_or(Ok(value), Err),
                }
            }
            ToStubKind::ModelControlReply => {
                let error = r.error()?;
                let ready = r.bool()?;
                ToStub::ModelControlReply {
                    call_id: tag,
                    result: error.map_or(Ok(ready), Err),
                }
            }
            ToStubKind::LaneOffer => ToStub::LaneOffer {
                bls_id: tag,
                path: r.str()?,
                instance: r.str()?,
            },
        };
        r.finish()?;
        Ok(msg)
    }
}
