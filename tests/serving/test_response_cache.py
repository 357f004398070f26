"""The local response cache (`--cache-config local,size=N` and a model's
`response_cache { enable: true }`): a repeated request is answered without
executing the model, over HTTP and gRPC; statistics and metrics count hits
and misses as Triton 2.51 does; models the cache cannot serve are refused."""

import numpy as np
import pytest
import tritonclient.http as httpclient

from cache_helpers import CACHE, grpc_infer, stats
from management_models import ENSEMBLE, executions, infer, logging_model
from python_models import write_repo
from scrapes import scrape
from servers import Server, run_to_exit

FLAGS = ["--cache-config=local,size=1048576"]


@pytest.fixture
def cached(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    repo = write_repo(
        tmp_path / "repo",
        [logging_model("cached", logs / "cached", warmup=CACHE), logging_model("plain", logs / "plain")],
    )
    with Server(repo, FLAGS) as server:
        client = httpclient.InferenceServerClient(server.url)
        yield server, client, logs
        client.close()


def test_repeated_requests_are_answered_from_the_cache(cached):
    server, client, logs = cached
    assert infer(client, "cached", (1, 2, 3, 4)) == [1, 2, 3, 4]
    assert infer(client, "cached", (1, 2, 3, 4)) == [1, 2, 3, 4]
    assert grpc_infer(server, "cached", (1, 2, 3, 4)) == [1, 2, 3, 4]
    assert executions(logs / "cached") == [1]
    assert grpc_infer(server, "cached", (5, 6, 7, 8)) == [5, 6, 7, 8]
    assert infer(client, "cached", (5, 6, 7, 8)) == [5, 6, 7, 8]
    assert executions(logs / "cached") == [1, 1]

    s = stats(client, "cached")
    infer_stats = s["inference_stats"]
    assert infer_stats["cache_hit"]["count"] == 3
    assert infer_stats["cache_miss"]["count"] == 2
    assert infer_stats["success"]["count"] == 5
    assert infer_stats["queue"]["count"] == 5
    assert infer_stats["compute_infer"]["count"] == 2
    assert (s["inference_count"], s["execution_count"]) == (2, 2)


def test_a_model_without_the_cache_executes_every_request(cached):
    _, client, logs = cached
    for _ in range(3):
        assert infer(client, "plain") == [1, 2, 3, 4]
    assert executions(logs / "plain") == [1, 1, 1]
    infer_stats = stats(client, "plain")["inference_stats"]
    assert infer_stats["cache_hit"].get("count", 0) == 0
    assert infer_stats["cache_miss"].get("count", 0) == 0


def test_cache_metrics(cached):
    server, client, _ = cached
    for values in [(1, 1, 1, 1), (1, 1, 1, 1), (2, 2, 2, 2), (1, 1, 1, 1)]:
        infer(client, "cached", values)
    infer(client, "plain")
    text = scrape(server)
    labels = {"model": "cached", "version": "1"}
    assert text.value("nv_cache_num_hits_per_model", **labels) == 2
    assert text.value("nv_cache_num_misses_per_model", **labels) == 2
    assert text.value("nv_cache_hit_duration_per_model", **labels) >= 0
    assert text.value("nv_cache_miss_duration_per_model", **labels) >= 0
    assert text.value("nv_inference_request_success", **labels) == 4
    assert text.value("nv_inference_count", **labels) == 2
    assert text.value("nv_inference_exec_count", **labels) == 2
    assert not any(
        name.startswith("nv_cache") and dict(sample_labels).get("model") == "plain"
        for name, sample_labels in text.samples
    )




def test_a_cached_ensemble_answers_without_running_its_steps(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    repo = write_repo(tmp_path / "repo", [logging_model("member", logs / "member")])
    (repo / "pipeline" / "1").mkdir(parents=True)
    (repo / "pipeline" / "config.pbtxt").write_text(ENSEMBLE + CACHE)
    with Server(repo, FLAGS) as server:
        client = httpclient.InferenceServerClient(server.url)
        for values in [(1, 2, 3, 4), (1, 2, 3, 4), (4, 3, 2, 1), (1, 2, 3, 4)]:
            tensor = httpclient.InferInput("IN", [1, 4], "INT32")
            tensor.set_data_from_numpy(np.array([values], dtype=np.int32))
            out = client.infer("pipeline", [tensor]).as_numpy("OUT").tolist()[0]
            assert out == list(values)
        assert executions(logs / "member") == [1, 1], "the step ran once per distinct request"
        ensemble = stats(client, "pipeline")["inference_stats"]
        assert (ensemble["cache_hit"]["count"], ensemble["cache_miss"]["count"]) == (2, 2)
        # The member's own config does not enable the cache: it counts plain runs.
        member = stats(client, "member")
        assert member["inference_stats"]["cache_hit"].get("count", 0) == 0
        assert member["execution_count"] == 2
        client.close()


def test_cache_summaries(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    repo = write_repo(
        tmp_path / "repo",
        [logging_model("cached", logs / "cached", warmup=CACHE), logging_model("plain", logs / "plain")],
    )
    with Server(repo, FLAGS + ["--metrics-config=summary_latencies=true"]) as server:
        client = httpclient.InferenceServerClient(server.url)
        for values in [(1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (2, 2, 2, 2)]:
            infer(client, "cached", values)
        infer(client, "plain")
        text = scrape(server)
        cached = {"model": "cached", "version": "1"}
        assert text.value("nv_cache_hit_summary_per_model_count", **cached) == 2
        assert text.value("nv_cache_miss_summary_per_model_count", **cached) == 2
        assert text.value("nv_inference_queue_summary_us_count", **cached) == 4
        # As in Triton, a model with the cache has no request summary.
        assert not text.has("nv_inference_request_summary_us_count", **cached)
        plain = {"model": "plain", "version": "1"}
        assert text.value("nv_inference_request_summary_us_count", **plain) == 1
        assert not text.has("nv_cache_hit_summary_per_model_count", **plain)
        client.close()


def test_options_table_says_the_cache_is_enabled(cached):
    server, _, _ = cached
    assert any(
        "cache_enabled" in line and "| 1" in line for line in server.output().splitlines()
    ), server.output()


@pytest.mark.parametrize(
    "extra, words",
    [
        ("model_transaction_policy { decoupled: true }\n", "decoupled"),
        ("sequence_batching { }\n", "sequence batching"),
    ],
)
def test_models_the_cache_cannot_serve_are_refused(tmp_path, extra, words):
    repo = write_repo(
        tmp_path / "repo",
        [logging_model("bad", tmp_path / "log", warmup=CACHE + extra), logging_model("ok", tmp_path / "ok")],
    )
    with Server(repo, FLAGS + ["--strict-readiness=false", "--exit-on-error=false"]) as server:
        client = httpclient.InferenceServerClient(server.url)
        assert client.is_model_ready("ok") and not client.is_model_ready("bad")
        # Refused when its configuration is read: the log says why.
        refusal = [line for line in server.output().splitlines() if "bad" in line and words in line]
        assert any("response cache" in line.lower() for line in refusal), server.output()
        client.close()


@pytest.mark.oxiserve_only
@pytest.mark.parametrize(
    "flag, message",
    [
        ("--cache-config=local,size=big", "--cache-config=local,size=big: the size must be a number"),
        ("--cache-config=local,colour=red", "the local cache has no setting 'colour'"),
        ("--cache-config=fancy,size=1", "no cache 'fancy' in this build"),
    ],
)
def test_bad_cache_config_stops_start_up(tmp_path, flag, message):
    repo = write_repo(tmp_path / "repo", [])
    status, out = run_to_exit(repo, [flag])
    assert status not in (0, None), out
    assert message in out, out
