"""Instance updates, as Triton's qa/L0_model_update checks them: a reload whose
config.pbtxt changed only in `instance_group` adds and removes instances in
place; the instances that stay are neither finalized nor initialized again,
and requests keep flowing meanwhile. Any other change reloads the model."""

import importlib.util
import json
import py_compile
import threading

import numpy as np
import pytest
import tritonclient.http as httpclient

from helpers import wait_for
from models import model_source
from python_models import PyModel, tensors, write_repo
from servers import Server

MODEL = "counter"


def _config(counts, groups, extra="", max_batch_size=0):
    return (
        f"max_batch_size: {max_batch_size}\n"
        + tensors("input", ("INPUT0", "FP32", [-1]))
        + tensors("output", ("OUTPUT0", "FP32", [-1]))
        + f'parameters {{ key: "COUNTS" value: {{ string_value: "{counts}" }} }}\n'
        + f"instance_group [ {groups} ]\n"
        + extra
    )


def _cpu(count, name=None):
    named = f'name: "{name}", ' if name else ""
    return f"{{ {named}count: {count}, kind: KIND_CPU }}"


def _pyc_name():
    """The cached bytecode file's name for model.py, as Python names it."""
    return importlib.util.cache_from_source("model.py").split("/")[-1]


class Counter:
    """The model's folder in an explicit-mode server, and what its instances did."""

    def __init__(self, repo, counts, client):
        self.folder = repo / MODEL
        self.counts = counts
        self.client = client

    def configure(self, groups, extra="", max_batch_size=0):
        head = f'name: "{MODEL}"\nbackend: "python"\n'
        text = head + _config(self.counts, groups, extra, max_batch_size)
        (self.folder / "config.pbtxt").write_text(text)

    def events(self, event):
        path = self.counts / event
        return path.read_text().split() if path.exists() else []

    def expect(self, initialized, finalized):
        """Waits for these totals (a finalize may end after the load answered)."""
        wait_for(
            lambda: (len(self.events("initialize")), len(self.events("finalize")))
            == (initialized, finalized),
            what=f"{initialized} initialized and {finalized} finalized instances",
        )
        assert len(self.events("initialize")) == initialized
        assert len(self.events("finalize")) == finalized

    def infer(self, client=None, batched=False, **sequence):
        data = np.array([[1, 2, 3]] if batched else [1, 2, 3], dtype=np.float32)
        tensor = httpclient.InferInput("INPUT0", list(data.shape), "FP32")
        tensor.set_data_from_numpy(data)
        result = (client or self.client).infer(MODEL, [tensor], **sequence).as_numpy("OUTPUT0")
        np.testing.assert_array_equal(result, data)


@pytest.fixture
def counter(tmp_path):
    counts = tmp_path / "counts"
    counts.mkdir()
    model = PyModel(MODEL, model_source("instance_counter"), _config(counts, _cpu(2)))
    repo = write_repo(tmp_path / "repo", [model])
    # Compiled before the first load: a __pycache__ that the first load writes
    # into the version folder is a change of the model's files, and Triton
    # then reloads instead of updating.
    source = repo / MODEL / "1" / "model.py"
    py_compile.compile(str(source), cfile=str(source.parent / "__pycache__" / _pyc_name()))
    with Server(repo, ["--model-control-mode=explicit"]) as server:
        client = httpclient.InferenceServerClient(server.url)
        counter = Counter(repo, counts, client)
        counter.url = server.url
        client.load_model(MODEL)
        counter.expect(2, 0)
        yield counter
        client.close()


def test_adding_and_removing_instances_keeps_the_others(counter):
    counter.configure(_cpu(3))
    counter.client.load_model(MODEL)
    counter.expect(3, 0)
    counter.infer()
    counter.configure(_cpu(1))
    counter.client.load_model(MODEL)
    counter.expect(3, 2)
    survivor = set(counter.events("initialize")) - set(counter.events("finalize"))
    assert len(survivor) == 1
    counter.infer()
    counter.client.unload_model(MODEL)
    counter.expect(3, 3)


def test_renaming_or_regrouping_instances_changes_none(counter):
    counter.configure(f'{_cpu(1, "first")}, {_cpu(1, "second")}')
    counter.client.load_model(MODEL)
    counter.expect(2, 0)
    counter.configure(_cpu(2, "together"))
    counter.client.load_model(MODEL)
    counter.expect(2, 0)
    counter.infer()


def test_any_other_change_reloads_the_model(counter):
    counter.configure(_cpu(2), 'parameters { key: "OTHER" value: { string_value: "x" } }\n')
    counter.client.load_model(MODEL)
    counter.expect(4, 2)
    counter.infer()


def test_the_dynamic_batcher_keeps_its_queue_through_updates(counter):
    batching = "dynamic_batching { }\n"
    counter.configure(_cpu(2), batching, max_batch_size=8)
    counter.client.load_model(MODEL)
    counter.expect(4, 2)
    counter.configure(_cpu(3), batching, max_batch_size=8)
    counter.client.load_model(MODEL)
    counter.expect(5, 2)
    counter.infer(batched=True)
    counter.configure(_cpu(1), batching, max_batch_size=8)
    counter.client.load_model(MODEL)
    counter.expect(5, 4)
    counter.infer(batched=True)


SEQUENCES = "sequence_batching { direct { } max_sequence_idle_microseconds: 60000000 }\n"


def test_sequence_batcher_instances_leave_when_their_sequences_end(counter):
    counter.configure(_cpu(2), SEQUENCES)
    counter.client.load_model(MODEL)
    counter.expect(4, 2)
    counter.infer(sequence_id=1, sequence_start=True)
    counter.infer(sequence_id=2, sequence_start=True)
    # Each sequence holds a slot of its own instance: the one that leaves
    # finishes its sequence first.
    counter.configure(_cpu(1), SEQUENCES)
    counter.client.load_model(MODEL)
    counter.infer(sequence_id=1)
    counter.infer(sequence_id=2)
    counter.expect(4, 2)
    counter.infer(sequence_id=1, sequence_end=True)
    counter.infer(sequence_id=2, sequence_end=True)
    counter.expect(4, 3)
    counter.infer(sequence_id=3, sequence_start=True, sequence_end=True)


def test_a_config_given_to_the_load_request_updates_in_place(counter):
    config = counter.client.get_model_config(MODEL)
    config["instance_group"][0]["count"] += 1
    counter.client.load_model(MODEL, config=json.dumps(config))
    counter.expect(3, 0)
    counter.infer()


def test_requests_keep_flowing_during_updates(counter):
    stop = threading.Event()
    outcomes = {"ok": 0, "failed": []}

    def traffic():
        client = httpclient.InferenceServerClient(counter.url)
        while not stop.is_set():
            try:
                counter.infer(client)
                outcomes["ok"] += 1
            except Exception as e:  # noqa: BLE001 - every failure is reported
                outcomes["failed"].append(str(e))
        client.close()

    threads = [threading.Thread(target=traffic) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        for count, expected in ((4, (4, 0)), (1, (4, 3)), (2, (5, 3))):
            counter.configure(_cpu(count))
            counter.client.load_model(MODEL)
            counter.expect(*expected)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert outcomes["failed"] == []
    assert outcomes["ok"] > 0
