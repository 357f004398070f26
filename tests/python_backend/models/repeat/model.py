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
