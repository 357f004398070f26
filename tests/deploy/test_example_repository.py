"""examples/model_repository served as it is (what scripts/serve-example.sh
serves): every model loads, the ONNX classifier answers as ONNX Runtime
does, with Triton's classification extension on top; and
examples/framework_repository, where its OpenVINO and TensorFlow copies
answer as OpenVINO and TensorFlow do."""

import numpy as np
import onnxruntime
import pytest
import tritonclient.http as httpclient

from servers import REPO_ROOT, TARGET, Server

EXAMPLES = REPO_ROOT / "examples/model_repository"
FRAMEWORKS = REPO_ROOT / "examples/framework_repository"
FEATURES = np.array([[0.1, -1.2, 3.0, 0.5], [2.0, 0.0, -0.5, 1.5]], dtype=np.float32)
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



@pytest.fixture(scope="module")
def frameworks():
    """examples/framework_repository: the classifier in OpenVINO's format
    and as a TensorFlow SavedModel."""
    with Server(FRAMEWORKS) as server:
        with httpclient.InferenceServerClient(server.url) as client:
            yield client


def classify(client, model):
    tensor = httpclient.InferInput("INPUT", list(FEATURES.shape), "FP32")
    tensor.set_data_from_numpy(FEATURES)
    return client.infer(model, [tensor]).as_numpy("PROBS")


def onnx_runtime_probs():
    session = onnxruntime.InferenceSession(str(EXAMPLES / "mlp_onnx/1/model.onnx"))
    return session.run(["PROBS"], {"INPUT": FEATURES})[0]


def test_every_framework_example_is_ready(frameworks):
    states = {m["name"]: m.get("state") for m in frameworks.get_model_repository_index()}
    assert states == {"mlp_openvino": "READY", "mlp_tensorflow": "READY"}


def test_mlp_openvino_matches_openvino_and_the_onnx_model(frameworks):
    import openvino

    compiled = openvino.Core().compile_model(str(FRAMEWORKS / "mlp_openvino/1/model.xml"), "CPU")
    expected = compiled(FEATURES)[compiled.output("PROBS")]
    served = classify(frameworks, "mlp_openvino")
    np.testing.assert_allclose(served, expected, rtol=1e-6)
    # OpenVINO computes in bfloat16 on CPUs that have it (this one does), so
    # the probabilities agree with ONNX Runtime's to about two digits only.
    onnx = onnx_runtime_probs()
    np.testing.assert_allclose(served, onnx, atol=0.02)
    assert (served.argmax(axis=1) == onnx.argmax(axis=1)).all()


def test_mlp_tensorflow_matches_tensorflow_and_the_onnx_model(frameworks):
    import tensorflow as tf

    saved = tf.saved_model.load(str(FRAMEWORKS / "mlp_tensorflow/1/model.savedmodel"))
    expected = saved.signatures["serving_default"](INPUT=tf.constant(FEATURES))["PROBS"].numpy()
    served = classify(frameworks, "mlp_tensorflow")
    np.testing.assert_allclose(served, expected, rtol=1e-6)
    np.testing.assert_allclose(served, onnx_runtime_probs(), rtol=1e-5, atol=1e-7)
