"""``--otlp-endpoint``: send the traces of one command to an OTLP/HTTP collector.

Every parser built from :class:`trustgate.cli._common.Parser` (the top-level one and
each command's) accepts the option, so both ``trustgate --otlp-endpoint URL demo``
and ``trustgate demo --otlp-endpoint URL`` work; :func:`trustgate.cli._common.run`
wraps the command in :func:`otlp_session`, which installs the global providers
through :func:`trustgate.telemetry.configure` and flushes them before exit.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

from trustgate.telemetry import Telemetry

__all__ = ["OPTION", "add_otlp_option", "otlp_endpoint", "otlp_session"]

OPTION = "--otlp-endpoint"


def otlp_endpoint(value: str) -> str:
    """argparse type: an http(s) base URL (``/v1/traces`` is appended)."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an http(s) URL (e.g. http://127.0.0.1:4318)"
        )
    return value


def add_otlp_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--otlp-endpoint`` without letting a subparser reset the top-level value."""
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


@contextmanager
def otlp_session(endpoint: str | None) -> Iterator[Telemetry | None]:
    """Export to ``endpoint`` for the duration of the block (nothing when ``None``).

    Example:
        ```python
        with otlp_session(getattr(args, "otlp_endpoint", None)):
            return handler(args)
        ```
    """
    if not endpoint:
        yield None
        return
    from trustgate.telemetry import configure

    tel = configure(endpoint, service_name="trustgate-cli")
    try:
        yield tel
    finally:
        tel.shutdown()
