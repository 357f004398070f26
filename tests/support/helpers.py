"""Raw-HTTP helpers: a thin `requests` wrapper and error-response checks."""

import json
import time

import requests

from servers import TARGET

# What `platform` / `backend` report for the identity test models.
IDENTITY_BACKEND = "python" if TARGET == "triton" else "identity"


class Http:
    """`requests` against one server; paths are like "/v2/health/ready"."""

    def __init__(self, url):
        self.base = f"http://{url}"
        self.session = requests.Session()

    def get(self, path, **kw):
        return self.session.get(self.base + path, timeout=30, **kw)

    def post(self, path, body=None, **kw):
        """POSTs `body`: dict/list as JSON text, bytes/str as they are."""
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        return self.session.post(self.base + path, data=body, timeout=30, **kw)

    def infer(self, model, body, version=None, **kw):
        path = f"/v2/models/{model}"
        if version is not None:
            path += f"/versions/{version}"
        return self.post(path + "/infer", body, **kw)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.session.close()


def raw_infer_request(port, model, body):
    """The bytes of one keep-alive HTTP/1.1 inference request with JSON `body`."""
    data = json.dumps(body).encode()
    return (
        f"POST /v2/models/{model}/infer HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    ).encode() + data


def read_response(sock):
    """One HTTP/1.1 response read off `sock`: (status line, headers with
    lower-case names, body); ConnectionError if the server closes first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a response: {data!r}")
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    while len(body) < int(headers.get("content-length", 0)):
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed mid-body")
        body += chunk
    return lines[0], headers, body


def int32_body(rows=1, values=(1, 2, 3)):
    """A JSON request of INPUT0 INT32 [rows, len(values)]."""
    data = list(values) * rows
    return {
        "inputs": [
            {"name": "INPUT0", "shape": [rows, len(values)], "datatype": "INT32", "data": data}
        ]
    }


def expect_error(resp, status, *needles):
    """Checks `resp` is `status` with a JSON {"error": text} naming every needle."""
    assert resp.status_code == status, f"{resp.status_code} {resp.text}"
    try:
        body = resp.json()
    except ValueError:
        raise AssertionError(f"error body is not JSON: {resp.text!r}") from None
    assert isinstance(body, dict) and isinstance(body.get("error"), str), body
    assert set(body) == {"error"}, body
    for needle in needles:
        assert needle.lower() in body["error"].lower(), (needle, body["error"])
    return body["error"]


def expect_still_serving(http, model="id_int32"):
    """A good request after an error still succeeds."""
    resp = http.infer(model, int32_body())
    assert resp.status_code == 200, resp.text
    assert resp.json()["outputs"][0]["data"] == [1, 2, 3]


def wait_for(predicate, timeout=30.0, what="condition"):
    """Polls `predicate` until it is truthy (for asynchronous state changes)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def repository_index(clients, how):
    """The repository index by model name, asked through `clients[how]` (a
    tritonclient: "http", or "grpc" with the index as JSON)."""
    if how == "http":
        models = clients["http"].get_model_repository_index()
    else:
        models = clients["grpc"].get_model_repository_index(as_json=True)["models"]
    return {m["name"]: m for m in models}
