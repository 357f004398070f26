"""Custom metrics (pb_utils.MetricFamily) scenarios: the request's MODE names one; the
response's OUT is a JSON object of what the model saw (values, exception texts). Every
scenario uses its own family names; families and metrics stay referenced by the model
until a scenario deletes them. (Triton's pb_utils has no MetricFamily yet while model.py
is imported: it is used in methods only.)"""

import json

import numpy as np
import triton_python_backend_utils as pb_utils

def make_family(name, description, kind):
    """A MetricFamily of kind "COUNTER", "GAUGE" or "HISTOGRAM"."""
    return pb_utils.MetricFamily(name, description, getattr(pb_utils.MetricFamily, kind))


def raised(call):
    """`call()`'s exception as "Type: text", or None."""
    try:
        call()
    except Exception as e:
        return "%s: %s" % (type(e).__name__, e)
    return None


class TritonPythonModel:
    def initialize(self, args):
        self.kept = []  # what must outlive one execute
        family = make_family("test_initialized", "Made in initialize", "GAUGE")
        metric = family.Metric(labels={"where": "initialize"})
        metric.set(5)
        self.kept += [family, metric]

    def execute(self, requests):
        responses = []
        for request in requests:
            mode = pb_utils.get_input_tensor_by_name(request, "MODE").as_numpy()
            seen = getattr(self, "scenario_" + mode.flatten()[0].decode())()
            out = np.array([json.dumps(seen).encode()], dtype=object)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUT", out)]))
        return responses

    def scenario_counter(self):
        family = make_family(
            "test_counter", "test metric counter kind end to end", "COUNTER")
        metric = family.Metric(labels={"example1": "counter_label1", "example2": "counter_label2"})
        self.kept += [family, metric]
        before = metric.value()
        metric.increment(2023.0)
        metric.increment(0)
        return {"before": before, "after": metric.value()}

    def scenario_gauge(self):
        family = make_family(
            "test_gauge", "test metric gauge kind end to end", "GAUGE")
        metric = family.Metric(labels={"example1": "gauge_label1"})
        self.kept += [family, metric]
        metric.increment(2023.0)
        metric.increment(-23.5)
        decremented = metric.value()
        metric.set(999.9)
        return {"decremented": decremented, "set": metric.value()}

    def scenario_histogram(self):
        family = make_family(
            "test_histogram", "test metric histogram kind end to end", "HISTOGRAM")
        metric = family.Metric(labels={"example1": "histogram_label1"},
                               buckets=[0.1, 1.0, 2.5, 5.0, 10.0])
        empty = family.Metric(labels={"example1": "no buckets"}, buckets=[])
        self.kept += [family, metric, empty]
        for value in (0.05, 1.5, 6.0):
            metric.observe(value)
        empty.observe(3)
        return {}

    def scenario_values(self):
        """Values as the exposition prints them."""
        family = make_family("test_values", "", "GAUGE")
        self.kept.append(family)
        for name, value in [("sum", 0.1 + 0.2), ("big", 1e20), ("third", 1 / 3),
                            ("small", 1e-7), ("nan", float("nan")),
                            ("minus_inf", float("-inf")), ("int", 9007199254740992),
                            ("true", True), ("numpy", np.float32(2.5))]:
            metric = family.Metric(labels={"v": name})
            metric.set(value)
            self.kept.append(metric)
        return {}

    def scenario_labels(self):
        family = make_family("test_labels", "labels escaped", "COUNTER")
        self.kept.append(family)
        for labels in ({"zeta": "1", "alpha": 'quote " backslash \\ newline \n end'},
                       {"empty": ""}, None):
            metric = family.Metric(labels=labels)
            metric.increment(1)
            self.kept.append(metric)
        return {}

    def scenario_shared(self):
        """Two families of one name share metrics; the first description stays."""
        first = make_family("test_shared", "first description", "COUNTER")
        second = make_family("test_shared", "second description", "COUNTER")
        one = first.Metric(labels={"k": "v"})
        two = second.Metric(labels={"k": "v"})
        other = second.Metric(labels={"k": "other"})
        self.kept += [first, second, one, two, other]
        one.increment(7.5)
        return {"two": two.value(), "other": other.value()}

    def scenario_stub_errors(self):
        """Errors the stub raises itself (Triton's too)."""
        counter = make_family("test_stub_errors", "d", "COUNTER")
        histogram = make_family("test_stub_errors_h", "d", "HISTOGRAM")
        self.kept += [counter, histogram]
        metric = counter.Metric()
        self.kept.append(metric)
        return {
            "labels": raised(lambda: counter.Metric(labels=["a"])),
            "buckets_tuple": raised(lambda: histogram.Metric(buckets=(1.0,))),
            "unexpected_buckets": raised(lambda: counter.Metric(buckets=[1.0])),
            "missing_buckets": raised(lambda: histogram.Metric(labels={})),
            "none_buckets": raised(lambda: histogram.Metric(labels={}, buckets=None)),
            "kind_int": raised(lambda: pb_utils.MetricFamily("x", "d", 0))[:10],
            "name_none": raised(lambda: make_family(None, "d", "GAUGE"))[:10],
            "value_text": raised(lambda: metric.increment("1"))[:10],
            "bucket_text": raised(lambda: histogram.Metric(buckets=["a"])),
        }

    def scenario_lifetime(self):
        """A family deleted before its metrics: they are deleted with it."""
        out = {}
        for kind, name in (("COUNTER", "test_lifetime_counter"),
                           ("GAUGE", "test_lifetime_gauge")):
            family = make_family(name, "test metric lifetime error", kind)
            metric = family.Metric(labels={"example1": "label1"})
            metric.increment(3)
            del family
            out[name] = {"increment": raised(lambda: metric.increment(10)),
                         "set": raised(lambda: metric.set(10)),
                         "value": raised(metric.value)}
        return out

    def scenario_server_errors(self):
        """Errors Triton's stub reports from its server (oxiserve's stub raises some of
        them itself, with the same texts)."""
        gauge = make_family("test_server_errors", "d", "GAUGE")
        counter = make_family("test_server_errors_c", "d", "COUNTER")
        histogram = make_family("test_server_errors_h", "d", "HISTOGRAM")
        g, c = gauge.Metric(), counter.Metric()
        h = histogram.Metric(buckets=[1.0])
        self.kept += [gauge, counter, histogram, g, c, h]
        return {
            "negative": raised(lambda: c.increment(-23.5)),
            "counter_set": raised(lambda: c.set(999.9)),
            "counter_observe": raised(lambda: c.observe(0.05)),
            "gauge_observe": raised(lambda: g.observe(0.05)),
            "histogram_value": raised(h.value),
            "histogram_increment": raised(lambda: h.increment(1)),
            "histogram_set": raised(lambda: h.set(1)),
            "name": raised(lambda: make_family("bad name", "d", "GAUGE")),
            "reserved": raised(lambda: make_family("__x", "d", "GAUGE")),
            "kind": raised(lambda: make_family("test_server_errors", "d",
                                                         "COUNTER")),
            "label": raised(lambda: gauge.Metric(labels={"bad label": "x"})),
            "label_value": raised(lambda: gauge.Metric(labels={"a": 5})),
            "unsorted": raised(lambda: histogram.Metric(labels={"n": "1"}, buckets=[2.5, 0.1])),
            "duplicate": raised(lambda: histogram.Metric(labels={"n": "2"}, buckets=[1, 1])),
        }
