import numpy as np
import triton_python_backend_utils as pb_utils


def ok():
    return pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", np.array([7], dtype=np.int32))])


class TritonPythonModel:
    def execute(self, requests):
        mode = pb_utils.get_input_tensor_by_name(requests[0], "MODE").as_numpy()[0].decode()
        if mode == "ok":
            return [ok() for _ in requests]
        if mode.startswith("code:"):
            name = mode[len("code:"):]
            code = getattr(pb_utils.TritonError, name)
            error = pb_utils.TritonError(f"refused with {name}", code)
            return [pb_utils.InferenceResponse(error=error) for _ in requests]
        if mode == "default_code":
            error = pb_utils.TritonError("refused with the default code")
            return [pb_utils.InferenceResponse(error=error) for _ in requests]
        if mode == "codes":
            codes = {n: int(getattr(pb_utils.TritonError, n)) for n in (
                "UNKNOWN", "INTERNAL", "NOT_FOUND", "INVALID_ARG", "UNAVAILABLE",
                "UNSUPPORTED", "ALREADY_EXISTS", "CANCELLED")}
            e = pb_utils.TritonError("m")
            codes["default"] = int(e.code())
            codes["message"] = e.message()
            import json
            info = np.array([json.dumps(codes)], dtype=object)
            return [pb_utils.InferenceResponse([pb_utils.Tensor("INFO", info)])
                    for _ in requests]
        if mode == "raise":
            raise pb_utils.TritonModelException("the model raised this")
        if mode == "raise_value":
            raise ValueError("bad value 42")
        if mode == "none":
            return None
        if mode == "wrong_count":
            return [ok() for _ in requests] + [ok()]
        if mode == "empty_list":
            return []
        if mode == "wrong_type":
            return ["not a response" for _ in requests]
        raise KeyError(mode)
