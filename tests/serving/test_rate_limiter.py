"""The rate limiter (`--rate-limit=execution_count`, `--rate-limit-resource`
and an instance group's `rate_limiter { resources [...] priority: N }`): an
instance executes only while it holds its resources, instances waiting for
them take turns by executions times priority, a load whose instances could
never get their resources is refused in Triton 2.51's words, and bad flag
values stop the start.

The test model (python_backend/models/concurrency) logs how many executions
it saw running at once among the models sharing its folder."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import tritonclient.http as httpclient

from models import model_source
from python_models import PyModel, config, write_repo
from servers import Server, run_to_exit

ON = ["--rate-limit=execution_count"]
SCARCE = 'rate_limiter { resources [ { name: "R" count: 1 } ] }'


def recorder(name, folder, group, wait_for_peer_ms=300):
    """A model of `group` (an instance_group body) logging to `folder`."""
    extra = (
        "parameters [\n"
        f'  {{ key: "dir" value: {{ string_value: "{folder}" }} }},\n'
        f'  {{ key: "tag" value: {{ string_value: "{name}" }} }},\n'
        f'  {{ key: "wait_for_peer_ms" value: {{ string_value: "{wait_for_peer_ms}" }} }}\n'
        "]\n"
    )
    body = config([("INPUT0", "INT32", [1])], [("OUTPUT0", "INT32", [1])], 0, extra)
    body = body.replace("instance_group [ { count: 1, kind: KIND_CPU } ]", f"instance_group [ {{ {group} }} ]")
    return PyModel(name, model_source("concurrency"), body)


def log(folder):
    """(tag, executions seen at once) per execution, in order."""
    path = folder / "log"
    lines = path.read_text().split("\n") if path.exists() else []
    return [(tag, int(seen)) for tag, seen, *_ in (line.split() for line in lines if line)]


def flood(server, jobs):
    """Sends each (model, value) of `jobs`, 4 at a time per model, so that
    every model keeps requests waiting until its last; returns the outputs
    in the order of `jobs`."""

    def send(job):
        model, value = job
        client = httpclient.InferenceServerClient(server.url, network_timeout=120)
        tensor = httpclient.InferInput("INPUT0", [1], "INT32")
        tensor.set_data_from_numpy(np.array([value], dtype=np.int32))
        try:
            return int(client.infer(model, [tensor]).as_numpy("OUTPUT0")[0])
        finally:
            client.close()

    pools = {model: ThreadPoolExecutor(4) for model, _ in jobs}
    futures = [pools[job[0]].submit(send, job) for job in jobs]
    try:
        return [future.result() for future in futures]
    finally:
        for pool in pools.values():
            pool.shutdown()


def start(tmp_path, models, flags):
    return Server(write_repo(tmp_path / "repo", models), flags)


def test_a_resource_of_one_lets_one_instance_execute_at_a_time(tmp_path):
    group = f"count: 2 kind: KIND_CPU {SCARCE}"
    with start(tmp_path, [recorder("limited", tmp_path, group)], ON) as server:
        assert flood(server, [("limited", v) for v in range(8)]) == list(range(8))
    assert [seen for _, seen in log(tmp_path)] == [1] * 8


def test_with_the_limiter_off_instances_execute_together(tmp_path):
    group = f"count: 2 kind: KIND_CPU {SCARCE}"
    model = recorder("limited", tmp_path, group, wait_for_peer_ms=2000)
    with start(tmp_path, [model], ["--rate-limit=off"]) as server:
        assert flood(server, [("limited", v) for v in range(8)]) == list(range(8))
    assert max(seen for _, seen in log(tmp_path)) == 2


def test_a_count_above_the_needs_lets_instances_execute_together(tmp_path):
    group = f"count: 2 kind: KIND_CPU {SCARCE}"
    model = recorder("limited", tmp_path, group, wait_for_peer_ms=2000)
    with start(tmp_path, [model], ON + ["--rate-limit-resource=R:2"]) as server:
        assert flood(server, [("limited", v) for v in range(8)]) == list(range(8))
    assert max(seen for _, seen in log(tmp_path)) == 2


def test_two_models_sharing_a_scarce_resource_both_progress(tmp_path):
    models = [recorder(name, tmp_path, f"count: 1 kind: KIND_CPU {SCARCE}", 20) for name in "ab"]
    jobs = [(model, v) for v in range(12) for model in "ab"]
    with start(tmp_path, models, ON) as server:
        assert flood(server, jobs) == [v for _, v in jobs]
    executions = log(tmp_path)
    assert [seen for _, seen in executions] == [1] * 24
    # Neither waited for the other to finish: both ran in the first half.
    first_half = {tag for tag, _ in executions[:12]}
    assert first_half == {"a", "b"}, executions


def test_a_priority_2_model_gets_half_the_turns(tmp_path):
    def model(name, priority):
        limiter = f'rate_limiter {{ resources [ {{ name: "R" count: 1 }} ] priority: {priority} }}'
        # Each execution lasts 50 ms (it meets no peer): the next request
        # of its model is queued before it ends.
        return recorder(name, tmp_path, f"count: 1 kind: KIND_CPU {limiter}", 50)

    jobs = [(name, v) for v in range(30) for name in ("one", "two")]
    with start(tmp_path, [model("one", 1), model("two", 2)], ON) as server:
        flood(server, jobs)
    # While both have requests waiting, "one" executes twice per "two".
    tags = [tag for tag, _ in log(tmp_path)][:30]
    assert tags.count("one") >= 1.5 * tags.count("two"), tags


def load_failure(tmp_path, group, flags):
    """The server's output after it failed to load a model of `group`."""
    model = recorder("needy", tmp_path, group)
    flags = ON + flags + ["--exit-on-error=false", "--strict-readiness=false"]
    with start(tmp_path, [model], flags) as server:
        client = httpclient.InferenceServerClient(server.url)
        assert not client.is_model_ready("needy")
        client.close()
        return server.output()


def test_a_count_below_an_instances_need_refuses_the_load(tmp_path):
    group = 'count: 1 kind: KIND_CPU rate_limiter { resources [ { name: "R" count: 4 } ] }'
    out = load_failure(tmp_path, group, ["--rate-limit-resource=R:1"])
    assert (
        'Resource count for "R" is limited to 1 which will prevent scheduling of one or more '
        "model instances, the minimum required count is 4"
    ) in out, out


def test_with_counts_given_a_resource_not_named_has_none(tmp_path):
    group = f"count: 1 kind: KIND_CPU {SCARCE}"
    out = load_failure(tmp_path, group, ["--rate-limit-resource=OTHER:4"])
    assert 'Resource count for "R" is limited to 0' in out, out


def test_a_count_for_another_device_does_not_count(tmp_path):
    group = f"count: 1 kind: KIND_CPU {SCARCE}"
    out = load_failure(tmp_path, group, ["--rate-limit-resource=R:8:3"])
    assert 'Resource count for "R" is limited to 0' in out, out


def test_a_resource_both_global_and_per_device_is_refused(tmp_path):
    group = (
        "count: 1 kind: KIND_CPU rate_limiter { resources [ "
        '{ name: "R" count: 1 }, { name: "G" global: true count: 1 } ] } }, '
        '{ count: 1 kind: KIND_CPU rate_limiter { resources [ { name: "G" count: 1 } ] }'
    )
    out = load_failure(tmp_path, group, [])
    assert (
        'Resource "G" is present as both global and device-specific resource in the model '
        "configuration."
    ) in out, out


@pytest.mark.parametrize(
    "flag, message",
    [
        ("--rate-limit=sometimes", "--rate-limit"),
        (
            "--rate-limit-resource=R",
            "--rate-limit-resource option format is '<resource_name>:<count>:<device>' or "
            "'<resource_name>:<count>'. Got R",
        ),
        ("--rate-limit-resource=R:1:2:3", "Got R:1:2:3"),
        ("--rate-limit-resource=R:many", "Invalid option value. Got many"),
    ],
)
def test_bad_flag_values_stop_the_start(tmp_path, flag, message):
    status, out = run_to_exit(write_repo(tmp_path / "repo", []), [flag])
    assert status not in (0, None), out
    assert message in out, out


def test_the_flags_no_longer_say_they_are_ignored(tmp_path):
    with start(tmp_path, [], ON + ["--rate-limit-resource=R:2"]) as server:
        pass
    assert "not supported" not in server.output(), server.output()
    table = [line for line in server.output().splitlines() if "rate_limit" in line]
    assert any("EXEC_COUNT" in line for line in table), table
