"""One request to the benchmark's model through tritonclient (HTTP): the answer must equal
Python TensorFlow's (OUT/want.npy). Usage: check_answer.py PORT MODEL DATA_DIR."""

import sys
from pathlib import Path

import numpy as np
import tritonclient.http as httpclient


def main():
    port, model, data = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    x, want = np.load(data / "in.npy"), np.load(data / "want.npy")
    client = httpclient.InferenceServerClient(f"127.0.0.1:{port}")
    inp = httpclient.InferInput("x", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    got = client.infer(model, [inp]).as_numpy("y")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    print(f"answer ok (max |diff| {np.abs(got - want).max():.1e})")


if __name__ == "__main__":
    main()
