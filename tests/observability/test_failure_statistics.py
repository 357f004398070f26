"""What counts as a failure, as Triton 2.51 counts it for Python models: a request whose
execution failed (execute raised) is a `fail` in /v2/models/{m}/stats and an
nv_inference_request_failure{reason="BACKEND"}; a request the model answered with an
error response is a success (Triton's Python backend reports it so). Inferences count
successful requests only; executions count every execution. Default, dynamic-batching
and decoupled models, over HTTP and gRPC. The model is python_backend/models/outcomes."""

import queue

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from helpers import wait_for
from models import model_source
from python_models import PyModel, config, serve
from scrapes import scrape

SOURCE = model_source("outcomes")
MODE = [("MODE", "BYTES", [1])]
OUT = [("OUT", "INT32", [1])]
MODELS = [
    PyModel("outcomes_default", SOURCE, config(MODE, OUT)),
    PyModel("outcomes_batched", SOURCE, config(MODE, OUT, max_batch_size=8,
                                               extra="dynamic_batching { }\n")),
    PyModel("outcomes_decoupled", SOURCE,
            config(MODE, OUT, extra="model_transaction_policy { decoupled: true }\n")),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("outcomes"), MODELS) as s:
        yield s


def mode_input(module, mode, batched):
    shape = [1, 1] if batched else [1]
    inp = module.InferInput("MODE", shape, "BYTES")
    inp.set_data_from_numpy(np.array([mode.encode()], dtype=object).reshape(shape))
    return inp


def counts(server, model):
    """(success, fail, inference_count, execution_count) of /stats, and the success and
    BACKEND failure counters of /metrics."""
    with httpclient.InferenceServerClient(server.url) as c:
        stats = c.get_inference_statistics(model)["model_stats"][0]
    s = scrape(server)
    labels = {"model": model, "version": "1"}
    return (stats["inference_stats"]["success"]["count"],
            stats["inference_stats"]["fail"]["count"],
            stats["inference_count"], stats["execution_count"],
            s.value("nv_inference_request_success", **labels),
            s.value("nv_inference_request_failure", reason="BACKEND", **labels))


def settled(server, model, expected):
    """The counts once they reach `expected` (a server may count a request just after
    its response left)."""
    return wait_for(lambda: counts(server, model) == expected or None,
                    what=f"{model} counts {expected}")


@pytest.mark.parametrize("protocol", ["http", "grpc"])
@pytest.mark.parametrize("model", ["outcomes_default", "outcomes_batched"])
def test_a_raise_fails_and_an_error_response_succeeds(server, model, protocol):
    before = counts(server, model)
    module = httpclient if protocol == "http" else grpcclient
    url = server.url if protocol == "http" else server.grpc_url
    batched = model == "outcomes_batched"
    with module.InferenceServerClient(url) as c:
        with pytest.raises(InferenceServerException, match="execute raised"):
            c.infer(model, [mode_input(module, "raise", batched)])
        with pytest.raises(InferenceServerException, match="an error response"):
            c.infer(model, [mode_input(module, "error", batched)])
        c.infer(model, [mode_input(module, "ok", batched)])
    success, fail, inferences, executions, metric_success, metric_backend = before
    settled(server, model, (success + 2, fail + 1, inferences + 2, executions + 3,
                            metric_success + 2, metric_backend + 1))


def test_a_decoupled_model_fails_only_when_execute_raises(server):
    model = "outcomes_decoupled"
    success, fail, inferences, executions, metric_success, metric_backend = counts(server, model)
    for mode in ("raise", "error", "ok_then_error", "send_then_raise", "ok"):
        with grpcclient.InferenceServerClient(server.grpc_url) as c:
            responses = queue.Queue()
            c.start_stream(callback=lambda result, error: responses.put((result, error)))
            c.async_stream_infer(model, [mode_input(grpcclient, mode, False)])
            first = responses.get(timeout=30)
            assert (first[1] is None) == (mode in ("ok", "ok_then_error", "send_then_raise"))
            c.stop_stream()
    settled(server, model, (success + 3, fail + 2, inferences + 3, executions + 5,
                            metric_success + 3, metric_backend + 2))
