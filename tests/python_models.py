"""Python-backend test models (our own code, after Triton's python_backend
examples) and a short-lived server on a repository of them.

A model is a `PyModel`: its `model.py` source and its config.pbtxt body (the
`name` and `backend` lines are added). `serve(dir, models, flags)` writes them
into a repository and starts a server on it (oxiserve or real Triton, see
servers.py); plain `models.ModelSpec`s may be mixed in (identity models).
"""

from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from models import ModelSpec, Tensor, write_model
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


# --- seed 000: the tutorial's template, with a BYTES echo as its body --------

SEED_MODEL_PY = '''\
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    """Your Python model must use the same class name. Every Python model
    that is created must have "TritonPythonModel" as the class name.
    """

    @staticmethod
    def auto_complete_config(auto_complete_model_config):
        """ [optional] """
        return auto_complete_model_config

    def initialize(self, args):
        """ [optional] called only once when the model is being loaded """
        print('Initialized...', flush=True)

    def execute(self, requests):
        """ define actions """
        responses = []
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "input_text").as_numpy()
            responses.append(
                pb_utils.InferenceResponse([pb_utils.Tensor("output__0", text)])
            )
        return responses

    def finalize(self):
        """ [optional] is called only once when the model is being unloaded """
        print('Cleaning up...', flush=True)
'''


def seed_model(name):
    return PyModel(
        name,
        SEED_MODEL_PY,
        config([("input_text", "BYTES", [1])], [("output__0", "BYTES", [1])], 4),
    )


# --- BYTES ------------------------------------------------------------------

BYTES_MODEL_PY = '''\
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            data = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            types = sorted({type(x).__name__ for x in data.ravel()})
            upper = np.array(
                [x.decode("utf-8", "replace").upper() for x in data.ravel()], dtype=object
            ).reshape(data.shape)
            lengths = np.array([len(x) for x in data.ravel()], dtype=np.int32).reshape(data.shape)
            responses.append(pb_utils.InferenceResponse([
                pb_utils.Tensor("ECHO", data),
                pb_utils.Tensor("UPPER", upper),
                pb_utils.Tensor("LENGTH", lengths),
                pb_utils.Tensor("TYPES", np.array([",".join(types) + "|" + str(data.dtype)], dtype=object)),
            ]))
        return responses
'''


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

ARGS_MODEL_PY = '''\
import json
import os
import sys

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.report = {
            "args": args,
            "arg_types": sorted({type(v).__name__ for v in args.values()}),
            "file": os.path.realpath(__file__),
            "sys_path": sys.path,
            "cwd": os.getcwd(),
            "executable": sys.executable,
            "pid": os.getpid(),
            "ppid": os.getppid(),
        }

    def execute(self, requests):
        out = np.array([json.dumps(self.report)], dtype=object)
        return [
            pb_utils.InferenceResponse([pb_utils.Tensor("ARGS", out)]) for _ in requests
        ]
'''


def args_model(name="args_model", count=1, extra=""):
    return PyModel(
        name,
        ARGS_MODEL_PY,
        config([("INPUT0", "INT32", [1])], [("ARGS", "BYTES", [1])], count=count, extra=extra),
    )


# --- errors -------------------------------------------------------------------

FAULTY_MODEL_PY = '''\
import numpy as np
import triton_python_backend_utils as pb_utils


def ok():
    return pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", np.array([7], dtype=np.int32))])


class TritonPythonModel:
    def execute(self, requests):
        mode = pb_utils.get_input_tensor_by_name(requests[0], "MODE").as_numpy()[0].decode()
        if mode == "ok":
            return [ok() for _ in requests]
        if mode.startswith("code:"):
            name = mode[len("code:"):]
            code = getattr(pb_utils.TritonError, name)
            error = pb_utils.TritonError(f"refused with {name}", code)
            return [pb_utils.InferenceResponse(error=error) for _ in requests]
        if mode == "default_code":
            error = pb_utils.TritonError("refused with the default code")
            return [pb_utils.InferenceResponse(error=error) for _ in requests]
        if mode == "codes":
            codes = {n: int(getattr(pb_utils.TritonError, n)) for n in (
                "UNKNOWN", "INTERNAL", "NOT_FOUND", "INVALID_ARG", "UNAVAILABLE",
                "UNSUPPORTED", "ALREADY_EXISTS", "CANCELLED")}
            e = pb_utils.TritonError("m")
            codes["default"] = int(e.code())
            codes["message"] = e.message()
            import json
            info = np.array([json.dumps(codes)], dtype=object)
            return [pb_utils.InferenceResponse([pb_utils.Tensor("INFO", info)])
                    for _ in requests]
        if mode == "raise":
            raise pb_utils.TritonModelException("the model raised this")
        if mode == "raise_value":
            raise ValueError("bad value 42")
        if mode == "none":
            return None
        if mode == "wrong_count":
            return [ok() for _ in requests] + [ok()]
        if mode == "empty_list":
            return []
        if mode == "wrong_type":
            return ["not a response" for _ in requests]
        raise KeyError(mode)
'''


def faulty_model(name="faulty"):
    return PyModel(
        name,
        FAULTY_MODEL_PY,
        config([("MODE", "BYTES", [1])], [("OUTPUT0", "INT32", [1]), ("INFO", "BYTES", [1])]),
    )


INIT_FAILS_PY = '''\
class TritonPythonModel:
    def initialize(self, args):
        raise ValueError("initialize refused: no weights here")

    def execute(self, requests):
        return []
'''

NO_EXECUTE_PY = '''\
class TritonPythonModel:
    def initialize(self, args):
        pass
'''

NO_CLASS_PY = '''\
class SomethingElse:
    pass
'''

SYNTAX_ERROR_PY = '''\
def broken(:
    pass
'''


def plain_model(name, source, decoupled=False):
    """A model of INT32 INPUT0 -> OUTPUT0 with the given source."""
    extra = "model_transaction_policy { decoupled: true }\n" if decoupled else ""
    return PyModel(
        name, source,
        config([("INPUT0", "INT32", [1])], [("OUTPUT0", "INT32", [1])], extra=extra),
    )


DECOUPLED_RETURNS_LIST_PY = '''\
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", np.array([1], dtype=np.int32))])
            for _ in requests
        ]
'''

DECOUPLED_RAISES_PY = '''\
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            request.get_response_sender().send(pb_utils.InferenceResponse(
                [pb_utils.Tensor("OUTPUT0", np.array([1], dtype=np.int32))]))
        raise pb_utils.TritonModelException("decoupled execute raised after one response")
'''

# --- decoupled: the repeat model ---------------------------------------------
# IN (INT32 [-1]) -> one response per element (OUT = element, IDX = index),
# then a flags-only FINAL. Request parameters: mode "inline" (sends inside
# execute) or "thread" (a thread sends after execute returned; then
# AFTER_RETURN is 1), delay_ms between responses, error_at (that index gets an
# error response instead), marker (a file written when the model sees the
# request cancelled: "cancelled after N responses").

REPEAT_MODEL_PY = '''\
import json
import threading
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.threads = []

    def execute(self, requests):
        returned = threading.Event()
        for request in requests:
            params = json.loads(request.parameters() or "{}")
            values = pb_utils.get_input_tensor_by_name(request, "IN").as_numpy()
            sender = request.get_response_sender()
            if params.get("mode", "inline") == "thread":
                thread = threading.Thread(
                    target=self.send_all, args=(sender, values, params, returned)
                )
                thread.start()
                self.threads.append(thread)
            else:
                self.send_all(sender, values, params, None)
        returned.set()
        return None

    def send_all(self, sender, values, params, returned):
        after_return = 0
        if returned is not None:
            returned.wait()
            time.sleep(0.05)
            after_return = 1
        delay = params.get("delay_ms", 0) / 1000.0
        error_at = params.get("error_at", -1)
        sent = 0
        for i, value in enumerate(values):
            if sender.is_cancelled():
                marker = params.get("marker")
                if marker:
                    with open(marker, "w") as f:
                        f.write(f"cancelled after {sent} responses")
                break
            if i == error_at:
                sender.send(pb_utils.InferenceResponse(
                    error=pb_utils.TritonError(f"no response for index {i}")))
            else:
                sender.send(pb_utils.InferenceResponse([
                    pb_utils.Tensor("OUT", np.array([value], dtype=np.int32)),
                    pb_utils.Tensor("IDX", np.array([i], dtype=np.uint32)),
                    pb_utils.Tensor("AFTER_RETURN", np.array([after_return], dtype=np.int32)),
                ]))
            sent += 1
            if delay:
                time.sleep(delay)
        sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)

    def finalize(self):
        for thread in self.threads:
            thread.join()
'''


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

SENDER_MODEL_PY = '''\
import json

import numpy as np
import triton_python_backend_utils as pb_utils

FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL


def out(value):
    return pb_utils.InferenceResponse([pb_utils.Tensor(
        "OUTPUT0", np.array([value], dtype=object))])


def attempt(errors, call):
    try:
        call()
        errors.append(None)
    except Exception as e:
        errors.append(f"{type(e).__name__}: {e}")


class TritonPythonModel:
    def initialize(self, args):
        self.later = []

    def execute(self, requests):
        for request in requests:
            mode = pb_utils.get_input_tensor_by_name(request, "MODE").as_numpy()[0].decode()
            sender = request.get_response_sender()
            if mode == "one_final":
                sender.send(out("one"), flags=FINAL)
            elif mode == "one_then_final":
                sender.send(out("one"))
                sender.send(flags=FINAL)
            elif mode == "probe":
                before = []
                attempt(before, lambda: sender.send(out("x"), flags=2))
                attempt(before, lambda: sender.send(None, flags=0))
                attempt(before, lambda: sender.send(flags=FINAL))
                sender.send(out(json.dumps(before)))
                after = []
                attempt(after, lambda: sender.send(out("second")))
                attempt(after, lambda: sender.send(flags=FINAL))
                attempt(after, lambda: sender.send(flags=FINAL))
                attempt(after, lambda: sender.send(out("third"), flags=FINAL))
                self.later = after
            elif mode == "report":
                sender.send(out(json.dumps(self.later)), flags=FINAL)
            elif mode == "two_sends":
                sender.send(out("first"))
                sender.send(out("second"), flags=FINAL)
        return None
'''


def sender_model(name="sender_model"):
    return PyModel(
        name,
        SENDER_MODEL_PY,
        config([("MODE", "BYTES", [1])], [("OUTPUT0", "BYTES", [1])]),
    )


# --- BLS ------------------------------------------------------------------------

BLS_MODEL_PY = '''\
import asyncio
import json

import numpy as np
import triton_python_backend_utils as pb_utils


def add_sub_request(a, b):
    return pb_utils.InferenceRequest(
        model_name="add_sub",
        inputs=[
            pb_utils.Tensor("INPUT0", np.array([a], dtype=np.float32)),
            pb_utils.Tensor("INPUT1", np.array([b], dtype=np.float32)),
        ],
        requested_output_names=["OUTPUT0", "OUTPUT1"],
    )


def outputs(response):
    if response.has_error():
        e = response.error()
        return {"error": e.message(), "code": int(e.code())}
    return {t.name(): t.as_numpy().tolist() for t in response.output_tensors()}


def repeat_request(values, **params):
    return pb_utils.InferenceRequest(
        model_name="repeat",
        inputs=[pb_utils.Tensor("IN", np.array(values, dtype=np.int32))],
        requested_output_names=["OUT", "IDX"],
        parameters=params,
    )


class TritonPythonModel:
    def initialize(self, args):
        try:
            add_sub_request([1, 2, 3, 4], [1, 1, 1, 1]).exec()
            self.init_bls = "no error"
        except Exception as e:
            self.init_bls = f"{type(e).__name__}: {e}"

    async def execute(self, requests):
        responses = []
        for request in requests:
            mode = pb_utils.get_input_tensor_by_name(request, "MODE").as_numpy()[0].decode()
            result = await self.run(mode)
            out = np.array([json.dumps(result)], dtype=object)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("RESULT", out)]))
        return responses

    async def run(self, mode):
        if mode == "add_sub":
            return outputs(add_sub_request([1, 2, 3, 4], [10, 20, 30, 40]).exec())
        if mode == "identity":
            request = pb_utils.InferenceRequest(
                model_name="identity",
                inputs=[pb_utils.Tensor("INPUT0", np.array([[5, 6, 7]], dtype=np.int32))],
                requested_output_names=["OUTPUT0"],
            )
            return outputs(request.exec())
        if mode == "missing":
            request = pb_utils.InferenceRequest(
                model_name="no_such_model",
                inputs=[pb_utils.Tensor("INPUT0", np.array([1], dtype=np.int32))],
                requested_output_names=["OUTPUT0"],
            )
            return outputs(request.exec())
        if mode == "decoupled":
            return [outputs(r) for r in repeat_request([4, 5, 6]).exec(decoupled=True)]
        if mode == "decoupled_without_flag":
            try:
                return outputs(repeat_request([4, 5, 6]).exec())
            except Exception as e:
                return {"raised": f"{type(e).__name__}: {e}"}
        if mode == "gather":
            pending = [add_sub_request([i] * 4, [1] * 4).async_exec() for i in range(4)]
            return [outputs(r) for r in await asyncio.gather(*pending)]
        if mode == "timeout":
            busy = pb_utils.InferenceRequest(
                model_name="slow",
                inputs=[pb_utils.Tensor("INPUT0", np.array([[1]], dtype=np.int32))],
                requested_output_names=["OUTPUT0"],
            ).async_exec()
            await asyncio.sleep(0.3)
            late = pb_utils.InferenceRequest(
                model_name="slow",
                inputs=[pb_utils.Tensor("INPUT0", np.array([[2]], dtype=np.int32))],
                requested_output_names=["OUTPUT0"],
                timeout=100000,
            )
            first = outputs(late.exec())
            return {"late": first, "busy": outputs(await busy)}
        if mode == "cancel":
            iterator = repeat_request(list(range(50)), delay_ms=100).exec(decoupled=True)
            got = [outputs(next(iterator))]
            iterator.cancel()
            rest = [outputs(r) for r in iterator]
            return {"first": got, "rest_count": len(rest),
                    "rest_errors": [r for r in rest if "error" in r]}
        if mode == "init_bls":
            return {"init_bls": self.init_bls}
        raise KeyError(mode)
'''


def bls_model(name="bls"):
    return PyModel(
        name,
        BLS_MODEL_PY,
        config([("MODE", "BYTES", [1])], [("RESULT", "BYTES", [1])]),
    )


# --- async execute ---------------------------------------------------------------

ASYNC_MODEL_PY = '''\
import asyncio
import time

import numpy as np
import triton_python_backend_utils as pb_utils

DECOUPLED = __DECOUPLED__
SLEEP_S = __SLEEP__


class TritonPythonModel:
    async def execute(self, requests):
        responses = []
        for request in requests:
            start = time.time()
            await asyncio.sleep(SLEEP_S)
            end = time.time()
            response = pb_utils.InferenceResponse(
                [pb_utils.Tensor("TIMES", np.array([start, end], dtype=np.float64))]
            )
            if DECOUPLED:
                request.get_response_sender().send(
                    response, flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
                )
            else:
                responses.append(response)
        return None if DECOUPLED else responses
'''


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


# --- auto_complete_config ---------------------------------------------------------

AUTO_COMPLETE_PY = '''\
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    @staticmethod
    def auto_complete_config(auto_complete_model_config):
        cfg = auto_complete_model_config
__BODY__

    def execute(self, requests):
        responses = []
        for request in requests:
            data = pb_utils.get_input_tensor_by_name(request, "IN").as_numpy()
            response = pb_utils.InferenceResponse([pb_utils.Tensor("OUT", data * 2)])
            if pb_utils.using_decoupled_model_transaction_policy(self.config):
                sender = request.get_response_sender()
                sender.send(response, flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
            else:
                responses.append(response)
        return responses or None

    def initialize(self, args):
        import json
        self.config = json.loads(args["model_config"])
'''

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
    return PyModel(name, AUTO_COMPLETE_PY.replace("__BODY__", body), config_text)


# --- lifecycle ----------------------------------------------------------------------

LIFE_MODEL_PY = '''\
import os
from pathlib import Path

import numpy as np
import triton_python_backend_utils as pb_utils

VERSION = "__VERSION__"
FOLDER = Path(__file__).resolve().parent.parent


class TritonPythonModel:
    def initialize(self, args):
        pb_utils.Logger.log_info("life-log info from initialize")
        pb_utils.Logger.log_warn("life-log warning from initialize")
        pb_utils.Logger.log_error("life-log error from initialize")
        pb_utils.Logger.log_verbose("life-log verbose from initialize")
        pb_utils.Logger.log("life-log log() at VERBOSE", pb_utils.Logger.VERBOSE)
        pb_utils.Logger.log("life-log log() default level")

    def execute(self, requests):
        pb_utils.Logger.log_info("life-log info from execute")
        out = np.array([VERSION], dtype=object)
        return [pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", out)]) for _ in requests]

    def finalize(self):
        with open(FOLDER / "finalized", "a") as f:
            f.write(f"finalized {VERSION} {os.getpid()}\\n")
'''


def life_model(name, version="v1"):
    return PyModel(
        name,
        LIFE_MODEL_PY.replace("__VERSION__", version),
        config([("INPUT0", "INT32", [1])], [("OUTPUT0", "BYTES", [1])]),
    )


# --- crashes ------------------------------------------------------------------------

CRASH_MODEL_PY = '''\
import ctypes
import json
import os
import signal

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        mode = pb_utils.get_input_tensor_by_name(requests[0], "MODE").as_numpy()[0].decode()
        if mode == "exit3":
            os._exit(3)
        if mode == "segv":
            ctypes.string_at(0)
        if mode == "kill9":
            os.kill(os.getpid(), signal.SIGKILL)
        report = json.dumps({"pid": os.getpid(), "ppid": os.getppid()})
        return [pb_utils.InferenceResponse([pb_utils.Tensor(
            "OUTPUT0", np.array([report], dtype=object))]) for _ in requests]
'''

CRASH_DECOUPLED_PY = '''\
import os
import threading
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            mode = pb_utils.get_input_tensor_by_name(request, "MODE").as_numpy()[0].decode()
            sender = request.get_response_sender()
            sender.send(pb_utils.InferenceResponse([pb_utils.Tensor(
                "OUTPUT0", np.array([str(os.getpid())], dtype=object))]))
            if mode == "exit_later":
                threading.Thread(target=lambda: (time.sleep(0.3), os._exit(3))).start()
                return None
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
'''


def crash_model(name="crash", decoupled=False):
    extra = "model_transaction_policy { decoupled: true }\n" if decoupled else ""
    return PyModel(
        name,
        CRASH_DECOUPLED_PY if decoupled else CRASH_MODEL_PY,
        config([("MODE", "BYTES", [1])], [("OUTPUT0", "BYTES", [1])], extra=extra),
    )
