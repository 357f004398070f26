"""--model-queue-limit: once that many requests wait for a model, more are
refused at once with 503 / UNAVAILABLE "Exceeds maximum queue size" (Triton's
words for a full queue) instead of queueing without bound; the waiting ones
still run."""

import threading
import time

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from grpc_helpers import infer_input
from helpers import Http, expect_error
from models import ModelSpec, Tensor, write_repository
from servers import TARGET, Server

pytestmark = pytest.mark.oxiserve_only

BODY = {"inputs": [{"name": "INPUT0", "shape": [1], "datatype": "INT32", "data": [3]}]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    spec = ModelSpec("slow", [Tensor("INPUT0", "INT32", [-1])], execute_delay_ms=1500)
    repo = write_repository(tmp_path_factory.mktemp("queue"), [spec], TARGET)
    with Server(repo, ["--model-queue-limit=2"]) as server:
        yield server


def test_a_full_queue_refuses_at_once(server):
    results = []

    def send():
        with Http(server.url) as own:
            results.append(own.infer("slow", BODY).status_code)

    senders = [threading.Thread(target=send) for _ in range(3)]
    with Http(server.url) as http:
        for sender in senders:  # one executes, two wait
            sender.start()
            time.sleep(0.2)
        expect_error(http.infer("slow", BODY), 503, "Exceeds maximum queue size")
        client = grpcclient.InferenceServerClient(server.grpc_url)
        with pytest.raises(InferenceServerException) as refused:
            client.infer("slow", [infer_input("INPUT0", np.array([3], dtype=np.int32), "INT32")])
        assert refused.value.status() == "StatusCode.UNAVAILABLE", refused.value
        assert "Exceeds maximum queue size" in refused.value.message()
        client.close()
        for sender in senders:
            sender.join(30)
        assert results == [200, 200, 200], results
        assert http.infer("slow", BODY).status_code == 200, "room again once drained"
