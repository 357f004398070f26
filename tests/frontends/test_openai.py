"""The OpenAI-compatible API under /v1 on the HTTP port, driven with the
official `openai` client (streaming included) and with `requests` for the
raw Server-Sent Events framing and the error JSON.

oxiserve only: Triton's server has no /v1 (its OpenAI frontend is a
separate Python program), so every test here is skipped against it.
"""

import json

import numpy as np
import openai
import pytest
import requests
import tritonclient.http as httpclient

from models import model_source
from python_models import PyModel, config, serve
from servers import REPO_ROOT, Server

pytestmark = pytest.mark.oxiserve_only

EXAMPLES = REPO_ROOT / "examples" / "model_repository"
PROMPT = "the quick brown fox"
# The probe's template: a role per line, bos_token first; a tool message
# makes it raise.
PROBE_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "{% if m.role == 'tool' %}{{ raise_exception('tool messages are not supported') }}{% endif %}"
    "[{{ m.role }}] {{ m.content }}\\n{% endfor %}"
    "{% if add_generation_prompt %}[assistant]{% endif %}"
)


def example_model(name):
    """A model of examples/model_repository, as it is there."""
    folder = EXAMPLES / name
    text = (folder / "config.pbtxt").read_text()
    body = "\n".join(
        line for line in text.splitlines() if not line.startswith(("name:", "backend:"))
    )
    return PyModel(name, (folder / "1" / "model.py").read_text(), body + "\n")


def template_parameters(template, **tokens):
    pairs = {"chat_template": template, **tokens}
    return "".join(
        f'parameters {{ key: "{key}" value {{ string_value: "{value}" }} }}\n'
        for key, value in pairs.items()
    )


def probe(name, extra="", optional_inputs=True):
    """The openai_probe model: text_output tells what it was sent."""
    inputs = [("text_input", "BYTES", [1])]
    if optional_inputs:
        inputs += [("max_tokens", "INT32", [1], "optional: true"),
                   ("seed", "INT64", [1], "optional: true")]
    return PyModel(name, model_source("openai_probe"),
                   config(inputs, [("text_output", "BYTES", [1])], extra=extra))


def fails_late():
    return PyModel("fails_late", model_source("openai_fails_late"),
                   config([("text_input", "BYTES", [1])], [("text_output", "BYTES", [1])],
                          extra="model_transaction_policy { decoupled: true }\n"))


def text_vector():
    return PyModel("text_vector", model_source("text_vector"),
                   config([("text", "BYTES", [1])], [("vector", "FP32", [3])]))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    models = [
        example_model("text_stream"),
        probe("probe", template_parameters(PROBE_TEMPLATE, bos_token="<s>")),
        probe("plain", optional_inputs=False),
        probe("broken", template_parameters("{% for m in messages %}")),
        text_vector(),
        fails_late(),
    ]
    with serve(tmp_path_factory.mktemp("openai"), models) as s:
        yield s


@pytest.fixture(scope="module")
def client(server):
    with openai.OpenAI(base_url=f"http://{server.url}/v1", api_key="unused",
                       max_retries=0) as c:
        yield c


def post(server, path, body):
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return requests.post(f"http://{server.url}/v1/{path}", data=data,
                         headers={"Content-Type": "application/json"}, timeout=60)


def described(text):
    """What the probe model was sent."""
    return json.loads(text)


def expect_openai_error(response, status, param, *needles):
    """`response` is `status` with OpenAI's error object naming `param`."""
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert error["type"] == ("server_error" if status >= 500 else "invalid_request_error")
    assert error["param"] == param, error
    for needle in needles:
        assert needle in error["message"], (needle, error["message"])
    return error


def raw_events(response):
    """The `data:` payloads of an event stream: every event is one `data:`
    line and a blank line, and the last is [DONE]."""
    assert response.headers["Content-Type"] == "text/event-stream; charset=utf-8"
    body = response.content.decode()
    assert body.endswith("data: [DONE]\n\n"), repr(body[-80:])
    events = body.split("\n\n")[:-1]
    assert all(e.startswith("data: ") and "\n" not in e for e in events), events
    return [e[len("data: "):] for e in events]


# --- models -----------------------------------------------------------------

def test_models_lists_the_ready_models(client):
    models = client.models.list().data
    assert [m.id for m in models] == [
        "broken", "fails_late", "plain", "probe", "text_stream", "text_vector"]
    for m in models:
        assert (m.object, m.owned_by) == ("model", "oxiserve")
        assert isinstance(m.created, int) and m.created > 0
    assert client.models.retrieve("probe").id == "probe"


def test_an_unknown_model_is_not_found(server, client):
    with pytest.raises(openai.NotFoundError) as caught:
        client.models.retrieve("nope")
    assert caught.value.code == "model_not_found"
    r = requests.get(f"http://{server.url}/v1/models/nope", timeout=30)
    expect_openai_error(r, 404, "model", "'nope'")
    r = post(server, "completions", {"model": "nope", "prompt": "hi"})
    assert expect_openai_error(r, 404, "model")["code"] == "model_not_found"


# --- completions --------------------------------------------------------------

def test_a_completion_is_the_whole_text(client):
    c = client.completions.create(model="text_stream", prompt=PROMPT)
    assert (c.object, c.model) == ("text_completion", "text_stream")
    assert c.id.startswith("cmpl-")
    assert len(c.choices) == 1
    choice = c.choices[0]
    assert (choice.index, choice.text, choice.finish_reason) == (0, PROMPT, "stop")
    assert choice.logprobs is None
    assert c.usage is None  # oxiserve does not count tokens


def test_max_tokens_reaches_the_model_and_its_finish_reason_comes_back(client):
    c = client.completions.create(model="text_stream", prompt=PROMPT, max_tokens=2)
    assert (c.choices[0].text, c.choices[0].finish_reason) == ("the quick", "length")


def test_a_streamed_completion_sends_one_chunk_per_response(client):
    chunks = list(client.completions.create(model="text_stream", prompt=PROMPT, stream=True))
    assert [c.choices[0].text for c in chunks] == ["the", " quick", " brown", " fox", ""]
    assert [c.choices[0].finish_reason for c in chunks] == [None] * 4 + ["stop"]
    assert len({c.id for c in chunks}) == 1
    assert all(c.object == "text_completion" and c.model == "text_stream" for c in chunks)
    chunks = list(client.completions.create(model="text_stream", prompt=PROMPT,
                                            max_tokens=1, stream=True))
    assert [(c.choices[0].text, c.choices[0].finish_reason) for c in chunks] == [
        ("the", None), ("", "length")]


def test_sampling_fields_go_to_inputs_or_parameters(client):
    c = client.completions.create(
        model="probe", prompt=["hi"], max_tokens=5, seed=7, temperature=0.5, top_p=0.9,
        stop=["x", "y"], presence_penalty=0.0, user="someone", extra_body={"top_k": 3})
    seen = described(c.choices[0].text)
    assert seen == {
        "text_input": "hi",
        "max_tokens": [5],
        "seed": [7],
        # A list has no parameter type: its JSON text is sent.
        "parameters": {"temperature": 0.5, "top_p": 0.9, "stop": '["x","y"]',
                       "presence_penalty": 0.0, "top_k": 3, "stream": False},
    }


def test_a_model_without_the_fields_as_inputs_gets_parameters(client):
    c = client.completions.create(model="plain", prompt="hi", max_tokens=5, seed=7, stop="x")
    seen = described(c.choices[0].text)
    assert seen["parameters"] == {"max_tokens": 5, "seed": 7, "stop": "x", "stream": False}


def test_a_non_decoupled_model_streams_one_chunk(client):
    chunks = list(client.completions.create(model="plain", prompt="hi", stream=True))
    assert described(chunks[0].choices[0].text)["parameters"]["stream"] is True
    assert [c.choices[0].finish_reason for c in chunks] == [None, "stop"]


# --- chat ---------------------------------------------------------------------

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello there"}]
RENDERED = "<|system|> Be brief.\n<|user|> Hello there\n<|assistant|>"


def test_chat_renders_the_model_s_template(client):
    c = client.chat.completions.create(model="text_stream", messages=MESSAGES)
    assert (c.object, c.model) == ("chat.completion", "text_stream")
    assert c.id.startswith("chatcmpl-")
    choice = c.choices[0]
    assert (choice.index, choice.finish_reason) == (0, "stop")
    assert (choice.message.role, choice.message.content) == ("assistant", RENDERED)


def test_a_streamed_chat_sends_the_role_then_deltas(client):
    chunks = list(client.chat.completions.create(model="text_stream", messages=MESSAGES,
                                                 stream=True))
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == RENDERED
    assert [c.choices[0].finish_reason for c in chunks][-2:] == [None, "stop"]
    assert len({c.id for c in chunks}) == 1


def test_max_completion_tokens_is_max_tokens(client):
    c = client.chat.completions.create(model="text_stream", messages=MESSAGES,
                                       max_completion_tokens=1)
    assert (c.choices[0].message.content, c.choices[0].finish_reason) == ("<|system|>", "length")


def test_templates_get_the_tokens_and_text_parts(client):
    messages = [{"role": "system", "content": "s"},
                {"role": "user", "content": [{"type": "text", "text": "h"},
                                             {"type": "text", "text": "i"}]}]
    c = client.chat.completions.create(model="probe", messages=messages, temperature=0.2)
    seen = described(c.choices[0].message.content)
    assert seen["text_input"] == "<s>[system] s\n[user] hi\n[assistant]"
    assert seen["parameters"]["temperature"] == 0.2


def test_without_a_template_messages_are_joined(client):
    c = client.chat.completions.create(model="plain", messages=MESSAGES)
    assert described(c.choices[0].message.content)["text_input"] == (
        "system: Be brief.\nuser: Hello there\nassistant:")


def test_a_template_that_fails_on_the_messages_is_a_bad_request(server, client):
    messages = [{"role": "tool", "content": "42", "tool_call_id": "1"}]
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="probe", messages=messages)
    assert "tool messages are not supported" in caught.value.message
    r = post(server, "chat/completions", {"model": "probe", "messages": messages})
    expect_openai_error(r, 400, "messages", "chat template of model 'probe'")


def test_a_template_that_does_not_compile_is_a_server_error(server, client):
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="broken", messages=MESSAGES)
    r = post(server, "chat/completions", {"model": "broken", "messages": MESSAGES})
    expect_openai_error(r, 500, None, "config parameter 'chat_template'", "not a valid template")


# --- raw framing and bad requests --------------------------------------------

def test_the_stream_is_server_sent_events_ending_with_done(server):
    r = post(server, "chat/completions",
             {"model": "text_stream", "messages": MESSAGES, "stream": True})
    assert r.status_code == 200
    events = raw_events(r)
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "logprobs": None,
                                        "finish_reason": "stop"}
    assert {c["id"] for c in chunks} == {chunks[0]["id"]}
    assert set(chunks[1]) == {"id", "object", "created", "model", "choices"}


@pytest.mark.parametrize("path, body, param, needle", [
    ("completions", {"prompt": "hi"}, "model", "'model' is a required property"),
    ("completions", {"model": "text_stream"}, "prompt", "'prompt' is a required property"),
    ("completions", {"model": "text_stream", "prompt": ["a", "b"]}, "prompt", "one prompt"),
    ("completions", {"model": "text_stream", "prompt": [1, 2]}, "prompt", "token lists"),
    ("completions", {"model": "text_stream", "prompt": "a", "n": 2}, "n", "only n=1"),
    ("completions", {"model": "text_stream", "prompt": "a", "logprobs": 1}, "logprobs", ""),
    ("completions", {"model": "text_stream", "prompt": "a", "echo": True}, "echo", ""),
    ("completions", {"model": "text_stream", "prompt": "a", "stream": True,
                     "stream_options": {"include_usage": True}}, "stream_options", "count tokens"),
    ("completions", {"model": "text_vector", "prompt": "a"}, "model",
     "does not follow the generate convention: it has no BYTES input 'text_input'"),
    ("completions", {"model": "probe", "prompt": "a", "max_tokens": "five"}, None,
     "attempt to access JSON non-signed-integer as signed-integer"),
    ("chat/completions", {"model": "text_stream"}, "messages", "'messages' must be a list"),
    ("chat/completions", {"model": "text_stream", "messages": [{"content": "x"}]},
     "messages[0]", "'role' must be a string"),
    ("chat/completions", {"model": "text_stream", "messages": MESSAGES,
                          "tools": [{"type": "function", "function": {"name": "f"}}]},
     "tools", "tool calls are not supported"),
    ("chat/completions", {"model": "text_stream", "messages": MESSAGES, "logprobs": True},
     "logprobs", ""),
    ("embeddings", {"model": "text_vector", "input": [[1, 2]]}, "input", "token lists"),
    ("embeddings", {"model": "text_vector", "input": "a", "dimensions": 2}, "dimensions", ""),
    ("embeddings", {"model": "probe", "input": "a"}, "model",
     "needs one BYTES input and one FP32 or FP64 output"),
    ("embeddings", {"model": "text_vector", "input": "a", "encoding_format": "hex"},
     "encoding_format", ""),
])
def test_bad_requests_are_400_naming_the_member(server, path, body, param, needle):
    expect_openai_error(post(server, path, body), 400, param, needle)


@pytest.mark.parametrize("body", ["{", "[1]", ""])
def test_a_body_that_is_not_a_json_object_is_400(server, body):
    expect_openai_error(post(server, "completions", body), 400, None, "JSON")


def test_a_stream_that_fails_at_once_is_an_ordinary_error(server, client):
    with pytest.raises(openai.NotFoundError):
        list(client.chat.completions.create(model="nope", messages=MESSAGES, stream=True))
    r = post(server, "completions", {"model": "text_vector", "prompt": "a", "stream": True})
    assert r.headers["Content-Type"] == "application/json"
    expect_openai_error(r, 400, "model")


def test_an_error_after_text_is_an_error_event_before_done(server, client):
    r = post(server, "completions", {"model": "fails_late", "prompt": "a", "stream": True})
    assert r.status_code == 200
    events = raw_events(r)
    assert json.loads(events[0])["choices"][0]["text"] == "partial"
    error = json.loads(events[1])["error"]
    assert (error["message"], error["type"]) == ("ran out of words", "server_error")
    assert events[2:] == ["[DONE]"]
    stream = client.completions.create(model="fails_late", prompt="a", stream=True)
    with pytest.raises(openai.APIError, match="ran out of words"):
        for chunk in stream:
            assert chunk.choices[0].text == "partial"
    # Without streaming the error is the answer's.
    r = post(server, "completions", {"model": "fails_late", "prompt": "a"})
    expect_openai_error(r, 500, None, "ran out of words")


def test_the_server_keeps_serving_after_bad_requests(client):
    c = client.completions.create(model="text_stream", prompt="still here")
    assert c.choices[0].text == "still here"


# --- embeddings -----------------------------------------------------------------

def test_embeddings_with_the_openai_client(client):
    # The client asks for base64 and decodes it.
    result = client.embeddings.create(model="text_vector", input=["a b", "abc"])
    assert (result.object, result.model) == ("list", "text_vector")
    assert [(e.object, e.index) for e in result.data] == [("embedding", 0), ("embedding", 1)]
    assert [e.embedding for e in result.data] == [[3.0, 1.0, 0.25], [3.0, 0.0, 0.25]]
    floats = client.embeddings.create(model="text_vector", input="a b c",
                                      encoding_format="float")
    assert floats.data[0].embedding == [5.0, 2.0, 0.25]
    assert (floats.usage.prompt_tokens, floats.usage.total_tokens) == (0, 0)


def test_embeddings_raw(server):
    r = post(server, "embeddings", {"model": "text_vector", "input": "ab"})
    assert r.status_code == 200, r.text
    assert r.json() == {"object": "list", "model": "text_vector",
                        "data": [{"object": "embedding", "index": 0,
                                  "embedding": [2.0, 0.0, 0.25]}],
                        "usage": {"prompt_tokens": 0, "total_tokens": 0}}
    r = post(server, "embeddings", {"model": "text_vector", "input": "ab",
                                    "encoding_format": "base64"})
    vector = np.frombuffer(__import__("base64").b64decode(r.json()["data"][0]["embedding"]),
                           dtype="<f4")
    assert vector.tolist() == [2.0, 0.0, 0.25]


@pytest.mark.skipif(not (EXAMPLES / "minilm_encoder/1/model.onnx").exists(),
                    reason="the example embedding model is not exported (scripts/embedding-model.sh)")
def test_the_example_embedding_ensemble(tmp_path):
    texts = ["오늘의 날씨", "hello world"]
    with Server(EXAMPLES) as s:
        with openai.OpenAI(base_url=f"http://{s.url}/v1", api_key="unused",
                           max_retries=0) as c:
            result = c.embeddings.create(model="embedding", input=texts)
            streamed = "".join(chunk.choices[0].text for chunk in c.completions.create(
                model="text_stream", prompt="served as it is", stream=True))
        with httpclient.InferenceServerClient(s.url) as triton:
            tensor = httpclient.InferInput("input_text", [2, 1], "BYTES")
            tensor.set_data_from_numpy(np.array([[t.encode()] for t in texts], dtype=np.object_))
            expected = triton.infer("embedding", [tensor]).as_numpy("output__0")
    got = np.array([e.embedding for e in result.data], dtype=np.float32)
    assert got.shape == (2, 384)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    assert streamed == "served as it is"


# --- restrictions ---------------------------------------------------------------

def test_restricted_apis_cover_v1(tmp_path):
    flags = ["--http-restricted-api=inference:infer-key=secret",
             "--http-restricted-api=metadata:meta-key=secret"]
    with serve(tmp_path / "repo", [probe("plain", optional_inputs=False)], flags) as s:
        body = json.dumps({"model": "plain", "prompt": "hi"})
        url = f"http://{s.url}/v1"
        r = requests.post(f"{url}/completions", data=body, timeout=30)
        assert r.status_code == 403
        assert "expecting header 'infer-key'" in r.text
        r = requests.post(f"{url}/completions", data=body, headers={"infer-key": "secret"},
                          timeout=30)
        assert r.status_code == 200, r.text
        assert requests.get(f"{url}/models", timeout=30).status_code == 403
        r = requests.get(f"{url}/models", headers={"meta-key": "secret"}, timeout=30)
        assert [m["id"] for m in r.json()["data"]] == ["plain"]
