"""A decoupled text model of the generate convention, for the
OpenAI-compatible API: it sends the words of `text_input` back one response
each (`text_output`), at most `max_tokens` of them. When it stops because of
`max_tokens`, its final response carries the parameter finish_reason
"length", which the API reports as OpenAI's finish_reason."""

import re

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            self.generate(request)
        return None

    def generate(self, request):
        sender = request.get_response_sender()
        prompt = pb_utils.get_input_tensor_by_name(request, "text_input").as_numpy()
        words = re.findall(r"\s*\S+", prompt.flatten()[0].decode("utf-8"))
        limit = pb_utils.get_input_tensor_by_name(request, "max_tokens")
        limit = len(words) if limit is None else max(int(limit.as_numpy().flatten()[0]), 0)
        for word in words[:limit]:
            if sender.is_cancelled():
                break
            text = np.array([word.encode("utf-8")], dtype=np.object_)
            sender.send(pb_utils.InferenceResponse([pb_utils.Tensor("text_output", text)]))
        final = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
        if limit < len(words):
            sender.send(_stopped_by_length(), flags=final)
        else:
            sender.send(flags=final)


def _stopped_by_length():
    """A response with no output whose parameter finish_reason is "length"
    (none on Python backends without response parameters, as Triton 2.51's)."""
    try:
        return pb_utils.InferenceResponse([], parameters={"finish_reason": "length"})
    except TypeError:
        return None
