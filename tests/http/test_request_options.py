"""Request options: requested outputs, request id, parameters, model versions."""

import numpy as np
import pytest
import tritonclient.http as httpclient

from helpers import int32_body


def _pair_inputs():
    a = np.array([[1, 2], [3, 4]], dtype=np.int32)
    b = np.array([[0.5, 1.5], [2.5, 3.5]], dtype=np.float32)
    inputs = [httpclient.InferInput("INPUT0", [2, 2], "INT32"),
              httpclient.InferInput("INPUT1", [2, 2], "FP32")]
    inputs[0].set_data_from_numpy(a)
    inputs[1].set_data_from_numpy(b)
    return inputs, a, b


@pytest.mark.parametrize("binary", [False, True])
def test_requested_output_subset(client, binary):
    inputs, _, b = _pair_inputs()
    out = httpclient.InferRequestedOutput("OUTPUT1", binary_data=binary)
    result = client.infer("pair", inputs, outputs=[out])
    names = [o["name"] for o in result.get_response()["outputs"]]
    assert names == ["OUTPUT1"]
    assert result.as_numpy("OUTPUT0") is None
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), b)


def test_no_requested_outputs_returns_all(client):
    inputs, a, b = _pair_inputs()
    result = client.infer("pair", inputs)
    names = sorted(o["name"] for o in result.get_response()["outputs"])
    assert names == ["OUTPUT0", "OUTPUT1"]
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), b)


def test_request_id_echoed(client, http):
    inputs, _, _ = _pair_inputs()
    result = client.infer("pair", inputs, request_id="req-42 ✓")
    assert result.get_response()["id"] == "req-42 ✓"
    resp = http.infer("id_int32", {**int32_body(), "id": "raw-7"})
    assert resp.json()["id"] == "raw-7"


def test_no_request_id_no_id_field(http):
    resp = http.infer("id_int32", int32_body())
    assert resp.status_code == 200, resp.text
    assert "id" not in resp.json()
    assert resp.json()["model_name"] == "id_int32"
    assert resp.json()["model_version"] == "1"


def test_request_parameters_accepted(client, http):
    inputs, _, b = _pair_inputs()
    params = {"custom_str": "x", "custom_int": 3, "custom_bool": True}
    result = client.infer("pair", inputs, parameters=params)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), b)
    body = {**int32_body(), "parameters": {"priority": 0, "note": "안녕"}}
    resp = http.infer("id_int32", body)
    assert resp.status_code == 200, resp.text


def test_version_selection(client):
    data = np.array([[5, 6]], dtype=np.int32)
    inp = httpclient.InferInput("INPUT0", [1, 2], "INT32")
    inp.set_data_from_numpy(data)
    result = client.infer("versioned", [inp], model_version="2")
    assert result.get_response()["model_version"] == "2"
    # Without a version: the highest ready one.
    assert client.infer("versioned", [inp]).get_response()["model_version"] == "3"
    np.testing.assert_array_equal(client.infer("versioned", [inp]).as_numpy("OUTPUT0"), data)
