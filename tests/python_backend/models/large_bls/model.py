import json

import numpy as np
import triton_python_backend_utils as pb_utils

CHUNK = 64 << 20


def pattern(nbytes):
    """nbytes of a repeating 0..250 pattern (a prime period, so a shifted or
    truncated copy does not match)."""
    return np.resize(np.arange(251, dtype=np.uint8), nbytes)


def same(a, b):
    """Whether two uint8 arrays are equal, compared a chunk at a time (no
    temporary as large as the arrays)."""
    if a.shape != b.shape:
        return False
    return all(np.array_equal(a[i:i + CHUNK], b[i:i + CHUNK]) for i in range(0, a.size, CHUNK))


class TritonPythonModel:
    """Sends NBYTES bytes to the `big_identity` model by BLS and checks that the
    same bytes come back; RESULT is a JSON report. An exception raised by
    exec() is reported as {"raised": text}."""

    def execute(self, requests):
        responses = []
        for request in requests:
            nbytes = int(pb_utils.get_input_tensor_by_name(request, "NBYTES").as_numpy()[0])
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor(
                "RESULT", np.array([json.dumps(self.run(nbytes))], dtype=object))]))
        return responses

    def run(self, nbytes):
        data = pattern(nbytes)
        call = pb_utils.InferenceRequest(
            model_name="big_identity",
            inputs=[pb_utils.Tensor("INPUT0", data)],
            requested_output_names=["OUTPUT0"],
        )
        try:
            response = call.exec()
        except pb_utils.TritonModelException as e:
            return {"raised": str(e)}
        if response.has_error():
            return {"error": response.error().message()}
        out = pb_utils.get_output_tensor_by_name(response, "OUTPUT0").as_numpy()
        return {"nbytes": int(out.nbytes), "same": bool(same(out, data))}
