"""TensorFlow test models, built with the `tensorflow` package (the
tensorflow-cpu wheel), and their Triton folders.

A `TfModel` is a SavedModel (`<repo>/<name>/1/model.savedmodel/`) or a
GraphDef (`<repo>/<name>/1/model.graphdef`) with its inputs and outputs
listed as (name, datatype, dims): datatype is the protocol's, dims exclude
the batch dimension when `max_batch_size` > 0. `reference()` runs the saved
files with Python TensorFlow (the SavedModel's signature, or the GraphDef in
a v1 session), the results the server must give back.

Import this module only where TensorFlow is wanted: importing it imports
TensorFlow (seconds).
"""

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

# Protocol datatype -> TensorFlow dtype.
TF_DTYPES = {
    "BOOL": tf.bool,
    "UINT8": tf.uint8,
    "UINT16": tf.uint16,
    "UINT32": tf.uint32,
    "UINT64": tf.uint64,
    "INT8": tf.int8,
    "INT16": tf.int16,
    "INT32": tf.int32,
    "INT64": tf.int64,
    "FP16": tf.float16,
    "BF16": tf.bfloat16,
    "FP32": tf.float32,
    "FP64": tf.float64,
    "BYTES": tf.string,
}


@dataclass
class TfModel:
    name: str
    inputs: list  # [(name, datatype, dims)]
    outputs: list
    max_batch_size: int = 0
    graph_def: bool = False
    signature: str = "serving_default"
    extra: str = ""
    parameters: dict = field(default_factory=dict)
    # Tensors that are only the batch dimension in the model: dims [1]
    # with an empty reshape in the config, as auto-complete writes them.
    scalars: set = field(default_factory=set)
    source: Path = None  # the SavedModel folder or GraphDef file, once saved

    def config(self, inputs=True, outputs=True):
        def tensors(kind, items):
            body = ",\n".join(
                f'  {{ name: "{n}" data_type: TYPE_{"STRING" if d == "BYTES" else d} '
                f"dims: [ {', '.join(str(x) for x in dims)} ]"
                + (" reshape: { shape: [ ] }" if n in self.scalars else "") + " }"
                for n, d, dims in items)
            return f"{kind} [\n{body}\n]\n"

        platform = "tensorflow_graphdef" if self.graph_def else "tensorflow_savedmodel"
        params = "".join(
            f'parameters {{ key: "{k}" value {{ string_value: "{v}" }} }}\n'
            for k, v in self.parameters.items())
        return (f'name: "{self.name}"\nplatform: "{platform}"\n'
                f"max_batch_size: {self.max_batch_size}\n"
                + (tensors("input", self.inputs) if inputs else "")
                + (tensors("output", self.outputs) if outputs else "")
                + params + self.extra + "\n")

    def write(self, repo, config=None):
        """Copies the saved model into `<repo>/<name>/1/` with its config."""
        folder = Path(repo) / self.name
        version = folder / "1"
        version.mkdir(parents=True)
        if self.graph_def:
            shutil.copy(self.source, version / "model.graphdef")
        else:
            shutil.copytree(self.source, version / "model.savedmodel")
        (folder / "config.pbtxt").write_text(self.config() if config is None else config)
        return folder

    def reference(self, feeds):
        """Python TensorFlow's outputs (numpy, by output name) for `feeds`."""
        if self.graph_def:
            return _run_graph_def(self.source, feeds, [n for n, _, _ in self.outputs])
        loaded = tf.saved_model.load(str(self.source))
        function = loaded.signatures[self.signature]
        args = {n: tf.constant(feeds[n], dtype=TF_DTYPES[d]) for n, d, _ in self.inputs}
        result = function(**args)
        return {n: _numpy(result[n]) for n, _, _ in self.outputs}


def _numpy(tensor):
    if tensor.dtype == tf.bfloat16:
        return tf.cast(tensor, tf.float32).numpy()
    if tensor.dtype == tf.string:
        return tensor.numpy().astype(np.object_)
    return tensor.numpy()


def _run_graph_def(path, feeds, outputs):
    graph_def = tf.compat.v1.GraphDef()
    graph_def.ParseFromString(Path(path).read_bytes())
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="")
        with tf.compat.v1.Session(graph=graph) as session:
            values = session.run([f"{o}:0" for o in outputs],
                                 {f"{n}:0": v for n, v in feeds.items()})
    return dict(zip(outputs, values))


def _save(module, folder, signatures):
    tf.saved_model.save(module, str(folder), signatures=signatures)
    return folder


def mlp(workdir, name="mlp", max_batch_size=8, extra=""):
    """x [-1,4] FP32 -> scores [-1,3] FP32 (dense + relu + dense) and label
    [-1] INT64 (argmax); a second signature `double`: x -> doubled (x * 2)."""
    rng = np.random.default_rng(0)
    w1 = tf.constant(rng.normal(size=(4, 16)).astype(np.float32))
    w2 = tf.constant(rng.normal(size=(16, 3)).astype(np.float32))
    spec = tf.TensorSpec([None, 4], tf.float32, name="x")

    class Mlp(tf.Module):
        @tf.function(input_signature=[spec])
        def serve(self, x):
            scores = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
            return {"scores": scores, "label": tf.argmax(scores, axis=1)}

        @tf.function(input_signature=[spec])
        def double(self, x):
            return {"doubled": x * 2.0}

    module = Mlp()
    source = _save(module, Path(workdir) / "mlp.savedmodel",
                   {"serving_default": module.serve, "double": module.double})
    return TfModel(name, [("x", "FP32", [4])],
                   [("label", "INT64", [1]), ("scores", "FP32", [3])],
                   max_batch_size=max_batch_size, extra=extra, source=source,
                   scalars={"label"})


def reverse(workdir, datatype):
    """x [2,3] of `datatype` -> y: x reversed along its last axis, plus one
    (logical not for BOOL); not batching."""
    dtype = TF_DTYPES[datatype]

    class Reverse(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([2, 3], dtype, name="x")])
        def serve(self, x):
            flipped = tf.reverse(x, axis=[-1])
            if dtype == tf.bool:
                return {"y": tf.logical_not(flipped)}
            return {"y": flipped + tf.ones_like(flipped)}

    module = Reverse()
    source = _save(module, Path(workdir) / f"reverse_{datatype}", {"serving_default": module.serve})
    return TfModel(f"reverse_{datatype.lower()}", [("x", datatype, [2, 3])],
                   [("y", datatype, [2, 3])], source=source)


def strings(workdir):
    """text [-1] BYTES -> upper [-1] BYTES and length [-1] INT32 (bytes)."""

    class Strings(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
        def serve(self, text):
            return {"upper": tf.strings.upper(text), "length": tf.strings.length(text)}

    module = Strings()
    source = _save(module, Path(workdir) / "strings", {"serving_default": module.serve})
    return TfModel("strings", [("text", "BYTES", [-1])],
                   [("length", "INT32", [-1]), ("upper", "BYTES", [-1])], source=source)


def graph_def(workdir):
    """A frozen v1 graph: placeholders INPUT0, INPUT1 [-1,4] FP32 ->
    OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1 (batching)."""
    with tf.Graph().as_default() as graph:
        a = tf.compat.v1.placeholder(tf.float32, [None, 4], name="INPUT0")
        b = tf.compat.v1.placeholder(tf.float32, [None, 4], name="INPUT1")
        tf.identity(a + b, name="OUTPUT0")
        tf.identity(a - b, name="OUTPUT1")
    path = Path(workdir) / "add_sub.graphdef"
    path.write_bytes(graph.as_graph_def().SerializeToString())
    return TfModel("add_sub_graphdef", [("INPUT0", "FP32", [4]), ("INPUT1", "FP32", [4])],
                   [("OUTPUT0", "FP32", [4]), ("OUTPUT1", "FP32", [4])],
                   max_batch_size=8, graph_def=True, source=path)
