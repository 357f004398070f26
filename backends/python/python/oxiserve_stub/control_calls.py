"""The model control frames (docs/design/python-wire.md): `LoadModel`, `UnloadModel` and
`ModelReady`, each a round trip answered by a ModelControlReply.

Part of the transport: frames and the Conn, not pb_utils' types.
"""

import queue

from . import protocol as P


def _round_trip(conn, kind, parts):
    """(the server's error text or None, whether the model is ready)."""
    q = queue.SimpleQueue()
    conn.call(kind, conn.next_id(), parts, q.put)
    return conn.take(q)


def load(conn, model_name, config, files):
    """Loads `model_name`; `files` a list of (parameter name, bytes)."""
    out = []
    P.p_str(out, model_name)
    P.p_str(out, config)
    out.append(P.U32.pack(len(files)))
    for name, contents in files:
        P.p_str(out, name)
        P.p_str(out, contents)
    return _round_trip(conn, P.LOAD_MODEL, out)[0]


def unload(conn, model_name, unload_dependents):
    out = []
    P.p_str(out, model_name)
    out.append(P.U8.pack(1 if unload_dependents else 0))
    return _round_trip(conn, P.UNLOAD_MODEL, out)[0]


def is_ready(conn, model_name, model_version):
    out = []
    P.p_str(out, model_name)
    P.p_str(out, model_version)
    return _round_trip(conn, P.MODEL_READY, out)
