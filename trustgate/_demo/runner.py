"""Run the reference pipelines with their inventing models on the bundled data.

Each scenario drives one guarded graph to its end the way a team would: it answers
the interrupts a person would answer (the investigation's review, the postmortem's
gaps) from the bundled answers, changes a file during the investigation's pause, and
treats a halt as an outcome. What comes back is one :class:`DemoRun` per pipeline:
every crossing's report, the human steps taken, and the final artefact.
"""

from __future__ import annotations

import json
import tempfile
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.types import Command

from trustgate import otel
from trustgate._render import short
from trustgate._report import Report, reports
from trustgate.errors import GateHalted
from trustgate.evidence.ledger import InMemoryLedger
from trustgate.pipelines import code_review as code_review_pipeline
from trustgate.pipelines import compliance, investigation, postmortem
from trustgate.pipelines._common import Personality, load_json

__all__ = ["SCENARIOS", "DemoRun", "claimed", "run_scenario"]

Progress = Callable[[str], None]


@dataclass
class DemoRun:
    """What one pipeline did on the bundled data."""

    pipeline: str
    title: str
    thread_id: str
    status: str = "completed"
    """``completed``, or ``halted`` when a gate stopped the run (still an outcome)."""
    reports: list[Report] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    """What the demo did in a person's place (answers, approvals, file changes)."""
    artefact: str = ""
    artefact_data: Any = None
    halted: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        from trustgate._demo.verdict import verdict

        return {
            "title": self.title,
            "verdict": verdict(self),
            "thread_id": self.thread_id,
            "status": self.status,
            "steps": self.steps,
            "halted": self.halted,
            "crossings": [crossing_json(r) for r in self.reports],
            "artefact": self.artefact,
            "artefact_data": self.artefact_data,
        }


def claimed(report: Report) -> str:
    """What the model claimed at this crossing, in one line."""
    claims = report.claims[0] if report.claims else None
    if report.gate == "evidence_replay" and isinstance(claims, Mapping):
        items = claims.get("items") or []
        correct = [i for i in items if i.get("status") == "already_correct"]
        cites = sum(len(i.get("evidence") or []) for i in correct)
        changed = [f for i in items if i.get("status") == "changed" for f in i.get("files") or []]
        return (
            f"{len(correct)} item(s) already_correct citing {cites} line(s); "
            f"changed: {', '.join(changed) or 'nothing'}; inspector: APPROVE"
        )
    if report.gate in ("grounding", "reverification") and isinstance(claims, Mapping):
        parts = [
            f"{k}={short(v.get('value') if isinstance(v, Mapping) else v, 24)}"
            for k, v in claims.items()
        ]
        return short("; ".join(parts), 96)
    if isinstance(claims, str):
        return short(claims, 96)
    return short(claims, 96)


def crossing_json(report: Report) -> dict[str, Any]:
    return {
        "gate": report.gate,
        "node": report.node,
        "attempt": report.attempt,
        "decision": report.decision,
        "released": report.released,
        "claimed": claimed(report),
        "checked": sorted({f.verifier for f in report.findings}),
        "failed": [
            {"verifier": f.verifier, "code": f.code, "subject": f.subject, "message": f.message}
            for f in report.failed
        ],
        "overrides": [o.model_dump(mode="json") for o in report.overrides],
        "approval": report.approval.model_dump(mode="json") if report.approval else None,
        "error": report.error,
    }


@dataclass
class _Options:
    saver: Any
    personality: Personality
    model: Any = None

    def build(self, module: Any, **kwargs: Any) -> Any:
        return module.build(
            self.model, personality=self.personality, checkpointer=self.saver, **kwargs
        )


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def _drive(
    graph: Any,
    inputs: Any,
    config: Any,
    progress: Progress,
    label: str,
    on_interrupt: Callable[[Any], Any] | None = None,
    on_pause: Callable[[tuple[str, ...]], None] | None = None,
) -> dict[str, Any] | None:
    """Run to the end, answering interrupts; returns the halt report (as JSON) if any."""
    current: Any = inputs
    for _ in range(20):
        try:
            for update in graph.stream(current, config, stream_mode="updates"):
                for node in update:
                    if not node.startswith("__"):
                        progress(f"{label}: {node}")
        except GateHalted as exc:
            progress(f"{label}: halted at gate {exc.report.gate}")
            return exc.report.to_json_dict()
        snapshot = graph.get_state(config)
        pending = [i for t in snapshot.tasks for i in t.interrupts]
        if pending and on_interrupt is not None:
            progress(f"{label}: waiting for a person")
            current = Command(resume=on_interrupt(pending[0].value))
        elif snapshot.next and on_pause is not None:
            on_pause(tuple(snapshot.next))
            current = None
        else:
            return None
    raise RuntimeError(f"{label}: the demo did not finish in 20 resumes")  # pragma: no cover


def _code_review(run: DemoRun, o: _Options, workdir: Path, p: Progress) -> Any:
    graph = o.build(code_review_pipeline)
    config = _config(run.thread_id)
    run.halted = _drive(graph, code_review_pipeline.sample_inputs(workdir), config, p, run.pipeline)
    state = graph.get_state(config).values
    rounds = state.get("rounds") or []
    lines = [f"Review of {len(state.get('action_items') or [])} action items:"]
    for r in rounds:
        lines.append(f"  round {r['round']}: {r['verdict']} — {r['summary']}")
    final = state.get("review") or {}
    lines.append(f"Final verdict: {final.get('verdict')} after {state.get('round')} round(s).")
    run.artefact = "\n".join(lines)
    run.artefact_data = {"rounds": rounds, "review": final}
    return graph


def _investigation(run: DemoRun, o: _Options, workdir: Path, p: Progress) -> Any:
    case_data = load_json("investigation", "case.json")
    decision = load_json("investigation", "review.json")
    # A fresh in-memory ledger per run: a tamper mark is permanent in a persistent one,
    # so a second demo run would start from the first run's marks.
    graph = o.build(investigation, ledger=InMemoryLedger(), pause_before_reconcile=True)
    config = _config(run.thread_id)
    inputs = investigation.sample_inputs(workdir)

    def review(payload: Any) -> Any:
        run.steps.append(
            f"review requested by gate {payload.get('gate')}: {decision['type']} by "
            f"{decision['by']} ({decision.get('message', '')})"
        )
        return decision

    def pause(next_nodes: tuple[str, ...]) -> None:
        change = case_data["change_during_pause"]
        path = Path(inputs["repo"]) / change["path"]
        path.write_text(
            path.read_text(encoding="utf-8").replace(change["find"], change["replace"]),
            encoding="utf-8",
        )
        run.steps.append(
            f"before {', '.join(next_nodes)}: {change['path']} changed "
            f"({change['find']!r} → {change['replace']!r})"
        )

    run.halted = _drive(graph, inputs, config, p, run.pipeline, review, pause)
    case = graph.get_state(config).values.get("case") or {}
    lines = ["Case file:"]
    for name, entry in case.items():
        who = f", approved by {entry['approved_by']}" if entry.get("approved_by") else ""
        lines.append(
            f"  {name} = {entry['value']!r}  [{entry['verification']}{who}; "
            f"{len(entry['artifacts'])} artifact(s)]"
        )
    if not case:
        lines.append("  (empty)")
    run.artefact = "\n".join(lines)
    run.artefact_data = {"case": case}
    return graph


def _postmortem(run: DemoRun, o: _Options, workdir: Path, p: Progress) -> Any:
    answers = load_json("postmortem", "answers.json")
    graph = o.build(postmortem)
    config = _config(run.thread_id)

    def answer(payload: Any) -> Any:
        gaps = payload.get("gaps") or []
        given = {k: v for k, v in answers["answers"].items() if any(g["id"] == k for g in gaps)}
        run.steps.append(
            f"{len(gaps)} gap(s) asked; {answers['by']} answered {', '.join(given) or 'none'}"
        )
        return {"answers": given, "by": answers["by"]}

    run.halted = _drive(graph, postmortem.sample_inputs(), config, p, run.pipeline, answer)
    state = graph.get_state(config).values
    run.artefact = state.get("markdown") or ""
    run.artefact_data = {"gaps": state.get("gaps"), "testimony": state.get("testimony")}
    return graph


def _compliance(run: DemoRun, o: _Options, workdir: Path, p: Progress) -> Any:
    graph = o.build(compliance)
    config = _config(run.thread_id)
    run.halted = _drive(graph, compliance.sample_inputs(), config, p, run.pipeline)
    state = graph.get_state(config).values
    sections = state.get("sections") or []
    if run.halted is None:
        run.artefact = state.get("document") or ""
    else:
        parts = [f"# {state.get('task')}\n"]
        for s in sections:
            parts.append(f"## {s['title']}\n\n{s['text'].strip()}\n")
        index = len(sections)
        plan = state.get("plan") or []
        title = plan[index]["title"] if index < len(plan) else "?"
        parts.append(
            f"## {title}\n\n(not released: the run halted at gate "
            f"{run.halted['gate']}: {run.halted.get('error')})\n"
        )
        run.artefact = "\n".join(parts)
    run.artefact_data = {"sections": sections, "plan": state.get("plan") or []}
    return graph


SCENARIOS: dict[str, tuple[str, Callable[..., Any]]] = {
    "code-review": (
        "Code review: a model approves a fix, citing lines of code as proof",
        _code_review,
    ),
    "investigation": (
        "Investigation: a model fills in a case file from config files, citing each line",
        _investigation,
    ),
    "postmortem": (
        "Postmortem: a model drafts an incident report from the incident record",
        _postmortem,
    ),
    "compliance": (
        "Compliance: a model drafts a policy, citing only the standards the brief approves",
        _compliance,
    ),
}


def run_scenario(
    name: str,
    saver: Any,
    *,
    personality: Personality = "inventing",
    progress: Progress | None = None,
    workdir: str | Path | None = None,
    model: Any = None,
) -> DemoRun:
    """Run one pipeline's scenario with ``saver`` as its checkpointer.

    ``model`` (a chat model or a ``provider:model`` name) replaces the scripted
    models for every role; ``None`` means ``TRUSTGATE_MODEL`` when set, else scripted.
    """
    title, fn = SCENARIOS[name]
    run = DemoRun(pipeline=name, title=title, thread_id=f"demo-{name}-{uuid.uuid4().hex[:8]}")
    say = progress or (lambda _m: None)
    # one trace per pipeline run (every invocation and resume in it), whatever tracer
    with (
        tempfile.TemporaryDirectory(prefix="trustgate-demo-") as tmp,
        otel.pipeline_run(name, thread_id=run.thread_id) as traced,
    ):
        opts = _Options(saver=saver, personality=personality, model=model)
        graph = fn(run, opts, Path(workdir) if workdir else Path(tmp), say)
        run.reports = reports(graph, _config(run.thread_id))
        if run.halted is not None:
            traced.set_outcome("halted")
    if run.halted is not None:
        run.status = "halted"
    return run


def dumps(runs: list[DemoRun]) -> str:
    return json.dumps({"pipelines": {r.pipeline: r.to_json() for r in runs}}, indent=2, default=str)
