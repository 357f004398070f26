//! The statistics extension: `/v2/models[/{model}[/versions/{v}]]/stats`.

use axum::{
    extract::{Path, State},
    response::Response,
};
use oxiserve_core::{ModelStatistics, StatDuration};
use serde_json::{Value, json};

use super::{ModelPath, json_response};
use crate::{app::App, error::ApiResult};

/// `GET /v2/models/stats`
pub(crate) async fn all(State(app): State<App>) -> ApiResult<Response> {
    Ok(render(&app.server.statistics(None, None)?))
}

/// `GET /v2/models/{model}[/versions/{version}]/stats`
pub(crate) async fn model(
    State(app): State<App>,
    Path(path): Path<ModelPath>,
) -> ApiResult<Response> {
    let version = path.version()?;
    Ok(render(&app.server.statistics(Some(&path.model), version)?))
}

fn render(stats: &[ModelStatistics]) -> Response {
    let models: Vec<Value> = stats.iter().map(model_json).collect();
    json_response(&json!({ "model_stats": models }))
}

fn duration(d: &StatDuration) -> Value {
    json!({ "count": d.count, "ns": d.ns })
}

fn model_json(s: &ModelStatistics) -> Value {
    let i = &s.inference_stats;
    let batches: Vec<Value> = s
        .batch_stats
        .iter()
        .map(|b| {
            json!({
                "batch_size": b.batch_size,
                "compute_input": duration(&b.compute_input),
                "compute_infer": duration(&b.compute_infer),
                "compute_output": duration(&b.compute_output),
            })
        })
        .collect();
    json!({
        "name": s.name,
        "version": s.version.to_string(),
        "last_inference": s.last_inference,
        "inference_count": s.inference_count,
        "execution_count": s.execution_count,
        "inference_stats": {
            "success": duration(&i.success),
            "fail": duration(&i.fail),
            "queue": duration(&i.queue),
            "compute_input": duration(&i.compute_input),
            "compute_infer": duration(&i.compute_infer),
            "compute_output": duration(&i.compute_output),
            "cache_hit": duration(&i.cache_hit),
            "cache_miss": duration(&i.cache_miss),
        },
        "response_stats": {},
        "batch_stats": batches,
        "memory_usage": [],
    })
}
