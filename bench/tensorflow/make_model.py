"""Writes the TensorFlow throughput benchmark's model and request (bench/tensorflow_throughput.sh).

OUT/model.savedmodel  a SavedModel MLP: x FP32 [N, 1024] -> 3 x (MatMul 1024 + bias + ReLU) ->
                      MatMul 256 + bias -> y FP32 [N, 256] (fixed seed; 6.8 MFLOP per row, the
                      ONNX benchmark's mlp), signature serving_default
OUT/mlp.body          a KServe v2 request for one row with the binary tensor extension
OUT/mlp.hlen          its JSON header's length (Inference-Header-Content-Length)
OUT/in.npy            that row; OUT/want.npy: Python TensorFlow's output for it
Prints the TensorFlow version.
"""

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    sizes = [1024, 1024, 1024, 1024, 256]
    layers = [(tf.Variable(rng.normal(0, 1 / np.sqrt(a), (a, b)).astype(np.float32)),
               tf.Variable(np.zeros(b, np.float32))) for a, b in zip(sizes, sizes[1:])]

    class Mlp(tf.Module):
        def __init__(self):
            super().__init__()
            self.layers = layers

        @tf.function(input_signature=[tf.TensorSpec([None, 1024], tf.float32, name="x")])
        def serve(self, x):
            for i, (w, b) in enumerate(self.layers):
                x = tf.matmul(x, w) + b
                if i < len(self.layers) - 1:
                    x = tf.nn.relu(x)
            return {"y": x}

    module = Mlp()
    tf.saved_model.save(module, str(out / "model.savedmodel"),
                        signatures={"serving_default": module.serve})
    x = rng.standard_normal((1, 1024)).astype(np.float32)
    loaded = tf.saved_model.load(str(out / "model.savedmodel"))
    want = loaded.signatures["serving_default"](x=tf.constant(x))["y"].numpy()
    np.save(out / "in.npy", x)
    np.save(out / "want.npy", want)
    header = json.dumps({
        "inputs": [{"name": "x", "shape": [1, 1024], "datatype": "FP32",
                    "parameters": {"binary_data_size": x.nbytes}}],
        "outputs": [{"name": "y", "parameters": {"binary_data": True}}],
    }).encode()
    (out / "mlp.body").write_bytes(header + x.tobytes())
    (out / "mlp.hlen").write_text(str(len(header)))
    print(f"tensorflow {tf.__version__}")


if __name__ == "__main__":
    main()
