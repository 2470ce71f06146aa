"""A user's own mutation test, written with the trustgate pytest plugin.

Installing trustgate registers the plugin (``pytest11``), so these fixtures need no
import and no conftest: run ``pytest examples/test_my_gate.py``. The graph is a user's
one-node drafting agent; the test proves its gate deletes an invented cause.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

import trustgate
from trustgate.testing import LieCheck, ScriptedChatModel

RECORD = {"1": "14:02 checkout p99 latency 9.2s", "2": "14:09 rollback of deploy 4411"}


class State(TypedDict, total=False):
    record: dict[str, str]
    summary: str


def build(model: Any) -> Any:
    def writer(state: State) -> dict[str, Any]:
        return {"summary": model.invoke("Summarise the incident.").text}

    builder = StateGraph(State)
    builder.add_node("writer", writer)
    builder.add_edge(START, "writer")
    gate = trustgate.TrustGate(
        "citations",
        reads="summary",
        policy=trustgate.Redact(field="summary"),
        evidence=trustgate.EvidenceSources(record=trustgate.FromState("record")),
    )
    return trustgate.guard(builder, {"writer": gate}).compile(checkpointer=InMemorySaver())


def test_invented_cause_never_reaches_state(
    trustgate_lying_model: Callable[..., ScriptedChatModel],
    trustgate_assert_lie_blocked: Callable[..., LieCheck],
) -> None:
    liar = trustgate_lying_model(
        "Latency rose to 9.2 seconds at 14:02. [[1]] The deploy overloaded the database."
    )
    check = trustgate_assert_lie_blocked(
        build(liar), {"record": RECORD}, ["overloaded the database"]
    )
    assert [o.kind for o in check.overrides] == ["sentence_delete"]


def test_honest_summary_passes(trustgate_honest_model: Callable[..., ScriptedChatModel]) -> None:
    app = build(trustgate_honest_model("Latency rose to 9.2 seconds at 14:02. [[1]]"))
    config = {"configurable": {"thread_id": "honest"}}
    out = app.invoke({"record": RECORD}, config)
    assert out["summary"] == "Latency rose to 9.2 seconds at 14:02. [[1]]"
    assert [r.decision for r in trustgate.reports(app, config)] == ["pass"]
