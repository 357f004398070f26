"""Writes examples/model_repository/mlp_onnx/1/model.onnx: a small classifier
(4 features -> 16 ReLU -> 3 classes, softmax) with fixed random weights, built
with the `onnx` package (scripts/python-env.sh installs it into .venv):

    .venv/bin/python examples/make_mlp_onnx.py
"""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
weights = {
    "W1": rng.standard_normal((4, 16)).astype(np.float32),
    "B1": rng.standard_normal(16).astype(np.float32),
    "W2": rng.standard_normal((16, 3)).astype(np.float32),
    "B2": rng.standard_normal(3).astype(np.float32),
}
nodes = [
    helper.make_node("MatMul", ["INPUT", "W1"], ["h1"]),
    helper.make_node("Add", ["h1", "B1"], ["h2"]),
    helper.make_node("Relu", ["h2"], ["h3"]),
    helper.make_node("MatMul", ["h3", "W2"], ["h4"]),
    helper.make_node("Add", ["h4", "B2"], ["LOGITS"]),
    helper.make_node("Softmax", ["LOGITS"], ["PROBS"], axis=-1),
]
graph = helper.make_graph(
    nodes,
    "mlp",
    [helper.make_tensor_value_info("INPUT", TensorProto.FLOAT, ["batch", 4])],
    [helper.make_tensor_value_info("PROBS", TensorProto.FLOAT, ["batch", 3])],
    [numpy_helper.from_array(v, k) for k, v in weights.items()],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
out = Path(__file__).parent / "model_repository/mlp_onnx/1/model.onnx"
onnx.save(model, out)
print(f"wrote {out} ({out.stat().st_size} bytes)")
