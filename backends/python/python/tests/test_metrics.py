"""pb_utils.MetricFamily and Metric on the wire: which calls are round trips, which are
written at once, which go with the next frame, and the errors the stub raises itself."""

import json

import numpy as np

from harness import write_model
from oxiserve_stub import protocol as P

MODEL = """
    import json
    import numpy as np
    import triton_python_backend_utils as pb_utils

    def check(call):
        try:
            call()
        except Exception as e:
            return "%s: %s" % (type(e).__name__, e)
        return "no error"

    class TritonPythonModel:
        def execute(self, requests):
            family = pb_utils.MetricFamily("hits", "Hits", pb_utils.MetricFamily.COUNTER)
            metric = family.Metric(labels={"b": "2", "a": "1"})
            again = family.Metric(labels={"a": "1", "b": "2"})  # the same server metric
            metric.increment(2)
            value = again.value()
            seen = {
                "negative": check(lambda: metric.increment(-1)),
                "set": check(lambda: metric.set(1)),
                "observe": check(lambda: metric.observe(1)),
                "text": check(lambda: metric.increment("1")),
                "labels": check(lambda: family.Metric(labels=["a"])),
                "buckets": check(lambda: family.Metric(buckets=[1.0])),
                "kind": check(lambda: pb_utils.MetricFamily("x", "d", 0)),
                "value": value,
            }
            del family  # deletes its metric (with the next frame)
            seen["after"] = check(metric.value)
            out = np.array([json.dumps(seen).encode()], dtype=object)
            return [pb_utils.InferenceResponse([pb_utils.Tensor("OUT", out)])]
"""

PREFIX = ("TritonModelException: Failed to %s metric value: Failed to process the request "
          "for model 'm_0_0', message: ")


def test_metric_calls_on_the_wire(stub, tmp_path):
    assert stub.init(write_model(tmp_path, MODEL)) == (None, "")
    stub.execute([{"rid": 1}], wait=False)
    family = stub.expect(P.METRIC_FAMILY_NEW)
    assert (family["name"], family["description"], family["metric_kind"]) == ("hits", "Hits", 0)
    stub.send(P.enc_metric_reply(family["tag"]))
    new = stub.expect(P.METRIC_NEW)
    assert new["family"] == "hits" and json.loads(new["labels"]) == {"b": "2", "a": "1"}
    assert new["buckets"] is None
    stub.send(P.enc_metric_reply(new["tag"]))
    update = stub.expect(P.METRIC_UPDATE)  # written at once, no answer
    assert (update["tag"], update["op"], update["value"]) == (new["tag"], 0, 2.0)
    value = stub.expect(P.METRIC_VALUE)
    assert value["metric"] == new["tag"]
    stub.send(P.enc_metric_reply(value["tag"], 2.0))
    delete = stub.expect(P.METRIC_DELETE)
    assert delete["tag"] == new["tag"]
    d = stub.expect(P.EXECUTE_DONE)
    seen = json.loads(stub.outputs(d["responses"][0])["OUT"][0])
    assert seen["value"] == 2.0
    assert seen["negative"] == PREFIX % "increment" + (
        "TRITONSERVER_METRIC_KIND_COUNTER can only be incremented monotonically by "
        "non-negative values.")
    assert seen["set"] == PREFIX % "set" + "TRITONSERVER_METRIC_KIND_COUNTER does not support Set"
    assert seen["observe"] == PREFIX % "observe" + (
        "TRITONSERVER_METRIC_KIND_COUNTER does not support Observe")
    assert seen["text"].startswith("TypeError: ")
    assert seen["labels"] == (
        "TritonModelException: Failed to create metric. Labels must be a dictionary.")
    assert seen["buckets"] == (
        "TritonModelException: Failed to create metric. Unexpected buckets found.")
    assert seen["kind"].startswith("TypeError: ")
    assert seen["after"] == (
        "TritonModelException: Failed to get metric value: Invalid metric operation as the "
        "corresponding 'MetricFamily' has been deleted. The 'MetricFamily' object should be "
        "deleted AFTER its corresponding 'Metric' objects have been deleted.")


def test_server_errors_are_worded_as_tritons(stub, tmp_path):
    f = write_model(tmp_path, """
        import numpy as np
        import triton_python_backend_utils as pb_utils
        class TritonPythonModel:
            def execute(self, requests):
                try:
                    pb_utils.MetricFamily("bad name", "d", pb_utils.MetricFamily.GAUGE)
                except pb_utils.TritonModelException as e:
                    text = str(e)
                out = np.array([text.encode()], dtype=object)
                return [pb_utils.InferenceResponse([pb_utils.Tensor("OUT", out)])]
    """)
    assert stub.init(f) == (None, "")
    stub.execute([{"rid": 1}], wait=False)
    family = stub.expect(P.METRIC_FAMILY_NEW)
    assert family["metric_kind"] == 1
    stub.send(P.enc_metric_reply(family["tag"], error=(3, "Invalid metric name")))
    d = stub.expect(P.EXECUTE_DONE)
    assert stub.outputs(d["responses"][0])["OUT"][0].decode() == (
        "Error when creating MetricFamily: Failed to process the request for model 'm_0_0', "
        "message: Invalid metric name")


def test_metric_kind_is_a_pybind_enum():
    import c_python_backend_utils as c
    import triton_python_backend_utils as pb_utils

    kind = pb_utils.MetricFamily.GAUGE
    assert kind is c.MetricKind.GAUGE and c.MetricKind(1) is kind
    assert (kind == 1, int(kind), kind.name, kind.value) == (True, 1, "GAUGE", 1)
    assert (repr(kind), str(kind)) == ("<MetricKind.GAUGE: 1>", "MetricKind.GAUGE")
    assert list(c.MetricKind.__members__) == ["COUNTER", "GAUGE", "HISTOGRAM"]
    assert not hasattr(pb_utils, "Metric") and not hasattr(pb_utils, "MetricKind")
    assert np.array([kind]).dtype == object
