//! The model the ceiling pretends to serve: bench/http_identity.sh's `identity` (INPUT0 FP32
//! [16] -> OUTPUT0, max_batch_size 8), described the same way over HTTP and gRPC.

/// The model's name; metadata and configuration exist for this one only.
pub const NAME: &str = "identity";
/// Its one input.
pub const INPUT: &str = "INPUT0";
/// Its one output.
pub const OUTPUT: &str = "OUTPUT0";
/// The datatype of both (KServe name).
pub const DATATYPE: &str = "FP32";
/// The dims of both, without the batch dim.
pub const DIMS: [i64; 1] = [16];
/// The configuration's `max_batch_size`.
pub const MAX_BATCH_SIZE: i32 = 8;

/// An output's name for an input's: INPUT<n> -> OUTPUT<n>.
pub fn output_name(input: &str) -> String {
    input.replacen("INPUT", "OUTPUT", 1)
}
