"""BLS: runs MODE through the model named by the "callee" parameter and answers with its
OUT (or raises its error); a counter counts the calls made, labelled with the callee's
outcome."""

import json

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.callee = config["parameters"]["callee"]["string_value"]
        self.family = pb_utils.MetricFamily(
            "test_bls_calls", "BLS calls made", pb_utils.MetricFamily.COUNTER)

    def execute(self, requests):
        responses = []
        for request in requests:
            mode = pb_utils.get_input_tensor_by_name(request, "MODE")
            call = pb_utils.InferenceRequest(
                model_name=self.callee, inputs=[mode], requested_output_names=["OUT"])
            response = call.exec()
            outcome = "error" if response.has_error() else "ok"
            self.family.Metric(labels={"callee": self.callee, "outcome": outcome}).increment(1)
            if response.has_error():
                raise pb_utils.TritonModelException(response.error().message())
            out = pb_utils.get_output_tensor_by_name(response, "OUT")
            responses.append(pb_utils.InferenceResponse([out]))
        return responses
