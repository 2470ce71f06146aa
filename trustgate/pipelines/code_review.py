"""Code review as a LangGraph graph: citations replayed, verdicts overridden.

The flow, one review round at a time::

    setup → pickup → builder → inspector ─[gate: citation replay]→ route ─┐
              ▲                                                          │
              └────────────── REQUEST_CHANGES and rounds left ───────────┘

* ``pickup`` recomputes the changed-file list from git on **every** round and clears
  the previous round's manifest, so nothing about repository state is carried over
  from an earlier round (the stale-manifest bug).
* ``builder`` (a chat model, structured output) writes the changes manifest:
  ``already_correct`` items must cite ``{file, line, content}``; ``changed`` items
  name files that must be in the real diff.
* ``inspector`` (a chat model) gives a verdict on the manifest. The gate in front of
  what it releases replays every citation against the workspace and, when any
  fails, overrides ``APPROVE`` (or "Approve", "LGTM"...) to ``REQUEST_CHANGES`` and
  appends the note *(Overridden: evidence verification failed for already_correct
  claims)*. The model's verdict is advisory; the replay stands.
* The review loops until the verdict is ``APPROVE`` or ``max_rounds`` is reached.

Example:
    ```python
    from trustgate.pipelines import code_review

    graph = code_review.build(personality="inventing")
    out = graph.invoke({}, {"configurable": {"thread_id": "cr-1"}})
    assert out["review"]["verdict"] == "APPROVE" and out["round"] == 2
    ```
"""

from __future__ import annotations

import json
import operator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from trustgate.files import ChangesManifest, CitationReplay, Workspace
from trustgate.gate import EvidenceSources, FromState, TrustGate
from trustgate.graph import TrustReports, guard, reports_from_state
from trustgate.pipelines._common import (
    ModelSpec,
    Personality,
    checkpointer_for,
    load_json,
    make_sample_repository,
    resolve_models,
)
from trustgate.policies import Override
from trustgate.readers import FromKey

if TYPE_CHECKING:
    import os

    from trustgate.persistence import ReportHistory

__all__ = [
    "ROLES",
    "CodeReviewState",
    "InspectorReview",
    "build",
    "builder",
    "sample_inputs",
]

ROLES = ("builder", "inspector")
PIPELINE = "code_review"

REVIEW_NOTE = " (Overridden: evidence verification failed for already_correct claims)"
"""The note the overridden verdict carries: the reviewer's ``already_correct`` claims
failed verification."""


class InspectorReview(BaseModel):
    """The inspector model's verdict (structured output)."""

    verdict: str = Field(description="APPROVE or REQUEST_CHANGES")
    summary: str = ""


class CodeReviewState(TypedDict, total=False):
    repo: str
    """Root of the git repository under review (a sample one is created when absent)."""
    base: str
    """The revision the branch is compared with (default ``HEAD``)."""
    action_items: list[str]
    max_rounds: int
    round: int
    changed_files: list[str]
    """Recomputed from git on every pickup; never carried from an earlier round."""
    manifest: dict[str, Any] | None
    """This round's changes manifest (a ``ChangesManifest`` as JSON)."""
    reviewed_manifest: dict[str, Any] | None
    review: dict[str, Any]
    """The verdict released past the gate: ``{"verdict", "summary"}``."""
    rounds: Annotated[list[dict[str, Any]], operator.add]
    trust_reports: TrustReports


def sample_inputs(dest: str | Path | None = None) -> dict[str, Any]:
    """The bundled review: a sample repository (created now, under ``dest`` or a new
    temporary directory) with the builder's change, and the review's action items."""
    review = load_json(PIPELINE, "review.json")
    change = review["change"]
    root = make_sample_repository(PIPELINE, dest, uncommitted={change["path"]: change["content"]})
    return {"repo": str(root), "action_items": list(review["action_items"])}


def _setup(state: CodeReviewState) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not state.get("repo"):
        out.update(sample_inputs())
    elif not state.get("action_items"):
        out["action_items"] = list(load_json(PIPELINE, "review.json")["action_items"])
    out.setdefault("base", state.get("base") or "HEAD")
    out["max_rounds"] = int(state.get("max_rounds") or 3)
    out["round"] = 0
    return out


def _pickup(state: CodeReviewState) -> dict[str, Any]:
    ws = Workspace(state["repo"])
    return {
        "round": int(state.get("round") or 0) + 1,
        "changed_files": ws.changed_files(state.get("base") or "HEAD"),
        "manifest": None,
        "reviewed_manifest": None,
    }


BUILDER_PROMPT = """You are the builder on a code review. For every action item report
one manifest item. status "changed" lists the files you changed (they must appear in
the diff). status "already_correct" means no change was needed: you MUST cite the
evidence as {"file", "line", "content"} with the exact line content. Reply as JSON:
{"summary": "...", "items": [{"item", "status", "files", "evidence"}]}."""

INSPECTOR_PROMPT = """You are the inspector. Read the builder's changes manifest and
reply as JSON {"verdict": "APPROVE" | "REQUEST_CHANGES", "summary": "..."}."""


def build(
    model: ModelSpec = None,
    *,
    personality: Personality = "inventing",
    checkpointer: BaseCheckpointSaver[Any] | bool | None = None,
    max_rounds: int = 3,
    report_log: ReportHistory | str | os.PathLike[str] | bool | None = None,
) -> Any:
    """Compile the guarded code-review graph.

    ``model``: a chat model, a ``provider:model`` name, a mapping role → model
    (roles ``builder`` and ``inspector``), or ``None`` for ``TRUSTGATE_MODEL`` or
    else the scripted ``personality``. ``checkpointer``: ``None`` for an in-memory
    one, ``False`` for none (the LangGraph server brings its own).
    ``report_log``: the report log the gate writes every crossing into itself
    (``guard(..., report_log=...)``; ``True``: the database ``TRUSTGATE_DATABASE_URL``
    names, as ``graphs/*.py`` do for the agent server).
    """
    models = resolve_models(model, ROLES, _scripted, personality)
    return guard(
        _builder(models["builder"], models["inspector"], max_rounds),
        {"inspector": inspector_gate()},
        report_log=report_log,
    ).compile(checkpointer=checkpointer_for(checkpointer))


def inspector_gate() -> TrustGate:
    """The trust boundary in front of the inspector's verdict."""
    return TrustGate(
        "evidence_replay",
        reads=FromKey("reviewed_manifest", model=ChangesManifest),
        verifiers=[CitationReplay()],
        # the verdict the failed citations stood behind is overridden, and the claims
        # themselves are struck: a failed manifest is not released beside the verdict
        policy=[
            Override(
                "review.verdict", "REQUEST_CHANGES", note_field="review.summary", note=REVIEW_NOTE
            ),
            Override("reviewed_manifest", None),
        ],
        evidence=EvidenceSources(workspace=FromState("repo"), extra={"base": FromState("base")}),
        # the verdict is the inspector's judgment: it stands while the manifest's evidence
        # replays, and is overridden when it does not
        passthrough=["review"],
    )


def builder(
    builder_model: BaseChatModel, inspector_model: BaseChatModel, max_rounds: int = 3
) -> StateGraph[Any, Any, Any, Any]:
    """The unguarded graph (what a team has before trustgate); ``build`` guards it."""
    return _builder(builder_model, inspector_model, max_rounds)


def _builder(
    builder_model: BaseChatModel, inspector_model: BaseChatModel, max_rounds: int
) -> StateGraph[Any, Any, Any, Any]:
    def setup(state: CodeReviewState) -> dict[str, Any]:
        out = _setup(state)
        if not state.get("max_rounds"):
            out["max_rounds"] = max_rounds
        return out

    def build_manifest(state: CodeReviewState) -> dict[str, Any]:
        items = "\n".join(f"- {a}" for a in state.get("action_items") or [])
        changed = "\n".join(f"- {f}" for f in state.get("changed_files") or []) or "(none)"
        prompt = [
            SystemMessage(BUILDER_PROMPT),
            HumanMessage(
                f"Round {state.get('round')}.\nAction items:\n{items}\n\n"
                f"Files that differ from {state.get('base') or 'HEAD'} (from git):\n{changed}"
            ),
        ]
        previous = state.get("review")
        if previous and state.get("round", 1) > 1:
            failed = [str(f) for r in reports_from_state(state)[-1:] for f in r.failed]
            prompt.append(
                HumanMessage(
                    f"Previous verdict: {previous['verdict']}. {previous['summary']}\n"
                    + "\n".join(f"- {f}" for f in failed)
                )
            )
        reply = builder_model.with_structured_output(ChangesManifest, include_raw=True).invoke(
            prompt
        )
        parsed = reply.get("parsed") if isinstance(reply, dict) else reply
        if parsed is None:
            # Unparseable output is kept as it was: the gate reports it as a malformed
            # claim and the verdict is overridden, instead of the run crashing here.
            raw = reply.get("raw") if isinstance(reply, dict) else None
            return {"manifest": {"malformed": getattr(raw, "text", str(raw))}}
        return {"manifest": ChangesManifest.model_validate(parsed).model_dump(mode="json")}

    def inspect(state: CodeReviewState) -> dict[str, Any]:
        manifest = state.get("manifest")
        shown = json.dumps(manifest or {}, indent=2)
        reply = inspector_model.with_structured_output(InspectorReview, include_raw=True).invoke(
            [SystemMessage(INSPECTOR_PROMPT), HumanMessage(f"Manifest:\n{shown}")]
        )
        parsed = reply.get("parsed") if isinstance(reply, dict) else reply
        if parsed is None:  # no verdict is not an approval
            raw = reply.get("raw") if isinstance(reply, dict) else None
            review = InspectorReview(
                verdict="NO_VERDICT", summary=f"unparseable: {getattr(raw, 'text', raw)!s:.200}"
            )
        else:
            review = InspectorReview.model_validate(parsed)
        # The manifest the inspector vouched for travels in the same update: it is
        # what the gate replays (claims come from this step, never older state).
        return {"review": review.model_dump(mode="json"), "reviewed_manifest": manifest}

    def record(state: CodeReviewState) -> dict[str, Any]:
        review = state["review"]
        return {
            "rounds": [
                {
                    "round": state.get("round"),
                    "verdict": review["verdict"],
                    "summary": review["summary"],
                    "changed_files": list(state.get("changed_files") or []),
                }
            ]
        }

    def route(state: CodeReviewState) -> str:
        if state["review"]["verdict"] == "APPROVE":
            return END
        if int(state.get("round") or 0) >= int(state.get("max_rounds") or max_rounds):
            return END
        return "pickup"

    g = StateGraph(CodeReviewState)
    g.add_node("setup", setup)
    g.add_node("pickup", _pickup)
    g.add_node("builder", build_manifest)
    g.add_node("inspector", inspect)
    g.add_node("record", record)
    g.add_edge(START, "setup")
    g.add_edge("setup", "pickup")
    g.add_edge("pickup", "builder")
    g.add_edge("builder", "inspector")
    g.add_edge("inspector", "record")
    g.add_conditional_edges("record", route, ["pickup", END])
    return g


def _scripted(personality: Personality) -> dict[str, BaseChatModel]:
    from trustgate.testing import code_review_models

    return dict(code_review_models(personality))
