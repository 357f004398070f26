"""Plays the server's role for the stub: a zygote, instances, arenas, frames."""

import json
import mmap
import os
import select
import socket
import subprocess
import sys
import textwrap
import time

import numpy as np

from conftest import PKG_PARENT
from oxiserve_stub import protocol as P
from oxiserve_stub.arena import Allocator
from oxiserve_stub.tensors import BYTES, WIRE_NP, np_to_code, serialize_bytes, deserialize_bytes

ZYGOTE = os.path.join(PKG_PARENT, "oxiserve_stub", "zygote.py")


class Zygote:
    def __init__(self, python=sys.executable):
        self.ctl, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fd = child.fileno()
        self.proc = subprocess.Popen(
            ["/bin/bash", "-c", 'exec "$0" -I "$1" 3<&%d %d<&-' % (fd, fd), python,
             ZYGOTE], pass_fds=(fd,), stdin=subprocess.DEVNULL)
        child.close()
        self.ready = self.recv()
        self.token = 0
        self.stash = []

    def recv(self, timeout=30):
        r, _, _ = select.select([self.ctl], [], [], timeout)
        assert r, "zygote did not answer"
        data = self.ctl.recv(65536)
        assert data, "zygote closed"
        return json.loads(data)

    def recv_op(self, op, timeout=30, **match):
        for i, m in enumerate(self.stash):
            if m["op"] == op and all(m.get(k) == v for k, v in match.items()):
                return self.stash.pop(i)
        deadline = time.time() + timeout
        while True:
            m = self.recv(max(0.01, deadline - time.time()))
            if m["op"] == op and all(m.get(k) == v for k, v in match.items()):
                return m
            self.stash.append(m)

    def spawn(self, fds, arena_size):
        self.token += 1
        msg = json.dumps({"op": "spawn", "token": self.token,
                          "arena_size": arena_size}).encode()
        socket.send_fds(self.ctl, [msg], fds)
        m = self.recv_op("spawned", token=self.token)
        return m["pid"]

    def close(self):
        self.ctl.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Stub:
    def __init__(self, zygote, arena_size=1 << 24):
        self.z = zygote
        self.sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        fin = os.memfd_create("arena_in")
        fout = os.memfd_create("arena_out")
        os.ftruncate(fin, arena_size)
        os.ftruncate(fout, arena_size)
        self.pid = zygote.spawn([child.fileno(), fin, fout], arena_size)
        child.close()
        self.in_mm = mmap.mmap(fin, arena_size)
        self.out_mm = mmap.mmap(fout, arena_size)
        os.close(fin)
        os.close(fout)
        self.in_alloc = Allocator(arena_size)
        self.released_in = []  # arena_in offsets the stub released
        self.block_readers = {}  # arena_out block -> responses of its frame not read yet
        self.response_blocks = {}  # id(response) -> (response, its frame's block)
        self.buf = b""
        self.pending = []  # decoded frames received while waiting for another kind
        self.next_batch = 0

    # ------------------------------------------------------------- raw frames
    def send(self, data):
        self.sock.sendall(data)

    def recv_raw(self, timeout=20):
        while True:
            if len(self.buf) >= 4:
                ln = P.LEN.unpack_from(self.buf, 0)[0]
                if len(self.buf) >= 4 + ln:
                    fr = self.buf[:4 + ln]
                    self.buf = self.buf[4 + ln:]
                    return fr
            r, _, _ = select.select([self.sock], [], [], timeout)
            assert r, "stub did not answer in time"
            data = self.sock.recv(1 << 20)
            if not data:
                raise EOFError("stub closed its socket")
            self.buf += data

    def recv(self, timeout=20, stop_on_release=False):
        """Next decoded frame that is not a Release (those are recorded; with
        stop_on_release, None is returned after one)."""
        while True:
            fr = self.recv_raw(timeout)
            _, kind, tag = P.HDR.unpack_from(fr, 0)
            d = P.decode_stub_frame(kind, tag, fr[16:])
            if kind == P.RELEASE_OUT:
                self.released_in.extend(d["offsets"])
                for off in d["offsets"]:
                    assert self.in_alloc.free(off), "double release %d" % off
                if stop_on_release:
                    return None
                continue
            # one arena_out block per frame, shared by its responses' tensors
            if kind == P.EXECUTE_DONE:
                self._share_block(d["block"], d["responses"])
            elif kind == P.SEND and d["response"] is not None:
                self._share_block(d["block"], [d["response"]])
            return d

    def _share_block(self, block, responses):
        for r in responses:
            self.response_blocks[id(r)] = (r, block)
        if block != P.NO_BLOCK:
            self.block_readers[block] = len(responses)

    def release_block(self, block):
        """Give an arena_out block back to the stub."""
        if block != P.NO_BLOCK:
            self.send(P.enc_release([block]))

    def expect(self, kind, timeout=20):
        for i, d in enumerate(self.pending):
            if d["kind"] == kind:
                return self.pending.pop(i)
        while True:
            d = self.recv(timeout)
            if d["kind"] == kind:
                return d
            self.pending.append(d)

    def wait_release(self, offset, timeout=5):
        deadline = time.time() + timeout
        while offset not in self.released_in:
            assert time.time() < deadline, "block %d never released" % offset
            try:
                d = self.recv(timeout=max(0.01, deadline - time.time()), stop_on_release=True)
            except AssertionError:
                continue
            if d is not None:
                self.pending.append(d)

    # ------------------------------------------------------------- messages
    def init(self, model_file, decoupled=False, name="m", config=None, args=None):
        a = {"model_config": json.dumps(config or {"name": name}),
             "model_instance_kind": "CPU", "model_instance_name": name + "_0_0",
             "model_instance_device_id": "0",
             "model_repository": os.path.dirname(os.path.dirname(model_file)),
             "model_version": "1", "model_name": name}
        a.update(args or {})
        self.send(P.enc_init(a, model_file, decoupled))
        return self.expect(P.INIT_DONE)["error"]

    def write_block(self, tensor_lists):
        """tensor_lists: list (per request) of lists of (name, ndarray). Returns
        (block, list of lists of wire tuples)."""
        items = []
        total = 0
        for tl in tensor_lists:
            for name, arr in tl:
                code = np_to_code(arr.dtype)
                data = serialize_bytes(arr) if code == BYTES else \
                    np.ascontiguousarray(arr).tobytes()
                items.append((name, code, list(arr.shape), data))
                total += (len(data) + 63) & ~63
        if not items:
            return P.NO_BLOCK, [[] for _ in tensor_lists]
        block = self.in_alloc.alloc(total)
        off = block
        out = []
        it = iter(items)
        for tl in tensor_lists:
            lst = []
            for _ in tl:
                name, code, dims, data = next(it)
                self.in_mm[off:off + len(data)] = data
                lst.append((name, code, dims, off, len(data)))
                off += (len(data) + 63) & ~63
            out.append(lst)
        return block, out

    def execute(self, requests, wait=True):
        """requests: list of dicts: inputs=[(name, ndarray)], plus enc_request kwargs."""
        self.next_batch += 1
        block, wires = self.write_block([r.get("inputs", []) for r in requests])
        reqs = []
        for i, r in enumerate(requests):
            d = dict(r)
            d.setdefault("rid", 1000 * self.next_batch + i)
            d["inputs"] = wires[i]
            reqs.append(d)
        self.send(P.enc_execute(self.next_batch, block, reqs))
        self.last_block = block
        if not wait:
            return self.next_batch
        d = self.expect(P.EXECUTE_DONE)
        assert d["tag"] == self.next_batch
        return d

    def tensor(self, desc):
        data = bytes(self.out_mm[desc.offset:desc.offset + desc.nbytes])
        if desc.dtype == BYTES:
            n = int(np.prod(desc.dims)) if desc.dims else 1
            return deserialize_bytes(data, n).reshape(desc.dims)
        return np.frombuffer(data, dtype=WIRE_NP[desc.dtype]).reshape(desc.dims)

    def outputs(self, resp, release=True):
        """The response's tensors; with release, its frame's block goes back once every
        response of that frame was read."""
        outs = {t.name: self.tensor(t) for t in resp.tensors}
        block = self.response_blocks.pop(id(resp), (None, P.NO_BLOCK))[1]
        if release and block in self.block_readers:
            self.block_readers[block] -= 1
            if self.block_readers[block] == 0:
                del self.block_readers[block]
                self.release_block(block)
        return outs

    def finalize(self):
        self.send(P.frame(P.FINALIZE, 0, []))
        d = self.expect(P.FINALIZE_DONE)
        return d

    def wait_exit(self, timeout=10):
        return self.z.recv_op("exited", timeout=timeout, pid=self.pid)

    def close(self):
        self.sock.close()


def write_model(tmp_path, source, name="m", version="1"):
    d = tmp_path / name / version
    d.mkdir(parents=True, exist_ok=True)
    f = d / "model.py"
    f.write_text(textwrap.dedent(source))
    return str(f)
