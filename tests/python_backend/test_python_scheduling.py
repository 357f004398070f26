"""`--batch-scheduling` (oxiserve's own, default true): the server's own threads run
under Linux's SCHED_BATCH, so that their wake-ups do not preempt the processes of Python
models; those processes run SCHED_OTHER (docs/design/python-backend.md §7.3). With
`--batch-scheduling=false` every thread keeps the policy the server was started with."""

import os
from pathlib import Path

import pytest

from procfs import descendants
from python_models import add_sub, infer_add_sub, serve

pytestmark = pytest.mark.oxiserve_only


def _thread_policies(pid):
    """{thread name: scheduling policy} of the server's threads (one per name)."""
    return {(task / "comm").read_text().strip(): os.sched_getscheduler(int(task.name))
            for task in Path(f"/proc/{pid}/task").iterdir()}


@pytest.mark.parametrize("flag, server_policy", [
    ([], os.SCHED_BATCH),
    (["--batch-scheduling=false"], os.SCHED_OTHER),
])
def test_server_threads_and_model_processes(tmp_path, flag, server_policy):
    with serve(tmp_path / "repo", [add_sub()], flag) as server:
        infer_add_sub(server)
        threads = _thread_policies(server.proc.pid)
        for name in ("http", "inst:add_sub_0_", "py:add_sub_0_0"):
            assert threads.get(name) == server_policy, (name, threads)
        processes = descendants(server.proc.pid)
        assert processes, "no Python processes under the server"
        for pid in processes:
            assert os.sched_getscheduler(pid) == os.SCHED_OTHER, pid
