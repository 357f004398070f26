"""One request of bench/onnx_throughput.sh, its answer checked against onnxruntime's.

    check_answer.py PORT MODEL DIR

POSTs DIR/MODEL.body (binary tensor extension, header length DIR/MODEL.hlen) to
/v2/models/MODEL/infer and checks that the binary output Y has the shape and values of
DIR/MODEL.want.npy (onnxruntime's output for the same row; np.allclose, rtol 1e-4,
atol 1e-5). Prints the largest absolute difference; exits non-zero on a wrong answer.
"""

import http.client
import json
import sys
from pathlib import Path

import numpy as np

port, model, d = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
body = (d / f"{model}.body").read_bytes()
hlen = (d / f"{model}.hlen").read_text().strip()
want = np.load(d / f"{model}.want.npy")
c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
c.request("POST", f"/v2/models/{model}/infer", body,
          {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": hlen})
r = c.getresponse()
data = r.read()
if r.status != 200:
    sys.exit(f"HTTP {r.status}: {data[:300]!r}")
n = r.getheader("Inference-Header-Content-Length")
if n is None:
    sys.exit(f"no Inference-Header-Content-Length in the answer: {data[:300]!r}")
header = json.loads(data[:int(n)])
(out,) = [o for o in header["outputs"] if o["name"] == "Y"]
size = out.get("parameters", {}).get("binary_data_size")
if out["datatype"] != "FP32" or size is None:
    sys.exit(f"Y is not binary FP32: {out}")
got = np.frombuffer(data[int(n):int(n) + size], "<f4").reshape(out["shape"])
if got.shape != want.shape:
    sys.exit(f"Y shape {list(got.shape)} != {list(want.shape)}")
diff = float(np.abs(got - want).max())
if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
    sys.exit(f"Y differs from onnxruntime's: max |diff| {diff:g}")
print(f"ok: Y {list(got.shape)} max |diff| vs onnxruntime {diff:.2g}")
