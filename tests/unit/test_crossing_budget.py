"""``TrustGate(..., budget=seconds)``: a crossing that outlives its budget halts.

A stuck verifier waits on an event set at teardown; where the budget must run out
*between* runs (retries, several verifiers, re-rendered attempts), the budget's clock is
a fake one the verifiers advance, so nothing here depends on how fast the machine is
and nothing asserts a duration.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, TrustGate, _executor
from trustgate.errors import ConfigurationError, GateHalted
from trustgate.policies import Halt, Rerender
from trustgate.readers import LastAIText
from trustgate.verifiers.base import Evidence, FunctionVerifier

BUDGET = 0.05


class Hang:
    """A sync verifier with a long limit of its own that does not return until released."""

    def __init__(self, release: threading.Event, name: str = "hang", retries: int = 0):
        self.name = name
        self.timeout = 60.0
        self.retries = retries
        self.release = release
        self.calls = 0

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        self.calls += 1
        self.release.wait()
        return [Finding.ok(self.name)]


class Clock:
    """The budget's clock, advanced by the verifiers that "take" time."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Takes:
    """A verifier that takes ``seconds`` on the fake clock, then fails or passes."""

    def __init__(
        self, clock: Clock, seconds: float, name: str, *, fails: bool = False, raises: bool = False
    ) -> None:
        self.clock = clock
        self.seconds = seconds
        self.name = name
        self.timeout: float | None = None
        self.retries = 1 if raises else 0
        self.fails = fails
        self.raises = raises
        self.calls = 0

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        self.calls += 1
        self.clock.now += self.seconds
        if self.raises:
            raise RuntimeError("flaky")
        if self.fails:
            return [Finding.failed(self.name, "unsupported", "the claim has no source")]
        return [Finding.ok(self.name)]


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()
    for t in threading.enumerate():
        if isinstance(t, _executor._Worker) and getattr(t, "abandoned", None) is not None:
            t.join(10)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    from trustgate import _budget

    fake = Clock()
    monkeypatch.setattr(_budget, "clock", fake)
    return fake


def quick(claims: Any, evidence: Evidence) -> list[Finding]:
    return [Finding.ok("quick")]


def _halt(result: Any) -> Finding:
    assert result.report.decision == "halted" and not result.released
    assert result.update is None
    [f] = result.report.failed
    return f


# --- over and under the budget ---------------------------------------------------------


def test_a_crossing_over_its_budget_halts_naming_the_running_verifier(
    release: threading.Event,
) -> None:
    hang = Hang(release)
    gate = TrustGate("g", reads="claim", verifiers=[hang], budget=BUDGET)
    f = _halt(gate.check({"claim": "x"}, node="n"))
    assert (f.verifier, f.code) == ("hang", "budget_exceeded")
    assert f.message == "the crossing's budget of 0.05s ran out while verifier 'hang' was running"
    assert hang.calls == 1


async def test_a_crossing_over_its_budget_halts_async(release: threading.Event) -> None:
    gate = TrustGate("g", reads="claim", verifiers=[Hang(release)], budget=BUDGET)
    f = _halt(await gate.acheck({"claim": "x"}, node="n"))
    assert (f.verifier, f.code) == ("hang", "budget_exceeded")
    assert "budget of 0.05s" in f.message and "'hang'" in f.message


async def test_a_native_async_verifier_over_the_budget_is_cancelled_and_halts() -> None:
    import asyncio

    never = asyncio.Event()
    cancelled = asyncio.Event()

    class Waits:
        name = "waits"
        timeout = 60.0

        def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
            raise AssertionError("the async run uses averify")

        async def averify(self, claims: Any, evidence: Evidence) -> list[Finding]:
            try:
                await never.wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return [Finding.ok(self.name)]

    gate = TrustGate("g", reads="claim", verifiers=[Waits()], budget=BUDGET)
    f = _halt(await gate.acheck({"claim": "x"}, node="n"))
    assert (f.verifier, f.code) == ("waits", "budget_exceeded")
    await asyncio.wait_for(cancelled.wait(), 30)


def test_a_crossing_within_its_budget_passes() -> None:
    gate = TrustGate(
        "g", reads="claim", verifiers=[FunctionVerifier(quick, name="quick")], budget=30
    )
    r = gate.check({"claim": "x"}, node="n")
    assert r.released and r.report.decision == "pass"
    assert gate.budget == 30.0


async def test_a_crossing_within_its_budget_passes_async() -> None:
    gate = TrustGate(
        "g", reads="claim", verifiers=[FunctionVerifier(quick, name="quick")], budget=30
    )
    r = await gate.acheck({"claim": "x"}, node="n")
    assert r.released and r.report.decision == "pass"


# --- what the budget covers --------------------------------------------------------------


@pytest.mark.parametrize("way", ["sync", "async"])
async def test_the_budget_spans_every_verifier_of_the_gate(clock: Clock, way: str) -> None:
    """Each verifier is within its own limit, together they are over the budget: the
    one that finished past it halts the crossing, and the next is never run."""
    first = Takes(clock, 6.0, "first")
    second = Takes(clock, 6.0, "second")
    third = Takes(clock, 6.0, "third")
    gate = TrustGate("g", reads="claim", verifiers=[first, second, third], budget=10)
    if way == "sync":
        r = gate.check({"claim": "x"}, node="n")
    else:
        r = await gate.acheck({"claim": "x"}, node="n")
    f = _halt(r)
    assert (f.verifier, f.code) == ("second", "budget_exceeded")
    assert f.message == "verifier 'second' finished after the crossing's budget of 10s ran out"
    assert (first.calls, second.calls, third.calls) == (1, 1, 0)


@pytest.mark.parametrize("way", ["sync", "async"])
async def test_a_retry_is_not_started_once_the_budget_is_spent(clock: Clock, way: str) -> None:
    flaky = Takes(clock, 11.0, "flaky", raises=True)  # retries=1
    gate = TrustGate("g", reads="claim", verifiers=[flaky], budget=10)
    if way == "sync":
        r = gate.check({"claim": "x"}, node="n")
    else:
        r = await gate.acheck({"claim": "x"}, node="n")
    f = _halt(r)
    assert (f.verifier, f.code) == ("flaky", "budget_exceeded")
    assert f.message == "the crossing's budget of 10s ran out before verifier 'flaky' could start"
    assert flaky.calls == 1


def test_a_retry_after_a_run_the_budget_cut_is_not_started(release: threading.Event) -> None:
    hang = Hang(release, retries=1)
    gate = TrustGate("g", reads="claim", verifiers=[hang], budget=BUDGET)
    f = _halt(gate.check({"claim": "x"}, node="n"))
    assert f.code == "budget_exceeded"
    assert hang.calls == 1


class M(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    trust_issues: list[str]


@pytest.mark.parametrize("way", ["sync", "async"])
async def test_a_re_rendered_node_continues_the_budget_of_its_first_attempt(
    clock: Clock, way: str
) -> None:
    """Each attempt's crossing takes 6 of a budget of 10: alone each is within it, but
    the second attempt of the same node run continues the first one's budget."""
    check = Takes(clock, 6.0, "check", fails=True)
    calls: list[int] = []

    def writer(state: M) -> dict[str, Any]:
        calls.append(1)
        return {"messages": [AIMessage("an answer")]}

    g = StateGraph(M)
    g.add_node("writer", writer)
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    gate = TrustGate(
        "g",
        reads=LastAIText(),
        verifiers=[check],
        policy=Rerender(max_attempts=1, then=Halt()),
        budget=10,
    )
    app = trustgate.guard(g, {"writer": gate}).compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": f"budget-{way}"}}
    inputs = {"messages": [HumanMessage("q")]}
    with pytest.raises(GateHalted) as halted:
        if way == "sync":
            app.invoke(inputs, config)
        else:
            await app.ainvoke(inputs, config)
    [f] = halted.value.report.failed
    assert (f.verifier, f.code) == ("check", "budget_exceeded")
    assert len(calls) == 2 and check.calls == 2

    # a new run of the node starts with the whole budget again: its first attempt
    # re-renders (6 of 10) instead of inheriting what the last run spent
    config = {"configurable": {"thread_id": f"budget-{way}-again"}}
    with pytest.raises(GateHalted) as halted:
        if way == "sync":
            app.invoke(inputs, config)
        else:
            await app.ainvoke(inputs, config)
    [f] = halted.value.report.failed
    assert f.code == "budget_exceeded"
    assert len(calls) == 4 and check.calls == 4


# --- the arguments ---------------------------------------------------------------------

BAD_SECONDS = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, 0, 0.0, -1, True, False, "1", "", [1]]),
    st.floats(max_value=0.0, allow_nan=False),
    st.integers(max_value=0),
    st.text(max_size=5),
)
GOOD_SECONDS = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)


def _gate(**kwargs: Any) -> TrustGate:
    return TrustGate("g", reads="claim", verifiers=[FunctionVerifier(quick, name="q")], **kwargs)


@given(bad=BAD_SECONDS)
def test_a_budget_that_is_no_positive_finite_number_is_refused(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="budget must be a positive, finite number"):
        _gate(budget=bad)


@given(good=GOOD_SECONDS, bad=BAD_SECONDS)
def test_budget_and_timeout_are_each_checked_at_construction(good: float, bad: Any) -> None:
    assert _gate(budget=good, timeout=good).budget == float(good)
    with pytest.raises(ConfigurationError, match="timeout must be"):
        _gate(budget=good, timeout=bad)
    with pytest.raises(ConfigurationError, match="budget must be"):
        _gate(budget=bad, timeout=good)


def test_no_budget_is_the_default() -> None:
    gate = _gate()
    assert gate.budget is None
