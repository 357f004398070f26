"""The system shared memory extension against hostile clients: a key that
is a symbolic link in /dev/shm is refused (as `shm_open` refuses it), a
region shrunk under running requests fails those requests instead of
killing the server, registrations of one object share one descriptor, and
the number of regions has a cap (--shared-memory-region-limit)."""

import os
import tempfile
import threading
import uuid

import numpy as np
import pytest
import tritonclient.utils.shared_memory as shm

from helpers import Http, expect_error, expect_still_serving
from models import identity, write_repository
from servers import TARGET, Server

pytestmark = pytest.mark.oxiserve_only


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = write_repository(
        tmp_path_factory.mktemp("shm_safety"), [identity("id_int32", "INT32")], TARGET
    )
    with Server(repo, ["--shared-memory-region-limit=3000"]) as server:
        yield server


@pytest.fixture
def http(server):
    with Http(server.url) as http:
        yield http


def _register(http, name, key, byte_size, offset=0):
    return http.post(
        f"/v2/systemsharedmemory/region/{name}/register",
        {"key": key, "offset": offset, "byte_size": byte_size},
    )


def _open_descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_a_symbolic_link_key_is_refused(http):
    with tempfile.NamedTemporaryFile(dir="/tmp") as victim:
        victim.write(b"precious" * 512)
        victim.flush()
        name = f"oxiserve_link_{uuid.uuid4().hex[:10]}"
        link = f"/dev/shm/{name}"
        os.symlink(victim.name, link)
        try:
            resp = _register(http, "link", f"/{name}", 4096)
        finally:
            os.unlink(link)
        expect_error(resp, 500, f"Unable to open shared memory region: '/{name}'",
                     "symbolic link")
        assert http.get("/v2/systemsharedmemory/region/link/status").status_code == 404
        with open(victim.name, "rb") as f:
            assert f.read() == b"precious" * 512
    expect_still_serving(http)


def test_many_registrations_of_one_object_hold_one_descriptor(server, http):
    key = f"/oxiserve_fd_{uuid.uuid4().hex[:10]}"
    handle = shm.create_shared_memory_region("fd", key, 4096)
    try:
        before = _open_descriptors(server.proc.pid)
        for i in range(2000):
            resp = _register(http, f"fd{i}", key, 64)
            assert resp.status_code == 200, resp.text
        grown = _open_descriptors(server.proc.pid) - before
        assert grown < 20, f"2000 registrations of one object opened {grown} descriptors"
    finally:
        http.post("/v2/systemsharedmemory/unregister")
        shm.destroy_shared_memory_region(handle)
    expect_still_serving(http)


def test_past_the_region_limit_registrations_are_refused(tmp_path):
    repo = write_repository(tmp_path / "repo", [identity("id_int32", "INT32")], TARGET)
    key = f"/oxiserve_limit_{uuid.uuid4().hex[:10]}"
    handle = shm.create_shared_memory_region("limit", key, 4096)
    try:
        with Server(repo, ["--shared-memory-region-limit=2"]) as server, Http(server.url) as http:
            assert _register(http, "a", key, 8).status_code == 200
            assert _register(http, "b", key, 8).status_code == 200
            expect_error(_register(http, "c", key, 8), 429, "--shared-memory-region-limit")
            http.post("/v2/systemsharedmemory/region/a/unregister")
            assert _register(http, "c", key, 8).status_code == 200
    finally:
        shm.destroy_shared_memory_region(handle)


def test_a_region_shrunk_under_running_requests_does_not_kill_the_server(server, http):
    """A client resizes its object back and forth while requests copy from
    it: each request either succeeds or fails naming the region."""
    size = 4 << 20
    key = f"/oxiserve_shrink_{uuid.uuid4().hex[:10]}"
    handle = shm.create_shared_memory_region("shrink", key, size)
    shm.set_shared_memory_region(handle, [np.arange(size // 4, dtype=np.int32)])
    stop = threading.Event()

    def resize():
        fd = os.open(f"/dev/shm/{key.lstrip('/')}", os.O_RDWR)
        try:
            while not stop.is_set():
                os.ftruncate(fd, 4096)
                os.ftruncate(fd, size)
        finally:
            os.close(fd)

    assert _register(http, "shrink", key, size).status_code == 200
    resizer = threading.Thread(target=resize)
    resizer.start()
    body = {
        "inputs": [{
            "name": "INPUT0", "datatype": "INT32", "shape": [1, size // 4],
            "parameters": {"shared_memory_region": "shrink", "shared_memory_byte_size": size},
        }],
        "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": True}}],
    }
    outcomes = {"ok": 0, "failed": 0}
    try:
        for _ in range(60):
            resp = http.infer("id_int32", body)
            if resp.status_code == 200:
                outcomes["ok"] += 1
            else:
                expect_error(resp, 500, "shared memory region 'shrink' is no longer backed")
                outcomes["failed"] += 1
    finally:
        stop.set()
        resizer.join()
        http.post("/v2/systemsharedmemory/region/shrink/unregister")
        shm.destroy_shared_memory_region(handle)
    assert server.proc.poll() is None, f"the server died: {server.output()[-2000:]}"
    assert sum(outcomes.values()) == 60, outcomes
    expect_still_serving(http)
