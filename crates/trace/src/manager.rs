//! The server's trace settings, global and per model, and the sampling of
//! requests by the setting of their model (Triton's `TraceManager`).

use std::{collections::HashMap, sync::Arc};

use oxiserve_types::{Error, Result};
use parking_lot::RwLock;

use crate::{
    config::TraceConfig,
    file::TraceFile,
    otel::{self, Exporter},
    sampler::{Destination, Fields, Sampler, Specified},
    settings::{Change, SettingsUpdate, TraceMode, TraceSettings},
    trace::Trace,
};

/// Trace settings and sampling for one server.
#[derive(Debug)]
pub struct TraceManager {
    /// The command line's settings: what clearing a global setting returns to.
    defaults: Fields,
    destination: Arc<Destination>,
    settings: RwLock<Settings>,
}

#[derive(Debug)]
struct Settings {
    global: Arc<Sampler>,
    /// Models with settings of their own.
    models: HashMap<String, Arc<Sampler>>,
}

impl Default for TraceManager {
    /// Tracing off, in Triton mode, without a trace file.
    fn default() -> Self {
        Self::new(TraceConfig::default()).expect("Triton mode starts without an exporter")
    }
}

impl TraceManager {
    /// The settings `config` starts with; in OpenTelemetry mode, starts the
    /// exporter (an error when its URL is not one).
    pub fn new(config: TraceConfig) -> std::result::Result<Self, String> {
        let exporter = match config.mode {
            TraceMode::OpenTelemetry => Some(Exporter::start(&config.opentelemetry)?),
            TraceMode::Triton => None,
        };
        let destination = Arc::new(Destination {
            mode: config.mode,
            file: TraceFile::new(config.file),
            exporter,
            mode_options: config.mode_options,
        });
        let defaults = Fields {
            level: config.level,
            rate: config.rate,
            count: config.count,
            log_frequency: config.log_frequency,
        };
        let global = Sampler::new(defaults, Specified::default(), destination.clone());
        Ok(Self {
            defaults,
            destination,
            settings: RwLock::new(Settings {
                global: Arc::new(global),
                models: HashMap::new(),
            }),
        })
    }

    /// The setting `model` (or, with `None`, the server) traces with.
    fn sampler(&self, model: Option<&str>) -> Arc<Sampler> {
        let settings = self.settings.read();
        model
            .and_then(|m| settings.models.get(m))
            .unwrap_or(&settings.global)
            .clone()
    }

    /// The settings in force for `model`, or the global ones.
    pub fn settings(&self, model: Option<&str>) -> TraceSettings {
        self.sampler(model).settings()
    }

    /// Changes the global settings (`model` `None`) or a model's own; a
    /// global change reaches every model setting that falls back on it.
    /// Refuses (changing nothing) a setting that would trace nothing
    /// unless it turns tracing off.
    pub fn update(&self, model: Option<&str>, update: &SettingsUpdate) -> Result<()> {
        let mut settings = self.settings.write();
        self.apply(&mut settings, model, update)?;
        if model.is_none() {
            let models: Vec<String> = settings.models.keys().cloned().collect();
            for name in models {
                self.apply(&mut settings, Some(&name), &SettingsUpdate::default())?;
            }
        }
        Ok(())
    }

    /// Triton's `UpdateTraceSettingInternal`: a field keeps its own value
    /// when it has one (the count what is left of it), else takes the one
    /// it falls back on; a model left with no value of its own goes back
    /// to the global setting.
    fn apply(
        &self,
        settings: &mut Settings,
        model: Option<&str>,
        update: &SettingsUpdate,
    ) -> Result<()> {
        let (current, fallback) = match model {
            Some(name) => (settings.models.get(name).cloned(), settings.global.fields()),
            None => (Some(settings.global.clone()), self.defaults),
        };
        let own = current.as_ref().map(|c| (c.specified(), c.fields()));
        let mut specified = Specified::default();
        let mut fields = fallback;
        pick(
            &mut fields.level,
            &mut specified.level,
            own.map(|(s, f)| (s.level, f.level)),
            update.level,
        );
        pick(
            &mut fields.rate,
            &mut specified.rate,
            own.map(|(s, f)| (s.rate, f.rate)),
            update.rate,
        );
        pick(
            &mut fields.count,
            &mut specified.count,
            own.map(|(s, f)| (s.count, f.count)),
            update.count,
        );
        pick(
            &mut fields.log_frequency,
            &mut specified.log_frequency,
            own.map(|(s, f)| (s.log_frequency, f.log_frequency)),
            update.log_frequency,
        );
        if let Some(name) = model
            && !specified.any()
        {
            settings.models.remove(name);
            return Ok(());
        }
        let sampler = Sampler::new(fields, specified, self.destination.clone());
        if let Some(reason) = sampler.refusal() {
            return Err(Error::invalid_arg(format!(
                "Attempting to set invalid trace setting :{reason}"
            )));
        }
        let sampler = Arc::new(sampler);
        match model {
            Some(name) => {
                settings.models.insert(name.to_string(), sampler);
            }
            None => settings.global = sampler,
        }
        Ok(())
    }

    /// A trace for a request to `model` when its setting samples it, or
    /// when (OpenTelemetry mode) the caller's `traceparent` header, which
    /// `header` looks up, names a span: the trace joins it.
    pub fn sample(&self, model: &str, header: impl Fn(&str) -> Option<String>) -> Option<Trace> {
        let sampler = self.sampler(Some(model));
        let remote_parent = match sampler.mode() {
            TraceMode::OpenTelemetry if !sampler.level().is_off() => otel::remote_parent(header),
            _ => None,
        };
        sampler
            .sample(remote_parent.is_some())
            .then(|| Trace::start(sampler, remote_parent))
    }

    /// At exit, after the last request: writes the traces not written yet
    /// and closes the trace file; exports the spans not exported yet.
    pub fn shutdown(&self) {
        {
            let settings = self.settings.read();
            settings.global.flush();
            for sampler in settings.models.values() {
                sampler.flush();
            }
        }
        self.destination.file.close();
        if let Some(exporter) = &self.destination.exporter {
            exporter.shutdown();
        }
    }
}

/// One field's value and whether it is the setting's own: cleared, it
/// falls back; set, it takes the new value; kept, it keeps its own value
/// if it had one.
fn pick<T: Copy>(value: &mut T, specified: &mut bool, own: Option<(bool, T)>, change: Change<T>) {
    match change {
        Change::Clear => {}
        Change::Set(new) => {
            *value = new;
            *specified = true;
        }
        Change::Keep => {
            if let Some((true, current)) = own {
                *value = current;
                *specified = true;
            }
        }
    }
}

#[cfg(test)]
mod tests;
