"""Shared graphs for the gate tests: the seed-000 reviewer and its inspector gate."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel
from typing_extensions import TypedDict

from trustgate._findings import Finding
from trustgate._gate import TrustGate
from trustgate._report import TrustReports
from trustgate.policies import Override
from trustgate.readers import FromKey
from trustgate.verifiers.base import Evidence, FunctionVerifier

__all__ = [
    "LIE",
    "REPLAY",
    "TRUTH",
    "FanState",
    "Review",
    "State",
    "cfg",
    "inspector",
    "reviewer_graph",
]


class Review(BaseModel):
    verdict: str
    summary: str = ""
    cites: list[str] = []


class State(TypedDict, total=False):
    review: Review
    log: Annotated[list[str], operator.add]
    rounds: int
    trust_reports: TrustReports


def _replay(claims: Any, evidence: Evidence) -> list[Finding]:
    files: dict[str, str] = evidence.get("files", {"a.py": "def f(): return 1"})
    out = []
    for c in claims.cites:
        path, _, content = c.partition(":")
        if content and content in files.get(path, ""):
            out.append(Finding.ok("replay", subject=c))
        else:
            out.append(Finding.failed("replay", "content_mismatch", f"{c} not found", subject=c))
    return out or [Finding.failed("replay", "no_evidence", "no citations")]


REPLAY = FunctionVerifier(_replay, name="replay")


def inspector(policy: Any = None, passthrough: tuple[str, ...] = ("log",)) -> TrustGate:
    """The inspector gate: replays the review's citations; the reviewer's log line is
    declared passthrough (it carries no claim)."""
    return TrustGate(
        "inspector",
        reads=FromKey("review", model=Review),
        verifiers=[REPLAY],
        policy=policy or Override("review.verdict", "REQUEST_CHANGES", note_field="review.summary"),
        passthrough=passthrough,
    )


def reviewer_graph(model: Any, calls: list[str] | None = None) -> StateGraph[Any, Any, Any, Any]:
    """reviewer (LLM, structured output) → publish, the seed-000 shape."""

    def reviewer(state: State) -> dict[str, Any]:
        review = model.with_structured_output(Review).invoke("review the PR")
        if calls is not None:
            calls.append("reviewer")
        return {"review": review, "log": ["reviewer"]}

    def publish(state: State) -> dict[str, Any]:
        return {"log": [f"publish:{state['review'].verdict}"]}

    g = StateGraph(State)
    g.add_node("reviewer", reviewer)
    g.add_node("publish", publish)
    g.add_edge(START, "reviewer")
    g.add_edge("reviewer", "publish")
    g.add_edge("publish", END)
    return g


LIE = {"verdict": "APPROVE", "summary": "Already correct.", "cites": ["a.py:return 42"]}
TRUTH = {"verdict": "APPROVE", "summary": "Already correct.", "cites": ["a.py:return 1"]}


def cfg(thread: str = "t") -> Any:
    return {"configurable": {"thread_id": thread}}


class FanState(TypedDict, total=False):
    reviews: Annotated[list[Review], operator.add]
    trust_reports: TrustReports
