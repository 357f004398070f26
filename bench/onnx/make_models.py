"""Writes the ONNX models of bench/onnx_throughput.sh and their request bodies.

    make_models.py OUT [--seed 0]

OUT/models/<m>.onnx   the model (opset 17, IR version 8, fixed-seed random FP32
                      weights as initializers, dynamic batch dimension "N")
OUT/<m>.body          a KServe v2 request with the binary tensor extension: the
                      JSON header, then one row of little-endian FP32 input
OUT/<m>.hlen          the JSON header's length in bytes (the request's
                      Inference-Header-Content-Length)
OUT/<m>.in.npy        that input row, [1, ...]
OUT/<m>.want.npy      onnxruntime's output for it (what the server must answer)

Models:
  mlp      X [N, 1024] -> 3 x (MatMul 1024x1024 + Add + Relu) -> MatMul 1024x256 + Add -> Y [N, 256]
  encoder  X [N, 64, 256] (pre-embedded tokens) -> 2 transformer encoder blocks (post-LN, as in
           BERT): 4-head self-attention (Q/K/V projections, Reshape/Transpose to heads,
           QK^T/sqrt(d), Softmax, xV, Transpose/Reshape back, output projection), residual +
           LayerNormalization, FFN 256 -> 1024 (GELU, the Erf form) -> 256, residual +
           LayerNormalization -> Y [N, 64, 256]
Both print their parameter count and FLOPs per row.
"""

import argparse
import json
import math
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8

MLP_IN, MLP_HIDDEN, MLP_LAYERS, MLP_OUT = 1024, 1024, 3, 256
SEQ, D, HEADS, FFN, BLOCKS = 64, 256, 4, 1024, 2


class Graph:
    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inits = [], []
        self.n = 0

    def name(self, p):
        self.n += 1
        return f"{p}_{self.n}"

    def weight(self, shape, scale=None):
        scale = scale if scale is not None else 1.0 / math.sqrt(shape[0])
        w = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        return self.const(w, "w")

    def const(self, array, prefix="c"):
        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def op(self, op_type, inputs, **attrs):
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out

    def model(self, x, x_shape, y, y_shape, name):
        self.nodes[-1].output[0] = "Y"
        g = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info(x, TensorProto.FLOAT, x_shape)],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, y_shape)],
            initializer=self.inits)
        m = helper.make_model(g, producer_name="oxiserve-bench",
                              opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = IR_VERSION
        onnx.checker.check_model(m)
        return m


def mlp(rng):
    g = Graph(rng)
    h = "X"
    for i in range(MLP_LAYERS):
        h = g.op("MatMul", [h, g.weight((MLP_IN if i == 0 else MLP_HIDDEN, MLP_HIDDEN))])
        h = g.op("Add", [h, g.const(np.zeros(MLP_HIDDEN, np.float32) + 0.01, "b")])
        h = g.op("Relu", [h])
    h = g.op("MatMul", [h, g.weight((MLP_HIDDEN, MLP_OUT))])
    g.op("Add", [h, g.const(np.zeros(MLP_OUT, np.float32), "b")])
    macs = MLP_IN * MLP_HIDDEN + (MLP_LAYERS - 1) * MLP_HIDDEN ** 2 + MLP_HIDDEN * MLP_OUT
    return g.model("X", ["N", MLP_IN], "Y", ["N", MLP_OUT], "mlp"), 2 * macs


def encoder(rng):
    g = Graph(rng)
    dh = D // HEADS
    to_heads = g.const(np.array([0, SEQ, HEADS, dh], np.int64), "shape")  # 0: keep N
    from_heads = g.const(np.array([0, SEQ, D], np.int64), "shape")
    scale = g.const(np.array(1.0 / math.sqrt(dh), np.float32))
    half, one = g.const(np.array(0.5, np.float32)), g.const(np.array(1.0, np.float32))
    rsqrt2 = g.const(np.array(1.0 / math.sqrt(2.0), np.float32))

    def linear(x, n_in, n_out):
        return g.op("Add", [g.op("MatMul", [x, g.weight((n_in, n_out))]),
                            g.const((rng.standard_normal(n_out) * 0.02).astype(np.float32), "b")])

    def layer_norm(x):
        return g.op("LayerNormalization", [x, g.const(np.ones(D, np.float32), "gamma"),
                                           g.const(np.zeros(D, np.float32), "beta")],
                    axis=-1, epsilon=1e-5)

    def heads(x):  # [N, S, D] -> [N, H, S, dh]
        return g.op("Transpose", [g.op("Reshape", [x, to_heads])], perm=[0, 2, 1, 3])

    h = "X"
    for _ in range(BLOCKS):
        q, k, v = (heads(linear(h, D, D)) for _ in range(3))
        kt = g.op("Transpose", [k], perm=[0, 1, 3, 2])
        scores = g.op("Mul", [g.op("MatMul", [q, kt]), scale])  # [N, H, S, S]
        ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])  # [N, H, S, dh]
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), from_heads])
        h = layer_norm(g.op("Add", [h, linear(ctx, D, D)]))
        f = linear(h, D, FFN)
        f = g.op("Mul", [g.op("Mul", [f, half]),
                         g.op("Add", [g.op("Erf", [g.op("Mul", [f, rsqrt2])]), one])])  # GELU
        h = layer_norm(g.op("Add", [h, linear(f, FFN, D)]))
    macs = BLOCKS * SEQ * (4 * D * D + 2 * SEQ * D + 2 * D * FFN)
    return g.model("X", ["N", SEQ, D], "Y", ["N", SEQ, D], "encoder"), 2 * macs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out", type=Path)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    (a.out / "models").mkdir(parents=True, exist_ok=True)
    for name, build in (("mlp", mlp), ("encoder", encoder)):
        rng = np.random.default_rng(a.seed)
        model, flops = build(rng)
        path = a.out / "models" / f"{name}.onnx"
        onnx.save(model, path)
        params = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        row_shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim[1:]]
        x = rng.standard_normal([1] + row_shape).astype(np.float32)
        (y,) = sess.run(None, {"X": x})
        # every batch size runs, and a row's answer does not depend on its batch
        xb = rng.standard_normal([5] + row_shape).astype(np.float32)
        xb[2] = x[0]
        (yb,) = sess.run(None, {"X": xb})
        assert yb.shape[0] == 5 and np.allclose(yb[2], y[0], rtol=1e-4, atol=1e-4), name
        assert np.isfinite(y).all(), name
        np.save(a.out / f"{name}.in.npy", x)
        np.save(a.out / f"{name}.want.npy", y)
        header = json.dumps({
            "inputs": [{"name": "X", "shape": list(x.shape), "datatype": "FP32",
                        "parameters": {"binary_data_size": x.nbytes}}],
            "outputs": [{"name": "Y", "parameters": {"binary_data": True}}],
        }, separators=(",", ":")).encode()
        (a.out / f"{name}.body").write_bytes(header + x.astype("<f4").tobytes())
        (a.out / f"{name}.hlen").write_text(str(len(header)))
        print(f"{name}: X {list(x.shape)} -> Y {list(y.shape)}, {params / 1e6:.2f} M parameters "
              f"({path.stat().st_size / 2**20:.1f} MiB), {flops / 1e6:.1f} MFLOP per row, "
              f"request body {len(header)} + {x.nbytes} B")


if __name__ == "__main__":
    main()
