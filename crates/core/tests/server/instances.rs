//! Instances, concurrency and cancellation.

use crate::common::*;

/// Names of this process's threads (Linux), as the kernel keeps them (15 bytes).
#[cfg(target_os = "linux")]
fn thread_names() -> Vec<String> {
    fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end().to_string())
        .collect()
}

#[tokio::test]
async fn instance_group_count_gives_that_many_instances() {
    let config = slow(20, 3);
    let dir = repo(&[("trio/config.pbtxt", config.as_str()), ("trio/1/", "")]);
    let server = server(&dir);
    let group = &server.model_config("trio", None).unwrap().instance_group;
    assert_eq!(group.len(), 1);
    assert_eq!(group[0].count, 3);

    #[cfg(target_os = "linux")]
    {
        // One thread per instance, named after it.
        let mut instances: Vec<String> = thread_names()
            .into_iter()
            .filter(|n| n.starts_with("inst:trio_"))
            .collect();
        instances.sort();
        assert_eq!(
            instances,
            ["inst:trio_0_0", "inst:trio_0_1", "inst:trio_0_2"]
        );
    }

    // Concurrent requests all complete, each with its own data.
    let streams: Vec<_> = (0..9)
        .map(|i| server.infer(request("trio", None, &[i as f32])).unwrap())
        .collect();
    for (i, stream) in streams.into_iter().enumerate() {
        let response = stream.single().await.unwrap();
        assert_eq!(values(output(&response, "OUTPUT0")), [i as f32]);
    }
    let s = settled_stats(&server, "trio", 9);
    assert_eq!(s.inference_stats.success.count, 9);
    assert_eq!(s.execution_count, 9);
    assert_eq!(server.model("trio", None).unwrap().pending_requests(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn requests_from_many_tasks_all_complete() {
    let config = slow(5, 2);
    let dir = repo(&[("pair/config.pbtxt", config.as_str()), ("pair/1/", "")]);
    let server = server(&dir);
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let server = server.clone();
            tokio::spawn(async move {
                let response = infer(&server, request("pair", None, &[i as f32, 1.0]))
                    .await
                    .unwrap();
                values(output(&response, "OUTPUT0"))
            })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        assert_eq!(task.await.unwrap(), [i as f32, 1.0]);
    }
    let s = settled_stats(&server, "pair", 16);
    assert_eq!(s.inference_stats.success.count, 16);
    assert_eq!(s.execution_count, 16);
}

#[tokio::test]
async fn dropping_a_stream_before_it_is_served_cancels_the_request() {
    let config = slow(300, 1);
    let dir = repo(&[("slow/config.pbtxt", config.as_str()), ("slow/1/", "")]);
    let server = server(&dir);
    // The first request keeps the only instance busy; the second waits in
    // the queue and its client goes away; the third comes after it.
    let first = server.infer(request("slow", None, &[1.0])).unwrap();
    let second = server.infer(request("slow", None, &[2.0])).unwrap();
    drop(second);
    let third = server.infer(request("slow", None, &[3.0])).unwrap();

    let response = first.single().await.unwrap();
    assert_eq!(values(output(&response, "OUTPUT0")), [1.0]);
    let response = third.single().await.unwrap();
    assert_eq!(values(output(&response, "OUTPUT0")), [3.0]);

    let s = settled_stats(&server, "slow", 3);
    assert_eq!(s.inference_stats.success.count, 2);
    assert_eq!(s.inference_stats.fail.count, 1);
    assert_eq!(s.failures.get(FailureReason::Canceled), 1);
    // The cancelled request never executed.
    assert_eq!(s.execution_count, 2);
    assert_eq!(s.inference_count, 2);
    assert_eq!(s.inference_stats.queue.count, 2);
}

#[tokio::test]
async fn latency_histograms_count_successes_when_enabled() {
    let config = slow(0, 1);
    let files = [
        ("a/config.pbtxt", config.as_str()),
        ("a/1/", ""),
        ("a/2/", ""),
    ];
    let dir = repo(&files);
    let plain = server(&dir);
    assert_eq!(plain.model("a", None).unwrap().latency().histograms, None);

    let dir = repo(&files);
    let server = server_with(&dir, |c| c.latency_histograms = true);
    for _ in 0..3 {
        infer(&server, request("a", None, &[1.0])).await.unwrap();
    }
    let s = settled_stats(&server, "a", 3);
    let model = server.model("a", None).unwrap();
    let latency = model.latency().histograms.unwrap();
    assert_eq!(latency.request.count(), s.inference_stats.success.count);
    assert_eq!(latency.queue.count(), 3);
    assert!(model.load_duration() > Duration::ZERO);
    let loaded: Vec<_> = server
        .loaded_models()
        .iter()
        .map(|m| (m.name().to_string(), m.version()))
        .collect();
    assert_eq!(loaded, [("a".to_string(), 2)]);
}

#[tokio::test]
async fn a_cancelled_stream_ends_with_a_cancelled_error() {
    let config = slow(200, 1);
    let dir = repo(&[("slow/config.pbtxt", config.as_str()), ("slow/1/", "")]);
    let server = server(&dir);
    let first = server.infer(request("slow", None, &[1.0])).unwrap();
    let second = server.infer(request("slow", None, &[2.0])).unwrap();
    // A frontend cancels explicitly through the flag, and still reads the stream.
    second.cancel_flag().cancel();
    first.single().await.unwrap();
    assert_error(second.single().await, ErrorKind::Cancelled, &["cancel"]);
}
