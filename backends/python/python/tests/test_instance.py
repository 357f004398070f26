"""One instance process: execute, tensors, frames byte for byte, batch and response errors, senders."""

import json
import os

import numpy as np

from harness import Stub, write_model
from oxiserve_stub import protocol as P
from sample_models import ADD_SUB


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
    body_out = (b"\xff\xff\xff\xff" + b"\x00" * 4 + b"\x01\x00\x00\x00"
                + b"\xff" * 8                      # no block: no tensors
                + resp)
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
    assert s2["tag"] == 2 and s2["flags"] == P.FLAG_FINAL | P.FLAG_FAILED
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
    assert (s3["tag"], s3["flags"]) == (3, P.FLAG_FINAL | P.FLAG_FAILED)
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


STREAM = """
import numpy as np
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def execute(self, requests):
        for r in requests:
            sender = r.get_response_sender()
            for i in range(int(r.inputs()[0].as_numpy()[0])):
                sender.send(pb_utils.InferenceResponse(
                    [pb_utils.Tensor("OUT", np.array([i], dtype=np.int32))]))
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
"""


def test_both_directions_full_at_once(stub, tmp_path):
    """A model streams responses from `execute` (the main thread never waits to read)
    while the server writes more than a socket holds without reading: the stub must read
    while its own writes are blocked, or both sides wait for each other forever."""
    f = write_model(tmp_path, STREAM)
    assert stub.init(f, decoupled=True) == (None, "")
    n = 30000  # ~2 MB of Send frames: more than the socket buffers
    stub.execute([{"rid": 5, "inputs": [("N", np.array([n], dtype=np.int32))]}], wait=False)
    # 4 MB of Release frames for blocks that do not exist (the stub ignores them)
    junk = b"".join(P.enc_release([(1 << 40) + 64 * i for i in range(64)])
                    for _ in range(8000))
    stub.sock.settimeout(30)
    try:
        stub.send(junk)  # blocks until the stub reads; a deadlock times out
    finally:
        stub.sock.settimeout(None)
    got = 0
    while True:
        s = stub.expect(P.SEND)
        if s["response"] is not None:
            got += 1
            stub.outputs(s["response"])
        if s["flags"] == P.FLAG_FINAL:
            break
    assert got == n
    stub.expect(P.EXECUTE_DONE)


def test_rescheduled_requests_precede_execute_done(stub, tmp_path):
    """Requests released with TRITONSERVER_REQUEST_RELEASE_RESCHEDULE (None in the returned
    list, or any request of a decoupled model) are named in a Reschedule frame before the
    batch's ExecuteDone; a response returned for one fails the batch (Triton's text), and
    then nothing is rescheduled."""
    f = write_model(tmp_path, """
        import numpy as np
        import triton_python_backend_utils as pb_utils
        RESCHEDULE = pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE
        class TritonPythonModel:
            def execute(self, requests):
                out = []
                for r in requests:
                    mode = r.request_id()
                    if mode.startswith("again"):
                        r.set_release_flags(RESCHEDULE)
                    out.append(None if mode == "again" else pb_utils.InferenceResponse(
                        [pb_utils.Tensor("O", np.array([1], np.int8))]))
                return out
    """)
    assert stub.init(f) == (None, "")
    stub.execute([{"rid": 1, "request_id": "again"}, {"rid": 2, "request_id": "done"}],
                 wait=False)
    frames = [stub.recv()]
    while frames[-1]["kind"] != P.EXECUTE_DONE:
        frames.append(stub.recv())
    assert [(d["kind"], d["tag"]) for d in frames] == [
        (P.SEND, 2), (P.RESCHEDULE, 0), (P.EXECUTE_DONE, stub.next_batch)]
    assert frames[1]["rids"] == [1]
    assert frames[2]["error"] == (None, "") and frames[2]["responses"] == []
    stub.execute([{"rid": 3, "request_id": "again_but_answered"}], wait=False)
    d = stub.expect(P.EXECUTE_DONE)
    assert d["error"][0] == 1
    assert d["error"][1].startswith(
        "Failed to process the request(s) for model 'm_0_0', message: Expected a None "
        "object in the execute function return list for reschduled request, found type")
    assert all(p["kind"] != P.RESCHEDULE for p in stub.pending)
