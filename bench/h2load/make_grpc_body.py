"""Writes the gRPC request body h2load sends: one length-prefixed
`inference.ModelInferRequest` for model `identity`, INPUT0 FP32 [1,16] as
raw contents (what tritonclient.grpc sends), the same values as
bench/wrk/identity_fp32_1x16.json."""

import json
import struct
import sys

import numpy as np
from tritonclient.grpc import service_pb2

body = json.load(open("bench/wrk/identity_fp32_1x16.json"))
values = np.array(body["inputs"][0]["data"], dtype=np.float32)
request = service_pb2.ModelInferRequest(model_name="identity")
tensor = request.inputs.add()
tensor.name, tensor.datatype = "INPUT0", "FP32"
tensor.shape.extend([1, 16])
request.raw_input_contents.append(values.tobytes())
message = request.SerializeToString()
sys.stdout.buffer.write(struct.pack(">BI", 0, len(message)) + message)
