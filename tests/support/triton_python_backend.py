"""Triton's own Python backend library (`libtriton_python.so`, its
`triton_python_backend_stub` and `triton_python_backend_utils.py`), taken from
the `nvidia-pytriton` wheel on PyPI, as a --backend-directory for the tests
that serve it through oxiserve's backend C API host.

`install()` builds it once, under target/triton-python-backend/<X.Y>/ (X.Y:
the Python running the tests, whose stub it takes), and later calls reuse it:

- pytriton/tritonserver/backends/python/: the library, the utils module and
  the stub, in the wheel's own layout, so that their RPATH
  ($ORIGIN/../../../../nvidia_pytriton.libs) finds the libraries beside;
- nvidia_pytriton.libs/: the wheel's renamed libraries those three need
  (found from their DT_NEEDED entries with `readelf`), but
  libtritonserver-717102f0.so, which the server under test provides;
- venv/: the interpreter the stub runs, with numpy < 2 (the stub of this
  wheel is built against numpy 1).

A lock file keeps two test sessions from building it at once."""

import fcntl
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from servers import REPO_ROOT

WHEEL = "nvidia-pytriton==0.7.0"
NUMPY = "numpy==1.26.4"  # < 2, as the stub needs; the version tests/ use
ROOT = REPO_ROOT / "target" / "triton-python-backend"
BACKEND = Path("pytriton/tritonserver/backends/python")
LIBS = Path("nvidia_pytriton.libs")
# What the server under test provides itself (oxiserve and tritonserver alike).
PROVIDED = {"libtritonserver-717102f0.so"}


@dataclass
class PythonBackend:
    """Where the library is, and the environment its stub needs."""

    backend_directory: Path  # holds python/libtriton_python.so
    env: dict  # the server's environment: os.environ plus the stub's needs

    @property
    def flag(self):
        return f"--backend-directory={self.backend_directory}"


def _python_version():
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _needed(path):
    """The DT_NEEDED entries of the ELF file `path`."""
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in out.splitlines()
            if "(NEEDED)" in line]


def _extract(wheel, folder, version):
    """The backend files and the libraries they need, from `wheel` into `folder`."""
    stub = f"pytriton/tritonserver/python_backend_stubs/{version}/triton_python_backend_stub"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        if stub not in names:
            raise RuntimeError(f"{WHEEL} has no Python backend stub for Python {version}")
        backend = folder / BACKEND
        backend.mkdir(parents=True)
        for name in ("libtriton_python.so", "triton_python_backend_utils.py"):
            (backend / name).write_bytes(z.read(str(BACKEND / name)))
        (backend / "triton_python_backend_stub").write_bytes(z.read(stub))
        (backend / "triton_python_backend_stub").chmod(0o755)
        (folder / LIBS).mkdir()
        todo = [backend / "libtriton_python.so", backend / "triton_python_backend_stub"]
        while todo:
            for lib in _needed(todo.pop()):
                member = str(LIBS / lib)
                if lib in PROVIDED or member not in names or (folder / member).exists():
                    continue  # the server's own, a system library, or done
                (folder / member).write_bytes(z.read(member))
                todo.append(folder / member)


def _build(folder, version):
    with tempfile.TemporaryDirectory(prefix="oxi-pytriton-") as download:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--disable-pip-version-check", "-d", download, WHEEL], check=True)
        _extract(next(Path(download).glob("*.whl")), folder, version)
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True)
    subprocess.run([str(folder / "venv/bin/python"), "-m", "pip", "install", "-q",
                    "--disable-pip-version-check", NUMPY], check=True)


def install():
    """Triton's Python backend library for this Python, built on first use."""
    version = _python_version()
    folder = ROOT / version
    ROOT.mkdir(parents=True, exist_ok=True)
    with open(ROOT / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = folder / ".complete"
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # an interrupted build
            folder.mkdir()
            _build(folder, version)
            done.write_text(WHEEL + "\n")
    backend = PythonBackend(folder / BACKEND.parent, _stub_env(folder))
    _check_stub(backend)
    return backend


def _check_stub(backend):
    """Raises naming the libraries the stub would not find (its libpython,
    when this Python has none as a shared library)."""
    stub = backend.backend_directory / "python" / "triton_python_backend_stub"
    out = subprocess.run(["ldd", str(stub)], env=backend.env, capture_output=True,
                         text=True, check=True).stdout
    missing = [line.split()[0] for line in out.splitlines() if "not found" in line]
    if missing:
        raise RuntimeError(f"{stub} needs {', '.join(missing)}, not found with "
                           f"LD_LIBRARY_PATH={backend.env['LD_LIBRARY_PATH']}")


def _stub_env(folder):
    """os.environ plus what the stub needs, as a Triton user of the wheel gives
    it too: the folder of the libpython it was built for (this Python's
    LIBDIR) on LD_LIBRARY_PATH, and the numpy < 2 venv first on PATH (the
    embedded interpreter takes the first `python3` on PATH as its home)."""
    env = dict(os.environ)
    libdir = sysconfig.get_config_var("LIBDIR")
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (libdir, env.get("LD_LIBRARY_PATH")) if p)
    env["PATH"] = os.pathsep.join((str(folder / "venv/bin"), env.get("PATH", "")))
    return env
