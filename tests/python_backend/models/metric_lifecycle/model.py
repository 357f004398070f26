"""A counter made in initialize (1) and incremented by each request (10). A model whose
name ends in "_deleting" deletes its metric and family in finalize; others leave them."""

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.name = args["model_name"]
        self.family = pb_utils.MetricFamily(
            self.name + "_requests", "Requests of " + self.name,
            pb_utils.MetricFamily.COUNTER)
        self.metric = self.family.Metric(labels={"model": self.name})
        self.metric.increment(1)

    def execute(self, requests):
        responses = []
        for _ in requests:
            self.metric.increment(10)
            value = np.array([self.metric.value()], dtype=np.float64)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("VALUE", value)]))
        return responses

    def finalize(self):
        if self.name.endswith("_deleting"):
            del self.metric
            del self.family
