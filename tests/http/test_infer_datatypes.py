"""Identity round trips of every datatype, as JSON and as binary tensor data.

Triton refuses FP16 and BF16 in JSON (400 from the server; tritonclient itself
refuses to put BF16 input in JSON), so those cases assert the refusal.
"""

import numpy as np
import pytest
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from catalog import sample
from models import DATATYPES

NO_JSON = ("FP16", "BF16")


def _as_bytes(x):
    return x.encode("utf-8") if isinstance(x, str) else bytes(x)


def _same(got, want):
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype == np.object_:
        assert [_as_bytes(x) for x in got.ravel()] == [_as_bytes(x) for x in want.ravel()]
        return
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert np.array_equal(got, want), (got, want)
    if want.dtype.kind == "f":  # -0.0 stays negative
        assert np.array_equal(np.signbit(got), np.signbit(want)), (got, want)


def _infer(client, model, arrays, binary_in, binary_out):
    inputs, outputs = [], []
    for i, (datatype, array) in enumerate(arrays):
        inp = httpclient.InferInput(f"INPUT{i}", list(array.shape), datatype)
        inp.set_data_from_numpy(array, binary_data=binary_in)
        inputs.append(inp)
        outputs.append(httpclient.InferRequestedOutput(f"OUTPUT{i}", binary_data=binary_out))
    return client.infer(model, inputs, outputs=outputs)


@pytest.mark.parametrize("binary_out", [False, True], ids=["json_out", "binary_out"])
@pytest.mark.parametrize("binary_in", [False, True], ids=["json_in", "binary_in"])
@pytest.mark.parametrize("datatype", list(DATATYPES))
def test_identity_batch(client, datatype, binary_in, binary_out):
    """A batch of 3 rows through id_<datatype> (max_batch_size 8, dims [-1])."""
    # Bytes that are not UTF-8 only where neither side is JSON.
    array = sample(datatype, rows=3, cols=4, binary=binary_in and binary_out)
    model = f"id_{datatype.lower()}"
    if datatype == "BF16" and not binary_in:
        with pytest.raises(InferenceServerException, match="binary"):
            _infer(client, model, [(datatype, array)], binary_in, binary_out)
        return
    if datatype in NO_JSON and not (binary_in and binary_out):
        with pytest.raises(InferenceServerException) as err:
            _infer(client, model, [(datatype, array)], binary_in, binary_out)
        assert err.value.status() == "400"
        assert datatype in str(err.value) and "JSON" in str(err.value)
        return
    result = _infer(client, model, [(datatype, array)], binary_in, binary_out)
    _same(result.as_numpy("OUTPUT0"), array)
    out = result.get_output("OUTPUT0")
    assert out["datatype"] == datatype and out["shape"] == [3, 4]
    assert ("binary_data_size" in out.get("parameters", {})) == binary_out


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_all_datatypes_in_one_request(client, binary):
    """max_batch_size 0: 14 inputs of 14 datatypes, shape [2, 3], in one request.

    In the JSON case, FP16 and BF16 still travel as binary (per tensor).
    """
    arrays = [(dt, sample(dt, rows=2, cols=3, binary=binary)) for dt in DATATYPES]
    inputs, outputs = [], []
    for i, (datatype, array) in enumerate(arrays):
        as_binary = binary or datatype in NO_JSON
        inp = httpclient.InferInput(f"INPUT{i}", [2, 3], datatype)
        inp.set_data_from_numpy(array, binary_data=as_binary)
        inputs.append(inp)
        outputs.append(httpclient.InferRequestedOutput(f"OUTPUT{i}", binary_data=as_binary))
    result = client.infer("nobatch_all", inputs, outputs=outputs)
    for i, (datatype, array) in enumerate(arrays):
        _same(result.as_numpy(f"OUTPUT{i}"), array)
        assert result.get_output(f"OUTPUT{i}")["datatype"] == datatype


def test_korean_text_json(http):
    """BYTES as JSON strings: UTF-8 text and empty strings come back as sent."""
    texts = ["안녕하세요", "", "슈퍼 엔저 장기화에…한국 수출∙경상수지에 비상등", ""]
    body = {"inputs": [{"name": "INPUT0", "shape": [2, 2], "datatype": "BYTES", "data": texts}]}
    resp = http.infer("id_bytes", body)
    assert resp.status_code == 200, resp.text
    (out,) = resp.json()["outputs"]
    assert out == {"name": "OUTPUT0", "datatype": "BYTES", "shape": [2, 2], "data": texts}


def test_nested_json_data(http):
    """`data` may be nested as the shape (row-major), or flat."""
    body = {"inputs": [{"name": "INPUT0", "shape": [2, 3], "datatype": "FP64",
                        "data": [[1.5, -2.0, 0.0], [3.25, 1e300, -1e-300]]}]}
    resp = http.infer("id_fp64", body)
    assert resp.status_code == 200, resp.text
    assert resp.json()["outputs"][0]["data"] == [1.5, -2.0, 0.0, 3.25, 1e300, -1e-300]


def test_bool_json_literals(http):
    body = {"inputs": [{"name": "INPUT0", "shape": [1, 3], "datatype": "BOOL",
                        "data": [True, False, True]}]}
    resp = http.infer("id_bool", body)
    assert resp.status_code == 200, resp.text
    assert resp.json()["outputs"][0]["data"] == [True, False, True]


@pytest.mark.parametrize("datatype", NO_JSON)
def test_json_refused_raw(http, datatype):
    """The server itself refuses FP16/BF16 JSON input with 400."""
    body = {"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": datatype,
                        "data": [1.0, 2.0]}]}
    resp = http.infer(f"id_{datatype.lower()}", body)
    assert resp.status_code == 400, resp.text
    error = resp.json()["error"]
    assert datatype in error and "JSON" in error and "INPUT0" in error
