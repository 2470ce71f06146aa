"""Issue 7's guarantees, each against a real PostgreSQL server and real processes.

(The review and kill tests also run on a SQLite file shared by processes on one
machine, the default backend.)

* two processes acquiring the same locator at the same moment → one artifact;
* a review interrupt raised by one worker process is resumed by another;
* a worker SIGKILLed inside a gate leaves the run resumable, with exactly one
  report for the crossing afterwards.

The server comes from ``tests/pg.py`` (``initdb``/``pg_ctl`` as an unprivileged
user on 127.0.0.1). Without ``CI`` these tests skip, visibly, when no server can
be started; with ``CI`` they fail instead.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from _persist_support import LIE, build_graph, cfg, worker_acquire, worker_invoke, worker_resume

import trustgate
from trustgate.errors import ArtifactIntegrityError, LedgerConflict
from trustgate.files import Artifact, PostgresLedger
from trustgate.persistence import connect

SPAWN = multiprocessing.get_context("spawn")
# Where a run killed inside its gate is paused: the gate runs inside the guarded
# node's task, so the checkpoint before the gate is the one whose next task is that node.
GATE_STEP = ("writer",)


def _run(target: Any, *args: Any, timeout: float = 120) -> int:
    p = SPAWN.Process(target=target, args=args)
    p.start()
    p.join(timeout)
    if p.is_alive():  # pragma: no cover - a hung worker is a failure, not a hang
        p.kill()
        p.join()
        pytest.fail(f"worker {target.__name__} did not finish")
    return int(p.exitcode or 0)


def test_two_processes_acquiring_one_locator_store_one_artifact(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # workers sharing a ledger share its key, or each sees the others' rows unverified
    monkeypatch.setenv("TRUSTGATE_LEDGER_KEY", "shared-key-for-every-worker-0123")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    return 1\n")
    barrier = SPAWN.Barrier(2)
    out = SPAWN.Queue()
    procs = [
        SPAWN.Process(target=worker_acquire, args=(pg_url, str(root), barrier, out))
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert not barrier.broken  # both reached the barrier: the inserts overlapped

    mine = [Artifact.model_validate_json(r["mine"]) for r in results]
    stored = [Artifact.model_validate_json(r["stored"]) for r in results]
    assert len({r["pid"] for r in results}) == 2
    assert mine[0].id == mine[1].id  # the same coordinate, the same bytes
    assert stored[0] == stored[1]  # both got the one stored artifact, no error
    assert stored[0].acquired_at in {m.acquired_at for m in mine}  # the winner's, kept
    assert all(r["refused"] for r in results)  # a changed artifact under the id: refused

    ledger = PostgresLedger(pg_url)
    try:
        assert len(ledger) == 1
        (only,) = list(ledger)
        assert only == stored[0]
        forged_text = "def f():\n    return 42\n"
        forged = only.model_copy(
            update={
                "excerpt": forged_text,
                "content_hash": hashlib.sha256(forged_text.encode()).hexdigest(),
            }
        )
        with pytest.raises(ArtifactIntegrityError):
            ledger.put(forged)  # different bytes under the existing id
        with pytest.raises(LedgerConflict):
            ledger.put(only.model_copy(update={"verification": "unverified"}))
        assert ledger.get(only.id) == only and len(ledger) == 1
    finally:
        ledger.close()


@pytest.fixture(params=["postgres", "sqlite"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """PostgreSQL (the scale-out path) and, on one machine, a shared SQLite file."""
    if request.param == "sqlite":
        return str(tmp_path / "shared.db")
    return str(request.getfixturevalue("pg_url"))


def test_review_raised_by_one_process_is_resumed_by_another(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what a review holds while it waits is sealed under the review key: workers share it
    monkeypatch.setenv("TRUSTGATE_REVIEW_KEY", "shared-review-key-for-every-worker-01")
    assert _run(worker_invoke, db_url, "rev", LIE, "review", None) == 0
    with connect(db_url) as db:
        app = build_graph(policy="review").compile(checkpointer=db.checkpointer)
        paused = app.get_state(cfg("rev"))
        (intr,) = paused.interrupts
        assert intr.value["trustgate"] == "review"
        assert intr.value["report"]["findings"][0]["code"] == "invented"
        assert "verdict" not in paused.values  # nothing downstream ran
        assert db.history(thread="rev") == []  # a paused crossing has no report yet

    assert _run(worker_resume, db_url, "rev", {"type": "approve", "by": "bob"}, "review") == 0

    with connect(db_url) as db:
        app = build_graph(policy="review").compile(checkpointer=db.checkpointer)
        done = app.get_state(cfg("rev"))
        assert done.next == ()
        writer_pid = done.values["log"][0].split("@")[1]
        publish_pid = done.values["log"][1].split("@")[1]
        assert [e.split("@")[0] for e in done.values["log"]] == ["writer", "publish"]
        assert writer_pid != publish_pid != str(os.getpid())  # two different workers
        (report,) = db.history(thread="rev")
        assert report.decision == "reviewed" and report.released
        assert report.approval is not None and report.approval.who == "bob"
        assert [f.code for f in report.failed] == ["invented"]  # testimony, not evidence
        assert [r.id for r in trustgate.reports(app, cfg("rev"))] == [report.id]


def test_worker_killed_inside_a_gate_leaves_the_run_resumable(db_url: str, tmp_path: Path) -> None:
    marker = tmp_path / "inside-gate"
    p = SPAWN.Process(target=worker_invoke, args=(db_url, "kill", LIE, "override", str(marker)))
    p.start()
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert p.is_alive(), "the worker died before reaching the gate"
        assert time.monotonic() < deadline, "the worker never reached the gate"
        time.sleep(0.05)
    assert marker.read_text() == str(p.pid)  # the verifier, inside the gate, in that worker
    with connect(db_url) as db:
        # the checkpoint before the gate is written in the background (durability
        # "async"); let it land so the run is known to be paused at the gate
        app = build_graph().compile(checkpointer=db.checkpointer)
        while app.get_state(cfg("kill")).next != GATE_STEP:
            # a worker that died here died inside its gate (its exit code says how)
            assert p.is_alive(), f"the worker left the gate (exit code {p.exitcode})"
            assert time.monotonic() < deadline, "no checkpoint before the gate"
            time.sleep(0.05)
    assert p.is_alive()  # still inside the gate
    os.kill(p.pid, signal.SIGKILL)
    p.join(30)
    assert p.exitcode == -signal.SIGKILL

    with connect(db_url) as db:
        app = build_graph().compile(checkpointer=db.checkpointer)
        stopped = app.get_state(cfg("kill"))
        assert stopped.next == GATE_STEP  # the guarded task, and its gate, are pending
        assert "verdict" not in stopped.values
        assert db.history(thread="kill") == []  # the unfinished crossing left no report

    assert _run(worker_resume, db_url, "kill", None, "override") == 0

    with connect(db_url) as db:
        app = build_graph().compile(checkpointer=db.checkpointer)
        done = app.get_state(cfg("kill"))
        assert done.next == ()
        assert done.values["verdict"] == "published"
        assert done.values["text"] == "[removed]"  # the lie was still caught after the kill
        (report,) = db.history(thread="kill")  # exactly one: none lost, none duplicated
        assert report.decision == "modified"
        assert [r.id for r in trustgate.reports(app, cfg("kill"))] == [report.id]
