"""What the response cache tests share: the config line that turns the cache
on for a model, a gRPC request, and a model's statistics."""

import numpy as np
import tritonclient.grpc as grpcclient

CACHE = "response_cache { enable: true }\n"


def grpc_infer(server, model, values):
    """One INT32 [1, 4] request over gRPC; returns OUTPUT0 as a list."""
    client = grpcclient.InferenceServerClient(server.grpc_url)
    tensor = grpcclient.InferInput("INPUT0", [1, 4], "INT32")
    tensor.set_data_from_numpy(np.array([values], dtype=np.int32))
    result = client.infer(model, [tensor])
    client.close()
    return result.as_numpy("OUTPUT0").tolist()[0]


def stats(client, model):
    """The first version's statistics of `model`."""
    return client.get_inference_statistics(model)["model_stats"][0]
