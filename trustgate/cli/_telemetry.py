"""``--otlp-endpoint``: send the traces (and metrics) of one command to an OTLP/HTTP collector.

Every parser built from :class:`trustgate.cli._common.Parser` (the top-level one and
each command's) accepts the options, so both ``trustgate --otlp-endpoint URL demo``
and ``trustgate demo --otlp-endpoint URL`` work; :func:`trustgate.cli._common.run`
wraps the command in :func:`otlp_session`, which installs the global providers
through :func:`trustgate.otel.configure` and flushes them before exit.

Metrics go to the same endpoint unless ``--no-metrics`` or ``OTEL_METRICS_EXPORTER=none``;
a tracing backend without a metrics endpoint (Phoenix answers 405, MLflow 404) costs one
warning and the traces still arrive.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # the OpenTelemetry SDK is imported only when an endpoint is given
    from trustgate.otel.sdk import Telemetry

__all__ = ["NO_METRICS", "OPTION", "add_otlp_option", "otlp_endpoint", "otlp_session"]

OPTION = "--otlp-endpoint"
NO_METRICS = "--no-metrics"


def otlp_endpoint(value: str) -> str:
    """argparse type: an http(s) base URL (``/v1/traces`` is appended)."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an http(s) URL (e.g. http://127.0.0.1:4318)"
        )
    return value


def add_otlp_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--otlp-endpoint`` and ``--no-metrics`` without letting a subparser reset the
    top-level values."""
    parser.add_argument(
        OPTION,
        dest="otlp_endpoint",
        metavar="URL",
        type=otlp_endpoint,
        default=argparse.SUPPRESS,
        help="export traces and metrics over OTLP/HTTP to this collector base URL "
        "(e.g. http://127.0.0.1:6006 for Phoenix); OTEL_EXPORTER_OTLP_HEADERS and "
        "OTEL_SERVICE_NAME are honoured",
    )
    parser.add_argument(
        NO_METRICS,
        dest="no_metrics",
        action="store_true",
        default=argparse.SUPPRESS,
        help="with --otlp-endpoint, export traces only (also: OTEL_METRICS_EXPORTER=none)",
    )


@contextmanager
def otlp_session(endpoint: str | None, *, metrics: bool = True) -> Iterator[Telemetry | None]:
    """Export to ``endpoint`` for the duration of the block (nothing when ``None``).

    ``metrics=False`` exports traces only; otherwise ``OTEL_METRICS_EXPORTER=none``
    still turns metrics off.

    Example:
        ```python
        with otlp_session(args.otlp_endpoint, metrics=not args.no_metrics):
            return handler(args)
        ```
    """
    if not endpoint:
        yield None
        return
    from trustgate.otel.sdk import configure

    tel = configure(endpoint, service_name="trustgate-cli", metrics=None if metrics else False)
    try:
        yield tel
    finally:
        tel.shutdown()
