"""Seed 000 with real Python models: the tutorial's model.py template
(auto_complete_config returning its argument, printing initialize/finalize)
filled with a BYTES echo, called with the seed's curl and client examples."""

import json
import re
import subprocess

import numpy as np
import pytest
import tritonclient.http as httpclient

from helpers import wait_for
from python_models import seed_model, serve
from servers import REPO_ROOT

SEEDS = REPO_ROOT.parent / "shared" / "seeds"
CURL = re.compile(r"curl -X POST (\S+) \\\s*-H '([^']*)' \\\s*-d '([^']*)'")


@pytest.fixture(scope="module")
def seed_server(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("py_seed"),
               [seed_model("embedding"), seed_model("tokenizer")]) as server:
        yield server


def _curl_examples():
    found = sorted(SEEDS.glob("000_*.txt"))
    if not found:
        pytest.skip(f"seed 000 not found under {SEEDS}")
    examples = CURL.findall(found[0].read_text(encoding="utf-8"))
    assert len(examples) == 2
    return examples


def _texts(body):
    return [row[0] for row in json.loads(body)["inputs"][0]["data"]]


def test_initialize_printed(seed_server):
    wait_for(lambda: seed_server.output().count("Initialized...") >= 2, timeout=10,
             what="both models' initialize prints")


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


def test_client_snippet(seed_server):
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


def test_auto_complete_keeps_config(seed_server):
    """auto_complete_config returned its argument unchanged."""
    client = httpclient.InferenceServerClient(url=seed_server.url)
    cfg = client.get_model_config("tokenizer")
    client.close()
    assert cfg["max_batch_size"] == 4
    assert [(i["name"], i["data_type"], i["dims"]) for i in cfg["input"]] == [
        ("input_text", "TYPE_STRING", [1])]
    assert [(o["name"], o["data_type"], o["dims"]) for o in cfg["output"]] == [
        ("output__0", "TYPE_STRING", [1])]


def test_finalize_printed_at_shutdown(tmp_path):
    with serve(tmp_path / "repo", [seed_model("embedding")]) as server:
        wait_for(lambda: "Initialized..." in server.output(), timeout=10, what="initialize")
    assert "Cleaning up..." in server.output()
