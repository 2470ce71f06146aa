"""A frozen PostgreSQL server is a typed error within the bound, never a hang.

A server stopped by SIGSTOP (every process of it) keeps its sockets open and answers
nothing, which is what a partitioned peer or a paused host looks like to the client:
the statement timeout cannot fire (the server does not run), so only the client's
own deadline ends the wait. Each test freezes this module's own server in the
middle of a run (from inside the gate's verifier), measures how long the run takes
to fail, and thaws it afterwards; then checks that the crossing released nothing and
that the reports stored before the outage are all still there.

Timing assertions are the point of these tests, so their margins are wide: under
three times the configured limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
from _bypass_support import find_lies
from langgraph.graph import END, START, StateGraph
from pg import PgUnavailable, TempPostgres, _unavailable, temp_postgres
from typing_extensions import TypedDict

import trustgate
from trustgate.errors import ConfigurationError, DatabaseUnavailable, GateHalted
from trustgate.graph import TrustReports
from trustgate.persistence import PostgresReportHistory, aconnect, connect

LIE = "LIE: the fix is already merged"
HONEST = "the fix is in a.py"
# what the writer (the 'model') says for each input topic: the lie is produced inside
# the guarded node, so its text anywhere downstream is a leak
SCRIPT = {"lie": LIE, "honest": HONEST}
T = TypeVar("T")


class State(TypedDict, total=False):
    topic: str
    text: str
    verdict: str
    trust_reports: TrustReports


class Server:
    """This module's own server (it is frozen, so it is not the session's)."""

    def __init__(self, pg: TempPostgres) -> None:
        self.pg = pg
        self.frozen_at: float | None = None

    def pids(self) -> list[int]:
        leader = int((self.pg.root / "data" / "postmaster.pid").read_text().split()[0])
        pids = [leader]
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError):  # a process that just exited
                    fields = (
                        open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()  # noqa: SIM115
                    )
                    if int(fields[1]) == leader:
                        pids.append(int(entry))
        return pids

    def _signal(self, sig: signal.Signals) -> None:
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):  # a backend that just exited
                os.kill(pid, sig)

    def freeze(self) -> None:
        self._signal(signal.SIGSTOP)
        self.frozen_at = time.monotonic()

    def thaw(self) -> None:
        self._signal(signal.SIGCONT)
        self.frozen_at = None


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    try:
        cm = temp_postgres()
        pg = cm.__enter__()
    except (PgUnavailable, OSError) as exc:
        _unavailable(str(exc))
        raise
    srv = Server(pg)
    try:
        yield srv
    finally:
        srv.thaw()
        cm.__exit__(None, None, None)


@pytest.fixture
def url(server: Server) -> Iterator[str]:
    yield server.pg.create_database()
    server.thaw()  # whatever the test did


class Run:
    """writer → publish with a halting gate on writer; ``arm()`` makes the gate's verifier
    freeze the server (once) in the middle of the next crossing."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.ran: list[str] = []
        self._armed = threading.Event()
        g = StateGraph(State)
        g.add_node("writer", self._writer)
        g.add_node("publish", self._publish)
        g.add_edge(START, "writer")
        g.add_edge("writer", "publish")
        g.add_edge("publish", END)
        gate = trustgate.TrustGate(
            "checker",
            reads="text",
            verifiers=[trustgate.FunctionVerifier(self._no_lies, name="no_lies")],
            policy=trustgate.Halt(),
        )
        self.builder = trustgate.guard(g, {"writer": gate})

    def arm(self) -> None:
        self._armed.set()

    def _writer(self, state: State) -> dict[str, Any]:
        self.ran.append("writer")
        return {"text": SCRIPT[state["topic"]]}

    def _publish(self, state: State) -> dict[str, Any]:
        self.ran.append("publish")
        return {"verdict": f"published: {state['text']}"}

    def _no_lies(self, claims: Any, evidence: Any) -> list[trustgate.Finding]:
        if self._armed.is_set():
            self._armed.clear()
            self.server.freeze()  # the outage starts in the middle of the crossing
        if str(claims).startswith("LIE"):
            return [trustgate.Finding.failed("no_lies", "invented", "not supported")]
        return [trustgate.Finding.ok("no_lies")]


def cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def _eventually(fn: Callable[[], T], within: float) -> T:
    """``fn()`` once the database answers again (after a thaw, the client fails fast
    for at most one more deadline)."""
    end = time.monotonic() + within
    while True:
        try:
            return fn()
        except DatabaseUnavailable:
            if time.monotonic() > end:
                raise
            time.sleep(0.2)


def _elapsed(server: Server) -> float:
    assert server.frozen_at is not None, "the verifier never froze the server"
    return time.monotonic() - server.frozen_at


def test_a_frozen_server_fails_the_run_with_the_typed_error_within_the_default_bound(
    server: Server, url: str
) -> None:
    run = Run(server)
    with connect(url) as db:  # the defaults: statement_timeout 5 s, deadline 6 s
        app = run.builder.compile(checkpointer=db.checkpointer, store=db.store)
        app.invoke({"topic": "honest"}, cfg("before"))
        durable = {r.id for r in db.history()}
        assert durable  # a report stored before the outage

        run.arm()
        try:
            with pytest.raises(DatabaseUnavailable) as raised:
                app.invoke({"topic": "honest"}, cfg("during"))
            took = _elapsed(server)
            print(f"frozen server -> {type(raised.value).__name__} after {took:.2f} s")
            assert took < 3 * 6.0
            assert "did not answer within 6 s" in str(raised.value)
            started = time.monotonic()
            db.close()  # closing does not wait on the frozen server either
            assert time.monotonic() - started < 3 * 6.0
        finally:
            server.thaw()

    with connect(url) as db:
        assert durable <= {r.id for r in _eventually(db.history, 20)}  # nothing durable lost


def test_a_halted_crossing_under_the_outage_releases_nothing_and_resumes_after(
    server: Server, url: str
) -> None:
    run = Run(server)
    limits = {"connect_timeout": 2, "statement_timeout": 1, "pool_timeout": 2}  # deadline 2 s
    with connect(url, **limits) as db:
        app = run.builder.compile(checkpointer=db.checkpointer, store=db.store)
        app.invoke({"topic": "honest"}, cfg("before"))
        durable = {r.id for r in db.history()}
        run.ran.clear()

        run.arm()
        chunks: list[Any] = []
        try:
            with pytest.raises((GateHalted, DatabaseUnavailable)):
                for chunk in app.stream(
                    {"topic": "lie"}, cfg("halted"), stream_mode=["updates", "values", "custom"]
                ):
                    chunks.append(chunk)
            took = _elapsed(server)
            print(f"frozen server, halted crossing -> failed after {took:.2f} s")
            assert took < 3 * 2.0
        finally:
            server.thaw()
        assert run.ran == ["writer"]  # publish never ran
        assert find_lies(chunks, [LIE]) == []  # the lie reached no stream (reports aside)

        state = _eventually(lambda: app.get_state(cfg("halted")), 10)
        assert find_lies(state.values, [LIE]) == [] and "verdict" not in state.values
        assert durable <= {r.id for r in db.history()}  # the reports stored before: kept
        # the run is resumable: the gate runs again and halts the lie again
        with pytest.raises(GateHalted):
            app.invoke(None, cfg("halted"))
        assert run.ran == ["writer", "writer"]
        halted = db.history(thread="halted")
        assert [r.decision for r in halted][-1] == "halted"
        assert find_lies(app.get_state(cfg("halted")).values, [LIE]) == []


def test_the_async_path_fails_within_the_configured_bound(server: Server, url: str) -> None:
    run = Run(server)

    async def main() -> tuple[float, set[str], BaseException | None]:
        async with aconnect(url, connect_timeout=2, statement_timeout=1, pool_timeout=2) as db:
            app = run.builder.compile(checkpointer=db.checkpointer, store=db.store)
            await app.ainvoke({"topic": "honest"}, cfg("before"))
            durable = {r.id for r in await db.ahistory()}
            run.arm()
            caught: BaseException | None = None
            try:
                await app.ainvoke({"topic": "honest"}, cfg("during"))
            except Exception as exc:  # checked below, outside the event loop
                caught = exc
            took = _elapsed(server)
            server.thaw()  # before aclose, which then finds a server that answers
            return took, durable, caught

    try:
        took, durable, caught = asyncio.run(main())
    finally:
        server.thaw()
    print(f"frozen server (async) -> {type(caught).__name__} after {took:.2f} s")
    assert isinstance(caught, DatabaseUnavailable), repr(caught)
    assert took < 3 * 2.0
    with connect(url) as db:
        assert durable <= {r.id for r in _eventually(db.history, 20)}


def test_the_ledger_and_the_report_log_are_bounded_by_the_url_settings(
    server: Server, url: str
) -> None:
    # libpq's own parameters in the URL: the standalone ledger and log read them too
    bounded = f"{url}?connect_timeout=2&options=-c%20statement_timeout%3D1s"
    ledger = trustgate.files.PostgresLedger(bounded, key="a-key-for-this-test-0123456789")
    log = PostgresReportHistory(bounded)
    try:
        assert len(ledger) == 0 and log.count() == 0
        for read in (ledger.__len__, log.count):
            server.freeze()
            try:
                with pytest.raises(DatabaseUnavailable):
                    read()
                took = _elapsed(server)
                print(f"frozen server, {read.__qualname__} -> failed after {took:.2f} s")
                assert took < 3 * 2.0
            finally:
                server.thaw()
    finally:
        ledger.close()
        log.close()


def test_connecting_to_a_frozen_server_fails_within_the_connect_timeout(
    server: Server, url: str
) -> None:
    server.freeze()
    try:
        with pytest.raises(ConfigurationError, match="cannot connect"):
            connect(url, connect_timeout=2)
        took = _elapsed(server)
        print(f"connect to a frozen server -> ConfigurationError after {took:.2f} s")
        assert took < 3 * 2.0
    finally:
        server.thaw()
