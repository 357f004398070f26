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
