"""The sequence batcher's backlog and the request timeout, seen from
tritonclient's gRPC stream: a sequence that waits in the backlog for a
slot longer than its requests' timeout is given up, every request it
queued answered with Triton's "timeout of the corresponding sequence has
been expired", and the sequence forgotten (a later request of it without
START is refused as one of a sequence never started). The sequence holding
the slot is not timed out: it completes with the right outputs.

One model instance with one slot (max_batch_size 1); the Python identity
model sleeps 2 s per execution, so sequence 1 holds the slot for about 4 s
(its END request is taken after two executions) while sequence 2, started
1 s after it with a 1 s timeout, expires after about 2 s. The margins are
wide; the tests assert outcomes, not times. Each test starts its own server.
"""

import queue
import time

import numpy as np
import tritonclient.grpc as grpcclient

from models import model_source
from python_models import PyModel, config, serve

MODEL = "slow_sequence"
# The request timeout every request carries, in microseconds.
TIMEOUT_US = 1_000_000
EXPIRED = "timeout of the corresponding sequence has been expired"
# How long to wait for all the answers of a test (they come in seconds).
ANSWER_WAIT_S = 60


def slow_sequence_model():
    """Identity INPUT0 -> OUTPUT0 that sleeps 2 s per execution, under a
    sequence batcher with one slot on one instance."""
    extra = """sequence_batching {
  max_sequence_idle_microseconds: 60000000
}
parameters { key: "execute_delay_ms" value { string_value: "2000" } }
"""
    return PyModel(
        MODEL,
        model_source("identity"),
        config(
            [("INPUT0", "INT32", [1])],
            [("OUTPUT0", "INT32", [1])],
            max_batch_size=1,
            extra=extra,
            count=1,
        ),
    )


class Stream:
    """A gRPC client with an open stream; its answers, (result, error) in
    arrival order, go to `answers`."""

    def __init__(self, url):
        self.client = grpcclient.InferenceServerClient(url)
        self.answers = queue.Queue()
        self.client.start_stream(callback=lambda result, error: self.answers.put((result, error)))

    def send(self, corrid, value, start=False, end=False):
        inp = grpcclient.InferInput("INPUT0", [1, 1], "INT32")
        inp.set_data_from_numpy(np.array([[value]], dtype=np.int32))
        self.client.async_stream_infer(
            MODEL,
            [inp],
            sequence_id=corrid,
            sequence_start=start,
            sequence_end=end,
            timeout=TIMEOUT_US,
        )

    def take(self, count):
        """The next `count` answers, waiting for them."""
        deadline = time.monotonic() + ANSWER_WAIT_S
        got = []
        while len(got) < count:
            left = deadline - time.monotonic()
            assert left > 0, f"only {len(got)} of {count} answers came: {got}"
            try:
                got.append(self.answers.get(timeout=left))
            except queue.Empty:
                pass
        return got

    def close(self):
        self.client.stop_stream()
        self.client.close()


def send_sequence(stream, corrid, values, end=True):
    """START with the first value, then the rest; END on the last one
    when `end`."""
    last = len(values) - 1
    for i, value in enumerate(values):
        stream.send(corrid, value, start=i == 0, end=end and i == last)


def check_completed(answers, values):
    """Each answer a success echoing its request's value, in order."""
    assert [error for _, error in answers] == [None] * len(values)
    outputs = [result.as_numpy("OUTPUT0").tolist() for result, _ in answers]
    assert outputs == [[[v]] for v in values]


def check_expired(answers):
    for result, error in answers:
        assert result is None
        assert error is not None
        assert EXPIRED in error.message(), error.message()


def test_a_backlogged_sequence_expires_while_the_slot_holder_completes(tmp_path):
    with serve(tmp_path / "repo", [slow_sequence_model()]) as server:
        first, second = Stream(server.grpc_url), Stream(server.grpc_url)
        try:
            send_sequence(first, 1, [11, 12, 13])
            # Sequence 1 has the only slot: sequence 2 waits in the backlog.
            time.sleep(1)
            send_sequence(second, 2, [21, 22, 23])
            check_expired(second.take(3))
            check_completed(first.take(3), [11, 12, 13])
        finally:
            first.close()
            second.close()


def test_a_request_after_the_expiry_is_for_a_sequence_never_started(tmp_path):
    with serve(tmp_path / "repo", [slow_sequence_model()]) as server:
        first, second = Stream(server.grpc_url), Stream(server.grpc_url)
        try:
            send_sequence(first, 1, [11, 12, 13])
            time.sleep(1)
            send_sequence(second, 2, [21, 22], end=False)
            check_expired(second.take(2))
            # Sequence 1 still holds the slot; sequence 2 is forgotten.
            second.send(2, 23, end=True)
            [(result, error)] = second.take(1)
            assert result is None and error is not None
            assert (
                f"inference request for sequence 2 to model '{MODEL}' must specify the "
                "START flag on the first request of the sequence"
            ) in error.message(), error.message()
            check_completed(first.take(3), [11, 12, 13])
        finally:
            first.close()
            second.close()
