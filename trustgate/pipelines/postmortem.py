"""A postmortem as a LangGraph graph: delete what cannot be cited, ask about the gaps.

The flow::

    ingest → drafter ─[gate: Redact]→ ask (interrupt when gaps) → publish → END

* ``ingest`` numbers the pasted record's lines 1..n, as an editor shows them.
* ``drafter`` (a chat model) writes the postmortem citing record lines as ``[[12]]``.
* The ``record_citations`` gate runs the draft verifier: a causal sentence without a
  valid citation is deleted, a hedged sentence is deleted even when cited, a citation
  to a line that does not exist is dropped, plain facts survive uncited. Deleted,
  never flagged; a gap question (which never suggests the answer) stands in the hole.
* ``ask`` interrupts with the open gaps when there are any; resume with
  ``{"answers": {"gap-1": "..."}, "by": "Dana (SRE)"}``. Each answer replaces its gap
  as attributed testimony ("Per Dana (SRE) (not in the record): ..."), never as a
  cited fact; unanswered gaps stay open questions.
* ``publish`` writes the final Markdown document.

Example:
    ```python
    from langgraph.types import Command
    from trustgate.pipelines import postmortem

    graph = postmortem.build(personality="inventing")
    config = {"configurable": {"thread_id": "pm-1"}}
    paused = graph.invoke({}, config)
    gaps = paused["__interrupt__"][0].value["gaps"]
    out = graph.invoke(
        Command(resume={"answers": {gaps[0]["id"]: "A config push."}, "by": "Dana"}), config
    )
    assert "Per Dana (not in the record): A config push." in out["markdown"]
    assert "because" not in out["markdown"]
    ```
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict

from trustgate.drafts import GAP_LABEL, Record, testimony_text
from trustgate.gate import EvidenceSources, FromState, TrustGate
from trustgate.graph import TrustReports, guard
from trustgate.pipelines._common import (
    ModelSpec,
    Personality,
    checkpointer_for,
    load_text,
    resolve_models,
)
from trustgate.policies import Redact
from trustgate.readers import FromKey

if TYPE_CHECKING:
    import os

    from trustgate.persistence import ReportHistory

__all__ = ["ROLES", "PostmortemState", "build", "find_gaps", "redact_gate", "sample_inputs"]

ROLES = ("drafter",)
PIPELINE = "postmortem"


class PostmortemState(TypedDict, total=False):
    record_text: str
    """The pasted record (Slack export, alert log, email thread)."""
    record: dict[str, str]
    """Line id → text, numbered by ``ingest``."""
    draft: str
    """The draft released past the gate (deleted sentences gone, gaps in place)."""
    gaps: list[dict[str, str]]
    testimony: list[dict[str, str]]
    markdown: str
    trust_reports: TrustReports


def sample_inputs() -> dict[str, Any]:
    """The bundled incident record (observations only: no line states a cause)."""
    return {"record_text": load_text(PIPELINE, "record.txt")}


DRAFTER_PROMPT = """You write incident postmortems from the pasted record only. Cite
every claim to the record line it comes from with markers like [[3]] (the numbers in
front of the lines). Never guess a cause the record does not state. Reply in Markdown."""

_GAP = re.compile(re.escape(GAP_LABEL) + r" (?P<question>[^\n]+)")


def find_gaps(text: str) -> list[dict[str, str]]:
    """The open gaps of a redacted draft, in order: ``[{"id", "question"}]``."""
    return [
        {"id": f"gap-{i}", "question": m["question"]}
        for i, m in enumerate(_GAP.finditer(text), start=1)
    ]


def _answer(text: str, gap_id: str, answer: str, author: str) -> tuple[str, str] | None:
    for i, m in enumerate(_GAP.finditer(text), start=1):
        if f"gap-{i}" == gap_id:
            statement = testimony_text(author, answer)
            return text[: m.start()] + statement + text[m.end() :], statement
    return None


def redact_gate() -> TrustGate:
    """The trust boundary on the draft: delete what the record cannot back."""
    return TrustGate(
        "record_citations",
        reads=FromKey("draft"),
        verifiers=[],
        policy=Redact(field="draft"),
        evidence=EvidenceSources(record=FromState("record")),
    )


def build(
    model: ModelSpec = None,
    *,
    personality: Personality = "inventing",
    checkpointer: BaseCheckpointSaver[Any] | bool | None = None,
    report_log: ReportHistory | str | os.PathLike[str] | bool | None = None,
) -> Any:
    """Compile the guarded postmortem graph (interrupts for gaps need a checkpointer).

    ``report_log``: the report log the gate writes every crossing into itself
    (``guard(..., report_log=...)``; ``True``: the database ``TRUSTGATE_DATABASE_URL``
    names, as ``graphs/*.py`` do for the agent server).
    """
    models = resolve_models(model, ROLES, _scripted, personality)
    return guard(
        _builder(models["drafter"]), {"drafter": redact_gate()}, report_log=report_log
    ).compile(checkpointer=checkpointer_for(checkpointer))


def _builder(drafter_model: BaseChatModel) -> StateGraph[Any, Any, Any, Any]:
    def ingest(state: PostmortemState) -> dict[str, Any]:
        text = state.get("record_text") or load_text(PIPELINE, "record.txt")
        return {"record_text": text, "record": dict(Record.from_text(text).lines)}

    def draft(state: PostmortemState) -> dict[str, Any]:
        numbered = "\n".join(f"{k}: {v}" for k, v in (state.get("record") or {}).items())
        reply = drafter_model.invoke(
            [SystemMessage(DRAFTER_PROMPT), HumanMessage(f"The record:\n{numbered}")]
        )
        return {"draft": reply.text}

    def ask(state: PostmortemState) -> dict[str, Any]:
        text = state.get("draft") or ""
        gaps = find_gaps(text)
        if not gaps:
            return {"gaps": [], "testimony": []}
        reply = interrupt(
            {
                "trustgate": "gaps",
                "question": "The record does not answer these. Answer what you know; "
                "your answers go in attributed to you, not as record citations.",
                "gaps": gaps,
                "draft": text,
            }
        )
        answers: Mapping[str, Any] = {}
        author = ""
        if isinstance(reply, Mapping):
            answers = reply.get("answers") or {}
            author = str(reply.get("by") or "").strip()
        testimony: list[dict[str, str]] = []
        for gap_id, answer in answers.items():
            if not isinstance(answer, str) or not answer.strip() or not author:
                continue  # an unattributed answer is not used: the gap stays open
            done = _answer(text, str(gap_id), answer, author)
            if done is not None:
                text, statement = done
                testimony.append({"gap": str(gap_id), "by": author, "text": statement})
        return {"draft": text, "gaps": find_gaps(text), "testimony": testimony}

    def publish(state: PostmortemState) -> dict[str, Any]:
        body = (state.get("draft") or "").rstrip() + "\n"
        notes = []
        if state.get("gaps"):
            notes.append(f"{len(state['gaps'])} open question(s) remain unanswered.")
        if state.get("testimony"):
            who = sorted({t["by"] for t in state["testimony"]})
            notes.append(
                f"Statements marked 'not in the record' are testimony by {', '.join(who)}."
            )
        footer = "\n---\n" + "\n".join(f"*{n}*" for n in notes) + "\n" if notes else ""
        return {"markdown": body + footer}

    g = StateGraph(PostmortemState)
    g.add_node("ingest", ingest)
    g.add_node("drafter", draft)
    g.add_node("ask", ask)
    g.add_node("publish", publish)
    g.add_edge(START, "ingest")
    g.add_edge("ingest", "drafter")
    g.add_edge("drafter", "ask")
    g.add_edge("ask", "publish")
    g.add_edge("publish", END)
    return g


def _scripted(personality: Personality) -> dict[str, BaseChatModel]:
    from trustgate.testing import postmortem_models

    return dict(postmortem_models(personality))
