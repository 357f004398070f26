//! Statistics.

use crate::common::*;

#[tokio::test]
async fn statistics_count_requests_inferences_and_executions() {
    let dir = repo(&[("id/config.pbtxt", ID), ("id/1/", "")]);
    let server = server(&dir);
    let before = stats(&server, "id");
    assert_eq!(before.name, "id");
    assert_eq!(before.version, 1);
    assert_eq!(before.inference_count, 0);
    assert_eq!(before.last_inference, 0);
    assert!(before.batch_stats.is_empty());

    for i in 0..3 {
        infer(&server, request("id", None, &[i as f32]))
            .await
            .unwrap();
    }
    let batch4 = InferRequest {
        model_name: "id".into(),
        inputs: vec![fp32("INPUT0", &[4, 2], &[0.0; 8])],
        ..Default::default()
    };
    infer(&server, batch4).await.unwrap();

    let s = settled_stats(&server, "id", 4);
    let i = &s.inference_stats;
    assert_eq!(i.success.count, 4);
    assert_eq!(i.fail.count, 0);
    assert_eq!(i.queue.count, 4);
    assert_eq!(i.compute_input.count, 4);
    assert_eq!(i.compute_infer.count, 4);
    assert_eq!(i.compute_output.count, 4);
    assert_eq!(i.cache_hit.count, 0);
    assert_eq!(i.cache_miss.count, 0);
    // A batch of 4 is 4 inferences in 1 execution.
    assert_eq!(s.inference_count, 7);
    assert_eq!(s.execution_count, 4);
    let batches: Vec<(u64, u64)> = s
        .batch_stats
        .iter()
        .map(|b| (b.batch_size, b.compute_infer.count))
        .collect();
    assert_eq!(batches, vec![(1, 3), (4, 1)]);
    for b in &s.batch_stats {
        assert_eq!(b.compute_input.count, b.compute_infer.count);
        assert_eq!(b.compute_output.count, b.compute_infer.count);
    }
    assert!(s.last_inference > 0);
    assert!(i.success.ns > 0);

    // All models' statistics include it.
    let all = server.statistics(None, None).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].inference_count, 7);
}

#[tokio::test]
async fn compute_time_covers_the_execution_delay() {
    let config = slow(30, 1);
    let dir = repo(&[("slow/config.pbtxt", config.as_str()), ("slow/1/", "")]);
    let server = server(&dir);
    infer(&server, request("slow", None, &[1.0])).await.unwrap();
    let s = settled_stats(&server, "slow", 1);
    // The identity backend sleeps between its compute marks: at least the
    // delay is compute_infer (a lower bound only, never an upper one).
    assert!(s.inference_stats.compute_infer.ns >= 30_000_000, "{s:?}");
    assert!(s.inference_stats.success.ns >= s.inference_stats.compute_infer.ns);
}

/// As in Triton, a request refused before it is queued (validation) is in
/// no counter; failures after that are (see the cancellation test).
#[tokio::test]
async fn refused_requests_are_not_counted() {
    let dir = repo(&[("id/config.pbtxt", ID), ("id/1/", "")]);
    let server = server(&dir);
    let wrong_type = InferRequest {
        model_name: "id".into(),
        inputs: vec![Tensor::new(
            "INPUT0",
            DataType::Int32,
            vec![1, 1],
            Bytes::from(vec![0u8; 4]),
        )],
        ..Default::default()
    };
    assert_error(
        server.infer(wrong_type),
        ErrorKind::InvalidArg,
        &["'INPUT0'", "'id'"],
    );
    let too_big = InferRequest {
        model_name: "id".into(),
        inputs: vec![fp32("INPUT0", &[9, 1], &[0.0; 9])],
        ..Default::default()
    };
    assert_error(
        server.infer(too_big),
        ErrorKind::InvalidArg,
        &["'id'", "batch-size"],
    );
    let untouched = ModelStatistics {
        name: "id".into(),
        version: 1,
        ..Default::default()
    };
    assert_eq!(stats(&server, "id"), untouched);

    infer(&server, request("id", None, &[1.0])).await.unwrap();
    let s = settled_stats(&server, "id", 1);
    assert_eq!(s.inference_stats.fail.count, 0);
    assert_eq!(s.inference_stats.success.count, 1);
    assert_eq!(s.inference_count, 1);
    assert_eq!(s.execution_count, 1);
}
