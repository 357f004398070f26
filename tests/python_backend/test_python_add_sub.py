"""The Python backend's add_sub (examples/model_repository/add_sub): HTTP
JSON and binary, gRPC, a full batch of 8, two instances, and an echo of every
numeric datatype through a Python model."""

import concurrent.futures

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from catalog import sample
from helpers import Http
from models import identity
from python_models import add_sub, serve

NUMERIC = ["BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32",
           "INT64", "FP16", "FP32", "FP64"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    models = [add_sub(), add_sub("add_sub_2", count=2)]
    models += [identity(f"py_{dt.lower()}", dt, python_only=True) for dt in NUMERIC]
    with serve(tmp_path_factory.mktemp("add_sub"), models) as s:
        yield s


A = np.array([[1.5, 2.0, -3.0, 4.25]], dtype=np.float32)
B = np.array([[0.5, 10.0, 3.0, -1.0]], dtype=np.float32)


def test_http_json(server):
    body = {"inputs": [
        {"name": "INPUT0", "shape": [1, 4], "datatype": "FP32", "data": A.ravel().tolist()},
        {"name": "INPUT1", "shape": [1, 4], "datatype": "FP32", "data": B.ravel().tolist()},
    ]}
    with Http(server.url) as http:
        resp = http.infer("add_sub", body)
    assert resp.status_code == 200, resp.text
    reply = resp.json()
    assert reply["model_name"] == "add_sub" and reply["model_version"] == "1"
    outs = {o["name"]: o for o in reply["outputs"]}
    assert outs["OUTPUT0"] == {"name": "OUTPUT0", "datatype": "FP32", "shape": [1, 4],
                               "data": (A + B).ravel().tolist()}
    assert outs["OUTPUT1"]["data"] == (A - B).ravel().tolist()


def _http_inputs(a, b, binary):
    inputs = [httpclient.InferInput("INPUT0", list(a.shape), "FP32"),
              httpclient.InferInput("INPUT1", list(b.shape), "FP32")]
    inputs[0].set_data_from_numpy(a, binary_data=binary)
    inputs[1].set_data_from_numpy(b, binary_data=binary)
    return inputs


def test_http_binary(server):
    client = httpclient.InferenceServerClient(server.url)
    outputs = [httpclient.InferRequestedOutput(n, binary_data=True) for n in ("OUTPUT0", "OUTPUT1")]
    result = client.infer("add_sub", _http_inputs(A, B, True), outputs=outputs)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), A + B)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), A - B)
    client.close()


def test_grpc(server):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    inputs = [grpcclient.InferInput("INPUT0", [1, 4], "FP32"),
              grpcclient.InferInput("INPUT1", [1, 4], "FP32")]
    inputs[0].set_data_from_numpy(A)
    inputs[1].set_data_from_numpy(B)
    result = client.infer("add_sub", inputs)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), A + B)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), A - B)
    client.close()


def test_batch_of_8_in_one_request(server):
    a = np.arange(32, dtype=np.float32).reshape(8, 4)
    b = np.ones((8, 4), dtype=np.float32)
    client = httpclient.InferenceServerClient(server.url)
    result = client.infer("add_sub", _http_inputs(a, b, True))
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
    client.close()


@pytest.mark.parametrize("model", ["add_sub", "add_sub_2"])
def test_concurrent_requests_dynamic_batching(server, model):
    """16 concurrent requests (dynamic batching; two instances for add_sub_2)
    each get their own rows back."""
    def one(i):
        client = httpclient.InferenceServerClient(server.url)
        a = np.full((1, 4), i, dtype=np.float32)
        b = np.arange(4, dtype=np.float32).reshape(1, 4)
        result = client.infer(model, _http_inputs(a, b, True))
        client.close()
        return i, result.as_numpy("OUTPUT0"), result.as_numpy("OUTPUT1")

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one, range(16)))
    for i, out0, out1 in results:
        np.testing.assert_array_equal(out0, [[i, i + 1, i + 2, i + 3]])
        np.testing.assert_array_equal(out1, [[i, i - 1, i - 2, i - 3]])


def test_two_instances_in_model_config(server):
    client = httpclient.InferenceServerClient(server.url)
    cfg = client.get_model_config("add_sub_2")
    assert cfg["instance_group"][0]["count"] == 2
    assert cfg["backend"] == "python"
    assert cfg["dynamic_batching"]["max_queue_delay_microseconds"] == 100
    client.close()


@pytest.mark.parametrize("datatype", NUMERIC)
def test_numeric_echo(server, datatype):
    data = sample(datatype)
    client = grpcclient.InferenceServerClient(server.grpc_url)
    tensor = grpcclient.InferInput("INPUT0", list(data.shape), datatype)
    tensor.set_data_from_numpy(data)
    result = client.infer(f"py_{datatype.lower()}", [tensor])
    got = result.as_numpy("OUTPUT0")
    assert got.dtype == data.dtype
    np.testing.assert_array_equal(got, data)
    client.close()
