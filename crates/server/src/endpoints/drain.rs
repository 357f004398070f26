//! The first step of a shutdown, as Triton takes it: the models refuse new
//! inference requests while the endpoints still answer, and the server waits
//! for the inferences in flight, saying each second how many are left.

use std::time::{Duration, Instant};

use oxiserve_core::Server;

/// How often the in-flight inferences are counted (they are logged once a
/// second, as Triton logs them).
const CHECK_EVERY: Duration = Duration::from_millis(20);

/// Makes `server` refuse new inference requests, then waits until no model
/// version has one in flight, or until `deadline`.
pub(super) async fn in_flight_inferences(server: &Server, deadline: Instant) {
    server.stop_accepting();
    log::info!("Waiting for in-flight requests to complete.");
    let mut logged = None;
    loop {
        let in_flight = server.in_flight();
        let left = deadline.saturating_duration_since(Instant::now());
        let secs = left.as_secs_f64().ceil() as u64;
        if logged != Some(secs) || in_flight.is_empty() {
            logged = Some(secs);
            log::info!(
                "Timeout {secs}: Found {} model versions that have in-flight inferences",
                in_flight.len()
            );
            for f in &in_flight {
                log::info!(
                    "Model '{}' (version {}) has {} in-flight inferences",
                    f.model,
                    f.version,
                    f.count
                );
            }
        }
        if in_flight.is_empty() || left.is_zero() {
            return;
        }
        tokio::time::sleep(CHECK_EVERY.min(left)).await;
    }
}
