//! What every test needs: a server to talk to, and the models it serves.

pub mod models;
pub mod server;
