"""auto_complete_config: a config.pbtxt with only name/backend filled in by
the model (max_batch_size, inputs, outputs, dynamic batching, decoupled),
`/config` compared with Triton's, invalid changes as load errors, and
--strict-model-config=true / --disable-auto-complete-config skipping it."""

import queue

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from python_models import (AUTO_COMPLETE_DECOUPLED, AUTO_COMPLETE_FULL,
                           auto_complete_model, serve)


def _bad(name, body, config_text=""):
    return auto_complete_model(name, body, config_text)


MODELS = [
    auto_complete_model("ac_full", AUTO_COMPLETE_FULL),
    auto_complete_model("ac_decoupled", AUTO_COMPLETE_DECOUPLED),
    _bad("ac_bad_dtype", AUTO_COMPLETE_FULL,
         'input [ { name: "IN", data_type: TYPE_FP32, dims: [ 2 ] } ]\n'),
    _bad("ac_bad_dims", AUTO_COMPLETE_FULL,
         'input [ { name: "IN", data_type: TYPE_INT32, dims: [ 3 ] } ]\n'),
    _bad("ac_batch", AUTO_COMPLETE_FULL, "max_batch_size: 8\n"),
    _bad("ac_none", "        return None"),
    _bad("ac_bad_key", '        cfg.set_model_transaction_policy({"stream": True})\n'
                       "        return cfg"),
    _bad("ac_raises", '        raise RuntimeError("auto-complete refused")'),
]

EXPECTED_FULL = {
    "name": "ac_full",
    "platform": "",
    "backend": "python",
    "runtime": "",
    "version_policy": {"latest": {"num_versions": 1}},
    "max_batch_size": 4,
    "input": [{
        "name": "IN", "data_type": "TYPE_INT32", "format": "FORMAT_NONE", "dims": [2],
        "is_shape_tensor": False, "allow_ragged_batch": False, "optional": False,
        "is_non_linear_format_io": False,
    }],
    "output": [{
        "name": "OUT", "data_type": "TYPE_INT32", "dims": [2], "label_filename": "",
        "is_shape_tensor": False, "is_non_linear_format_io": False,
    }],
    "batch_input": [],
    "batch_output": [],
    "optimization": {
        "priority": "PRIORITY_DEFAULT", "input_pinned_memory": {"enable": True},
        "output_pinned_memory": {"enable": True}, "gather_kernel_buffer_threshold": 0,
        "eager_batching": False,
    },
    "dynamic_batching": {
        "preferred_batch_size": [4], "max_queue_delay_microseconds": 0,
        "preserve_ordering": False, "priority_levels": 0, "default_priority_level": 0,
        "priority_queue_policy": {},
    },
    "instance_group": [{
        "name": "ac_full", "kind": "KIND_CPU", "count": 1, "gpus": [],
        "secondary_devices": [], "profile": [], "passive": False, "host_policy": "",
    }],
    "default_model_filename": "model.py",
    "cc_model_filenames": {},
    "metric_tags": {},
    "parameters": {},
    "model_warmup": [],
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("py_ac"), MODELS, ["--exit-on-error=false"]) as s:
        yield s


@pytest.fixture
def client(server):
    c = httpclient.InferenceServerClient(server.url)
    yield c
    c.close()


def _reason(client, name):
    entry = {m["name"]: m for m in client.get_model_repository_index()}[name]
    assert entry["state"] == "UNAVAILABLE", entry
    return entry["reason"]


def test_filled_config(client):
    assert client.get_model_config("ac_full") == EXPECTED_FULL


def test_filled_model_serves_batches(client):
    tensor = httpclient.InferInput("IN", [3, 2], "INT32")
    data = np.arange(6, dtype=np.int32).reshape(3, 2)
    tensor.set_data_from_numpy(data)
    result = client.infer("ac_full", [tensor])
    np.testing.assert_array_equal(result.as_numpy("OUT"), data * 2)


def test_decoupled_config(client, server):
    cfg = client.get_model_config("ac_decoupled")
    assert cfg["model_transaction_policy"] == {"decoupled": True}
    assert cfg["max_batch_size"] == 0
    assert [(i["name"], i["dims"]) for i in cfg["input"]] == [("IN", [-1])]
    assert "dynamic_batching" not in cfg
    grpc = grpcclient.InferenceServerClient(server.grpc_url)
    got = queue.Queue()
    grpc.start_stream(callback=lambda result, error: got.put((result, error)))
    tensor = grpcclient.InferInput("IN", [2], "INT32")
    tensor.set_data_from_numpy(np.array([3, 4], dtype=np.int32))
    grpc.async_stream_infer("ac_decoupled", [tensor])
    result, error = got.get(timeout=30)
    grpc.stop_stream()
    grpc.close()
    assert error is None and result.as_numpy("OUT").tolist() == [6, 8]


def _expect_value_error(server, client, name, message, line):
    """Triton's reason: "Internal: ValueError: <message>", then pybind11's "At:"
    traceback whose last frame is the model's auto_complete_config (the frame
    above it is the helper module's own file and line)."""
    reason = _reason(client, name)
    head = f"Internal: ValueError: {message}\n\nAt:\n  "
    assert reason.startswith(head), reason
    path = server.repo / name / "1" / "model.py"
    assert reason.endswith(f"\n  {path}({line}): auto_complete_config\n"), reason


def test_conflicting_datatype(server, client):
    _expect_value_error(
        server, client, "ac_bad_dtype",
        "unable to load model 'ac_bad_dtype', configuration expects datatype TYPE_FP32 "
        "for input 'IN', model provides TYPE_INT32", 10)


def test_conflicting_dims(server, client):
    _expect_value_error(
        server, client, "ac_bad_dims",
        "model 'ac_bad_dims', tensor 'IN': the model expects dims [2] but the model "
        "configuration specifies dims [3]", 10)


def test_smaller_max_batch_size(server, client):
    _expect_value_error(
        server, client, "ac_batch",
        "configuration specified max_batch_size 8, but in auto-complete-config function "
        "for model 'ac_batch' specified max_batch_size 4", 9)


def test_returning_none(client):
    assert _reason(client, "ac_none") == (
        "Internal: auto_complete_config function in model 'ac_none' must return a valid "
        "pb.ModelConfig object.")


def test_bad_transaction_policy_key(server, client):
    _expect_value_error(
        server, client, "ac_bad_key",
        "model transaction property in auto-complete-config function for model "
        "'ac_bad_key' contains property other than 'decoupled'.", 9)


def test_raising(server, client):
    path = server.repo / "ac_raises" / "1" / "model.py"
    assert _reason(client, "ac_raises") == (
        "Internal: RuntimeError: auto-complete refused\n\nAt:\n"
        f"  {path}(9): auto_complete_config\n")


@pytest.mark.parametrize("flag", ["--strict-model-config=true",
                                  "--disable-auto-complete-config"])
def test_strict_config_skips_auto_complete(tmp_path, flag):
    models = [auto_complete_model("ac_full", AUTO_COMPLETE_FULL)]
    with serve(tmp_path / "repo", models, ["--exit-on-error=false", flag]) as server:
        client = httpclient.InferenceServerClient(server.url)
        index = {m["name"]: m for m in client.get_model_repository_index()}
        config = client.get_model_config("ac_full")
        client.close()
    # The model loads with the config as written: no tensors, no batching.
    assert index["ac_full"]["state"] == "READY", index
    expected = {k: v for k, v in EXPECTED_FULL.items() if k != "dynamic_batching"}
    expected.update(max_batch_size=0, input=[], output=[])
    assert config == expected
