//! The pump: one thread per instance process that reads every frame the
//! stub writes and acts on it: answers requests, runs BLS calls, logs, frees
//! arena blocks; and notices when the process dies.

use std::{
    io::{BufReader, Read},
    os::unix::net::UnixStream,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
        mpsc::Sender,
    },
    time::Duration,
};

use bytes::Bytes;
use oxiserve_backend::{BackendResponse, ModelHost};
use oxiserve_types::{Error, Result};
use parking_lot::Mutex;

use crate::{
    arena::{Arena, InArena, ReleaseHook},
    bls,
    connection::Connection,
    convert,
    inflight::{InFlight, OpenRequest},
    lane::DirectCalls,
    metrics::StubMetrics,
    model_control, model_log,
    polling::PollingReader,
    protocol::{self, FromStub, Payload, ToStub, WireResponse, decode::decode},
    zygote::Zygote,
};

/// What the pump tells the instance thread.
#[derive(Debug)]
pub(crate) enum Event {
    Initialized(Result<()>),
    Executed(u64),
    Finalized(Result<()>),
    /// The process is gone; the text explains it.
    Died(String),
}

/// Everything the pump of one process uses.
pub(crate) struct Pump {
    pub instance: String,
    pub pid: i32,
    pub zygote: Arc<Zygote>,
    pub connection: Arc<Connection>,
    pub arena_in: Arc<InArena>,
    pub arena_out: Arena,
    pub inflight: Arc<Mutex<InFlight>>,
    pub events: Sender<Event>,
    pub host: Arc<dyn ModelHost>,
    /// Set before the server ends the process on purpose.
    pub closing: Arc<AtomicBool>,
    /// Cleared when the process is gone.
    pub alive: Arc<AtomicBool>,
    /// How long the pump polls for the next frame before it sleeps.
    pub idle_spin: Duration,
    /// The custom metrics the process holds.
    pub metrics: StubMetrics,
    /// Direct BLS calls, for an instance's own process.
    pub direct: Option<DirectCalls>,
}

impl Pump {
    /// Reads frames until the socket closes or a frame is malformed.
    pub fn run(mut self, socket: UnixStream) {
        let release = self.connection.release_hook();
        let socket = PollingReader::new(socket, self.idle_spin);
        let mut reader = BufReader::with_capacity(64 * 1024, socket);
        let mut frame = Vec::new();
        let outcome = loop {
            match read_frame(&mut reader, &mut frame).and_then(|()| decode(&frame)) {
                Ok(message) => {
                    if let FromStub::ExecuteDone { responses, .. } = &message {
                        // This batch still counts among the executing ones.
                        let another = self.inflight.lock().batches.len() > 1;
                        reader
                            .get_mut()
                            .set_polling(polls_after(responses.len(), another));
                    }
                    self.handle(message, &release)
                }
                Err(e) => break e,
            }
        };
        self.died(outcome);
    }

    fn handle(&mut self, message: FromStub, release: &ReleaseHook) {
        match message {
            FromStub::InitDone { error } => {
                self.tell(Event::Initialized(error.map_or(Ok(()), Err)))
            }
            FromStub::FinalizeDone { error } => {
                self.tell(Event::Finalized(error.map_or(Ok(()), Err)))
            }
            FromStub::ExecuteDone {
                batch_id,
                batch_error,
                block,
                responses,
            } => {
                // The instance may send its next batch while these responses go out.
                let open = self.take_batch(batch_id);
                self.tell(Event::Executed(batch_id));
                let view = convert::out_block(
                    block,
                    responses.iter().flat_map(|r| &r.outputs),
                    &self.arena_out,
                    release,
                );
                let outcome = view.map(|view| (block, view, responses));
                self.batch_done(open, batch_error.map_or(outcome, Err));
            }
            FromStub::Send {
                rid,
                is_final,
                failed,
                response,
            } => self.send(rid, is_final, failed, response, release),
            FromStub::Bls {
                bls_id,
                decoupled,
                model_name,
                model_version,
                block,
                request,
                parent_rid,
            } => {
                // The call joins its request's trace as a child trace.
                let trace = self
                    .inflight
                    .lock()
                    .requests
                    .get(&parent_rid)
                    .and_then(|r| r.trace.as_ref().map(|t| t.child()));
                let request = convert::bls_request(
                    model_name,
                    model_version,
                    block,
                    request,
                    &self.arena_out,
                    release,
                );
                bls::start(
                    &*self.host,
                    &self.connection,
                    &self.arena_in,
                    &self.inflight,
                    self.direct.as_ref(),
                    bls::Call {
                        bls_id,
                        decoupled,
                        request,
                        trace,
                    },
                );
            }
            FromStub::BlsCancel { bls_id } => {
                if let Some(flag) = self.inflight.lock().bls.get(&bls_id) {
                    flag.cancel();
                }
            }
            FromStub::IsCancelled { call_id, rid } => {
                let value = self
                    .inflight
                    .lock()
                    .requests
                    .get(&rid)
                    .is_some_and(|r| r.sink.is_cancelled());
                let _ = self.connection.send(&ToStub::Reply { call_id, value });
            }
            FromStub::Log {
                level,
                file,
                line,
                message,
            } => model_log::write(level, &file, line, &message),
            FromStub::Release { offsets } => {
                for offset in offsets {
                    if let Err(e) = self.arena_in.release(offset) {
                        log::warn!("{}: {}", self.instance, e.message);
                    }
                }
            }
            FromStub::Reschedule { rids } => self.reschedule(rids),
            FromStub::AutoCompleteDone { .. } => {
                log::warn!("{}: unexpected auto-complete answer ignored", self.instance);
            }
            FromStub::Metric(call) => {
                if let Some(reply) = self.metrics.handle(call, &self.instance) {
                    let _ = self.connection.send(&reply);
                }
            }
            FromStub::ModelControl { call_id, call } => {
                model_control::start(&self.host, &self.connection, call_id, call)
            }
            FromStub::LaneExecuted { executions } => match &self.direct {
                Some(direct) => self
                    .host
                    .record_direct_executions(direct.version, &executions),
                None => log::warn!("{}: unexpected lane statistics ignored", self.instance),
            },
        }
    }

    /// The still open requests of batch `batch_id`, in batch order.
    fn take_batch(&self, batch_id: u64) -> Vec<Option<OpenRequest>> {
        let mut inflight = self.inflight.lock();
        if let Some(end) = inflight.ends.remove(&batch_id) {
            end.ended();
        }
        let rids = inflight.batches.remove(&batch_id).unwrap_or_default();
        rids.iter()
            .map(|rid| inflight.requests.remove(rid))
            .collect()
    }

    /// Answers a batch's open requests: with the batch error (they failed),
    /// or with the responses whose tensors are in `block` (`view` spans it),
    /// which succeed in the statistics even when they are errors, as in Triton.
    fn batch_done(
        &self,
        open: Vec<Option<OpenRequest>>,
        outcome: Result<(u64, Option<Bytes>, Vec<WireResponse>)>,
    ) {
        let (block, view, responses) = match outcome {
            Ok(outcome) => outcome,
            Err(error) => {
                for request in open.into_iter().flatten() {
                    request.sink.respond(Err(error.clone()));
                }
                return;
            }
        };
        if responses.is_empty() {
            // Decoupled, or answered through response senders: still open.
            let mut inflight = self.inflight.lock();
            for request in open.into_iter().flatten() {
                inflight.requests.insert(request.rid, request);
            }
            return;
        }
        for (request, response) in open.into_iter().zip(responses) {
            if let Some(request) = request {
                let response = respond(response, &request.outputs, block, view.as_ref());
                let mut sink = request.sink;
                let _ = sink.send_model_response(response, true);
            }
        }
    }

    /// A `Send` frame: a response of the model's, or (`failed`) the stub's
    /// answer for an execution that failed.
    fn send(
        &self,
        rid: u64,
        is_final: bool,
        failed: bool,
        payload: Option<Payload>,
        release: &ReleaseHook,
    ) {
        // The view first: a block whose request is gone still goes back.
        let payload = payload.map(|p| {
            let view = convert::out_block(p.block, &p.response.outputs, &self.arena_out, release);
            (p, view)
        });
        let mut inflight = self.inflight.lock();
        let Some(open) = inflight.requests.get_mut(&rid) else {
            return;
        };
        let response = payload.map(|(p, view)| {
            view.and_then(|view| respond(p.response, &open.outputs, p.block, view.as_ref()))
        });
        match (response, is_final) {
            (Some(response), _) if failed => {
                let _ = open.sink.send(response, is_final);
            }
            (Some(response), _) => {
                let _ = open.sink.send_model_response(response, is_final);
            }
            (None, true) => {}
            (None, false) => return,
        }
        if is_final
            && let Some(open) = inflight.requests.remove(&rid)
            && !open.sink.is_finished()
        {
            open.sink.finish();
        }
    }

    /// Hands requests the model released with RESCHEDULE back to their
    /// scheduler (iterative sequences). Where it cannot take them, Triton's
    /// core refuses the release ("Failed to release request: ...", logged)
    /// and the request is released for good; here it also fails with that
    /// text, so that no client waits for an answer that cannot come.
    fn reschedule(&self, rids: Vec<u64>) {
        let open: Vec<OpenRequest> = {
            let mut inflight = self.inflight.lock();
            rids.iter()
                .filter_map(|rid| inflight.requests.remove(rid))
                .collect()
        };
        for request in open {
            if let Err(sink) = request.sink.reschedule() {
                let text = "Request is released with TRITONSERVER_REQUEST_RELEASE_RESCHEDULE, \
                            while the model is not configured to handle such a flag.";
                log::error!("{}: Failed to release request: {text}", self.instance);
                sink.respond(Err(Error::invalid_arg(text)));
            }
        }
    }

    fn tell(&self, event: Event) {
        let _ = self.events.send(event);
    }

    /// The process ended (or broke the protocol): every open request fails
    /// with the reason, BLS calls are cancelled, the instance thread is told.
    fn died(self, cause: Error) {
        self.alive.store(false, Ordering::Relaxed);
        self.connection.close();
        let expected = self.closing.load(Ordering::Relaxed);
        let message = if expected {
            format!("the Python model instance '{}' was stopped", self.instance)
        } else {
            if cause.message.contains("protocol error") {
                log::error!("{}: {}", self.instance, cause.message);
                self.zygote.kill(self.pid);
            }
            let reason = self
                .zygote
                .exit_reason(self.pid, Duration::from_secs(1))
                .map_or_else(|| cause.message.clone(), |r| r.to_string());
            // Triton's sentence first (operators grep for it), then ours.
            format!(
                "Stub process '{0}' is not healthy. Python model instance '{0}' (pid {1}) \
                 exited unexpectedly ({reason}) while running this request; the instance is \
                 being restarted",
                self.instance, self.pid
            )
        };
        let mut inflight = std::mem::take(&mut *self.inflight.lock());
        for flag in inflight.bls.values() {
            flag.cancel();
        }
        for (_, open) in inflight.requests.drain() {
            open.sink.respond(Err(Error::internal(message.clone())));
        }
        if !expected {
            log::error!("{message}");
        }
        self.tell(Event::Died(message));
    }
}

/// Whether the pump polls for the next frame after a batch that answered
/// `responses` requests, `another` telling whether the process held another
/// batch already. Either means requests queued: the CPUs are busy, polling
/// would take turns from threads with work, and the next batch's answer is
/// a whole execution away (with one request per batch, as without a dynamic
/// batcher, only the batch already sent tells). A lone batch of one (or a
/// decoupled model's, answered by `Send` frames) means a light load, where
/// polling spares the stub the wake-up of a sleeping pump, also for the
/// batch its answer leads to (an ensemble's next step, sent to this process
/// while the pump handles the answer).
fn polls_after(responses: usize, another: bool) -> bool {
    responses <= 1 && !another
}

/// Reads one frame (the bytes after its length prefix) into `frame`.
fn read_frame(reader: &mut impl Read, frame: &mut Vec<u8>) -> Result<()> {
    let mut prefix = [0u8; 4];
    reader
        .read_exact(&mut prefix)
        .map_err(|e| Error::unavailable(format!("the stub's socket closed ({e})")))?;
    let len = protocol::frame_len(prefix)?;
    frame.resize(len, 0);
    reader
        .read_exact(frame)
        .map_err(|e| Error::unavailable(format!("the stub's socket closed mid-frame ({e})")))
}

/// A response whose tensors are in `block` (`view` spans it), keeping the
/// `wanted` outputs.
fn respond(
    response: WireResponse,
    wanted: &[String],
    block: u64,
    view: Option<&Bytes>,
) -> Result<BackendResponse> {
    if let Some(error) = response.error {
        return Err(error);
    }
    let parameters = convert::parse_parameters(&response.parameters_json)?;
    let mut outputs = convert::tensors(response.outputs, block, view);
    outputs.retain(|t| wanted.contains(&t.name));
    Ok(BackendResponse {
        outputs,
        parameters,
    })
}

#[cfg(test)]
mod tests {
    use super::polls_after;

    #[test]
    fn polls_only_after_a_lone_batch_of_one() {
        assert!(polls_after(1, false), "a lone request: a light load");
        assert!(polls_after(0, false), "a decoupled model's batch");
        assert!(
            !polls_after(1, true),
            "another batch already sent: requests queued"
        );
        assert!(
            !polls_after(3, false),
            "a batch of several: requests queued"
        );
    }
}
