"""Decoupled: N (INT32 [1]) responses per request, sent from a thread after execute
returned; a counter counts every response sent, a histogram observes N."""

import threading

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        family = pb_utils.MetricFamily(
            "test_decoupled_responses", "Responses sent", pb_utils.MetricFamily.COUNTER)
        sizes = pb_utils.MetricFamily(
            "test_decoupled_sizes", "Responses per request", pb_utils.MetricFamily.HISTOGRAM)
        self.families = [family, sizes]
        self.sent = family.Metric(labels={"model": args["model_name"]})
        self.sizes = sizes.Metric(buckets=[1, 2, 4])

    def execute(self, requests):
        for request in requests:
            n = int(pb_utils.get_input_tensor_by_name(request, "N").as_numpy()[0])
            self.sizes.observe(n)
            threading.Thread(target=self.send, args=(request.get_response_sender(), n)).start()
        return None

    def send(self, sender, n):
        for i in range(n):
            self.sent.increment(1)
            out = pb_utils.Tensor("OUT", np.array([i], dtype=np.int32))
            sender.send(pb_utils.InferenceResponse([out]))
        sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
