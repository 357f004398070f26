import json
import os
import time

import numpy as np
import pytest

from harness import Stub, Zygote, write_model
from oxiserve_stub import protocol as P


@pytest.fixture(scope="module")
def zygote():
    z = Zygote()
    assert z.ready["op"] == "ready", z.ready
    yield z
    z.close()


@pytest.fixture
def stub(zygote):
    s = Stub(zygote)
    yield s
    s.close()


ADD_SUB = """
import json
import numpy as np
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def initialize(self, args):
        self.args = args
        cfg = json.loads(args["model_config"])
        self.name = cfg["name"]

    def execute(self, requests):
        responses = []
        for request in requests:
            a = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            b = pb_utils.get_input_tensor_by_name(request, "INPUT1").as_numpy()
            out0 = pb_utils.Tensor("OUTPUT0", (a + b).astype(np.float32))
            out1 = pb_utils.Tensor("OUTPUT1", (a - b).astype(np.float32))
            responses.append(pb_utils.InferenceResponse([out0, out1],
                                                        parameters={"k": 1}))
        return responses
"""


def test_add_sub(stub, tmp_path):
    f = write_model(tmp_path, ADD_SUB)
    assert stub.init(f) == (None, "")
    reqs = []
    for i in range(3):
        a = np.arange(4, dtype=np.float32) + i
        b = np.ones(4, dtype=np.float32) * i
        reqs.append({"inputs": [("INPUT0", a), ("INPUT1", b)]})
    d = stub.execute(reqs)
    assert d["error"] == (None, "")
    assert len(d["responses"]) == 3
    for i, r in enumerate(d["responses"]):
        assert r.err_code is None
        assert json.loads(r.parameters) == {"k": 1}
        outs = stub.outputs(r)
        a = np.arange(4, dtype=np.float32) + i
        b = np.ones(4, dtype=np.float32) * i
        np.testing.assert_array_equal(outs["OUTPUT0"], a + b)
        np.testing.assert_array_equal(outs["OUTPUT1"], a - b)
        assert outs["OUTPUT0"].dtype == np.float32
        assert [t.offset % 64 for t in r.tensors] == [0, 0]
    # the input block is released (it went with ExecuteDone or shortly after)
    stub.wait_release(stub.last_block)
    stub.finalize()
    assert stub.wait_exit()["code"] == 0


def test_init_done_bytes_and_execute_done_bytes(stub, tmp_path):
    f = write_model(tmp_path, """
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def execute(self, requests):
                return [pb_utils.InferenceResponse() for _ in requests]
    """)
    stub.send(P.enc_init({"model_name": "m"}, f, False))
    # InitDone ok: len=12+8, kind 32, tag 0, error code 0xFFFFFFFF + empty str
    assert stub.recv_raw() == (b"\x14\x00\x00\x00" b"\x20\x00\x00\x00" + b"\x00" * 8
                               + b"\xff\xff\xff\xff" + b"\x00\x00\x00\x00")
    # Execute: hand-written bytes, one request without inputs
    body = (b"\xff" * 8 + b"\x01\x00\x00\x00"          # block none, n=1
            + b"\x07" + b"\x00" * 7                     # rid 7
            + b"\x00\x00\x00\x00" + b"\x00" + b"\x00" * 8  # flags, corr none, corr u64
            + b"\x00\x00\x00\x00"                       # corr str ""
            + b"\x02\x00\x00\x00" + b"r1"                # request_id
            + b"\x02\x00\x00\x00" + b"{}"                # parameters
            + b"\x00" * 8                               # timeout
            + b"\x00\x00" + b"\x00\x00")                 # no inputs, no outputs
    stub.send(P.LEN.pack(12 + len(body)) + b"\x02\x00\x00\x00" + b"\x05" + b"\x00" * 7
              + body)
    resp = (b"\xff\xff\xff\xff" + b"\x00" * 4   # no error
            + b"\x00" * 4                       # parameters ""
            + b"\x00\x00")                      # no tensors
    body_out = b"\xff\xff\xff\xff" + b"\x00" * 4 + b"\x01\x00\x00\x00" + resp
    assert stub.recv_raw() == (P.LEN.pack(12 + len(body_out)) + b"\x21\x00\x00\x00"
                               + b"\x05" + b"\x00" * 7 + body_out)


def test_frame_bytes_log_and_send(stub, tmp_path):
    f = write_model(tmp_path, """
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def execute(self, requests):
                pb_utils.Logger.log_warn("hi")
                for r in requests:
                    r.get_response_sender().send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                return None
    """)
    assert stub.init(f, decoupled=True) == (None, "")
    stub.send(P.enc_execute(9, P.NO_BLOCK, [{"rid": 3, "inputs": []}]))
    log_body = b"\x01" + b"\x08\x00\x00\x00model.py" + b"\x05\x00\x00\x00" + \
        b"\x02\x00\x00\x00hi"
    assert stub.recv_raw() == (P.LEN.pack(12 + len(log_body)) + b"\x26\x00\x00\x00"
                               + b"\x00" * 8 + log_body)
    send_body = b"\x01\x00\x00\x00" + b"\x00"
    assert stub.recv_raw() == (P.LEN.pack(12 + len(send_body)) + b"\x22\x00\x00\x00"
                               + b"\x03" + b"\x00" * 7 + send_body)
    d = stub.expect(P.EXECUTE_DONE)
    assert d["tag"] == 9 and d["error"] == (None, "") and d["responses"] == []


BYTES_MODEL = """
import numpy as np
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def execute(self, requests):
        out = []
        for r in requests:
            t = pb_utils.get_input_tensor_by_name(r, "IN")
            a = t.as_numpy()
            assert t.triton_dtype() == 13
            assert a.dtype == np.object_
            strs = np.array([x.decode("utf-8") + "!" for x in a.ravel()],
                            dtype=np.object_).reshape(a.shape)
            out.append(pb_utils.InferenceResponse([
                pb_utils.Tensor("ECHO", a), pb_utils.Tensor("STR", strs),
                pb_utils.Tensor("SHAPE", np.array(t.shape(), dtype=np.int64)),
                pb_utils.Tensor("NP_BYTES", np.array([b"ab", b"c"], dtype=np.bytes_))]))
        return out
"""


def test_bytes_in_out(stub, tmp_path):
    f = write_model(tmp_path, BYTES_MODEL)
    assert stub.init(f) == (None, "")
    val = np.array([["안녕".encode()], [b""], [b"a\x00b"]], dtype=np.object_)
    d = stub.execute([{"inputs": [("IN", val)]}])
    assert d["error"] == (None, ""), d
    r = d["responses"][0]
    assert r.err_code is None, r.err_msg
    outs = stub.outputs(r)
    assert outs["ECHO"].shape == (3, 1)
    assert outs["ECHO"].ravel().tolist() == ["안녕".encode(), b"", b"a\x00b"]
    assert outs["STR"].ravel().tolist() == ["안녕!".encode(), b"!", b"a\x00b!"]
    assert outs["SHAPE"].tolist() == [3, 1]
    assert outs["NP_BYTES"].tolist() == [b"ab", b"c"]
    by_name = {t.name: t for t in r.tensors}
    assert by_name["ECHO"].dtype == 13
    assert bytes(stub.out_mm[by_name["ECHO"].offset:by_name["ECHO"].offset + 21]) == (
        b"\x06\x00\x00\x00" + "안녕".encode() + b"\x00\x00\x00\x00"
        + b"\x03\x00\x00\x00a\x00b")


DTYPES_MODEL = """
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def execute(self, requests):
        return [pb_utils.InferenceResponse(
            [pb_utils.Tensor("O_" + t.name(), t.as_numpy()[..., ::-1]) for t in r.inputs()])
            for r in requests]
"""


def test_all_numeric_dtypes_echo(stub, tmp_path):
    f = write_model(tmp_path, DTYPES_MODEL)
    assert stub.init(f) == (None, "")
    arrays = {}
    for dt in (np.bool_, np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16,
               np.int32, np.int64, np.float16, np.float32, np.float64):
        arrays[np.dtype(dt).name] = (np.arange(6) % 2 == 0).astype(dt).reshape(2, 3) + \
            (np.zeros((2, 3), dtype=dt) if dt is np.bool_ else np.arange(6, dtype=dt).reshape(2, 3))
    d = stub.execute([{"inputs": list(arrays.items())}])
    outs = stub.outputs(d["responses"][0])
    for k, v in arrays.items():
        np.testing.assert_array_equal(outs["O_" + k], v[..., ::-1])
        assert outs["O_" + k].dtype == v.dtype


def test_requested_outputs_filter(stub, tmp_path):
    f = write_model(tmp_path, ADD_SUB)
    assert stub.init(f) == (None, "")
    a = np.ones(2, dtype=np.float32)
    d = stub.execute([{"inputs": [("INPUT0", a), ("INPUT1", a)], "outputs": ["OUTPUT1"]}])
    assert [t.name for t in d["responses"][0].tensors] == ["OUTPUT1"]


REPEAT = """
import threading
import numpy as np
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def initialize(self, args):
        self.threads = []

    def execute(self, requests):
        for r in requests:
            n = int(pb_utils.get_input_tensor_by_name(r, "N").as_numpy()[0])
            data = pb_utils.get_input_tensor_by_name(r, "N").as_numpy()
            sender = r.get_response_sender()
            def run(n=n, sender=sender, data=data):
                for i in range(n):
                    sender.send(pb_utils.InferenceResponse(
                        [pb_utils.Tensor("OUT", np.array([i], dtype=np.int32))]))
                sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                try:
                    sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                except pb_utils.TritonModelException as e:
                    pb_utils.Logger.log_info(str(e))
            t = threading.Thread(target=run)
            t.start()
            self.threads.append(t)
        return None
"""


def test_decoupled_repeat_from_thread(stub, tmp_path):
    f = write_model(tmp_path, REPEAT)
    assert stub.init(f, decoupled=True) == (None, "")
    d = stub.execute([{"rid": 77, "inputs": [("N", np.array([3], dtype=np.int32))]}],
                     wait=False)
    got = []
    while True:
        s = stub.expect(P.SEND)
        assert s["tag"] == 77
        if s["response"] is not None:
            got.append(int(stub.outputs(s["response"])["OUT"][0]))
        if s["flags"] == P.FLAG_FINAL:
            assert s["response"] is None
            break
    assert got == [0, 1, 2]
    assert stub.expect(P.EXECUTE_DONE)["tag"] == d
    log = stub.expect(P.LOG)
    assert log["message"] == "Unable to send response. Response sender has been closed."
    stub.wait_release(stub.last_block)


def _batch_error(stub, tmp_path, src, decoupled=False, nreq=2):
    f = write_model(tmp_path, src)
    assert stub.init(f, decoupled=decoupled) == (None, "")
    d = stub.execute([{"inputs": [("X", np.zeros(1, np.float32))]} for _ in range(nreq)])
    assert d["responses"] == []
    code, msg = d["error"]
    assert code == 1
    prefix = "Failed to process the request(s) for model 'm_0_0', message: "
    assert msg.startswith(prefix)
    return msg[len(prefix):]


def test_batch_error_not_a_list(stub, tmp_path):
    assert _batch_error(stub, tmp_path, """
        class TritonPythonModel:
            def execute(self, requests):
                return 5
    """) == "Expected a list in the execute return, found type '<class 'int'>'."


def test_batch_error_count(stub, tmp_path):
    assert _batch_error(stub, tmp_path, """
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def execute(self, requests):
                return [pb_utils.InferenceResponse()]
    """, nreq=2) == ("Number of InferenceResponse objects do not match the number of "
                     "InferenceRequest objects. InferenceRequest(s) size is:2, and "
                     "InferenceResponse(s) size is:1\n")


def test_batch_error_element_type(stub, tmp_path):
    assert _batch_error(stub, tmp_path, """
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def execute(self, requests):
                return [pb_utils.InferenceResponse(), "x"]
    """) == ("Expected an 'InferenceResponse' object in the execute function return "
             "list, found type '<class 'str'>'.")


def test_batch_error_exception(stub, tmp_path):
    text = _batch_error(stub, tmp_path, """
        def helper():
            raise ValueError("boom")
        class TritonPythonModel:
            def execute(self, requests):
                helper()
    """)
    path = str(tmp_path / "m" / "1" / "model.py")
    assert text == ("ValueError: boom\n\nAt:\n  %s(3): helper\n  %s(6): execute\n"
                    % (path, path))
    log = stub.expect(P.LOG)
    assert log["level"] == 2 and "boom" in log["message"]


def test_batch_error_decoupled_returns_list(stub, tmp_path):
    f = write_model(tmp_path, """
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def execute(self, requests):
                requests[0].get_response_sender().send(
                    flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                return [pb_utils.InferenceResponse() for _ in requests]
    """)
    assert stub.init(f, decoupled=True) == (None, "")
    stub.execute([{"rid": 1}, {"rid": 2}], wait=False)
    s1 = stub.expect(P.SEND)
    assert (s1["tag"], s1["flags"], s1["response"]) == (1, 1, None)
    msg = ("Failed to process the request(s) for model 'm_0_0', message: Python model 'm_0_0' is "
           "using the decoupled mode and the execute function must return None.")
    s2 = stub.expect(P.SEND)  # the still open request gets the error and FINAL
    assert s2["tag"] == 2 and s2["flags"] == 1
    assert (s2["response"].err_code, s2["response"].err_msg) == (1, msg)
    d = stub.expect(P.EXECUTE_DONE)
    assert d["error"] == (1, msg)


def test_returning_none_fails_requests_without_a_response(stub, tmp_path):
    # default mode: a None return fails every request whose sender was not taken
    assert _batch_error(stub, tmp_path, """
        class TritonPythonModel:
            def execute(self, requests):
                return None
    """) == "Expected a list in the execute return, found type '<class 'NoneType'>'."


def test_returning_none_after_sends(stub, tmp_path):
    f = write_model(tmp_path, """
        import threading, time
        import numpy as np
        import triton_python_backend_utils as pb_utils
        def out(v):
            return pb_utils.InferenceResponse([pb_utils.Tensor("O", np.array([v], np.int8))])
        def later(sender):
            time.sleep(0.2)
            sender.send(out(2), flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        class TritonPythonModel:
            def execute(self, requests):
                requests[0].get_response_sender().send(
                    out(1), flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                threading.Thread(target=later,
                                 args=(requests[1].get_response_sender(),)).start()
                return None
    """)
    assert stub.init(f) == (None, "")
    stub.execute([{"rid": 1}, {"rid": 2}, {"rid": 3}], wait=False)
    s1 = stub.expect(P.SEND)
    assert (s1["tag"], s1["flags"]) == (1, 1) and s1["response"].err_code is None
    s3 = stub.expect(P.SEND)  # rid 3: its sender was never taken
    assert (s3["tag"], s3["flags"]) == (3, 1)
    assert (s3["response"].err_code, s3["response"].err_msg) == (
        1, "Failed to process the request(s) for model 'm_0_0', message: Expected a list in "
           "the execute return, found type '<class 'NoneType'>'.")
    d = stub.expect(P.EXECUTE_DONE)
    assert d["error"] == (None, "") and d["responses"] == []
    s2 = stub.expect(P.SEND)  # rid 2: answered later by the model's thread
    assert (s2["tag"], s2["flags"]) == (2, 1) and s2["response"].err_code is None
    assert stub.outputs(s2["response"])["O"].tolist() == [2]


def test_import_errors_have_no_importlib_frames(zygote, tmp_path):
    s = Stub(zygote)
    f = write_model(tmp_path, "class TritonPythonModel(:\n    pass\n")
    assert s.init(f) == (1, "SyntaxError: invalid syntax (model.py, line 1)")
    s.close()
    s = Stub(zygote)
    f = write_model(tmp_path, """
        raise ValueError("at import")
        class TritonPythonModel:
            pass
    """, name="n")
    path = str(tmp_path / "n" / "1" / "model.py")
    assert s.init(f, name="n") == (1, "ValueError: at import\n\nAt:\n  %s(2): <module>\n"
                                      % path)
    s.close()


def test_edited_model_ignores_stale_bytecode(zygote, tmp_path):
    import py_compile
    src = """
        class TritonPythonModel:
            def initialize(self, args):
                raise ValueError("%s")
    """
    f = write_model(tmp_path, src % "v1")
    py_compile.compile(f)  # a __pycache__ as an earlier import would leave
    st = os.stat(f)
    write_model(tmp_path, src % "v2")  # same size
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))  # and same mtime
    s = Stub(zygote)
    code, msg = s.init(f)
    assert (code, msg.split("\n")[0]) == (1, "ValueError: v2")
    s.close()


def test_missing_execute_and_initialize_error(zygote, tmp_path):
    # Like Triton: no `execute` loads (initialize runs), then every batch fails.
    s = Stub(zygote)
    f = write_model(tmp_path, """
        class TritonPythonModel:
            def initialize(self, args):
                print("initialized", args["model_instance_name"])
    """)
    assert s.init(f) == (None, "")
    d = s.execute([{"rid": 1}, {"rid": 2}])
    assert d["responses"] == []
    assert d["error"] == (1, "Failed to process the request(s) for model 'm_0_0', message: "
                             "Python model %s does not implement `execute` method." % f)
    s.close()
    s = Stub(zygote)
    f = write_model(tmp_path, """
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def initialize(self, args):
                raise pb_utils.TritonModelException("bad init " + args["model_instance_name"])
            def execute(self, requests):
                pass
    """, name="n")
    code, msg = s.init(f, name="n")
    assert code == 1
    assert msg.startswith("TritonModelException: bad init n_0_0\n\nAt:\n")
    s.close()


def test_per_response_error(stub, tmp_path):
    f = write_model(tmp_path, """
        import numpy as np
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def execute(self, requests):
                return [pb_utils.InferenceResponse(error=pb_utils.TritonError(
                            "bad input", pb_utils.TritonError.INVALID_ARG)),
                        pb_utils.InferenceResponse(
                            [pb_utils.Tensor("O", np.array([1], np.int8))])]
    """)
    assert stub.init(f) == (None, "")
    d = stub.execute([{}, {}])
    assert d["error"] == (None, "")
    r0, r1 = d["responses"]
    assert (r0.err_code, r0.err_msg, r0.tensors) == (3, "bad input", [])
    assert r1.err_code is None and stub.outputs(r1)["O"].tolist() == [1]


def test_sender_rules_non_decoupled(stub, tmp_path):
    f = write_model(tmp_path, """
        import numpy as np
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def execute(self, requests):
                errs = []
                s = requests[0].get_response_sender()
                def attempt(*a, **k):
                    try:
                        s.send(*a, **k)
                    except pb_utils.TritonModelException as e:
                        errs.append(str(e))
                attempt(flags=1)
                attempt(flags=2)
                attempt()
                attempt(pb_utils.InferenceResponse(
                    [pb_utils.Tensor("E", np.array(errs, dtype=np.object_))]))
                attempt(pb_utils.InferenceResponse())
                attempt(flags=1)
                attempt(flags=1)
                pb_utils.Logger.log_info("|".join(errs[3:]))
                return None
    """)
    assert stub.init(f) == (None, "")
    stub.execute([{}], wait=False)
    s = stub.expect(P.SEND)
    assert s["flags"] == 0
    errs = [x.decode() for x in stub.outputs(s["response"])["E"]]
    assert errs == [
        "Unable to send response. Non-decoupled model cannot send complete final before "
        "sending a response.",
        "Unable to send response. Unsupported flag provided.",
        "Inference Response object must be provided when the response flags is set to "
        "zero.",
    ]
    s = stub.expect(P.SEND)
    assert (s["flags"], s["response"]) == (1, None)
    assert stub.expect(P.EXECUTE_DONE)["responses"] == []
    assert stub.expect(P.LOG)["message"] == (
        "Unable to send response. Non-decoupled model cannot send more than one response."
        "|Unable to send response. Response sender has been closed.")


ASYNC_MODEL = """
import asyncio
import numpy as np
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    async def execute(self, requests):
        await asyncio.sleep(0.01)
        return [pb_utils.InferenceResponse([pb_utils.Tensor("O", np.array([7], np.int32))])
                for _ in requests]
"""

ASYNC_DECOUPLED = """
import asyncio
import numpy as np
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    async def execute(self, requests):
        for r in requests:
            delay = float(r.inputs()[0].as_numpy()[0])
            await asyncio.sleep(delay)
            if delay < 0.05:
                raise RuntimeError("late failure")
            s = r.get_response_sender()
            s.send(pb_utils.InferenceResponse([pb_utils.Tensor("O", np.array([delay]))]),
                   flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
"""


def test_async_execute(stub, tmp_path):
    f = write_model(tmp_path, ASYNC_MODEL)
    assert stub.init(f) == (None, "")
    d = stub.execute([{}, {}])
    assert [stub.outputs(r)["O"].tolist() for r in d["responses"]] == [[7], [7]]


def test_async_decoupled_in_background(zygote, tmp_path):
    s = Stub(zygote)
    f = write_model(tmp_path, ASYNC_DECOUPLED)
    assert s.init(f, decoupled=True) == (None, "")
    t0 = time.time()
    s.execute([{"rid": 1, "inputs": [("D", np.array([0.3]))]}])  # returns at once
    s.execute([{"rid": 2, "inputs": [("D", np.array([0.2]))]}])
    s.execute([{"rid": 3, "inputs": [("D", np.array([0.01]))]}])
    assert time.time() - t0 < 0.2
    got = [s.expect(P.SEND) for _ in range(3)]
    assert [g["tag"] for g in got] == [3, 2, 1]
    assert got[0]["response"].err_code == 1
    assert "RuntimeError: late failure" in got[0]["response"].err_msg
    assert s.outputs(got[1]["response"])["O"].tolist() == [0.2]
    s.close()


BLS_MODEL = """
import numpy as np
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def initialize(self, args):
        try:
            pb_utils.InferenceRequest(model_name="x", inputs=[],
                                      requested_output_names=[]).exec()
        except pb_utils.TritonModelException as e:
            pb_utils.Logger.log_info(str(e))

    def execute(self, requests):
        out = []
        for r in requests:
            x = r.inputs()[0]
            breq = pb_utils.InferenceRequest(
                model_name="add_sub", requested_output_names=["OUTPUT0"],
                inputs=[pb_utils.Tensor("INPUT0", x.as_numpy()), x],
                parameters={"p": True}, correlation_id="c1", timeout=5)
            bresp = breq.exec()
            if bresp.has_error():
                out.append(pb_utils.InferenceResponse(error=bresp.error()))
                continue
            o = pb_utils.get_output_tensor_by_name(bresp, "OUTPUT0")
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("R", o.as_numpy() * 2)]))
        return out
"""


def test_bls_round_trip(stub, tmp_path):
    f = write_model(tmp_path, BLS_MODEL)
    assert stub.init(f) == (None, "")
    assert stub.expect(P.LOG)["message"] == \
        "BLS is only supported during the 'execute' function."
    x = np.array([1.5, 2.5], dtype=np.float32)
    stub.execute([{"inputs": [("X", x)]}], wait=False)
    b = stub.expect(P.BLS)
    assert b["model_name"] == "add_sub" and b["model_version"] == -1
    assert b["decoupled"] is False and b["outputs"] == ["OUTPUT0"]
    assert (b["corr_kind"], b["corr_str"], b["timeout_us"]) == (2, "c1", 5)
    assert json.loads(b["parameters"]) == {"p": True}
    ins = {t.name: stub.tensor(t) for t in b["inputs"]}
    np.testing.assert_array_equal(ins["INPUT0"], x)
    np.testing.assert_array_equal(ins["X"], x)
    # answer: one response with OUTPUT0 = in + 1, then a final flag
    block, wires = stub.write_block([[("OUTPUT0", ins["INPUT0"] + 1)]])
    stub.send(P.enc_bls_response(b["tag"], False, (None, "", "", wires[0]), block))
    stub.send(P.enc_bls_response(b["tag"], True))
    d = stub.expect(P.EXECUTE_DONE)
    np.testing.assert_array_equal(stub.outputs(d["responses"][0])["R"], (x + 1) * 2)
    stub.wait_release(block)
    # an error response
    stub.execute([{"inputs": [("X", x)]}], wait=False)
    b = stub.expect(P.BLS)
    stub.send(P.enc_bls_response(b["tag"], True, (2, "model 'add_sub' not found", "", [])))
    d = stub.expect(P.EXECUTE_DONE)
    r = d["responses"][0]
    assert (r.err_code, r.err_msg) == (2, "model 'add_sub' not found")


BLS_DECOUPLED = """
import asyncio
import numpy as np
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    async def execute(self, requests):
        r = requests[0]
        req = pb_utils.InferenceRequest(model_name="repeat", inputs=list(r.inputs()),
                                        requested_output_names=["OUT"])
        it = req.exec(decoupled=True)
        vals = []
        for resp in it:
            if not resp.output_tensors():
                vals.append(-1)  # the empty FINAL response is yielded too
                continue
            vals.append(int(resp.output_tensors()[0].as_numpy()[0]))
            if len(vals) == 2:
                it.cancel()
        a, b = await asyncio.gather(req.async_exec(), req.async_exec())
        vals.append(int(a.output_tensors()[0].as_numpy()[0]))
        vals.append(int(b.output_tensors()[0].as_numpy()[0]))
        return [pb_utils.InferenceResponse([pb_utils.Tensor("V", np.array(vals))])]
"""


def test_bls_decoupled_cancel_and_async(stub, tmp_path):
    f = write_model(tmp_path, BLS_DECOUPLED)
    assert stub.init(f) == (None, "")
    stub.execute([{"inputs": [("N", np.array([5], np.int32))]}], wait=False)
    b = stub.expect(P.BLS)
    assert b["decoupled"] is True
    for i in range(2):
        block, w = stub.write_block([[("OUT", np.array([i], np.int32))]])
        stub.send(P.enc_bls_response(b["tag"], False, (None, "", "", w[0]), block))
    c = stub.expect(P.BLS_CANCEL)
    assert c["tag"] == b["tag"]
    stub.send(P.enc_bls_response(b["tag"], True, (None, "", "", [])))  # empty final
    b1 = stub.expect(P.BLS)
    b2 = stub.expect(P.BLS)
    for bb, v in ((b2, 20), (b1, 10)):
        block, w = stub.write_block([[("OUT", np.array([v], np.int32))]])
        stub.send(P.enc_bls_response(bb["tag"], True, (None, "", "", w[0]), block))
    d = stub.expect(P.EXECUTE_DONE)
    assert stub.outputs(d["responses"][0])["V"].tolist() == [0, 1, -1, 10, 20]


def test_is_cancelled_round_trip(stub, tmp_path):
    f = write_model(tmp_path, """
        import numpy as np
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def execute(self, requests):
                v = [requests[0].is_cancelled(),
                     requests[0].get_response_sender().is_cancelled()]
                return [pb_utils.InferenceResponse([pb_utils.Tensor("C", np.array(v))])]
    """)
    assert stub.init(f) == (None, "")
    stub.execute([{"rid": 42}], wait=False)
    for answer in (True, False):
        q = stub.expect(P.IS_CANCELLED)
        assert q["rid"] == 42
        stub.send(P.frame(P.REPLY, q["tag"], [b"\x01" if answer else b"\x00"]))
    d = stub.expect(P.EXECUTE_DONE)
    assert stub.outputs(d["responses"][0])["C"].tolist() == [True, False]


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
    assert [(s["tag"], s["flags"]) for s in sends] == [(1, 1), (2, 0), (2, 1), (3, 1)]
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
                raw = np.from_dlpack(t)
                return [pb_utils.InferenceResponse([
                    pb_utils.Tensor("MSG", np.array([msg], dtype=object)),
                    pb_utils.Tensor("RAW", raw), t])]
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
    assert {t.name: t.dtype for t in r.tensors}["B"] == 14


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
