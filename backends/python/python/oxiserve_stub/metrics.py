"""pb_utils.MetricFamily, its Metric objects and c_python_backend_utils.MetricKind: Triton's
custom metrics, with the errors Triton's stub raises.

User-facing. In an instance process the entry point gives the instance's Context to
`MetricFamily._ctx`; the families and metrics then live on the server's /metrics.

As in Triton, a family keeps every metric it made until the family object is deleted:
that deletes them all from the server (a metric shared with other families or models
stays as long as one of them holds it), and their later use raises.
"""

import json
import operator
import weakref

from .argcheck import CAST, as_str, fail
from .errors import TritonModelException


class MetricKind:
    """c_python_backend_utils.MetricKind, a pybind11 enum: COUNTER 0, GAUGE 1, HISTOGRAM 2."""

    __slots__ = ("_name", "_value")
    __members__ = {}

    def __new__(cls, value):
        value = operator.index(value)
        for member in cls.__members__.values():
            if member._value == value:
                return member
        return cls._make("???", value)

    @classmethod
    def _make(cls, name, value):
        kind = object.__new__(cls)
        kind._name = name
        kind._value = value
        return kind

    @property
    def name(self):
        return self._name

    @property
    def value(self):
        return self._value

    def __int__(self):
        return self._value

    def __index__(self):
        return self._value

    def __eq__(self, other):
        if isinstance(other, MetricKind):
            return self._value == other._value
        try:
            return self._value == operator.index(other)
        except TypeError:
            return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return self._value

    def __repr__(self):
        return "<MetricKind.%s: %d>" % (self._name, self._value)

    def __str__(self):
        return "MetricKind." + self._name


for _value, _name in enumerate(("COUNTER", "GAUGE", "HISTOGRAM")):
    MetricKind.__members__[_name] = MetricKind._make(_name, _value)
    setattr(MetricKind, _name, MetricKind.__members__[_name])

COUNTER = MetricKind.COUNTER
GAUGE = MetricKind.GAUGE
HISTOGRAM = MetricKind.HISTOGRAM

_CLEARED = ("Invalid metric operation as the corresponding 'MetricFamily' has been deleted. "
            "The 'MetricFamily' object should be deleted AFTER its corresponding 'Metric' "
            "objects have been deleted.")


def _server_error(ctx, context, message):
    """A failure the server reported, worded as Triton's stub words it."""
    return TritonModelException(
        "%s: Failed to process the request for model '%s', message: %s"
        % (context, ctx.instance_name, message))


def _as_double(value, function):
    """A C++ double argument: a number (bool and numpy scalars too), never a string."""
    if isinstance(value, (str, bytes, bytearray)) or value is None:
        fail(function, "arg0", value)
    try:
        return float(value)
    except (TypeError, ValueError):
        fail(function, "arg0", value)


def _bucket(value):
    if isinstance(value, (str, bytes, bytearray)) or value is None:
        raise RuntimeError(CAST)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise RuntimeError(CAST) from None


def _labels_key(labels_json):
    """The label set of `json.dumps(labels)` (labels: a dict or None), to share one
    server metric between the family's metrics of the same labels."""
    return json.dumps(sorted((json.loads(labels_json) or {}).items()))


class MetricFamily:
    COUNTER = COUNTER
    GAUGE = GAUGE
    HISTOGRAM = HISTOGRAM

    _ctx = None  # the instance's Context: set once by the entry point (instance.serve)

    def __init__(self, name, description, kind):
        name = as_str(name, "MetricFamily", "name")
        description = as_str(description, "MetricFamily", "description")
        if not isinstance(kind, MetricKind):
            fail("MetricFamily", "kind", kind)
        ctx = MetricFamily._ctx
        if ctx is None:
            raise TritonModelException(
                "Error when creating MetricFamily: custom metrics need a model instance")
        error = ctx.metric_family_new(name, description, kind.value)
        if error is not None:
            raise _server_error(ctx, "Error when creating MetricFamily", error)
        self._family = (ctx, name, kind.value)
        self._ids = {}  # label set -> id of the server metric this family holds
        self._made = weakref.WeakSet()  # the Metric objects, cleared with the family

    def Metric(self, labels=None, buckets=None):
        ctx, name, kind = self._family
        if labels is not None and not isinstance(labels, dict):
            raise TritonModelException("Failed to create metric. Labels must be a dictionary.")
        labels_json = json.dumps(labels)
        if buckets is not None:
            if not isinstance(buckets, list):
                raise TritonModelException("Failed to create metric. Buckets must be a list.")
            if kind != HISTOGRAM.value:
                raise TritonModelException("Failed to create metric. Unexpected buckets found.")
            buckets = [_bucket(b) for b in buckets]
        elif kind == HISTOGRAM.value:
            raise TritonModelException("Failed to create metric. Missing required buckets.")
        key = _labels_key(labels_json)
        metric_id = self._ids.get(key)
        if metric_id is None:
            metric_id, error = ctx.metric_new(name, labels_json, buckets)
            if error is not None:
                raise _server_error(ctx, "Error when creating Metric", error)
            self._ids[key] = metric_id
        metric = Metric._new(ctx, metric_id, kind)
        self._made.add(metric)
        return metric

    def __del__(self):
        made = getattr(self, "_made", ())
        for metric in list(made):
            metric._cleared = True
        ids = getattr(self, "_ids", {})
        if ids:
            ctx = self._family[0]
            for metric_id in ids.values():
                ctx.metric_delete(metric_id)


class Metric:
    """A metric of a MetricFamily (made by `MetricFamily.Metric` only)."""

    __slots__ = ("_ctx", "_id", "_kind", "_cleared", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("c_python_backend_utils.Metric: No constructor defined!")

    @classmethod
    def _new(cls, ctx, metric_id, kind):
        metric = object.__new__(cls)
        metric._ctx = ctx
        metric._id = metric_id
        metric._kind = kind
        metric._cleared = False
        return metric

    def _check(self, context):
        if self._cleared:
            raise TritonModelException("%s: %s" % (context, _CLEARED))

    def increment(self, value):
        value = _as_double(value, "increment")
        context = "Failed to increment metric value"
        self._check(context)
        if self._kind == HISTOGRAM.value:
            raise _server_error(self._ctx, context,
                                "TRITONSERVER_METRIC_KIND_HISTOGRAM does not support Increment")
        if self._kind == COUNTER.value and value < 0.0:
            raise _server_error(self._ctx, context,
                                "TRITONSERVER_METRIC_KIND_COUNTER can only be incremented "
                                "monotonically by non-negative values.")
        self._ctx.metric_increment(self._id, value)

    def set(self, value):
        value = _as_double(value, "set")
        context = "Failed to set metric value"
        self._check(context)
        if self._kind != GAUGE.value:
            raise _server_error(self._ctx, context, "%s does not support Set"
                                % _KIND_NAMES[self._kind])
        self._ctx.metric_set(self._id, value)

    def observe(self, value):
        value = _as_double(value, "observe")
        context = "Failed to observe metric value"
        self._check(context)
        if self._kind != HISTOGRAM.value:
            raise _server_error(self._ctx, context, "%s does not support Observe"
                                % _KIND_NAMES[self._kind])
        self._ctx.metric_observe(self._id, value)

    def value(self):
        context = "Failed to get metric value"
        self._check(context)
        error, value = self._ctx.metric_value(self._id)
        if error is not None:
            raise _server_error(self._ctx, context, error)
        return value


_KIND_NAMES = ("TRITONSERVER_METRIC_KIND_COUNTER", "TRITONSERVER_METRIC_KIND_GAUGE",
               "TRITONSERVER_METRIC_KIND_HISTOGRAM")
