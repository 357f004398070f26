"""OpenVINO test models, built with the `openvino` package, and their Triton
folders.

An `OvModel` is a graph made with `openvino.opset13`, saved as IR
(`model.xml` + `model.bin`) with `openvino.save_model`, and its inputs and
outputs as (name, datatype, shape), where a str in the shape is a dynamic
dimension. `config()` writes its config.pbtxt, `write()` its model folder,
and `reference()` runs the saved files with OpenVINO's own Python runtime:
the results the server must give back.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import openvino as ov
import openvino.opset13 as ops

from models import Tensor
from onnx_models import config_dims

# Protocol datatype -> numpy dtype, for the datatypes the tests cover.
DTYPES = {
    "BOOL": np.bool_,
    "UINT8": np.uint8,
    "INT8": np.int8,
    "INT32": np.int32,
    "INT64": np.int64,
    "FP16": np.float16,
    "FP32": np.float32,
    "FP64": np.float64,
}


def _ov_shape(shape):
    return ov.PartialShape([-1 if isinstance(d, str) else d for d in shape])


@dataclass
class OvModel:
    name: str
    build: Callable  # {input name: parameter node} -> {output name: node}
    inputs: list  # [(name, datatype, shape)]
    outputs: list

    def graph(self):
        params = {name: ops.parameter(_ov_shape(shape), DTYPES[dt], name=name)
                  for name, dt, shape in self.inputs}
        for name, param in params.items():
            param.output(0).get_tensor().set_names({name})
        results = self.build(params)
        for name, node in results.items():
            node.output(0).get_tensor().set_names({name})
        return ov.Model([results[name] for name, _, _ in self.outputs],
                        list(params.values()), self.name)

    def config(self, max_batch_size=0, extra="", *, inputs=True, outputs=True, count=None):
        lines = [f'name: "{self.name}"', 'backend: "openvino"',
                 f"max_batch_size: {max_batch_size}"]
        for kind, tensors, wanted in (("input", self.inputs, inputs),
                                      ("output", self.outputs, outputs)):
            if wanted:
                body = ",\n  ".join(
                    Tensor(name, datatype, config_dims(shape, max_batch_size)).pbtxt()
                    for name, datatype, shape in tensors)
                lines.append(f"{kind} [\n  {body}\n]")
        if count is not None:
            lines.append(f"instance_group [ {{ count: {count}, kind: KIND_CPU }} ]")
        if extra:
            lines.append(extra)
        return "\n".join(lines) + "\n"

    def write(self, repo, config=None, *, name=None, filename="model.xml"):
        """`<repo>/<name>/1/model.xml` (+ .bin) and, unless None, config.pbtxt."""
        folder = Path(repo) / (name or self.name)
        (folder / "1").mkdir(parents=True, exist_ok=True)
        if config is not None:
            (folder / "config.pbtxt").write_text(config)
        ov.save_model(self.graph(), folder / "1" / filename, compress_to_fp16=False)
        self._file = folder / "1" / filename
        return folder

    def reference(self, feeds, outputs=None):
        """{output name: array} from OpenVINO's Python runtime on the saved model."""
        if not hasattr(self, "_compiled"):
            source = getattr(self, "_file", None) or self.graph()
            self._compiled = ov.Core().compile_model(source, "CPU")
        result = self._compiled(feeds)
        names = outputs or [name for name, _, _ in self.outputs]
        return {name: result[name] for name in names}


def _weights(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def add_sub_model(name="add_sub", shape=("N", 4)):
    """SUM = A + B and DIFF = A - B, FP32."""
    return OvModel(
        name, lambda p: {"SUM": ops.add(p["A"], p["B"]), "DIFF": ops.subtract(p["A"], p["B"])},
        [("A", "FP32", list(shape)), ("B", "FP32", list(shape))],
        [("SUM", "FP32", list(shape)), ("DIFF", "FP32", list(shape))])


def mlp_model(name="mlp", features=16, hidden=32, classes=8):
    """Y = relu(X @ W1 + b1) @ W2 + b2, FP32, dynamic batch."""
    def build(p):
        h = ops.relu(ops.add(ops.matmul(p["X"], ops.constant(_weights((features, hidden), 1)),
                                        False, False),
                             ops.constant(_weights((hidden,), 2))))
        y = ops.add(ops.matmul(h, ops.constant(_weights((hidden, classes), 3)), False, False),
                    ops.constant(_weights((classes,), 4)))
        return {"Y": y}
    return OvModel(name, build, [("X", "FP32", ["N", features])],
                   [("Y", "FP32", ["N", classes])])


def typed_model(datatype, name=None):
    """OUT = IN + IN (logical not for BOOL) in `datatype`, dynamic batch."""
    def build(p):
        x = p["IN"]
        return {"OUT": ops.logical_not(x) if datatype == "BOOL" else ops.add(x, x)}
    return OvModel(name or f"t_{datatype.lower()}", build, [("IN", datatype, ["N", 3])],
                   [("OUT", datatype, ["N", 3])])


def sample(datatype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if datatype == "BOOL":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if datatype.startswith("FP"):
        return rng.standard_normal(shape).astype(DTYPES[datatype])
    return rng.integers(0, 50, shape).astype(DTYPES[datatype])
