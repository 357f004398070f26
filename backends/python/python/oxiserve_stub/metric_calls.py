"""The custom metric frames (docs/design/python-wire.md): creations and `value()` are
round trips answered by a MetricReply; updates are written at once and answered by
nothing (the caller checked what the server would refuse); deletions go with the next
frame written, since they come from finalizers.

Part of the transport: frames and the Conn, not pb_utils' types.
"""

import queue

from . import protocol as P

# MetricUpdate operations
INCREMENT = P.U8.pack(0)
SET = P.U8.pack(1)
OBSERVE = P.U8.pack(2)


def _round_trip(conn, kind, tag, parts):
    """(error message or None, value) of the server's MetricReply."""
    q = queue.SimpleQueue()
    conn.call(kind, tag, parts, q.put)
    return conn.take(q)


def family_new(conn, name, description, kind):
    """Registers family `name` of kind code `kind`; the server's error text or None."""
    out = []
    P.p_str(out, name)
    P.p_str(out, description)
    out.append(P.U8.pack(kind))
    return _round_trip(conn, P.METRIC_FAMILY_NEW, conn.next_id(), out)[0]


def metric_new(conn, family, labels_json, buckets):
    """A metric of `family`: (its id, the server's error text or None)."""
    out = []
    P.p_str(out, family)
    P.p_str(out, labels_json)
    if buckets is None:
        out.append(b"\x00")
    else:
        out.append(b"\x01")
        out.append(P.U32.pack(len(buckets)))
        out.extend(P.F64.pack(b) for b in buckets)
    metric_id = conn.next_id()
    return metric_id, _round_trip(conn, P.METRIC_NEW, metric_id, out)[0]


def update(conn, op, metric_id, value):
    """`op` (INCREMENT, SET, OBSERVE) with `value` on metric `metric_id`."""
    conn.send(P.frame(P.METRIC_UPDATE, metric_id, [op, P.F64.pack(value)]))


def value(conn, metric_id):
    """(error message or None, value) of metric `metric_id`."""
    return _round_trip(conn, P.METRIC_VALUE, conn.next_id(), [P.U64.pack(metric_id)])


def delete_later(conn, metric_id):
    conn.send_later(P.frame(P.METRIC_DELETE, metric_id, []))
