"""Seed 000 (a Korean Triton tutorial): its curl examples, sent byte for byte
with curl, and its tritonclient snippet. They post two Korean headlines as a
BYTES [2, 1] input `input_text` to models `embedding` and `tokenizer`, served
here by echo models on a server of their own."""

import json
import re
import subprocess

import numpy as np
import pytest
import tritonclient.http as httpclient

from models import ModelSpec, Tensor, write_repository
from servers import REPO_ROOT, TARGET, Server

SEEDS = REPO_ROOT.parent / "shared" / "seeds"
CURL = re.compile(r"curl -X POST (\S+) \\\s*-H '([^']*)' \\\s*-d '([^']*)'")


def _seed_model(name):
    """input_text (BYTES, dims [1]) echoed as output__0: oxiserve's identity
    backend pairs tensors by position when they are not named INPUTn/OUTPUTn;
    on real Triton (Python backend only here) a Python echo model."""
    return ModelSpec(
        name,
        [Tensor("input_text", "BYTES", [1])],
        [Tensor("output__0", "BYTES", [1])],
        max_batch_size=4,
    )


@pytest.fixture(scope="module")
def seed_server(tmp_path_factory):
    specs = [_seed_model("embedding"), _seed_model("tokenizer")]
    repo = write_repository(tmp_path_factory.mktemp("seed"), specs, TARGET)
    with Server(repo) as server:
        yield server


def _seed_text():
    found = sorted(SEEDS.glob("000_*.txt"))
    if not found:
        pytest.skip(f"seed 000 not found under {SEEDS}")
    return found[0].read_text(encoding="utf-8")


def _curl_examples():
    examples = CURL.findall(_seed_text())
    assert len(examples) == 2, "the seed has two curl examples"
    return examples


def _texts(body):
    return [row[0] for row in json.loads(body)["inputs"][0]["data"]]


@pytest.mark.parametrize("which", [0, 1], ids=["embedding", "tokenizer"])
def test_curl_example(seed_server, which):
    url, header, body = _curl_examples()[which]
    url = url.replace("localhost:8000", seed_server.url)
    done = subprocess.run(
        ["curl", "-sS", "-X", "POST", url, "-H", header, "-d", body, "-w", "\n%{http_code}"],
        capture_output=True, timeout=60, check=True,
    )
    text, status = done.stdout.decode("utf-8").rsplit("\n", 1)
    assert status == "200", text
    reply = json.loads(text)
    assert reply["model_name"] == url.split("/")[-4]
    assert reply["model_version"] == "1"
    (out,) = reply["outputs"]
    assert (out["name"], out["datatype"], out["shape"]) == ("output__0", "BYTES", [2, 1])
    assert out["data"] == _texts(body)
    assert "엔저" in out["data"][1]


def test_client_snippet(seed_server):
    """The seed's tritonclient example: binary BYTES in, output__0 binary out."""
    rows = _texts(_curl_examples()[0][2])
    client = httpclient.InferenceServerClient(url=seed_server.url)
    text = np.array([[r.encode("utf-8")] for r in rows], dtype=np.bytes_)
    input_text = httpclient.InferInput("input_text", list(text.shape), datatype="BYTES")
    input_text.set_data_from_numpy(text, binary_data=True)
    outputs = httpclient.InferRequestedOutput("output__0", binary_data=True)
    result = client.infer(model_name="embedding", inputs=[input_text], outputs=[outputs])
    got = result.as_numpy("output__0")
    assert got.shape == (2, 1)
    assert [x.decode("utf-8") for x in got.ravel()] == rows
    client.close()
