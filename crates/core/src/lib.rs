//! The oxiserve core: the model repository and, later, model lifecycle,
//! schedulers and statistics. It knows no HTTP or gRPC.

pub mod repository;
