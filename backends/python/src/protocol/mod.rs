//! The instance socket's frames, byte for byte as `docs/design/python-wire.md`
//! describes them: `u32 len, u32 kind, u64 tag, body`, little-endian, no padding.
//!
//! The server encodes [`ToStub`] messages (one `Vec` per frame, length prefix
//! included, so the writer does one `write_all`) and decodes [`FromStub`]
//! messages from the `len` bytes after the prefix. Tensors travel as
//! [`TensorDesc`]s pointing into an arena; no tensor bytes pass through here.
//! A malformed frame decodes to an [`ErrorKind::Internal`] error saying what is
//! wrong; nothing here panics on input from the stub.

pub mod decode;
mod encode;
mod metric;
mod model_control;
#[cfg(test)]
mod tests;

use std::fmt;

use oxiserve_backend::DirectExecution;
use oxiserve_types::{DataType, Error, ErrorKind, Result};

pub use metric::{MetricCall, MetricOp};
pub use model_control::ModelControlCall;

/// Bytes of `kind` + `tag`, the part of every frame counted by `len` before the body.
pub const HEADER_LEN: usize = 12;
/// The largest `len` accepted from the stub (and produced by [`ToStub::encode`]).
/// Only descriptors and JSON travel in frames, so this is generous.
pub const MAX_FRAME_LEN: usize = 256 << 20;
/// The most dimensions a tensor descriptor may have (numpy 2's limit).
pub const MAX_NDIM: usize = 64;
/// The `block` of a frame that carries no tensors.
pub const NO_BLOCK: u64 = u64::MAX;
/// `error.code` meaning "no error".
const NO_ERROR: u32 = u32::MAX;
/// `Send.flags` bit: the last frame for this rid.
const SEND_FINAL: u32 = 1;
/// `Send.flags` bit: the request's execution failed (its statistics count a
/// failure); unset, an error response is the model's own answer.
const SEND_FAILED: u32 = 2;

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
    MetricReply = 8,
    ModelControlReply = 9,
    LaneOffer = 10,
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
            MetricReply,
            ModelControlReply,
            LaneOffer,
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
    Reschedule = 42,
    MetricFamilyNew = 43,
    MetricNew = 44,
    MetricUpdate = 45,
    MetricValue = 46,
    MetricDelete = 47,
    LoadModel = 48,
    UnloadModel = 49,
    ModelReady = 50,
    LaneExecuted = 51,
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
            Reschedule,
            MetricFamilyNew,
            MetricNew,
            MetricUpdate,
            MetricValue,
            MetricDelete,
            LoadModel,
            UnloadModel,
            ModelReady,
            LaneExecuted,
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

/// A response and the arena block holding its tensors (the response part of
/// `BlsResponse`, in arena_in, and of `Send`, in arena_out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    /// The block holding the response's tensors, [`NO_BLOCK`] if none.
    pub block: u64,
    pub response: WireResponse,
}

/// A message from the server to the stub.
#[derive(Debug, Clone, PartialEq)]
pub enum ToStub {
    /// `args` are the `initialize` arguments (`model_config`, `model_name`, ...).
    Init {
        args: Vec<(String, String)>,
        model_file: String,
        decoupled: bool,
        /// How long the stub polls for its next frame before it sleeps.
        idle_spin_us: u32,
        /// Where the stub listens for direct BLS calls (its lane); empty
        /// when the model takes none.
        lane: String,
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
        response: Option<Payload>,
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
    /// The answer to metric call `call_id`: an error, or the metric's value
    /// (0 for creations).
    MetricReply {
        call_id: u64,
        result: Result<f64>,
    },
    /// The answer to model control call `call_id`: an error, or whether the
    /// model is ready (false for loads and unloads).
    ModelControlReply {
        call_id: u64,
        result: Result<bool>,
    },
    /// Sent just before the final `BlsResponse` of call `bls_id`: the
    /// called model's instance takes calls like it directly at `path`.
    LaneOffer {
        bls_id: u64,
        path: String,
        instance: String,
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
#[derive(Debug, Clone, PartialEq)]
pub enum FromStub {
    InitDone {
        error: Option<Error>,
    },
    /// `responses` is empty for decoupled and sender-based models, and when
    /// `batch_error` is set. All their tensors are in the arena_out `block`.
    ExecuteDone {
        batch_id: u64,
        batch_error: Option<Error>,
        block: u64,
        responses: Vec<WireResponse>,
    },
    /// A response sender's `send`; `is_final` closes `rid`. `failed`: the
    /// stub answers for an execution that failed (not the model).
    Send {
        rid: u64,
        is_final: bool,
        failed: bool,
        response: Option<Payload>,
    },
    /// A BLS call; its input tensors are in the arena_out `block`.
    Bls {
        bls_id: u64,
        decoupled: bool,
        model_name: String,
        /// -1 for the latest version.
        model_version: i64,
        block: u64,
        request: WireRequest,
        /// The rid of the request whose trace the call joins (the model
        /// passed `trace=request.trace()`); 0 for none.
        parent_rid: u64,
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
    /// Requests the model released with `TRITONSERVER_REQUEST_RELEASE_RESCHEDULE`
    /// in the batch whose `ExecuteDone` follows: they go back to the scheduler.
    Reschedule {
        rids: Vec<u64>,
    },
    /// A custom metric call.
    Metric(MetricCall),
    /// A model control call, answered by a `ModelControlReply`.
    ModelControl {
        call_id: u64,
        call: ModelControlCall,
    },
    /// Executions of calls that came in through the stub's lane, for the
    /// model's statistics.
    LaneExecuted {
        executions: Vec<DirectExecution>,
    },
}

/// The frame length from the 4-byte prefix: the number of bytes to read next
/// and pass to [`decode`](decode::decode). Errors when it cannot hold a header or exceeds
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
