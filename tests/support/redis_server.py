"""A real Redis server (Debian's `redis-server`, installed by
scripts/tools.sh) on a free loopback port, in memory, for the Redis response
cache's tests: it can be stopped and started again on the same port, and
`cli` runs `redis-cli` against it."""

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import wait_for
from servers import free_port, terminate


def _binary(name):
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} not found: scripts/tools.sh installs it (apt-get install redis-server)")
    return found


class RedisServer:
    """`redis-server` with `args` added (e.g. a password or TLS files),
    listening with TLS only when `tls`; `cli` is the redis-cli flags that
    reach it (a password, TLS files)."""

    def __init__(self, folder, args=(), cli=(), tls=False):
        self.folder = Path(folder)
        self.port = free_port()
        self.args = list(args)
        self.cli_flags = list(cli)
        self.tls = tls
        self.proc = None
        self.start()

    def start(self):
        port = ["--port", "0", "--tls-port", str(self.port)] if self.tls else ["--port", str(self.port)]
        self.log = self.folder / f"redis-{self.port}.log"
        self.proc = subprocess.Popen(
            [_binary("redis-server"), *port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--logfile", str(self.log), *self.args],
            cwd=self.folder, stdin=subprocess.DEVNULL, start_new_session=True,
        )
        wait_for(self._up, what=f"redis-server to answer on port {self.port}")

    def _up(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"redis-server exited:\n{self.log.read_text()}")
        return self.cli("PING", check=False) == "PONG"

    def stop(self):
        terminate(self.proc)

    def cli(self, *command, db=0, check=True):
        """`redis-cli`'s answer to `command`, as text."""
        done = subprocess.run(
            [_binary("redis-cli"), "-p", str(self.port), "-n", str(db), *self.cli_flags, *command],
            capture_output=True, text=True, timeout=10, check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"redis-cli {command}: {done.stderr}")
        return done.stdout.strip()

    def keys(self, db=0):
        """How many keys database `db` holds."""
        return int(self.cli("DBSIZE", db=db))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
