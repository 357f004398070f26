"""gzip and deflate on gRPC: compressed requests, and compressed responses with
--grpc-infer-response-compression-level."""

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from catalog import sample
from grpc_helpers import infer_input
from models import identity


@pytest.mark.parametrize("algorithm", ["gzip", "deflate", None])
def test_compressed_requests(grpc_client, algorithm):
    array = sample("BYTES", rows=4, cols=8)
    result = grpc_client.infer(
        "id_bytes", [infer_input("INPUT0", array, "BYTES")], compression_algorithm=algorithm
    )
    got = result.as_numpy("OUTPUT0")
    assert [bytes(x) for x in got.ravel()] == [bytes(x) for x in array.ravel()]


def test_compressed_responses(start_server):
    server = start_server(
        [identity("zipped", "FP32")], "--grpc-infer-response-compression-level=high"
    )
    array = np.zeros((4, 1024), dtype=np.float32)
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        result = client.infer("zipped", [infer_input("INPUT0", array, "FP32")])
        assert np.array_equal(result.as_numpy("OUTPUT0"), array)
        assert client.is_model_ready("zipped")
