import json
import time

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.pairs = [
            (i["name"], o["name"]) for i, o in zip(config["input"], config["output"])
        ]
        delay = config.get("parameters", {}).get("execute_delay_ms", {})
        self.delay_s = int(delay.get("string_value", "0")) / 1000.0

    def execute(self, requests):
        if self.delay_s:
            time.sleep(self.delay_s)
        responses = []
        for request in requests:
            outputs = []
            for in_name, out_name in self.pairs:
                tensor = pb_utils.get_input_tensor_by_name(request, in_name)
                if tensor is None:
                    continue
                outputs.append(_copy(out_name, tensor))
            responses.append(pb_utils.InferenceResponse(output_tensors=outputs))
        return responses


def _copy(out_name, tensor):
    try:
        return pb_utils.Tensor(out_name, tensor.as_numpy())
    except Exception:
        # BF16 has no numpy type: hand the buffer over through DLPack.
        return pb_utils.Tensor.from_dlpack(out_name, tensor.to_dlpack())
