//! An exporter that says when exports fail (the SDK drops the spans in
//! silence): one warning when the collector stops answering, one line when
//! it answers again.

use std::{
    future::Future,
    sync::atomic::{AtomicBool, Ordering},
    time::Duration,
};

use opentelemetry_sdk::{
    Resource,
    error::OTelSdkResult,
    trace::{SpanData, SpanExporter},
};

#[derive(Debug)]
pub(super) struct Warning<E> {
    inner: E,
    url: String,
    failing: AtomicBool,
}

impl<E> Warning<E> {
    pub fn new(inner: E, url: String) -> Self {
        Self {
            inner,
            url,
            failing: AtomicBool::new(false),
        }
    }
}

impl<E: SpanExporter> SpanExporter for Warning<E> {
    fn export(&self, batch: Vec<SpanData>) -> impl Future<Output = OTelSdkResult> + Send {
        let count = batch.len();
        let export = self.inner.export(batch);
        async move {
            let result = export.await;
            match &result {
                Err(e) if !self.failing.swap(true, Ordering::Relaxed) => log::warn!(
                    "cannot export trace spans to {}: {e}; {count} spans dropped (and any \
                     more until it answers)",
                    self.url
                ),
                Ok(()) if self.failing.swap(false, Ordering::Relaxed) => {
                    log::info!("trace spans are exported to {} again", self.url)
                }
                _ => {}
            }
            result
        }
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}
