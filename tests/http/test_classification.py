"""The classification extension: `class_count` on a requested output returns
the top classes as "value:index:label" strings (label from label_filename)."""

import numpy as np
import pytest
import tritonclient.http as httpclient

SCORES = np.array([[0.5, 3.0, -1.0, 2.0], [9.0, 8.0, 7.0, 6.0]], dtype=np.float32)


def _classify(client, model, data, class_count, binary):
    datatype = "FP32" if data.dtype == np.float32 else "INT32"
    inp = httpclient.InferInput("INPUT0", list(data.shape), datatype)
    inp.set_data_from_numpy(data, binary_data=binary)
    out = httpclient.InferRequestedOutput("OUTPUT0", binary_data=binary, class_count=class_count)
    result = client.infer(model, [inp], outputs=[out])
    assert result.get_output("OUTPUT0")["datatype"] == "BYTES"
    got = result.as_numpy("OUTPUT0")
    return [[x.decode() if isinstance(x, bytes) else x for x in row] for row in got]


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_top3_with_labels(client, binary):
    assert _classify(client, "classify", SCORES, 3, binary) == [
        ["3.000000:1:one", "2.000000:3:three", "0.500000:0:zero"],
        ["9.000000:0:zero", "8.000000:1:one", "7.000000:2:two"],
    ]


def test_top1(client):
    assert _classify(client, "classify", SCORES, 1, False) == [
        ["3.000000:1:one"],
        ["9.000000:0:zero"],
    ]


def test_class_count_over_size_gives_all(client):
    got = _classify(client, "classify", SCORES[:1], 10, False)
    assert got == [["3.000000:1:one", "2.000000:3:three", "0.500000:0:zero", "-1.000000:2:two"]]


def test_without_label_file(client):
    """No label_filename: "value:index"; integer scores print as integers."""
    assert _classify(client, "id_fp32", SCORES[:1], 2, False) == [["3.000000:1", "2.000000:3"]]
    ints = np.array([[5, 1, 9]], dtype=np.int32)
    assert _classify(client, "id_int32", ints, 2, True) == [["9:2", "5:0"]]


def test_raw_json_classification(http):
    body = {
        "inputs": [{"name": "INPUT0", "shape": [1, 4], "datatype": "FP32",
                    "data": [0.25, 0.5, 0.125, 1.0]}],
        "outputs": [{"name": "OUTPUT0", "parameters": {"classification": 2}}],
    }
    resp = http.infer("classify", body)
    assert resp.status_code == 200, resp.text
    (out,) = resp.json()["outputs"]
    assert out == {"name": "OUTPUT0", "datatype": "BYTES", "shape": [1, 2],
                   "data": ["1.000000:3:three", "0.500000:1:one"]}
