//! Measuring one load level the way perf_analyzer does: optional warm-up,
//! then windows (by time or by response count) until the last three are
//! stable or the trials run out; server statistics are snapshotted at each
//! window boundary.

use std::time::{Duration, Instant};

use crate::{
    cli::MeasurementMode,
    progress::Progress,
    recorder::{Recorder, Window},
    server_stats::ServerStats,
    stability::{STABLE_WINDOWS, WindowSummary, is_stable},
    stats_source::StatsSource,
};

/// How windows are taken and judged.
#[derive(Debug, Clone)]
pub struct Settings {
    pub mode: MeasurementMode,
    pub interval: Duration,
    pub request_count: u64,
    pub stability_percentage: f64,
    pub max_trials: u32,
    pub percentile: Option<u8>,
    pub warmup_requests: u64,
}

/// One measurement window.
#[derive(Debug, Clone)]
pub struct Measured {
    pub duration: Duration,
    pub window: Window,
    /// The server's counters over the window, when statistics are available.
    pub server: Option<ServerStats>,
}

/// The windows of one load level.
#[derive(Debug)]
pub struct Measurement {
    /// The windows reported (the last three, or fewer).
    pub windows: Vec<Measured>,
    pub stable: bool,
    pub trials: u32,
}

/// State kept across load levels: settings, statistics, progress.
pub struct Session {
    pub settings: Settings,
    stats: Option<StatsSource>,
    progress: Progress,
    warmed_up: bool,
}

impl Session {
    /// A session; without `stats` no server-side numbers are reported.
    pub fn new(settings: Settings, stats: Option<StatsSource>) -> Self {
        Session {
            settings,
            stats,
            progress: Progress::new(),
            warmed_up: false,
        }
    }

    /// A statistics snapshot; a failure turns statistics off with a warning.
    pub async fn snapshot(&mut self) -> Option<ServerStats> {
        let source = self.stats.as_mut()?;
        match source.fetch().await {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!(
                    "warning: server statistics unavailable, reporting client-side numbers only: {e}"
                );
                self.stats = None;
                None
            }
        }
    }

    /// Waits (up to 5 s) until the server has counted `sent` requests since
    /// `before` (a server may count a request just after answering it) and
    /// returns its count.
    pub async fn settle(&mut self, before: Option<ServerStats>, sent: u64) -> Option<u64> {
        let before = before?;
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let count = self.snapshot().await?.since(&before).requests();
            if count >= sent || Instant::now() > deadline {
                return Some(count);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Warm-up (the first level only), then windows until stable.
    pub async fn measure(&mut self, label: &str, recorder: &Recorder) -> Measurement {
        if !self.warmed_up && self.settings.warmup_requests > 0 {
            self.progress.show(&format!("{label}: warming up"));
            while recorder.completed() < self.settings.warmup_requests {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            recorder.take();
        }
        self.warmed_up = true;
        let mut all: Vec<Measured> = Vec::new();
        let mut summaries = Vec::new();
        let mut stats = self.snapshot().await;
        let mut start = Instant::now();
        recorder.take();
        let mut stable = false;
        while !stable && (all.len() as u32) < self.settings.max_trials.max(1) {
            self.wait_window(recorder, start).await;
            let window = recorder.take();
            let end = Instant::now();
            let after = self.snapshot().await;
            let server = after.zip(stats).map(|(a, b)| a.since(&b));
            let measured = Measured {
                duration: end - start,
                window,
                server,
            };
            summaries.push(self.summary(&measured));
            stable = is_stable(&summaries, self.settings.stability_percentage);
            let last = summaries.last().expect("just pushed");
            self.progress.show(&format!(
                "{label}: window {}/{}: {:.1} responses/s, latency {:.0} us{}",
                summaries.len(),
                self.settings.max_trials,
                last.throughput,
                last.latency_us,
                if stable { " (stable)" } else { "" }
            ));
            all.push(measured);
            (stats, start) = (after, end);
        }
        self.progress.clear();
        let trials = all.len() as u32;
        let keep = all.len().min(STABLE_WINDOWS);
        Measurement {
            windows: all.split_off(all.len() - keep),
            stable,
            trials,
        }
    }

    async fn wait_window(&self, recorder: &Recorder, start: Instant) {
        match self.settings.mode {
            MeasurementMode::TimeWindows => {
                tokio::time::sleep_until((start + self.settings.interval).into()).await
            }
            MeasurementMode::CountWindows => {
                let base = recorder.completed();
                while recorder.completed() - base < self.settings.request_count {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        }
    }

    fn summary(&self, m: &Measured) -> WindowSummary {
        let w = &m.window;
        let latency_us = match self.settings.percentile {
            Some(p) => w.latency_us.value_at_quantile(f64::from(p) / 100.0) as f64,
            None if w.ok > 0 => w.latency_ns_sum as f64 / w.ok as f64 / 1000.0,
            None => 0.0,
        };
        WindowSummary {
            throughput: w.ok as f64 / m.duration.as_secs_f64(),
            latency_us,
        }
    }
}
