"""Writes the TensorFlow throughput benchmark's model and request (bench/tensorflow_throughput.sh).

    make_model.py OUT [--model mlp|encoder]

OUT/model.savedmodel  the SavedModel (fixed seed), signature serving_default, input x, output y:
                      mlp      x FP32 [N, 1024] -> 3 x (MatMul 1024 + bias + ReLU) -> MatMul 256 +
                               bias -> y FP32 [N, 256] (6.8 MFLOP per row, the ONNX benchmark's mlp)
                      encoder  x FP32 [N, 64, 256] (pre-embedded tokens) -> 2 transformer encoder
                               blocks (post-LN, as in BERT): 4-head self-attention, residual +
                               layer norm, FFN 256 -> 1024 (GELU, the erf form) -> 256, residual +
                               layer norm -> y FP32 [N, 64, 256] (the ONNX benchmark's encoder's
                               shape and work)
OUT/model.body        a KServe v2 request for one row with the binary tensor extension
OUT/model.hlen        its JSON header's length (Inference-Header-Content-Length)
OUT/in.npy            that row; OUT/want.npy: Python TensorFlow's output for it
Prints the TensorFlow version.
"""

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

SEQ, D, HEADS, FFN, BLOCKS = 64, 256, 4, 1024, 2


def weight(rng, rows, cols):
    return tf.Variable(rng.normal(0, 1 / np.sqrt(rows), (rows, cols)).astype(np.float32))


def zeros(n):
    return tf.Variable(np.zeros(n, np.float32))


def ones(n):
    return tf.Variable(np.ones(n, np.float32))


class Mlp(tf.Module):
    def __init__(self, rng):
        super().__init__()
        sizes = [1024, 1024, 1024, 1024, 256]
        self.layers = [(weight(rng, a, b), zeros(b)) for a, b in zip(sizes, sizes[1:])]

    @tf.function(input_signature=[tf.TensorSpec([None, 1024], tf.float32, name="x")])
    def serve(self, x):
        for i, (w, b) in enumerate(self.layers):
            x = tf.matmul(x, w) + b
            if i < len(self.layers) - 1:
                x = tf.nn.relu(x)
        return {"y": x}


def layer_norm(x, gain, bias):
    mean, var = tf.nn.moments(x, axes=[-1], keepdims=True)
    return (x - mean) * tf.math.rsqrt(var + 1e-5) * gain + bias


def dense(x, w, b):
    return tf.einsum("nsd,de->nse", x, w) + b


class Encoder(tf.Module):
    def __init__(self, rng):
        super().__init__()
        self.blocks = [{
            "q": (weight(rng, D, D), zeros(D)), "k": (weight(rng, D, D), zeros(D)),
            "v": (weight(rng, D, D), zeros(D)), "o": (weight(rng, D, D), zeros(D)),
            "ln1": (ones(D), zeros(D)),
            "up": (weight(rng, D, FFN), zeros(FFN)), "down": (weight(rng, FFN, D), zeros(D)),
            "ln2": (ones(D), zeros(D)),
        } for _ in range(BLOCKS)]

    @tf.function(input_signature=[tf.TensorSpec([None, SEQ, D], tf.float32, name="x")])
    def serve(self, x):
        n, dh = tf.shape(x)[0], D // HEADS

        def heads(t):
            return tf.transpose(tf.reshape(t, [n, SEQ, HEADS, dh]), [0, 2, 1, 3])

        h = x
        for b in self.blocks:
            q, k, v = (heads(dense(h, *b[name])) for name in ("q", "k", "v"))
            scores = tf.matmul(q, k, transpose_b=True) / np.sqrt(dh).astype(np.float32)
            attended = tf.matmul(tf.nn.softmax(scores), v)
            merged = tf.reshape(tf.transpose(attended, [0, 2, 1, 3]), [n, SEQ, D])
            h = layer_norm(h + dense(merged, *b["o"]), *b["ln1"])
            ffn = dense(tf.nn.gelu(dense(h, *b["up"]), approximate=False), *b["down"])
            h = layer_norm(h + ffn, *b["ln2"])
        return {"y": h}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--model", choices=["mlp", "encoder"], default="mlp")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    module = (Mlp if args.model == "mlp" else Encoder)(rng)
    tf.saved_model.save(module, str(out / "model.savedmodel"),
                        signatures={"serving_default": module.serve})
    shape = [1024] if args.model == "mlp" else [SEQ, D]
    x = rng.standard_normal([1] + shape).astype(np.float32)
    loaded = tf.saved_model.load(str(out / "model.savedmodel"))
    want = loaded.signatures["serving_default"](x=tf.constant(x))["y"].numpy()
    np.save(out / "in.npy", x)
    np.save(out / "want.npy", want)
    header = json.dumps({
        "inputs": [{"name": "x", "shape": list(x.shape), "datatype": "FP32",
                    "parameters": {"binary_data_size": x.nbytes}}],
        "outputs": [{"name": "y", "parameters": {"binary_data": True}}],
    }).encode()
    (out / "model.body").write_bytes(header + x.tobytes())
    (out / "model.hlen").write_text(str(len(header)))
    print(f"tensorflow {tf.__version__}")


if __name__ == "__main__":
    main()
