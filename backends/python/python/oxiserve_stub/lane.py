"""Lanes: direct BLS calls between two model processes (docs/design/python-backend.md
§7.2, docs/design/python-wire.md "Lanes"): their frames.

A model instance whose model takes direct calls listens on a Unix socket, its lane
(lane_server.py). After a BLS call that went through the server succeeded, the server
may offer the calling process that lane; the caller (lane_calls.py) then sends later
calls of the same shape there, and the called process answers there: neither the server
nor its threads are on the call's path.

A frame on a lane is framed as on the instance socket (u32 len, u32 kind, u64 tag) and
its body is `u32 n`, the n bytes of an instance-socket body, then tensor bytes:
- a call: an Execute body of one request, its tensor offsets counted from those bytes;
- an answer: the ExecuteDone or Send body the called process would have sent the
  server, followed by a copy of the arena_out block it names (its offsets count from
  that block), which the called process frees at once.

Part of the transport: frames and sockets, no pb_utils types.
"""

from . import protocol as P


def lane_frame(kind, tag, body, data=()):
    """A lane frame: `body` (an instance-socket body) followed by the buffers `data`."""
    parts = [P.U32.pack(len(body)), body]
    parts.extend(data)
    return P.frame(kind, tag, parts)

