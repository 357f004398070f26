"""After Triton's qa/python_models/wrong_return_type: the model reschedules every request
(TRITONSERVER_REQUEST_RELEASE_RESCHEDULE) and still returns a response for it, where
`execute` must return None for a rescheduled request: the batch fails."""

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            data = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            request.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", data)]))
        return responses
