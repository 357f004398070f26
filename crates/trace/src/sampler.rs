//! One trace setting in force (Triton's `TraceSetting`): its values, which
//! requests it samples, and where the traces it sampled go when finished.
//! A change of settings replaces the object; traces keep the one that
//! sampled them.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::{
    file::TraceFile,
    level::TraceLevel,
    otel::Exporter,
    record::FinishedTrace,
    settings::{TraceMode, TraceSettings},
    triton_json,
};

/// The values of the settings that can change at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fields {
    pub level: TraceLevel,
    pub rate: u32,
    pub count: i32,
    pub log_frequency: u32,
}

/// Which fields a setting has of its own rather than from the one it
/// falls back on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Specified {
    pub level: bool,
    pub rate: bool,
    pub count: bool,
    pub log_frequency: bool,
}

impl Specified {
    pub fn any(self) -> bool {
        self.level || self.rate || self.count || self.log_frequency
    }
}

/// What every setting of a server shares: the mode, its file or exporter,
/// and the mode's options the replies echo.
#[derive(Debug)]
pub(crate) struct Destination {
    pub mode: TraceMode,
    pub file: TraceFile,
    pub exporter: Option<Exporter>,
    pub mode_options: Vec<(String, String)>,
}

/// A trace setting and its sampling state.
#[derive(Debug)]
pub(crate) struct Sampler {
    fields: Fields,
    specified: Specified,
    destination: Arc<Destination>,
    /// Why no request is traced, whatever the count.
    invalid: Option<&'static str>,
    state: Mutex<SampleState>,
}

#[derive(Debug, Default)]
struct SampleState {
    /// Requests seen while valid.
    seen: u64,
    /// Traces still to take (-1: no limit).
    count: i32,
    /// Traces finished.
    collected: u64,
    /// Finished traces in `stream`, not written yet.
    in_stream: u32,
    stream: String,
}

impl Sampler {
    pub fn new(fields: Fields, specified: Specified, destination: Arc<Destination>) -> Self {
        let invalid = if fields.level.is_off() {
            Some("tracing is disabled")
        } else if fields.rate == 0 {
            Some("sample rate must be non-zero")
        } else if destination.mode == TraceMode::Triton && destination.file.path().is_empty() {
            Some("trace file name is not given")
        } else {
            None
        };
        Self {
            fields,
            specified,
            destination,
            invalid,
            state: Mutex::new(SampleState {
                count: fields.count,
                ..Default::default()
            }),
        }
    }

    pub fn level(&self) -> TraceLevel {
        self.fields.level
    }

    pub fn mode(&self) -> TraceMode {
        self.destination.mode
    }

    pub fn specified(&self) -> Specified {
        self.specified
    }

    /// The fields now: the count is what is left of it.
    pub fn fields(&self) -> Fields {
        Fields {
            count: self.state.lock().count,
            ..self.fields
        }
    }

    /// Why the setting may not be set (Triton refuses a change to an
    /// invalid setting unless it turns tracing off): `Some("")` when only
    /// the count, 0, makes it invalid.
    pub fn refusal(&self) -> Option<&'static str> {
        if self.fields.level.is_off() {
            return None;
        }
        match self.invalid {
            Some(reason) => Some(reason),
            None if self.state.lock().count == 0 => Some(""),
            None => None,
        }
    }

    pub fn settings(&self) -> TraceSettings {
        let fields = self.fields();
        TraceSettings {
            level: fields.level,
            rate: fields.rate,
            count: fields.count,
            log_frequency: fields.log_frequency,
            file: self.destination.file.path().to_string(),
            mode: self.destination.mode,
            mode_options: self.destination.mode_options.clone(),
        }
    }

    /// Whether to trace the next request: one in `rate` while the count
    /// lasts, or any time `force` (a caller's OpenTelemetry context) says so.
    pub fn sample(&self, force: bool) -> bool {
        if !force && (self.invalid.is_some() || self.fields.rate == 0) {
            return false;
        }
        let mut hit = false;
        if self.fields.rate != 0 {
            let mut state = self.state.lock();
            if (self.invalid.is_some() || state.count == 0) && !force {
                return false;
            }
            state.seen += 1;
            hit = state.seen.is_multiple_of(u64::from(self.fields.rate));
            if hit && state.count > 0 {
                state.count -= 1;
            } else if hit && state.count == 0 {
                hit = false;
            }
        }
        hit || force
    }

    /// A trace this setting sampled is finished: writes or exports it.
    pub fn finish(&self, trace: FinishedTrace) {
        match &self.destination.exporter {
            Some(exporter) => exporter.export(&trace),
            None => self.write(&triton_json::render(&trace.records)),
        }
    }

    /// Adds a rendered trace to the stream; writes the stream to the next
    /// indexed file every `log_frequency` traces, and when the count is
    /// used up and every trace taken is written.
    fn write(&self, trace: &str) {
        let mut state = self.state.lock();
        if state.in_stream != 0 {
            state.stream.push(',');
        }
        state.stream.push_str(trace);
        state.in_stream += 1;
        state.collected += 1;
        let frequency = self.fields.log_frequency;
        if (state.count == 0 && state.collected == state.seen)
            || (frequency != 0 && state.in_stream >= frequency)
        {
            state.in_stream = 0;
            let stream = std::mem::take(&mut state.stream);
            drop(state);
            self.destination.file.save(&stream, true);
        }
    }

    /// Writes the traces not written yet: to the next indexed file with a
    /// log frequency, else to the main file.
    pub fn flush(&self) {
        let mut state = self.state.lock();
        if state.in_stream == 0 {
            return;
        }
        state.in_stream = 0;
        let stream = std::mem::take(&mut state.stream);
        drop(state);
        let indexed = self.fields.log_frequency != 0;
        self.destination.file.save(&stream, indexed);
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.flush();
    }
}
