"""Starts and stops the server under test: oxiserve or, for reference, real Triton.

`OXI_TARGET` picks it: "oxiserve" (the default) or "triton". oxiserve binds
port 0 and reports the real port in Triton's "Started HTTPService at" line;
real Triton gets free ports picked in 18200-18299 (or OXI_TRITON_PORTS).
"""

import os
import re
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
TARGET = os.environ.get("OXI_TARGET", "oxiserve")
REAL_TRITON = Path(
    os.environ.get("REAL_TRITON", REPO_ROOT.parent / "shared/tools/real-triton.sh")
)
# Real Triton's first run installs it (real-triton.sh), so it gets longer.
START_TIMEOUT_S = float(os.environ.get("OXI_START_TIMEOUT", 180 if TARGET == "triton" else 30))
STARTED = re.compile(r"Started HTTPService at [^\s:]+:(\d+)")
METRICS_STARTED = re.compile(r"Started Metrics Service at [^\s:]+:(\d+)")
GRPC_STARTED = re.compile(r"Started GRPCInferenceService at [^\s:]+:(\d+)")
# OXI_TRITON_PORTS="LOW-HIGH" moves real Triton's ports (HIGH excluded).
_LOW, _HIGH = os.environ.get("OXI_TRITON_PORTS", "18200-18300").split("-")
TRITON_PORTS = range(int(_LOW), int(_HIGH))
ERROR_LINE = re.compile(r"^E\d{4} |UNAVAILABLE|[Ee]rror:")

if TARGET not in ("oxiserve", "triton"):
    raise RuntimeError(f"OXI_TARGET must be 'oxiserve' or 'triton', not {TARGET!r}")


def oxiserve_bin():
    return Path(os.environ.get("OXISERVE_BIN", REPO_ROOT / "target/debug/oxiserve"))


def oxiserve_validate(repo, timeout=300):
    """`oxiserve validate REPO` run to its exit: (exit status, its standard
    output, both outputs for assertion messages)."""
    proc = subprocess.run([str(oxiserve_bin()), "validate", str(repo)],
                          capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"


def _port_free(port):
    with socket.socket() as s:
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def accepts(port):
    """Whether something listens on 127.0.0.1:`port`."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def free_port():
    """A loopback port that is free now (for helper servers)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def terminate(proc, timeout=10):
    """SIGTERM to a helper process (nginx, Prometheus, moto), SIGKILL after `timeout` s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


_next_port = [TRITON_PORTS.start]


def _triton_ports():
    """Three consecutive free ports (HTTP, gRPC, metrics) in our range."""
    while _next_port[0] + 2 < TRITON_PORTS.stop:
        base = _next_port[0]
        _next_port[0] += 3
        if all(_port_free(base + i) for i in range(3)):
            return base
    _next_port[0] = TRITON_PORTS.start
    raise RuntimeError(f"no three free ports left in {TRITON_PORTS}")


def command(repo, flags=(), binary=None):
    """The command line that serves `repo` with `flags` on the target
    (oxiserve: `binary`, by default `oxiserve_bin()`)."""
    repo = f"--model-repository={repo}"
    if TARGET == "triton":
        if not REAL_TRITON.is_file():
            pytest.fail(f"{REAL_TRITON} not found: set REAL_TRITON", pytrace=False)
        base = _triton_ports()
        ports = [
            f"--http-port={base}",
            f"--grpc-port={base + 1}",
            f"--metrics-port={base + 2}",
        ]
        return ["bash", str(REAL_TRITON), repo, *ports, *flags]
    binary = Path(binary or oxiserve_bin())
    if not binary.is_file():
        pytest.fail(
            f"oxiserve binary not found at {binary}: build it with `cargo build` "
            "or set OXISERVE_BIN (or run against Triton with OXI_TARGET=triton)",
            pytrace=False,
        )
    ports = ["--http-port=0", "--grpc-port=0", "--metrics-port=0"]
    return [str(binary), repo, *ports, *flags]


def run_to_exit(repo, flags=(), timeout=60):
    """Runs a server expected to stop by itself: (exit status, output).

    A server still running after `timeout` seconds is killed; status is None.
    """
    proc = subprocess.Popen(
        command(repo, flags),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
        status = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, _ = proc.communicate()
        status = None
    try:
        os.killpg(proc.pid, 9)  # Python backend stubs it may have left
    except ProcessLookupError:
        pass
    return status, out.decode("utf-8", "replace")


def _summary(lines, errors=30, tail=10):
    """The error lines (Triton's "E" lines, unavailable models) and the last lines."""
    bad = [line for line in lines if ERROR_LINE.search(line)][:errors]
    shown = "\n".join(bad) if bad else "(no error lines)"
    return f"--- error lines ---\n{shown}\n--- last lines ---\n" + "\n".join(lines[-tail:])


class Server:
    """A running server process; `url` is "127.0.0.1:PORT" for tritonclient.

    `binary`, `env` and `cwd` (oxiserve) run another copy of the binary, in
    another environment or folder."""

    def __init__(self, repo, flags=(), binary=None, env=None, cwd=None):
        self.repo = Path(repo)
        self._binary, self._env, self._cwd = binary, env, cwd
        self.lines = []
        self._lock = threading.Lock()
        self._started = threading.Event()
        self.port = None
        self.metrics_port = None  # from the "Started Metrics Service at" line
        self.grpc_port = None  # from the "Started GRPCInferenceService at" line
        self.proc = None
        self._start(list(flags))

    def _start(self, flags):
        self.proc = subprocess.Popen(
            command(self.repo, flags, self._binary),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=self._env,
            cwd=self._cwd,
        )
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._started.wait(0.05):
            if self.proc.poll() is not None:
                self._drainer.join(5)  # read the last lines
                self._fail(f"exited with status {self.proc.returncode} before serving")
            if time.monotonic() > deadline:
                self._fail(f'printed no "Started HTTPService at" line in {START_TIMEOUT_S:.0f} s')
        # Triton prints the line a moment before its socket accepts connections.
        while not accepts(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self._fail(f"printed the Started line but port {self.port} refuses connections")
            time.sleep(0.05)
        self.url = f"127.0.0.1:{self.port}"
        # Both servers print the gRPC line before the HTTP one.
        while self.grpc_port is not None and not accepts(self.grpc_port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self._fail(f"printed the Started line but gRPC port {self.grpc_port} refuses connections")
            time.sleep(0.05)
        self.grpc_url = f"127.0.0.1:{self.grpc_port}" if self.grpc_port else None

    def _drain(self):
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self._lock:
                self.lines.append(line)
            grpc = GRPC_STARTED.search(line)
            if grpc:
                self.grpc_port = int(grpc.group(1))
            metrics = METRICS_STARTED.search(line)
            if metrics:
                self.metrics_port = int(metrics.group(1))
            match = STARTED.search(line)
            if match and not self._started.is_set():
                self.port = int(match.group(1))
                self._started.set()

    def output(self):
        with self._lock:
            return "\n".join(self.lines)

    def _fail(self, why):
        self.stop()
        log = self.repo.parent / f"{self.repo.name}.server.log"
        log.write_text(self.output() + "\n")
        pytest.fail(
            f"{TARGET} {why}\ncommand: {' '.join(self.proc.args)}\n"
            f"full output: {log}\n{_summary(self.output().splitlines())}",
            pytrace=False,
        )

    def stop(self):
        """SIGTERM, then SIGKILL to the process group after 15 s."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
        try:  # the server and anything it left behind (Python backend stubs)
            os.killpg(self.proc.pid, 9)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self._drainer.join(5)  # the last lines, written by the server's children too

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
