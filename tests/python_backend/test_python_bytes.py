"""BYTES tensors through a Python model: echo, `str` outputs, empty strings,
embedded NULs and non-UTF-8 bytes, [2, 1] shapes; JSON and binary."""

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from helpers import Http
from python_models import bytes_model, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("py_bytes"), [bytes_model()]) as s:
        yield s


def _infer_http(server, data, binary=True):
    client = httpclient.InferenceServerClient(server.url)
    tensor = httpclient.InferInput("INPUT0", list(data.shape), "BYTES")
    tensor.set_data_from_numpy(data, binary_data=binary)
    outputs = [httpclient.InferRequestedOutput(n, binary_data=binary)
               for n in ("ECHO", "UPPER", "LENGTH", "TYPES")]
    result = client.infer("bytes_model", [tensor], outputs=outputs)
    client.close()
    return result


def test_types_seen_by_the_model(server):
    data = np.array([[b"abc", b"d"]], dtype=np.object_)
    result = _infer_http(server, data)
    assert result.as_numpy("TYPES").tolist() == [b"bytes|object"]


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "json"])
def test_echo_korean_and_empty(server, binary):
    words = ["안녕하세요", "", "x", "슈퍼 엔저"]
    data = np.array([[w.encode("utf-8")] for w in words], dtype=np.object_)  # [4, 1]
    result = _infer_http(server, data, binary)
    echo = result.as_numpy("ECHO")
    assert echo.shape == (4, 1)
    assert [_text(x) for x in echo.ravel()] == words
    assert result.as_numpy("LENGTH").ravel().tolist() == [len(w.encode()) for w in words]
    upper = result.as_numpy("UPPER")
    assert [_text(x) for x in upper.ravel()] == [w.upper() for w in words]


def _text(x):
    """tritonclient gives BYTES from JSON as str, from binary as bytes."""
    return x if isinstance(x, str) else x.decode("utf-8")


def test_shape_2_1(server):
    data = np.array([[b"first"], [b"second"]], dtype=np.object_)
    result = _infer_http(server, data)
    assert result.as_numpy("ECHO").shape == (2, 1)
    assert result.as_numpy("ECHO").tolist() == [[b"first"], [b"second"]]
    assert result.as_numpy("UPPER").tolist() == [[b"FIRST"], [b"SECOND"]]


def test_embedded_nul_and_raw_bytes_grpc(server):
    words = [b"a\x00b", b"\x00", b"\xff\xfe raw", b"", b"end\x00"]
    data = np.array([words], dtype=np.object_)
    client = grpcclient.InferenceServerClient(server.grpc_url)
    tensor = grpcclient.InferInput("INPUT0", list(data.shape), "BYTES")
    tensor.set_data_from_numpy(data)
    result = client.infer("bytes_model", [tensor])
    client.close()
    assert result.as_numpy("ECHO").tolist() == [words]
    assert result.as_numpy("LENGTH").tolist() == [[3, 1, 6, 0, 4]]


def test_json_output_text(server):
    body = {"inputs": [{"name": "INPUT0", "shape": [1, 3], "datatype": "BYTES",
                        "data": ["héllo", "", "a b"]}]}
    with Http(server.url) as http:
        resp = http.infer("bytes_model", body)
    assert resp.status_code == 200, resp.text
    outs = {o["name"]: o for o in resp.json()["outputs"]}
    assert outs["ECHO"] == {"name": "ECHO", "datatype": "BYTES", "shape": [1, 3],
                            "data": ["héllo", "", "a b"]}
    assert outs["UPPER"]["data"] == ["HÉLLO", "", "A B"]
    assert outs["LENGTH"] == {"name": "LENGTH", "datatype": "INT32", "shape": [1, 3],
                              "data": [6, 0, 3]}
    assert outs["TYPES"]["data"] == ["bytes|object"]
