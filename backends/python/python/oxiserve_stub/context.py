"""`Context`: the model instance as pb_utils' objects see it, the narrow interface between
them and the transport.

It holds the instance's state (names, decoupled, whether BLS is allowed) and the few
operations those objects ask of the instance (`bls_exec`, `bls_async_exec`,
`send_response`, `is_cancelled`, `log`, the custom metric and model control calls), each
bound once to the instance's Conn. The entry point (instance.serve) builds it on the Conn
it created and hands it out explicitly; a process the model forks binds it again, to a
Conn of its own (forked.py).
"""

import functools
import queue

from . import control_calls, metric_calls
from . import protocol as P
from .bls import bls_async_exec, bls_exec
from .lane_calls import LaneCalls
from .response_frames import send_response


class Context:
    def __init__(self, conn):
        self.model_name = ""
        self.instance_name = ""  # model_instance_name: what batch error texts name
        self.model_file = ""
        self.decoupled = False
        self.bls_allowed = False
        self.bind(conn)
        # the lanes offered to this process (lane.py); a process the model forks has
        # none: its calls go through the server
        self.lanes = LaneCalls(lambda: conn.inbox.idle_spin)

    def bind(self, conn):
        """Binds the operations to `conn`; once per process: no extra call layer on the
        hot paths."""
        self._conn = conn
        self.send_response = functools.partial(send_response, conn)
        self.bls_exec = functools.partial(bls_exec, self, conn)
        self.bls_async_exec = functools.partial(bls_async_exec, self, conn)
        self.metric_family_new = functools.partial(metric_calls.family_new, conn)
        self.metric_new = functools.partial(metric_calls.metric_new, conn)
        self.metric_increment = functools.partial(metric_calls.update, conn,
                                                  metric_calls.INCREMENT)
        self.metric_set = functools.partial(metric_calls.update, conn, metric_calls.SET)
        self.metric_observe = functools.partial(metric_calls.update, conn, metric_calls.OBSERVE)
        self.metric_value = functools.partial(metric_calls.value, conn)
        self.metric_delete = functools.partial(metric_calls.delete_later, conn)
        self.load_model = functools.partial(control_calls.load, conn)
        self.unload_model = functools.partial(control_calls.unload, conn)
        self.is_model_ready = functools.partial(control_calls.is_ready, conn)

    def is_cancelled(self, rid):
        """An IsCancelled round trip for request rid."""
        c = self._conn
        q = queue.SimpleQueue()
        cid = c.next_id()
        c.call(P.IS_CANCELLED, cid, [P.U64.pack(rid)], q.put)
        return bool(c.take(q))

    def log(self, level, message, filename, line):
        """A Log frame."""
        out = [P.U8.pack(level)]
        P.p_str(out, filename)
        out.append(P.U32.pack(line))
        P.p_str(out, message)
        self._conn.send(P.frame(P.LOG, 0, out))
