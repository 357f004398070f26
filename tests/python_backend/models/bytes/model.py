import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            data = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            types = sorted({type(x).__name__ for x in data.ravel()})
            upper = np.array(
                [x.decode("utf-8", "replace").upper() for x in data.ravel()], dtype=object
            ).reshape(data.shape)
            lengths = np.array([len(x) for x in data.ravel()], dtype=np.int32).reshape(data.shape)
            responses.append(pb_utils.InferenceResponse([
                pb_utils.Tensor("ECHO", data),
                pb_utils.Tensor("UPPER", upper),
                pb_utils.Tensor("LENGTH", lengths),
                pb_utils.Tensor("TYPES", np.array([",".join(types) + "|" + str(data.dtype)], dtype=object)),
            ]))
        return responses
