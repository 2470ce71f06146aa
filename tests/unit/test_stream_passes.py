"""``guard(..., stream_passes=True)``: a crossing that passed is on the ``custom`` stream.

By default only a gate that acted or halted puts its report there, so a graph whose
gates all pass streams exactly what it streams unguarded; a client that shows every
crossing as it happens (over the agent server's API, say) asks for the passes too.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, TrustGate
from trustgate.errors import ConfigurationError
from trustgate.policies import Override
from trustgate.readers import FromKey
from trustgate.verifiers.base import FunctionVerifier

LIE = "ledger entry ZX-4417"


class S(TypedDict, total=False):
    question: str
    answer: str


def _check(claims: Any, evidence: Any) -> list[Finding]:
    if LIE in str(claims):
        return [Finding.failed("ledger", "unsupported", "names a record no source has")]
    return [Finding.ok("ledger")]


def _agent(state: S) -> dict[str, Any]:
    return {"answer": LIE if state.get("question", "").startswith("override") else "fine"}


def _app(**kw: Any) -> Any:
    builder = StateGraph(S)
    builder.add_node("agent", _agent)
    builder.add_edge(START, "agent")
    gate = TrustGate(
        "facts",
        reads=FromKey("answer"),
        verifiers=[FunctionVerifier(_check, name="ledger")],
        policy=Override("answer", "withheld"),
    )
    return trustgate.guard(builder, {"agent": gate}, **kw).compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize("stream_passes", [False, True])
@pytest.mark.parametrize("run", ["sync", "async"])
async def test_a_passing_crossing_is_on_the_custom_stream_when_asked(
    stream_passes: bool, run: str
) -> None:
    app = _app(stream_passes=stream_passes)
    config = {"configurable": {"thread_id": "s"}}

    async def custom(question: str) -> list[Any]:
        given = {"question": question}
        if run == "sync":
            chunks = list(app.stream(given, config, stream_mode="custom"))
        else:
            chunks = [c async for c in app.astream(given, config, stream_mode="custom")]
        return [c["trustgate"] for c in chunks]

    passed = await custom("pass")
    assert [r.decision for r in passed] == (["pass"] if stream_passes else [])
    assert all(r.claims == [] for r in passed)  # content-free, as every streamed report
    acted = await custom("override")
    assert [r.decision for r in acted] == ["modified"]  # a gate that acted says so either way


def test_stream_passes_must_be_a_flag() -> None:
    with pytest.raises(ConfigurationError, match="stream_passes"):
        _app(stream_passes="yes")
