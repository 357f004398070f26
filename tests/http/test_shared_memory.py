"""Triton's system shared memory extension over HTTP, with the real client.

Regions are POSIX shared memory objects made by `tritonclient.utils.shared_memory`
(shm_open + mmap), registered with the server, and named by request inputs
(the server reads their data there) and requested outputs (the server
writes their data there and answers without data). The CUDA shared memory
routes answer as Triton 2.51 does on a machine without GPUs.
"""

import base64
import os
from itertools import count

import numpy as np
import pytest
import tritonclient.http as httpclient
import tritonclient.utils.shared_memory as shm
from tritonclient.utils import InferenceServerException, np_to_triton_dtype

from catalog import NUMPY, sample, tensor_bytes
from helpers import expect_error, expect_still_serving, int32_body

_next = count()
SIZE = 8192  # two pages: registered offsets must be page multiples on Triton


@pytest.fixture
def region(http):
    """region(size) -> (name, key, handle): a new shared memory object,
    registered under a new name; destroyed and unregistered afterwards."""
    made = []

    def make(size=SIZE, offset=0, register=True):
        n = next(_next)
        name, key = f"r{n}", f"/oxiserve_test_{os.getpid()}_{n}"
        handle = shm.create_shared_memory_region(name, key, size)
        made.append((name, handle))
        if register:
            resp = http.post(
                f"/v2/systemsharedmemory/region/{name}/register",
                {"key": key, "offset": offset, "byte_size": size - offset},
            )
            assert resp.status_code == 200, resp.text
        return name, key, handle

    yield make
    for name, handle in made:
        http.post(f"/v2/systemsharedmemory/region/{name}/unregister")
        shm.destroy_shared_memory_region(handle)


def test_register_status_unregister(client, http, region):
    name, key, handle = region(register=False)
    client.register_system_shared_memory(name, key, 4096, offset=4096)
    other, other_key, _ = region()
    resp = http.get(f"/v2/systemsharedmemory/region/{name}/status")
    assert resp.status_code == 200
    assert resp.headers["Content-Type"] == "application/json"
    assert resp.text == (
        f'[{{"name":"{name}","key":"{key}","offset":4096,"byte_size":4096}}]'
    )
    status = client.get_system_shared_memory_status()
    mine = {r["name"]: r for r in status if r["name"] in (name, other)}
    assert mine == {
        name: {"name": name, "key": key, "offset": 4096, "byte_size": 4096},
        other: {"name": other, "key": other_key, "offset": 0, "byte_size": SIZE},
    }
    client.unregister_system_shared_memory(name)
    expect_error(
        http.get(f"/v2/systemsharedmemory/region/{name}/status"),
        404,
        f"Unable to find system shared memory region: '{name}'",
    )
    # Unregistering an unknown region is no error.
    resp = http.post(f"/v2/systemsharedmemory/region/{name}/unregister")
    assert resp.status_code == 200 and resp.text == ""


def test_unregister_all(client, http, region):
    region()
    region()
    client.unregister_system_shared_memory()
    assert client.get_system_shared_memory_status() == []


def test_register_errors(http, region):
    name, key, _ = region()
    register = lambda region_name, body: http.post(  # noqa: E731
        f"/v2/systemsharedmemory/region/{region_name}/register", body
    )
    expect_error(
        register(name, {"key": key, "offset": 0, "byte_size": 16}),
        400,
        f"shared memory region '{name}' already in manager",
    )
    missing = f"/oxiserve_test_{os.getpid()}_missing"
    expect_error(
        register("x", {"key": missing, "offset": 0, "byte_size": 16}),
        500,
        f"Unable to open shared memory region: '{missing}'",
    )
    _, small_key, _ = region(size=4096, register=False)
    for offset, size in [(0, 4097), (4096, 16)]:
        expect_error(
            register("x", {"key": small_key, "offset": offset, "byte_size": size}),
            400,
            "failed to register shared memory region 'x': invalid args",
        )
    expect_error(register("x", {"offset": 0, "byte_size": 8}), 400,
                 "Shared memory register request has no 'key' field")
    expect_error(register("x", {"key": small_key}), 400,
                 "Shared memory register request has no 'byte_size' field")
    expect_error(register("x", {"key": 5, "byte_size": 8}), 500, "non-string as string")
    expect_error(register("x", {"key": small_key, "byte_size": -8}), 500,
                 "non-unsigned-integer as unsigned-integer")
    expect_error(register("x", "not json"), 500, "failed to parse the request JSON buffer")
    expect_error(
        http.post("/v2/systemsharedmemory/register", {"key": small_key, "byte_size": 8}),
        400,
        "'region name' is necessary to register system shared memory region",
    )
    expect_error(http.get(f"/v2/systemsharedmemory/region/{name}/register"), 405)
    expect_error(http.post("/v2/systemsharedmemory/status"), 405)
    expect_error(http.get("/v2/systemsharedmemory/region/x/status"), 404)


@pytest.mark.parametrize(
    "datatype", ["BOOL", "UINT8", "INT16", "INT32", "UINT64", "FP16", "FP32", "FP64", "BYTES"]
)
def test_inputs_and_outputs_in_shared_memory(client, region, datatype):
    data = sample(datatype, rows=2, cols=3)
    content, size = tensor_bytes(data)
    name, _, handle = region()
    offset, out_offset = 100, 4100  # any offset inside the region
    shm.set_shared_memory_region(handle, [content], offset=offset)
    inp = httpclient.InferInput("INPUT0", list(data.shape), np_to_triton_dtype(data.dtype)
                                if datatype != "BYTES" else "BYTES")
    inp.set_shared_memory(name, size, offset=offset)
    out = httpclient.InferRequestedOutput("OUTPUT0", binary_data=True)
    out.set_shared_memory(name, size + 16, offset=out_offset)
    result = client.infer(f"id_{datatype.lower()}", [inp], outputs=[out])
    output = result.get_output("OUTPUT0")
    assert output["shape"] == list(data.shape)
    assert output["datatype"] == datatype
    assert "data" not in output and "parameters" not in output
    got = shm.get_contents_as_numpy(handle, NUMPY[datatype], data.shape, offset=out_offset)
    np.testing.assert_array_equal(got, data)


def test_shared_memory_input_with_json_output(http, region):
    values = np.arange(12, dtype=np.int32)
    name, _, handle = region()
    shm.set_shared_memory_region(handle, [values])
    body = {"inputs": [{"name": "INPUT0", "shape": [1, 3], "datatype": "INT32",
                        "parameters": {"shared_memory_region": name,
                                       "shared_memory_byte_size": 12,
                                       "shared_memory_offset": 16}}]}
    resp = http.infer("id_int32", body)
    assert resp.status_code == 200, resp.text
    assert resp.json()["outputs"][0]["data"] == [4, 5, 6]


def test_shared_memory_output_json_has_no_data_or_parameters(http, region):
    name, _, handle = region()
    body = {
        "parameters": {"binary_data_output": True},
        "inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "INT32", "data": [7, 8]}],
        "outputs": [{"name": "OUTPUT0", "parameters": {
            "shared_memory_region": name, "shared_memory_byte_size": 8,
            "shared_memory_offset": 4, "binary_data": False}}],
    }
    resp = http.infer("id_int32", body)
    assert resp.status_code == 200, resp.text
    assert resp.headers["Content-Type"] == "application/json"
    assert resp.text == (
        '{"model_name":"id_int32","model_version":"1","outputs":'
        '[{"name":"OUTPUT0","datatype":"INT32","shape":[1,2]}]}'
    )
    assert shm.get_contents_as_numpy(handle, np.int32, [2], offset=4).tolist() == [7, 8]


def shm_input(name, size, offset=None, shape=(1, 3)):
    parameters = {"shared_memory_region": name, "shared_memory_byte_size": size}
    if offset is not None:
        parameters["shared_memory_offset"] = offset
    return {"name": "INPUT0", "shape": list(shape), "datatype": "FP32",
            "parameters": parameters}


def test_infer_errors(http, region):
    name, _, handle = region()
    shm.set_shared_memory_region(handle, [np.ones(3, dtype=np.float32)])
    infer = lambda **body: http.infer("id_fp32", body)  # noqa: E731
    expect_error(infer(inputs=[shm_input("nope", 12)]), 404,
                 "Unable to find shared memory region: 'nope'")
    expect_error(infer(inputs=[shm_input(name, 12, offset=SIZE)]), 400,
                 f"Invalid offset for shared memory region: '{name}'")
    expect_error(infer(inputs=[shm_input(name, 12, offset=SIZE - 8)]), 400,
                 f"Invalid offset + byte size for shared memory region: '{name}'")
    expect_error(infer(inputs=[shm_input(name, 8)]), 400,
                 "input byte size mismatch for input 'INPUT0' for model 'id_fp32'. "
                 "Expected 12, got 8")
    expect_error(infer(inputs=[shm_input(name, "12")]), 500,
                 "Unable to parse 'shared_memory_byte_size'")
    json_input = {"name": "INPUT0", "shape": [1, 3], "datatype": "FP32", "data": [1, 2, 3]}
    expect_error(
        infer(inputs=[dict(json_input, parameters=shm_input(name, 12)["parameters"])]),
        400,
        "But set 'data' 'shared_memory_region'",
    )

    def output(**parameters):
        return [{"name": "OUTPUT0", "parameters": dict(
            {"shared_memory_region": name, "shared_memory_byte_size": 12}, **parameters)}]

    expect_error(infer(inputs=[json_input], outputs=output(shared_memory_byte_size=8)),
                 500, "shared memory size specified with the request for output 'OUTPUT0' "
                 "(8 bytes) should be at least 12 bytes to hold the results")
    expect_error(infer(inputs=[json_input], outputs=output(shared_memory_offset=SIZE - 4)),
                 400, f"Invalid offset + byte size for shared memory region: '{name}'")
    expect_error(infer(inputs=[json_input], outputs=output(binary_data=True)), 400,
                 "Output can't set both 'shared_memory_region' and 'binary_data'")
    expect_error(infer(inputs=[json_input], outputs=output(classification=2)), 400,
                 "Output can't set both 'shared_memory_region' and 'classification'")
    expect_error(infer(inputs=[json_input], outputs=output(shared_memory_region="nope")),
                 404, "Unable to find shared memory region: 'nope'")
    http.post(f"/v2/systemsharedmemory/region/{name}/unregister")
    expect_error(infer(inputs=[shm_input(name, 12)]), 404,
                 f"Unable to find shared memory region: '{name}'")
    expect_still_serving(http)


def test_client_reports_errors(client, region):
    name, _, _ = region()
    inp = httpclient.InferInput("INPUT0", [1, 3], "FP32")
    inp.set_shared_memory(name, 12, offset=SIZE)
    with pytest.raises(InferenceServerException, match="Invalid offset"):
        client.infer("id_fp32", [inp])
    with pytest.raises(InferenceServerException, match="already in manager"):
        status = client.get_system_shared_memory_status(name)[0]
        client.register_system_shared_memory(name, status["key"], 16)


def test_cuda_shared_memory_without_gpus(http):
    resp = http.get("/v2/cudasharedmemory/status")
    assert resp.status_code == 200 and resp.json() == []
    expect_error(http.get("/v2/cudasharedmemory/region/c0/status"), 404,
                 "Unable to find cuda shared memory region: 'c0'")
    for path in ["/v2/cudasharedmemory/region/c0/unregister", "/v2/cudasharedmemory/unregister"]:
        assert http.post(path).status_code == 200


# A well-formed cudaIpcMemHandle_t: 64 bytes, base64-encoded.
CUDA_HANDLE = base64.b64encode(bytes(range(64))).decode()


def test_cuda_register_fails_with_invalid_args(client, http):
    """Registering a CUDA region with a well-formed handle fails as in
    Triton 2.51 on a machine without GPUs: no GPU can open the handle."""
    body = {"raw_handle": {"b64": CUDA_HANDLE}, "device_id": 0, "byte_size": 8}
    message = expect_error(http.post("/v2/cudasharedmemory/region/c0/register", body), 400)
    assert message == "failed to register shared memory region: invalid args"
    # The client takes the handle base64-encoded, as cudashm.get_raw_handle gives it.
    with pytest.raises(InferenceServerException) as info:
        client.register_cuda_shared_memory("c1", CUDA_HANDLE.encode(), 0, 8)
    assert info.value.status() == "400"
    assert "failed to register shared memory region" in info.value.message()
    assert "invalid args" in info.value.message()
    assert client.get_cuda_shared_memory_status() == []


def test_cuda_register_body_errors(http):
    """The register body is checked before the registration, with Triton's
    words and codes."""
    register = lambda body: http.post(  # noqa: E731
        "/v2/cudasharedmemory/region/c0/register", body)
    handle = {"b64": CUDA_HANDLE}
    cases = [
        ({"device_id": 0, "byte_size": 8}, 400,
         "Shared memory register request has no 'raw_handle' field"),
        ([1], 400, "Shared memory register request has no 'raw_handle' field"),
        ({"raw_handle": {}, "device_id": 0, "byte_size": 8}, 500,
         "attempt to access non-existing object member 'b64'"),
        ({"raw_handle": "x", "device_id": 0, "byte_size": 8}, 500,
         "attempt to access non-existing object member 'b64'"),
        ({"raw_handle": {"b64": 5}, "device_id": 0, "byte_size": 8}, 500,
         "attempt to access JSON non-string as string"),
        ({"raw_handle": handle, "device_id": 0}, 500,
         "attempt to access non-existing object member 'byte_size'"),
        ({"raw_handle": handle, "byte_size": 8}, 500,
         "attempt to access non-existing object member 'device_id'"),
        ({"raw_handle": handle, "device_id": -1, "byte_size": 8}, 500,
         "attempt to access JSON non-unsigned-integer as unsigned-integer"),
        ({"raw_handle": handle, "device_id": 0, "byte_size": "8"}, 500,
         "attempt to access JSON non-unsigned-integer as unsigned-integer"),
        ({"raw_handle": {"b64": "AAAA"}, "device_id": 0, "byte_size": 8}, 400,
         "'raw_handle' must be a valid base64 encoded cudaIpcMemHandle_t"),
        ({"raw_handle": {"b64": "!!!!"}, "device_id": 0, "byte_size": 8}, 400,
         "'raw_handle' must be a valid base64 encoded cudaIpcMemHandle_t"),
    ]
    for body, status, message in cases:
        assert expect_error(register(body), status) == message, body
    expect_error(register("not json"), 500, "failed to parse the request JSON buffer")
    message = expect_error(http.post("/v2/cudasharedmemory/register", {
        "raw_handle": handle, "device_id": 0, "byte_size": 8}), 400)
    assert message == "'region name' is necessary to register cuda shared memory region"


def test_cuda_and_system_regions_share_names(http, region):
    name, _, _ = region()
    body = {"raw_handle": {"b64": CUDA_HANDLE}, "device_id": 0, "byte_size": 8}
    message = expect_error(http.post(f"/v2/cudasharedmemory/region/{name}/register", body), 400)
    assert message == f"shared memory region '{name}' already in manager"
    message = expect_error(http.get(f"/v2/cudasharedmemory/region/{name}/status"), 404)
    assert message == (
        f"The region named '{name}' is registered as system shared memory, not CUDA shared memory"
    )
    # Unregistering it as a CUDA region leaves the system region alone.
    assert http.post(f"/v2/cudasharedmemory/region/{name}/unregister").status_code == 200
    assert http.post("/v2/cudasharedmemory/unregister").status_code == 200
    assert http.get(f"/v2/systemsharedmemory/region/{name}/status").status_code == 200


def test_extensions_are_listed(client):
    extensions = client.get_server_metadata()["extensions"]
    assert "system_shared_memory" in extensions
    assert "cuda_shared_memory" in extensions


@pytest.mark.oxiserve_only
def test_unaligned_offsets_and_shared_keys(client, http, region):
    """Triton 2.51 refuses these (mmap needs page-aligned offsets; one key per
    region); oxiserve allows them."""
    name, key, handle = region()
    client.register_system_shared_memory("unaligned", key, 12, offset=20)
    try:
        shm.set_shared_memory_region(handle, [np.array([1, 2, 3], dtype=np.int32)], offset=20)
        body = int32_body()
        body["inputs"][0]["parameters"] = {"shared_memory_region": "unaligned",
                                           "shared_memory_byte_size": 12}
        del body["inputs"][0]["data"]
        resp = http.infer("id_int32", body)
        assert resp.status_code == 200, resp.text
        assert resp.json()["outputs"][0]["data"] == [1, 2, 3]
    finally:
        client.unregister_system_shared_memory("unaligned")
