"""After Triton's qa/python_models/response_sender: every way of answering a request,
chosen by the request's PLAN (INT32 [5]):

  PLAN[0]  responses sent through the response sender before `execute` returns
           (INDEX 1000, 1001, ...)
  PLAN[1]  1: then the COMPLETE_FINAL flag, before returning
  PLAN[2]  1: `execute` returns a response for the request (INDEX 0)
  PLAN[3]  responses sent from a thread after `execute` returned (INDEX 2000, ...)
  PLAN[4]  1: then the COMPLETE_FINAL flag, from that thread

The same file serves decoupled and default-mode models; the rules the sender and the
backend apply decide what the client gets."""

import threading
import time

import numpy as np
import triton_python_backend_utils as pb_utils

FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL


def index(value):
    tensor = pb_utils.Tensor("INDEX", np.array([[value]], dtype=np.uint16))
    return pb_utils.InferenceResponse(output_tensors=[tensor])


def send(plans, offset):
    for sender, count, final in plans:
        for i in range(count):
            sender.send(index(offset + i))
        if final:
            sender.send(flags=FINAL)


def send_later(plans, offset):
    def run():
        time.sleep(0.5)  # after the requests were released
        send(plans, offset)

    threading.Thread(target=run, daemon=True).start()


class TritonPythonModel:
    def execute(self, requests):
        before, after, returned = [], [], []
        for request in requests:
            plan = [int(x) for x in
                    pb_utils.get_input_tensor_by_name(request, "PLAN").as_numpy().reshape(-1)]
            sender = request.get_response_sender() if plan[0] or plan[1] or plan[3] or plan[4] \
                else None
            before.append((sender, plan[0], plan[1]))
            after.append((sender, plan[3], plan[4]))
            returned.append(index(0) if plan[2] else None)
        send(before, 1000)
        send_later(after, 2000)
        if all(r is None for r in returned):
            return None
        return returned
