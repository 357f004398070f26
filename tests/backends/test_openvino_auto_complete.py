"""Auto-complete of OpenVINO model configurations (on by default, as Triton
2.51's --strict-model-config=false): a folder holding only `1/model.xml`
(+ .bin) is served with the backend, inputs, outputs, max_batch_size and
dynamic batcher read from the model; a config with inputs only gets its
outputs; and `oxiserve validate` checks OpenVINO models against their files."""


import numpy as np
import pytest
import tritonclient.http as httpclient

from openvino_models import add_sub_model, sample
from servers import TARGET, Server, oxiserve_validate

pytestmark = pytest.mark.skipif(
    TARGET == "triton", reason="Triton 2.51's reference build here has no openvino backend")

AC_DYN = add_sub_model("ac_dyn")  # A, B -> SUM, DIFF: ["N", 4]
AC_FIXED = add_sub_model("ac_fixed", (2, 3))
AC_PARTIAL = add_sub_model("ac_partial")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = tmp_path_factory.mktemp("openvino_ac_repo")
    AC_DYN.write(repo)
    AC_FIXED.write(repo)
    AC_PARTIAL.write(repo, AC_PARTIAL.config(16, outputs=False))
    with Server(repo, ["--exit-on-error=false"]) as server:
        yield server


@pytest.fixture(scope="module")
def client(server):
    c = httpclient.InferenceServerClient(server.url)
    yield c
    c.close()


def _io(config, kind):
    return [(t["name"], t["data_type"], t["dims"]) for t in config[kind]]


def _infer(client, model, feeds):
    inputs = []
    for name, array in feeds.items():
        inp = httpclient.InferInput(name, list(array.shape), "FP32")
        inp.set_data_from_numpy(array)
        inputs.append(inp)
    return client.infer(model, inputs)


def test_dynamic_first_dim(client):
    config = client.get_model_config("ac_dyn")
    assert config["backend"] == "openvino"
    assert config["max_batch_size"] == 4
    assert "dynamic_batching" in config
    assert _io(config, "input") == [("A", "TYPE_FP32", [4]), ("B", "TYPE_FP32", [4])]
    assert _io(config, "output") == [("SUM", "TYPE_FP32", [4]), ("DIFF", "TYPE_FP32", [4])]


def test_dynamic_first_dim_infers(client):
    feeds = {"A": sample("FP32", [3, 4], 1), "B": sample("FP32", [3, 4], 2)}
    result = _infer(client, "ac_dyn", feeds)
    for name, want in AC_DYN.reference(feeds).items():
        np.testing.assert_array_equal(result.as_numpy(name), want)


def test_fixed_first_dim(client):
    config = client.get_model_config("ac_fixed")
    assert config["max_batch_size"] == 0
    assert "dynamic_batching" not in config
    assert _io(config, "input") == [("A", "TYPE_FP32", [2, 3]), ("B", "TYPE_FP32", [2, 3])]
    feeds = {"A": sample("FP32", [2, 3], 3), "B": sample("FP32", [2, 3], 4)}
    result = _infer(client, "ac_fixed", feeds)
    np.testing.assert_array_equal(result.as_numpy("SUM"), AC_FIXED.reference(feeds)["SUM"])


def test_outputs_filled_in(client):
    config = client.get_model_config("ac_partial")
    assert config["max_batch_size"] == 16
    assert _io(config, "output") == [("SUM", "TYPE_FP32", [4]), ("DIFF", "TYPE_FP32", [4])]


def test_validate_reports_the_bad_model(tmp_path):
    good = add_sub_model("good")
    good.write(tmp_path, good.config(8))
    bad = add_sub_model("bad")
    bad.write(tmp_path, bad.config(8).replace('name: "A", data_type: TYPE_FP32',
                                              'name: "A", data_type: TYPE_INT32'))
    status, out, shown = oxiserve_validate(tmp_path)
    assert status == 1, shown
    lines = out.splitlines()
    assert any(line.startswith("ok: good (openvino") for line in lines), shown
    errors = [line for line in lines if line.startswith("error:")]
    assert any("bad" in line and "configuration expects datatype TYPE_INT32 for input 'A'" in line
               for line in errors), shown
    assert not any("good" in line for line in errors), shown


def test_validate_good_repository(tmp_path):
    """A configured model and an auto-completed one: exit status 0."""
    good = add_sub_model("good")
    good.write(tmp_path, good.config(8))
    AC_DYN.write(tmp_path)
    status, out, shown = oxiserve_validate(tmp_path)
    assert status == 0, shown
    assert any(line.startswith("ok: ac_dyn") for line in out.splitlines()), shown
