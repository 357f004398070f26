"""Bad inference requests over raw HTTP: Triton's status code and a JSON error
body naming the offending model or tensor; the server keeps serving after each.

Status codes are real Triton 2.51's, including its 500 for a body that is not
JSON, has no `inputs`, or has `data` that does not fit the shape.
"""

import json
import struct

import pytest

from helpers import expect_error, expect_still_serving, int32_body

HEADER = "Inference-Header-Content-Length"


def _input(**fields):
    base = {"name": "INPUT0", "shape": [1, 3], "datatype": "INT32", "data": [1, 2, 3]}
    base.update(fields)
    return {"inputs": [base]}


def _binary(size, payload):
    header = json.dumps(
        {"inputs": [{"name": "INPUT0", "shape": [1, 3], "datatype": "INT32",
                     "parameters": {"binary_data_size": size}}]}
    ).encode()
    return header + payload, {HEADER: str(len(header))}


# id, model, version, body, status, substrings of the error
CASES = [
    ("unknown_model", "no_such_model", None, int32_body(), 404, ["no_such_model"]),
    ("unknown_version", "id_int32", 7, int32_body(), 404, ["id_int32", "7"]),
    ("malformed_json", "id_int32", None, '{"inputs": [', 500, []),
    ("no_inputs_member", "id_int32", None, "[1, 2]", 500, ["inputs"]),
    ("missing_input", "id_int32", None, {"inputs": []}, 400, ["INPUT0", "id_int32"]),
    ("missing_one_of_two", "pair", None, _input(), 400, ["INPUT1", "pair"]),
    ("unexpected_input", "id_int32", None,
     {"inputs": _input()["inputs"] + _input(name="EXTRA")["inputs"]}, 400, ["EXTRA"]),
    ("wrong_datatype", "id_int32", None, _input(datatype="FP32", data=[1.0, 2.0, 3.0]),
     400, ["INPUT0", "FP32", "INT32"]),
    ("unknown_datatype", "id_int32", None, _input(datatype="INT33"), 400, ["INPUT0"]),
    ("shape_without_batch_dim", "id_int32", None, _input(shape=[3]), 400,
     ["INPUT0", "id_int32"]),
    ("wrong_rank_no_batching", "nobatch_all", None, _input(shape=[3]), 400,
     ["INPUT0", "nobatch_all"]),
    ("data_does_not_fill_shape", "id_int32", None, _input(shape=[1, 4]), 500, ["shape"]),
    ("data_wrong_json_type", "id_int32", None, _input(data=[1, 2, "x"]), 500, []),
    ("batch_over_max", "id_int32", None, int32_body(rows=9), 400, ["id_int32", "8"]),
    ("unknown_output", "id_int32", None,
     {**int32_body(), "outputs": [{"name": "NOPE"}]}, 400, ["NOPE", "id_int32"]),
]


@pytest.mark.parametrize(
    "model,version,body,status,needles", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_request(http, model, version, body, status, needles):
    expect_error(http.infer(model, body, version=version), status, *needles)
    expect_still_serving(http)


BINARY_CASES = [
    ("size_too_big_for_body", 16, struct.pack("<3i", 1, 2, 3), ["INPUT0"]),
    ("size_too_small_for_shape", 8, struct.pack("<2i", 1, 2), ["INPUT0", "12"]),
    ("bytes_left_over", 12, struct.pack("<4i", 1, 2, 3, 4), ["id_int32"]),
]


@pytest.mark.parametrize(
    "size,payload,needles", [c[1:] for c in BINARY_CASES], ids=[c[0] for c in BINARY_CASES]
)
def test_binary_data_size_mismatch(http, size, payload, needles):
    body, headers = _binary(size, payload)
    expect_error(http.infer("id_int32", body, headers=headers), 400, *needles)
    expect_still_serving(http)


@pytest.mark.parametrize("data", [[1, 2], [1, 2, 3, 4], [[1, 2], [3, 4]]])
def test_data_that_does_not_fit_the_shape_is_tritons_exact_body(http, data):
    """Clients and scripts compare this body, so it is Triton's to the byte."""
    resp = http.infer("id_int32", _input(data=data))
    assert resp.status_code == 500, resp.text
    assert resp.json() == {
        "error": "Unable to parse 'data': Shape does not match true shape of 'data' field"
    }
    expect_still_serving(http)


def test_binary_data_size_matching_is_fine(http):
    body, headers = _binary(12, struct.pack("<3i", 4, 5, 6))
    resp = http.infer("id_int32", body, headers=headers)
    assert resp.status_code == 200, resp.text
    assert resp.json()["outputs"][0]["data"] == [4, 5, 6]


def test_unknown_model_on_other_routes(http):
    for path in ("/v2/models/no_such_model", "/v2/models/no_such_model/config"):
        expect_error(http.get(path), 404, "no_such_model")
    expect_error(http.get("/v2/models/no_such_model/stats"), 400, "no_such_model")
