"""``trustgate.server``: a thread's crossing reports over HTTP, from the report log.

In process, through Starlette's test client: what the route answers (every crossing,
halted ones included, content-free), what it refuses (no thread, a bad filter, another
method, a reader ``authorize`` turns away) and what it says when the log is unreadable.
``tests/integration/test_served_graphs.py`` serves the same route from ``langgraph dev``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from starlette.applications import Starlette
from starlette.testclient import TestClient
from test_gate_report_log import LIE, _app, _runs

import trustgate.server
from trustgate.errors import ConfigurationError
from trustgate.persistence import InMemoryReportHistory, SqliteReportHistory
from trustgate.server import REPORTS_PATH, reports_app, reports_route


def _client(log: Any, **kw: Any) -> TestClient:
    return TestClient(reports_app(log, **kw))


def test_every_crossing_of_the_thread_content_free() -> None:
    log = InMemoryReportHistory()
    ids = _runs(_app(log, InMemorySaver()), thread="t1")
    _runs(_app(log, InMemorySaver()), thread="other")
    got = _client(log).get(REPORTS_PATH, params={"thread_id": "t1"})
    assert got.status_code == 200
    body = got.json()
    assert body["thread_id"] == "t1" and body["refused"] == 0
    assert [r["id"] for r in body["reports"]] == ids
    assert [r["decision"] for r in body["reports"]] == ["pass", "modified", "halted"]
    assert LIE not in json.dumps(body)  # what the model claimed is not served
    full = log.history(thread="t1")
    assert any(LIE in json.dumps(r.to_json_dict()) for r in full)  # the log itself keeps it


def test_content_capture_serves_the_full_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRUSTGATE_CAPTURE_CONTENT", "true")
    log = InMemoryReportHistory()
    _runs(_app(log, InMemorySaver()), thread="t1")
    body = _client(log).get(REPORTS_PATH, params={"thread_id": "t1"}).json()
    assert LIE in json.dumps(body)


def test_filters() -> None:
    log = InMemoryReportHistory()
    _runs(_app(log, InMemorySaver()), thread="t1")
    client = _client(log)
    assert (
        len(client.get(REPORTS_PATH, params={"thread_id": "t1", "limit": 2}).json()["reports"]) == 2
    )
    assert (
        client.get(REPORTS_PATH, params={"thread_id": "t1", "gate": "nope"}).json()["reports"] == []
    )
    assert (
        len(client.get(REPORTS_PATH, params={"thread_id": "t1", "since": "1h"}).json()["reports"])
        == 3
    )


@pytest.mark.parametrize(
    "params, status",
    [
        ({}, 400),
        ({"thread_id": ""}, 400),
        ({"thread_id": "t1", "limit": "many"}, 400),
        ({"thread_id": "t1", "limit": "-1"}, 400),
        ({"thread_id": "t1", "since": "the other day"}, 400),
    ],
)
def test_bad_requests(params: dict[str, str], status: int) -> None:
    got = _client(InMemoryReportHistory()).get(REPORTS_PATH, params=params)
    assert got.status_code == status and "error" in got.json()


@pytest.mark.parametrize("method", ["post", "put", "delete", "patch"])
def test_read_only(method: str) -> None:
    log = InMemoryReportHistory()
    _runs(_app(log, InMemorySaver()), thread="t1")
    got = getattr(_client(log), method)(REPORTS_PATH, params={"thread_id": "t1"})
    assert got.status_code == 405
    assert log.count() == 3


@pytest.mark.parametrize("asynchronous", [False, True])
def test_authorize_decides_who_reads_a_thread(asynchronous: bool) -> None:
    log = InMemoryReportHistory()
    _runs(_app(log, InMemorySaver()), thread="mine")
    _runs(_app(log, InMemorySaver()), thread="yours")
    asked: list[str] = []

    def allow(request: Any, thread: str) -> bool:
        asked.append(thread)
        return request.headers.get("x-user") == thread

    async def aallow(request: Any, thread: str) -> bool:
        return allow(request, thread)

    client = _client(log, authorize=aallow if asynchronous else allow)
    ok = client.get(REPORTS_PATH, params={"thread_id": "mine"}, headers={"x-user": "mine"})
    no = client.get(REPORTS_PATH, params={"thread_id": "yours"}, headers={"x-user": "mine"})
    assert ok.status_code == 200 and len(ok.json()["reports"]) == 3
    assert no.status_code == 403 and "reports" not in no.json()
    assert asked == ["mine", "yours"]


def test_an_unreadable_log_is_a_503_that_names_no_detail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRUSTGATE_LEDGER_KEY", raising=False)
    monkeypatch.delenv("TRUSTGATE_LEDGER_KEY_FILE", raising=False)
    secret_place = tmp_path / "secret-place" / "t.db"
    got = _client(str(secret_place)).get(REPORTS_PATH, params={"thread_id": "t1"})
    assert got.status_code == 503
    assert "secret-place" not in got.text and "LedgerKeyError" in got.text


def test_rows_whose_seal_does_not_hold_are_counted_not_served(tmp_path: Path) -> None:
    """A row sealed under another key (a worker configured with another ledger key), or
    edited in the database, is not a crossing the route vouches for."""
    path = tmp_path / "reports.db"
    written = SqliteReportHistory(path, key=b"w" * 32)
    _runs(_app(written, InMemorySaver()), thread="t1")
    written.close()
    other = SqliteReportHistory(path, key=b"r" * 32, read_only=True)
    body = _client(other).get(REPORTS_PATH, params={"thread_id": "t1"}).json()
    assert body["reports"] == [] and body["refused"] == 3
    same = SqliteReportHistory(path, key=b"w" * 32)
    with sqlite3.connect(path) as db:  # an edit behind the log's back
        db.execute("UPDATE trustgate_reports SET decision = 'pass' WHERE decision = 'halted'")
    body = _client(same).get(REPORTS_PATH, params={"thread_id": "t1"}).json()
    assert [r["decision"] for r in body["reports"]] == ["pass", "modified"]
    assert body["refused"] == 1


def test_the_mounted_app_reads_the_log_the_gates_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``"http": {"app": "trustgate.server:app"}`` with ``guard(report_log=True)``: one
    database, named once, in ``TRUSTGATE_DATABASE_URL``."""
    monkeypatch.setenv("TRUSTGATE_DATABASE_URL", str(tmp_path / "served.db"))
    ids = _runs(_app(True, InMemorySaver()), thread="t1")
    assert isinstance(trustgate.server.app, Starlette)
    body = TestClient(trustgate.server.app).get(REPORTS_PATH, params={"thread_id": "t1"}).json()
    assert [r["id"] for r in body["reports"]] == ids


def test_a_route_of_your_own_app() -> None:
    log = InMemoryReportHistory()
    _runs(_app(log, InMemorySaver()), thread="t1")
    app = Starlette(routes=[reports_route(log, path="/audit/crossings")])
    got = TestClient(app).get("/audit/crossings", params={"thread_id": "t1"})
    assert [r["decision"] for r in got.json()["reports"]] == ["pass", "modified", "halted"]


@pytest.mark.parametrize("value", [42, "mysql://db/x"])
def test_refuses_what_is_no_log(value: Any) -> None:
    with pytest.raises(ConfigurationError):
        reports_route(value)
