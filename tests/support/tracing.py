"""The tracing tests' models, requests and trace-file reading.

Models: `simple` (identity, INT32 INPUT0 -> OUTPUT0, batching), `other` (the
same), `ens` (an ensemble of one `simple` step) and `bls` (a Python model
that calls `simple` with `trace=request.trace()`, so that its call joins its
request's trace).
"""

import json
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from models import identity
from python_models import PyModel, config

# A W3C trace context as a client's OpenTelemetry propagator writes it.
TRACEPARENT = "00-0af7651916cd43dd8448eb211c12666c-b7ad6b7169242424-01"
CALLER_TRACE_ID = "0af7651916cd43dd8448eb211c12666c"
CALLER_SPAN_ID = "b7ad6b7169242424"

BLS_PY = '''\
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            call = pb_utils.InferenceRequest(
                model_name="simple",
                inputs=[pb_utils.Tensor("INPUT0", x.reshape(1, -1))],
                requested_output_names=["OUTPUT0"],
                trace=request.trace(),
            )
            reply = call.exec()
            if reply.has_error():
                raise pb_utils.TritonModelException(reply.error().message())
            y = pb_utils.get_output_tensor_by_name(reply, "OUTPUT0").as_numpy()
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", y.reshape(-1))]))
        return responses
'''


class Ensemble:
    """`ens`: IN -> simple -> OUT."""

    name = "ens"

    def write(self, repo):
        folder = Path(repo) / self.name
        (folder / "1").mkdir(parents=True, exist_ok=True)
        (folder / "config.pbtxt").write_text(
            'name: "ens"\nplatform: "ensemble"\nmax_batch_size: 8\n'
            'input [ { name: "IN", data_type: TYPE_INT32, dims: [ -1 ] } ]\n'
            'output [ { name: "OUT", data_type: TYPE_INT32, dims: [ -1 ] } ]\n'
            "ensemble_scheduling { step [ { model_name: \"simple\", model_version: -1,\n"
            '  input_map { key: "INPUT0", value: "IN" }\n'
            '  output_map { key: "OUTPUT0", value: "OUT" } } ] }\n'
        )
        return folder


def models(bls=False):
    """The models above (`bls` only when asked: it starts a Python process)."""
    specs = [identity("simple", "INT32"), identity("other", "INT32"), Ensemble()]
    if bls:
        io = [("INPUT0", "INT32", [-1])], [("OUTPUT0", "INT32", [-1])]
        specs.append(PyModel("bls", BLS_PY, config(*io)))
    return specs


VALUES = np.array([[1, 2, 3]], dtype=np.int32)


def infer_http(server, model="simple", headers=None, **kw):
    """One HTTP inference of [[1, 2, 3]]; checks the answer."""
    name = "IN" if model == "ens" else "INPUT0"
    values = VALUES.reshape(-1) if model == "bls" else VALUES
    tensor = httpclient.InferInput(name, list(values.shape), "INT32")
    tensor.set_data_from_numpy(values)
    with httpclient.InferenceServerClient(server.url) as client:
        # The client adds to the headers it is given: a copy each time.
        headers = dict(headers) if headers else None
        result = client.infer(model, [tensor], headers=headers, **kw)
    out = "OUT" if model == "ens" else "OUTPUT0"
    assert result.as_numpy(out).reshape(-1).tolist() == [1, 2, 3]


def infer_grpc(server, model="simple", headers=None, **kw):
    """One gRPC inference of [[1, 2, 3]]; checks the answer."""
    tensor = grpcclient.InferInput("INPUT0", [1, 3], "INT32")
    tensor.set_data_from_numpy(VALUES)
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        result = client.infer(model, [tensor], headers=headers, **kw)
    assert result.as_numpy("OUTPUT0").tolist() == [[1, 2, 3]]


def read_entries(path):
    """The JSON array of a trace file."""
    return json.loads(Path(path).read_text())


def traces(entries):
    """The entries grouped by trace id: {id: {"model": {...} or None,
    "timestamps": {name: ns}, "order": [names], "tensors": [entries]}}."""
    out = {}
    for entry in entries:
        trace = out.setdefault(
            entry["id"], {"model": None, "timestamps": {}, "order": [], "tensors": []}
        )
        if "model_name" in entry:
            trace["model"] = entry
        elif "timestamps" in entry:
            for stamp in entry["timestamps"]:
                assert isinstance(stamp["ns"], int), stamp
                trace["timestamps"][stamp["name"]] = stamp["ns"]
                trace["order"].append(stamp["name"])
        else:
            trace["tensors"].append(entry)
    return out


# The timestamps every traced request to a plain model has, in causal order.
CORE_CHAIN = [
    "REQUEST_START",
    "QUEUE_START",
    "COMPUTE_START",
    "COMPUTE_INPUT_END",
    "COMPUTE_OUTPUT_START",
    "COMPUTE_END",
]
HTTP_STAMPS = {"HTTP_RECV_START", "HTTP_RECV_END", "INFER_RESPONSE_COMPLETE", "HTTP_SEND_START",
               "HTTP_SEND_END"}
GRPC_STAMPS = {"GRPC_WAITREAD_START", "GRPC_WAITREAD_END", "INFER_RESPONSE_COMPLETE",
               "GRPC_SEND_START", "GRPC_SEND_END"}


def assert_in_order(stamps, names):
    """`names` happened in this order (each one no earlier than the one before)."""
    times = [stamps[name] for name in names]
    assert times == sorted(times), list(zip(names, times))
