//! `oxiserve-perf analyze`: reloads one model with each combination of
//! instance count, max batch size and dynamic batching (config overrides
//! through the repository API), measures each as a normal run does, reports
//! the configuration with the highest throughput under the latency bound,
//! and puts the model's own configuration back at the end.

use oxiserve_client::Client;
use serde_json::{Value, json};

use crate::{
    app,
    cli::{AnalyzeArgs, OnOff, Protocol},
    error::{Error, Result},
    report::{
        analysis::{self, Analysis, Candidate, Trial},
        console,
    },
    sweep,
    target::Target,
};

/// Runs the analysis, writes its outputs, and restores the model's configuration.
pub async fn run(args: &AnalyzeArgs) -> Result<Analysis> {
    let run = &args.run;
    let grpc = run.protocol == Protocol::Grpc;
    let default_url = if grpc {
        "localhost:8001"
    } else {
        "localhost:8000"
    };
    let url = run.url.clone().unwrap_or_else(|| default_url.into());
    let conn = Target::resolve(&url).await?.client(grpc).await?;
    let original = fetch_config(&conn, &run.model).await?;
    let candidates = candidates(args, &original);
    let mut trials = Vec::with_capacity(candidates.len());
    let sweep = async {
        for candidate in candidates {
            console::say(&format!("== {}: {}", run.model, candidate.describe()));
            trials.push(measure(&conn, args, &original, candidate).await?);
        }
        Ok(())
    };
    // Ctrl-C ends the sweep, not the process: the model gets its own
    // configuration back first.
    let outcome = tokio::select! {
        outcome = sweep => outcome,
        _ = tokio::signal::ctrl_c() => Err(Error::new("interrupted")),
    };
    let restored = load_with(&conn, &run.model, &original).await;
    outcome?;
    restored.map_err(|e| e.context("restoring the model's own configuration"))?;
    let best = best(&trials);
    let analysis = Analysis {
        model: run.model.clone(),
        latency_threshold_ms: run.latency_threshold,
        trials,
        best,
    };
    analysis::write(run, &analysis)?;
    Ok(analysis)
}

async fn measure(
    conn: &Client,
    args: &AnalyzeArgs,
    original: &Value,
    config: Candidate,
) -> Result<Trial> {
    let model = &args.run.model;
    load_with(conn, model, &with_overrides(original, &config))
        .await
        .map_err(|e| e.context(format!("loading {model} with {}", config.describe())))?;
    let applied = fetch_config(conn, model).await?;
    let server_config = read_back(&applied);
    let report = app::run(&args.run).await?;
    let bound = args.run.latency_threshold.map(|ms| ms * 1000.0);
    let best = sweep::best(&report.points, bound).cloned();
    Ok(Trial {
        config,
        server_config,
        best,
        report,
    })
}

/// The model's configuration as Triton's JSON (`GET /v2/models/M/config`).
async fn fetch_config(conn: &Client, model: &str) -> Result<Value> {
    Ok(oxiserve_config::to_json(
        &conn.model_config(model, "").await?,
    ))
}

/// (Re)loads `model` with `config` instead of its `config.pbtxt`.
async fn load_with(conn: &Client, model: &str, config: &Value) -> Result<()> {
    Ok(conn
        .load_model(model, Some(&config.to_string()), &[])
        .await?)
}

/// Every combination of the lists; the model's own max_batch_size when none is given.
fn candidates(args: &AnalyzeArgs, original: &Value) -> Vec<Candidate> {
    let own = original["max_batch_size"].as_u64().unwrap_or(0) as u32;
    let sizes = if args.max_batch_sizes.is_empty() {
        vec![own]
    } else {
        args.max_batch_sizes.clone()
    };
    let mut out = Vec::new();
    for &instance_count in &args.instance_counts {
        for &max_batch_size in &sizes {
            for &dynamic in &args.dynamic_batching {
                out.push(Candidate {
                    instance_count,
                    max_batch_size,
                    dynamic_batching: dynamic == OnOff::On,
                });
            }
        }
    }
    out
}

/// The model's configuration with one candidate's settings.
fn with_overrides(original: &Value, c: &Candidate) -> Value {
    let mut config = original.clone();
    let kind = original["instance_group"][0]["kind"]
        .as_str()
        .unwrap_or("KIND_CPU")
        .to_string();
    config["instance_group"] = json!([{"count": c.instance_count, "kind": kind}]);
    config["max_batch_size"] = json!(c.max_batch_size);
    if let Some(map) = config.as_object_mut() {
        match (c.dynamic_batching, original.get("dynamic_batching")) {
            (true, Some(own)) => map.insert("dynamic_batching".into(), own.clone()),
            (true, None) => map.insert("dynamic_batching".into(), json!({})),
            (false, _) => map.remove("dynamic_batching"),
        };
    }
    config
}

/// The candidate settings of a configuration (instances summed over groups).
fn read_back(config: &Value) -> Candidate {
    let groups = config["instance_group"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    Candidate {
        instance_count: groups
            .iter()
            .map(|g| g["count"].as_u64().unwrap_or(1) as u32)
            .sum(),
        max_batch_size: config["max_batch_size"].as_u64().unwrap_or(0) as u32,
        dynamic_batching: config.get("dynamic_batching").is_some_and(|d| !d.is_null()),
    }
}

fn best(trials: &[Trial]) -> Option<usize> {
    trials
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.best.as_ref().map(|b| (i, b.throughput)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_set_instances_batching_and_keep_the_rest() {
        let original = json!({"name": "m", "max_batch_size": 8, "input": [1],
            "instance_group": [{"count": 1, "kind": "KIND_CPU", "name": "g"}]});
        let on = Candidate {
            instance_count: 3,
            max_batch_size: 4,
            dynamic_batching: true,
        };
        let config = with_overrides(&original, &on);
        assert_eq!(
            config["instance_group"],
            json!([{"count": 3, "kind": "KIND_CPU"}])
        );
        assert_eq!(
            (config["max_batch_size"].clone(), config["input"].clone()),
            (json!(4), json!([1]))
        );
        assert_eq!(config["dynamic_batching"], json!({}));
        assert_eq!(read_back(&config), on);
        let off = with_overrides(
            &config,
            &Candidate {
                dynamic_batching: false,
                ..on
            },
        );
        assert!(off.get("dynamic_batching").is_none());
        assert_eq!(
            read_back(&off),
            Candidate {
                dynamic_batching: false,
                ..on
            }
        );
    }
}
