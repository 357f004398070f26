//! The instance socket's frames, byte for byte as `docs/design/python-wire.md`
//! describes them: `u32 len, u32 kind, u64 tag, body`, little-endian, no padding.
//!
//! The server encodes [`ToStub`] messages (one `Vec` per frame, length prefix
//! included, so the writer does one `write_all`) and decodes [`FromStub`]
//! messages from the `len` bytes after the prefix. Tensors travel as
//! [`TensorDesc`]s pointing into an arena; no tensor bytes pass through here.
//! A malformed frame decodes to an [`ErrorKind::Internal`] error saying what is
//! wrong; nothing here panics on input from the stub.

use std::fmt;

use oxiserve_types::{DataType, Error, ErrorKind, Result};

use crate::arena::ALIGN;

/// Bytes of `kind` + `tag`, the part of every frame counted by `len` before the body.
pub const HEADER_LEN: usize = 12;
/// The largest `len` accepted from the stub (and produced by [`ToStub::encode`]).
/// Only descriptors and JSON travel in frames, so this is generous.
pub const MAX_FRAME_LEN: usize = 256 << 20;
/// The most dimensions a tensor descriptor may have (numpy 2's limit).
pub const MAX_NDIM: usize = 64;
/// `BlsResponse.block` when the response has no tensors in arena_in.
pub const NO_BLOCK: u64 = u64::MAX;
/// `error.code` meaning "no error".
const NO_ERROR: u32 = u32::MAX;
/// `Send.flags` bit: the last frame for this rid.
const SEND_FINAL: u32 = 1;

/// Frame kinds the server sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ToStubKind {
    Init = 1,
    Execute = 2,
    Finalize = 3,
    BlsResponse = 4,
    Reply = 5,
    Release = 6,
    AutoComplete = 7,
}

impl ToStubKind {
    #[cfg(test)]
    fn from_code(code: u32) -> Option<Self> {
        use ToStubKind::*;
        [
            Init,
            Execute,
            Finalize,
            BlsResponse,
            Reply,
            Release,
            AutoComplete,
        ]
        .into_iter()
        .find(|k| *k as u32 == code)
    }
}

/// Frame kinds the stub sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum FromStubKind {
    InitDone = 32,
    ExecuteDone = 33,
    Send = 34,
    Bls = 35,
    BlsCancel = 36,
    IsCancelled = 37,
    Log = 38,
    Release = 39,
    FinalizeDone = 40,
    AutoCompleteDone = 41,
}

impl FromStubKind {
    /// The kind with this code, if any.
    pub fn from_code(code: u32) -> Option<Self> {
        use FromStubKind::*;
        [
            InitDone,
            ExecuteDone,
            Send,
            Bls,
            BlsCancel,
            IsCancelled,
            Log,
            Release,
            FinalizeDone,
            AutoCompleteDone,
        ]
        .into_iter()
        .find(|k| *k as u32 == code)
    }
}

/// Triton's dtype code (BOOL 1 ... BYTES 13, BF16 14).
pub fn dtype_code(datatype: DataType) -> u8 {
    match datatype {
        DataType::Bool => 1,
        DataType::Uint8 => 2,
        DataType::Uint16 => 3,
        DataType::Uint32 => 4,
        DataType::Uint64 => 5,
        DataType::Int8 => 6,
        DataType::Int16 => 7,
        DataType::Int32 => 8,
        DataType::Int64 => 9,
        DataType::Fp16 => 10,
        DataType::Fp32 => 11,
        DataType::Fp64 => 12,
        DataType::Bytes => 13,
        DataType::Bf16 => 14,
    }
}

/// The data type of a dtype code; `None` for unknown codes.
pub fn dtype_from_code(code: u8) -> Option<DataType> {
    DataType::all()
        .iter()
        .copied()
        .find(|t| dtype_code(*t) == code)
}

/// The `TritonError` code sent for an error kind. Triton has no
/// RESOURCE_EXHAUSTED code; like Triton's own "queue is full" errors it becomes
/// UNAVAILABLE (4). Every other kind has a code of the same name.
pub fn triton_code(kind: ErrorKind) -> u32 {
    match kind {
        ErrorKind::Unknown => 0,
        ErrorKind::Internal => 1,
        ErrorKind::NotFound => 2,
        ErrorKind::InvalidArg => 3,
        ErrorKind::Unavailable | ErrorKind::ResourceExhausted => 4,
        ErrorKind::Unsupported => 5,
        ErrorKind::AlreadyExists => 6,
        ErrorKind::Cancelled => 7,
    }
}

/// The error kind of a `TritonError` code. Codes outside the table become
/// [`ErrorKind::Internal`] (the message still reaches the client).
pub fn error_kind(code: u32) -> ErrorKind {
    match code {
        0 => ErrorKind::Unknown,
        2 => ErrorKind::NotFound,
        3 => ErrorKind::InvalidArg,
        4 => ErrorKind::Unavailable,
        5 => ErrorKind::Unsupported,
        6 => ErrorKind::AlreadyExists,
        7 => ErrorKind::Cancelled,
        _ => ErrorKind::Internal,
    }
}

/// A tensor in an arena: arena_in for tensors the server sends, arena_out for
/// tensors the stub sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorDesc {
    pub name: String,
    pub datatype: DataType,
    pub dims: Vec<i64>,
    /// Offset of the first byte in the arena, 64-byte aligned.
    pub offset: u64,
    pub nbytes: u64,
}

/// A request's correlation id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Correlation {
    #[default]
    None,
    U64(u64),
    Str(String),
}

/// The fields shared by an `Execute` request and a `Bls` request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WireRequest {
    pub flags: u32,
    pub correlation: Correlation,
    pub request_id: String,
    /// `"{}"` when the request has no parameters.
    pub parameters_json: String,
    pub timeout_us: u64,
    pub inputs: Vec<TensorDesc>,
    /// Names of the requested outputs.
    pub outputs: Vec<String>,
}

/// One request of an `Execute` batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecuteRequest {
    /// The request id the server assigned; `Send` frames carry it as their tag.
    pub rid: u64,
    pub request: WireRequest,
}

/// A response: an error, or parameters and output tensors.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WireResponse {
    pub error: Option<Error>,
    /// `""` when the response has no parameters.
    pub parameters_json: String,
    pub outputs: Vec<TensorDesc>,
}

/// The response part of a `BlsResponse` frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlsPayload {
    /// The arena_in block holding the response's tensors, [`NO_BLOCK`] if none.
    pub block: u64,
    pub response: WireResponse,
}

/// A message from the server to the stub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToStub {
    /// `args` are the `initialize` arguments (`model_config`, `model_name`, ...).
    Init {
        args: Vec<(String, String)>,
        model_file: String,
        decoupled: bool,
    },
    /// A batch; `block` is the arena_in block holding all its input tensors.
    Execute {
        batch_id: u64,
        block: u64,
        requests: Vec<ExecuteRequest>,
    },
    Finalize,
    /// An event of BLS call `bls_id`.
    BlsResponse {
        bls_id: u64,
        is_final: bool,
        response: Option<BlsPayload>,
    },
    /// The answer to `IsCancelled` call `call_id`.
    Reply {
        call_id: u64,
        value: bool,
    },
    /// arena_out blocks the server no longer uses.
    Release {
        offsets: Vec<u64>,
    },
    AutoComplete {
        model_file: String,
        config_json: String,
    },
}

/// The level of a `Log` frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Info = 0,
    Warning = 1,
    Error = 2,
    Verbose = 3,
}

impl LogLevel {
    fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => LogLevel::Info,
            1 => LogLevel::Warning,
            2 => LogLevel::Error,
            3 => LogLevel::Verbose,
            _ => return None,
        })
    }

    /// The `log` crate level to log at (VERBOSE is `Debug`).
    pub fn to_log(self) -> log::Level {
        match self {
            LogLevel::Info => log::Level::Info,
            LogLevel::Warning => log::Level::Warn,
            LogLevel::Error => log::Level::Error,
            LogLevel::Verbose => log::Level::Debug,
        }
    }
}

/// A message from the stub to the server. Tags the protocol fixes at 0 are not checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FromStub {
    InitDone {
        error: Option<Error>,
    },
    /// `responses` is empty for decoupled and sender-based models, and when
    /// `batch_error` is set.
    ExecuteDone {
        batch_id: u64,
        batch_error: Option<Error>,
        responses: Vec<WireResponse>,
    },
    /// A response sender's `send`; `is_final` closes `rid` (other flag bits are ignored).
    Send {
        rid: u64,
        is_final: bool,
        response: Option<WireResponse>,
    },
    /// A BLS call; its input tensors are in arena_out.
    Bls {
        bls_id: u64,
        decoupled: bool,
        model_name: String,
        /// -1 for the latest version.
        model_version: i64,
        request: WireRequest,
    },
    BlsCancel {
        bls_id: u64,
    },
    IsCancelled {
        call_id: u64,
        rid: u64,
    },
    Log {
        level: LogLevel,
        file: String,
        line: u32,
        message: String,
    },
    /// arena_in blocks the stub no longer uses.
    Release {
        offsets: Vec<u64>,
    },
    FinalizeDone {
        error: Option<Error>,
    },
    AutoCompleteDone {
        error: Option<Error>,
        config_json: String,
    },
}

/// The frame length from the 4-byte prefix: the number of bytes to read next
/// and pass to [`decode`]. Errors when it cannot hold a header or exceeds
/// [`MAX_FRAME_LEN`].
pub fn frame_len(prefix: [u8; 4]) -> Result<usize> {
    let len = u32::from_le_bytes(prefix) as usize;
    if len < HEADER_LEN {
        return Err(protocol_error(format!(
            "frame length {len} is shorter than the {HEADER_LEN}-byte header"
        )));
    }
    if len > MAX_FRAME_LEN {
        return Err(protocol_error(format!(
            "frame length {len} exceeds the limit of {MAX_FRAME_LEN} bytes"
        )));
    }
    Ok(len)
}

fn protocol_error(message: impl fmt::Display) -> Error {
    Error::internal(format!("python stub protocol error: {message}"))
}

// ---------------------------------------------------------------------------
// Encoding

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
        };
        let mut w = Writer::frame(out, kind as u32, tag);
        match self {
            ToStub::Init {
                args,
                model_file,
                decoupled,
            } => {
                w.count16(args.len(), "initialize arguments");
                for (key, value) in args {
                    w.str(key);
                    w.str(value);
                }
                w.str(model_file);
                w.bool(*decoupled);
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
        }
        w.finish()
    }
}

/// Appends one frame to a buffer. Counts or a frame too large for their
/// fields are remembered and reported by [`Writer::finish`], which then
/// removes the partial frame.
struct Writer<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    error: Option<String>,
}

impl<'a> Writer<'a> {
    fn frame(out: &'a mut Vec<u8>, kind: u32, tag: u64) -> Self {
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

    fn finish(self) -> Result<()> {
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

    fn u8(&mut self, v: u8) {
        self.out.push(v);
    }
    fn bool(&mut self, v: bool) {
        self.u8(v as u8);
    }
    fn u16(&mut self, v: u16) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    fn count16(&mut self, n: usize, what: &str) {
        match u16::try_from(n) {
            Ok(n) => self.u16(n),
            Err(_) => self.fail(format!("{n} {what} (at most {})", u16::MAX)),
        }
    }
    fn count32(&mut self, n: usize, what: &str) {
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
    fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.out.extend_from_slice(s.as_bytes());
    }

    fn offsets(&mut self, offsets: &[u64]) {
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

    fn error(&mut self, error: &Option<Error>) {
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

    fn response(&mut self, r: &WireResponse) {
        self.error(&r.error);
        self.str(&r.parameters_json);
        self.tensors(&r.outputs);
    }

    /// The request fields after `rid` (Execute) or `model_version` (Bls).
    fn request(&mut self, r: &WireRequest) {
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

// ---------------------------------------------------------------------------
// Decoding

/// Decodes a frame from the stub: the `len` bytes after the length prefix
/// (`kind`, `tag`, body). Errors say what is malformed.
pub fn decode(frame: &[u8]) -> Result<FromStub> {
    let mut r = Reader::new(frame);
    let code = r
        .u32()
        .map_err(|e| protocol_error(format!("frame header: {}", e.message)))?;
    let kind = FromStubKind::from_code(code)
        .ok_or_else(|| protocol_error(format!("unknown frame kind {code}")))?;
    decode_body(kind, &mut r)
        .and_then(|msg| r.finish().map(|()| msg))
        .map_err(|e| protocol_error(format!("{kind:?} frame: {}", e.message)))
}

fn decode_body(kind: FromStubKind, r: &mut Reader<'_>) -> Result<FromStub> {
    let tag = r.u64()?;
    Ok(match kind {
        FromStubKind::InitDone => FromStub::InitDone { error: r.error()? },
        FromStubKind::ExecuteDone => {
            let batch_error = r.error()?;
            let n = r.u32()? as usize;
            let responses = r.list(n, Reader::response)?;
            FromStub::ExecuteDone {
                batch_id: tag,
                batch_error,
                responses,
            }
        }
        FromStubKind::Send => {
            let flags = r.u32()?;
            let response = if r.bool()? { Some(r.response()?) } else { None };
            FromStub::Send {
                rid: tag,
                is_final: flags & SEND_FINAL != 0,
                response,
            }
        }
        FromStubKind::Bls => FromStub::Bls {
            bls_id: tag,
            decoupled: r.bool()?,
            model_name: r.str()?,
            model_version: r.i64()?,
            request: r.request()?,
        },
        FromStubKind::BlsCancel => FromStub::BlsCancel { bls_id: tag },
        FromStubKind::IsCancelled => FromStub::IsCancelled {
            call_id: tag,
            rid: r.u64()?,
        },
        FromStubKind::Log => {
            let code = r.u8()?;
            let level = LogLevel::from_code(code)
                .ok_or_else(|| Error::internal(format!("unknown log level {code}")))?;
            FromStub::Log {
                level,
                file: r.str()?,
                line: r.u32()?,
                message: r.str()?,
            }
        }
        FromStubKind::Release => FromStub::Release {
            offsets: r.offsets()?,
        },
        FromStubKind::FinalizeDone => FromStub::FinalizeDone { error: r.error()? },
        FromStubKind::AutoCompleteDone => FromStub::AutoCompleteDone {
            error: r.error()?,
            config_json: r.str()?,
        },
    })
}

/// Reads primitives off a frame, failing (never panicking) at its end.
/// Errors carry a bare message; [`decode`] adds the frame kind.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(Error::internal(format!(
                "truncated: {n} bytes needed at byte {} of a {}-byte frame",
                self.pos + 4,
                self.buf.len()
            )));
        }
        let bytes = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn finish(&self) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(Error::internal(format!("{n} unexpected bytes at the end"))),
        }
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        self.array().map(u16::from_le_bytes)
    }
    fn u32(&mut self) -> Result<u32> {
        self.array().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Result<u64> {
        self.array().map(u64::from_le_bytes)
    }
    fn i64(&mut self) -> Result<i64> {
        self.array().map(i64::from_le_bytes)
    }

    fn bool(&mut self) -> Result<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(Error::internal(format!(
                "bool byte {v} at byte {} is neither 0 nor 1",
                self.pos + 3
            ))),
        }
    }

    fn str(&mut self) -> Result<String> {
        let n = self.u32()? as usize;
        let bytes = self.take(n)?;
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|e| Error::internal(format!("string is not UTF-8: {e}")))
    }

    /// `n` items; the capacity reserved up front is bounded by the bytes left,
    /// so a bogus count cannot allocate much.
    fn list<T>(
        &mut self,
        n: usize,
        mut item: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut items = Vec::with_capacity(n.min(self.remaining()));
        for _ in 0..n {
            items.push(item(self)?);
        }
        Ok(items)
    }

    fn offsets(&mut self) -> Result<Vec<u64>> {
        let n = self.u32()? as usize;
        self.list(n, Self::u64)
    }

    fn tensor(&mut self) -> Result<TensorDesc> {
        let name = self.str()?;
        let fail = |what: String| Error::internal(format!("tensor '{name}': {what}"));
        let code = self.u8()?;
        let datatype =
            dtype_from_code(code).ok_or_else(|| fail(format!("unknown dtype {code}")))?;
        let ndim = self.u8()? as usize;
        if ndim > MAX_NDIM {
            return Err(fail(format!("{ndim} dims, at most {MAX_NDIM} allowed")));
        }
        let dims = self.list(ndim, Self::i64)?;
        let offset = self.u64()?;
        let nbytes = self.u64()?;
        if dims.iter().any(|&d| d < 0) {
            return Err(fail(format!("negative dimension in {dims:?}")));
        }
        if offset % ALIGN != 0 {
            return Err(fail(format!("offset {offset} is not {ALIGN}-byte aligned")));
        }
        if let Some(size) = datatype.element_size() {
            let expected = dims
                .iter()
                .try_fold(size as u64, |acc, &d| acc.checked_mul(d as u64));
            if expected != Some(nbytes) {
                return Err(fail(format!(
                    "{datatype} {dims:?} does not take {nbytes} bytes"
                )));
            }
        }
        Ok(TensorDesc {
            name,
            datatype,
            dims,
            offset,
            nbytes,
        })
    }

    fn tensors(&mut self) -> Result<Vec<TensorDesc>> {
        let n = self.u16()? as usize;
        self.list(n, Self::tensor)
    }

    fn error(&mut self) -> Result<Option<Error>> {
        let code = self.u32()?;
        let message = self.str()?;
        Ok((code != NO_ERROR).then(|| Error::new(error_kind(code), message)))
    }

    fn response(&mut self) -> Result<WireResponse> {
        Ok(WireResponse {
            error: self.error()?,
            parameters_json: self.str()?,
            outputs: self.tensors()?,
        })
    }

    fn request(&mut self) -> Result<WireRequest> {
        let flags = self.u32()?;
        let corr_kind = self.u8()?;
        let corr_u64 = self.u64()?;
        let corr_str = self.str()?;
        let correlation = match corr_kind {
            0 => Correlation::None,
            1 => Correlation::U64(corr_u64),
            2 => Correlation::Str(corr_str),
            k => {
                return Err(Error::internal(format!("unknown correlation id kind {k}")));
            }
        };
        let request_id = self.str()?;
        let parameters_json = self.str()?;
        let timeout_us = self.u64()?;
        let inputs = self.tensors()?;
        let n_out = self.u16()? as usize;
        let outputs = self.list(n_out, Self::str)?;
        Ok(WireRequest {
            flags,
            correlation,
            request_id,
            parameters_json,
            timeout_us,
            inputs,
            outputs,
        })
    }
}

// ---------------------------------------------------------------------------
// The other direction, for round-trip tests only.

#[cfg(test)]
impl FromStub {
    fn encode(&self) -> Result<Vec<u8>> {
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
        };
        let mut out = Vec::new();
        let mut w = Writer::frame(&mut out, kind as u32, tag);
        match self {
            FromStub::InitDone { error } | FromStub::FinalizeDone { error } => w.error(error),
            FromStub::ExecuteDone {
                batch_error,
                responses,
                ..
            } => {
                w.error(batch_error);
                w.count32(responses.len(), "responses");
                for r in responses {
                    w.response(r);
                }
            }
            FromStub::Send {
                is_final, response, ..
            } => {
                w.u32(if *is_final { SEND_FINAL } else { 0 });
                w.bool(response.is_some());
                if let Some(r) = response {
                    w.response(r);
                }
            }
            FromStub::Bls {
                decoupled,
                model_name,
                model_version,
                request,
                ..
            } => {
                w.bool(*decoupled);
                w.str(model_name);
                w.i64(*model_version);
                w.request(request);
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
            FromStub::AutoCompleteDone { error, config_json } => {
                w.error(error);
                w.str(config_json);
            }
        }
        w.finish()?;
        Ok(out)
    }
}

#[cfg(test)]
impl ToStub {
    /// Decodes a whole frame (length prefix included).
    fn decode(frame: &[u8]) -> Result<ToStub> {
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
                let response = if r.bool()? {
                    Some(BlsPayload {
                        block: r.u64()?,
                        response: r.response()?,
                    })
                } else {
                    None
                };
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
        };
        r.finish()?;
        Ok(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(name: &str, datatype: DataType, dims: &[i64], offset: u64) -> TensorDesc {
        let nbytes =
            datatype.element_size().unwrap_or(1) as u64 * dims.iter().product::<i64>() as u64;
        TensorDesc {
            name: name.into(),
            datatype,
            dims: dims.to_vec(),
            offset,
            nbytes,
        }
    }

    fn request() -> WireRequest {
        WireRequest {
            flags: 3,
            correlation: Correlation::Str("seq-é".into()),
            request_id: "req-1".into(),
            parameters_json: r#"{"a":1}"#.into(),
            timeout_us: 5_000,
            inputs: vec![
                tensor("INPUT0", DataType::Fp32, &[2, 3], 0),
                tensor("TEXT", DataType::Bytes, &[1], 64),
                tensor("EMPTY", DataType::Int64, &[0, 4], 128),
            ],
            outputs: vec!["OUT0".into(), "OUT1".into()],
        }
    }

    fn response() -> WireResponse {
        WireResponse {
            error: None,
            parameters_json: r#"{"p":"q"}"#.into(),
            outputs: vec![tensor("OUT", DataType::Bf16, &[4], 4096)],
        }
    }

    fn to_stub_samples() -> Vec<ToStub> {
        vec![
            ToStub::Init {
                args: vec![
                    ("model_config".into(), "{}".into()),
                    ("model_name".into(), "add_sub".into()),
                ],
                model_file: "/models/add_sub/1/model.py".into(),
                decoupled: true,
            },
            ToStub::Execute {
                batch_id: 7,
                block: 1 << 20,
                requests: vec![
                    ExecuteRequest {
                        rid: 1,
                        request: request(),
                    },
                    ExecuteRequest {
                        rid: 2,
                        request: WireRequest {
                            correlation: Correlation::U64(99),
                            parameters_json: "{}".into(),
                            ..WireRequest::default()
                        },
                    },
                ],
            },
            ToStub::Execute {
                batch_id: 0,
                block: 0,
                requests: vec![],
            },
            ToStub::Finalize,
            ToStub::BlsResponse {
                bls_id: 3,
                is_final: true,
                response: None,
            },
            ToStub::BlsResponse {
                bls_id: 4,
                is_final: false,
                response: Some(BlsPayload {
                    block: 640,
                    response: response(),
                }),
            },
            ToStub::BlsResponse {
                bls_id: 5,
                is_final: true,
                response: Some(BlsPayload {
                    block: NO_BLOCK,
                    response: WireResponse {
                        error: Some(Error::not_found("no model 'x'")),
                        ..WireResponse::default()
                    },
                }),
            },
            ToStub::Reply {
                call_id: 9,
                value: true,
            },
            ToStub::Release {
                offsets: vec![0, 64, 1 << 40],
            },
            ToStub::AutoComplete {
                model_file: "/m/model.py".into(),
                config_json: r#"{"name":"m"}"#.into(),
            },
        ]
    }

    fn from_stub_samples() -> Vec<FromStub> {
        vec![
            FromStub::InitDone { error: None },
            FromStub::InitDone {
                error: Some(Error::invalid_arg("bad config")),
            },
            FromStub::ExecuteDone {
                batch_id: 11,
                batch_error: None,
                responses: vec![response(), WireResponse::default()],
            },
            FromStub::ExecuteDone {
                batch_id: 12,
                batch_error: Some(Error::internal("model raised")),
                responses: vec![],
            },
            FromStub::Send {
                rid: 5,
                is_final: true,
                response: None,
            },
            FromStub::Send {
                rid: 6,
                is_final: false,
                response: Some(response()),
            },
            FromStub::Bls {
                bls_id: 8,
                decoupled: true,
                model_name: "other".into(),
                model_version: -1,
                request: request(),
            },
            FromStub::BlsCancel { bls_id: 8 },
            FromStub::IsCancelled {
                call_id: 2,
                rid: 77,
            },
            FromStub::Log {
                level: LogLevel::Warning,
                file: "model.py".into(),
                line: 42,
                message: "careful".into(),
            },
            FromStub::Release {
                offsets: vec![128, 0],
            },
            FromStub::FinalizeDone { error: None },
            FromStub::AutoCompleteDone {
                error: None,
                config_json: r#"{"max_batch_size":8}"#.into(),
            },
        ]
    }

    #[test]
    fn to_stub_round_trips() {
        for msg in to_stub_samples() {
            let frame = msg.encode().unwrap();
            assert_eq!(ToStub::decode(&frame).unwrap(), msg);
        }
    }

    #[test]
    fn from_stub_round_trips() {
        for msg in from_stub_samples() {
            let frame = msg.encode().unwrap();
            let len = frame_len(frame[..4].try_into().unwrap()).unwrap();
            assert_eq!(len, frame.len() - 4);
            assert_eq!(decode(&frame[4..]).unwrap(), msg);
        }
    }

    #[test]
    fn encode_into_appends_frames() {
        let mut out = Vec::new();
        let release = ToStub::Release { offsets: vec![64] };
        release.encode_into(&mut out).unwrap();
        ToStub::Finalize.encode_into(&mut out).unwrap();
        let first = release.encode().unwrap();
        assert_eq!(&out[..first.len()], first);
        assert_eq!(
            ToStub::decode(&out[first.len()..]).unwrap(),
            ToStub::Finalize
        );
    }

    #[test]
    fn exact_bytes_of_a_reply_and_a_release() {
        let frame = ToStub::Reply {
            call_id: 0x0102,
            value: true,
        }
        .encode()
        .unwrap();
        let expected: Vec<u8> = [
            &13u32.to_le_bytes()[..],
            &5u32.to_le_bytes(),
            &0x0102u64.to_le_bytes(),
            &[1],
        ]
        .concat();
        assert_eq!(frame, expected);

        let frame = ToStub::Release {
            offsets: vec![64, 128],
        }
        .encode()
        .unwrap();
        let expected: Vec<u8> = [
            &32u32.to_le_bytes()[..],
            &6u32.to_le_bytes(),
            &0u64.to_le_bytes(),
            &2u32.to_le_bytes(),
            &64u64.to_le_bytes(),
            &128u64.to_le_bytes(),
        ]
        .concat();
        assert_eq!(frame, expected);
    }

    /// A `Send` frame written by hand from python-wire.md.
    fn send_frame(dtype: u8, ndim: u8, dims: &[i64], offset: u64, nbytes: u64) -> Vec<u8> {
        let mut body: Vec<u8> = [
            &34u32.to_le_bytes()[..],
            &7u64.to_le_bytes(), // rid
            &1u32.to_le_bytes(), // FINAL
            &[1],                // has_response
            &3u32.to_le_bytes(), // INVALID_ARG
            &2u32.to_le_bytes(), // message
            b"no",
            &2u32.to_le_bytes(), // parameters_json
            b"{}",
            &1u16.to_le_bytes(), // one tensor
            &3u32.to_le_bytes(), // name
            b"OUT",
            &[dtype, ndim],
        ]
        .concat();
        for d in dims {
            body.extend_from_slice(&d.to_le_bytes());
        }
        body.extend_from_slice(&offset.to_le_bytes());
        body.extend_from_slice(&nbytes.to_le_bytes());
        body
    }

    #[test]
    fn decodes_a_hand_written_send() {
        let frame = send_frame(11, 2, &[2, 3], 128, 24);
        assert_eq!(
            decode(&frame).unwrap(),
            FromStub::Send {
                rid: 7,
                is_final: true,
                response: Some(WireResponse {
                    error: Some(Error::invalid_arg("no")),
                    parameters_json: "{}".into(),
                    outputs: vec![tensor("OUT", DataType::Fp32, &[2, 3], 128)],
                }),
            }
        );
    }

    fn decode_err(frame: &[u8]) -> String {
        let e = decode(frame).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Internal);
        e.message
    }

    #[test]
    fn rejects_malformed_tensors() {
        for (frame, what) in [
            (send_frame(99, 1, &[2], 0, 2), "unknown dtype 99"),
            (send_frame(0, 1, &[2], 0, 2), "unknown dtype 0"),
            (send_frame(11, 65, &[], 0, 0), "65 dims"),
            (send_frame(11, 1, &[-1], 0, 0), "negative dimension"),
            (send_frame(11, 1, &[2], 32, 8), "not 64-byte aligned"),
            (send_frame(11, 1, &[2], 0, 9), "does not take 9 bytes"),
            (send_frame(11, 2, &[i64::MAX, 4], 0, 8), "does not take"),
            (send_frame(11, 3, &[1, 1], 0, 4), "truncated"),
        ] {
            let message = decode_err(&frame);
            assert!(message.contains(what), "{message:?} lacks {what:?}");
            assert!(message.contains("Send frame"), "{message}");
        }
        // BYTES sizes are not implied by the dims.
        assert!(decode(&send_frame(13, 1, &[2], 0, 11)).is_ok());
    }

    #[test]
    fn rejects_malformed_frames() {
        assert!(decode_err(&[]).contains("truncated"));
        assert!(decode_err(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).contains("unknown frame kind 1"));

        let mut frame = FromStub::BlsCancel { bls_id: 1 }.encode().unwrap();
        frame.push(0);
        assert!(decode_err(&frame[4..]).contains("1 unexpected bytes"));

        let log = |level: u8, file: &[u8]| -> Vec<u8> {
            [
                &38u32.to_le_bytes()[..],
                &0u64.to_le_bytes(),
                &[level],
                &(file.len() as u32).to_le_bytes(),
                file,
                &1u32.to_le_bytes(),
                &0u32.to_le_bytes(),
            ]
            .concat()
        };
        assert!(decode(&log(3, b"m.py")).is_ok());
        assert!(decode_err(&log(4, b"m.py")).contains("log level 4"));
        assert!(decode_err(&log(0, b"\xff\xfe")).contains("UTF-8"));

        // A string length past the end.
        let mut frame = log(0, b"m.py");
        frame[13..17].copy_from_slice(&1000u32.to_le_bytes());
        assert!(decode_err(&frame).contains("truncated"));

        // A huge count with nothing behind it fails without a big allocation.
        let frame: Vec<u8> = [
            &39u32.to_le_bytes()[..],
            &0u64.to_le_bytes(),
            &u32::MAX.to_le_bytes(),
        ]
        .concat();
        assert!(decode_err(&frame).contains("truncated"));

        // A bool that is not 0/1.
        let frame: Vec<u8> =
            [&34u32.to_le_bytes()[..], &0u64.to_le_bytes(), &[0; 4], &[2]].concat();
        assert!(decode_err(&frame).contains("neither 0 nor 1"));
    }

    #[test]
    fn every_truncation_is_an_error() {
        for msg in from_stub_samples() {
            let frame = msg.encode().unwrap();
            let body = &frame[4..];
            for cut in 0..body.len() {
                assert!(decode(&body[..cut]).is_err(), "{msg:?} cut at {cut}");
            }
        }
    }

    #[test]
    fn rejects_bad_correlation_kind() {
        let msg = FromStub::Bls {
            bls_id: 1,
            decoupled: false,
            model_name: "m".into(),
            model_version: 2,
            request: WireRequest::default(),
        };
        let mut frame = msg.encode().unwrap();
        // kind, tag, decoupled, str "m", version, flags -> corr_kind
        let at = 4 + 12 + 1 + 5 + 8 + 4;
        assert_eq!(frame[at], 0);
        frame[at] = 3;
        assert!(decode_err(&frame[4..]).contains("correlation id kind 3"));
    }

    #[test]
    fn frame_len_limits() {
        assert_eq!(frame_len(12u32.to_le_bytes()).unwrap(), 12);
        assert!(frame_len(11u32.to_le_bytes()).is_err());
        assert!(frame_len(u32::MAX.to_le_bytes()).is_err());
    }

    #[test]
    fn encode_rejects_counts_too_large() {
        let mut out = vec![1, 2, 3];
        let msg = ToStub::Init {
            args: vec![(String::new(), String::new()); 70_000],
            model_file: String::new(),
            decoupled: false,
        };
        let e = msg.encode_into(&mut out).unwrap_err();
        assert!(e.message.contains("70000 initialize arguments"), "{e}");
        assert_eq!(out, [1, 2, 3]);
    }

    #[test]
    fn dtype_codes() {
        for (i, &t) in DataType::all().iter().enumerate() {
            assert_eq!(dtype_code(t) as usize, i + 1);
            assert_eq!(dtype_from_code(dtype_code(t)), Some(t));
        }
        assert_eq!(dtype_code(DataType::Bytes), 13);
        assert_eq!(dtype_code(DataType::Bf16), 14);
        assert_eq!(dtype_from_code(0), None);
        assert_eq!(dtype_from_code(15), None);
    }

    #[test]
    fn error_codes() {
        use ErrorKind::*;
        for kind in [
            InvalidArg,
            NotFound,
            Unavailable,
            Unsupported,
            AlreadyExists,
            Cancelled,
            Internal,
        ] {
            assert_eq!(error_kind(triton_code(kind)), kind);
        }
        assert_eq!(triton_code(ResourceExhausted), 4);
        assert_eq!(error_kind(0), Internal);
        assert_eq!(error_kind(1234), Internal);
    }
}
