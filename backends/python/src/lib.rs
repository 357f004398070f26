//! The Python backend (`backend: "python"`): a Triton user's `model.py` runs
//! unchanged, each instance in its own Python process forked from a warm
//! interpreter, tensors crossing through shared memory.
//! See `docs/design/python-backend.md` and `docs/design/python-wire.md`.

mod arena;
mod attach;
mod autocomplete;
mod backend;
mod bls;
mod connection;
mod convert;
mod inflight;
mod instance;
mod interpreter;
mod lane;
mod metrics;
mod model;
mod model_control;
mod model_log;
mod package;
mod polling;
mod process;
mod protocol;
mod pump;
mod settings;
mod zygote;

pub use backend::PythonBackend;
pub use settings::PythonSettings;
