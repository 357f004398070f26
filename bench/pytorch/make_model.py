"""Writes the PyTorch throughput benchmark's model and request (bench/pytorch_throughput.sh).

OUT/model.pt      a traced MLP: X FP32 [N, 512] -> Linear 512x1024 + ReLU -> Linear 1024x1024 +
                  ReLU -> Linear 1024x512 -> Y [N, 512] (fixed seed; 4.2 MFLOP per row)
OUT/mlp.body      a KServe v2 request for one row with the binary tensor extension
OUT/mlp.hlen      its JSON header's length (Inference-Header-Content-Length)
OUT/in.npy        that row; OUT/want.npy: Python torch's output for it
Prints the torch version.
"""

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import torch

warnings.filterwarnings("ignore", category=DeprecationWarning)


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(
        torch.nn.Linear(512, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 512)).eval()
    module = torch.jit.trace(mlp, torch.zeros(2, 512))
    module.save(str(out / "model.pt"))
    x = np.random.default_rng(0).standard_normal((1, 512)).astype(np.float32)
    with torch.no_grad():
        want = module(torch.from_numpy(x)).numpy()
    np.save(out / "in.npy", x)
    np.save(out / "want.npy", want)
    header = json.dumps({
        "inputs": [{"name": "INPUT__0", "shape": [1, 512], "datatype": "FP32",
                    "parameters": {"binary_data_size": x.nbytes}}],
        "outputs": [{"name": "OUTPUT__0", "parameters": {"binary_data": True}}],
    }).encode()
    (out / "mlp.body").write_bytes(header + x.tobytes())
    (out / "mlp.hlen").write_text(str(len(header)))
    print(f"torch {torch.__version__}")


if __name__ == "__main__":
    main()
