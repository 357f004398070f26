"""The binary tensor data extension on the wire, built and parsed by hand.

A binary request is a JSON header followed by raw tensor bytes; the header's
length travels in `Inference-Header-Content-Length`. Responses use the same
layout when any output is binary.
"""

import json
import struct

import numpy as np

HEADER = "Inference-Header-Content-Length"


def binary_request(header, *chunks):
    """(body, headers) of a JSON header followed by raw chunks."""
    text = json.dumps(header).encode()
    return text + b"".join(chunks), {HEADER: str(len(text))}


def split_response(resp):
    """(JSON header, {output name: raw bytes}) of a 200 response."""
    assert resp.status_code == 200, resp.text
    if HEADER not in resp.headers:
        return resp.json(), {}
    size = int(resp.headers[HEADER])
    header = json.loads(resp.content[:size])
    raw, offset = {}, size
    for out in header["outputs"]:
        n = out.get("parameters", {}).get("binary_data_size")
        if n is not None:
            raw[out["name"]] = resp.content[offset : offset + n]
            offset += n
    assert offset == len(resp.content), "bytes left over after the outputs"
    return header, raw


def bytes_tensor(items):
    """Triton's BYTES layout: a 4-byte little-endian length before each item."""
    return b"".join(struct.pack("<I", len(b)) + b for b in items)


def test_binary_inputs_json_outputs(http):
    a = np.array([[1, -2, 3], [4, 5, -6]], dtype=np.int32)
    b = np.array([[0.5, -1.25, 8.0], [1e-3, 2.0, -0.0]], dtype=np.float32)
    body, headers = binary_request(
        {"inputs": [
            {"name": "INPUT0", "shape": [2, 3], "datatype": "INT32",
             "parameters": {"binary_data_size": a.nbytes}},
            {"name": "INPUT1", "shape": [2, 3], "datatype": "FP32",
             "parameters": {"binary_data_size": b.nbytes}},
        ]},
        a.tobytes(), b.tobytes(),
    )
    header, raw = split_response(http.infer("pair", body, headers=headers))
    assert raw == {}
    outs = {o["name"]: o for o in header["outputs"]}
    assert outs["OUTPUT0"]["data"] == a.ravel().tolist()
    assert outs["OUTPUT1"]["data"] == b.ravel().tolist()
    assert outs["OUTPUT1"]["shape"] == [2, 3] and outs["OUTPUT1"]["datatype"] == "FP32"


def test_binary_output_per_output(http):
    body = {
        "inputs": [
            {"name": "INPUT0", "shape": [1, 2], "datatype": "INT32", "data": [7, -8]},
            {"name": "INPUT1", "shape": [1, 2], "datatype": "FP32", "data": [1.5, 2.5]},
        ],
        "outputs": [
            {"name": "OUTPUT0", "parameters": {"binary_data": True}},
            {"name": "OUTPUT1", "parameters": {"binary_data": False}},
        ],
    }
    resp = http.infer("pair", body)
    header, raw = split_response(resp)
    assert resp.headers["Content-Type"] == "application/octet-stream"
    assert raw == {"OUTPUT0": struct.pack("<2i", 7, -8)}
    outs = {o["name"]: o for o in header["outputs"]}
    assert outs["OUTPUT0"]["parameters"]["binary_data_size"] == 8
    assert "data" not in outs["OUTPUT0"]
    assert outs["OUTPUT1"]["data"] == [1.5, 2.5]


def test_binary_data_output_request_parameter(http):
    """`binary_data_output: true` makes every output binary."""
    body = {
        "inputs": [
            {"name": "INPUT0", "shape": [1, 1], "datatype": "INT32", "data": [3]},
            {"name": "INPUT1", "shape": [1, 1], "datatype": "FP32", "data": [0.25]},
        ],
        "parameters": {"binary_data_output": True},
    }
    _, raw = split_response(http.infer("pair", body))
    assert raw == {"OUTPUT0": struct.pack("<i", 3), "OUTPUT1": struct.pack("<f", 0.25)}


def test_bytes_binary_layout(http):
    items = ["가나다".encode(), b"", b"\x00\xffraw", "슈퍼 엔저".encode()]
    data = bytes_tensor(items)
    body, headers = binary_request(
        {"inputs": [{"name": "INPUT0", "shape": [2, 2], "datatype": "BYTES",
                     "parameters": {"binary_data_size": len(data)}}],
         "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": True}}]},
        data,
    )
    header, raw = split_response(http.infer("id_bytes", body, headers=headers))
    assert raw == {"OUTPUT0": data}
    assert header["outputs"][0]["shape"] == [2, 2]
    assert header["outputs"][0]["datatype"] == "BYTES"


def test_bool_binary_is_one_byte_each(http):
    flags = np.array([[True, False, False, True]])
    body, headers = binary_request(
        {"inputs": [{"name": "INPUT0", "shape": [1, 4], "datatype": "BOOL",
                     "parameters": {"binary_data_size": 4}}],
         "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": True}}]},
        flags.tobytes(),
    )
    _, raw = split_response(http.infer("id_bool", body, headers=headers))
    assert raw == {"OUTPUT0": b"\x01\x00\x00\x01"}


def test_mixed_binary_and_json_inputs(http):
    """One input in the binary section, the other as JSON `data`."""
    a = np.array([[10, 20]], dtype=np.int32)
    body, headers = binary_request(
        {"inputs": [
            {"name": "INPUT0", "shape": [1, 2], "datatype": "INT32",
             "parameters": {"binary_data_size": 8}},
            {"name": "INPUT1", "shape": [1, 2], "datatype": "FP32", "data": [3.0, 4.0]},
        ],
         "outputs": [{"name": "OUTPUT0"}, {"name": "OUTPUT1"}]},
        a.tobytes(),
    )
    header, _ = split_response(http.infer("pair", body, headers=headers))
    outs = {o["name"]: o["data"] for o in header["outputs"]}
    assert outs == {"OUTPUT0": [10, 20], "OUTPUT1": [3.0, 4.0]}


def test_fp16_binary_round_trip(http):
    half = np.array([[1.0, -0.5, 65504.0]], dtype=np.float16)
    body, headers = binary_request(
        {"inputs": [{"name": "INPUT0", "shape": [1, 3], "datatype": "FP16",
                     "parameters": {"binary_data_size": half.nbytes}}],
         "parameters": {"binary_data_output": True}},
        half.tobytes(),
    )
    header, raw = split_response(http.infer("id_fp16", body, headers=headers))
    assert raw == {"OUTPUT0": half.tobytes()}
    assert header["outputs"][0]["datatype"] == "FP16"


def test_raw_binary_request(http):
    """Inference-Header-Content-Length 0: the whole body is the model's only
    input (batch of 1, the variable dimension from the body's size), and every
    output comes back binary."""
    values = np.array([1.5, -2.0, 3.25], dtype=np.float32)
    resp = http.infer("id_fp32", values.tobytes(), headers={HEADER: "0"})
    header, raw = split_response(resp)
    (out,) = header["outputs"]
    assert (out["name"], out["datatype"], out["shape"]) == ("OUTPUT0", "FP32", [1, 3])
    np.testing.assert_array_equal(np.frombuffer(raw["OUTPUT0"], dtype=np.float32), values)


def test_raw_binary_request_errors(http):
    resp = http.infer("pair", b"\0" * 8, headers={HEADER: "0"})
    assert resp.status_code == 400, resp.text
    assert "Raw request must only have 1 input" in resp.json()["error"]
    resp = http.infer("id_fp32", b"\0" * 13, headers={HEADER: "0"})
    assert resp.status_code == 400, resp.text
    assert "input byte size mismatch" in resp.json()["error"]
