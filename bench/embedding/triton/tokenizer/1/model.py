"""all-MiniLM-L6-v2's tokenizer for Triton's Python backend (bench/embedding.sh).

`tokenizers.Tokenizer.from_file(tokenizer.json)` with truncation at `max_length` (256) and no
padding of its own; per request, the texts' rows are padded with 0 to the request's longest.
Outputs input_ids, attention_mask, token_type_ids as INT64 [rows, longest].
"""

import json
import os

import numpy as np
import triton_python_backend_utils as pb_utils
from tokenizers import Tokenizer


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        params = {k: v["string_value"] for k, v in config.get("parameters", {}).items()}
        path = os.path.join(args["model_repository"], args["model_version"], "tokenizer.json")
        self.tokenizer = Tokenizer.from_file(path)
        self.tokenizer.enable_truncation(max_length=int(params.get("max_length", "256")))
        self.tokenizer.no_padding()

    def execute(self, requests):
        responses = []
        for request in requests:
            texts = pb_utils.get_input_tensor_by_name(request, "input_text").as_numpy().reshape(-1)
            texts = [t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in texts]
            encodings = self.tokenizer.encode_batch(texts)
            width = max((len(e.ids) for e in encodings), default=0)
            ids = np.zeros((len(encodings), width), np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for i, e in enumerate(encodings):
                n = len(e.ids)
                ids[i, :n] = e.ids
                mask[i, :n] = e.attention_mask
                types[i, :n] = e.type_ids
            responses.append(pb_utils.InferenceResponse(output_tensors=[
                pb_utils.Tensor("input_ids", ids),
                pb_utils.Tensor("attention_mask", mask),
                pb_utils.Tensor("token_type_ids", types),
            ]))
        return responses
