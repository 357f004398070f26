"""After Triton's qa/python_models/identity_bf16: a BF16 tensor has no numpy form
(`as_numpy()` raises), DLPack carries it. OUTPUT0 is INPUT0 through `to_dlpack()` and
`Tensor.from_dlpack`, OUTPUT1 through the tensor's own `__dlpack__`; REPORT says what
each step gave (and, where PyTorch is installed, what torch sees)."""

import json

import numpy as np
import triton_python_backend_utils as pb_utils


def attempt(call):
    try:
        return "ok %s" % (call(),)
    except Exception as e:
        return "%s: %s" % (type(e).__name__, str(e).split("\n")[0])


def torch_view(capsule):
    try:
        import torch
    except ImportError:
        return None
    t = torch.utils.dlpack.from_dlpack(capsule)
    out = pb_utils.Tensor.from_dlpack("T", torch.utils.dlpack.to_dlpack(t * 2))
    return {"dtype": str(t.dtype), "values": t.float().tolist(),
            "doubled as_numpy": attempt(out.as_numpy)}


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            tensor = pb_utils.get_input_tensor_by_name(request, "INPUT0")
            out0 = pb_utils.Tensor.from_dlpack("OUTPUT0", tensor.to_dlpack())
            out1 = pb_utils.Tensor.from_dlpack("OUTPUT1", tensor)
            report = {
                "input shape": tensor.shape(),
                "input as_numpy": attempt(tensor.as_numpy),
                "output shape": out0.shape(),
                "output as_numpy": attempt(out0.as_numpy),
                "__dlpack__ as_numpy": attempt(out1.as_numpy),
                "__dlpack_device__": list(tensor.__dlpack_device__()),
                "torch": torch_view(tensor.to_dlpack()),
            }
            text = np.array([json.dumps(report).encode()], dtype=np.object_)
            responses.append(pb_utils.InferenceResponse(
                [out0, out1, pb_utils.Tensor("REPORT", text)]))
        return responses
