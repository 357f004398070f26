"""Blocks released, logging, finalize, exits, the zygote."""

import json
import os
import subprocess
import time

import numpy as np
import pytest

from harness import Stub, Zygote, write_model
from oxiserve_stub import protocol as P
from sample_models import ADD_SUB


def test_release_when_arrays_die(stub, tmp_path):
    f = write_model(tmp_path, """
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def initialize(self, args):
                self.kept = None
            def execute(self, requests):
                a = requests[0].inputs()[0].as_numpy()
                if a[0] == 1:
                    self.kept = a[1:]  # a view keeps the whole block
                elif a[0] == 2:
                    self.kept = None
                return [pb_utils.InferenceResponse() for _ in requests]
    """)
    assert stub.init(f) == (None, "")
    stub.execute([{"inputs": [("A", np.ones(100, dtype=np.int64))]}])
    first = stub.last_block
    stub.execute([{"inputs": [("A", np.zeros(10, dtype=np.int64))]}])
    second = stub.last_block
    stub.wait_release(second)
    assert first not in stub.released_in
    stub.execute([{"inputs": [("A", np.full(3, 2, dtype=np.int64))]}])
    stub.wait_release(first)


def test_output_blocks_freed_by_release(stub, tmp_path):
    f = write_model(tmp_path, ADD_SUB)
    assert stub.init(f) == (None, "")
    a = np.ones(1000, dtype=np.float32)
    offsets = set()
    for _ in range(5):
        d = stub.execute([{"inputs": [("INPUT0", a), ("INPUT1", a)]}])
        offsets.update(t.offset for t in d["responses"][0].tensors)
        stub.outputs(d["responses"][0], release=True)
    assert len(offsets) <= 4  # blocks are reused after Release


def test_logger(stub, tmp_path):
    f = write_model(tmp_path, """
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def initialize(self, args):
                pb_utils.Logger.log("info")
                pb_utils.Logger.log_warn("warn")
                pb_utils.Logger.log_error("error")
                pb_utils.Logger.log_verbose("verbose")
                pb_utils.Logger.log("v2", pb_utils.Logger.VERBOSE)
                pb_utils.Logger.log("e2", level=pb_utils.Logger.ERROR)
            def execute(self, requests):
                pass
    """)
    assert stub.init(f) == (None, "")
    got = [stub.expect(P.LOG) for _ in range(6)]
    assert [(g["level"], g["message"], g["file"], g["line"]) for g in got] == [
        (0, "info", "model.py", 5), (1, "warn", "model.py", 6), (2, "error", "model.py", 7),
        (3, "verbose", "model.py", 8), (3, "v2", "model.py", 9), (2, "e2", "model.py", 10)]


def test_finalize(zygote, tmp_path):
    s = Stub(zygote)
    marker = tmp_path / "marker"
    f = write_model(tmp_path, """
        class TritonPythonModel:
            def execute(self, requests):
                pass
            def finalize(self):
                open(%r, "w").write("done")
                raise ValueError("in finalize")
    """ % str(marker))
    assert s.init(f) == (None, "")
    d = s.finalize()
    assert d["error"] == (None, "")
    log = s.expect(P.LOG) if not s.pending else s.pending.pop()
    assert log["level"] == 2 and "ValueError: in finalize" in log["message"]
    assert marker.read_text() == "done"
    assert s.wait_exit() == {"op": "exited", "pid": s.pid, "code": 0}


def test_child_exit_code_and_signal(zygote, tmp_path):
    s = Stub(zygote)
    f = write_model(tmp_path, """
        import os
        class TritonPythonModel:
            def initialize(self, args):
                os._exit(3)
            def execute(self, requests):
                pass
    """)
    s.send(P.enc_init({"model_name": "m"}, f, False))
    assert s.wait_exit() == {"op": "exited", "pid": s.pid, "code": 3}
    with pytest.raises(EOFError):
        s.recv(timeout=5)
    s2 = Stub(zygote)
    import json as _j
    zygote.ctl.send(_j.dumps({"op": "kill", "pid": s2.pid}).encode())
    assert s2.wait_exit() == {"op": "exited", "pid": s2.pid, "signal": 9}


def test_zygote_kills_only_its_own_children(zygote):
    """A pid the zygote did not fork (or already reaped) may be anyone's: another
    model's instance, after the pid was reused."""
    other = subprocess.Popen(["sleep", "60"])
    try:
        zygote.ctl.send(json.dumps({"op": "kill", "pid": other.pid}).encode())
        s = Stub(zygote)  # answered after the kill above was handled
        zygote.ctl.send(json.dumps({"op": "kill", "pid": s.pid}).encode())
        assert s.wait_exit() == {"op": "exited", "pid": s.pid, "signal": 9}
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_malformed_frame_exits_70(zygote):
    s = Stub(zygote)
    s.send(P.HDR.pack(12, 99, 0))
    assert s.wait_exit()["code"] == 70
    s = Stub(zygote)
    s.send(P.frame(P.INIT, 0, [b"\x05\x00"]))  # truncated
    assert s.wait_exit()["code"] == 70


def test_openblas_after_fork(stub, tmp_path):
    f = write_model(tmp_path, """
        import numpy as np
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def execute(self, requests):
                a = np.ones((512, 512))
                s = float(np.dot(a, a).sum())
                return [pb_utils.InferenceResponse([pb_utils.Tensor("S", np.array([s]))])]
    """)
    assert stub.init(f) == (None, "")
    d = stub.execute([{}])
    assert stub.outputs(d["responses"][0])["S"].tolist() == [512.0 ** 3]


def test_sibling_import_and_args(stub, tmp_path):
    f = write_model(tmp_path, """
        import json
        import numpy as np
        import helper
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def initialize(self, args):
                self.args = args
            def execute(self, requests):
                import sys
                bad = [p for p in sys.path if p.rstrip("/").endswith("oxiserve_stub")]
                return [pb_utils.InferenceResponse([pb_utils.Tensor(
                    "A", np.array([json.dumps(self.args), helper.VALUE, json.dumps(bad),
                                   __name__], dtype=object))])]
    """)
    (tmp_path / "m" / "1" / "helper.py").write_text("VALUE = 'sibling'\n")
    assert stub.init(f) == (None, "")
    d = stub.execute([{}])
    args_json, value, bad, modname = stub.outputs(d["responses"][0])["A"].tolist()
    assert value == b"sibling" and bad == b"[]" and modname == b"1.model"
    args = json.loads(args_json)
    assert args["model_instance_name"] == "m_0_0" and args["model_version"] == "1"


def test_decoupled_exception_fails_open_requests(stub, tmp_path):
    f = write_model(tmp_path, """
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def execute(self, requests):
                requests[0].get_response_sender().send(
                    pb_utils.InferenceResponse(), flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                requests[1].get_response_sender().send(pb_utils.InferenceResponse())
                raise pb_utils.TritonModelException("oops")
    """)
    assert stub.init(f, decoupled=True) == (None, "")
    stub.execute([{"rid": 1}, {"rid": 2}, {"rid": 3}], wait=False)
    sends = [stub.expect(P.SEND) for _ in range(4)]
    failed = P.FLAG_FINAL | P.FLAG_FAILED  # the stub's answers for the failed execution
    assert [(s["tag"], s["flags"]) for s in sends] == [(1, 1), (2, 0), (2, failed), (3, failed)]
    for s in sends[2:]:
        assert s["response"].err_code == 1
        assert s["response"].err_msg.startswith(
            "Failed to process the request(s) for model 'm_0_0', message: TritonModelException: "
            "oops\n\nAt:\n")
    d = stub.expect(P.EXECUTE_DONE)
    assert d["error"][0] == 1


def test_bf16_input(stub, tmp_path):
    f = write_model(tmp_path, """
        import numpy as np
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def execute(self, requests):
                t = requests[0].inputs()[0]
                try:
                    t.as_numpy()
                    msg = "no error"
                except pb_utils.TritonModelException as e:
                    msg = str(e)
                try:
                    np.from_dlpack(t)  # numpy has no bfloat16
                    msg += " | numpy read it"
                except (BufferError, TypeError, ValueError, RuntimeError):
                    pass
                return [pb_utils.InferenceResponse([
                    pb_utils.Tensor("MSG", np.array([msg], dtype=object)),
                    pb_utils.Tensor.from_dlpack("RAW", t.to_dlpack()), t])]
    """)
    assert stub.init(f) == (None, "")
    block, w = stub.write_block([[("B", np.array([0x3f80, 0x4000], dtype=np.uint16))]])
    name, _, dims, off, n = w[0][0]
    stub.send(P.enc_execute(1, block, [{"rid": 1, "inputs": [(name, 14, dims, off, n)]}]))
    d = stub.expect(P.EXECUTE_DONE)
    r = d["responses"][0]
    outs = stub.outputs(r)
    assert outs["MSG"].tolist() == [b"Tensor dtype is BF16 and cannot be converted to NumPy. "
                                    b"Use to_dlpack() and from_dlpack() instead."]
    assert outs["RAW"].tolist() == [0x3f80, 0x4000]
    assert {t.name: t.dtype for t in r.tensors} == {"MSG": 13, "RAW": 14, "B": 14}


def test_zygote_ready_message(zygote):
    r = zygote.ready
    assert r["op"] == "ready" and r["numpy"] == np.__version__
    assert r["python"].count(".") == 2 and r["executable"]


def test_zygote_failed_without_numpy():
    import subprocess
    py = "/usr/bin/python3"
    if not os.path.exists(py) or subprocess.run([py, "-I", "-c", "import numpy"],
                                                capture_output=True).returncode == 0:
        pytest.skip("no interpreter without numpy here")
    z = Zygote(python=py)
    assert z.ready["op"] == "failed"
    assert "numpy" in z.ready["error"]
    assert z.proc.wait(10) == 1


def test_children_die_with_zygote(tmp_path):
    z = Zygote()
    s = Stub(z)
    f = write_model(tmp_path, ADD_SUB)
    assert s.init(f) == (None, "")
    z.proc.kill()
    z.proc.wait()
    deadline = time.time() + 5
    while True:
        try:
            with open("/proc/%d/status" % s.pid) as fh:
                state = [ln for ln in fh if ln.startswith("State:")][0]
        except (FileNotFoundError, ProcessLookupError):
            break
        if "Z" in state.split()[1]:
            break
        assert time.time() < deadline, "instance survived its zygote"
        time.sleep(0.02)
    s.close()
    z.ctl.close()
