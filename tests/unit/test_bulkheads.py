"""Each gate has its own bulkhead: a verifier stuck past its limit costs its gate only.

Stuck verifiers wait on an event nobody sets until the test's teardown (no long sleeps);
the only waits are their small time limits. Nothing here asserts a duration: what is
counted is how many crossings passed, how many verifier runs started, and which
finding a halt carries.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trustgate import Finding, TrustGate, _executor
from trustgate.errors import ConfigurationError
from trustgate.verifiers.base import Evidence, FunctionVerifier

LIMIT = 0.05  # seconds a stuck verifier is given before it is written off


class Hang:
    """A sync verifier that does not return until ``release`` is set."""

    def __init__(self, release: threading.Event, name: str = "hang", timeout: float = LIMIT):
        self.name = name
        self.timeout = timeout
        self.release = release
        self.entered = threading.Semaphore(0)
        self._lock = threading.Lock()
        self.calls = 0

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        with self._lock:
            self.calls += 1
        self.entered.release()
        self.release.wait()
        return [Finding.ok(self.name)]


def quick(claims: Any, evidence: Evidence) -> list[Finding]:
    return [Finding.ok("quick")]


def quick_gate(name: str = "b", timeout: float = 30.0) -> TrustGate:
    return TrustGate(
        name, reads="claim", verifiers=[FunctionVerifier(quick, name="quick", timeout=timeout)]
    )


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """The event stuck verifiers wait on; set at teardown, and their threads joined."""
    event = threading.Event()
    yield event
    event.set()
    for t in threading.enumerate():
        if isinstance(t, _executor._Worker) and getattr(t, "abandoned", None) is not None:
            t.join(10)


def _reason(result: Any) -> tuple[str, str]:
    [f] = result.report.failed
    return f.code, f.message


def test_a_gate_whose_verifier_hangs_does_not_halt_an_unrelated_gate(
    release: threading.Event,
) -> None:
    """The issue, measured: 40 crossings of a gate whose verifier hangs past its limit,
    then 10 crossings of an unrelated gate with a quick verifier: all 10 pass."""
    stuck = TrustGate("a", reads="claim", verifiers=[Hang(release)])
    for i in range(40):
        r = stuck.check({"claim": str(i)}, node="n")
        assert r.report.decision == "halted" and not r.released
    other = quick_gate()
    results = [other.check({"claim": str(i)}, node="m") for i in range(10)]
    assert [r.report.decision for r in results] == ["pass"] * 10
    assert all(r.released for r in results)


async def test_a_gate_whose_verifier_hangs_does_not_halt_an_unrelated_gate_async(
    release: threading.Event,
) -> None:
    """The same in async runs; the unrelated gate's crossings run beside one more of the
    stuck gate's, on the same loop, and all pass."""
    stuck = TrustGate("a", reads="claim", verifiers=[Hang(release)])
    for i in range(40):
        r = await stuck.acheck({"claim": str(i)}, node="n")
        assert r.report.decision == "halted" and not r.released
    other = quick_gate()
    *results, again = await asyncio.wait_for(
        asyncio.gather(
            *(other.acheck({"claim": str(i)}, node="m") for i in range(10)),
            stuck.acheck({"claim": "again"}, node="n"),
        ),
        30,
    )
    assert [r.report.decision for r in results] == ["pass"] * 10
    assert again.report.decision == "halted" and not again.released


def test_a_gate_whose_stuck_threads_reach_its_cap_halts_at_once_naming_them(
    release: threading.Event,
) -> None:
    """After ``max_stuck`` (8) written-off threads, the gate's next crossing does not
    start its verifier: it halts with ``verifier_error`` naming the exhaustion and the
    stuck verifier. When the stuck runs return, the gate has its capacity back."""
    hang = Hang(release)
    gate = TrustGate("a", reads="claim", verifiers=[hang])
    cap = 8  # the documented default
    first = [_reason(gate.check({"claim": str(i)}, node="n"))[0] for i in range(cap)]
    assert first == ["verifier_timeout"] * cap
    for _ in range(3):
        r = gate.check({"claim": "more"}, node="n")
        assert r.report.decision == "halted" and not r.released
        code, message = _reason(r)
        assert code == "verifier_error"
        assert r.report.failed[0].verifier == "hang"
        assert message.startswith("ExecutorExhausted: gate 'a' has 8 verifier threads stuck")
        assert "max_stuck=8" in message and "'hang' x8" in message
    assert hang.calls == cap  # the runs past the cap were never started: nothing waited
    assert gate.bulkhead.stats()["stuck"] == cap

    release.set()
    for t in threading.enumerate():
        if isinstance(t, _executor._Worker) and t.abandoned is not None:
            t.join(10)
    assert gate.bulkhead.stats()["stuck"] == 0
    assert gate.check({"claim": "after"}, node="n").released


def test_max_stuck_is_the_gates_own(release: threading.Event) -> None:
    """A gate built with ``max_stuck=2`` halts at its third stuck run; the unrelated gate
    beside it keeps passing."""
    gate = TrustGate("a", reads="claim", verifiers=[Hang(release)], max_stuck=2)
    codes = [_reason(gate.check({"claim": str(i)}, node="n"))[0] for i in range(3)]
    assert codes == ["verifier_timeout", "verifier_timeout", "verifier_error"]
    assert quick_gate().check({"claim": "x"}, node="m").released


def test_a_gate_busy_with_slow_runs_queues_no_other_gate_behind_them(
    release: threading.Event,
) -> None:
    """Four crossings of one gate whose verifier is slow (long limit, still running) fill
    that gate's threads; a fifth waits in its own queue. Another gate's crossings,
    meanwhile, get a thread and pass instead of waiting behind them."""
    slow = Hang(release, name="slow", timeout=60)
    busy = TrustGate("a", reads="claim", verifiers=[slow])
    with ThreadPoolExecutor(5) as pool:
        pending = [pool.submit(busy.check, {"claim": str(i)}, node="n") for i in range(5)]
        for _ in range(4):
            assert slow.entered.acquire(timeout=30)
        other = quick_gate(timeout=5)
        results = [other.check({"claim": str(i)}, node="m") for i in range(10)]
        assert [r.report.decision for r in results] == ["pass"] * 10
        assert slow.calls == 4  # the fifth waits for its own gate
        release.set()
        done = [f.result(30) for f in pending]
    assert all(r.released for r in done)
    assert slow.calls == 5


def test_the_process_ceiling_bounds_every_thread_even_for_a_permissive_gate(
    release: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gate allowed many stuck threads still cannot start more than the process-wide
    ceiling: once every thread of the process is stuck, crossings halt at once with the
    process-wide exhaustion instead of starting another thread."""
    now = _executor.stats()
    ceiling = now["workers"] + now["abandoned"] + 4
    monkeypatch.setattr(_executor, "MAX_THREADS", ceiling)
    gate = TrustGate("a", reads="claim", verifiers=[Hang(release)], max_stuck=1000)
    messages = []
    for i in range(ceiling + 2):
        r = gate.check({"claim": str(i)}, node="n")
        assert r.report.decision == "halted"
        messages.append(_reason(r)[1])
        workers = [t for t in threading.enumerate() if isinstance(t, _executor._Worker)]
        assert len(workers) <= ceiling
    assert "verifier threads of the process are stuck" in messages[-1]
    r = quick_gate().check({"claim": "x"}, node="m")
    assert r.report.decision == "halted" and "of the process are stuck" in _reason(r)[1]


async def test_an_async_verifier_that_ignores_its_cancellation_holds_no_crossing() -> None:
    """A native verifier is cancelled at its limit; one that catches the cancellation and
    carries on does not hold the crossing (it halts ``verifier_timeout``) nor the loop."""
    never = asyncio.Event()
    cancelled = asyncio.Event()
    finished = asyncio.Event()

    class Stubborn:
        name = "stubborn"
        timeout = LIMIT

        def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
            raise AssertionError("the async run uses averify")

        async def averify(self, claims: Any, evidence: Evidence) -> list[Finding]:
            try:
                await never.wait()
            except asyncio.CancelledError:
                cancelled.set()
                await never.wait()  # refuses to stop
            finally:
                finished.set()
            return [Finding.ok(self.name)]

    gate = TrustGate("s", reads="claim", verifiers=[Stubborn()])
    try:
        r = await asyncio.wait_for(gate.acheck({"claim": "x"}, node="n"), 30)
        assert r.report.decision == "halted" and not r.released
        assert _reason(r)[0] == "verifier_timeout"
        assert (await asyncio.wait_for(quick_gate().acheck({"claim": "y"}, node="m"), 30)).released
    finally:
        never.set()
        await asyncio.wait_for(finished.wait(), 30)
    assert cancelled.is_set()


# --- the arguments ---------------------------------------------------------------------


def test_each_gate_has_its_own_bulkhead_with_the_documented_defaults() -> None:
    a, b = quick_gate("a"), quick_gate("a")
    assert a.bulkhead is not b.bulkhead
    assert (a.bulkhead.threads, a.bulkhead.max_stuck) == (4, 8)
    custom = TrustGate("c", reads="claim", verifiers=[Hang(threading.Event())], threads=2)
    assert (custom.bulkhead.threads, custom.bulkhead.max_stuck) == (2, 8)


@given(bad=st.one_of(st.integers(max_value=0), st.sampled_from([True, 1.5, "4", None, math.nan])))
def test_threads_and_max_stuck_are_whole_numbers_of_at_least_one(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="threads must be a whole number"):
        TrustGate("g", reads="claim", verifiers=[Hang(threading.Event())], threads=bad)
    with pytest.raises(ConfigurationError, match="max_stuck must be a whole number"):
        TrustGate("g", reads="claim", verifiers=[Hang(threading.Event())], max_stuck=bad)
