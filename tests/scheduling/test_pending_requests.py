"""nv_inference_pending_request_count as Triton 2.51 counts it: a request is
pending from the moment its model's scheduler accepts it until an instance
starts executing it. The models here are gated (gated.py): each execution
waits until the test releases it, so every reading is taken in a known state
(which executions started, which requests were answered), after Triton's
qa/L0_metrics/metrics_queue_size_test.py. A Python instance may already hold
the next batch while it executes one; that batch is still pending, as the
payload Triton's batcher prepared for a busy instance is."""

import pytest

from gated import Ensemble, Gate, Sender, answer, gated_model, ids, pending, wait_pending
from python_models import serve

MODELS = {
    "pending_default": "",
    "pending_dynamic": "dynamic_batching { }\n",
    # Sequences keep their slots however long the test holds them.
    "pending_sequence": (
        "sequence_batching { max_sequence_idle_microseconds: 600000000 direct { } }\n"),
    "pending_member": "",
}


@pytest.fixture(scope="module")
def gates(tmp_path_factory):
    root = tmp_path_factory.mktemp("pending_gates")
    gates = {name: Gate(root / name) for name in MODELS}
    yield gates
    for gate in gates.values():  # nothing waits when the server stops
        gate.release_all()


@pytest.fixture(scope="module")
def server(tmp_path_factory, gates):
    models = [gated_model(name, gates[name], 4, extra) for name, extra in MODELS.items()]
    models.append(Ensemble(
        "pending_ensemble", [("INPUT0", "FP32", [1])], [("OUTPUT0", "FP32", [1])],
        [("pending_member", {"INPUT0": "INPUT0"}, {"OUTPUT0": "OUTPUT0"})],
        max_batch_size=4))
    with serve(tmp_path_factory.mktemp("pending"), models) as server:
        yield server


def _release(gate, number, futures):
    """Releases execution `number` and waits for its requests' answers."""
    gate.release(number)
    for future in futures:
        answer(future)


def test_default_scheduler_counts_all_but_the_executing_request(server, gates):
    model, gate = "pending_default", gates["pending_default"]
    sender = Sender(server, model)
    assert pending(server, model) == 0
    futures = [sender.send(0)]
    assert gate.batch(1)["requests"] == 1
    assert pending(server, model) == 0
    futures += [sender.send(n, pending_after=n) for n in range(1, 5)]
    for number in range(1, 5):
        _release(gate, number, [futures[number - 1]])
        assert ids(gate.batch(number + 1)) == [number], "one request per execution"
        assert pending(server, model) == 4 - number
    _release(gate, 5, [futures[4]])
    assert pending(server, model) == 0
    assert gate.started() == 5
    sender.close()


def test_dynamic_batcher_counts_the_requests_waiting_for_a_busy_instance(server, gates):
    """Requests arriving one by one while the instance is busy wait in one
    batch that grows to max_batch_size (4), then in the next; both are
    pending until the instance starts them."""
    model, gate = "pending_dynamic", gates["pending_dynamic"]
    sender = Sender(server, model)
    futures = [sender.send(0)]
    assert gate.batch(1)["requests"] == 1
    assert pending(server, model) == 0
    futures += [sender.send(n, pending_after=n) for n in range(1, 9)]
    _release(gate, 1, futures[:1])
    assert ids(gate.batch(2)) == [1, 2, 3, 4]
    assert pending(server, model) == 4
    _release(gate, 2, futures[1:5])
    assert ids(gate.batch(3)) == [5, 6, 7, 8]
    assert pending(server, model) == 0
    _release(gate, 3, futures[5:])
    assert pending(server, model) == 0
    assert gate.started() == 3
    sender.close()


def test_sequence_batcher_counts_the_requests_in_its_slots(server, gates):
    """The direct strategy with four slots: each execution takes the next
    request of every sequence that has one."""
    model, gate = "pending_sequence", gates["pending_sequence"]
    sender = Sender(server, model)
    futures = [sender.send(0, sequence_id=1, sequence_start=True)]
    assert gate.batch(1)["requests"] == 1
    assert pending(server, model) == 0
    # (request number, sequence, starts it)
    plan = [(1, 1, False), (2, 2, True), (3, 3, True), (4, 4, True),
            (5, 2, False), (6, 3, False), (7, 4, False), (8, 1, False)]
    for number, sequence, start in plan:
        futures.append(sender.send(number, pending_after=number, sequence_id=sequence,
                                   sequence_start=start))
    _release(gate, 1, futures[:1])
    assert ids(gate.batch(2)) == [1, 2, 3, 4]
    assert pending(server, model) == 4
    _release(gate, 2, futures[1:5])
    assert ids(gate.batch(3)) == [5, 6, 7, 8]
    assert pending(server, model) == 0
    _release(gate, 3, futures[5:])
    assert pending(server, model) == 0
    sender.close()


def test_an_ensemble_counts_nothing_its_member_counts_its_steps(server, gates):
    gate = gates["pending_member"]
    sender = Sender(server, "pending_ensemble")
    futures = [sender.send(0)]
    assert gate.batch(1)["requests"] == 1
    futures += [sender.send(n) for n in range(1, 4)]
    wait_pending(server, "pending_member", 3)
    assert pending(server, "pending_ensemble") == 0
    gate.release_all()
    assert [answer(f) for f in futures] == [0, 1, 2, 3]
    assert pending(server, "pending_member") == 0
    assert pending(server, "pending_ensemble") == 0
    sender.close()
