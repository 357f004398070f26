"""Python-backend test models (our own code, after Triton's python_backend
examples) and a short-lived server on a repository of them.

A model is a `PyModel`: its `model.py` source and its config.pbtxt body (the
`name` and `backend` lines are added). The sources are files,
python_backend/models/<name>/model.py; a few are templates whose
`__NAME__` placeholders the function that makes the model fills in. `serve(dir, models, flags)` writes them
into a repository and starts a server on it (oxiserve or real Triton, see
servers.py); plain `models.ModelSpec`s may be mixed in (identity models).
"""

from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import tritonclient.http as httpclient

from models import ModelSpec, Tensor, identity, model_source, write_model
from servers import REPO_ROOT, TARGET, Server

ADD_SUB_DIR = REPO_ROOT / "examples" / "model_repository" / "add_sub"


@dataclass
class PyModel:
    """A Python model: `source` is its model.py, `config` its config.pbtxt
    without the name/backend lines, `files` more files of the model folder."""

    name: str
    source: str
    config: str = ""
    versions: tuple = (1,)
    files: dict = field(default_factory=dict)
    backend_line: bool = True

    def write(self, repo):
        folder = Path(repo) / self.name
        folder.mkdir(parents=True, exist_ok=True)
        head = f'name: "{self.name}"\n'
        if self.backend_line:
            head += 'backend: "python"\n'
        (folder / "config.pbtxt").write_text(head + self.config)
        for version in self.versions:
            (folder / str(version)).mkdir(exist_ok=True)
            (folder / str(version) / "model.py").write_text(self.source)
        for name, text in self.files.items():
            (folder / name).write_text(text)
        return folder


def tensors(kind, *specs):
    """`input [ ... ]` / `output [ ... ]` from (name, datatype, dims[, extra])."""
    body = ",\n  ".join(Tensor(*s).pbtxt() for s in specs)
    return f"{kind} [\n  {body}\n]\n"


def config(inputs, outputs, max_batch_size=0, extra="", count=1):
    return (
        f"max_batch_size: {max_batch_size}\n"
        + tensors("input", *inputs)
        + tensors("output", *outputs)
        + f"instance_group [ {{ count: {count}, kind: KIND_CPU }} ]\n"
        + extra
    )


def write_repo(repo, models):
    repo = Path(repo)
    repo.mkdir(parents=True, exist_ok=True)
    for m in models:
        if isinstance(m, ModelSpec):
            write_model(repo, m, TARGET)
        else:
            m.write(repo)
    return repo


@contextmanager
def serve(repo, models, flags=()):
    """A server on a fresh repository of `models`, stopped on exit."""
    with Server(write_repo(repo, models), flags) as server:
        yield server


def add_sub(name="add_sub", count=1, dynamic_batching=True):
    """examples/model_repository/add_sub, renamed and re-instanced as asked."""
    text = (ADD_SUB_DIR / "config.pbtxt").read_text()
    text = "\n".join(
        line for line in text.splitlines() if not line.startswith(("name:", "backend:"))
    ) + "\n"
    text = text.replace("count: 1", f"count: {count}")
    if not dynamic_batching:
        text = text.replace("dynamic_batching { max_queue_delay_microseconds: 100 }", "")
    return PyModel(name, (ADD_SUB_DIR / "1" / "model.py").read_text(), text)


def infer_add_sub(server, name="add_sub"):
    """One request of an add_sub model over HTTP, its OUTPUT0 checked."""
    inputs = []
    for tensor_name, values in (("INPUT0", [1, 2, 3, 4]), ("INPUT1", [4, 3, 2, 1])):
        tensor = httpclient.InferInput(tensor_name, [1, 4], "FP32")
        tensor.set_data_from_numpy(np.array([values], np.float32))
        inputs.append(tensor)
    client = httpclient.InferenceServerClient(server.url)
    try:
        result = client.infer(name, inputs)
        assert result.as_numpy("OUTPUT0").tolist() == [[5, 5, 5, 5]]
    finally:
        client.close()


# --- seed 000: the tutorial's template, with a BYTES echo as its body --------

SEED_MODEL_PY = model_source("seed_000")


def seed_model(name):
    return PyModel(
        name,
        SEED_MODEL_PY,
        config([("input_text", "BYTES", [1])], [("output__0", "BYTES", [1])], 4),
    )


# --- BYTES ------------------------------------------------------------------

BYTES_MODEL_PY = model_source("bytes")


def bytes_model(name="bytes_model"):
    return PyModel(
        name,
        BYTES_MODEL_PY,
        config(
            [("INPUT0", "BYTES", [-1, -1])],
            [("ECHO", "BYTES", [-1, -1]), ("UPPER", "BYTES", [-1, -1]),
             ("LENGTH", "INT32", [-1, -1]), ("TYPES", "BYTES", [1])],
        ),
    )


# --- initialize args ----------------------------------------------------------

ARGS_MODEL_PY = model_source("args")


def args_model(name="args_model", count=1, extra=""):
    return PyModel(
        name,
        ARGS_MODEL_PY,
        config([("INPUT0", "INT32", [1])], [("ARGS", "BYTES", [1])], count=count, extra=extra),
    )


# --- errors -------------------------------------------------------------------

FAULTY_MODEL_PY = model_source("faulty")


def faulty_model(name="faulty"):
    return PyModel(
        name,
        FAULTY_MODEL_PY,
        config([("MODE", "BYTES", [1])], [("OUTPUT0", "INT32", [1]), ("INFO", "BYTES", [1])]),
    )


INIT_FAILS_PY = model_source("init_fails")

NO_EXECUTE_PY = model_source("no_execute")

NO_CLASS_PY = model_source("no_class")

SYNTAX_ERROR_PY = model_source("syntax_error")


def plain_model(name, source, decoupled=False):
    """A model of INT32 INPUT0 -> OUTPUT0 with the given source."""
    extra = "model_transaction_policy { decoupled: true }\n" if decoupled else ""
    return PyModel(
        name, source,
        config([("INPUT0", "INT32", [1])], [("OUTPUT0", "INT32", [1])], extra=extra),
    )


DECOUPLED_RETURNS_LIST_PY = model_source("decoupled_returns_list")

DECOUPLED_RAISES_PY = model_source("decoupled_raises")

# --- decoupled: the repeat model ---------------------------------------------
# IN (INT32 [-1]) -> one response per element (OUT = element, IDX = index),
# then a flags-only FINAL. Request parameters: mode "inline" (sends inside
# execute) or "thread" (a thread sends after execute returned; then
# AFTER_RETURN is 1), delay_ms between responses, error_at (that index gets an
# error response instead), marker (a file written when the model sees the
# request cancelled: "cancelled after N responses").

REPEAT_MODEL_PY = model_source("repeat")


def repeat_model(name="repeat"):
    return PyModel(
        name,
        REPEAT_MODEL_PY,
        config(
            [("IN", "INT32", [-1])],
            [("OUT", "INT32", [1]), ("IDX", "UINT32", [1]), ("AFTER_RETURN", "INT32", [1])],
            extra="model_transaction_policy { decoupled: true }\n",
        ),
    )


# --- response sender in a default-mode model ------------------------------------

SENDER_MODEL_PY = model_source("sender")


def sender_model(name="sender_model"):
    return PyModel(
        name,
        SENDER_MODEL_PY,
        config([("MODE", "BYTES", [1])], [("OUTPUT0", "BYTES", [1])]),
    )


# --- BLS ------------------------------------------------------------------------

BLS_MODEL_PY = model_source("bls")


def bls_model(name="bls"):
    return PyModel(
        name,
        BLS_MODEL_PY,
        config([("MODE", "BYTES", [1])], [("RESULT", "BYTES", [1])]),
    )


def large_bls_models():
    """`large_bls` (MODE none, NBYTES INT64 -> RESULT JSON) sends NBYTES bytes by BLS
    to `big_identity` (UINT8 [-1]) and checks what comes back."""
    return [
        PyModel("large_bls", model_source("large_bls"),
                config([("NBYTES", "INT64", [1])], [("RESULT", "BYTES", [1])])),
        identity("big_identity", "UINT8", max_batch_size=0),
    ]


# --- async execute ---------------------------------------------------------------

ASYNC_MODEL_PY = model_source("async")


def async_model(name, decoupled, sleep_s=0.5):
    """`async def execute` awaiting asyncio.sleep(sleep_s) per request; TIMES
    holds the request's [start, end] (time.time())."""
    extra = "model_transaction_policy { decoupled: true }\n" if decoupled else ""
    source = ASYNC_MODEL_PY.replace("__DECOUPLED__", str(decoupled))
    return PyModel(
        name,
        source.replace("__SLEEP__", repr(sleep_s)),
        config([("INPUT0", "INT32", [1])], [("TIMES", "FP64", [2])], extra=extra),
    )


def async_bls_models():
    """`async_bls_stream` (decoupled, async) awaits a decoupled BLS stream of
    `async_wait_all` per request; EXPECTED (INT32 [2]) = how many requests
    `async_wait_all` waits to see in flight at once, and for how many seconds at
    most; IN_FLIGHT = how many it saw."""
    decoupled = "model_transaction_policy { decoupled: true }\n"
    io = ([("EXPECTED", "INT32", [2])], [("IN_FLIGHT", "INT32", [1])])
    return [
        PyModel("async_bls_stream", model_source("async_bls_stream"),
                config(*io, extra=decoupled)),
        PyModel("async_wait_all", model_source("async_wait_all"), config(*io, extra=decoupled)),
    ]


# --- auto_complete_config ---------------------------------------------------------

# Its line `        __BODY__` is replaced by the body of auto_complete_config.
AUTO_COMPLETE_PY = model_source("auto_complete")

AUTO_COMPLETE_FULL = '''\
        cfg.set_max_batch_size(4)
        cfg.add_input({"name": "IN", "data_type": "TYPE_INT32", "dims": [2]})
        cfg.add_output({"name": "OUT", "data_type": "TYPE_INT32", "dims": [2]})
        cfg.set_dynamic_batching()
        return cfg'''

AUTO_COMPLETE_DECOUPLED = '''\
        cfg.add_input({"name": "IN", "data_type": "TYPE_INT32", "dims": [-1]})
        cfg.add_output({"name": "OUT", "data_type": "TYPE_INT32", "dims": [-1]})
        cfg.set_model_transaction_policy({"decoupled": True})
        return cfg'''


def auto_complete_model(name, body, config_text=""):
    return PyModel(name, AUTO_COMPLETE_PY.replace("        __BODY__", body), config_text)


# --- lifecycle ----------------------------------------------------------------------

LIFE_MODEL_PY = model_source("life")


def life_model(name, version="v1"):
    return PyModel(
        name,
        LIFE_MODEL_PY.replace("__VERSION__", version),
        config([("INPUT0", "INT32", [1])], [("OUTPUT0", "BYTES", [1])]),
    )


# --- crashes ------------------------------------------------------------------------

CRASH_MODEL_PY = model_source("crash")

CRASH_DECOUPLED_PY = model_source("crash_decoupled")


def crash_model(name="crash", decoupled=False):
    extra = "model_transaction_policy { decoupled: true }\n" if decoupled else ""
    return PyModel(
        name,
        CRASH_DECOUPLED_PY if decoupled else CRASH_MODEL_PY,
        config([("MODE", "BYTES", [1])], [("OUTPUT0", "BYTES", [1])], extra=extra),
    )
