//! The points of a request's life a trace timestamps, and where it records
//! tensors, with Triton's names.

/// A timestamped point of a request's life (`TRITONSERVER_TRACE_*`), or
/// one the frontend captures (HTTP, gRPC, the response's completion).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// The request reached its model.
    RequestStart,
    /// The request entered its model's queue.
    QueueStart,
    /// The batch holding the request began executing.
    ComputeStart,
    /// The backend had its inputs.
    ComputeInputEnd,
    /// The backend began writing outputs.
    ComputeOutputStart,
    /// The execution ended.
    ComputeEnd,
    /// The core was done with the request.
    RequestEnd,
    HttpRecvStart,
    HttpRecvEnd,
    HttpSendStart,
    HttpSendEnd,
    GrpcWaitreadStart,
    GrpcWaitreadEnd,
    GrpcSendStart,
    GrpcSendEnd,
    /// The frontend had the request's final response.
    InferResponseComplete,
}

impl Activity {
    /// Triton's name, e.g. `QUEUE_START`.
    pub fn name(self) -> &'static str {
        match self {
            Activity::RequestStart => "REQUEST_START",
            Activity::QueueStart => "QUEUE_START",
            Activity::ComputeStart => "COMPUTE_START",
            Activity::ComputeInputEnd => "COMPUTE_INPUT_END",
            Activity::ComputeOutputStart => "COMPUTE_OUTPUT_START",
            Activity::ComputeEnd => "COMPUTE_END",
            Activity::RequestEnd => "REQUEST_END",
            Activity::HttpRecvStart => "HTTP_RECV_START",
            Activity::HttpRecvEnd => "HTTP_RECV_END",
            Activity::HttpSendStart => "HTTP_SEND_START",
            Activity::HttpSendEnd => "HTTP_SEND_END",
            Activity::GrpcWaitreadStart => "GRPC_WAITREAD_START",
            Activity::GrpcWaitreadEnd => "GRPC_WAITREAD_END",
            Activity::GrpcSendStart => "GRPC_SEND_START",
            Activity::GrpcSendEnd => "GRPC_SEND_END",
            Activity::InferResponseComplete => "INFER_RESPONSE_COMPLETE",
        }
    }

    /// Whether the frontend captures it (it belongs to the whole request,
    /// OpenTelemetry's `InferRequest` span) rather than the core.
    pub fn is_frontend(self) -> bool {
        matches!(
            self,
            Activity::HttpRecvStart
                | Activity::HttpRecvEnd
                | Activity::HttpSendStart
                | Activity::HttpSendEnd
                | Activity::GrpcWaitreadStart
                | Activity::GrpcWaitreadEnd
                | Activity::GrpcSendStart
                | Activity::GrpcSendEnd
                | Activity::InferResponseComplete
        )
    }

    /// Whether it belongs to an execution (OpenTelemetry's `compute` span).
    pub fn is_compute(self) -> bool {
        matches!(
            self,
            Activity::ComputeStart
                | Activity::ComputeInputEnd
                | Activity::ComputeOutputStart
                | Activity::ComputeEnd
        )
    }
}

/// Where the tensors of a `TENSORS` trace were seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorActivity {
    /// A request's inputs as it entered the queue.
    QueueInput,
    /// A response's outputs as the backend sent them.
    BackendOutput,
}

impl TensorActivity {
    /// Triton's name, e.g. `TENSOR_QUEUE_INPUT`.
    pub fn name(self) -> &'static str {
        match self {
            TensorActivity::QueueInput => "TENSOR_QUEUE_INPUT",
            TensorActivity::BackendOutput => "TENSOR_BACKEND_OUTPUT",
        }
    }
}
