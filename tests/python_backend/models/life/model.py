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
            f.write(f"finalized {VERSION} {os.getpid()}\n")
