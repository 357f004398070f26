//! The statistics extension: `ModelStatistics`.

use oxiserve_core::{ModelStatistics, Server, StatDuration};
use oxiserve_proto::inference::{
    InferBatchStatistics, InferStatistics, ModelStatistics as ProtoStatistics,
    ModelStatisticsRequest, ModelStatisticsResponse, StatisticDuration,
};
use oxiserve_types::Result;

use crate::version;

/// Statistics of one model (one version or all), or of every model when the
/// name is empty.
pub(crate) fn model_statistics(
    server: &Server,
    request: ModelStatisticsRequest,
) -> Result<ModelStatisticsResponse> {
    let version = version::parse(&request.version)?;
    let name = (!request.name.is_empty()).then_some(request.name.as_str());
    let stats = server.statistics(name, version)?;
    Ok(ModelStatisticsResponse {
        model_stats: stats.into_iter().map(model).collect(),
    })
}

fn duration(d: StatDuration) -> Option<StatisticDuration> {
    Some(StatisticDuration {
        count: d.count,
        ns: d.ns,
    })
}

fn model(s: ModelStatistics) -> ProtoStatistics {
    let i = s.inference_stats;
    ProtoStatistics {
        name: s.name,
        version: s.version.to_string(),
        last_inference: s.last_inference,
        inference_count: s.inference_count,
        execution_count: s.execution_count,
        inference_stats: Some(InferStatistics {
            success: duration(i.success),
            fail: duration(i.fail),
            queue: duration(i.queue),
            compute_input: duration(i.compute_input),
            compute_infer: duration(i.compute_infer),
            compute_output: duration(i.compute_output),
            cache_hit: duration(i.cache_hit),
            cache_miss: duration(i.cache_miss),
        }),
        batch_stats: s
            .batch_stats
            .into_iter()
            .map(|b| InferBatchStatistics {
                batch_size: b.batch_size,
                compute_input: duration(b.compute_input),
                compute_infer: duration(b.compute_infer),
                compute_output: duration(b.compute_output),
            })
            .collect(),
        memory_usage: Vec::new(),
        response_stats: Default::default(),
    }
}
