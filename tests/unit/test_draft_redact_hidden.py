"""A cause the reader is shown does not survive Redact, wherever the draft hides it.

A cause inside quotation marks, in a Markdown link title, in a reference definition's
title or in an HTML ``title=`` attribute is still shown to whoever reads the draft.
Each example of the ``cause-in-quotes`` construction
(trustgate/verifiers/drafts/lexicon/constructions.txt) is the output of a guarded
node here; after the Redact gate, its cause appears in no message and no state key.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from trustgate import TrustGate
from trustgate.evidence.record import Record
from trustgate.graph import TrustReports, guard
from trustgate.policies import Redact
from trustgate.readers import LastAIText
from trustgate.testing import lying_model
from trustgate.verifiers.base import EvidenceSources, FromState
from trustgate.verifiers.drafts._grammar.data import constructions

RECORD = Record.from_text("14:02 checkout p99 latency rose to 9.2s\n14:20 deploy rolled back\n")
HIDDEN = [d for name, sign, d in constructions() if name == "cause-in-quotes" and sign == "+"]


class PM(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    record: Record
    draft: str
    trust_reports: TrustReports


def _app(model: Any) -> Any:
    def writer(state: PM) -> dict[str, Any]:
        reply = model.invoke(state["messages"])
        return {"messages": [reply], "draft": reply.text}

    gate = TrustGate(
        "postmortem",
        reads=LastAIText(),
        policy=Redact(also=["draft"]),
        evidence=EvidenceSources(record=FromState("record")),
        passthrough=["draft"],
    )
    g = StateGraph(PM)
    g.add_node("writer", writer)
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    return guard(g, {"writer": gate}).compile()


def test_there_are_hidden_causes_to_check() -> None:
    assert len(HIDDEN) >= 5


@pytest.mark.parametrize("hidden", HIDDEN, ids=lambda v: v[:40])
def test_a_hidden_cause_does_not_survive_redact(hidden: str) -> None:
    draft = f"Checkout latency rose to 9.2 seconds at 14:02 [[1]].\n\n{hidden}\n"
    out = _app(lying_model(draft)).invoke(
        {"messages": [HumanMessage("draft the postmortem")], "record": RECORD}
    )
    for text in (out["messages"][-1].content, out["draft"]):
        assert "because" not in text, text
        assert "the disk filled" not in text, text
        assert "rose to 9.2 seconds" in text  # the cited sentence stands
