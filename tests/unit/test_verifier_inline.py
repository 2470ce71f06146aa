"""Where a verifier runs: inline unless a time limit was asked for.

A verifier nobody gave a limit (no ``timeout`` of its own, none on its gate, no
budget) runs in the crossing itself; one with a limit runs on its gate's threads,
where the limit can be kept. Each verifier records the thread it ran on; nothing here
measures time.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from trustgate import Finding, TrustGate
from trustgate.verifiers.base import Evidence, FunctionVerifier


class Where:
    """A verifier that records the thread each of its runs is on."""

    def __init__(self, timeout: float | None = None, name: str = "where") -> None:
        self.name = name
        self.timeout = timeout
        self.threads: list[threading.Thread] = []

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        self.threads.append(threading.current_thread())
        return [Finding.ok(self.name)]


def _ran_on(verifier: Where, **gate: Any) -> threading.Thread:
    result = TrustGate("g", reads="claim", verifiers=[verifier], **gate).check(
        {"claim": "x"}, node="n"
    )
    assert result.released
    [thread] = verifier.threads
    return thread


def test_without_a_time_limit_a_verifier_runs_inline_with_one_on_the_gates_threads() -> None:
    here = threading.current_thread()
    assert TrustGate("g", reads="claim", verifiers=[Where()]).timeout is None
    assert _ran_on(Where()) is here
    # a limit asked for anywhere moves the run to the gate's threads, which keep it
    assert _ran_on(Where(timeout=5.0)) is not here
    assert _ran_on(Where(), timeout=5.0) is not here
    assert _ran_on(Where(), budget=30.0) is not here


def test_a_plain_function_verifier_runs_inline() -> None:
    seen: list[threading.Thread] = []

    def check(claims: Any, evidence: Evidence) -> Finding:
        seen.append(threading.current_thread())
        return Finding.ok("check")

    gate = TrustGate("g", reads="claim", verifiers=[FunctionVerifier(check)])
    assert gate.check({"claim": "x"}, node="n").released
    assert seen == [threading.current_thread()]


async def test_an_async_crossing_runs_a_sync_verifier_without_a_limit_on_the_loop() -> None:
    loop_thread = threading.current_thread()
    inline, limited = Where(name="inline"), Where(timeout=5.0, name="limited")
    gate = TrustGate("g", reads="claim", verifiers=[inline, limited])
    result = await gate.acheck({"claim": "x"}, node="n")
    assert result.released
    assert inline.threads == [loop_thread]
    [other] = limited.threads
    assert other is not loop_thread
    assert asyncio.get_running_loop().is_running()


def test_an_inline_verifier_that_raises_is_a_failed_inspection_retried_in_the_crossing() -> None:
    seen: list[threading.Thread] = []

    class Flaky:
        name = "flaky"
        timeout = None
        retries = 1

        def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
            seen.append(threading.current_thread())
            raise RuntimeError("the check broke")

    result = TrustGate("g", reads="claim", verifiers=[Flaky()]).check({"claim": "x"}, node="n")
    assert not result.released and result.report.decision == "halted"
    [f] = result.report.failed
    assert (f.verifier, f.code) == ("flaky", "verifier_error")
    assert "RuntimeError: the check broke" in f.message
    assert seen == [threading.current_thread()] * 2
