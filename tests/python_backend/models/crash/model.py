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
