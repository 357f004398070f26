"""ONNX test models, built with the `onnx` package, and their Triton folders.

An `OnnxModel` is a graph (opset 17, IR version 8 so onnxruntime 1.31 loads
it) with its inputs and outputs listed as (name, datatype, shape): datatype
is the protocol's ("FP32", "BYTES", ...) and a str in the shape is a dynamic
dimension. `config()` writes its config.pbtxt, `write()` its model folder
(`<repo>/<name>/config.pbtxt`, `<repo>/<name>/1/model.onnx`), and
`reference()` runs it with Python onnxruntime, the results the server must
give back.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from models import Tensor

OPSET = 17
IR_VERSION = 8

# Protocol datatype -> (ONNX element type, numpy dtype).
DTYPES = {
    "BOOL": (TensorProto.BOOL, np.bool_),
    "UINT8": (TensorProto.UINT8, np.uint8),
    "UINT16": (TensorProto.UINT16, np.uint16),
    "UINT32": (TensorProto.UINT32, np.uint32),
    "UINT64": (TensorProto.UINT64, np.uint64),
    "INT8": (TensorProto.INT8, np.int8),
    "INT16": (TensorProto.INT16, np.int16),
    "INT32": (TensorProto.INT32, np.int32),
    "INT64": (TensorProto.INT64, np.int64),
    "FP16": (TensorProto.FLOAT16, np.float16),
    "FP32": (TensorProto.FLOAT, np.float32),
    "FP64": (TensorProto.DOUBLE, np.float64),
    "BYTES": (TensorProto.STRING, np.object_),
}
FLOATS = ("FP16", "FP32", "FP64")


def _value_info(name, datatype, shape):
    return helper.make_tensor_value_info(name, DTYPES[datatype][0], list(shape))


def make_proto(nodes, inputs, outputs, initializers=()):
    """A checked ModelProto; inputs/outputs are (name, datatype, shape)."""
    graph = helper.make_graph(
        nodes, "oxiserve_test",
        [_value_info(*t) for t in inputs],
        [_value_info(*t) for t in outputs],
        initializer=list(initializers),
    )
    model = helper.make_model(
        graph, producer_name="oxiserve-tests", opset_imports=[helper.make_opsetid("", OPSET)]
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model


@dataclass
class OnnxModel:
    name: str
    proto: onnx.ModelProto
    inputs: list  # [(name, datatype, shape)]
    outputs: list

    def data(self):
        return self.proto.SerializeToString()

    def config(self, max_batch_size=0, extra="", *, backend=True, platform=False,
               count=None, inputs=True, outputs=True):
        """config.pbtxt text: the model's own IO, without the batch dimension
        when max_batch_size > 0 and with -1 for dynamic dimensions."""
        lines = [f'name: "{self.name}"']
        if backend:
            lines.append('backend: "onnxruntime"')
        if platform:
            lines.append('platform: "onnxruntime_onnx"')
        lines.append(f"max_batch_size: {max_batch_size}")
        for kind, tensors, wanted in (("input", self.inputs, inputs),
                                      ("output", self.outputs, outputs)):
            if wanted:
                body = ",\n  ".join(
                    Tensor(name, datatype, config_dims(shape, max_batch_size)).pbtxt()
                    for name, datatype, shape in tensors
                )
                lines.append(f"{kind} [\n  {body}\n]")
        if count is not None:
            lines.append(f"instance_group [ {{ count: {count}, kind: KIND_CPU }} ]")
        if extra:
            lines.append(extra)
        return "\n".join(lines) + "\n"

    def write(self, repo, config=None, **kw):
        """The model folder under `repo`; config None writes no config.pbtxt."""
        return write_folder(repo, self.name, self.data(), config, **kw)

    def session(self):
        if not hasattr(self, "_session"):
            self._session = ort.InferenceSession(self.data(), providers=["CPUExecutionProvider"])
        return self._session

    def reference(self, feeds, outputs=None):
        """{output name: array} from Python onnxruntime on `feeds`."""
        names = outputs or [name for name, _, _ in self.outputs]
        feeds = {k: _for_ort(v) for k, v in feeds.items()}
        results = self.session().run(names, feeds)
        return dict(zip(names, results))


def _for_ort(array):
    """Python onnxruntime wants str, not bytes, in string tensors."""
    if array.dtype != np.object_:
        return array
    return np.vectorize(lambda v: v.decode() if isinstance(v, bytes) else v,
                        otypes=[object])(array)


def config_dims(shape, max_batch_size=0):
    dims = [d if isinstance(d, int) else -1 for d in shape]
    return dims[1:] if max_batch_size > 0 else dims


def write_folder(repo, name, data, config=None, *, filename="model.onnx", versions=(1,)):
    """`<repo>/<name>/<version>/<filename>` holding `data` (bytes; None writes
    only the version folder) and, unless None, `config` as config.pbtxt."""
    folder = Path(repo) / name
    folder.mkdir(parents=True, exist_ok=True)
    if config is not None:
        (folder / "config.pbtxt").write_text(config)
    for version in versions:
        vdir = folder / str(version)
        vdir.mkdir(exist_ok=True)
        if data is not None:
            (vdir / filename).write_bytes(data)
    return folder


# ---- the models ----


def binary_model(name, datatype="FP32", shape=("N", 4)):
    """C = A + B (numbers), A xor B (BOOL), or C = Identity(A) (BYTES: one input)."""
    if datatype == "BYTES":
        return identity_model(name, "BYTES", shape, "A", "C")
    op = "Xor" if datatype == "BOOL" else "Add"
    io = [("A", datatype, shape), ("B", datatype, shape)]
    proto = make_proto([helper.make_node(op, ["A", "B"], ["C"])], io, [("C", datatype, shape)])
    return OnnxModel(name, proto, io, [("C", datatype, shape)])


def add_model(name="add", shape=("N", 4)):
    return binary_model(name, "FP32", shape)


def add_sub_model(name="add_sub", shape=("N", 4)):
    """Two outputs: SUM = A + B and DIFF = A - B (FP32)."""
    io = [("A", "FP32", shape), ("B", "FP32", shape)]
    out = [("SUM", "FP32", shape), ("DIFF", "FP32", shape)]
    nodes = [helper.make_node("Add", ["A", "B"], ["SUM"]),
             helper.make_node("Sub", ["A", "B"], ["DIFF"])]
    return OnnxModel(name, make_proto(nodes, io, out), io, out)


def identity_model(name, datatype, shape=("N", 2), in_name="IN", out_name="OUT"):
    io = [(in_name, datatype, shape)]
    out = [(out_name, datatype, shape)]
    proto = make_proto([helper.make_node("Identity", [in_name], [out_name])], io, out)
    return OnnxModel(name, proto, io, out)


def mlp_model(name="mlp", sizes=(16, 32, 8), seed=0):
    """Y = relu(X @ W1 + B1) @ W2 + B2, random FP32 weights as initializers."""
    rng = np.random.default_rng(seed)
    n_in, hidden, n_out = sizes
    weights = {
        "W1": rng.standard_normal((n_in, hidden)).astype(np.float32),
        "B1": rng.standard_normal(hidden).astype(np.float32),
        "W2": rng.standard_normal((hidden, n_out)).astype(np.float32),
        "B2": rng.standard_normal(n_out).astype(np.float32),
    }
    nodes = [
        helper.make_node("MatMul", ["X", "W1"], ["h0"]),
        helper.make_node("Add", ["h0", "B1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["h2"]),
        helper.make_node("MatMul", ["h2", "W2"], ["h3"]),
        helper.make_node("Add", ["h3", "B2"], ["Y"]),
    ]
    io = [("X", "FP32", ["N", n_in])]
    out = [("Y", "FP32", ["N", n_out])]
    inits = [numpy_helper.from_array(v, k) for k, v in weights.items()]
    return OnnxModel(name, make_proto(nodes, io, out, inits), io, out)


def gather_model(name="embed", vocab=10, width=4, per_row=3, seed=1):
    """EMBEDDING = TABLE[INDICES]: INT64 indices [N, per_row] into an FP32
    [vocab, width] initializer, giving [N, per_row, width]."""
    table = np.random.default_rng(seed).standard_normal((vocab, width)).astype(np.float32)
    io = [("INDICES", "INT64", ["N", per_row])]
    out = [("EMBEDDING", "FP32", ["N", per_row, width])]
    node = helper.make_node("Gather", ["TABLE", "INDICES"], ["EMBEDDING"], axis=0)
    proto = make_proto([node], io, out, [numpy_helper.from_array(table, "TABLE")])
    return OnnxModel(name, proto, io, out)


# ---- data ----


def sample(datatype, shape, seed=0):
    """Random input data of `datatype`; integers small enough that A + B fits."""
    rng = np.random.default_rng(seed)
    npt = DTYPES[datatype][1]
    if datatype == "BYTES":
        flat = [f"s{seed}-{i}-{'é' * (i % 3)}".encode() for i in range(int(np.prod(shape)))]
        return np.array(flat, dtype=np.object_).reshape(shape)
    if datatype == "BOOL":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if datatype in FLOATS:
        return rng.standard_normal(shape).astype(npt)
    low = 0 if datatype.startswith("U") else -50
    return rng.integers(low, 50, size=shape).astype(npt)


def as_bytes(array):
    """A BYTES array as a nested list of bytes (ORT gives str, tritonclient bytes)."""
    return np.vectorize(lambda v: v if isinstance(v, bytes) else str(v).encode(),
                        otypes=[object])(array).tolist()


def assert_same(actual, expected, datatype):
    """Exact for integers, bools and strings; allclose for floats."""
    assert actual is not None, "output missing"
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if datatype == "BYTES":
        assert as_bytes(actual) == as_bytes(expected)
    elif datatype in FLOATS:
        assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
        tol = 1e-3 if datatype == "FP16" else 1e-6
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)
    else:
        assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
        np.testing.assert_array_equal(actual, expected)
