"""The statistics extension. `stats_model` is used by this file only, so its
counters move exactly by the requests made here."""

import numpy as np
import tritonclient.http as httpclient

from helpers import expect_error, wait_for

MODEL = "stats_model"
DURATIONS = ["success", "fail", "queue", "compute_input", "compute_infer",
             "compute_output", "cache_hit", "cache_miss"]


def _stats(client, model=MODEL, version=""):
    (entry,) = client.get_inference_statistics(model, version)["model_stats"]
    return entry


def _infer(client, rows):
    data = np.arange(rows * 2, dtype=np.int32).reshape(rows, 2)
    inp = httpclient.InferInput("INPUT0", [rows, 2], "INT32")
    inp.set_data_from_numpy(data)
    np.testing.assert_array_equal(client.infer(MODEL, [inp]).as_numpy("OUTPUT0"), data)


def _batch(entry, size):
    found = [b for b in entry["batch_stats"] if b["batch_size"] == size]
    return found[0]["compute_infer"]["count"] if found else 0


def _reported(client, before, successes, batches):
    """Statistics once the requests are all counted: a server may count a
    request just after sending its response. Then exact checks follow."""
    def counted():
        after = _stats(client)
        done = (after["inference_stats"]["success"]["count"]
                - before["inference_stats"]["success"]["count"] >= successes)
        done = done and all(_batch(after, b) > _batch(before, b) for b in batches)
        return after if done else None
    return wait_for(counted, what=f"{successes} successes in the statistics")


def test_shape_of_statistics(client, http):
    entry = _stats(client)
    assert entry["name"] == MODEL and entry["version"] == "1"
    for key in ("last_inference", "inference_count", "execution_count", "batch_stats"):
        assert key in entry, key
    for key in DURATIONS:
        assert set(entry["inference_stats"][key]) == {"count", "ns"}, key
    raw = http.get(f"/v2/models/{MODEL}/versions/1/stats").json()
    assert [m["name"] for m in raw["model_stats"]] == [MODEL]


def test_counts_follow_requests(client):
    """Batches of 1, 2 and 3 rows: 3 successes, 6 inferences, 3 executions."""
    before = _stats(client)
    for rows in (1, 2, 3):
        _infer(client, rows)
    after = _reported(client, before, successes=3, batches=(1, 2, 3))
    stats_b, stats_a = before["inference_stats"], after["inference_stats"]
    assert stats_a["success"]["count"] - stats_b["success"]["count"] == 3
    assert stats_a["fail"]["count"] == stats_b["fail"]["count"]
    for key in ("queue", "compute_input", "compute_infer", "compute_output"):
        assert stats_a[key]["count"] - stats_b[key]["count"] == 3, key
        assert stats_a[key]["ns"] >= stats_b[key]["ns"], key
    assert stats_a["success"]["ns"] > stats_b["success"]["ns"]
    assert after["inference_count"] - before["inference_count"] == 6
    assert after["execution_count"] - before["execution_count"] == 3
    assert after["last_inference"] > 0
    assert after["last_inference"] >= before["last_inference"]
    for size in (1, 2, 3):
        assert _batch(after, size) - _batch(before, size) == 1, size


def test_rejected_requests_are_not_counted(client, http):
    """A request refused before it reaches the model changes no counter."""
    before = _stats(client)
    bad = {"inputs": [{"name": "INPUT0", "shape": [1, 1], "datatype": "FP32", "data": [1.0]}]}
    expect_error(http.infer(MODEL, bad), 400, "INPUT0")
    after = _stats(client)
    assert after["inference_stats"] == before["inference_stats"]
    assert after["inference_count"] == before["inference_count"]


def test_all_models(client):
    entries = client.get_inference_statistics()["model_stats"]
    pairs = {(e["name"], e["version"]) for e in entries}
    for name in ("stats_model", "stats_idle", "id_bytes", "classify", "nobatch_all"):
        assert (name, "1") in pairs, name
    assert {("versioned", v) for v in "123"} <= pairs
    index = {(m["name"], m["version"]) for m in client.get_model_repository_index()}
    assert pairs == index
    (idle,) = [e for e in entries if e["name"] == "stats_idle"]  # never asked
    assert (idle["inference_count"], idle["execution_count"]) == (0, 0)
    assert idle["last_inference"] == 0 and idle["batch_stats"] == []
    assert all(idle["inference_stats"][k]["count"] == 0 for k in DURATIONS)


def test_one_version(client):
    entries = client.get_inference_statistics("versioned", "2")["model_stats"]
    assert [(e["name"], e["version"]) for e in entries] == [("versioned", "2")]
    entries = client.get_inference_statistics("versioned")["model_stats"]
    assert sorted(e["version"] for e in entries) == ["1", "2", "3"]
