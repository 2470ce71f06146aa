"""Verifiers run on threads trustgate owns: a stuck one cannot take anyone down with it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, _executor
from trustgate.verifiers.base import Evidence, FunctionVerifier


class S(TypedDict, total=False):
    claim: str
    other: str


def _stuck_gate(release: threading.Event, timeout: float = 0.2) -> trustgate.TrustGate:
    def stuck(claims: Any, evidence: Evidence) -> list[Finding]:
        release.wait(30)
        return [Finding.ok("stuck")]

    return trustgate.TrustGate(
        "g", reads="claim", verifiers=[FunctionVerifier(stuck, name="stuck", timeout=timeout)]
    )


def test_a_verifier_past_its_time_limit_halts_and_is_written_off() -> None:
    release = threading.Event()
    try:
        before = _executor.stats()["abandoned"]
        t0 = time.monotonic()
        result = _stuck_gate(release).check({"claim": "x"}, node="n")
        took = time.monotonic() - t0
        assert result.report.decision == "halted"
        assert [f.code for f in result.report.failed] == ["verifier_timeout"]
        assert took < 5  # the crossing returns at the limit, not when the verifier does
        assert _executor.stats()["abandoned"] == before + 1
    finally:
        release.set()
    deadline = time.monotonic() + 10
    while _executor.stats()["abandoned"] > before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _executor.stats()["abandoned"] == before  # its thread retired once it returned


async def test_stuck_verifiers_starve_neither_later_crossings_nor_sync_nodes() -> None:
    """Eight async crossings whose verifiers hang, then an honest graph with a sync node
    (which LangGraph runs on the loop's default executor): the honest run is not held up
    behind the stuck verifiers."""
    release = threading.Event()
    gate = _stuck_gate(release)

    def node(state: S) -> dict[str, Any]:
        return {"other": "done"}

    g = StateGraph(S)
    g.add_node("n", node)
    g.add_edge(START, "n")
    g.add_edge("n", END)
    honest = g.compile()
    try:
        stuck = [gate.acheck({"claim": str(i)}, node="n") for i in range(8)]
        results = await asyncio.wait_for(asyncio.gather(*stuck), 10)
        assert all(r.report.decision == "halted" for r in results)
        t0 = time.monotonic()
        for _ in range(20):
            assert (await honest.ainvoke({}))["other"] == "done"
        assert time.monotonic() - t0 < 10
        ok = trustgate.TrustGate(
            "ok",
            reads="claim",
            verifiers=[FunctionVerifier(lambda c, e: Finding.ok("ok"), name="ok", timeout=5)],
        )
        assert (await asyncio.wait_for(ok.acheck({"claim": "x"}, node="n"), 10)).released
    finally:
        release.set()


def test_no_thread_is_started_per_crossing() -> None:
    gate = trustgate.TrustGate(
        "ok",
        reads="claim",
        verifiers=[FunctionVerifier(lambda c, e: Finding.ok("ok"), name="ok", timeout=5)],
    )
    gate.check({"claim": "warm"}, node="n")  # the pool's threads start once
    started = _executor.stats()["started"]
    for i in range(50):
        assert gate.check({"claim": str(i)}, node="n").released
    assert _executor.stats()["started"] == started


def test_too_many_stuck_verifiers_fail_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_executor, "MAX_THREADS", 0)
    monkeypatch.setattr(_executor, "_LIVE", set())
    result = trustgate.TrustGate(
        "g",
        reads="claim",
        verifiers=[FunctionVerifier(lambda c, e: Finding.ok("x"), name="x", timeout=5)],
    ).check({"claim": "x"}, node="n")
    assert result.report.decision == "halted"
    assert "ExecutorExhausted" in (result.report.error or "")


def test_interpreter_exits_without_waiting_for_a_stuck_verifier() -> None:
    script = textwrap.dedent(
        """
        import time, trustgate
        from trustgate._findings import Finding
        from trustgate.verifiers.base import FunctionVerifier
        def stuck(c, e):
            time.sleep(60)
            return [Finding.ok("s")]
        g = trustgate.TrustGate("g", reads="claim",
                                verifiers=[FunctionVerifier(stuck, name="s", timeout=0.2)])
        print(g.check({"claim": "x"}, node="n").report.decision)
        """
    )
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "halted"
    assert time.monotonic() - t0 < 30  # not the verifier's 60 s
