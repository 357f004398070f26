//! Server -> stub: [`ToStub`] messages to whole frames, length prefix included.

use oxiserve_types::{Error, Result};

use super::{
    Correlation, MAX_FRAME_LEN, NO_ERROR, TensorDesc, ToStub, ToStubKind, WireRequest,
    WireResponse, dtype_code, triton_code,
};

impl ToStub {
    /// The whole frame, length prefix included.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// Appends the whole frame to `out` (to write pending releases and a
    /// message with one `write_all`). On error `out` is left as it was.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<()> {
        let (kind, tag) = match self {
            ToStub::Init { .. } => (ToStubKind::Init, 0),
            ToStub::Execute { batch_id, .. } => (ToStubKind::Execute, *batch_id),
            ToStub::Finalize => (ToStubKind::Finalize, 0),
            ToStub::BlsResponse { bls_id, .. } => (ToStubKind::BlsResponse, *bls_id),
            ToStub::Reply { call_id, .. } => (ToStubKind::Reply, *call_id),
            ToStub::Release { .. } => (ToStubKind::Release, 0),
            ToStub::AutoComplete { .. } => (ToStubKind::AutoComplete, 0),
            ToStub::MetricReply { call_id, .. } => (ToStubKind::MetricReply, *call_id),
            ToStub::ModelControlReply { call_id, .. } => (ToStubKind::ModelControlReply, *call_id),
            ToStub::LaneOffer { bls_id, .. } => (ToStubKind::LaneOffer, *bls_id),
        };
        let mut w = Writer::frame(out, kind as u32, tag);
        match self {
            ToStub::Init {
                args,
                model_file,
                decoupled,
                idle_spin_us,
                lane,
            } => {
                w.count16(args.len(), "initialize arguments");
                for (key, value) in args {
                    w.str(key);
                    w.str(value);
                }
                w.str(model_file);
                w.bool(*decoupled);
                w.u32(*idle_spin_us);
                w.str(lane);
            }
            ToStub::Execute {
                block, requests, ..
            } => {
                w.u64(*block);
                w.count32(requests.len(), "requests");
                for r in requests {
                    w.u64(r.rid);
                    w.request(&r.request);
                }
            }
            ToStub::Finalize => {}
            ToStub::BlsResponse {
                is_final, response, ..
            } => {
                w.bool(*is_final);
                w.bool(response.is_some());
                if let Some(payload) = response {
                    w.u64(payload.block);
                    w.response(&payload.response);
                }
            }
            ToStub::Reply { value, .. } => w.bool(*value),
            ToStub::Release { offsets } => w.offsets(offsets),
            ToStub::AutoComplete {
                model_file,
                config_json,
            } => {
                w.str(model_file);
                w.str(config_json);
            }
            ToStub::MetricReply { result, .. } => {
                w.error(&result.as_ref().err().cloned());
                w.f64(*result.as_ref().unwrap_or(&0.0));
            }
            ToStub::ModelControlReply { result, .. } => {
                w.error(&result.as_ref().err().cloned());
                w.bool(*result.as_ref().unwrap_or(&false));
            }
            ToStub::LaneOffer { path, instance, .. } => {
                w.str(path);
                w.str(instance);
            }
        }
        w.finish()
    }
}

/// Appends one frame to a buffer. Counts or a frame too large for their
/// fields are remembered and reported by [`Writer::finish`], which then
/// removes the partial frame.
pub(super) struct Writer<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    error: Option<String>,
}

impl<'a> Writer<'a> {
    pub(super) fn frame(out: &'a mut Vec<u8>, kind: u32, tag: u64) -> Self {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        let mut w = Writer {
            out,
            start,
            error: None,
        };
        w.u32(kind);
        w.u64(tag);
        w
    }

    pub(super) fn finish(self) -> Result<()> {
        let len = self.out.len() - self.start - 4;
        let error = self.error.or_else(|| {
            (len > MAX_FRAME_LEN)
                .then(|| format!("frame of {len} bytes exceeds the limit of {MAX_FRAME_LEN}"))
        });
        if let Some(error) = error {
            self.out.truncate(self.start);
            return Err(Error::internal(format!(
                "python backend: cannot encode a frame for the stub: {error}"
            )));
        }
        // len <= MAX_FRAME_LEN < u32::MAX.
        self.out[self.start..self.start + 4].copy_from_slice(&(len as u32).to_le_bytes());
        Ok(())
    }

    pub(super) fn u8(&mut self, v: u8) {
        self.out.push(v);
    }
    pub(super) fn bool(&mut self, v: bool) {
        self.u8(v as u8);
    }
    fn u16(&mut self, v: u16) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn i64(&mut self, v: i64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn f64(&mut self, v: f64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    fn count16(&mut self, n: usize, what: &str) {
        match u16::try_from(n) {
            Ok(n) => self.u16(n),
            Err(_) => self.fail(format!("{n} {what} (at most {})", u16::MAX)),
        }
    }
    pub(super) fn count32(&mut self, n: usize, what: &str) {
        match u32::try_from(n) {
            Ok(n) => self.u32(n),
            Err(_) => self.fail(format!("{n} {what} (at most {})", u32::MAX)),
        }
    }
    fn fail(&mut self, message: String) {
        self.error.get_or_insert(message);
    }

    /// A `str` (also used for blobs). A length past `u32` makes the frame too
    /// large, which `finish` reports.
    pub(super) fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.out.extend_from_slice(s.as_bytes());
    }

    /// The stub's `blob` (in round-trip tests only: the server sends none).
    #[cfg(test)]
    pub(super) fn blob(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.out.extend_from_slice(b);
    }

    pub(super) fn offsets(&mut self, offsets: &[u64]) {
        self.count32(offsets.len(), "offsets");
        for &o in offsets {
            self.u64(o);
        }
    }

    fn tensor(&mut self, t: &TensorDesc) {
        self.str(&t.name);
        self.u8(dtype_code(t.datatype));
        match u8::try_from(t.dims.len()) {
            Ok(n) => self.u8(n),
            Err(_) => self.fail(format!("tensor '{}' has {} dims", t.name, t.dims.len())),
        }
        for &d in &t.dims {
            self.i64(d);
        }
        self.u64(t.offset);
        self.u64(t.nbytes);
    }

    fn tensors(&mut self, tensors: &[TensorDesc]) {
        self.count16(tensors.len(), "tensors");
        for t in tensors {
            self.tensor(t);
        }
    }

    pub(super) fn error(&mut self, error: &Option<Error>) {
        match error {
            None => {
                self.u32(NO_ERROR);
                self.str("");
            }
            Some(e) => {
                self.u32(triton_code(e.kind));
                self.str(&e.message);
            }
        }
    }

    pub(super) fn response(&mut self, r: &WireResponse) {
        self.error(&r.error);
        self.str(&r.parameters_json);
        self.tensors(&r.outputs);
    }

    /// The request fields after `rid` (Execute) or `model_version` (Bls).
    pub(super) fn request(&mut self, r: &WireRequest) {
        self.u32(r.flags);
        let (kind, n, s) = match &r.correlation {
            Correlation::None => (0, 0, ""),
            Correlation::U64(n) => (1, *n, ""),
            Correlation::Str(s) => (2, 0, s.as_str()),
        };
        self.u8(kind);
        self.u64(n);
        self.str(s);
        self.str(&r.request_id);
        self.str(&r.parameters_json);
        self.u64(r.timeout_us);
        self.tensors(&r.inputs);
        self.count16(r.outputs.len(), "requested outputs");
        for name in &r.outputs {
            self.str(name);
        }
    }
}
