"""Batch formation as Triton 2.51 does it, after its qa/L0_batcher: with
`max_queue_delay_microseconds: 0` and a busy instance, the requests that
queue while it works go out together when it frees up. Twelve single
requests against one gated instance (max batch 100) take two executions:
the first request alone, then the eleven that queued behind it."""

import pytest

from gated import Gate, Sender, answer, gated_model, ids
from python_models import serve


@pytest.fixture
def gated(tmp_path):
    gate = Gate(tmp_path / "gate")
    model = gated_model(
        "formation", gate, 100, "dynamic_batching { max_queue_delay_microseconds: 0 }\n")
    try:
        with serve(tmp_path / "repo", [model]) as server:
            yield server, gate
    finally:
        gate.release_all()


def test_requests_queued_behind_a_busy_instance_go_out_together(gated):
    server, gate = gated
    sender = Sender(server, "formation")
    futures = [sender.send(0)]
    assert gate.batch(1)["requests"] == 1
    futures += [sender.send(n, pending_after=n) for n in range(1, 12)]
    gate.release(1)
    assert ids(gate.batch(2)) == list(range(1, 12))
    gate.release(2)
    assert [answer(f) for f in futures] == [float(n) for n in range(12)]
    assert gate.started() == 2
    sender.close()
