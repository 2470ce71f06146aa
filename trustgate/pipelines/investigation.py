"""Incident investigation as a LangGraph graph: the agent locates, trustgate reads.

The flow::

    setup → investigator ─[gate: acquire + trust bars]→ record → reconcile ─[gate: re-hash]→ END
                              │ unverified-only grounding
                              └─ interrupt: a person approves, edits or rejects

* ``investigator`` (a chat model, structured output) proposes field values, each
  grounded by **locators only**: ``{path, start_line?, end_line?, revision?}`` for
  files, ``{source, uri}`` for external sources. An excerpt written by the agent is
  refused (a locator carries no content).
* The ``grounding`` gate acquires every locator into the artifact ledger (scope
  check, exact bytes, range check, sha256, immutable artifact) and holds each field
  to its trust bar. Evidence that could not be acquired is dropped (``citation_drop``);
  a field left without evidence is removed (``field_override`` to ``None``); a field
  grounded only by unverified evidence goes to a person (``Review``: an interrupt
  with the report as payload; the approval is attributed testimony).
* ``record`` writes the case file: value, artifact ids, verification, approval.
* ``reconcile`` re-reads every verified artifact without any cache; a file that
  changed since acquisition is ``tampered`` and the field it grounded is struck
  from the case (``field_override`` to ``None``).

Example:
    ```python
    from langgraph.types import Command
    from trustgate.pipelines import investigation

    graph = investigation.build(personality="inventing")
    config = {"configurable": {"thread_id": "inv-1"}}
    paused = graph.invoke({}, config)
    assert paused["__interrupt__"][0].value["trustgate"] == "review"
    out = graph.invoke(Command(resume={"type": "approve", "by": "Dana"}), config)
    assert out["case"]["request_timeout_ms"]["approved_by"] == "Dana"
    ```
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from trustgate.files import ArtifactLedger, GroundingCheck, InMemoryLedger, Workspace
from trustgate.gate import (
    Evidence,
    EvidenceSources,
    Finding,
    FromState,
    FunctionVerifier,
    Strike,
    TrustGate,
)
from trustgate.graph import TrustReports, guard, reports_from_state
from trustgate.pipelines._common import (
    ModelSpec,
    Personality,
    checkpointer_for,
    load_json,
    make_sample_repository,
    resolve_models,
)
from trustgate.policies import CrossingView, OverrideRecord, Release, Review, SetPath
from trustgate.readers import FromKey

if TYPE_CHECKING:
    import os

    from trustgate.persistence import ReportHistory

__all__ = [
    "ROLES",
    "DropUngrounded",
    "InvestigationState",
    "ScopedGrounding",
    "build",
    "grounding_gate",
    "reconcile_gate",
    "sample_inputs",
]

ROLES = ("investigator",)
PIPELINE = "investigation"


class InvestigationState(TypedDict, total=False):
    repo: str
    """Root of the repository under investigation (a sample one is created when absent)."""
    question: str
    scopes: list[str]
    """Paths the case may inspect; anything else is refused at acquisition."""
    bars: dict[str, str]
    """Per-field trust bar: ``verified``, ``unverified`` (any known evidence) or ``none``."""
    proposal: dict[str, Any]
    """The investigator's proposal: field → ``{"value", "evidence": [locator, ...]}``."""
    case: dict[str, Any]
    """The case file: field → ``{"value", "artifacts", "verification", "approved_by"}``."""
    reconciliation: dict[str, Any]
    trust_reports: TrustReports


def sample_inputs(dest: str | Path | None = None) -> dict[str, Any]:
    """The bundled case: a sample repository (created now, under ``dest`` or a new
    temporary directory), its question, scopes and trust bars."""
    case = load_json(PIPELINE, "case.json")
    root = make_sample_repository(PIPELINE, dest)
    return {
        "repo": str(root),
        "question": case["question"],
        "scopes": list(case["scopes"]),
        "bars": dict(case["fields"]),
    }


INVESTIGATOR_PROMPT = """You are an investigator. Propose a value for each field the
question needs, grounded ONLY by locators: {"path", "start_line", "end_line"} for a file
of the repository, or {"source", "uri"} for an external source. Never quote the
content: trustgate reads it. Reply as JSON: {"<field>": {"value": ..., "evidence": [...]}}."""


class DropUngrounded:
    """Strip what could not be grounded from a proposal, before anything downstream reads it.

    The verifiers say what must go (a :class:`~trustgate.files.Strike` proposal, a path
    into the proposal); this policy knows no finding codes:

    * an evidence entry (``[field, "evidence", i]``: out of scope, out of range,
      missing, malformed, an agent-written excerpt) is dropped from the field's
      evidence list (``citation_drop``);
    * a field (``[field]``: nothing that grounds it could be acquired, or its evidence
      changed since acquisition) is removed (``field_override`` to ``None``).

    A failure that names nothing to strike (``unverified_evidence``) is left for the
    next policy (``Review``).
    """

    def __init__(self, key: str = "proposal") -> None:
        self.key = key

    def decide(self, crossing: CrossingView) -> Release | None:
        current = crossing.get(self.key)
        if not isinstance(current, Mapping):
            return None
        proposal: dict[str, Any] = {k: _copy_field(v) for k, v in current.items()}
        handled: list[Finding] = []
        fields: list[tuple[str, Finding]] = []
        records: list[OverrideRecord] = []
        for f in crossing.unresolved:
            strikes = [p.path for p in f.proposals if isinstance(p, Strike)]
            path = strikes[0] if strikes else None
            if not path or path[0] not in proposal:
                continue
            name = str(path[0])
            if len(path) == 1:
                fields.append((name, f))
                continue
            entries = _at(proposal[name], path[1:-1])
            index = path[-1]
            if isinstance(entries, list) and isinstance(index, int) and 0 <= index < len(entries):
                where = ".".join(str(p) for p in path[1:-1])
                records.append(
                    OverrideRecord(
                        kind="citation_drop",
                        target=f"{self.key}.{name}.{where}[{index}]",
                        before=entries[index],
                        after=None,
                        reason=f"{f.verifier}/{f.code}: {f.message}",
                        verifier=f.verifier,
                    )
                )
                entries[index] = _DROPPED
            handled.append(f)
        for field in proposal.values():
            if isinstance(field, dict) and isinstance(field.get("evidence"), list):
                field["evidence"] = [e for e in field["evidence"] if e is not _DROPPED]
        for name, f in fields:
            if name in proposal:
                records.append(
                    OverrideRecord(
                        kind="field_override",
                        target=f"{self.key}.{name}",
                        before=proposal.pop(name),
                        after=None,
                        reason=f"{f.verifier}/{f.code}: {f.message}",
                        verifier=f.verifier,
                    )
                )
            handled.append(f)
        if not handled:
            return None
        return Release((SetPath(self.key, proposal),), tuple(handled), "modified", tuple(records))


_DROPPED = object()


def _at(value: Any, path: Any) -> Any:
    """The container at ``path`` inside ``value`` (``None`` when it is not there)."""
    for key in path:
        if isinstance(value, Mapping):
            value = value.get(key)
        elif isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value):
            value = value[key]
        else:
            return None
    return value


def _copy_field(value: Any) -> Any:
    if isinstance(value, Mapping):
        out = dict(value)
        if isinstance(out.get("evidence"), list):
            out["evidence"] = list(out["evidence"])
        return out
    return value


class ScopedGrounding(GroundingCheck):
    """``GroundingCheck`` on a workspace limited to the case's scopes (from state)."""

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        root = evidence.require("workspace")
        scopes = evidence.get("scopes")
        ws = root if isinstance(root, Workspace) else Workspace(root, scopes=scopes or None)
        bars = evidence.get("bars")
        inner = GroundingCheck(
            dict(bars) if isinstance(bars, Mapping) else self.bars,
            default=self.default,
            name=self.name,
            connectors=self.connectors,
        )
        return inner.verify(claims, dataclasses.replace(evidence, workspace=ws))


def grounding_gate(ledger: ArtifactLedger) -> TrustGate:
    """Acquire the proposal's locators into ``ledger``; trust bars; review the unverified."""
    return TrustGate(
        "grounding",
        reads=FromKey("proposal"),
        verifiers=[ScopedGrounding(default="verified")],
        policy=[DropUngrounded(), Review(allowed=("approve", "edit", "reject"))],
        evidence=EvidenceSources(
            workspace=FromState("repo"),
            ledger=ledger,
            extra={"scopes": FromState("scopes"), "bars": FromState("bars")},
        ),
    )


def _reverify(claims: Any, evidence: Evidence) -> list[Finding]:
    ledger: ArtifactLedger = evidence.require("ledger")
    root = evidence.require("workspace")
    ws = root if isinstance(root, Workspace) else Workspace(root)
    out: list[Finding] = []
    for field, entry in sorted((claims or {}).items()):
        ids = list((entry or {}).get("artifacts") or [])
        verified = [i for i in ids if ledger.verification(i) in ("verified", "tampered")]
        changed = []
        for artifact_id in verified:
            finding = ledger.reverify(artifact_id, ws)
            if not finding.passed:  # changed source, edited row, unreadable: all strike
                changed.append(finding.message)
        if changed:
            out.append(
                Finding.failed(
                    "reverify",
                    "tampered",
                    "; ".join(changed),
                    subject=field,
                    detail={"artifacts": verified},
                    proposals=[Strike(path=(field,))],  # struck from the case
                )
            )
        else:
            out.append(
                Finding.ok(
                    "reverify",
                    f"{len(verified)} verified artifact(s) unchanged"
                    if verified
                    else "no verified artifact to re-read (approved testimony)",
                    subject=field,
                )
            )
    return out or [Finding.ok("reverify", "nothing recorded to reconcile")]


def reconcile_gate(ledger: ArtifactLedger) -> TrustGate:
    """Re-read every verified artifact of the case; strike fields whose files changed."""
    return TrustGate(
        "reverification",
        reads=FromKey("reconciliation"),
        verifiers=[FunctionVerifier(_reverify, name="reverify", timeout=60.0)],
        policy=[DropUngrounded("reconciliation")],
        evidence=EvidenceSources(workspace=FromState("repo"), ledger=ledger),
        require_claims=False,
    )


def build(
    model: ModelSpec = None,
    *,
    personality: Personality = "inventing",
    checkpointer: BaseCheckpointSaver[Any] | bool | None = None,
    ledger: ArtifactLedger | None = None,
    pause_before_reconcile: bool = False,
    report_log: ReportHistory | str | os.PathLike[str] | bool | None = None,
) -> Any:
    """Compile the guarded investigation graph.

    ``ledger`` holds the frozen artifacts (in memory by default; pass a
    ``SqliteLedger`` to keep them). ``pause_before_reconcile`` adds an interrupt
    before the reconciliation, the moment a demo uses to change a file under the
    case. The grounding gate's review is an interrupt, so a checkpointer is needed
    (in-memory by default).

    ``report_log``: the report log the gate writes every crossing into itself
    (``guard(..., report_log=...)``; ``True``: the database ``TRUSTGATE_DATABASE_URL``
    names, as ``graphs/*.py`` do for the agent server).
    """
    models = resolve_models(model, ROLES, _scripted, personality)
    held = ledger if ledger is not None else InMemoryLedger()
    guarded = guard(
        _builder(models["investigator"]),
        {"investigator": grounding_gate(held), "reconcile": reconcile_gate(held)},
        report_log=report_log,
    )
    return guarded.compile(
        checkpointer=checkpointer_for(checkpointer),
        interrupt_before=["reconcile"] if pause_before_reconcile else None,
    )


def _builder(investigator_model: BaseChatModel) -> StateGraph[Any, Any, Any, Any]:
    def setup(state: InvestigationState) -> dict[str, Any]:
        if state.get("repo"):
            case = load_json(PIPELINE, "case.json")
            return {
                "question": state.get("question") or case["question"],
                "scopes": list(state.get("scopes") or case["scopes"]),
                "bars": dict(state.get("bars") or case["fields"]),
            }
        return sample_inputs()

    def investigate(state: InvestigationState) -> dict[str, Any]:
        bars = state.get("bars") or {}
        prompt = [
            SystemMessage(INVESTIGATOR_PROMPT),
            HumanMessage(
                f"Question: {state.get('question')}\nFields: {', '.join(bars)}\n"
                f"Repository paths you may cite: {', '.join(state.get('scopes') or [])}"
            ),
        ]
        raw = investigator_model.invoke(prompt)
        try:
            proposal = json.loads(_strip_fence(raw.text))
        except ValueError:
            proposal = raw.text  # the gate reports it as a malformed claim
        return {"proposal": proposal}

    def record(state: InvestigationState) -> dict[str, Any]:
        proposal = state.get("proposal") or {}
        report = next(r for r in reversed(reports_from_state(state)) if r.gate == "grounding")
        ids: dict[str, list[str]] = {}
        status: dict[str, list[str]] = {}
        for f in report.findings:
            field = f.detail.get("field")
            if f.passed and isinstance(field, str) and "artifact_id" in f.detail:
                ids.setdefault(field, []).append(str(f.detail["artifact_id"]))
                status.setdefault(field, []).append(str(f.detail.get("verification")))
        approved_by = report.approval.who if report.approval is not None else None
        case: dict[str, Any] = {}
        for field, entry in proposal.items():
            verification = "verified" if "verified" in status.get(field, []) else "unverified"
            case[field] = {
                "value": entry.get("value") if isinstance(entry, Mapping) else entry,
                "artifacts": ids.get(field, []),
                "verification": verification,
                "approved_by": approved_by if verification != "verified" else None,
            }
        return {"case": case}

    def reconcile(state: InvestigationState) -> dict[str, Any]:
        case = state.get("case") or {}
        return {"reconciliation": {k: dict(v) for k, v in case.items()}}

    def close(state: InvestigationState) -> dict[str, Any]:
        kept = state.get("reconciliation") or {}
        case = {k: v for k, v in (state.get("case") or {}).items() if k in kept}
        return {"case": case}

    g = StateGraph(InvestigationState)
    g.add_node("setup", setup)
    g.add_node("investigator", investigate)
    g.add_node("record", record)
    g.add_node("reconcile", reconcile)
    g.add_node("close", close)
    g.add_edge(START, "setup")
    g.add_edge("setup", "investigator")
    g.add_edge("investigator", "record")
    g.add_edge("record", "reconcile")
    g.add_edge("reconcile", "close")
    g.add_edge("close", END)
    return g


def _strip_fence(text: str) -> str:
    t = text.strip()
    if t.startswith("```"):
        t = t.split("\n", 1)[1] if "\n" in t else ""
        t = t.rsplit("```", 1)[0]
    return t


def _scripted(personality: Personality) -> dict[str, BaseChatModel]:
    from trustgate.testing import investigation_models

    return dict(investigation_models(personality))
