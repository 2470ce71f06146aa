"""A tiny OTLP/HTTP receiver on 127.0.0.1 for wire tests (protobuf, optional gzip)."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


@dataclass
class Received:
    traces: list[ExportTraceServiceRequest] = field(default_factory=list)
    metrics: list[ExportMetricsServiceRequest] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    refused_metrics: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def spans(self) -> list[tuple[dict[str, Any], Any]]:
        """(resource attributes, span) for every received span."""
        out: list[tuple[dict[str, Any], Any]] = []
        with self.lock:
            for req in self.traces:
                for rs in req.resource_spans:
                    res = attrs(rs.resource.attributes)
                    for ss in rs.scope_spans:
                        out.extend((res, s) for s in ss.spans)
        return out

    def metric_names(self) -> set[str]:
        with self.lock:
            return {
                m.name
                for req in self.metrics
                for rm in req.resource_metrics
                for sm in rm.scope_metrics
                for m in sm.metrics
            }


def value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return tuple(value(x) for x in v.array_value.values)
    return getattr(v, kind) if kind else None


def attrs(kvs: Any) -> dict[str, Any]:
    return {kv.key: value(kv.value) for kv in kvs}


@contextmanager
def otlp_receiver(metrics_status: int = 200) -> Iterator[tuple[str, Received]]:
    """Serve OTLP/HTTP on an ephemeral loopback port; yields (base URL, received).

    ``metrics_status`` other than 200 answers ``/v1/metrics`` with that error, as a
    traces-only backend does (Phoenix: 405, MLflow: 404).
    """
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            reply: Any
            if self.path == "/v1/traces":
                req: Any = ExportTraceServiceRequest.FromString(body)
                reply = ExportTraceServiceResponse()
                with received.lock:
                    received.traces.append(req)
                    received.headers.append({k.lower(): v for k, v in self.headers.items()})
            elif self.path == "/v1/metrics" and metrics_status != 200:
                with received.lock:
                    received.refused_metrics += 1
                self.send_error(metrics_status)
                return
            elif self.path == "/v1/metrics":
                req = ExportMetricsServiceRequest.FromString(body)
                reply = ExportMetricsServiceResponse()
                with received.lock:
                    received.metrics.append(req)
            else:
                self.send_error(404)
                return
            data = reply.SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, name="otlp-receiver", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
