"""Seed 000's text-embedding pipeline with no Python in the server: the
example repository's `embedding` ensemble (native tokenizer -> all-MiniLM-L6-v2
in ONNX Runtime). Token ids equal Python `tokenizers`', embeddings equal
sentence-transformers' (tests/data/minilm_reference.json, made by
examples/embeddings/make_reference.py), and requests of different lengths
batch together through the encoder's batch padding."""

import json
import threading

import numpy as np
import pytest
import requests
import tokenizers
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from servers import REPO_ROOT, TARGET, Server

EXAMPLES = REPO_ROOT / "examples/model_repository"
REFERENCE = json.loads((REPO_ROOT / "tests/data/minilm_reference.json").read_text())
CASES = REFERENCE["cases"]
SEED_TITLES = ["슈퍼 엔저 장기화에…한국 수출∙경상수지에 비상등",
               "엔저 기조 끝날까… 기나긴 하락 끝에 엔-원 환율 반등"]
pytestmark = pytest.mark.skipif(TARGET == "triton", reason="real Triton here has no onnxruntime backend")


@pytest.fixture(scope="module")
def server():
    with Server(EXAMPLES) as s:
        yield s


def texts_input(module, texts):
    array = np.array([[t.encode()] for t in texts], dtype=np.object_)
    tensor = module.InferInput("input_text", list(array.shape), "BYTES")
    tensor.set_data_from_numpy(array)
    return tensor


def cosine(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["text"][:20] or "empty")
def test_token_ids_equal_python_tokenizers(server, case):
    with httpclient.InferenceServerClient(server.url) as client:
        result = client.infer("minilm_tokenizer", [texts_input(httpclient, [case["text"]])])
    ids = result.as_numpy("input_ids")[0]
    mask = result.as_numpy("attention_mask")[0]
    assert ids.dtype == np.int64
    assert ids[mask == 1].tolist() == case["input_ids"]
    assert mask.tolist() == case["attention_mask"]
    assert result.as_numpy("token_type_ids").tolist() == [[0] * len(case["input_ids"])]


def test_a_request_pads_its_rows_to_its_longest_text(server):
    short, long = CASES[0], max(CASES, key=lambda c: len(c["input_ids"]))
    with httpclient.InferenceServerClient(server.url) as client:
        result = client.infer("minilm_tokenizer", [texts_input(httpclient, [short["text"], long["text"]])])
    ids, mask = result.as_numpy("input_ids"), result.as_numpy("attention_mask")
    assert ids.shape == (2, len(long["input_ids"]))
    assert ids[0, len(short["input_ids"]):].tolist() == [0] * (ids.shape[1] - len(short["input_ids"]))
    assert mask[0].sum() == len(short["input_ids"])


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_embeddings_equal_sentence_transformers(server, protocol):
    module = {"http": httpclient, "grpc": grpcclient}[protocol]
    url = server.url if protocol == "http" else server.grpc_url
    with module.InferenceServerClient(url) as client:
        result = client.infer("embedding", [texts_input(module, [c["text"] for c in CASES])])
    embeddings = result.as_numpy("output__0")
    assert embeddings.shape == (len(CASES), REFERENCE["dim"])
    for got, case in zip(embeddings, CASES):
        expected = np.array(case["embedding"], dtype=np.float32)
        assert cosine(got, expected) >= 0.9999, case["text"][:40]
        np.testing.assert_allclose(got, expected, atol=1e-4)


def test_the_seed_curl_request(server):
    """Seed 000's curl: shape [2,1] BYTES as JSON, embeddings as output__0."""
    body = {"name": "embedding", "inputs": [{"name": "input_text", "shape": [2, 1],
                                             "datatype": "BYTES", "data": [[t] for t in SEED_TITLES]}]}
    resp = requests.post(f"http://{server.url}/v2/models/embedding/versions/1/infer", json=body,
                         timeout=30)
    assert resp.status_code == 200, resp.text
    (output,) = resp.json()["outputs"]
    assert (output["name"], output["datatype"], output["shape"]) == ("output__0", "FP32", [2, 384])
    for row, title in zip(np.array(output["data"]).reshape(2, 384), SEED_TITLES):
        case = next(c for c in CASES if c["text"] == title)
        assert cosine(row, np.array(case["embedding"])) >= 0.9999


def test_invalid_utf8_is_refused_and_the_server_goes_on(server):
    bad = httpclient.InferInput("input_text", [1, 1], "BYTES")
    bad.set_data_from_numpy(np.array([[b"ok \xff\xfe"]], dtype=np.object_))
    with httpclient.InferenceServerClient(server.url) as client:
        with pytest.raises(Exception) as error:
            client.infer("embedding", [bad])
        assert "not valid UTF-8" in str(error.value)
        assert "input_text" in str(error.value)
        result = client.infer("embedding", [texts_input(httpclient, [CASES[0]["text"]])])
        assert result.as_numpy("output__0").shape == (1, 384)


def test_texts_of_different_lengths_batch_together(server):
    """Concurrent single-text requests, every one a different token length:
    each gets the embedding it gets alone, and the encoder ran fewer batches
    than requests (batch_padding pads the token tensors of each run of a batch
    to the run's longest; without it no two of these requests could share a
    batch)."""
    texts = [" ".join(["word"] * k) + f" number {k}" for k in range(1, 17)]

    def embed(client, text):
        return client.infer("embedding", [texts_input(httpclient, [text])]).as_numpy("output__0")[0]

    def counts():
        with httpclient.InferenceServerClient(server.url) as client:
            stats = client.get_inference_statistics("minilm_encoder")["model_stats"][0]
        return int(stats["inference_count"]), int(stats["execution_count"])

    with httpclient.InferenceServerClient(server.url) as client:
        alone = [embed(client, t) for t in texts]
    before = counts()
    results = [None] * len(texts)
    barrier = threading.Barrier(len(texts))

    def one(i):
        with httpclient.InferenceServerClient(server.url) as client:
            barrier.wait()
            results[i] = embed(client, texts[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, expected, text in zip(results, alone, texts):
        assert cosine(got, expected) >= 0.99999, text
        np.testing.assert_allclose(got, expected, atol=1e-5)
    after = counts()
    inferences, executions = after[0] - before[0], after[1] - before[1]
    assert inferences == len(texts)
    assert executions < inferences


def test_the_seed_client_script(server):
    """Seed 000's tritonclient script, as written there (binary BYTES in,
    binary output__0 out)."""
    text = np.array([[t.encode("utf-8")] for t in SEED_TITLES], dtype=np.bytes_)
    input_text = httpclient.InferInput("input_text", list(text.shape), datatype="BYTES")
    input_text.set_data_from_numpy(text, binary_data=True)
    outputs = httpclient.InferRequestedOutput("output__0", binary_data=True)
    client = httpclient.InferenceServerClient(url=server.url)
    result = client.infer(model_name="embedding", inputs=[input_text], outputs=[outputs])
    assert result.as_numpy("output__0").shape == (2, 384)


MORE_TEXTS = ["  leading and trailing spaces  ", "tabs\tand\nnewlines", "ÀÉÎÕÜ ñ ç ß",
              "日本語のテキストと中文文本", "mixed 한국어 English 123,456.78!", "a" * 600,
              "emoji 👩‍👩‍👧‍👦 zwj sequence", "ｆｕｌｌｗｉｄｔｈ"]


def test_token_ids_equal_python_tokenizers_live(server):
    """More texts, compared with the Python `tokenizers` library run here on
    the same tokenizer.json with sentence-transformers' settings."""
    python = tokenizers.Tokenizer.from_file(
        str(EXAMPLES / "minilm_tokenizer/1/tokenizer.json"))
    python.enable_truncation(REFERENCE["max_seq_length"])
    python.no_padding()
    with httpclient.InferenceServerClient(server.url) as client:
        result = client.infer("minilm_tokenizer", [texts_input(httpclient, MORE_TEXTS)])
    ids, mask = result.as_numpy("input_ids"), result.as_numpy("attention_mask")
    for row, row_mask, text in zip(ids, mask, MORE_TEXTS):
        assert row[row_mask == 1].tolist() == python.encode(text).ids, text
