//! Auto-complete: a short-lived stub imports the model file and runs its
//! static `auto_complete_config` on the configuration, before the model loads.

use std::{
    io::{Read, Write},
    os::{fd::AsFd, unix::net::UnixStream},
    path::Path,
};

use oxiserve_types::{Error, Result};

use crate::{
    arena::{Arena, ArenaLayout, InArena},
    metrics::StubMetrics,
    model_log,
    protocol::{self, FromStub, ToStub, decode::decode},
    settings::PythonSettings,
    zygote::Zygote,
};

/// Arenas for a process that exchanges no tensors.
const SMALL_ARENA: u64 = 64 * 1024;

/// Runs `model_file`'s `auto_complete_config` on `config_json`; returns the
/// completed configuration's JSON.
pub(crate) fn run(
    zygote: &Zygote,
    settings: &PythonSettings,
    model_file: &Path,
    config_json: &str,
) -> Result<String> {
    let fail = |e: std::io::Error| Error::internal(format!("python backend: auto-complete: {e}"));
    let (mut ours, theirs) = UnixStream::pair().map_err(fail)?;
    let layout = ArenaLayout::bounded(SMALL_ARENA, SMALL_ARENA, SMALL_ARENA);
    let arena_in = InArena::new("oxiserve:auto-complete:in", layout)?;
    let arena_out = Arena::pool("oxiserve:auto-complete:out", &layout)?;
    zygote.spawn(
        &[theirs.as_fd(), arena_in.fd(), arena_out.fd()],
        &layout,
        settings.stub_timeout,
    )?;
    drop(theirs);
    ours.set_read_timeout(Some(settings.stub_timeout))
        .map_err(fail)?;
    let request = ToStub::AutoComplete {
        model_file: model_file.display().to_string(),
        config_json: config_json.to_string(),
    };
    ours.write_all(&request.encode()?).map_err(fail)?;
    let mut frame = Vec::new();
    // Metrics the model file makes as it is imported live in this process only.
    let mut metrics = StubMetrics::new(Default::default());
    loop {
        let mut prefix = [0u8; 4];
        ours.read_exact(&mut prefix).map_err(|e| {
            Error::internal(format!(
                "python backend: the auto-complete process for {} ended without an answer ({e})",
                model_file.display()
            ))
        })?;
        frame.resize(protocol::frame_len(prefix)?, 0);
        ours.read_exact(&mut frame).map_err(fail)?;
        match decode(&frame)? {
            FromStub::AutoCompleteDone { error: Some(e), .. } => {
                return Err(Error::internal(format!("Internal: {}", e.message)));
            }
            FromStub::AutoCompleteDone { config_json, .. } => return Ok(config_json),
            FromStub::Log {
                level,
                file,
                line,
                message,
            } => model_log::write(level, &file, line, &message),
            FromStub::Metric(call) => {
                if let Some(reply) = metrics.handle(call, "auto-complete") {
                    ours.write_all(&reply.encode()?).map_err(fail)?;
                }
            }
            FromStub::ModelControl { call_id, .. } => {
                let result = Err(Error::unavailable(
                    "models cannot be loaded, unloaded or checked in auto_complete_config",
                ));
                let reply = ToStub::ModelControlReply { call_id, result };
                ours.write_all(&reply.encode()?).map_err(fail)?;
            }
            _ => {}
        }
    }
}
