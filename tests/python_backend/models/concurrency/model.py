"""Records how many executions run at once among the instances (and models)
that share a folder, the config parameter "dir": execute() creates a file in
`<dir>/active` and holds until it meets another execution (it sees the
other's file, or the other left word in `<dir>/met` that it saw this one) or
"wait_for_peer_ms" passed; it then appends "<tag> <most executions seen at
once>" to `<dir>/log`, removes its file and echoes INPUT0 as OUTPUT0. Where
executions may overlap they meet; where they may not, each sees only itself.
"""

import json
import os
import time
import uuid
from pathlib import Path

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        parameters = config["parameters"]
        self.dir = Path(parameters["dir"]["string_value"])
        self.tag = parameters["tag"]["string_value"]
        self.wait_s = int(parameters["wait_for_peer_ms"]["string_value"]) / 1000
        for folder in ("active", "met"):
            (self.dir / folder).mkdir(parents=True, exist_ok=True)

    def _look(self, mine):
        """How many executions are seen at once now (a word left by one that
        saw this one counts as two)."""
        active = os.listdir(self.dir / "active")
        for other in active:
            if other != mine:
                (self.dir / "met" / other).touch()
        met = (self.dir / "met" / mine).exists()
        return max(len(active), 2 if met else 1)

    def execute(self, requests):
        mine = uuid.uuid4().hex
        (self.dir / "active" / mine).touch()
        seen = self._look(mine)
        deadline = time.monotonic() + self.wait_s
        while seen < 2 and time.monotonic() < deadline:
            time.sleep(0.005)
            seen = max(seen, self._look(mine))
        with open(self.dir / "log", "a") as log:
            log.write(f"{self.tag} {seen} {os.getpid()}\n")
        (self.dir / "active" / mine).unlink()
        return [
            pb_utils.InferenceResponse(
                [pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())]
            )
            for r in requests
        ]
