"""`batch_padding: "buckets"` (beyond Triton): a batch of requests of
different lengths is sorted by length and cut into runs, each padded to its
own longest, so short requests stop paying for long ones. An ONNX identity
model on INT64 [N, L] shows the padding each request got: its output is its
input followed by the pad value, as long as its run's longest. The same
requests on `batch_padding: "longest"` all come back as long as the batch's
longest. A bad parameter fails the load, and `oxiserve validate`, naming
the file, the parameter and what is wrong."""

import threading

import numpy as np
import pytest
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from onnx_models import identity_model
from servers import TARGET, Server, oxiserve_validate

pytestmark = pytest.mark.skipif(TARGET == "triton", reason="batch_padding is oxiserve's")

SHORT, LONG = [2, 2, 3], [40, 41, 41]
DELAY_US = 300_000  # long enough for every request of a round to join one batch


def _config(model, padding):
    return model.config(16, f"""dynamic_batching {{ max_queue_delay_microseconds: {DELAY_US} }}
parameters {{ key: "batch_padding" value: {{ string_value: "{padding}" }} }}
parameters {{ key: "batch_pad_value" value: {{ string_value: "-7" }} }}""")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = tmp_path_factory.mktemp("buckets_repo")
    for name, padding in [("buckets", "buckets"), ("longest", "longest")]:
        model = identity_model(name, "INT64", ("N", "L"))
        model.write(repo, _config(model, padding))
    broken = identity_model("bad_cost", "INT64", ("N", "L"))
    broken.write(repo, _config(broken, "buckets")
                 + 'parameters { key: "batch_bucket_cost" value: { string_value: "many" } }\n')
    with Server(repo, ["--exit-on-error=false"]) as s:
        yield s


def _round(server, model):
    """Every request of SHORT + LONG at once; (input, output, executions)."""
    lengths = SHORT + LONG
    inputs = [np.arange(1, n + 1, dtype=np.int64).reshape(1, n) + 100 * k
              for k, n in enumerate(lengths)]
    outputs = [None] * len(lengths)
    barrier = threading.Barrier(len(lengths))

    def one(k):
        with httpclient.InferenceServerClient(server.url) as client:
            tensor = httpclient.InferInput("IN", list(inputs[k].shape), "INT64")
            tensor.set_data_from_numpy(inputs[k])
            barrier.wait(timeout=30)
            outputs[k] = client.infer(model, [tensor]).as_numpy("OUT")

    def executions():
        with httpclient.InferenceServerClient(server.url) as client:
            stats = client.get_inference_statistics(model)["model_stats"][0]
        return int(stats["execution_count"])

    before = executions()
    threads = [threading.Thread(target=one, args=(k,)) for k in range(len(lengths))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return inputs, outputs, executions() - before


def _check_padding(sent, got):
    """`got` is `sent` followed by the pad value (-7), nothing else."""
    n = sent.shape[1]
    assert got.shape[0] == 1 and got.shape[1] >= n, (sent.shape, got.shape)
    np.testing.assert_array_equal(got[:, :n], sent)
    assert (got[:, n:] == -7).all(), got


def test_buckets_pad_short_requests_only_to_the_short_ones(server):
    sent, got, executions = _round(server, "buckets")
    assert executions == 1, f"the {len(sent)} requests did not share one batch: {executions}"
    for s, g in zip(sent, got):
        _check_padding(s, g)
    assert [g.shape[1] for g in got] == [3, 3, 3, 41, 41, 41]


def test_longest_pads_every_request_to_the_batch_longest(server):
    sent, got, executions = _round(server, "longest")
    assert executions == 1, f"the {len(sent)} requests did not share one batch: {executions}"
    for s, g in zip(sent, got):
        _check_padding(s, g)
    assert [g.shape[1] for g in got] == [41] * len(sent)


def test_a_request_alone_is_not_padded(server):
    with httpclient.InferenceServerClient(server.url) as client:
        data = np.arange(5, dtype=np.int64).reshape(1, 5)
        tensor = httpclient.InferInput("IN", [1, 5], "INT64")
        tensor.set_data_from_numpy(data)
        np.testing.assert_array_equal(client.infer("buckets", [tensor]).as_numpy("OUT"), data)


BAD_COST = ("parameter 'batch_bucket_cost' must be a whole number of padded elements, "
            "got 'many'")


def test_a_bad_bucket_cost_fails_the_load_naming_it(server, tmp_path):
    with httpclient.InferenceServerClient(server.url) as client:
        assert not client.is_model_ready("bad_cost")
        assert client.is_model_ready("buckets")
    broken = identity_model("bad_cost", "INT64", ("N", "L"))
    broken.write(tmp_path, _config(broken, "buckets")
                 + 'parameters { key: "batch_bucket_cost" value: { string_value: "many" } }\n')
    with Server(tmp_path, ["--model-control-mode=explicit"]) as explicit:
        with httpclient.InferenceServerClient(explicit.url) as client:
            with pytest.raises(InferenceServerException) as error:
                client.load_model("bad_cost")
    message = str(error.value)
    assert "bad_cost/config.pbtxt" in message and BAD_COST in message, message


def test_validate_reports_a_bad_padding_parameter(tmp_path):
    good = identity_model("good", "INT64", ("N", "L"))
    good.write(tmp_path, _config(good, "buckets"))
    bad = identity_model("bad", "INT64", ("N", "L"))
    bad.write(tmp_path, _config(bad, "bucket"))
    status, out, shown = oxiserve_validate(tmp_path)
    assert status == 1, shown
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, shown
    assert "bad/config.pbtxt" in errors[0] and "parameters.batch_padding: parameter " \
        "'batch_padding' must be 'longest', 'buckets' or 'none', got 'bucket'" in errors[0], shown
    assert "ok: good" in out, shown
