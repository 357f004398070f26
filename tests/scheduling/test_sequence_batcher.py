"""The sequence batcher (direct strategy) seen from tritonclient: a Python
accumulator keeps a running sum per correlation id using the control inputs
the batcher adds (START int32, END fp32, READY bool, CORRID); interleaved
sequences get their own sums over HTTP and gRPC (integer and string ids);
requests without a correlation id, or for a sequence never started or
released after its idle time, are refused with Triton's texts.

Each test starts its own server.
"""

import threading
import time

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from models import ModelSpec, Tensor

ACCUMULATOR_PY = '''
import numpy as np
import triton_python_backend_utils as pb_utils


def _value(request, name):
    return pb_utils.get_input_tensor_by_name(request, name).as_numpy().flatten()[0]


class TritonPythonModel:
    def initialize(self, args):
        self.sums = {}

    def execute(self, requests):
        responses = []
        for request in requests:
            start = int(_value(request, "START"))
            end = float(_value(request, "END"))
            ready = bool(_value(request, "READY"))
            key = 0  # one running sum without a CORRID control
            if pb_utils.get_input_tensor_by_name(request, "CORRID") is not None:
                corrid = _value(request, "CORRID")
                key = corrid.decode() if isinstance(corrid, bytes) else int(corrid)
            if start:
                self.sums[key] = 0
            total = self.sums.get(key, 0) + int(_value(request, "INPUT0"))
            self.sums[key] = total
            if end:
                self.sums.pop(key, None)
            flags = np.array([[start, int(end), int(ready)]], dtype=np.int32)
            outputs = [
                pb_utils.Tensor("OUTPUT0", np.array([[total]], dtype=np.int32)),
                pb_utils.Tensor("FLAGS", flags),
            ]
            responses.append(pb_utils.InferenceResponse(outputs))
        return responses
'''


def accumulator(name, corrid_type="TYPE_UINT64", max_batch_size=4, extra=""):
    """A Python accumulator with the control inputs (no CORRID when
    `corrid_type` is None)."""
    corrid = ""
    if corrid_type:
        corrid = (f',\n    {{ name: "CORRID" control [ {{ kind: CONTROL_SEQUENCE_CORRID '
                  f'data_type: {corrid_type} }} ] }}')
    sequence = f"""sequence_batching {{
  {extra}
  control_input [
    {{ name: "START" control [ {{ kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] }} ] }},
    {{ name: "END" control [ {{ kind: CONTROL_SEQUENCE_END fp32_false_true: [ 0, 1 ] }} ] }},
    {{ name: "READY" control [ {{ kind: CONTROL_SEQUENCE_READY bool_false_true: [ false, true ] }} ] }}{corrid}
  ]
}}"""
    return ModelSpec(
        name,
        [Tensor("INPUT0", "INT32", [1])],
        outputs=[Tensor("OUTPUT0", "INT32", [1]), Tensor("FLAGS", "INT32", [3])],
        max_batch_size=max_batch_size,
        python_only=True,
        files={"1/model.py": ACCUMULATOR_PY},
        extra_config=sequence,
    )


def _send(client, module, model, value, **sequence):
    inp = module.InferInput("INPUT0", [1, 1], "INT32")
    inp.set_data_from_numpy(np.array([[value]], dtype=np.int32))
    result = client.infer(model, [inp], **sequence)
    flags = result.as_numpy("FLAGS")[0].tolist()
    return int(result.as_numpy("OUTPUT0")[0][0]), flags


def _run_interleaved(client, module, model, ids):
    """Three requests per sequence, the sequences interleaved request by
    request; returns each response's (sum, flags) per id."""
    values = {cid: [k + 1, 10 * (k + 1), 100 * (k + 1)] for k, cid in enumerate(ids)}
    seen = {cid: [] for cid in ids}
    for step in range(3):
        for cid in ids:
            flags = {"sequence_start": step == 0, "sequence_end": step == 2}
            seen[cid].append(_send(client, module, model, values[cid][step],
                                   sequence_id=cid, **flags))
    return values, seen


def _check_sums(values, seen):
    for cid, got in seen.items():
        v = values[cid]
        assert [total for total, _ in got] == [v[0], v[0] + v[1], sum(v)], cid
        assert [flags for _, flags in got] == [[1, 0, 1], [0, 0, 1], [0, 1, 1]], cid


def test_interleaved_sequences_accumulate_over_http(start_server):
    server = start_server([accumulator("accum")])
    client = httpclient.InferenceServerClient(server.url)
    try:
        values, seen = _run_interleaved(client, httpclient, "accum", [1001, 1002, 1003])
        _check_sums(values, seen)
    finally:
        client.close()


def test_interleaved_sequences_accumulate_over_grpc(start_server):
    server = start_server([accumulator("accum")])
    client = grpcclient.InferenceServerClient(server.grpc_url)
    try:
        values, seen = _run_interleaved(client, grpcclient, "accum", [7, 8, 9])
        _check_sums(values, seen)
    finally:
        client.close()


def test_string_sequence_ids_over_grpc(start_server):
    """String ids on a model without CORRID (one running sum): each
    sequence starts from zero and is routed like an integer one."""
    server = start_server([accumulator("accum_one", corrid_type=None, max_batch_size=1)])
    client = grpcclient.InferenceServerClient(server.grpc_url)
    try:
        for cid in ("first", "second"):
            totals = [
                _send(client, grpcclient, "accum_one", value, sequence_id=cid,
                      sequence_start=step == 0, sequence_end=step == 2)[0]
                for step, value in enumerate((1, 2, 3))
            ]
            assert totals == [1, 3, 6], cid
    finally:
        client.close()


@pytest.mark.oxiserve_only
def test_interleaved_string_sequences_reach_the_model_as_corrid(start_server):
    """A TYPE_STRING CORRID control: the model sees each string id. Real
    Triton 2.51 refuses every such request ("unexpected number of string
    elements 2 for inference input 'CORRID', expecting 1"), a Triton bug."""
    server = start_server([accumulator("accum_str", corrid_type="TYPE_STRING")])
    client = grpcclient.InferenceServerClient(server.grpc_url)
    try:
        values, seen = _run_interleaved(client, grpcclient, "accum_str", ["a", "bb", "ccc"])
        _check_sums(values, seen)
    finally:
        client.close()


def test_more_sequences_than_slots_wait_for_a_free_slot(start_server):
    """Six concurrent sequences on two slots: the later ones wait until a
    sequence ends, and every sequence still gets its own sum."""
    server = start_server([accumulator("accum2", max_batch_size=2)])
    errors = []
    totals = {}

    def run(cid):
        client = httpclient.InferenceServerClient(server.url)
        try:
            last = None
            for step in range(4):
                flags = {"sequence_start": step == 0, "sequence_end": step == 3}
                last, _ = _send(client, httpclient, "accum2", cid + step,
                                sequence_id=cid, **flags)
            totals[cid] = last
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            client.close()

    threads = [threading.Thread(target=run, args=(cid,)) for cid in range(1, 7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert totals == {cid: 4 * cid + 6 for cid in range(1, 7)}


def test_requests_without_correlation_id_are_refused(start_server):
    server = start_server([accumulator("accum")])
    http = httpclient.InferenceServerClient(server.url)
    grpc = grpcclient.InferenceServerClient(server.grpc_url)
    try:
        for client, module in ((http, httpclient), (grpc, grpcclient)):
            with pytest.raises(InferenceServerException) as err:
                _send(client, module, "accum", 1, sequence_start=True)
            assert ("inference request to model 'accum' must specify a non-zero or "
                    "non-empty correlation ID") in err.value.message()
            assert err.value.status() in ("400", "StatusCode.INVALID_ARGUMENT")
    finally:
        http.close()
        grpc.close()


def test_a_sequence_never_started_is_refused(start_server):
    server = start_server([accumulator("accum")])
    client = httpclient.InferenceServerClient(server.url)
    try:
        with pytest.raises(InferenceServerException) as err:
            _send(client, httpclient, "accum", 1, sequence_id=77)
        assert ("inference request for sequence 77 to model 'accum' must specify the "
                "START flag on the first request of the sequence") in err.value.message()
        assert err.value.status() == "400"
    finally:
        client.close()


def test_an_idle_sequence_is_released(start_server):
    """One slot, 200 ms idle time: a sequence that goes quiet loses its slot
    (a new sequence gets it) and its late request is refused."""
    spec = accumulator("accum_idle", max_batch_size=1,
                       extra="max_sequence_idle_microseconds: 200000")
    server = start_server([spec])
    client = grpcclient.InferenceServerClient(server.grpc_url)
    try:
        assert _send(client, grpcclient, "accum_idle", 5, sequence_id=1,
                     sequence_start=True)[0] == 5
        time.sleep(1.5)
        # The only slot is free again: a second sequence runs at once.
        assert _send(client, grpcclient, "accum_idle", 7, sequence_id=2,
                     sequence_start=True, sequence_end=True)[0] == 7
        with pytest.raises(InferenceServerException) as err:
            _send(client, grpcclient, "accum_idle", 1, sequence_id=1)
        assert ("inference request for sequence 1 to model 'accum_idle' must specify "
                "the START flag") in err.value.message()
        assert err.value.status() == "StatusCode.INVALID_ARGUMENT"
    finally:
        client.close()



def test_a_batch_of_two_is_refused(start_server):
    server = start_server([accumulator("accum")])
    client = httpclient.InferenceServerClient(server.url)
    try:
        inp = httpclient.InferInput("INPUT0", [2, 1], "INT32")
        inp.set_data_from_numpy(np.array([[1], [2]], dtype=np.int32))
        with pytest.raises(InferenceServerException) as err:
            client.infer("accum", [inp], sequence_id=5, sequence_start=True)
        assert ("inference request to model 'accum' must specify batch-size 1 due to "
                "requirements of sequence batcher") in err.value.message()
        assert err.value.status() == "400"
    finally:
        client.close()
