"""pb_utils.load_model, unload_model and is_model_ready on the wire: each a round trip
answered by a ModelControlReply, the server's errors worded as Triton's stub words them,
and the argument errors the stub raises itself (no frame written)."""

import json

from harness import write_model
from oxiserve_stub import protocol as P

MODEL = """
    import json
    import numpy as np
    import triton_python_backend_utils as pb_utils

    def check(call):
        try:
            return call()
        except Exception as e:
            return "%s: %s" % (type(e).__name__, e)

    class TritonPythonModel:
        def execute(self, requests):
            seen = {
                "load": check(lambda: pb_utils.load_model(
                    "other", config='{"backend":"python"}',
                    files={"file:1/model.py": b"\\x00code", b"file:1/x": b""})),
                "ready": check(lambda: pb_utils.is_model_ready("other", "2")),
                "unload": check(lambda: pb_utils.unload_model(
                    model_name="other", unload_dependents=True)),
                "refused": check(lambda: pb_utils.load_model("other")),
                "version": check(lambda: pb_utils.is_model_ready("other", model_version="x")),
            }
            out = np.array([json.dumps(seen).encode()], dtype=object)
            return [pb_utils.InferenceResponse([pb_utils.Tensor("OUT", out)])]
"""


def test_model_control_calls_on_the_wire(stub, tmp_path):
    assert stub.init(write_model(tmp_path, MODEL)) == (None, "")
    stub.execute([{"rid": 1}], wait=False)
    load = stub.expect(P.LOAD_MODEL)
    assert (load["model_name"], load["config"]) == ("other", '{"backend":"python"}')
    assert load["files"] == {"file:1/model.py": b"\x00code", "file:1/x": b""}
    stub.send(P.enc_model_control_reply(load["tag"]))
    ready = stub.expect(P.MODEL_READY)
    assert (ready["model_name"], ready["model_version"]) == ("other", "2")
    stub.send(P.enc_model_control_reply(ready["tag"], ready=True))
    unload = stub.expect(P.UNLOAD_MODEL)
    assert (unload["model_name"], unload["unload_dependents"]) == ("other", True)
    stub.send(P.enc_model_control_reply(unload["tag"]))
    refused = stub.expect(P.LOAD_MODEL)
    assert (refused["config"], refused["files"]) == ("", {})
    stub.send(P.enc_model_control_reply(
        refused["tag"],
        error=(4, "explicit model load / unload is not allowed if polling is enabled")))
    version = stub.expect(P.MODEL_READY)
    stub.send(P.enc_model_control_reply(
        version["tag"], error=(1, "failed to get model version from specified version string "
                                  "'x' (details: stol), version should be an integral value > 0")))
    d = stub.expect(P.EXECUTE_DONE)
    seen = json.loads(stub.outputs(d["responses"][0])["OUT"][0])
    assert (seen["load"], seen["ready"], seen["unload"]) == (None, True, None)
    assert seen["refused"] == (
        "TritonModelException: Failed to load model: Failed to process the request for model "
        "'m_0_0', message: explicit model load / unload is not allowed if polling is enabled")
    assert seen["version"] == (
        "TritonModelException: Failed to check model readiness: Failed to process the request "
        "for model 'm_0_0', message: failed to get model version from specified version string "
        "'x' (details: stol), version should be an integral value > 0")


def test_bad_arguments_raise_before_any_frame(stub, tmp_path):
    f = write_model(tmp_path, """
        import json
        import numpy as np
        import triton_python_backend_utils as pb_utils

        def check(call):
            try:
                call()
            except Exception as e:
                return "%s: %s" % (type(e).__name__, e)
            return "no error"

        class TritonPythonModel:
            def execute(self, requests):
                seen = {
                    "files": check(lambda: pb_utils.load_model("a", "{}", ["x"])),
                    "contents": check(lambda: pb_utils.load_model("a", "{}", {"file:x": "t"})),
                    "name": check(lambda: pb_utils.load_model(None)),
                    "config": check(lambda: pb_utils.load_model("a", config=None)),
                    "dependents": check(lambda: pb_utils.unload_model("a", "yes")),
                    "version": check(lambda: pb_utils.is_model_ready("a", 2)),
                }
                out = np.array([json.dumps(seen).encode()], dtype=object)
                return [pb_utils.InferenceResponse([pb_utils.Tensor("OUT", out)])]
    """)
    assert stub.init(f) == (None, "")
    d = stub.execute([{"rid": 1}])
    seen = json.loads(stub.outputs(d["responses"][0])["OUT"][0])
    assert seen["files"] == (
        "TritonModelException: failed to load model 'a', files should be a dictionary of file "
        "paths and file contents")
    assert seen["contents"].startswith("RuntimeError: Unable to cast Python instance")
    for key in ("name", "config", "dependents", "version"):
        assert seen[key].startswith("TypeError: "), (key, seen[key])


def test_a_model_loads_another_in_initialize(stub, tmp_path):
    f = write_model(tmp_path, """
        import triton_python_backend_utils as pb_utils

        class TritonPythonModel:
            def initialize(self, args):
                pb_utils.load_model("helper")
                if not pb_utils.is_model_ready("helper"):
                    raise Exception("helper is not ready")

            def execute(self, requests):
                return []
    """)
    stub.send(P.enc_init({"model_config": json.dumps({"name": "m"}), "model_name": "m",
                          "model_instance_name": "m_0_0"}, f, False))
    load = stub.expect(P.LOAD_MODEL)
    assert load["model_name"] == "helper"
    stub.send(P.enc_model_control_reply(load["tag"]))
    ready = stub.expect(P.MODEL_READY)
    assert ready["model_version"] == ""
    stub.send(P.enc_model_control_reply(ready["tag"], ready=False))
    error = stub.expect(P.INIT_DONE)["error"]
    assert "helper is not ready" in error[1]
