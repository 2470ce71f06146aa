"""Which database a URL names, and how a URL is shown in a message.

Pure string work, no database driver: the facade (``connect()``), both backends, the
PostgreSQL limits, the CLI and the report server read URLs through here, so a
PostgreSQL URL's password never reaches a message or a log line.
"""

from __future__ import annotations

import os
import re
from typing import Literal

from trustgate.errors import ConfigurationError

__all__ = ["DEFAULT_DATABASE", "ENV_VAR", "Backend", "redact", "resolve_url"]

ENV_VAR = "TRUSTGATE_DATABASE_URL"
DEFAULT_DATABASE = ".trustgate/trustgate.db"

Backend = Literal["sqlite", "postgres"]


def resolve_url(url: str | os.PathLike[str] | None = None) -> tuple[Backend, str]:
    """Which database: the argument, else ``TRUSTGATE_DATABASE_URL``, else the default.

    Returns ``("postgres", url)`` or ``("sqlite", path)``. Plain paths and
    SQLAlchemy-style ``sqlite:///relative.db`` / ``sqlite:////absolute.db`` are
    SQLite; ``postgresql://`` / ``postgres://`` are PostgreSQL.
    """
    raw = os.fspath(url) if url is not None else os.environ.get(ENV_VAR) or DEFAULT_DATABASE
    raw = raw.strip()
    if not raw:
        raise ConfigurationError(f"empty database URL (argument or {ENV_VAR})")
    lowered = raw.lower()
    if lowered.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        return "postgres", re.sub(r"^postgresql\+psycopg://", "postgresql://", raw, flags=re.I)
    if lowered.startswith("sqlite:"):
        path = re.sub(r"^sqlite:(///|//)?", "", raw, flags=re.I)
        if not path:
            raise ConfigurationError(f"no path in SQLite URL {raw!r}")
        raw = path
    elif "://" in raw:
        scheme = raw.split("://", 1)[0]
        raise ConfigurationError(
            f"unsupported database URL scheme {scheme!r}: use a SQLite path "
            "(.trustgate/trustgate.db, sqlite:///path) or postgresql://..."
        )
    if raw == ":memory:":
        raise ConfigurationError(
            "connect() needs a database file; for an in-memory graph wrap langgraph's "
            "InMemorySaver: ReportingSaver(InMemorySaver(), InMemoryReportHistory())"
        )
    return "sqlite", raw


def redact(url: str) -> str:
    """The URL without its password, for error messages."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        user = creds.split(":", 1)[0]
        return f"{scheme}://{user}:***@{host}" if ":" in creds else url
    return url
