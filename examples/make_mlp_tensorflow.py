"""Writes examples/framework_repository/mlp_tensorflow/1/model.savedmodel: the
`mlp_onnx` classifier (its weights read from mlp_onnx's model.onnx) as a
TensorFlow SavedModel whose `serving_default` signature takes INPUT [-1, 4]
and gives PROBS [-1, 3], with the `tensorflow-cpu` package
(scripts/python-env.sh installs it into .venv):

    .venv/bin/python examples/make_mlp_tensorflow.py
"""

import shutil
from pathlib import Path

import onnx
import tensorflow as tf
from onnx import numpy_helper

here = Path(__file__).parent
graph = onnx.load(here / "model_repository" / "mlp_onnx" / "1" / "model.onnx").graph
weights = {w.name: tf.constant(numpy_helper.to_array(w)) for w in graph.initializer}


class Classifier(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="INPUT")])
    def serve(self, features):
        hidden = tf.nn.relu(tf.matmul(features, weights["W1"]) + weights["B1"])
        logits = tf.matmul(hidden, weights["W2"]) + weights["B2"]
        return {"PROBS": tf.nn.softmax(logits, axis=-1)}


out = here / "framework_repository" / "mlp_tensorflow" / "1" / "model.savedmodel"
shutil.rmtree(out, ignore_errors=True)
module = Classifier()
tf.saved_model.save(module, str(out), signatures={"serving_default": module.serve})
print(f"wrote {out}")
