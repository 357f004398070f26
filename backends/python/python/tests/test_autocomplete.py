import json

import pytest

import triton_python_backend_utils as pb_utils
from harness import Stub, Zygote, write_model
from oxiserve_stub import protocol as P


@pytest.fixture(scope="module")
def zygote():
    z = Zygote()
    yield z
    z.close()


BASE = {"name": "ac", "max_batch_size": 0, "input": [], "output": []}

AUTO = """
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    @staticmethod
    def auto_complete_config(auto_complete_model_config):
        c = auto_complete_model_config
        c.set_max_batch_size(8)
        c.set_dynamic_batching()
        c.add_input({"name": "IN", "data_type": "TYPE_FP32", "dims": [4]})
        c.add_output({"name": "OUT", "data_type": "TYPE_FP32", "dims": [4]})
        c.set_model_transaction_policy(dict(decoupled=True))
        return c

    def execute(self, requests):
        pass
"""


def _auto(zygote, tmp_path, src, config):
    s = Stub(zygote)
    f = write_model(tmp_path, src, name=config["name"])
    s.send(P.enc_auto_complete(f, json.dumps(config)))
    d = s.expect(P.AUTO_COMPLETE_DONE)
    s.close()
    return d["error"], d["config"]


def test_auto_complete(zygote, tmp_path):
    err, cfg = _auto(zygote, tmp_path, AUTO, BASE)
    assert err == (None, "")
    assert json.loads(cfg) == {
        "name": "ac", "max_batch_size": 8, "dynamic_batching": {},
        "input": [{"name": "IN", "data_type": "TYPE_FP32", "dims": [4]}],
        "output": [{"name": "OUT", "data_type": "TYPE_FP32", "dims": [4]}],
        "model_transaction_policy": {"decoupled": True}}


def test_auto_complete_not_defined_and_bad_return(zygote, tmp_path):
    src = """
        class TritonPythonModel:
            def execute(self, requests):
                pass
    """
    config = dict(BASE, name="plain")
    err, cfg = _auto(zygote, tmp_path, src, config)
    assert err == (None, "") and json.loads(cfg) == config
    src = """
        class TritonPythonModel:
            @staticmethod
            def auto_complete_config(c):
                return None
            def execute(self, requests):
                pass
    """
    err, _ = _auto(zygote, tmp_path, src, dict(BASE, name="bad"))
    assert err == (1, "auto_complete_config function in model 'bad' must return a valid "
                      "pb.ModelConfig object.")


def test_auto_complete_value_error(zygote, tmp_path):
    src = """
        class TritonPythonModel:
            @staticmethod
            def auto_complete_config(c):
                c.set_max_batch_size(4)
                return c
            def execute(self, requests):
                pass
    """
    err, _ = _auto(zygote, tmp_path, src, dict(BASE, name="mb", max_batch_size=16))
    assert err[0] == 1
    assert err[1].startswith(
        "ValueError: configuration specified max_batch_size 16, but in auto-complete-config "
        "function for model 'mb' specified max_batch_size 4\n\nAt:\n")


def cfg(**kw):
    d = dict(BASE)
    d["input"] = []
    d["output"] = []
    d.update(kw)
    return pb_utils.ModelConfig(json.dumps(d))


def test_model_config_errors():
    with pytest.raises(ValueError) as e:
        cfg(sequence_batching={}).set_dynamic_batching()
    assert str(e.value) == (
        "Configuration specified scheduling_choice as 'sequence_batching', but "
        "auto-complete-config function for model 'ac' tries to set scheduling_choice as "
        "'dynamic_batching'")
    c = cfg(dynamic_batching={"max_queue_delay_microseconds": 5})
    c.set_dynamic_batching()
    assert c.as_dict()["dynamic_batching"] == {"max_queue_delay_microseconds": 5}

    with pytest.raises(ValueError) as e:
        cfg().add_input({"name": "I", "data_type": "TYPE_FP32", "dims": [1], "x": 1})
    assert str(e.value) == ("input 'I' in auto-complete-config function for model 'ac' "
                            "contains property other than 'name', 'data_type', 'dims' and "
                            "'optional'.")
    with pytest.raises(ValueError) as e:
        cfg().add_output({"name": "O", "data_type": "TYPE_FP32", "dims": [1], "optional": 1})
    assert str(e.value) == ("output 'O' in auto-complete-config function for model 'ac' "
                            "contains property other than 'name', 'data_type' and 'dims'.")
    with pytest.raises(ValueError) as e:
        cfg().add_input({"data_type": "TYPE_FP32", "dims": [1]})
    assert str(e.value) == ("input in auto-complete-config function for model 'ac' is "
                            "missing 'name' property.")
    with pytest.raises(ValueError) as e:
        cfg().add_output({"name": "O", "dims": [1]})
    assert str(e.value) == ("output 'O' in auto-complete-config function for model 'ac' is "
                            "missing 'data_type' property.")
    with pytest.raises(ValueError) as e:
        cfg().add_input({"name": "I", "data_type": "TYPE_FP32"})
    assert str(e.value) == ("input 'I' in auto-complete-config function for model 'ac' is "
                            "missing 'dims' property.")

    existing = {"name": "I", "data_type": "TYPE_INT32", "dims": [2], "optional": False}
    with pytest.raises(ValueError) as e:
        cfg(input=[dict(existing)]).add_input(
            {"name": "I", "data_type": "TYPE_FP32", "dims": [2]})
    assert str(e.value) == ("unable to load model 'ac', configuration expects datatype "
                            "TYPE_INT32 for input 'I', model provides TYPE_FP32")
    with pytest.raises(ValueError) as e:
        cfg(input=[dict(existing)]).add_input(
            {"name": "I", "data_type": "TYPE_INT32", "dims": [3]})
    assert str(e.value) == ("model 'ac', tensor 'I': the model expects dims [3] but the "
                            "model configuration specifies dims [2]")
    with pytest.raises(ValueError) as e:
        cfg(input=[dict(existing)]).add_input(
            {"name": "I", "data_type": "TYPE_INT32", "dims": [2], "optional": True})
    assert str(e.value) == ("model 'ac', tensor 'I': the model expects optional True but "
                            "the model configuration specifies optional False")
    c = cfg(input=[{"name": "I", "data_type": "TYPE_INVALID", "dims": []}])
    c.add_input({"name": "I", "data_type": "TYPE_FP16", "dims": [5], "optional": True})
    assert c.as_dict()["input"] == [
        {"name": "I", "data_type": "TYPE_FP16", "dims": [5], "optional": True}]
    with pytest.raises(ValueError) as e:
        cfg(output=[{"name": "O", "data_type": "TYPE_INT8", "dims": []}]).add_output(
            {"name": "O", "data_type": "TYPE_FP32", "dims": [2]})
    assert str(e.value) == ("unable to load model 'ac', configuration expects datatype "
                            "TYPE_INT8 for output 'O', model provides TYPE_FP32")

    with pytest.raises(ValueError) as e:
        cfg().set_model_transaction_policy({"decoupled": True, "other": 1})
    assert str(e.value) == ("model transaction property in auto-complete-config function "
                            "for model 'ac' contains property other than 'decoupled'.")
    with pytest.raises(ValueError) as e:
        cfg(model_transaction_policy={"decoupled": False}).set_model_transaction_policy(
            {"decoupled": True})
    assert str(e.value) == ("trying to change decoupled property in auto-complete-config "
                            "for model 'ac', which is already set to 'False'.")
    c = cfg(max_batch_size=0)
    c.set_max_batch_size(4)
    assert c.as_dict()["max_batch_size"] == 4
