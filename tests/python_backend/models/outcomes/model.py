"""Requests that fail and requests answered with errors, for the statistics: MODE "ok",
"raise" (execute raises), "error" (an error response); a decoupled model also takes
"ok_then_error" (a response, then an error response) and "send_then_raise" (a response,
then execute raises)."""

import json

import numpy as np
import triton_python_backend_utils as pb_utils


def ok():
    return pb_utils.InferenceResponse([pb_utils.Tensor("OUT", np.array([1], dtype=np.int32))])


def error():
    return pb_utils.InferenceResponse(error=pb_utils.TritonError("an error response"))


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.decoupled = pb_utils.using_decoupled_model_transaction_policy(config)

    def execute(self, requests):
        modes = [pb_utils.get_input_tensor_by_name(r, "MODE").as_numpy().flatten()[0].decode()
                 for r in requests]
        if "raise" in modes:
            raise pb_utils.TritonModelException("execute raised")
        if not self.decoupled:
            return [error() if mode == "error" else ok() for mode in modes]
        final = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
        for request, mode in zip(requests, modes):
            sender = request.get_response_sender()
            if mode == "error":
                sender.send(error(), flags=final)
            elif mode == "ok_then_error":
                sender.send(ok())
                sender.send(error(), flags=final)
            elif mode == "send_then_raise":
                sender.send(ok())
            else:
                sender.send(ok(), flags=final)
        if "send_then_raise" in modes:
            raise pb_utils.TritonModelException("execute raised after sending")
        return None
