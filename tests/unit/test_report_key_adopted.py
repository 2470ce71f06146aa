"""Workers that share a database by giving it its key explicitly, with no key in the
environment: ``connect(url, key=K)`` in every worker.

Gates sealed their reports under the ledger key from the environment, else under a
random key of the process. With the key given only to ``connect()``, a worker reading
a thread another worker ran (a resume, a second replica, a restart) found every
report "sealed under another key" and refused it. Gates now seal under the key the
process gave its database, so every worker that holds the database's key verifies
every report.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

import trustgate
from trustgate import FunctionVerifier, TrustGate, _report_seal
from trustgate.evidence.keys import KEY_ENV, KEY_FILE_ENV
from trustgate.persistence import connect

DATABASE_KEY = "the-key-every-worker-is-given-0123456789"


class S(TypedDict, total=False):
    answer: str


@pytest.fixture(autouse=True)
def _no_environment_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.delenv(KEY_FILE_ENV, raising=False)


def _another_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """What differs in another worker: none of this process's keys."""
    monkeypatch.setattr(_report_seal, "_keys", {})
    monkeypatch.setattr(_report_seal, "_adopted", [])
    monkeypatch.setattr(_report_seal, "_earlier", {})


def _app(checkpointer: Any) -> Any:
    ok = FunctionVerifier(lambda claims, evidence: [], name="ok")
    builder = StateGraph(S)
    builder.add_node("answer", lambda s: {"answer": "42"})
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    gate = TrustGate("answer", reads="answer", verifiers=[ok])
    guarded = trustgate.guard(builder, {"answer": gate})
    return guarded.compile(checkpointer=checkpointer)


def test_a_worker_with_the_database_key_verifies_another_workers_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = tmp_path / "shared.db"
    config = {"configurable": {"thread_id": "shared"}}
    with connect(url, key=DATABASE_KEY) as db:
        _app(db.checkpointer).invoke({"answer": ""}, config)
    _another_process(monkeypatch)
    with connect(url, key=DATABASE_KEY) as db:
        found = trustgate.reports(_app(db.checkpointer), config)
        assert [r.decision for r in found] == ["pass"] and not found.refused
        assert [row.status for row in db.history(thread="shared").rows] == ["sealed"]


def test_a_worker_with_another_key_still_refuses_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = tmp_path / "shared.db"
    config = {"configurable": {"thread_id": "shared"}}
    with connect(url, key=DATABASE_KEY) as db:
        _app(db.checkpointer).invoke({"answer": ""}, config)
    _another_process(monkeypatch)
    with connect(url, key="another-key-altogether-0123456789") as db:
        found = trustgate.reports(_app(db.checkpointer), config)
        assert list(found) == [] and len(found.refused) == 1


def test_a_second_different_database_key_does_not_replace_the_first(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = {"configurable": {"thread_id": "two"}}
    with connect(tmp_path / "one.db", key=DATABASE_KEY) as one:
        first = _report_seal.report_key()
        with (
            caplog.at_level(logging.WARNING, logger="trustgate._report_seal"),
            connect(tmp_path / "two.db", key="a-second-key-for-another-db-0123") as two,
        ):
            _app(two.checkpointer).invoke({"answer": ""}, config)
            assert _report_seal.report_key() == first
        assert any("second database key" in r.getMessage() for r in caplog.records)
        assert one.report_log is not None


def test_reports_sealed_before_the_key_was_given_still_verify() -> None:
    """A gate that ran before the process opened its database sealed under the
    process's random key; those reports are still this process's own."""
    early = _report_seal.seal({"id": "r1", "decision": "pass"})
    _report_seal.adopt(_report_seal.resolve_key(DATABASE_KEY))
    assert _report_seal.report_key().origin == "argument"
    assert _report_seal.check(early) == ("sealed", None)
