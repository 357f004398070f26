"""`--backend-config=python,idle-spin-microseconds=N`: after each frame, a Python
instance's stub process and the server's pump thread for it poll for the next frame
for N µs before they sleep (default 300), as long as frames keep coming (the previous
wait was shorter than 4N µs).
The setting reaches both sides, and an idle instance spends no CPU once the polling
time is over."""

import os
import time
from pathlib import Path

import pytest

from procfs import descendants as _descendants
from python_models import add_sub, infer_add_sub, serve

pytestmark = pytest.mark.oxiserve_only

TICK = os.sysconf("SC_CLK_TCK")


def _cpu_s(stat):
    fields = Path(stat).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def _pump(pid):
    """The stat file of the server's pump thread (named `py:<instance>`)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        if (task / "comm").read_text().startswith("py:add_sub"):
            return task / "stat"
    raise AssertionError("no pump thread named py:add_sub* in the server")


def _cpu_over(server, seconds):
    """CPU seconds the stub processes and the pump used during the next `seconds`."""
    stubs = [f"/proc/{p}/stat" for p in _descendants(server.proc.pid)]
    pump = _pump(server.proc.pid)
    before = sum(_cpu_s(s) for s in stubs), _cpu_s(pump)
    time.sleep(seconds)
    after = sum(_cpu_s(s) for s in stubs), _cpu_s(pump)
    return after[0] - before[0], after[1] - before[1]


def test_idle_instance_stops_polling(tmp_path):
    with serve(tmp_path / "repo", [add_sub()]) as server:
        infer_add_sub(server)
        time.sleep(0.2)  # far longer than the default 300 µs of polling
        stubs, pump = _cpu_over(server, 1.0)
        assert stubs < 0.1 and pump < 0.1, f"idle: stubs {stubs} s, pump {pump} s of CPU"


def test_setting_reaches_stub_and_pump(tmp_path):
    # Polling 0.4 s: a wait up to 1.6 s long counts as frames coming.
    flags = ["--backend-config=python,idle-spin-microseconds=400000"]
    with serve(tmp_path / "repo", [add_sub()], flags) as server:
        time.sleep(2.5)  # the polling after Init is over; this long wait stops it
        infer_add_sub(server)
        stubs, pump = _cpu_over(server, 0.5)
        assert stubs < 0.05 and pump < 0.05, f"after a long wait: stubs {stubs} s, pump {pump} s"
        # A request 0.5 s later: both sides poll for 0.4 s after it.
        infer_add_sub(server)
        stubs, pump = _cpu_over(server, 0.5)
        assert stubs > 0.05 and pump > 0.05, f"polling: stubs {stubs} s, pump {pump} s"
        infer_add_sub(server)  # still answers while polling


def test_zero_sleeps_at_once(tmp_path):
    flags = ["--backend-config=python,idle-spin-microseconds=0"]
    with serve(tmp_path / "repo", [add_sub()], flags) as server:
        for _ in range(3):
            infer_add_sub(server)
        stubs, pump = _cpu_over(server, 0.5)
        assert stubs < 0.05 and pump < 0.05, f"no polling: stubs {stubs} s, pump {pump} s"
