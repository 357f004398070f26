"""examples/model_repository served as it is (what scripts/serve-example.sh
serves): every model loads, and the ONNX classifier answers as ONNX Runtime
does, with Triton's classification extension on top."""

import numpy as np
import onnxruntime
import pytest
import tritonclient.http as httpclient

from servers import REPO_ROOT, TARGET, Server

EXAMPLES = REPO_ROOT / "examples/model_repository"
pytestmark = pytest.mark.skipif(TARGET == "triton", reason="real Triton here has no onnxruntime backend")


@pytest.fixture(scope="module")
def client():
    with Server(EXAMPLES) as server:
        with httpclient.InferenceServerClient(server.url) as client:
            yield client


def test_every_example_model_is_ready(client):
    index = client.get_model_repository_index()
    states = {m["name"]: m.get("state") for m in index}
    assert states == {name.name: "READY" for name in EXAMPLES.iterdir() if name.is_dir()}


def test_mlp_onnx_matches_onnx_runtime(client):
    features = np.array([[0.1, -1.2, 3.0, 0.5], [2.0, 0.0, -0.5, 1.5]], dtype=np.float32)
    session = onnxruntime.InferenceSession(str(EXAMPLES / "mlp_onnx/1/model.onnx"))
    (expected,) = session.run(["PROBS"], {"INPUT": features})
    tensor = httpclient.InferInput("INPUT", list(features.shape), "FP32")
    tensor.set_data_from_numpy(features)
    result = client.infer("mlp_onnx", [tensor])
    np.testing.assert_allclose(result.as_numpy("PROBS"), expected, rtol=1e-6)
    top = client.infer(
        "mlp_onnx", [tensor], outputs=[httpclient.InferRequestedOutput("PROBS", class_count=1)]
    ).as_numpy("PROBS")
    for row, probs in zip(top, expected):
        value, index = row[0].decode().split(":")[:2]
        assert int(index) == int(np.argmax(probs))
        assert float(value) == pytest.approx(float(probs.max()), rel=1e-6)
