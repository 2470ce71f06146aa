"""trustgate.render: reports, findings, draft verdicts and artifacts, as text and HTML."""

from __future__ import annotations

from pathlib import Path

import pytest

from trustgate import Finding, Report
from trustgate._render import paint, short, to_html, to_text
from trustgate.evidence.ledger import InMemoryLedger
from trustgate.evidence.record import Record
from trustgate.evidence.workspace import Workspace
from trustgate.files import Locator
from trustgate.pipelines import code_review
from trustgate.policies import Approval, OverrideRecord
from trustgate.verifiers.drafts.verify import verify_draft


def _report() -> Report:
    return Report(
        gate="evidence_replay",
        node="inspector",
        claims=[{"items": []}],
        findings=[
            Finding.failed("citation_replay", "file_missing", "<app/limits.py> does not exist"),
            Finding.ok("citation_replay", "ok", subject="app/handlers.py:9"),
        ],
        decision="modified",
        overrides=[
            OverrideRecord(
                kind="field_override",
                target="review.verdict",
                before="APPROVE",
                after="REQUEST_CHANGES",
                reason="citation_replay/file_missing",
            )
        ],
        released=True,
        approval=Approval(decision="approve", who="Dana", message="ok"),
    )


def test_report_text_and_html() -> None:
    report = _report()
    text = to_text(report)
    assert text.startswith("MODIFIED  gate evidence_replay (guards inspector, attempt 1)")
    assert "field_override review.verdict: APPROVE → REQUEST_CHANGES" in text
    assert "FAIL  citation_replay/file_missing" in text
    assert "PASS" not in text  # passing findings only on request
    assert "approve by Dana (testimony, not evidence)" in text
    assert "\033[" not in text
    assert "\033[" in to_text(report, colour=True)
    page = to_html(report)
    assert "<table" in page and "REQUEST_CHANGES" in page
    assert "&lt;app/limits.py&gt;" in page and "<app/limits.py>" not in page  # escaped


def test_finding_and_list_dispatch() -> None:
    f = Finding.failed("grounding", "outside_scope", "ops/oncall.md is outside the scopes")
    assert to_text(f).startswith("FAIL  grounding/outside_scope")
    assert to_text(Finding.failed("x", "y", "z", severity="warn")).startswith("WARN")
    assert to_html([f, f]).count("<tr>") == 3  # header + two rows
    assert to_text([_report(), _report()]).count("MODIFIED") == 2
    with pytest.raises(TypeError):
        to_text(object())


def test_draft_verdict_views() -> None:
    record = Record.from_text("14:02 latency 9.2s\n")
    verdict = verify_draft("Latency rose. [[1]] The deploy exhausted the pool. [[9]]", record)
    text = to_text(verdict)
    assert "DELETED (causal)" in text and "GAP gap-1" in text
    page = to_html(verdict)
    assert "exhausted the pool" in page and "<pre" in page
    clean = verify_draft("Latency rose. [[1]]", record)
    assert "clean: nothing deleted" in to_html(clean)


def test_artifact_views(tmp_path: Path) -> None:
    inputs = code_review.sample_inputs(tmp_path)
    artifact = Workspace(inputs["repo"]).acquire(
        Locator(path="app/handlers.py", start_line=9), InMemoryLedger()
    )
    assert "[verified]" in to_text(artifact) and artifact.id[:12] in to_text(artifact)
    assert "if not event.get(&quot;body&quot;)" in to_html(artifact)


def test_helpers() -> None:
    assert short(None) == "—"
    assert short("a   b\nc") == "a b c"
    assert len(short("x" * 500, 20)) == 20
    assert paint("x", "red", False) == "x" and paint("x", "nope", True) == "x"
