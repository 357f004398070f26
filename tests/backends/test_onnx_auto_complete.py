"""Auto-complete of ONNX model configurations (on by default, as Triton
2.51's --strict-model-config=false): a model folder without config.pbtxt, a
config with inputs only, `--strict-model-config=true` refusing a folder
without config.pbtxt, and `oxiserve validate` over a repository."""

from dataclasses import replace

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from onnx_models import add_model, assert_same, identity_model, sample
from servers import TARGET, Server, oxiserve_validate

pytestmark = pytest.mark.skipif(
    TARGET == "triton", reason="the real Triton here has no onnxruntime backend")

AC_DYN = add_model("ac_dyn")  # A, B, C: ["N", 4]
AC_FIXED = add_model("ac_fixed", (2, 3))
AC_PARTIAL = add_model("ac_partial")
AC_1D = identity_model("ac_1d", "FP32", ["N"])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = tmp_path_factory.mktemp("onnx_ac_repo")
    AC_DYN.write(repo)
    AC_FIXED.write(repo)
    AC_PARTIAL.write(repo, AC_PARTIAL.config(16, outputs=False))
    AC_1D.write(repo)
    with Server(repo, ["--exit-on-error=false"]) as server:
        yield server


@pytest.fixture(scope="module")
def client(server):
    c = httpclient.InferenceServerClient(server.url)
    yield c
    c.close()


def _io(config, kind):
    """(name, data_type, dims) of the config's inputs or outputs, by name."""
    return sorted((t["name"], t["data_type"], t["dims"]) for t in config[kind])


def _infer(client, model, feeds):
    inputs = []
    for name, array in feeds.items():
        inp = httpclient.InferInput(name, list(array.shape), "FP32")
        inp.set_data_from_numpy(array)
        inputs.append(inp)
    return client.infer(model, inputs)


def test_all_ready(client):
    index = {m["name"]: m for m in client.get_model_repository_index()}
    for name in ("ac_dyn", "ac_fixed", "ac_partial", "ac_1d"):
        assert index.get(name, {}).get("state") == "READY", index.get(name)


def test_dynamic_first_dim(client):
    """All first dims dynamic: batching with max_batch_size 4 and a dynamic
    batcher, dims without the batch dimension, the ONNX platform."""
    config = client.get_model_config("ac_dyn")
    assert config["name"] == "ac_dyn"
    assert (config["platform"], config["backend"]) == ("onnxruntime_onnx", "onnxruntime")
    assert config["max_batch_size"] == 4, config
    assert "dynamic_batching" in config, config
    assert _io(config, "input") == [("A", "TYPE_FP32", [4]), ("B", "TYPE_FP32", [4])]
    assert _io(config, "output") == [("C", "TYPE_FP32", [4])]


def test_dynamic_first_dim_infers(client):
    feeds = {"A": sample("FP32", [3, 4], 1), "B": sample("FP32", [3, 4], 2)}
    result = _infer(client, "ac_dyn", feeds)
    assert_same(result.as_numpy("C"), AC_DYN.reference(feeds)["C"], "FP32")
    # max_batch_size 4 is enforced.
    big = {"A": sample("FP32", [5, 4], 3), "B": sample("FP32", [5, 4], 4)}
    with pytest.raises(InferenceServerException) as error:
        _infer(client, "ac_dyn", big)
    assert "batch" in error.value.message(), error.value.message()


def test_grpc_sees_the_completed_config(server):
    c = grpcclient.InferenceServerClient(server.grpc_url)
    try:
        config = c.get_model_config("ac_dyn", as_json=True)["config"]
    finally:
        c.close()
    assert int(config["max_batch_size"]) == 4
    assert sorted(t["name"] for t in config["input"]) == ["A", "B"]
    assert [[int(d) for d in t["dims"]] for t in config["output"]] == [[4]]


def test_fixed_first_dim(client):
    """A fixed first dim [2, 3]: no batching, the full dims, no dynamic batcher."""
    config = client.get_model_config("ac_fixed")
    assert config["max_batch_size"] == 0, config
    assert "dynamic_batching" not in config, config
    assert (config["platform"], config["backend"]) == ("onnxruntime_onnx", "onnxruntime")
    assert _io(config, "input") == [("A", "TYPE_FP32", [2, 3]), ("B", "TYPE_FP32", [2, 3])]
    assert _io(config, "output") == [("C", "TYPE_FP32", [2, 3])]
    feeds = {"A": sample("FP32", [2, 3], 5), "B": sample("FP32", [2, 3], 6)}
    result = _infer(client, "ac_fixed", feeds)
    assert_same(result.as_numpy("C"), AC_FIXED.reference(feeds)["C"], "FP32")


def test_outputs_filled_in(client):
    """config.pbtxt with max_batch_size 16 and inputs only: outputs come from
    the model; the configured max_batch_size stays."""
    config = client.get_model_config("ac_partial")
    assert config["max_batch_size"] == 16, config
    assert _io(config, "input") == [("A", "TYPE_FP32", [4]), ("B", "TYPE_FP32", [4])]
    assert _io(config, "output") == [("C", "TYPE_FP32", [4])]
    feeds = {"A": sample("FP32", [9, 4], 7), "B": sample("FP32", [9, 4], 8)}
    result = _infer(client, "ac_partial", feeds)
    assert_same(result.as_numpy("C"), AC_PARTIAL.reference(feeds)["C"], "FP32")


def test_one_dim_gets_reshape(client):
    """Shape ["N"]: with the batch dim taken away nothing is left, so the
    dims become [1] with `reshape { shape: [] }` (Triton's rule)."""
    config = client.get_model_config("ac_1d")
    assert config["max_batch_size"] == 4, config
    for kind, name in (("input", "IN"), ("output", "OUT")):
        (tensor,) = config[kind]
        assert (tensor["name"], tensor["dims"]) == (name, [1]), tensor
        assert tensor.get("reshape") == {"shape": []}, tensor
    data = sample("FP32", [3, 1], 9)
    inp = httpclient.InferInput("IN", [3, 1], "FP32")
    inp.set_data_from_numpy(data)
    out = client.infer("ac_1d", [inp]).as_numpy("OUT")
    assert out.shape == (3, 1)
    np.testing.assert_array_equal(out, data)


def test_strict_model_config_needs_config_pbtxt(tmp_path):
    """--strict-model-config=true: no auto-complete, so a folder without
    config.pbtxt fails its poll: left out of the model table, as in Triton,
    with a log line that says so; the others serve."""
    repo = tmp_path / "repo"
    AC_DYN.write(repo)
    good = add_model("with_config")
    good.write(repo, good.config(8))
    flags = ["--strict-model-config=true", "--exit-on-error=false"]
    with Server(repo, flags) as srv:
        c = httpclient.InferenceServerClient(srv.url)
        try:
            index = {m["name"]: m for m in c.get_model_repository_index()}
            assert index["ac_dyn"] == {"name": "ac_dyn"}, index["ac_dyn"]
            assert "Poll failed for model directory 'ac_dyn'" in srv.output()
            assert "config.pbtxt is missing" in srv.output()
            assert c.is_model_ready("with_config")
            feeds = {"A": sample("FP32", [1, 4], 10), "B": sample("FP32", [1, 4], 11)}
            assert_same(_infer(c, "with_config", feeds).as_numpy("C"),
                        good.reference(feeds)["C"], "FP32")
        finally:
            c.close()


def test_validate_reports_the_bad_model(tmp_path):
    good = add_model("good")
    good.write(tmp_path, good.config(8))
    bad = add_model("bad")  # FP32 A, declared INT32 in config.pbtxt
    lying = replace(bad, inputs=[("A", "INT32", ["N", 4]), bad.inputs[1]])
    bad.write(tmp_path, lying.config(8))
    status, out, shown = oxiserve_validate(tmp_path)
    assert status == 1, shown
    lines = out.splitlines()
    assert any(line.startswith("ok: good") for line in lines), shown
    errors = [line for line in lines if line.startswith("error:")]
    assert any("bad" in line and "configuration expects datatype" in line
               for line in errors), shown
    assert not any("good" in line for line in errors), shown


def test_validate_good_repository(tmp_path):
    """Two good models, one of them auto-completed: exit status 0."""
    good = add_model("good")
    good.write(tmp_path, good.config(8))
    AC_DYN.write(tmp_path)
    status, out, shown = oxiserve_validate(tmp_path)
    assert status == 0, shown
    lines = out.splitlines()
    assert any(line.startswith("ok: good") for line in lines), shown
    assert any(line.startswith("ok: ac_dyn") for line in lines), shown
    assert not any(line.startswith("error:") for line in lines), shown
