"""The system shared memory extension over gRPC with the real client: regions
registered, listed and unregistered through the RPCs, inputs read from and
outputs written to them. The CUDA RPCs answer as Triton 2.51 does on a
machine without GPUs."""

import os
import time
from itertools import count

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.utils.shared_memory as shm
from tritonclient.utils import InferenceServerException, np_to_triton_dtype

from catalog import NUMPY, sample, tensor_bytes
from grpc_helpers import expect_grpc_error

_next = count()
SIZE = 8192


@pytest.fixture
def grpc_region(grpc_client):
    """grpc_region() -> (name, key, handle), registered over gRPC; cleaned up after."""
    made = []

    def make(size=SIZE):
        n = next(_next)
        name, key = f"g{n}", f"/oxiserve_grpc_test_{os.getpid()}_{n}"
        handle = shm.create_shared_memory_region(name, key, size)
        made.append((name, handle))
        grpc_client.register_system_shared_memory(name, key, size)
        return name, key, handle

    yield make
    for name, handle in made:
        _unregister(grpc_client, name)
        shm.destroy_shared_memory_region(handle)


def _unregister(grpc_client, name, tries=50):
    """Unregisters `name`; real Triton may still hold an output region for a
    moment after the response ("currently in use"), so this retries."""
    for _ in range(tries - 1):
        try:
            return grpc_client.unregister_system_shared_memory(name)
        except InferenceServerException as e:
            if "currently in use" not in e.message():
                raise
            time.sleep(0.1)
    return grpc_client.unregister_system_shared_memory(name)


def test_register_status_unregister(grpc_client, grpc_region):
    name, key, _ = grpc_region()
    status = grpc_client.get_system_shared_memory_status(region_name=name, as_json=True)
    region = status["regions"][name]
    region.setdefault("offset", "0")  # proto3 JSON leaves out zero values
    assert region == {"name": name, "key": key, "offset": "0", "byte_size": str(SIZE)}
    grpc_client.unregister_system_shared_memory(name)
    expect_grpc_error(
        lambda: grpc_client.get_system_shared_memory_status(region_name=name), "NOT_FOUND", name
    )


def test_register_errors(grpc_client, grpc_region):
    name, key, _ = grpc_region()
    expect_grpc_error(
        lambda: grpc_client.register_system_shared_memory(name, key, 16),
        "ALREADY_EXISTS", name,
    )
    expect_grpc_error(
        lambda: grpc_client.register_system_shared_memory("nokey", "/no_such_key_here", 64),
        "INTERNAL", "/no_such_key_here",
    )
    small_key = f"/oxiserve_grpc_test_{os.getpid()}_small"
    small = shm.create_shared_memory_region("small", small_key, 4096)
    try:
        expect_grpc_error(
            lambda: grpc_client.register_system_shared_memory("toolong", small_key, 4097),
            "INVALID_ARGUMENT", "toolong",
        )
    finally:
        shm.destroy_shared_memory_region(small)


@pytest.mark.parametrize("datatype", ["INT32", "FP32", "BYTES"])
def test_inputs_and_outputs_in_shared_memory(grpc_client, grpc_region, datatype):
    data = sample(datatype, rows=2, cols=3)
    content, size = tensor_bytes(data)
    name, _, handle = grpc_region()
    offset, out_offset = 64, 4096
    shm.set_shared_memory_region(handle, [content], offset=offset)
    dtype = "BYTES" if datatype == "BYTES" else np_to_triton_dtype(data.dtype)
    inp = grpcclient.InferInput("INPUT0", list(data.shape), dtype)
    inp.set_shared_memory(name, size, offset=offset)
    out = grpcclient.InferRequestedOutput("OUTPUT0")
    out.set_shared_memory(name, size + 16, offset=out_offset)
    result = grpc_client.infer(f"id_{datatype.lower()}", [inp], outputs=[out])
    output = result.get_output("OUTPUT0")
    assert list(output.shape) == list(data.shape)
    assert output.datatype == datatype
    got = shm.get_contents_as_numpy(handle, NUMPY[datatype], data.shape, offset=out_offset)
    np.testing.assert_array_equal(got, data)


def test_unknown_region_in_a_request(grpc_client):
    inp = grpcclient.InferInput("INPUT0", [1, 3], "INT32")
    inp.set_shared_memory("no_such_region", 12)
    expect_grpc_error(
        lambda: grpc_client.infer("id_int32", [inp]), "NOT_FOUND", "no_such_region"
    )


def test_cuda_shared_memory_without_gpus(grpc_client):
    status = grpc_client.get_cuda_shared_memory_status(as_json=True)
    assert status.get("regions", {}) == {}
    expect_grpc_error(
        lambda: grpc_client.get_cuda_shared_memory_status(region_name="c0"), "NOT_FOUND", "c0"
    )
    grpc_client.unregister_cuda_shared_memory("c0")


def test_cuda_register_fails_with_invalid_args(grpc_client):
    """As in Triton 2.51 on a machine without GPUs: no GPU can open the
    handle, whatever it is."""
    for handle in (bytes(64), b"AAAA", b""):
        message = expect_grpc_error(
            lambda: grpc_client.register_cuda_shared_memory("c0", handle, 0, 8),
            "INVALID_ARGUMENT",
        )
        assert message == "failed to register shared memory region: invalid args"
    assert grpc_client.get_cuda_shared_memory_status(as_json=True).get("regions", {}) == {}


def test_cuda_and_system_regions_share_names(grpc_client, grpc_region):
    name, _, _ = grpc_region()
    message = expect_grpc_error(
        lambda: grpc_client.register_cuda_shared_memory(name, bytes(64), 0, 8),
        "ALREADY_EXISTS",
    )
    assert message == f"shared memory region '{name}' already in manager"
    message = expect_grpc_error(
        lambda: grpc_client.get_cuda_shared_memory_status(region_name=name), "NOT_FOUND")
    assert message == (
        f"The region named '{name}' is registered as system shared memory, not CUDA shared memory"
    )
    grpc_client.unregister_cuda_shared_memory(name)
    grpc_client.unregister_cuda_shared_memory()
    assert name in grpc_client.get_system_shared_memory_status(as_json=True)["regions"]
