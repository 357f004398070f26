"""Queue policies as Triton 2.51 applies them, on gated models (gated.py):
requests arriving at a full queue (`max_queue_size`) are refused at once with
UNAVAILABLE "Exceeds maximum queue size", as many as Triton refuses, and are
counted nowhere; a request a step's queue policy rejects (its timeout passed,
REJECT) fails its ensemble, counted as the ensemble's `OTHER` failure and as
the step's `REJECTED` one.

Triton 2.51 counts a failed ensemble request twice (its error response and
its release each add an `OTHER` failure, to /metrics and to the statistics'
fail count); oxiserve counts it once (README, "Prometheus metrics")."""

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from gated import Ensemble, Gate, Sender, answer, gated_model, ids, metric, pending
from python_models import serve
from servers import TARGET

REASONS = ["OTHER", "BACKEND", "CANCELED", "REJECTED"]
# How many failures one failed ensemble request counts (see above).
ENSEMBLE_FAILURES = 2 if TARGET == "triton" else 1
MODELS = {
    "queue_full": "dynamic_batching { default_queue_policy { max_queue_size: 4 } }\n",
    # A step request waits 0.1 s at most; the gate holds the instance longer.
    "rejecting_step": (
        "dynamic_batching { default_queue_policy { timeout_action: REJECT "
        "default_timeout_microseconds: 100000 } }\n"),
}


@pytest.fixture(scope="module")
def gates(tmp_path_factory):
    root = tmp_path_factory.mktemp("queue_gates")
    gates = {name: Gate(root / name) for name in MODELS}
    yield gates
    for gate in gates.values():
        gate.release_all()


@pytest.fixture(scope="module")
def server(tmp_path_factory, gates):
    models = [gated_model(name, gates[name], 4, extra) for name, extra in MODELS.items()]
    models.append(Ensemble(
        "rejecting_ensemble", [("INPUT0", "FP32", [1])], [("OUTPUT0", "FP32", [1])],
        [("rejecting_step", {"INPUT0": "INPUT0"}, {"OUTPUT0": "OUTPUT0"})],
        max_batch_size=4))
    with serve(tmp_path_factory.mktemp("queue"), models) as server:
        yield server


def failures(server, model):
    return {r: metric(server, "nv_inference_request_failure", model=model, version=1, reason=r)
            for r in REASONS}


def successes(server, model):
    return metric(server, "nv_inference_request_success", model=model, version=1)


def test_requests_arriving_at_a_full_queue_are_refused(server, gates):
    model, gate = "queue_full", gates["queue_full"]
    sender = Sender(server, model)
    futures = [sender.send(0)]
    assert gate.batch(1)["requests"] == 1
    # Four wait (the queue's size), although the busy instance could take them.
    futures += [sender.send(n, pending_after=n) for n in range(1, 5)]
    refused = [sender.send(n) for n in range(5, 8)]
    for future in refused:
        with pytest.raises(InferenceServerException) as error:
            future.get_result()
        assert error.value.status() == "503", error.value
        assert error.value.message() == (
            f"[request id: {error.value.message().split(']')[0][13:]}] "
            "Exceeds maximum queue size")
    grpc = grpcclient.InferenceServerClient(server.grpc_url)
    tensor = grpcclient.InferInput("INPUT0", [1, 1], "FP32")
    tensor.set_data_from_numpy(np.array([[8]], dtype=np.float32))
    with pytest.raises(InferenceServerException) as error:
        grpc.infer(model, [tensor], request_id="8")
    assert error.value.status() == "StatusCode.UNAVAILABLE", error.value
    assert error.value.message() == "[request id: 8] Exceeds maximum queue size"
    grpc.close()
    assert pending(server, model) == 4, "refused requests are never pending"
    assert failures(server, model) == dict.fromkeys(REASONS, 0), "nor counted"
    gate.release(1)
    assert ids(gate.batch(2)) == [1, 2, 3, 4]
    assert pending(server, model) == 0
    gate.release(2)
    assert [answer(f) for f in futures] == [0, 1, 2, 3, 4]
    assert successes(server, model) == 5
    assert failures(server, model) == dict.fromkeys(REASONS, 0)
    sender.close()


def test_a_step_rejected_by_its_queue_policy_fails_the_ensemble_as_other(server, gates):
    gate = gates["rejecting_step"]
    direct = Sender(server, "rejecting_step")
    held = direct.send(0)
    assert gate.batch(1)["requests"] == 1
    ensemble = Sender(server, "rejecting_ensemble")
    with pytest.raises(InferenceServerException) as error:
        ensemble.send(1).get_result()
    assert error.value.message() == (
        "in ensemble 'rejecting_ensemble', Request timeout expired"), error.value
    assert error.value.status() == "503", error.value
    assert failures(server, "rejecting_ensemble") == dict(
        dict.fromkeys(REASONS, 0), OTHER=ENSEMBLE_FAILURES)
    assert failures(server, "rejecting_step") == dict(
        dict.fromkeys(REASONS, 0), REJECTED=1)
    gate.release(1)
    assert answer(held) == 0
    assert gate.started() == 1, "the rejected request never executed"
    assert successes(server, "rejecting_step") == 1
    assert successes(server, "rejecting_ensemble") == 0
    http = httpclient.InferenceServerClient(server.url)
    for model, failed in [("rejecting_ensemble", ENSEMBLE_FAILURES), ("rejecting_step", 1)]:
        stats = http.get_inference_statistics(model)["model_stats"][0]["inference_stats"]
        assert int(stats["fail"]["count"]) == failed, (model, stats)
    http.close()
    direct.close()
    ensemble.close()
