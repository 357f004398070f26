"""Faults an operator meets in months of running: a model whose load hangs
is bounded by the stub timeout while others serve; 200 load/unload cycles
leave memory, descriptors and shared memory where they were; SIGTERM under
load answers every request the server took, refuses new connections and
exits 0. (A Python process killed mid-request: test_python_crash.py; files
half-written under poll mode: test_poll_mode.py; clients that go away:
test_disconnect.py; keep-alive requests at SIGTERM: test_shutdown.py.)"""

import os
import signal
import socket
import threading
import time

import pytest
import tritonclient.http as httpclient

from helpers import Http, expect_still_serving, int32_body, raw_infer_request, read_response
from management_models import infer, logging_model
from models import identity
from procfs import rss_kb as _rss_kb
from python_models import PyModel, config, write_repo
from servers import Server, accepts

pytestmark = pytest.mark.oxiserve_only

HANGING_PY = '''\
import time


class TritonPythonModel:
    def initialize(self, args):
        time.sleep(3600)

    def execute(self, requests):
        return []
'''


def _children(pid):
    """Pids of the processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def test_a_hanging_load_is_bounded_and_harms_no_other_model(tmp_path):
    hanging = PyModel("hanging", HANGING_PY, config([("IN", "INT32", [1])], [("OUT", "INT32", [1])]))
    repo = write_repo(tmp_path / "repo", [hanging, identity("id_int32", "INT32")])
    flags = ["--exit-on-error=false", "--strict-readiness=false",
             "--backend-config=python,stub-timeout-seconds=2"]
    with Server(repo, flags) as server, Http(server.url) as http:
        expect_still_serving(http)
        index = {m["name"]: m for m in http.post("/v2/repository/index").json()}
        assert index["hanging"]["state"] == "UNAVAILABLE", index
        assert "failed to initialize: no answer within 2 s" in index["hanging"]["reason"], index
        assert http.get("/v2/health/ready").status_code == 200
        # The hung process was ended, not left behind.
        python = [p for p in _children(server.proc.pid)
                  if b"stub" in open(f"/proc/{p}/cmdline", "rb").read()]
        assert len(python) <= 1, f"processes left: {python}"  # the zygote at most


def _shm_entries():
    return len(os.listdir("/dev/shm"))


def test_load_unload_cycles_leave_nothing_behind(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    repo = write_repo(tmp_path / "repo", [logging_model("cycled", logs / "cycled"),
                                           identity("id_int32", "INT32")])
    flags = ["--model-control-mode=explicit", "--load-model=id_int32"]
    with Server(repo, flags) as server:
        client = httpclient.InferenceServerClient(server.url)
        pid = server.proc.pid

        def cycle(times):
            for _ in range(times):
                client.load_model("cycled")
                assert infer(client, "cycled") == [1, 2, 3, 4]
                client.unload_model("cycled")

        cycle(20)  # warm: allocator arenas, the zygote, caches
        time.sleep(1)
        before = (_rss_kb(pid), len(os.listdir(f"/proc/{pid}/fd")), _shm_entries())
        cycle(180)
        time.sleep(1)
        after = (_rss_kb(pid), len(os.listdir(f"/proc/{pid}/fd")), _shm_entries())
        assert after[0] - before[0] < 20_000, f"RSS grew from {before[0]} to {after[0]} kB"
        assert after[1] - before[1] <= 2, f"descriptors from {before[1]} to {after[1]}"
        assert after[2] - before[2] <= 2, f"/dev/shm entries from {before[2]} to {after[2]}"
        client.close()


def test_sigterm_under_load_answers_every_request_taken(tmp_path):
    repo = write_repo(tmp_path / "repo", [identity("id_int32", "INT32")])
    server = Server(repo)
    port = server.port
    counts = {"answered": 0, "dropped": 0, "refused": 0, "other": 0}
    lock = threading.Lock()
    stop = time.monotonic() + 30

    def client():
        while time.monotonic() < stop:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            except OSError:
                with lock:
                    counts["refused"] += 1
                return
            with sock:
                while True:
                    sock.sendall(raw_infer_request(port, "id_int32", int32_body()))
                    try:
                        status, headers, _ = read_response(sock)
                    except (ConnectionError, OSError):
                        with lock:
                            counts["dropped"] += 1
                        return
                    with lock:
                        counts["answered" if status == "HTTP/1.1 200 OK" else "other"] += 1
                    if headers.get("connection") == "close":
                        break

    clients = [threading.Thread(target=client) for _ in range(16)]
    for c in clients:
        c.start()
    time.sleep(1.5)
    server.proc.send_signal(signal.SIGTERM)
    for c in clients:
        c.join(60)
    assert server.proc.wait(timeout=30) == 0
    assert not accepts(port)
    server.stop()
    assert counts["answered"] > 0, counts
    assert counts["dropped"] == 0 and counts["other"] == 0, counts
