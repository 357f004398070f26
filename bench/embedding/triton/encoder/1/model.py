"""all-MiniLM-L6-v2 (ONNX, mean pooling and L2 normalization inside) for Triton's Python backend
(bench/embedding.sh).

One onnxruntime InferenceSession on 1/model.onnx (CPU provider, all graph optimizations,
sequential execution), `intra_op_num_threads` from the parameter intra_op_thread_count, every
`session.*` parameter passed as a session config entry. With dynamic batching, the requests of
one execute can have different token lengths: their tensors are padded with 0 to the batch's
longest (the attention mask hides the padding) and run together in one session.run; the
embeddings are then split by request.
"""

import json
import os

import numpy as np
import onnxruntime as ort
import triton_python_backend_utils as pb_utils

NAMES = ("input_ids", "attention_mask", "token_type_ids")


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        params = {k: v["string_value"] for k, v in config.get("parameters", {}).items()}
        options = ort.SessionOptions()
        options.intra_op_num_threads = int(params.get("intra_op_thread_count", "0"))
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        for key, value in params.items():
            if key.startswith("session."):
                options.add_session_config_entry(key, value)
        path = os.path.join(args["model_repository"], args["model_version"], "model.onnx")
        self.session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])

    def execute(self, requests):
        tensors = [[pb_utils.get_input_tensor_by_name(r, n).as_numpy() for n in NAMES]
                   for r in requests]
        if len(tensors) == 1:
            feed = dict(zip(NAMES, tensors[0]))
        else:
            width = max(t[0].shape[1] for t in tensors)
            feed = {
                name: np.concatenate([
                    np.pad(t[k], ((0, 0), (0, width - t[k].shape[1]))) if t[k].shape[1] < width else t[k]
                    for t in tensors])
                for k, name in enumerate(NAMES)
            }
        embeddings = self.session.run(["embeddings"], feed)[0]
        responses, start = [], 0
        for t in tensors:
            rows = t[0].shape[0]
            responses.append(pb_utils.InferenceResponse(
                output_tensors=[pb_utils.Tensor("embeddings", embeddings[start:start + rows])]))
            start += rows
        return responses
