"""A stand-in for a text-generation model, for the generate extension and
the SageMaker / Vertex AI endpoints.

Inputs PROMPT (BYTES) and STREAM (BOOL), optional input_ids (INT32);
output TEXT (BYTES), the prompt again. Request parameters steer it:
`REPETITION` responses (default 1) when STREAM is true, each `DELAY`
seconds apart; `FAIL_LAST` makes the final response an error;
`OUTPUT_0_DIM` sends TEXT with no element. With STREAM false the model
sends one response (with the final flag). Decoupled or not, as its
configuration says.
"""

import json
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        policy = config.get("model_transaction_policy", {})
        self.decoupled = policy.get("decoupled", False)

    def execute(self, requests):
        if not self.decoupled:
            return [self.answer(request) for request in requests]
        for request in requests:
            self.send_all(request)
        return None

    def answer(self, request):
        params = json.loads(request.parameters() or "{}")
        if _stream(request):
            return pb_utils.InferenceResponse(
                error=pb_utils.TritonError("STREAM needs the decoupled model"))
        return pb_utils.InferenceResponse([_text(request, params)])

    def send_all(self, request):
        params = json.loads(request.parameters() or "{}")
        sender = request.get_response_sender()
        final = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
        response = pb_utils.InferenceResponse([_text(request, params)])
        if not _stream(request):
            sender.send(response, flags=final)
            return
        for _ in range(params.get("REPETITION", 1)):
            if params.get("DELAY"):
                time.sleep(params["DELAY"])
            if sender.is_cancelled():
                break
            sender.send(response)
        last = None
        if params.get("FAIL_LAST", False):
            last = pb_utils.InferenceResponse(
                error=pb_utils.TritonError("the last response failed"))
        sender.send(last, flags=final)


def _stream(request):
    return bool(pb_utils.get_input_tensor_by_name(request, "STREAM").as_numpy().flatten()[0])


def _text(request, params):
    prompt = pb_utils.get_input_tensor_by_name(request, "PROMPT").as_numpy()
    if params.get("OUTPUT_0_DIM", False):
        return pb_utils.Tensor("TEXT", np.array([], dtype=np.object_))
    return pb_utils.Tensor("TEXT", prompt)
