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
