"""The report log through every saver kind, wrapped by ReportingSaver.

In-memory, SQLite (sync and async, a real file) and PostgreSQL (sync and async, a
real server from tests/pg.py). For each: a guarded graph whose gate overrides, one
whose gate halts, a review interrupt resumed in another process (another compiled
graph for the in-memory saver, which no other process can see), the
gate-inside-the-task contract (a halted report that exists only in the failed
task's pending writes; writes LangGraph replays on resume), ``durability="exit"``,
and the failure windows of the module docstring. Throughout, the report log must
equal, by id, the set of reports the wrapped saver's own rows hold: nothing lost,
nothing twice.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _persist_support import (
    HONEST,
    LIE,
    SAVER_KINDS,
    Opened,
    build_graph,
    build_in_task_graph,
    cfg,
    open_saver,
    saver_reports,
    worker_ainvoke,
    worker_aresume,
    worker_invoke,
    worker_resume,
)
from langgraph.types import Command

import trustgate
from trustgate.errors import GateHalted

SPAWN = multiprocessing.get_context("spawn")


@pytest.fixture(params=SAVER_KINDS)
async def opened(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opened]:
    kind = request.param
    url: str | None = None
    if kind.startswith("sqlite"):
        url = str(tmp_path / "db" / "trust.db")
    elif kind.startswith("postgres"):
        url = request.getfixturevalue("pg_url")
    o = await open_saver(kind, url)
    o.url = url  # type: ignore[attr-defined]
    try:
        yield o
    finally:
        await o.close()


async def assert_log_matches_saver(o: Opened, thread: str) -> dict[str, Any]:
    """The log holds exactly the saver's reports for the thread, each once."""
    in_saver = await saver_reports(o, thread)
    logged = await o.history(thread=thread)
    ids = [r.id for r in logged]
    assert len(ids) == len(set(ids)), f"duplicated in the log: {ids}"
    assert set(ids) == set(in_saver), f"log {sorted(ids)} != saver {sorted(in_saver)}"
    return {r.id: r for r in logged}


def _run(target: Any, *args: Any, timeout: float = 120) -> int:
    p = SPAWN.Process(target=target, args=args)
    p.start()
    p.join(timeout)
    if p.is_alive():  # pragma: no cover - a hung worker is a failure, not a hang
        p.kill()
        p.join()
        pytest.fail(f"worker {target.__name__} did not finish")
    return int(p.exitcode or 0)


# -- guard(): overriding, halting, reviewing gates -----------------------------------------


async def test_overriding_gate_logs_each_crossing_once(opened: Opened) -> None:
    app = build_graph().compile(checkpointer=opened.saver)
    await opened.invoke(app, {"text": HONEST, "log": []}, cfg("t1"))
    await opened.invoke(app, {"text": LIE, "log": []}, cfg("t1"))  # a second crossing
    await opened.invoke(app, {"text": LIE, "log": []}, cfg("t2"))
    state = await opened.get_state(app, cfg("t1"))
    assert state.values["text"] == "[removed]"  # the lie never reached downstream

    logged = await assert_log_matches_saver(opened, "t1")
    assert sorted(r.decision for r in logged.values()) == ["modified", "pass"]
    await assert_log_matches_saver(opened, "t2")
    assert opened.log.count() == 3

    # reading, resuming a finished thread and sweeping change nothing
    await opened.invoke(app, None, cfg("t1"))
    assert await opened.reconcile() == 0
    assert opened.log.count() == 3


async def test_halting_gate_logs_the_halted_crossing(opened: Opened) -> None:
    app = build_graph(policy="halt").compile(checkpointer=opened.saver)
    with pytest.raises(GateHalted) as info:
        await opened.invoke(app, {"text": LIE, "log": []}, cfg("halt"))
    logged = await assert_log_matches_saver(opened, "halt")
    assert list(logged) == [info.value.report.id]
    (report,) = logged.values()
    assert report.decision == "halted" and not report.released
    assert "verdict" not in (await opened.get_state(app, cfg("halt"))).values
    assert opened.log.count() == 1


async def test_review_resumed_by_another_process(
    opened: Opened, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what a review holds while it waits is sealed under the review key: workers share it
    monkeypatch.setenv("TRUSTGATE_REVIEW_KEY", "shared-review-key-for-every-worker-01")
    url = opened.url  # type: ignore[attr-defined]
    if opened.kind == "memory":
        # No other process can see an in-memory saver: another compiled graph on it.
        first = build_graph(policy="review").compile(checkpointer=opened.saver)
        await opened.invoke(first, {"text": LIE, "log": []}, cfg("rev"))
    elif opened.is_async:
        assert _run(worker_ainvoke, url, "rev", LIE, "review") == 0
    else:
        assert _run(worker_invoke, url, "rev", LIE, "review", None) == 0

    app = build_graph(policy="review").compile(checkpointer=opened.saver)
    paused = await opened.get_state(app, cfg("rev"))
    assert paused.interrupts and "verdict" not in paused.values
    assert await opened.history(thread="rev") == []  # a paused crossing has no report

    resume = {"type": "approve", "by": "bob"}
    if opened.kind == "memory":
        await opened.invoke(app, Command(resume=resume), cfg("rev"))
    elif opened.is_async:
        assert _run(worker_aresume, url, "rev", resume, "review") == 0
    else:
        assert _run(worker_resume, url, "rev", resume, "review") == 0

    done = await opened.get_state(app, cfg("rev"))
    assert done.next == () and done.values["verdict"] == "published"
    logged = await assert_log_matches_saver(opened, "rev")
    (report,) = logged.values()
    assert report.decision == "reviewed" and report.released
    assert report.approval is not None and report.approval.who == "bob"
    assert opened.log.count() == 1


# -- the gate inside the guarded task (the contract with the gate) -------------------------


async def test_in_task_halt_is_logged_from_the_failed_tasks_writes(
    opened: Opened, tmp_path: Path
) -> None:
    calls = tmp_path / "calls"
    app = build_in_task_graph(calls=calls).compile(checkpointer=opened.saver)
    with pytest.raises(GateHalted) as info:
        await opened.invoke(app, {"text": LIE, "log": []}, cfg("h"))
    first = info.value.report.id

    # the report is in no checkpoint, only in the failed task's pending writes
    inner = opened.saver.saver
    items = (
        [i async for i in inner.alist(cfg("h"))] if opened.is_async else list(inner.list(cfg("h")))
    )
    assert all(not i.checkpoint["channel_values"].get("trust_reports") for i in items)
    logged = await assert_log_matches_saver(opened, "h")
    assert list(logged) == [first]

    # Resuming: LangGraph 1.2 treats a failed task that wrote before raising as done
    # (it applies the report write and runs nothing after it); a LangGraph that re-ran
    # the task would make a second crossing with its own report. Either way: one
    # report per crossing, the first one once.
    try:
        await opened.invoke(app, None, cfg("h"))
    except GateHalted as again:
        assert again.value.report.id != first
    crossings = len(calls.read_text().splitlines())
    logged = await assert_log_matches_saver(opened, "h")
    assert first in logged and len(logged) == crossings
    assert opened.log.count() == crossings
    assert "verdict" not in (await opened.get_state(app, cfg("h"))).values  # never released


async def test_replayed_writes_are_not_logged_twice(opened: Opened, tmp_path: Path) -> None:
    """A sibling fails after the checked task succeeded: LangGraph keeps that task's
    writes and replays them on resume instead of re-running it."""
    calls, flaky = tmp_path / "calls", tmp_path / "flaky"
    flaky.touch()
    app = build_in_task_graph(calls=calls, flaky=flaky).compile(checkpointer=opened.saver)
    with pytest.raises(RuntimeError, match="failed once"):
        await opened.invoke(app, {"text": HONEST, "log": []}, cfg("r"))
    logged = await assert_log_matches_saver(opened, "r")  # logged from the saved writes
    assert len(logged) == 1

    await opened.invoke(app, None, cfg("r"))
    done = await opened.get_state(app, cfg("r"))
    assert done.values["verdict"] == "published"
    assert len(calls.read_text().splitlines()) == 1  # the checked task ran once
    assert [r.id for r in done.values["trust_reports"]] == list(logged)
    assert list(await assert_log_matches_saver(opened, "r")) == list(logged)
    assert opened.log.count() == 1


async def test_durability_exit_logs_from_the_final_checkpoint(opened: Opened) -> None:
    """With durability="exit" no task write reaches the saver before the end."""
    app = build_graph().compile(checkpointer=opened.saver)
    await opened.invoke(app, {"text": LIE, "log": []}, cfg("x"), durability="exit")
    logged = await assert_log_matches_saver(opened, "x")
    assert [r.decision for r in logged.values()] == ["modified"]
    halting = build_in_task_graph().compile(checkpointer=opened.saver)
    with pytest.raises(GateHalted):
        await opened.invoke(halting, {"text": LIE, "log": []}, cfg("xh"), durability="exit")
    assert len(await assert_log_matches_saver(opened, "xh")) == 1


# -- failure windows -------------------------------------------------------------------


class _Boom(sqlite3.OperationalError):
    pass


def _fail_log_writes(monkeypatch: pytest.MonkeyPatch, o: Opened, times: int = 1) -> list[int]:
    """The next ``times`` log inserts fail, as a crash between saver and log would."""
    left = [times]
    real, areal = o.log._insert, o.log._ainsert

    def insert(rows: Any) -> int:
        if left[0] > 0:
            left[0] -= 1
            raise _Boom("report log unavailable")
        return int(real(rows))

    async def ainsert(rows: Any) -> int:
        if left[0] > 0:
            left[0] -= 1
            raise _Boom("report log unavailable")
        return int(await areal(rows))

    monkeypatch.setattr(o.log, "_insert", insert)
    monkeypatch.setattr(o.log, "_ainsert", ainsert)
    return left


async def test_log_failure_after_the_saver_wrote_is_raised_then_reconciled_on_resume(
    opened: Opened, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every log write of the run fails (as if the process died after each saver
    write): the error surfaces, and the resume closes the gap from the saver's rows."""
    calls, flaky = tmp_path / "calls", tmp_path / "flaky"
    flaky.touch()  # the run stops after the checked task's writes were saved
    left = _fail_log_writes(monkeypatch, opened, times=1000)
    app = build_in_task_graph(calls=calls, flaky=flaky).compile(checkpointer=opened.saver)
    with pytest.raises((_Boom, RuntimeError)) as info:  # raised, never swallowed
        await opened.invoke(app, {"text": HONEST, "log": []}, cfg("w"))
    if isinstance(info.value, _Boom):
        assert any("reconcile" in note for note in getattr(info.value, "__notes__", []))
    assert left[0] < 1000  # the log write was attempted, and failed
    assert opened.log.count() == 0
    assert len(await saver_reports(opened, "w")) == 1  # the saver has it

    left[0] = 0  # the log is back
    await opened.invoke(app, None, cfg("w"))  # the resume reads, replays, and logs it
    assert len(calls.read_text().splitlines()) == 1  # not re-run: the same crossing
    assert len(await assert_log_matches_saver(opened, "w")) == 1
    assert opened.log.count() == 1


async def test_halted_report_missed_by_the_log_is_found_by_a_read_or_a_sweep(
    opened: Opened, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    left = _fail_log_writes(monkeypatch, opened, times=1000)
    app = build_in_task_graph().compile(checkpointer=opened.saver)
    caplog.set_level("WARNING", logger="trustgate.persistence._saver")
    with pytest.raises((GateHalted, _Boom)):
        await opened.invoke(app, {"text": LIE, "log": []}, cfg("g1"))
    # the halt wins over the log error, which LangGraph then drops: the warning remains
    assert "report log write failed" in caplog.text
    left[0] = 0
    assert await opened.history(thread="g1") == []
    assert len(await saver_reports(opened, "g1")) == 1
    await opened.get_state(app, cfg("g1"))  # any read of the thread closes the gap
    assert len(await assert_log_matches_saver(opened, "g1")) == 1

    left[0] = 1000
    with pytest.raises((GateHalted, _Boom)):
        await opened.invoke(app, {"text": LIE, "log": []}, cfg("g2"))
    left[0] = 0
    assert await opened.history(thread="g2") == []
    assert await opened.reconcile() == 1  # nobody reads g2 again: the sweep finds it
    assert await opened.reconcile() == 0
    assert len(await assert_log_matches_saver(opened, "g2")) == 1
    assert opened.log.count() == 2


async def test_a_read_never_fails_because_the_log_cannot_be_written(
    opened: Opened, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    app = build_in_task_graph().compile(checkpointer=opened.saver)
    left = _fail_log_writes(monkeypatch, opened, times=1000)
    with pytest.raises((GateHalted, _Boom)):
        await opened.invoke(app, {"text": LIE, "log": []}, cfg("rd"))
    caplog.set_level("WARNING", logger="trustgate.persistence._saver")
    await opened.get_state(app, cfg("rd"))  # the backstop fails: a warning, not an error
    assert "not reconciled" in caplog.text
    assert opened.log.count() == 0
    left[0] = 0
    await opened.get_state(app, cfg("rd"))  # the next read closes the gap
    assert len(await assert_log_matches_saver(opened, "rd")) == 1


async def test_the_log_never_holds_what_the_saver_did_not_store(opened: Opened) -> None:
    """The log is written only after the wrapped saver stored what carries the report:
    a saver refusing every write that carries one leaves the log empty."""
    inner = opened.saver.saver
    real = {n: getattr(inner, n) for n in ("put_writes", "aput_writes", "put", "aput")}

    def carries(args: tuple[Any, ...]) -> bool:
        payload = args[1]
        if isinstance(payload, dict):  # put: a checkpoint
            return bool(payload["channel_values"].get("trust_reports"))
        return any(w[0] == "trust_reports" for w in payload)  # put_writes: writes

    def refusing(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if carries(args):
                raise RuntimeError("saver down")
            return real[name](*args, **kwargs)

        async def acall(*args: Any, **kwargs: Any) -> Any:
            if carries(args):
                raise RuntimeError("saver down")
            return await real[name](*args, **kwargs)

        return acall if name.startswith("a") else call

    app = build_in_task_graph().compile(checkpointer=opened.saver)
    for name in real:
        setattr(inner, name, refusing(name))
    try:
        with pytest.raises(RuntimeError, match="saver down"):
            await opened.invoke(app, {"text": HONEST, "log": []}, cfg("down"))
        with pytest.raises((RuntimeError, GateHalted)):
            await opened.invoke(app, {"text": LIE, "log": []}, cfg("down2"))
    finally:
        for name, fn in real.items():
            setattr(inner, name, fn)
    assert await saver_reports(opened, "down") == {}
    assert await saver_reports(opened, "down2") == {}
    assert opened.log.count() == 0


async def test_concurrent_runs_each_log_their_own_reports(opened: Opened) -> None:
    """Concurrent tasks on the async savers, concurrent threads on the sync ones."""
    app = build_graph().compile(checkpointer=opened.saver)
    threads = [f"c{i}" for i in range(12)]

    def one(i: int, t: str) -> Any:
        inputs = {"text": LIE if i % 2 else HONEST, "log": []}
        if opened.is_async:
            return app.ainvoke(inputs, cfg(t))
        return asyncio.to_thread(app.invoke, inputs, cfg(t))

    await asyncio.gather(*(one(i, t) for i, t in enumerate(threads)))
    for t in threads:
        assert len(await assert_log_matches_saver(opened, t)) == 1
    assert opened.log.count() == len(threads)


def test_reports_of_the_module_api_and_the_log_agree(tmp_path: Path) -> None:
    with trustgate.persistence.connect(tmp_path / "a.db") as db:
        app = build_graph().compile(checkpointer=db.checkpointer)
        app.invoke({"text": LIE, "log": []}, cfg("m"))
        assert [r.id for r in trustgate.reports(app, cfg("m"))] == [
            r.id for r in db.history(thread="m")
        ]
