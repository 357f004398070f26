"""Calls out of a running model: async execute, BLS, is_cancelled."""

import json
import time

import numpy as np

from harness import Stub, write_model
from oxiserve_stub import protocol as P


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
    assert b["parent_rid"] == 0  # no trace=request.trace()
    ins = {t.name: stub.tensor(t) for t in b["inputs"]}
    stub.release_block(b["block"])
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


BLS_TRACED = """
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def execute(self, requests):
        out = []
        for r in requests:
            call = pb_utils.InferenceRequest(model_name="m", requested_output_names=[],
                                             inputs=[r.inputs()[0]], trace=r.trace())
            call.exec()
            out.append(pb_utils.InferenceResponse([]))
        return out
"""


def test_bls_with_the_request_trace_names_the_request(stub, tmp_path):
    """trace=request.trace(): the BLS frame names the request whose trace it joins."""
    assert stub.init(write_model(tmp_path, BLS_TRACED)) == (None, "")
    x = np.array([1.0], dtype=np.float32)
    stub.execute([{"rid": 7, "inputs": [("X", x)]}], wait=False)
    b = stub.expect(P.BLS)
    assert b["parent_rid"] == 7
    stub.release_block(b["block"])
    stub.send(P.enc_bls_response(b["tag"], True))
    stub.expect(P.EXECUTE_DONE)


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
