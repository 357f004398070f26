"""Latency summaries (`--metrics-config summary_latencies=true`, quantiles from
`summary_quantiles`) as Triton 2.51 shows them: five `nv_inference_*_summary_us` families
of successful requests, `quantile` labels last; and the first-response histogram of
decoupled models that Triton 2.52 added (`histogram_latencies=true`, oxiserve only here)."""

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from helpers import wait_for
from models import ModelSpec, Tensor, identity
from scrapes import scrape

# Triton 2.51's summary families and help texts (three of them worded as its counters).
SUMMARIES = {
    "nv_inference_request_summary_us":
        "Summary of inference request duration in microseconds (includes cached requests)",
    "nv_inference_queue_summary_us":
        "Summary of inference queuing duration in microseconds (includes cached requests)",
    "nv_inference_compute_input_summary_us":
        "Cumulative compute input duration in microseconds (does not include cached requests)",
    "nv_inference_compute_infer_summary_us":
        "Cumulative compute inference duration in microseconds "
        "(does not include cached requests)",
    "nv_inference_compute_output_summary_us":
        "Cumulative inference compute output duration in microseconds "
        "(does not include cached requests)",
}
DEFAULT_QUANTILES = ["0.5", "0.9", "0.95", "0.99", "0.999"]


def infer(server, model, times=1):
    with httpclient.InferenceServerClient(server.url) as c:
        inp = httpclient.InferInput("INPUT0", [1, 1], "INT32")
        inp.set_data_from_numpy(np.array([[7]], dtype=np.int32))
        for _ in range(times):
            c.infer(model, [inp])


def settled(server, model, successes):
    """A scrape once `successes` requests of `model` are in its request summary."""
    def check():
        s = scrape(server)
        key = ("nv_inference_request_summary_us_count",
               frozenset({("model", model), ("version", "1")}))
        return s if s.samples.get(key) == successes else None
    return wait_for(check, what=f"{successes} requests summarized")


def quantile_lines(s, family, model):
    head = f'{family}{{model="{model}",version="1",quantile="'
    return [line[len(head):].split('"')[0] for line in s.lines if line.startswith(head)]


def test_summaries_are_off_by_default(start_server):
    server = start_server([identity("summary_off", "INT32")])
    infer(server, "summary_off")
    s = scrape(server)
    assert not [name for name in s.type if name.endswith("_summary_us")]


def test_summaries_of_successful_requests(start_server):
    server = start_server([identity("summary_on", "INT32"), identity("summary_idle", "INT32")],
                          "--metrics-config=summary_latencies=true")
    infer(server, "summary_on", times=3)
    s = settled(server, "summary_on", 3)
    for family, help_text in SUMMARIES.items():
        assert (s.type[family], s.help[family]) == ("summary", help_text), family
        labels = {"model": "summary_on", "version": "1"}
        assert s.value(family + "_count", **labels) == 3, family
        assert s.value(family + "_sum", **labels) >= 0, family
        assert quantile_lines(s, family, "summary_on") == DEFAULT_QUANTILES, family
        for q in DEFAULT_QUANTILES:
            assert s.value(family, quantile=q, **labels) >= 0, (family, q)
        # A model without requests: no estimate yet.
        assert s.value(family + "_count", model="summary_idle", version="1") == 0
        assert [line.rsplit(" ", 1)[1] for line in s.lines
                if line.startswith(f'{family}{{model="summary_idle"')] == ["Nan"] * 5
    assert s.value("nv_inference_request_success", model="summary_on", version="1") == 3
    types = [line.split()[2] for line in s.lines if line.startswith("# TYPE")]
    assert types.index("nv_inference_request_summary_us") > types.index("nv_cpu_memory_used_bytes")


def test_quantiles_from_the_command_line(start_server):
    """Triton's parsing: pairs `<quantile>:<error>`; "0.0.1" reads as 0."""
    server = start_server([identity("summary_quantiles", "INT32")],
                          "--metrics-config=summary_latencies=true",
                          "--metrics-config=summary_quantiles=0.1:0.0.1,0.7:0.01,0.75:0.01")
    infer(server, "summary_quantiles")
    s = settled(server, "summary_quantiles", 1)
    for family in SUMMARIES:
        assert quantile_lines(s, family, "summary_quantiles") == ["0.1", "0.7", "0.75"], family


def test_counter_latencies_false_stops_the_counters(start_server):
    """As in Triton 2.51: without the duration counters, the request, inference and
    execution counters stay at 0 too, while the summaries count."""
    server = start_server([identity("summary_nocounters", "INT32")],
                          "--metrics-config=summary_latencies=true",
                          "--metrics-config=counter_latencies=false")
    infer(server, "summary_nocounters", times=2)
    s = settled(server, "summary_nocounters", 2)
    labels = {"model": "summary_nocounters", "version": "1"}
    for counter in ("nv_inference_request_success", "nv_inference_count",
                    "nv_inference_exec_count"):
        assert s.value(counter, **labels) == 0, counter
    assert "nv_inference_request_duration_us" not in s.type


def stream(server, model, count):
    """`count` requests on one gRPC stream, each answered (decoupled) once."""
    answers = []
    with grpcclient.InferenceServerClient(server.grpc_url) as c:
        c.start_stream(callback=lambda result, error: answers.append(error))
        for _ in range(count):
            inp = grpcclient.InferInput("INPUT0", [1, 1], "INT32")
            inp.set_data_from_numpy(np.array([[7]], dtype=np.int32))
            c.async_stream_infer(model, [inp])
        wait_for(lambda: len(answers) == count, what=f"{count} responses")
        c.stop_stream()
    assert answers == [None] * count


@pytest.mark.oxiserve_only  # Triton 2.52's family; Triton 2.51 has none
def test_first_response_histogram_of_decoupled_models(start_server):
    decoupled = ModelSpec("first_decoupled", [Tensor("INPUT0", "INT32", [-1, -1])],
                          decoupled=True)
    server = start_server([decoupled, identity("first_plain", "INT32")],
                          "--metrics-config=histogram_latencies=true")
    stream(server, "first_decoupled", 2)
    infer(server, "first_plain")
    name = "nv_inference_first_response_histogram_ms"

    def counted():
        s = scrape(server)
        key = (name + "_count", frozenset({("model", "first_decoupled"), ("version", "1")}))
        return s if s.samples.get(key) == 2 else None

    s = wait_for(counted, what="two first responses")
    assert s.help[name] == "Duration from request to first response in milliseconds"
    assert s.type[name] == "histogram"
    head = f'{name}_bucket{{model="first_decoupled",version="1",le="'
    bounds = [line[len(head):].split('"')[0] for line in s.lines if line.startswith(head)]
    assert bounds == ["100", "500", "2000", "5000", "+Inf"]
    assert not [line for line in s.lines if "first_plain" in line and name in line]


@pytest.mark.oxiserve_only  # Triton 2.52's family; Triton 2.51 has none
def test_no_first_response_histogram_unless_asked(start_server):
    decoupled = ModelSpec("first_unasked", [Tensor("INPUT0", "INT32", [-1, -1])],
                          decoupled=True)
    server = start_server([decoupled])
    stream(server, "first_unasked", 1)
    assert "nv_inference_first_response_histogram_ms" not in scrape(server).type
