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
            elif mode == "final_then_return":
                sender.send(out("sent"), flags=FINAL)
                return [out("returned")]
            elif mode == "send_then_return":
                sender.send(out("sent"))
                return [out("returned")]
            elif mode == "send_then_raise":
                sender.send(out("sent"))
                raise pb_utils.TritonModelException("raised after sending")
            elif mode == "final_then_return_none_list":
                sender.send(out("sent"), flags=FINAL)
                return [None]
        return None
