"""The backends written in C for the backend C API tests (tests/backends/c_api/),
compiled at test time with the system `cc` into `libtriton_<name>.so`, and the
models that use them.

The libraries link against nothing: the TRITONBACKEND_*/TRITONSERVER_*
functions they call are resolved from the server process that loads them
(oxiserve, or tritonserver and its libtritonserver)."""

import atexit
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from models import ModelSpec, Tensor, write_model
from servers import TARGET

SOURCES = Path(__file__).resolve().parents[1] / "backends" / "c_api"
CFLAGS = ("-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-pthread")

_cache = {}  # (source, link flags) -> the library compiled once per session


def compile_library(source, out, link=()):
    """Compiles c_api/<source>.c into the shared library `out` (linked with
    `link`, e.g. ["-L", dir, "-ltritonserver"]); returns `out`."""
    cmd = ["cc", *CFLAGS, "-o", str(out), str(SOURCES / f"{source}.c"), *map(str, link)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed:\n{done.stderr}", pytrace=False)
    return Path(out)


def _compiled(source):
    if source not in _cache:
        folder = Path(tempfile.mkdtemp(prefix="oxi-c-backends-"))
        atexit.register(shutil.rmtree, folder, True)
        _cache[source] = compile_library(source, folder / f"libtriton_{source}.so")
    return _cache[source]


def install(source, folder, backend=None):
    """Puts `libtriton_<backend>.so` (by default the source's name), built
    from c_api/<source>.c, into `folder`, created if needed; returns its path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(_compiled(source), folder / f"libtriton_{backend or source}.so"))


def backend_directory(root, *sources):
    """A --backend-directory at `root` with each source's library in its
    own <name>/ folder, as Triton lays them out; returns the flag."""
    for source in sources:
        install(source, Path(root) / source)
    return f"--backend-directory={root}"


def parameters(**values):
    """The config text of string parameters `values`."""
    entries = ", ".join(
        f'{{ key: "{k}", value: {{ string_value: "{v}" }} }}' for k, v in values.items())
    return f"parameters [ {entries} ]"


def addsub(name="addsub", dims=(4,), **kw):
    """A model of the batching backend: OUTPUT0 = INPUT0 + INPUT1,
    OUTPUT1 = INPUT0 - INPUT1, FP32, batching up to 8 rows."""
    inputs = [Tensor(f"INPUT{i}", "FP32", list(dims)) for i in range(2)]
    return ModelSpec(name, inputs, max_batch_size=8, backend="batching", **kw)


def repeat(name="repeat", **kw):
    """A model of the decoupled backend: IN = [n] streams OUT = [0] .. [n-1]."""
    return ModelSpec(name, [Tensor("IN", "INT32", [1])], [Tensor("OUT", "INT32", [1])],
                     backend="decoupled", decoupled=True, **kw)


# The stateful backend's outputs (see c_api/stateful.c).
STATEFUL_OUTPUTS = [
    Tensor("MODEL_INDEX", "INT64", [1]),
    Tensor("COUNT", "INT64", [1]),
    Tensor("MODEL", "BYTES", [1]),
    Tensor("GREETING", "BYTES", [1]),
    Tensor("CMDLINE", "BYTES", [1]),
    Tensor("LOCATION", "BYTES", [1]),
    Tensor("REQUEST_ID", "BYTES", [1]),
    Tensor("CORRELATION_ID", "UINT64", [1]),
    Tensor("PARAMETERS", "BYTES", [-1]),
    Tensor("GPU_REFUSED", "BOOL", [1]),
]


def stateful(name, greeting="hello", backend="stateful"):
    """A model of the stateful backend, whose config parameter is `greeting`."""
    return ModelSpec(name, [Tensor("X", "INT32", [1])], list(STATEFUL_OUTPUTS),
                     backend=backend, extra_config=parameters(greeting=greeting))


def erring(name, **params):
    """A model of the erring backend (Y = 2 X, INT32, batching up to 8 rows)
    with config parameters `params` (fail_at=..., execute_delay_ms=...)."""
    return ModelSpec(name, [Tensor("X", "INT32", [1])], [Tensor("Y", "INT32", [1])],
                     max_batch_size=8, backend="erring",
                     extra_config=parameters(**params) if params else "")


def write(repo, spec):
    """Writes `spec` (whose backend is fixed) under `repo`; returns its folder."""
    return write_model(repo, spec, TARGET)
