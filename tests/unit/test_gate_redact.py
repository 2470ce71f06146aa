"""Redact (seed 002) as a gate policy: deleted sentences never reach downstream."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from trustgate import TrustGate
from trustgate.evidence.record import Record
from trustgate.graph import TrustReports, guard
from trustgate.policies import Redact
from trustgate.readers import LastAIText
from trustgate.testing import honest_model, lying_model
from trustgate.verifiers.base import EvidenceSources, FromState

RECORD = Record.from_text(
    "14:02 checkout p99 latency rose to 9.2s\n"
    "14:03 alert CheckoutLatencyHigh fired\n"
    "13:55 deploy 4411 rolled out to checkout\n"
    "14:20 deploy 4411 rolled back\n"
)
INVENTED = (
    "Checkout latency rose to 9.2 seconds at 14:02 [[1]]. "
    "The connection pool was exhausted because the deploy doubled worker concurrency. "
    "This was likely related to the cost review in June. "
    "The deploy was rolled back at 14:20 [[4]]."
)
HONEST = "Checkout latency rose to 9.2 seconds at 14:02 [[1]]. The alert fired at 14:03 [[2]]."


class PM(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    record: Record
    draft: str
    trust_reports: TrustReports


def _app(model: Any, *, field: str | None = None) -> Any:
    def writer(state: PM) -> dict[str, Any]:
        reply = model.invoke(state["messages"])
        return {"messages": [reply], "draft": reply.text}

    gate = TrustGate(
        "postmortem",
        reads=LastAIText(),
        policy=Redact(also=["draft"]),
        evidence=EvidenceSources(record=FromState("record")),
        passthrough=["draft"],  # the same text as the message; redacted with it
    )
    g = StateGraph(PM)
    g.add_node("writer", writer)
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    return guard(g, {"writer": gate}).compile()


def _check_redacted(text: str) -> None:
    assert "exhausted" not in text and "because" not in text
    assert "likely" not in text and "June" not in text
    assert "Open question" in text
    gap_lines = [line for line in text.splitlines() if "Open question" in line]
    for word in ("deploy", "pool", "concurrency", "June"):
        assert all(word not in line for line in gap_lines), (word, gap_lines)
    assert "rose to 9.2 seconds" in text and "rolled back" in text


def test_mutation_invented_cause_and_hedge_deleted_gap_stands() -> None:
    out = _app(lying_model(INVENTED)).invoke(
        {"messages": [HumanMessage("draft the postmortem")], "record": RECORD}
    )
    _check_redacted(out["messages"][-1].content)
    _check_redacted(out["draft"])
    (report,) = out["trust_reports"]
    assert report.decision == "modified" and report.released
    kinds = [o.kind for o in report.overrides]
    assert kinds.count("sentence_delete") == 4  # two sentences, in the message and the field
    assert any("exhausted" in str(o.before) for o in report.overrides)
    assert all(o.after for o in report.overrides if o.kind == "sentence_delete")  # the gap


def test_honest_draft_untouched() -> None:
    out = _app(honest_model(HONEST)).invoke({"messages": [HumanMessage("draft")], "record": RECORD})
    assert out["messages"][-1].content == HONEST
    assert [r.decision for r in out["trust_reports"]] == ["pass"]


def test_invalid_citation_dropped() -> None:
    out = _app(lying_model("Latency rose at 14:02 [[99]].")).invoke(
        {"messages": [HumanMessage("draft")], "record": RECORD}
    )
    assert "[[99]]" not in out["messages"][-1].content
    assert "citation_drop" in [o.kind for o in out["trust_reports"][0].overrides]


def test_no_token_of_a_deleted_sentence_is_streamed() -> None:
    parts = list(
        _app(lying_model(INVENTED)).stream(
            {"messages": [HumanMessage("draft")], "record": RECORD},
            stream_mode=["messages", "updates", "values"],
        )
    )
    streamed = "".join(str(d[0].content) for m, d in parts if m == "messages")
    _check_redacted(streamed)
    for mode, data in parts:
        if mode == "values":
            for m in data.get("messages", []):
                assert "exhausted" not in str(m.content)
