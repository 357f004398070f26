"""The zygote: `python3 -I <pkgdir>/oxiserve_stub/zygote.py` with fd 3 = the control
SOCK_SEQPACKET socket. Imports numpy and our package once, then forks instances."""

import os
import sys

_PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not sys.path or sys.path[0] != _PKG_PARENT:
    sys.path.insert(0, _PKG_PARENT)
# Running as a script puts oxiserve_stub/ itself on sys.path: drop it (our module names
# such as `log` or `protocol` must not shadow the model's imports).
_SELF_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _SELF_DIR]

import errno  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import select  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402

CONTROL_FD = 3
PR_SET_PDEATHSIG = 1
MAX_MSG = 65536


def _send(ctl, obj):
    try:
        ctl.send(json.dumps(obj, separators=(",", ":")).encode("utf-8"))
    except OSError:
        pass


def _prepare():
    """Import everything a child needs, once. Returns the ready message."""
    try:
        import numpy
        import triton_python_backend_utils  # noqa: F401
        import c_python_backend_utils  # noqa: F401
        import asyncio  # noqa: F401
        import importlib.util  # noqa: F401
        from oxiserve_stub import (  # noqa: F401
            arena, arena_io, autocomplete, bls, compiled, conn, context, errors,
            execute_frame, inbox, instance, log, messages, modelfile, protocol,
            response_frames, tensors)
    except BaseException as e:  # noqa: BLE001
        return {"op": "failed", "error": "%s: %s" % (type(e).__name__, e)}
    return {"op": "ready", "python": "%d.%d.%d" % sys.version_info[:3],
            "numpy": numpy.__version__, "executable": sys.executable,
            "frames": "Python" if compiled.FRAMES is None else "C"}


def _set_pdeathsig():
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except Exception:
        pass


def _child(ctl, wake_r, wake_w, fds, layout, zygote_pid):
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        ctl.close()
        os.close(wake_r)
        os.close(wake_w)
        _set_pdeathsig()
        if os.getppid() != zygote_pid:  # the zygote died before prctl took effect
            os._exit(0)
        # No gc.unfreeze(): objects inherited from the zygote stay in the permanent
        # generation, so the child's collections never write to their pages (copy on
        # write keeps them shared). See the Python docs of gc.freeze().
        gc.enable()
        from oxiserve_stub.instance import serve
        serve(fds[0], fds[1], fds[2], layout, fds[3] if len(fds) == 4 else None)
    except BaseException as e:  # noqa: BLE001
        try:
            sys.stderr.write("oxiserve python stub: %r\n" % (e,))
        except Exception:
            pass
        _flush_std()
        os._exit(70)
    _flush_std()
    os._exit(0)


def _flush_std():
    """os._exit skips Python's own flushing: what the model printed must not be lost."""
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass


def _spawn(ctl, wake_r, wake_w, msg, fds, children):
    if len(fds) not in (3, 4):
        for fd in fds:
            os.close(fd)
        _send(ctl, {"op": "spawned", "token": msg.get("token"), "pid": 0,
                    "error": "expected 3 or 4 descriptors, got %d" % len(fds)})
        return
    sys.stdout.flush()
    sys.stderr.flush()
    zygote_pid = os.getpid()
    pid = os.fork()
    if pid == 0:
        _child(ctl, wake_r, wake_w, fds, msg, zygote_pid)
    children.add(pid)
    for fd in fds:
        os.close(fd)
    _send(ctl, {"op": "spawned", "token": msg.get("token"), "pid": pid})


def _kill(msg, children):
    """SIGKILL to the child the server names, if it is one not reaped yet: a pid that was
    reaped may already belong to another process (another model's instance)."""
    try:
        pid = int(msg["pid"])
    except (KeyError, ValueError, TypeError):
        return
    if pid in children:
        os.kill(pid, signal.SIGKILL)


def _reap(ctl, children):
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        if os.WIFSIGNALED(status):
            _send(ctl, {"op": "exited", "pid": pid, "signal": os.WTERMSIG(status)})
        elif os.WIFEXITED(status):
            _send(ctl, {"op": "exited", "pid": pid, "code": os.WEXITSTATUS(status)})


def main():
    try:
        ctl = socket.socket(fileno=CONTROL_FD)
    except OSError as e:
        sys.stderr.write("oxiserve zygote: no control socket on fd 3: %s\n" % e)
        return 2
    gc.disable()  # no collections (and freed holes) while importing; re-enabled in children
    ready = _prepare()
    if ready["op"] != "ready":
        _send(ctl, ready)
        return 1
    gc.collect()
    gc.freeze()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    # Ctrl-C reaches the whole process group: the server shuts instances down itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _send(ctl, ready)
    children = set()  # forked and not reaped yet
    while True:
        try:
            readable, _, _ = select.select([ctl, wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in readable:
            try:
                while os.read(wake_r, 512):
                    pass
            except OSError:
                pass
            _reap(ctl, children)
        if ctl in readable:
            try:
                data, fds, _flags, _addr = socket.recv_fds(ctl, MAX_MSG, 8)
            except OSError as e:
                if e.errno in (errno.EINTR, errno.EAGAIN):
                    continue
                return 0
            if not data:
                for fd in fds:
                    os.close(fd)
                return 0  # the server is gone
            try:
                msg = json.loads(data)
                op = msg.get("op")
            except (ValueError, AttributeError):
                for fd in fds:
                    os.close(fd)
                sys.stderr.write("oxiserve zygote: bad control message %r\n" % data[:200])
                continue
            if op == "spawn":
                _spawn(ctl, wake_r, wake_w, msg, fds, children)
            else:
                for fd in fds:
                    os.close(fd)
                if op == "kill":
                    _kill(msg, children)
                else:
                    sys.stderr.write("oxiserve zygote: unknown op %r\n" % (op,))
        _reap(ctl, children)


if __name__ == "__main__":
    sys.exit(main())
