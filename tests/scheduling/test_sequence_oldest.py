"""The sequence batcher's oldest strategy seen from tritonclient
(`sequence_batching { oldest { ... } }`): concurrent sequences share
batches, one request per sequence per batch, and each keeps its own running
sum; no more than `max_candidate_sequences` sequences batch together, the
others wait for one to end; implicit state (ONNX, several instances) carries
each sequence's sum; requests without a correlation id or a START are
refused with Triton's texts.

A Python accumulator keeps one sum per CORRID and reports, with each
response, the size of the batch it came in and how many sequences that
batch held. Each test starts its own server.
"""

import threading

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from onnx import helper
from tritonclient.utils import InferenceServerException

from models import ModelSpec, Tensor
from onnx_models import OnnxModel, make_proto
from servers import TARGET, Server

OLDEST_ACCUMULATOR_PY = '''
import numpy as np
import triton_python_backend_utils as pb_utils


def _value(request, name):
    return pb_utils.get_input_tensor_by_name(request, name).as_numpy().flatten()[0]


class TritonPythonModel:
    def initialize(self, args):
        self.sums = {}

    def execute(self, requests):
        corrids = [int(_value(r, "CORRID")) for r in requests]
        totals = []
        for request, corrid in zip(requests, corrids):
            if int(_value(request, "START")):
                self.sums[corrid] = 0
            totals.append(self.sums.get(corrid, 0) + int(_value(request, "INPUT0")))
            self.sums[corrid] = totals[-1]
        # The batch's size, the sequences in it, the sequences in progress.
        batch = [len(requests), len(set(corrids)), len(self.sums)]
        for request, corrid in zip(requests, corrids):
            if float(_value(request, "END")):
                self.sums.pop(corrid, None)
        responses = []
        for total in totals:
            outputs = [
                pb_utils.Tensor("OUTPUT0", np.array([[total]], dtype=np.int32)),
                pb_utils.Tensor("BATCH", np.array([batch], dtype=np.int32)),
            ]
            responses.append(pb_utils.InferenceResponse(outputs))
        return responses
'''


def accumulator(name, oldest, max_batch_size=4):
    """The Python accumulator with START, END, READY and CORRID controls and
    the `oldest { ... }` settings given."""
    sequence = f"""sequence_batching {{
  max_sequence_idle_microseconds: 10000000
  oldest {{ {oldest} }}
  control_input [
    {{ name: "START" control [ {{ kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] }} ] }},
    {{ name: "END" control [ {{ kind: CONTROL_SEQUENCE_END fp32_false_true: [ 0, 1 ] }} ] }},
    {{ name: "READY" control [ {{ kind: CONTROL_SEQUENCE_READY bool_false_true: [ false, true ] }} ] }},
    {{ name: "CORRID" control [ {{ kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 }} ] }}
  ]
}}"""
    return ModelSpec(
        name,
        [Tensor("INPUT0", "INT32", [1])],
        outputs=[Tensor("OUTPUT0", "INT32", [1]), Tensor("BATCH", "INT32", [3])],
        max_batch_size=max_batch_size,
        python_only=True,
        files={"1/model.py": OLDEST_ACCUMULATOR_PY},
        extra_config=sequence,
    )


def _send(client, module, model, value, **sequence):
    inp = module.InferInput("INPUT0", [1, 1], "INT32")
    inp.set_data_from_numpy(np.array([[value]], dtype=np.int32))
    result = client.infer(model, [inp], **sequence)
    batch = result.as_numpy("BATCH")[0].tolist()
    return int(result.as_numpy("OUTPUT0")[0][0]), batch


def _run_concurrently(url, model, ids, steps=4):
    """One thread per sequence, each sending `steps` requests in turn (value
    corrid + step); returns each sequence's sums and every (batch size,
    sequences in it, sequences in progress) the model reported."""
    sums = {}
    batches = []
    errors = []

    def run(cid):
        client = httpclient.InferenceServerClient(url)
        try:
            got = []
            for step in range(steps):
                flags = {"sequence_start": step == 0, "sequence_end": step == steps - 1}
                total, batch = _send(client, httpclient, model, cid + step,
                                     sequence_id=cid, **flags)
                got.append(total)
                batches.append(batch)
            sums[cid] = got
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            client.close()

    threads = [threading.Thread(target=run, args=(cid,)) for cid in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    return sums, batches


def _expected(ids, steps=4):
    return {cid: [sum(cid + k for k in range(n + 1)) for n in range(steps)] for cid in ids}


def test_concurrent_sequences_share_batches_one_request_each(start_server):
    """Four candidate sequences, batches of two: all four are in progress at
    once, their requests share batches, one request per sequence each."""
    spec = accumulator("oldest4", "max_candidate_sequences: 4 preferred_batch_size: [ 2 ] "
                                  "max_queue_delay_microseconds: 3000000", max_batch_size=2)
    server = start_server([spec])
    ids = [100, 200, 300, 400]
    sums, batches = _run_concurrently(server.url, "oldest4", ids)
    assert sums == _expected(ids)
    assert all(size == sequences <= 2 for size, sequences, _ in batches), batches
    assert max(active for _, _, active in batches) == 4, batches
    with httpclient.InferenceServerClient(server.url) as client:
        (entry,) = client.get_inference_statistics("oldest4")["model_stats"]
    assert entry["inference_count"] == 16
    assert entry["execution_count"] < entry["inference_count"], entry


def test_sequences_beyond_the_candidates_wait_for_one_to_end(start_server):
    """Two candidate sequences of four, batches of up to four: no more than
    two sequences are ever in progress or in a batch, and every sum is right."""
    spec = accumulator("oldest2", "max_candidate_sequences: 2 preferred_batch_size: [ 4 ] "
                                  "max_queue_delay_microseconds: 100000")
    server = start_server([spec])
    ids = [1, 2, 3, 4]
    sums, batches = _run_concurrently(server.url, "oldest2", ids)
    assert sums == _expected(ids)
    assert all(size == sequences for size, sequences, _ in batches), batches
    assert max(active for _, _, active in batches) == 2, batches


def test_requests_without_an_id_or_a_start_are_refused(start_server):
    server = start_server([accumulator("oldest_err", "max_candidate_sequences: 2")])
    http = httpclient.InferenceServerClient(server.url)
    grpc = grpcclient.InferenceServerClient(server.grpc_url)
    try:
        for client, module in ((http, httpclient), (grpc, grpcclient)):
            with pytest.raises(InferenceServerException) as err:
                _send(client, module, "oldest_err", 1, sequence_start=True)
            assert ("inference request to model 'oldest_err' must specify a non-zero or "
                    "non-empty correlation ID") in err.value.message()
            assert err.value.status() in ("400", "StatusCode.INVALID_ARGUMENT")
        with pytest.raises(InferenceServerException) as err:
            _send(http, httpclient, "oldest_err", 1, sequence_id=55)
        assert ("inference request for sequence 55 to model 'oldest_err' must specify the "
                "START flag on the first request of the sequence") in err.value.message()
        # The model still serves a proper sequence.
        assert _send(grpc, grpcclient, "oldest_err", 7, sequence_id=55,
                     sequence_start=True, sequence_end=True)[0] == 7
    finally:
        http.close()
        grpc.close()


def onnx_accumulator(name):
    """SUM_OUT = SUM_IN + X and OUT = SUM_OUT, INT32 [N, 1], its sum kept as
    implicit state."""
    shape = ("N", 1)
    proto = make_proto(
        [helper.make_node("Add", ["SUM_IN", "X"], ["SUM_OUT"]),
         helper.make_node("Identity", ["SUM_OUT"], ["OUT"])],
        [("X", "INT32", shape), ("SUM_IN", "INT32", shape)],
        [("OUT", "INT32", shape), ("SUM_OUT", "INT32", shape)],
    )
    return OnnxModel(name, proto, [("X", "INT32", shape)], [("OUT", "INT32", shape)])


@pytest.mark.skipif(TARGET == "triton", reason="the real Triton here has no onnxruntime backend")
def test_implicit_state_follows_each_sequence_on_two_instances(tmp_path):
    """Six sequences on two instances of two candidates each: every request
    gets the sum its sequence's previous request left, though sequences
    share executions."""
    model = onnx_accumulator("oldest_state")
    sequence = """sequence_batching {
  max_sequence_idle_microseconds: 10000000
  oldest { max_candidate_sequences: 2 preferred_batch_size: [ 2 ] max_queue_delay_microseconds: 100000 }
  state [ { input_name: "SUM_IN" output_name: "SUM_OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
}"""
    model.write(tmp_path, model.config(4, sequence, count=2))
    with Server(tmp_path) as server:
        _check_onnx_sequences(server)


def _check_onnx_sequences(server):
    ids = [10, 20, 30, 40, 50, 60]
    sums = {}
    errors = []

    def run(cid):
        try:
            with grpcclient.InferenceServerClient(server.grpc_url) as client:
                got = []
                for step in range(4):
                    x = grpcclient.InferInput("X", [1, 1], "INT32")
                    x.set_data_from_numpy(np.array([[cid + step]], np.int32))
                    result = client.infer("oldest_state", [x], sequence_id=cid,
                                          sequence_start=step == 0, sequence_end=step == 3)
                    got.append(int(result.as_numpy("OUT")[0][0]))
                sums[cid] = got
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(cid,)) for cid in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert sums == _expected(ids)
    with httpclient.InferenceServerClient(server.url) as client:
        (entry,) = client.get_inference_statistics("oldest_state")["model_stats"]
    assert entry["inference_count"] == 24
    assert entry["execution_count"] < entry["inference_count"], entry
