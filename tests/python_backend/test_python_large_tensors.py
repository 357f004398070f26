"""Large tensors through a Python model's shared memory: a BLS call carrying
1 GiB and its 1 GiB response succeed (the pools start at shm-default-byte-size
and grow), and a pool that may not grow gives the model Triton's error text."""

import json

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from python_models import large_bls_models, serve

GIB = 1 << 30


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # Small pools and steps, so that growth happens many times over.
    flags = ["--backend-config=python,shm-default-byte-size=1048576",
             "--backend-config=python,shm-growth-byte-size=1048576"]
    with serve(tmp_path_factory.mktemp("py_large"), large_bls_models(), flags) as s:
        yield s


def run(url, nbytes):
    client = grpcclient.InferenceServerClient(url)
    tensor = grpcclient.InferInput("NBYTES", [1], "INT64")
    tensor.set_data_from_numpy(np.array([nbytes], dtype=np.int64))
    try:
        result = client.infer("large_bls", [tensor], client_timeout=300)
    finally:
        client.close()
    return json.loads(result.as_numpy("RESULT")[0])


def test_bls_call_and_response_of_one_gib(server):
    assert run(server.grpc_url, GIB) == {"nbytes": GIB, "same": True}
    # The grown pools serve small calls as before.
    assert run(server.grpc_url, 1000) == {"nbytes": 1000, "same": True}


@pytest.mark.oxiserve_only
def test_pool_that_cannot_grow(tmp_path):
    """shm-max-byte-size (oxiserve's; without it the bound is what /dev/shm holds)
    caps the pools at 64 MiB: a 100 MiB BLS input cannot be placed, and the model's
    exec() raises with Triton's text; the model serves on."""
    flags = ["--backend-config=python,shm-max-byte-size=67108864"]
    with serve(tmp_path, large_bls_models(), flags) as s:
        got = run(s.grpc_url, 100 << 20)
        assert got["raised"].startswith(
            "Failed to increase the shared memory pool size for key '"), got
        assert "use '--shm-size' flag" in got["raised"], got
        assert run(s.grpc_url, 1 << 20) == {"nbytes": 1 << 20, "same": True}
