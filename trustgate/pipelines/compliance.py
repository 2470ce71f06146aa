"""Compliance drafting as a LangGraph graph: a closed list beats a model's pass.

The flow, one planned step at a time::

    planner → executor ─[gate: closed list, integrity, blind verifier]→ release ─┐
                ▲   └──── re-render once with the issues ◄──┘                    │
                └──────────────────────── next step ◄────────────────────────────┘
                                                           (last step) → assemble → END

* ``planner`` (a chat model, structured output) writes the reasoning brief (the
  closed list of approved citations, and judgments) and the steps.
* ``executor`` (a chat model) renders one step against the brief. It sees the whole
  context: task, brief, approved evidence, and on a re-render every issue.
* The ``blind_verifier`` gate checks each draft before it is released:
  the brief's closed citation list (deterministic: an invented or altered citation
  fails, absence never does), URL and price integrity against the approved
  evidence set on steps that did research (deterministic), and a **blind verifier
  model** that sees only the brief and the draft and must answer one strict JSON
  verdict ``{"pass": bool, "issues": [...]}``. A deterministic failure overrides the
  model's pass. A failure sends the step back exactly once with the issue list;
  a second failure releases it with a visible caveat block, with what a
  deterministic check proved false cut out. A verifier outage or an unparseable
  verdict gets one retry, then the run halts (``GateHalted``) and the in-flight
  step is never released.

Example:
    ```python
    import pytest
    from trustgate import GateHalted
    from trustgate.pipelines import compliance

    graph = compliance.build(personality="inventing")
    config = {"configurable": {"thread_id": "c-1"}}
    with pytest.raises(GateHalted):  # the verifier's prose verdict on step 3
        graph.invoke({}, config)
    sections = graph.get_state(config).values["sections"]
    assert [s["caveat"] for s in sections] == [True, False]
    ```
"""

from __future__ import annotations

import json
import operator
from typing import TYPE_CHECKING, Annotated, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from trustgate.contracts import Brief, EvidenceSet, check_citations, check_integrity
from trustgate.gate import (
    Evidence,
    EvidenceSources,
    Finding,
    FromState,
    FunctionVerifier,
    ModelVerifier,
    TrustGate,
)
from trustgate.graph import TrustReports, guard, reports_from_state
from trustgate.pipelines._common import (
    ModelSpec,
    Personality,
    checkpointer_for,
    load_json,
    resolve_models,
)
from trustgate.policies import Caveat, Rerender
from trustgate.readers import FromKey

if TYPE_CHECKING:
    import os

    from trustgate.persistence import ReportHistory

__all__ = [
    "ROLES",
    "ComplianceState",
    "Plan",
    "PlanStep",
    "blind_gate",
    "build",
    "sample_inputs",
]

ROLES = ("planner", "executor", "verifier")
PIPELINE = "compliance"
REVISE_MARK = "ISSUES TO FIX:"


class PlanStep(BaseModel):
    title: str
    spec: str = ""
    research: bool = Field(False, description="the step uses web research (URLs, prices)")


class Plan(BaseModel):
    """The planner's structured output: the brief and the steps."""

    brief: Brief
    steps: list[PlanStep]


class ComplianceState(TypedDict, total=False):
    task: str
    brief: dict[str, Any]
    """The reasoning brief (``Brief`` as JSON): the closed citation list and judgments."""
    evidence: dict[str, Any]
    """The approved evidence set (``EvidenceSet`` as JSON) of the run's research."""
    plan: list[dict[str, Any]]
    step_index: int
    draft: str
    trust_issues: list[str]
    sections: Annotated[list[dict[str, Any]], operator.add]
    document: str
    trust_reports: TrustReports


def sample_inputs() -> dict[str, Any]:
    """The bundled task and the approved evidence set of its research."""
    plan = load_json(PIPELINE, "plan.json")
    return {"task": plan["task"], "evidence": load_json(PIPELINE, "evidence.json")}


PLANNER_PROMPT = """You plan a compliance document. Write the reasoning brief (the
closed list of framework citations the document may use, with their approved wording,
and the decided judgments) and the steps. Reply as JSON:
{"brief": {"citations": [{"id", "text"}], "judgments": [...]},
 "steps": [{"title", "spec", "research"}]}."""

EXECUTOR_PROMPT = """You render one step of a compliance document. Reproduce the brief's
citations exactly as written; never drop, alter or invent framework citations. On steps
that did research, quote only URLs and prices from the approved evidence."""


def _contract(claims: Any, evidence: Evidence) -> list[Finding]:
    return check_citations(str(claims), evidence.require("brief"))


def _integrity(claims: Any, evidence: Evidence) -> list[Finding]:
    plan = evidence.get("plan") or []
    index = int(evidence.get("step_index") or 0)
    step = plan[index] if 0 <= index < len(plan) else {}
    if not step.get("research"):
        return [Finding.ok("integrity", "no research in this step: nothing to check")]
    approved = evidence.get("evidence_set")
    if approved is None:
        return [
            Finding.failed(
                "integrity", "no_source", "a research step needs the approved evidence set"
            )
        ]
    return check_integrity(str(claims), approved)


def blind_gate(verifier_model: BaseChatModel, *, timeout: float | None = 60.0) -> TrustGate:
    """Closed-list citations, URL/price integrity, then the blind model verifier."""
    return TrustGate(
        "blind_verifier",
        reads=FromKey("draft"),
        verifiers=[
            FunctionVerifier(_contract, name="closed_list", timeout=30.0),
            FunctionVerifier(_integrity, name="integrity", timeout=30.0),
            ModelVerifier(verifier_model, timeout=timeout, retries=1),
        ],
        policy=Rerender(to="executor", max_attempts=1, then=Caveat(field="draft")),
        # the planner's brief, plan and approved evidence are the contract the executor is
        # held to: decided before the executor runs, by another model's role (the
        # verifier treats the brief as decided truth by design), hence trusted
        evidence=EvidenceSources(
            brief=FromState("brief", trusted=True),
            evidence_set=FromState("evidence", trusted=True),
            extra={
                "plan": FromState("plan", trusted=True),
                "step_index": FromState("step_index", trusted=True),
            },
        ),
    )


def build(
    model: ModelSpec = None,
    *,
    personality: Personality = "inventing",
    checkpointer: BaseCheckpointSaver[Any] | bool | None = None,
    verifier_timeout: float | None = 60.0,
    report_log: ReportHistory | str | os.PathLike[str] | bool | None = None,
) -> Any:
    """Compile the guarded compliance graph (roles: planner, executor, verifier).

    ``report_log``: the report log the gate writes every crossing into itself
    (``guard(..., report_log=...)``; ``True``: the database ``TRUSTGATE_DATABASE_URL``
    names, as ``graphs/*.py`` do for the agent server).
    """
    models = resolve_models(model, ROLES, _scripted, personality)
    gate = blind_gate(models["verifier"], timeout=verifier_timeout)
    return guard(
        _builder(models["planner"], models["executor"]), {"executor": gate}, report_log=report_log
    ).compile(checkpointer=checkpointer_for(checkpointer))


def _builder(
    planner_model: BaseChatModel, executor_model: BaseChatModel
) -> StateGraph[Any, Any, Any, Any]:
    def plan(state: ComplianceState) -> dict[str, Any]:
        task = state.get("task") or load_json(PIPELINE, "plan.json")["task"]
        raw = planner_model.with_structured_output(Plan).invoke(
            [SystemMessage(PLANNER_PROMPT), HumanMessage(f"Task: {task}")]
        )
        planned = Plan.model_validate(raw)
        evidence = state.get("evidence")
        if evidence is None:
            evidence = load_json(PIPELINE, "evidence.json")
        return {
            "task": task,
            "brief": planned.brief.model_dump(mode="json"),
            "plan": [s.model_dump(mode="json") for s in planned.steps],
            "evidence": EvidenceSet.model_validate(evidence).model_dump(mode="json"),
            "step_index": 0,
            "trust_issues": [],
        }

    def execute(state: ComplianceState) -> dict[str, Any]:
        step = state["plan"][int(state.get("step_index") or 0)]
        context = (
            f"Task: {state.get('task')}\n\nBRIEF:\n{json.dumps(state.get('brief'), indent=2)}\n"
        )
        if step.get("research"):
            context += f"\nAPPROVED EVIDENCE:\n{json.dumps(state.get('evidence'), indent=2)}\n"
        prompt = [
            SystemMessage(EXECUTOR_PROMPT),
            HumanMessage(f"{context}\nSTEP: {step['title']}\nSPEC: {step.get('spec', '')}"),
        ]
        issues = state.get("trust_issues") or []
        if issues:
            prompt.append(HumanMessage(REVISE_MARK + "\n" + "\n".join(f"- {i}" for i in issues)))
        return {"draft": executor_model.invoke(prompt).text}

    def release(state: ComplianceState) -> dict[str, Any]:
        index = int(state.get("step_index") or 0)
        step = state["plan"][index]
        last = next(r for r in reversed(reports_from_state(state)) if r.gate == "blind_verifier")
        return {
            "sections": [
                {
                    "title": step["title"],
                    "text": state.get("draft") or "",
                    "caveat": last.decision == "caveated",
                    "attempts": last.attempt,
                }
            ],
            "step_index": index + 1,
        }

    def route(state: ComplianceState) -> str:
        return "executor" if int(state.get("step_index") or 0) < len(state["plan"]) else "assemble"

    def assemble(state: ComplianceState) -> dict[str, Any]:
        parts = [f"# {state.get('task')}\n"]
        for s in state.get("sections") or []:
            parts.append(f"## {s['title']}\n\n{s['text'].strip()}\n")
        return {"document": "\n".join(parts)}

    g = StateGraph(ComplianceState)
    g.add_node("planner", plan)
    g.add_node("executor", execute)
    g.add_node("release", release)
    g.add_node("assemble", assemble)
    g.add_edge(START, "planner")
    g.add_edge("planner", "executor")
    g.add_edge("executor", "release")
    g.add_conditional_edges("release", route, ["executor", "assemble"])
    g.add_edge("assemble", END)
    return g


def _scripted(personality: Personality) -> dict[str, BaseChatModel]:
    from trustgate.testing import compliance_models

    return dict(compliance_models(personality))
