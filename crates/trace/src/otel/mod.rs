//! OpenTelemetry mode: the OTLP/HTTP exporter behind a batch span
//! processor (exports run on the processor's own thread, never on a
//! request's), and the caller's W3C trace context.

mod spans;
mod warn;

use std::{collections::HashMap, time::Duration};

use opentelemetry::{
    KeyValue,
    propagation::{Extractor, TextMapPropagator},
    trace::{SpanContext, TraceContextExt, TracerProvider as _},
};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::{
    Resource,
    propagation::TraceContextPropagator,
    trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracer, SdkTracerProvider},
};

use crate::{config::OpenTelemetryConfig, record::FinishedTrace};

/// The tracer name Triton's spans carry (their instrumentation scope).
const TRACER_NAME: &str = "triton-server";

/// Exports finished traces as spans.
#[derive(Debug)]
pub(crate) struct Exporter {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
}

impl Exporter {
    /// Starts the batch span processor exporting to `config.url`.
    pub fn start(config: &OpenTelemetryConfig) -> Result<Self, String> {
        // An error says a provider is installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let url = with_scheme(&config.url);
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(url.clone())
            .build()
            .map_err(|e| format!("--trace-config opentelemetry,url={}: {e}", config.url))?;
        let batch = BatchConfigBuilder::default()
            .with_max_queue_size(config.max_queue_size as usize)
            .with_scheduled_delay(Duration::from_millis(u64::from(config.schedule_delay_ms)))
            .with_max_export_batch_size(config.max_export_batch_size as usize)
            .build();
        let processor = BatchSpanProcessor::builder(warn::Warning::new(exporter, url))
            .with_batch_config(batch)
            .build();
        let resource = Resource::builder()
            .with_attribute(KeyValue::new("service.name", "triton-inference-server"))
            .with_attributes(
                config
                    .resource
                    .iter()
                    .map(|(key, value)| KeyValue::new(key.clone(), value.clone())),
            )
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer(TRACER_NAME);
        Ok(Self { provider, tracer })
    }

    /// Hands the trace's spans to the batch span processor.
    pub fn export(&self, trace: &FinishedTrace) {
        spans::build(&self.tracer, trace);
    }

    /// Exports what is queued, then stops.
    pub fn shutdown(&self) {
        if let Err(e) = self.provider.shutdown() {
            log::warn!("OpenTelemetry exporter: {e}");
        }
    }
}

/// The URL with `http://` in front when it names no scheme (Triton's
/// exporter takes `host:port/path`).
fn with_scheme(url: &str) -> String {
    if url.contains("://") {
        url.to_string()
    } else {
        format!("http://{url}")
    }
}

/// The caller's span from its `traceparent` (and `tracestate`) header, if
/// it names a valid one.
pub(crate) fn remote_parent(header: impl Fn(&str) -> Option<String>) -> Option<SpanContext> {
    let headers: HashMap<&'static str, String> = ["traceparent", "tracestate"]
        .into_iter()
        .filter_map(|name| Some((name, header(name)?)))
        .collect();
    if headers.is_empty() {
        return None;
    }
    let context = TraceContextPropagator::new().extract(&Headers(headers));
    let span = context.span().span_context().clone();
    span.is_valid().then_some(span)
}

struct Headers(HashMap<&'static str, String>);

impl Extractor for Headers {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_names_the_remote_parent() {
        let parent = remote_parent(|name| {
            (name == "traceparent")
                .then(|| "00-0af7651916cd43dd8448eb211c12666c-b7ad6b7169242424-01".to_string())
        })
        .expect("a valid traceparent");
        assert_eq!(
            parent.trace_id().to_string(),
            "0af7651916cd43dd8448eb211c12666c"
        );
        assert_eq!(parent.span_id().to_string(), "b7ad6b7169242424");
        assert!(parent.is_remote());
        assert!(remote_parent(|_| Some("garbage".to_string())).is_none());
        assert!(remote_parent(|_| None).is_none());
    }

    #[test]
    fn urls_without_scheme_are_http() {
        assert_eq!(
            with_scheme("localhost:4318/v1/traces"),
            "http://localhost:4318/v1/traces"
        );
        assert_eq!(
            with_scheme("https://c:1/v1/traces"),
            "https://c:1/v1/traces"
        );
    }
}
