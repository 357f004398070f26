"""HTTP compression: gzip and deflate request bodies (Content-Encoding) and
responses (Accept-Encoding), through tritonclient and on the wire."""

import gzip
import http.client
import json
import zlib

import numpy as np
import pytest
import tritonclient.http as httpclient

from helpers import expect_error, expect_still_serving, int32_body

COMPRESS = {"gzip": gzip.compress, "deflate": zlib.compress}
DECOMPRESS = {"gzip": gzip.decompress, "deflate": zlib.decompress}


@pytest.mark.parametrize(
    "request_alg,response_alg",
    [("gzip", "gzip"), ("deflate", "deflate"), ("gzip", None), (None, "deflate"),
     ("deflate", "gzip")],
)
@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_client_compression(client, request_alg, response_alg, binary):
    text = np.array([["압축 테스트 " * 20], [""]], dtype=np.object_)
    inp = httpclient.InferInput("INPUT0", [2, 1], "BYTES")
    inp.set_data_from_numpy(text, binary_data=binary)
    out = httpclient.InferRequestedOutput("OUTPUT0", binary_data=binary)
    result = client.infer(
        "id_bytes", [inp], outputs=[out],
        request_compression_algorithm=request_alg,
        response_compression_algorithm=response_alg,
    )
    got = [x if isinstance(x, str) else x.decode() for x in result.as_numpy("OUTPUT0").ravel()]
    assert got == list(text.ravel())


def _raw_post(url, body, headers):
    """POST without any automatic decompression: (status, headers, raw body)."""
    host, port = url.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("POST", "/v2/models/id_int32/infer", body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


@pytest.mark.parametrize("alg", ["gzip", "deflate"])
def test_compressed_response_on_the_wire(main_server, alg):
    body = json.dumps(int32_body()).encode()
    status, headers, raw = _raw_post(main_server.url, body, {"Accept-Encoding": alg})
    assert status == 200, raw
    assert headers.get("content-encoding") == alg
    assert json.loads(DECOMPRESS[alg](raw))["outputs"][0]["data"] == [1, 2, 3]


def test_uncompressed_without_accept_encoding(main_server):
    body = json.dumps(int32_body()).encode()
    status, headers, raw = _raw_post(main_server.url, body, {})
    assert status == 200 and "content-encoding" not in headers
    assert json.loads(raw)["outputs"][0]["data"] == [1, 2, 3]


@pytest.mark.parametrize("alg", ["gzip", "deflate"])
def test_compressed_request_on_the_wire(main_server, alg):
    body = COMPRESS[alg](json.dumps(int32_body(values=(7, 8, 9))).encode())
    status, _, raw = _raw_post(main_server.url, body, {"Content-Encoding": alg})
    assert status == 200, raw
    assert json.loads(raw)["outputs"][0]["data"] == [7, 8, 9]


def test_compressed_binary_request(main_server):
    """Inference-Header-Content-Length counts the uncompressed header."""
    header = json.dumps({"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "INT32",
                                     "parameters": {"binary_data_size": 8}}]}).encode()
    body = gzip.compress(header + np.array([11, -12], dtype=np.int32).tobytes())
    headers = {"Content-Encoding": "gzip", "Inference-Header-Content-Length": str(len(header))}
    status, _, raw = _raw_post(main_server.url, body, headers)
    assert status == 200, raw
    assert json.loads(raw)["outputs"][0]["data"] == [11, -12]


def test_unsupported_content_encoding(http):
    """Triton answers 501 to a Content-Encoding it does not know."""
    resp = http.infer("id_int32", int32_body(), headers={"Content-Encoding": "br"})
    expect_error(resp, 501, "compression")
    expect_still_serving(http)
