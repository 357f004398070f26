//! Settings semantics (Triton's global and per-model fallbacks, counts,
//! refusals) and what the trace file receives.

use std::time::Instant;

use super::*;
use crate::{activity::Activity, level::TraceLevel};

fn manager(
    file: &str,
    level: TraceLevel,
    rate: u32,
    count: i32,
    log_frequency: u32,
) -> TraceManager {
    TraceManager::new(TraceConfig {
        level,
        rate,
        count,
        log_frequency,
        file: file.to_string(),
        ..TraceConfig::default()
    })
    .unwrap()
}

fn set_rate(rate: u32) -> SettingsUpdate {
    SettingsUpdate {
        rate: Change::Set(rate),
        ..Default::default()
    }
}

#[test]
fn model_settings_fall_back_on_the_global_ones() {
    let m = manager("/tmp/unused.json", TraceLevel::OFF, 1000, -1, 0);
    let set = SettingsUpdate {
        level: Change::Set(TraceLevel::TIMESTAMPS),
        rate: Change::Set(5),
        count: Change::Set(10),
        ..Default::default()
    };
    m.update(Some("simple"), &set).unwrap();
    m.update(
        None,
        &SettingsUpdate {
            log_frequency: Change::Set(4),
            ..set_rate(2)
        },
    )
    .unwrap();
    let simple = m.settings(Some("simple"));
    assert_eq!(
        (simple.rate, simple.count, simple.log_frequency),
        (5, 10, 4)
    );
    assert_eq!(m.settings(Some("other")).rate, 2);
    // Cleared, the model's rate follows the global one again.
    let clear = SettingsUpdate {
        rate: Change::Clear,
        ..Default::default()
    };
    m.update(Some("simple"), &clear).unwrap();
    assert_eq!(m.settings(Some("simple")).rate, 2);
    // Cleared, the global rate is the command line's again.
    m.update(None, &clear).unwrap();
    assert_eq!(m.settings(None).rate, 1000);
    assert_eq!(m.settings(Some("simple")).rate, 1000);
    assert_eq!(m.settings(Some("simple")).count, 10);
}

#[test]
fn invalid_settings_are_refused_unless_tracing_is_off() {
    let m = manager("", TraceLevel::OFF, 1000, -1, 0);
    let on = SettingsUpdate {
        level: Change::Set(TraceLevel::TIMESTAMPS),
        ..Default::default()
    };
    let e = m.update(Some("simple"), &on).unwrap_err();
    assert_eq!(
        e.message,
        "Attempting to set invalid trace setting :trace file name is not given"
    );
    m.update(None, &set_rate(0)).unwrap();
    assert_eq!(m.settings(None).rate, 0);
    let m = manager("/tmp/x.json", TraceLevel::TIMESTAMPS, 1, -1, 0);
    let e = m.update(None, &set_rate(0)).unwrap_err();
    assert_eq!(
        e.message,
        "Attempting to set invalid trace setting :sample rate must be non-zero"
    );
    let zero = SettingsUpdate {
        count: Change::Set(0),
        ..Default::default()
    };
    let e = m.update(None, &zero).unwrap_err();
    assert_eq!(e.message, "Attempting to set invalid trace setting :");
    assert_eq!(m.settings(None).rate, 1);
}

#[test]
fn rate_samples_one_in_n_and_count_limits_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json").display().to_string();
    let m = manager(&path, TraceLevel::TIMESTAMPS, 3, 2, 0);
    let sampled: Vec<bool> = (0..9).map(|_| m.sample("m", |_| None).is_some()).collect();
    assert_eq!(
        sampled,
        [false, false, true, false, false, true, false, false, false]
    );
    assert_eq!(m.settings(Some("m")).count, 0);
}

#[test]
fn traces_are_written_as_triton_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json").display().to_string();
    let m = manager(&path, TraceLevel::TIMESTAMPS, 1, -1, 2);
    for _ in 0..3 {
        let trace = m.sample("simple", |_| None).unwrap();
        trace.report(Activity::HttpRecvStart, Instant::now());
        trace.request_start("simple", 1, "", Instant::now());
        let step = trace.child();
        step.request_start("step", 2, "", Instant::now());
        step.report(Activity::RequestEnd, Instant::now());
    }
    m.shutdown();
    let first: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{path}.0")).unwrap()).unwrap();
    let entries = first.as_array().unwrap();
    // Two traces of six records: the step's three, then the request's three.
    assert_eq!(entries.len(), 12);
    assert_eq!(entries[0]["parent_id"], entries[3]["id"]);
    assert_eq!(entries[0]["model_name"], "step");
    assert_eq!(entries[4]["model_name"], "simple");
    assert_eq!(entries[3]["timestamps"][0]["name"], "HTTP_RECV_START");
    let rest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{path}.1")).unwrap()).unwrap();
    assert_eq!(rest.as_array().unwrap().len(), 6);
    assert!(!std::path::Path::new(&path).exists());
}

#[test]
fn without_log_frequency_traces_go_to_the_main_file_at_exit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json").display().to_string();
    let m = manager(&path, TraceLevel::TIMESTAMPS, 1, -1, 0);
    for _ in 0..2 {
        m.sample("simple", |_| None)
            .unwrap()
            .request_start("simple", 1, "r", Instant::now());
    }
    // A change of settings writes the traces of the setting it replaces.
    m.update(None, &set_rate(2)).unwrap();
    m.sample("simple", |_| None);
    m.sample("simple", |_| None)
        .unwrap()
        .request_start("simple", 1, "r", Instant::now());
    m.shutdown();
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 6);
    assert_eq!(all[0]["request_id"], "r");
}
