"""Helpers for the tests of the report log's seals and of the command line.

* :data:`TEST_LEDGER_KEY`: the key the suite runs with (``conftest`` configures it);
* :func:`make_log_db`: a real trustgate database holding three crossings, one per
  thread (``mod``: modified, ``ok``: pass, ``halt``: halted);
* :func:`sql`: raw SQL on a SQLite file or a PostgreSQL URL, as someone with write
  access to the database would run it (``{p}`` is the placeholder);
* :func:`bare_logging`: the logging of a plain process (no handler on the root logger),
  which is what the console script runs with and pytest otherwise hides;
* :func:`snapshot`: every file and directory under a root with its content hash.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

TEST_LEDGER_KEY = "ledger-key-for-the-test-suite-0123456789"

# SQLite's own side files of a database in WAL mode: any reader, read-only ones
# included, keeps its shared-memory index there; they are not the database.
SIDE_FILES = ("-shm", "-wal")


def is_pg(url: str) -> bool:
    return url.startswith("postgresql://")


def sql(url: str, query: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one statement on the database under the log; rows when it returns any."""
    if is_pg(url):
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            cur = conn.execute(query.replace("{p}", "%s"), args)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []
    conn = sqlite3.connect(url, isolation_level=None)
    try:
        return conn.execute(query.replace("{p}", "?"), args).fetchall()
    finally:
        conn.close()


def make_log_db(url: str, key: str = TEST_LEDGER_KEY) -> dict[str, str]:
    """Three crossings in the database at ``url``; returns thread -> report id."""
    from _persist_support import HONEST, LIE, build_graph, cfg

    from trustgate.errors import GateHalted
    from trustgate.persistence import connect

    with _env("TRUSTGATE_LEDGER_KEY", key), connect(url) as db:
        app = build_graph().compile(checkpointer=db.checkpointer)
        app.invoke({"text": LIE, "log": []}, cfg("mod"))
        app.invoke({"text": HONEST, "log": []}, cfg("ok"))
        halting = build_graph(policy="halt").compile(checkpointer=db.checkpointer)
        with pytest.raises(GateHalted):  # the crossing this database is meant to hold
            halting.invoke({"text": LIE, "log": []}, cfg("halt"))
        return {str(r.thread_id): r.id for r in db.history()}


@contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


@contextmanager
def bare_logging() -> Iterator[None]:
    """Remove the root logger's handlers (pytest's among them) for the block, so a
    record reaches whatever a plain ``trustgate`` process would print it with."""
    root = logging.getLogger()
    saved = list(root.handlers)
    for handler in saved:
        root.removeHandler(handler)
    try:
        yield
    finally:
        for handler in saved:
            root.addHandler(handler)


def snapshot(root: Path) -> dict[str, str]:
    """Every path under ``root`` (SQLite's side files aside) with a hash of its bytes."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.name.endswith(SIDE_FILES):
            continue
        if path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def tables(path: Path) -> list[tuple[Any, ...]]:
    """The schema of a SQLite file, read without touching it (``mode=ro``)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    finally:
        conn.close()
