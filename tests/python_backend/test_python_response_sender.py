"""Every way a Python model can answer through its response sender, after Triton's
qa/L0_backend_python/response_sender: responses before `execute` returns, on its
return, from a thread after it, with or without COMPLETE_FINAL, decoupled or not,
one request per batch or several; the responses go out on a gRPC stream.

A default-mode model whose sender sent a response before something went wrong
(a second send raised out of `execute`) delivers that first response and nothing
else; one that sent a response with FINAL and then returned one delivers the sent
one (the returned one meets a closed sender)."""

import queue

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from models import model_source
from python_models import PyModel, config, serve

DECOUPLED = "model_transaction_policy { decoupled: true }\n"
BATCHING = "dynamic_batching { max_queue_delay_microseconds: 500000 }\n"

# (PLAN, its name) as Triton's test names them; see models/response_sender/model.py
ZERO_PRE = (0, 1, 0, 0, 0)
ZERO_POST = (0, 0, 0, 0, 1)
ONE_PRE = (1, 1, 0, 0, 0)
ONE_POST = (0, 0, 0, 1, 1)
TWO_PRE = (2, 1, 0, 0, 0)
TWO_POST = (0, 0, 0, 2, 1)
PRE_AND_POST = (1, 0, 0, 3, 1)
ON_RETURN = (0, 0, 1, 0, 0)
PRE_AND_ON_RETURN = (1, 1, 1, 0, 0)
ON_AND_POST = (0, 0, 1, 1, 1)


def _model(name, extra=""):
    return PyModel(name, model_source("response_sender"), config(
        [("PLAN", "INT32", [5])], [("INDEX", "UINT16", [1])], max_batch_size=8,
        extra=extra))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    models = [_model("sender_default"), _model("sender_decoupled", DECOUPLED),
              _model("sender_default_batching", BATCHING),
              _model("sender_decoupled_batching", DECOUPLED + BATCHING)]
    with serve(tmp_path_factory.mktemp("py_response_sender"), models) as s:
        yield s


def _infer(server, model, plans):
    """The responses to `plans` sent on one stream: [(INDEX or None, error or None)]."""
    got = queue.Queue()
    client = grpcclient.InferenceServerClient(server.grpc_url)
    client.start_stream(lambda result, error: got.put((result, error)))
    for plan in plans:
        tensor = grpcclient.InferInput("PLAN", [1, 5], "INT32")
        tensor.set_data_from_numpy(np.array([plan], dtype=np.int32))
        client.async_stream_infer(model, [tensor])
    client.stop_stream()  # waits for every request to finish
    client.close()
    out = []
    while not got.empty():
        result, error = got.get()
        out.append((None if result is None else int(result.as_numpy("INDEX")[0][0]),
                    None if error is None else error.message()))
    return out


def _counts(responses):
    """(responses sent before return, returned, sent after return); no errors."""
    assert all(error is None for _, error in responses), responses
    ids = [i for i, _ in responses]
    return (sum(1000 <= i < 2000 for i in ids), sum(i < 1000 for i in ids),
            sum(2000 <= i < 3000 for i in ids))


@pytest.mark.parametrize("plan, counts", [
    (ZERO_PRE, (0, 0, 0)), (ZERO_POST, (0, 0, 0)), (ONE_PRE, (1, 0, 0)),
    (ONE_POST, (0, 0, 1)), (TWO_PRE, (2, 0, 0)), (TWO_POST, (0, 0, 2)),
    (PRE_AND_POST, (1, 0, 3)),
    # the sent response closed the sender; the returned one fails, unseen
    (PRE_AND_ON_RETURN, (1, 0, 0)),
])
def test_decoupled(server, plan, counts):
    assert _counts(_infer(server, "sender_decoupled", [plan])) == counts


@pytest.mark.parametrize("plan", [ON_RETURN, ON_AND_POST])
def test_decoupled_returning_a_response_fails(server, plan):
    responses = _infer(server, "sender_decoupled", [plan])
    assert len(responses) == 1 and responses[0][0] is None, responses
    assert "using the decoupled mode and the execute function must return None" \
        in responses[0][1]


@pytest.mark.parametrize("plan, counts", [
    (ON_RETURN, (0, 1, 0)), (ONE_PRE, (1, 0, 0)), (ONE_POST, (0, 0, 1)),
    # the second send raises out of execute: the first response is delivered, alone
    (TWO_PRE, (1, 0, 0)),
    # sent with FINAL, then returned: the sent one
    (PRE_AND_ON_RETURN, (1, 0, 0)),
    # returned, then a send from a thread raises there: the returned one
    (ON_AND_POST, (0, 1, 0)),
])
def test_default_mode(server, plan, counts):
    assert _counts(_infer(server, "sender_default", [plan])) == counts


def test_default_mode_final_before_any_response_fails(server):
    responses = _infer(server, "sender_default", [ZERO_PRE])
    assert len(responses) == 1 and responses[0][0] is None, responses
    assert "Non-decoupled model cannot send complete final before sending a response" \
        in responses[0][1]


def test_decoupled_batch_of_requests_answering_differently(server):
    plans = [ZERO_PRE, ZERO_POST, ONE_PRE, ONE_POST, TWO_PRE, TWO_POST, PRE_AND_POST]
    assert _counts(_infer(server, "sender_decoupled_batching", plans)) == (4, 0, 6)


def test_default_mode_batch_of_requests_answering_differently(server):
    plans = [ON_RETURN, ONE_PRE, ONE_POST]
    assert _counts(_infer(server, "sender_default_batching", plans)) == (1, 1, 1)
