"""The statistics extension over gRPC: ModelStatistics."""

import numpy as np

from grpc_helpers import expect_grpc_error, infer_input
from helpers import wait_for

DURATIONS = ["success", "fail", "queue", "compute_input", "compute_infer", "compute_output",
             "cache_hit", "cache_miss"]


def _stats(grpc_client, name="", version=""):
    return grpc_client.get_inference_statistics(name, version, as_json=True).get("model_stats", [])


def _count(entry, key):
    return int(entry["inference_stats"].get(key, {}).get("count", "0"))


def test_counts_follow_requests(grpc_client):
    (before,) = _stats(grpc_client, "stats_model")
    batch = np.arange(6, dtype=np.int32).reshape(2, 3)
    for _ in range(3):
        grpc_client.infer("stats_model", [infer_input("INPUT0", batch, "INT32")])
    # Triton counts a request a moment after its response goes out.
    after = wait_for(
        lambda: next(
            (e for e in _stats(grpc_client, "stats_model")
             if _count(e, "success") - _count(before, "success") == 3),
            None,
        ),
        what="3 more successes",
    )
    assert after["name"] == "stats_model" and after["version"] == "1"
    assert _count(after, "success") - _count(before, "success") == 3
    assert int(after["inference_count"]) - int(before.get("inference_count", 0)) == 6
    assert int(after["execution_count"]) - int(before.get("execution_count", 0)) == 3
    assert int(after["last_inference"]) > 0
    sizes = {b["batch_size"] for b in after["batch_stats"]}
    assert "2" in sizes


def test_every_duration_is_reported(grpc_client):
    (entry,) = _stats(grpc_client, "stats_model")
    stats = grpc_client.get_inference_statistics("stats_model").model_stats[0]
    for key in DURATIONS:
        assert stats.inference_stats.HasField(key), key
    assert entry["name"] == "stats_model"


def test_all_models_and_versions(grpc_client):
    pairs = {(e["name"], e["version"]) for e in _stats(grpc_client)}
    assert ("stats_idle", "1") in pairs
    assert {("versioned", v) for v in "123"} <= pairs
    assert [e["version"] for e in _stats(grpc_client, "versioned", "2")] == ["2"]


def test_unknown_model_or_version(grpc_client):
    expect_grpc_error(
        lambda: grpc_client.get_inference_statistics("no_such_model"),
        "INVALID_ARGUMENT",
        "requested model 'no_such_model' is not available",
    )
    expect_grpc_error(
        lambda: grpc_client.get_inference_statistics("versioned", "9"),
        "INVALID_ARGUMENT",
        "requested model version is not available for model 'versioned'",
    )
