"""Raw binary requests (`Inference-Header-Content-Length: 0`: the whole body
is the model's only input, its shape deduced from the model configuration),
sent with curl, as Triton 2.51 takes them (its qa/L0_http raw binary checks):

- a BYTES input takes a raw body only when its shape is [1] (the body is its
  one element); any other shape is 400 "For BYTE datatype raw input 'NAME',
  the model must have input shape [1]";
- a shape with more than one variable-sized dimension is 400 "The shape of
  the raw input 'NAME' can not be deduced because there are more than one
  variable-sized dimension", whatever the datatype and the body's size. The
  batch dimension is not one of them.
"""

import json
import subprocess
import struct

import numpy as np
import pytest

from models import ModelSpec, Tensor, write_repository
from servers import TARGET, Server

MODELS = [
    ModelSpec("raw_bytes_1", [Tensor("INPUT0", "BYTES", [1])]),
    ModelSpec("raw_bytes_1_batch", [Tensor("INPUT0", "BYTES", [1])], max_batch_size=4),
    ModelSpec("raw_bytes_1x1", [Tensor("INPUT0", "BYTES", [1, 1])]),
    ModelSpec("raw_bytes_2", [Tensor("INPUT0", "BYTES", [2])]),
    ModelSpec("raw_bytes_var", [Tensor("INPUT0", "BYTES", [-1])]),
    ModelSpec("raw_bytes_var_batch", [Tensor("INPUT0", "BYTES", [-1])], max_batch_size=4),
    ModelSpec("raw_bytes_var2", [Tensor("INPUT0", "BYTES", [-1, -1])]),
    ModelSpec("raw_fp32_var2", [Tensor("INPUT0", "FP32", [-1, -1])]),
    ModelSpec("raw_fp32_var2_batch", [Tensor("INPUT0", "FP32", [-1, 2, -1])], max_batch_size=4),
    ModelSpec("raw_fp32_fixed_var_batch", [Tensor("INPUT0", "FP32", [2, -1])], max_batch_size=4),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = write_repository(tmp_path_factory.mktemp("raw_binary"), MODELS, TARGET)
    with Server(repo) as s:
        yield s


def curl_raw(server, model, body):
    """POSTs `body` as a raw binary request with curl: (status, headers, body)."""
    proc = subprocess.run(
        ["curl", "-sS", "-D", "-", "--data-binary", "@-",
         "-H", "Inference-Header-Content-Length: 0",
         "-H", "Content-Type: application/octet-stream",
         f"http://{server.url}/v2/models/{model}/infer"],
        input=body, capture_output=True, check=True, timeout=120,
    )
    head, _, content = proc.stdout.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
    return status, headers, content


def expect_raw_error(server, model, body, message):
    status, _, content = curl_raw(server, model, body)
    assert status == 400, (status, content)
    assert json.loads(content) == {"error": f"[request id: <id_unknown>] {message}"}


def raw_output(headers, content):
    """(the JSON header, the first output's bytes) of a 200 response."""
    size = int(headers["inference-header-content-length"])
    header = json.loads(content[:size])
    return header, content[size:]


@pytest.mark.parametrize("model, shape", [
    ("raw_bytes_1", [1]), ("raw_bytes_1_batch", [1, 1]), ("raw_bytes_1x1", [1, 1]),
])
def test_a_bytes_input_of_shape_1_takes_the_body_as_its_element(server, model, shape):
    body = "raw 바이트 \0 body".encode()
    status, headers, content = curl_raw(server, model, body)
    assert status == 200, content
    header, data = raw_output(headers, content)
    (out,) = header["outputs"]
    assert (out["datatype"], out["shape"]) == ("BYTES", shape)
    assert data == struct.pack("<I", len(body)) + body


@pytest.mark.parametrize("model", ["raw_bytes_2", "raw_bytes_var", "raw_bytes_var_batch"])
def test_a_bytes_input_of_another_shape_is_refused(server, model):
    for body in (b"abc", b"", b"\0" * 8):
        expect_raw_error(
            server, model, body,
            "For BYTE datatype raw input 'INPUT0', the model must have input shape [1]",
        )


@pytest.mark.parametrize("model", ["raw_fp32_var2", "raw_fp32_var2_batch", "raw_bytes_var2"])
def test_two_variable_dims_cannot_be_deduced(server, model):
    for body in (b"\0" * 8, b"\0" * 7, b""):
        expect_raw_error(
            server, model, body,
            "The shape of the raw input 'INPUT0' can not be deduced because there are more "
            "than one variable-sized dimension",
        )


def test_one_variable_dim_besides_the_batch_is_deduced(server):
    values = np.array([1.5, -2.0, 3.25, 4.0], dtype=np.float32)
    status, headers, content = curl_raw(server, "raw_fp32_fixed_var_batch", values.tobytes())
    assert status == 200, content
    header, data = raw_output(headers, content)
    assert header["outputs"][0]["shape"] == [1, 2, 2]
    np.testing.assert_array_equal(np.frombuffer(data, dtype=np.float32), values)
