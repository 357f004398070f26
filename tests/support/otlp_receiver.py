"""A small OTLP/HTTP trace receiver for the OpenTelemetry tests.

It serves POST /v1/traces on a loopback port, decodes each body as an
``ExportTraceServiceRequest`` (the ``opentelemetry-proto`` package; binary
protobuf, or OTLP JSON with hex ids as opentelemetry-cpp writes it) and keeps
every span as a `Span`.

    with OtlpReceiver() as receiver:
        url = receiver.url          # http://127.0.0.1:PORT/v1/traces
        ...
        spans = receiver.wait_for_spans(3)
"""

import base64
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class Span:
    """One received span, ids as lower-case hex ("" for no parent)."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict
    events: list  # [(name, time_unix_nano)] in the order sent
    resource: dict = field(default_factory=dict)
    scope: str = ""

    @property
    def event_names(self):
        return [name for name, _ in self.events]


def _value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def _attributes(key_values):
    return {kv.key: _value(kv.value) for kv in key_values}


def _hex_ids_to_base64(obj):
    """opentelemetry-cpp's JSON writes ids as hex; proto3 JSON wants base64."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                obj[key] = base64.b64encode(bytes.fromhex(value)).decode()
            else:
                _hex_ids_to_base64(value)
    elif isinstance(obj, list):
        for item in obj:
            _hex_ids_to_base64(item)
    return obj


def decode(body, content_type):
    """The spans of one export request body."""
    request = ExportTraceServiceRequest()
    if "json" in content_type:
        json_format.ParseDict(_hex_ids_to_base64(json.loads(body)), request)
    else:
        request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for s in scope_spans.spans:
                spans.append(
                    Span(
                        name=s.name,
                        trace_id=s.trace_id.hex(),
                        span_id=s.span_id.hex(),
                        parent_span_id=s.parent_span_id.hex(),
                        kind=s.kind,
                        start_ns=s.start_time_unix_nano,
                        end_ns=s.end_time_unix_nano,
                        attributes=_attributes(s.attributes),
                        events=[(e.name, e.time_unix_nano) for e in s.events],
                        resource=resource,
                        scope=scope_spans.scope.name,
                    )
                )
    return spans


class OtlpReceiver:
    """A collector stand-in: `url` to give the server, `spans` received so far."""

    def __init__(self):
        self._lock = threading.Lock()
        self._spans = []
        self.requests = 0
        self.content_types = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path != "/v1/traces":
                    self.send_error(404)
                    return
                content_type = self.headers.get("Content-Type", "")
                spans = decode(body, content_type)
                with receiver._lock:
                    receiver._spans.extend(spans)
                    receiver.requests += 1
                    receiver.content_types.append(content_type)
                if "json" in content_type:
                    reply, reply_type = b"{}", "application/json"
                else:
                    reply = ExportTraceServiceResponse().SerializeToString()
                    reply_type = "application/x-protobuf"
                self.send_response(200)
                self.send_header("Content-Type", reply_type)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1/traces"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def spans(self):
        with self._lock:
            return list(self._spans)

    def clear(self):
        with self._lock:
            self._spans.clear()

    def wait_for_spans(self, count, timeout=30.0, settle=0.5):
        """At least `count` spans, waiting up to `timeout` s; then `settle` s
        more so that a surplus would show."""
        deadline = time.monotonic() + timeout
        while len(self.spans) < count:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"received {len(self.spans)} spans in {timeout:.0f} s, expected {count}: "
                    f"{[s.name for s in self.spans]}"
                )
            time.sleep(0.05)
        time.sleep(settle)
        return self.spans

    def close(self):
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
