//! The server core end to end: model repositories on disk, loaded with the
//! identity backend, serving requests, counting statistics, and loading and
//! unloading models as Triton does.

mod common;
mod failures;
mod inline;
mod instances;
mod management;
mod model_control;
mod namespacing;
mod outputs;
mod startup;
mod statistics;
mod versions;
