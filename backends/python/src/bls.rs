//! BLS: a model's `InferenceRequest.exec()` runs another model of this
//! server; its responses go back to the stub as `BlsResponse` frames, their
//! tensors copied once into arena_in.

use std::sync::Arc;

use oxiserve_backend::{CancelFlag, ModelHost, StreamEvent, Trace};
use oxiserve_types::{Error, InferRequest, InferResponse, Result};
use parking_lot::Mutex;

use crate::{
    arena::InArena,
    connection::Connection,
    convert,
    inflight::InFlight,
    lane::DirectCalls,
    protocol::{NO_BLOCK, Payload, ToStub, WireResponse},
};

/// One BLS call of the stub.
pub(crate) struct Call {
    pub bls_id: u64,
    /// The caller iterates over many responses.
    pub decoupled: bool,
    pub request: Result<InferRequest>,
    /// The call's own trace, a child of its request's, when it joins one.
    pub trace: Option<Trace>,
}

/// Runs `call` on `host`; answers the stub with its events over
/// `connection`, their tensors in `arena_in`. The call's cancel flag is in
/// `inflight` while it runs. A call that succeeds on a model with lanes
/// (`direct`: the calling process's) is offered one of them.
pub(crate) fn start(
    host: &dyn ModelHost,
    connection: &Arc<Connection>,
    arena_in: &Arc<InArena>,
    inflight: &Arc<Mutex<InFlight>>,
    direct: Option<&DirectCalls>,
    call: Call,
) {
    let Call {
        bls_id,
        decoupled,
        request,
        trace,
    } = call;
    let reply = Reply {
        bls_id,
        connection: connection.clone(),
        arena_in: arena_in.clone(),
        inflight: inflight.clone(),
        direct: direct.filter(|_| !decoupled).cloned(),
    };
    let fail = |e: Error| {
        reply.event(StreamEvent {
            response: Some(Err(e)),
            is_final: true,
        })
    };
    let request = match request {
        Ok(request) => request,
        Err(e) => return fail(e),
    };
    let name = request.model_name.clone();
    // Triton's words for a call that never reached the model.
    let not_run = |e: Error| {
        Error::internal(format!(
            "Model {name} - Error when running inference: Failed for execute the inference \
             request. {}",
            e.message
        ))
    };
    if !decoupled {
        match host.is_decoupled(&name, request.model_version) {
            Ok(false) => {}
            Ok(true) => {
                return fail(Error::internal(format!(
                    "Model {name} - Error when running inference: Model {name} is using the \
                     decoupled. The current BLS request call doesn't support models using the \
                     decoupled transaction policy. Please use 'decoupled=True' argument to the \
                     'exec' or 'async_exec' calls for decoupled models.'"
                )));
            }
            Err(e) => return fail(not_run(e)),
        }
    }
    let cancel = CancelFlag::default();
    inflight.lock().bls.insert(bls_id, cancel.clone());
    let forward = reply.clone();
    let on_event = Box::new(move |event| forward.event(event));
    let queued = host.infer(request, cancel, on_event, trace);
    if let Err(e) = queued {
        inflight.lock().bls.remove(&bls_id);
        fail(not_run(e));
    }
}

/// Where one BLS call's events go.
#[derive(Clone)]
struct Reply {
    bls_id: u64,
    connection: Arc<Connection>,
    arena_in: Arc<InArena>,
    inflight: Arc<Mutex<InFlight>>,
    /// Where to find a lane to offer, for a call with one response.
    direct: Option<DirectCalls>,
}

impl Reply {
    fn event(&self, event: StreamEvent) {
        if event.is_final {
            self.inflight.lock().bls.remove(&self.bls_id);
        }
        if let (Some(direct), Some(Ok(response)), true) =
            (&self.direct, &event.response, event.is_final)
            && let Some(lane) = direct.lanes.offer(
                &response.model_name,
                response.model_version,
                self.bls_id,
                direct.own_lane.as_ref(),
            )
        {
            let _ = self.connection.send(&ToStub::LaneOffer {
                bls_id: self.bls_id,
                path: lane.path.display().to_string(),
                instance: lane.instance,
            });
        }
        let response = event.response.map(|r| self.payload(r));
        let message = ToStub::BlsResponse {
            bls_id: self.bls_id,
            is_final: event.is_final,
            response,
        };
        // A stub that died meanwhile needs no answer.
        let _ = self.connection.send(&message);
    }

    fn payload(&self, response: Result<InferResponse>) -> Payload {
        // Triton's BLS reports every failure of the called model as INTERNAL.
        let response = response.map_err(|e| Error::internal(e.message));
        let written = response.and_then(|r| {
            let parts: Vec<&[u8]> = r.outputs.iter().map(|t| t.data.as_ref()).collect();
            let block = self.arena_in.write_block(&parts)?;
            Ok((
                block.offset,
                convert::wire_response(&r.outputs, &r.parameters, &block.parts),
            ))
        });
        match written {
            Ok((block, response)) => Payload { block, response },
            Err(e) => Payload {
                block: NO_BLOCK,
                response: error_response(e),
            },
        }
    }
}

fn error_response(error: Error) -> WireResponse {
    WireResponse {
        error: Some(error),
        ..Default::default()
    }
}
