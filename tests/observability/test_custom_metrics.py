"""Custom metrics of Python models (pb_utils.MetricFamily): the families and metrics they
make, on /metrics exactly as Triton 2.51 shows them (HELP and TYPE lines, labels, values,
histogram parts, their place among Triton's own families), pb_utils' errors, and what
becomes of them when the model unloads. The models are
python_backend/models/metric_*/model.py.

Triton 2.51 aborts (boost::interprocess::lock_exception) about every other time its stub
passes an error of the server back to a model's metric call (a bad name, a refused
operation); the tests of those errors run on oxiserve only. Their texts were taken from
Triton, one fresh server per error.
"""

import json
import queue

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from helpers import wait_for
from models import model_source
from python_models import PyModel, config, serve
from scrapes import scrape
from servers import TARGET

SCENARIOS = PyModel(
    "metric_scenarios", model_source("metric_scenarios"),
    config([("MODE", "BYTES", [1])], [("OUT", "BYTES", [1])]))
DECOUPLED = PyModel(
    "metric_decoupled", model_source("metric_decoupled"),
    config([("N", "INT32", [1])], [("OUT", "INT32", [1])],
           extra="model_transaction_policy { decoupled: true }\n"))
BLS = PyModel(
    "metric_bls", model_source("metric_bls"),
    config([("MODE", "BYTES", [1])], [("OUT", "BYTES", [1])],
           extra='parameters [ { key: "callee", value: { string_value: "metric_scenarios" } } ]\n'))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("custom_metrics"), [SCENARIOS, DECOUPLED, BLS]) as s:
        yield s


@pytest.fixture(scope="module")
def client(server):
    c = httpclient.InferenceServerClient(server.url)
    yield c
    c.close()


def run(client, mode, model="metric_scenarios"):
    """Runs scenario `mode`; what the model saw."""
    inp = httpclient.InferInput("MODE", [1], "BYTES")
    inp.set_data_from_numpy(np.array([mode.encode()], dtype=object))
    result = client.infer(model, [inp])
    return json.loads(result.as_numpy("OUT")[0])


def settled(server, done):
    """A scrape for which `done(scrape)` holds, once one does."""
    def check():
        s = scrape(server)
        try:
            return s if done(s) else None
        except AssertionError:  # a sample not there yet
            return None
    return wait_for(check, what="metrics to settle")


def lines_of(scraped, name):
    """The sample lines of family `name`, its histogram parts included."""
    parts = (name + "{", name + " ", name + "_count", name + "_sum", name + "_bucket")
    return [line for line in scraped.lines if line.startswith(parts)]


def test_a_counter_as_triton_shows_it(client, server):
    assert run(client, "counter") == {"before": 0.0, "after": 2023.0}
    s = scrape(server)
    assert s.help["test_counter"] == "test metric counter kind end to end"
    assert s.type["test_counter"] == "counter"
    assert lines_of(s, "test_counter") == [
        'test_counter{example1="counter_label1",example2="counter_label2"} 2023']


def test_a_gauge_goes_both_ways(client, server):
    assert run(client, "gauge") == {"decremented": 1999.5, "set": 999.9}
    s = scrape(server)
    assert s.type["test_gauge"] == "gauge"
    assert lines_of(s, "test_gauge") == ['test_gauge{example1="gauge_label1"} 999.9']


def test_a_histogram_has_count_sum_and_cumulative_buckets(client, server):
    run(client, "histogram")
    s = scrape(server)
    assert s.type["test_histogram"] == "histogram"
    lines = lines_of(s, "test_histogram")
    labelled = [line for line in lines if "histogram_label1" in line]
    assert labelled == [
        'test_histogram_count{example1="histogram_label1"} 3',
        'test_histogram_sum{example1="histogram_label1"} 7.55',
        'test_histogram_bucket{example1="histogram_label1",le="0.1"} 1',
        'test_histogram_bucket{example1="histogram_label1",le="1"} 1',
        'test_histogram_bucket{example1="histogram_label1",le="2.5"} 2',
        'test_histogram_bucket{example1="histogram_label1",le="5"} 2',
        'test_histogram_bucket{example1="histogram_label1",le="10"} 3',
        'test_histogram_bucket{example1="histogram_label1",le="+Inf"} 3',
    ]
    assert sorted(set(lines) - set(labelled)) == [
        'test_histogram_bucket{example1="no buckets",le="+Inf"} 1',
        'test_histogram_count{example1="no buckets"} 1',
        'test_histogram_sum{example1="no buckets"} 3',
    ]


def test_values_print_as_triton_prints_them(client, server):
    run(client, "values")
    s = scrape(server)
    assert "test_values" not in s.help, "an empty description has no HELP line"
    assert s.type["test_values"] == "gauge"
    assert sorted(lines_of(s, "test_values")) == sorted([
        'test_values{v="sum"} 0.3',
        'test_values{v="big"} 1e+20',
        'test_values{v="third"} 0.3333333333333333',
        'test_values{v="small"} 1e-07',
        'test_values{v="nan"} Nan',
        'test_values{v="minus_inf"} -Inf',
        'test_values{v="int"} 9007199254740992',
        'test_values{v="true"} 1',
        'test_values{v="numpy"} 2.5',
    ])


def test_labels_are_sorted_and_escaped(client, server):
    run(client, "labels")
    assert sorted(lines_of(scrape(server), "test_labels")) == [
        'test_labels 1',
        'test_labels{alpha="quote \\" backslash \\\\ newline \\n end",zeta="1"} 1',
        'test_labels{empty=""} 1',
    ]


def test_families_of_one_name_share_their_metrics(client, server):
    assert run(client, "shared") == {"two": 7.5, "other": 0.0}
    s = scrape(server)
    assert s.help["test_shared"] == "first description"
    assert "second description" not in s.text
    assert sorted(lines_of(s, "test_shared")) == [
        'test_shared{k="other"} 0', 'test_shared{k="v"} 7.5']


def test_custom_families_follow_tritons_of_their_type(client, server):
    for mode in ("counter", "gauge", "histogram"):
        run(client, mode)
    types = [line.split()[2] for line in scrape(server).lines if line.startswith("# TYPE")]
    assert types.index("test_counter") > types.index("nv_inference_exec_count")
    assert types.index("test_counter") < types.index("nv_inference_pending_request_count")
    assert types.index("test_gauge") > types.index("nv_cpu_memory_used_bytes")
    assert types.index("test_histogram") > types.index("test_gauge")


def test_a_metric_made_in_initialize(server):
    assert scrape(server).value("test_initialized", where="initialize") == 5


def test_errors_the_stub_raises(client):
    assert run(client, "stub_errors") == {
        "labels": "TritonModelException: Failed to create metric. Labels must be a dictionary.",
        "buckets_tuple": "TritonModelException: Failed to create metric. Buckets must be a list.",
        "unexpected_buckets":
            "TritonModelException: Failed to create metric. Unexpected buckets found.",
        "missing_buckets":
            "TritonModelException: Failed to create metric. Missing required buckets.",
        "none_buckets":
            "TritonModelException: Failed to create metric. Missing required buckets.",
        "kind_int": "TypeError:",
        "name_none": "TypeError:",
        "value_text": "TypeError:",
        "bucket_text": "RuntimeError: Unable to cast Python instance to C++ type (#define "
                       "PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)",
    }


def test_a_family_deleted_first_takes_its_metrics(client, server):
    deleted = ("TritonModelException: Failed to %s: Invalid metric operation as the "
               "corresponding 'MetricFamily' has been deleted. The 'MetricFamily' object "
               "should be deleted AFTER its corresponding 'Metric' objects have been deleted.")
    seen = run(client, "lifetime")
    for name in ("test_lifetime_counter", "test_lifetime_gauge"):
        assert seen[name] == {"increment": deleted % "increment metric value",
                              "set": deleted % "set metric value",
                              "value": deleted % "get metric value"}, name
        assert lines_of(scrape(server), name) == [], name


@pytest.mark.oxiserve_only  # Triton 2.51 aborts now and then on these (see above)
def test_errors_the_server_reports(client):
    def server_error(context, message):
        return ("TritonModelException: %s: Failed to process the request for model "
                "'metric_scenarios_0_0', message: %s" % (context, message))

    incr, set_, observe = ("Failed to %s metric value" % op
                           for op in ("increment", "set", "observe"))
    family, metric = "Error when creating MetricFamily", "Error when creating Metric"
    assert run(client, "server_errors") == {
        "negative": server_error(incr, "TRITONSERVER_METRIC_KIND_COUNTER can only be "
                                       "incremented monotonically by non-negative values."),
        "counter_set": server_error(set_, "TRITONSERVER_METRIC_KIND_COUNTER does not support Set"),
        "counter_observe": server_error(
            observe, "TRITONSERVER_METRIC_KIND_COUNTER does not support Observe"),
        "gauge_observe": server_error(
            observe, "TRITONSERVER_METRIC_KIND_GAUGE does not support Observe"),
        "histogram_value": server_error(
            "Failed to get metric value", "TRITONSERVER_METRIC_KIND_HISTOGRAM does not support "
                                          "Value"),
        "histogram_increment": server_error(
            incr, "TRITONSERVER_METRIC_KIND_HISTOGRAM does not support Increment"),
        "histogram_set": server_error(
            set_, "TRITONSERVER_METRIC_KIND_HISTOGRAM does not support Set"),
        "name": server_error(family, "Invalid metric name"),
        "reserved": server_error(family, "Invalid metric name"),
        "kind": server_error(family, "Family name already exists with different type"),
        "label": server_error(metric, "Invalid label name"),
        "label_value": server_error(metric, "attempt to access JSON non-string as string"),
        "unsorted": server_error(metric, "Bucket Boundaries must be strictly sorted"),
        "duplicate": server_error(metric, "Bucket Boundaries must be strictly sorted"),
    }


def test_a_decoupled_model_counts_from_its_threads(server):
    responses = queue.Queue()
    with grpcclient.InferenceServerClient(server.grpc_url) as c:
        c.start_stream(callback=lambda result, error: responses.put((result, error)))
        for n in (3, 1):
            inp = grpcclient.InferInput("N", [1], "INT32")
            inp.set_data_from_numpy(np.array([n], dtype=np.int32))
            c.async_stream_infer("metric_decoupled", [inp])
        for _ in range(4):
            result, error = responses.get(timeout=30)
            assert error is None, error
        c.stop_stream()
    s = settled(server, lambda s: s.value("test_decoupled_responses",
                                           model="metric_decoupled") == 4)
    assert lines_of(s, "test_decoupled_sizes") == [
        "test_decoupled_sizes_count 2",
        "test_decoupled_sizes_sum 4",
        'test_decoupled_sizes_bucket{le="1"} 1',
        'test_decoupled_sizes_bucket{le="2"} 1',
        'test_decoupled_sizes_bucket{le="4"} 2',
        'test_decoupled_sizes_bucket{le="+Inf"} 2',
    ]


def test_a_bls_model_counts_its_calls(client, server):
    assert run(client, "values", model="metric_bls") == {}
    with pytest.raises(Exception, match="no_such_scenario"):
        run(client, "no_such_scenario", model="metric_bls")
    s = scrape(server)
    assert s.value("test_bls_calls", callee="metric_scenarios", outcome="ok") >= 1
    assert s.value("test_bls_calls", callee="metric_scenarios", outcome="error") == 1


def test_a_models_metrics_go_when_it_unloads(tmp_path):
    """A model's metrics go with it: after an unload neither the ones it left nor the
    ones it deleted in finalize are shown, and a reload starts them again. (Triton
    2.51's stub deletes nothing as it ends: the ones a model left stay, frozen, and a
    reload continues them; the issue asks for them gone.)"""
    source = model_source("metric_lifecycle")
    models = [PyModel(name, source, config([("IN", "INT32", [1])], [("VALUE", "FP64", [1])]))
              for name in ("metric_leaving", "metric_deleting")]
    flags = ["--model-control-mode=explicit", "--load-model=metric_leaving",
             "--load-model=metric_deleting"]
    with serve(tmp_path, models, flags) as server:
        c = httpclient.InferenceServerClient(server.url)

        def infer(name):
            inp = httpclient.InferInput("IN", [1], "INT32")
            inp.set_data_from_numpy(np.array([0], dtype=np.int32))
            return float(c.infer(name, [inp]).as_numpy("VALUE")[0])

        assert (infer("metric_leaving"), infer("metric_deleting")) == (11.0, 11.0)
        s = scrape(server)
        assert s.value("metric_leaving_requests", model="metric_leaving") == 11
        assert s.value("metric_deleting_requests", model="metric_deleting") == 11
        for name in ("metric_leaving", "metric_deleting"):
            c.unload_model(name)
        wait_for(lambda: not any(c.is_model_ready(n)
                                 for n in ("metric_leaving", "metric_deleting")),
                 what="both models unloaded")
        s = settled(server, lambda s: "metric_deleting_requests" not in s.type)
        left = lines_of(s, "metric_leaving_requests")
        if TARGET == "triton":
            assert left == ['metric_leaving_requests{model="metric_leaving"} 11']
        else:
            assert left == []
        for name in ("metric_leaving", "metric_deleting"):
            c.load_model(name)
        again = (infer("metric_leaving"), infer("metric_deleting"))
        assert again == ((22.0, 11.0) if TARGET == "triton" else (11.0, 11.0))
        c.close()
