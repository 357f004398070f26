"""OpenTelemetry mode: spans exported over OTLP/HTTP to a receiver
(tests/support/otlp_receiver.py), their tree, attributes and events, the
caller's W3C trace context (HTTP headers, gRPC metadata), the settings
replies, and a collector that does not answer."""

import queue
from functools import partial

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from helpers import Http, wait_for
from otlp_receiver import OtlpReceiver
from python_models import serve
from servers import free_port
from tracing import (
    CALLER_SPAN_ID,
    CALLER_TRACE_ID,
    TRACEPARENT,
    infer_grpc,
    infer_http,
    models,
)

HEADERS = {"traceparent": TRACEPARENT}
SPAN_KIND_SERVER = 2
REQUEST_EVENTS = ["REQUEST_START", "QUEUE_START", "REQUEST_END"]
COMPUTE_EVENTS = ["COMPUTE_START", "COMPUTE_INPUT_END", "COMPUTE_OUTPUT_START", "COMPUTE_END"]
HTTP_EVENTS = {"HTTP_RECV_START", "HTTP_RECV_END", "INFER_RESPONSE_COMPLETE", "HTTP_SEND_START",
               "HTTP_SEND_END"}
GRPC_EVENTS = {"GRPC_WAITREAD_START", "GRPC_WAITREAD_END", "INFER_RESPONSE_COMPLETE",
               "GRPC_SEND_START", "GRPC_SEND_END"}


def otel_flags(url, *more):
    return [
        "--trace-config=mode=opentelemetry",
        f"--trace-config=opentelemetry,url={url}",
        "--trace-config=opentelemetry,bsp_schedule_delay=100",
        "--trace-config=opentelemetry,resource=test.key=test.value",
        "--trace-config=level=TIMESTAMPS",
        *more,
    ]


@pytest.fixture(scope="module")
def receiver():
    with OtlpReceiver() as r:
        yield r


@pytest.fixture(scope="module")
def server(tmp_path_factory, receiver):
    repo = tmp_path_factory.mktemp("otel_repo")
    flags = otel_flags(receiver.url, "--trace-config=rate=1")
    with serve(repo, models(bls=True), flags) as server:
        yield server


@pytest.fixture
def spans(receiver):
    """Clears what was received; `spans(n)` waits for n spans."""
    receiver.clear()
    return receiver.wait_for_spans


def tree(spans):
    """{parent span name: sorted child span names} (spans of one trace)."""
    names = {s.span_id: s.name for s in spans}
    out = {}
    for s in spans:
        if s.parent_span_id in names:
            out.setdefault(names[s.parent_span_id], []).append(s.name)
    return {k: sorted(v) for k, v in out.items()}


def one(spans, name):
    (span,) = [s for s in spans if s.name == name]
    return span


def check_simple(spans, frontend_events):
    """InferRequest > simple > compute, as Triton makes them."""
    assert len(spans) == 3, [s.name for s in spans]
    assert tree(spans) == {"InferRequest": ["simple"], "simple": ["compute"]}
    assert len({s.trace_id for s in spans}) == 1
    for s in spans:
        assert s.kind == SPAN_KIND_SERVER, s
        assert s.scope == "triton-server"
        assert s.resource["service.name"] == "triton-inference-server"
        assert s.resource["test.key"] == "test.value"
        assert s.start_ns <= s.end_ns
    root = one(spans, "InferRequest")
    assert set(root.event_names) == frontend_events
    model = one(spans, "simple")
    assert model.event_names == REQUEST_EVENTS
    assert model.attributes["triton.model_name"] == "simple"
    assert model.attributes["triton.model_version"] == 1
    assert model.attributes["triton.trace_parent_id"] == 0
    assert model.attributes["triton.trace_id"] > 0
    assert one(spans, "compute").event_names == COMPUTE_EVENTS
    return root, model


def test_http_request(server, spans):
    infer_http(server, request_id="req-a")
    root, model = check_simple(spans(3), HTTP_EVENTS)
    assert root.parent_span_id == ""
    assert model.attributes["triton.request_id"] == "req-a"


def test_grpc_request(server, spans):
    infer_grpc(server)
    root, model = check_simple(spans(3), GRPC_EVENTS)
    assert root.parent_span_id == ""
    assert "triton.request_id" not in model.attributes


def test_http_traceparent_becomes_the_parent(server, spans):
    infer_http(server, headers=HEADERS)
    root, _ = check_simple(spans(3), HTTP_EVENTS)
    assert root.trace_id == CALLER_TRACE_ID
    assert root.parent_span_id == CALLER_SPAN_ID


def test_grpc_traceparent_becomes_the_parent(server, spans):
    infer_grpc(server, headers=HEADERS)
    root, _ = check_simple(spans(3), GRPC_EVENTS)
    assert root.trace_id == CALLER_TRACE_ID
    assert root.parent_span_id == CALLER_SPAN_ID


def _collect(results, result, error):
    results.put((result, error))


def test_grpc_stream_traceparent_becomes_the_parent(server, spans):
    results = queue.Queue()
    tensor = grpcclient.InferInput("INPUT0", [1, 3], "INT32")
    tensor.set_data_from_numpy(np.array([[1, 2, 3]], dtype=np.int32))
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        client.start_stream(callback=partial(_collect, results), headers=HEADERS)
        client.async_stream_infer("simple", [tensor])
        result, error = results.get(timeout=30)
        client.stop_stream()
    assert error is None, error
    root, _ = check_simple(spans(3), GRPC_EVENTS)
    assert root.trace_id == CALLER_TRACE_ID
    assert root.parent_span_id == CALLER_SPAN_ID


def test_ensemble(server, spans):
    infer_http(server, "ens", headers=HEADERS)
    got = spans(4)
    assert tree(got) == {"InferRequest": ["ens"], "ens": ["simple"], "simple": ["compute"]}
    ensemble, step = one(got, "ens"), one(got, "simple")
    assert ensemble.event_names == REQUEST_EVENTS
    assert step.attributes["triton.trace_parent_id"] == ensemble.attributes["triton.trace_id"]
    assert {s.trace_id for s in got} == {CALLER_TRACE_ID}


def test_bls(server, spans):
    infer_http(server, "bls")
    got = spans(5)
    assert tree(got) == {
        "InferRequest": ["bls"],
        "bls": ["compute", "simple"],
        "simple": ["compute"],
    }
    bls, call = one(got, "bls"), one(got, "simple")
    assert call.attributes["triton.trace_parent_id"] == bls.attributes["triton.trace_id"]


def test_settings_reply(server, receiver):
    with Http(server.url) as http:
        reply = http.get("/v2/trace/setting").json()
    assert reply == {
        "trace_level": ["TIMESTAMPS"],
        "trace_rate": "1",
        "trace_count": "-1",
        "trace_mode": "opentelemetry",
        "url": receiver.url,
        "bsp_schedule_delay": "100",
        "resource": "test.key=test.value",
        "bsp_max_export_batch_size": "512",
        "bsp_max_queue_size": "2048",
    }


def test_rate_zero_traces_only_requests_with_a_context(tmp_path, receiver, spans):
    """Triton's way to trace only the requests whose caller sent a context."""
    spans_of = spans
    flags = otel_flags(receiver.url, "--trace-config=rate=0")
    with serve(tmp_path / "repo", models(), flags) as server:
        for _ in range(3):
            infer_http(server)
        infer_http(server, headers=HEADERS)
        got = spans_of(3, settle=1.0)
    assert {s.trace_id for s in got} == {CALLER_TRACE_ID}


def test_an_unreachable_collector_costs_no_request(tmp_path):
    dead = f"http://127.0.0.1:{free_port()}/v1/traces"
    flags = otel_flags(dead, "--trace-config=rate=1")
    with serve(tmp_path / "repo", models(), flags) as server:
        for _ in range(5):
            infer_http(server)
            infer_grpc(server)


# oxiserve only: the warning is oxiserve's own text (Triton's exporter logs each
# failure in its own words).
@pytest.mark.oxiserve_only
def test_an_unreachable_collector_is_warned_about(tmp_path):
    """oxiserve says once that exports fail, and the requests go on."""
    dead = f"http://127.0.0.1:{free_port()}/v1/traces"
    flags = otel_flags(dead, "--trace-config=rate=1")
    with serve(tmp_path / "repo", models(), flags) as server:
        infer_http(server)
        wait_for(lambda: "cannot export trace spans" in server.output(), what="the warning")
        infer_http(server)
        assert server.output().count("cannot export trace spans") == 1
