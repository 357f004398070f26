"""Writes the test model repositories.

Every test model copies input i to output i (Triton's identity backend). On
oxiserve the config says ``backend: "identity"``; real Triton here has only the
Python backend, so for it the same config says ``backend: "python"`` and gets
a ``model.py`` that does the copy (and honours ``execute_delay_ms``).
"""

from dataclasses import dataclass, field
from pathlib import Path

# The Python models' sources, tests/python_backend/models/<name>/model.py.
MODEL_SOURCES = Path(__file__).resolve().parents[1] / "python_backend" / "models"


def model_source(name):
    """The text of python_backend/models/<name>/model.py."""
    return (MODEL_SOURCES / name / "model.py").read_text()

# Config data_type -> protocol datatype, for every datatype the tests cover.
DATATYPES = {
    "BOOL": "TYPE_BOOL",
    "UINT8": "TYPE_UINT8",
    "UINT16": "TYPE_UINT16",
    "UINT32": "TYPE_UINT32",
    "UINT64": "TYPE_UINT64",
    "INT8": "TYPE_INT8",
    "INT16": "TYPE_INT16",
    "INT32": "TYPE_INT32",
    "INT64": "TYPE_INT64",
    "FP16": "TYPE_FP16",
    "FP32": "TYPE_FP32",
    "FP64": "TYPE_FP64",
    "BYTES": "TYPE_STRING",
    "BF16": "TYPE_BF16",
}

# The Python-backend stand-in for the identity backend. It pairs inputs and
# outputs by their position in the config, so it also serves models whose
# tensors are not named INPUTn/OUTPUTn.
IDENTITY_MODEL_PY = model_source("identity")

# The decoupled form: each request gets one response that is also its last
# (the identity backend does the same when its config says decoupled).
DECOUPLED_MODEL_PY = IDENTITY_MODEL_PY.replace(
    "            responses.append(pb_utils.InferenceResponse(output_tensors=outputs))\n"
    "        return responses\n",
    "            request.get_response_sender().send(\n"
    "                pb_utils.InferenceResponse(output_tensors=outputs),\n"
    "                flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL,\n"
    "            )\n"
    "        return None\n",
)
assert DECOUPLED_MODEL_PY != IDENTITY_MODEL_PY


@dataclass
class Tensor:
    """One input or output: name, protocol datatype, dims, extra config text."""

    name: str
    datatype: str
    dims: list
    extra: str = ""

    def pbtxt(self):
        dims = ", ".join(str(d) for d in self.dims)
        extra = f", {self.extra}" if self.extra else ""
        return (
            f'{{ name: "{self.name}", data_type: {DATATYPES[self.datatype]}, '
            f"dims: [ {dims} ]{extra} }}"
        )


@dataclass
class ModelSpec:
    """A test model: its tensors, batching, versions and any extra config."""

    name: str
    inputs: list
    outputs: list = None
    max_batch_size: int = 0
    extra_config: str = ""
    versions: tuple = (1,)
    files: dict = field(default_factory=dict)  # model-folder file -> text
    execute_delay_ms: int = 0
    python_only: bool = False  # a Python model on every target
    backend: str = None  # a fixed backend on every target (no model file)
    decoupled: bool = False  # model_transaction_policy { decoupled: true }

    def __post_init__(self):
        if self.outputs is None:
            self.outputs = [
                Tensor(t.name.replace("INPUT", "OUTPUT"), t.datatype, t.dims)
                for t in self.inputs
            ]


def identity(name, datatype, dims=(-1,), max_batch_size=8, count=1, **kw):
    """An identity model with `count` INPUTn/OUTPUTn pairs of one datatype."""
    inputs = [Tensor(f"INPUT{i}", datatype, list(dims)) for i in range(count)]
    return ModelSpec(name, inputs, max_batch_size=max_batch_size, **kw)


def config_text(spec, backend):
    """The config.pbtxt of `spec` for `backend` ("identity" or "python")."""
    lines = [
        f'name: "{spec.name}"',
        f'backend: "{backend}"',
        f"max_batch_size: {spec.max_batch_size}",
        "input [\n  " + ",\n  ".join(t.pbtxt() for t in spec.inputs) + "\n]",
        "output [\n  " + ",\n  ".join(t.pbtxt() for t in spec.outputs) + "\n]",
        "instance_group [ { count: 1, kind: KIND_CPU } ]",
    ]
    if spec.execute_delay_ms:
        lines.append(
            'parameters [ { key: "execute_delay_ms", value: { string_value: '
            f'"{spec.execute_delay_ms}" }} }} ]'
        )
    if spec.decoupled:
        lines.append("model_transaction_policy { decoupled: true }")
    if spec.extra_config:
        lines.append(spec.extra_config)
    return "\n".join(lines) + "\n"


def write_model(repo, spec, target):
    """Writes `spec` under `repo` in the form `target` serves; returns its folder."""
    python = spec.backend is None and (target == "triton" or spec.python_only)
    folder = Path(repo) / spec.name
    folder.mkdir(parents=True, exist_ok=True)
    backend = spec.backend or ("python" if python else "identity")
    (folder / "config.pbtxt").write_text(config_text(spec, backend))
    for version in spec.versions:
        vdir = folder / str(version)
        vdir.mkdir(exist_ok=True)
        if python:
            model_py = DECOUPLED_MODEL_PY if spec.decoupled else IDENTITY_MODEL_PY
            (vdir / "model.py").write_text(model_py)
    for name, text in spec.files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def write_repository(repo, specs, target):
    """Writes every spec into the folder `repo`, created if needed."""
    Path(repo).mkdir(parents=True, exist_ok=True)
    for spec in specs:
        write_model(repo, spec, target)
    return Path(repo)
