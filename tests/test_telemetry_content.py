"""Content stays out of telemetry by default, proven on every reference pipeline.

Each pipeline runs its bundled scenario (inventing models, a person's review and
answers) with capture off; every exported span, event, link, status and metric point is
then searched for every string the gate read (claims), changed (override before/after),
explained (finding messages, reasons) and every person's name in the inputs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from _otel import Otel, everything_exported, global_providers, make_otel
from langgraph.checkpoint.memory import InMemorySaver

from trustgate import otel
from trustgate._demo.runner import SCENARIOS, run_scenario
from trustgate.pipelines._common import load_json
from trustgate.report import Report

# Shorter strings are words the telemetry itself uses (a decision, a kind, a field
# name); a claim string of this length or more found anywhere is a leak.
_MIN_LENGTH = 5


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _content(report: Report) -> set[str]:
    """Everything in a report that came from a model or a person."""
    found = set(_strings(report.claims))
    for o in report.overrides:
        found |= set(_strings(o.before)) | set(_strings(o.after)) | {o.reason}
    found |= {f.message for f in report.findings if f.message != "ok"}
    if report.approval is not None:
        found |= {report.approval.who or "", report.approval.message or ""}
    if report.error:
        found.add(report.error)
    # identifiers the gate itself writes (a reason that is just a finding code) are
    # content-free by construction
    vocabulary = {f.code for f in report.findings} | {f.verifier for f in report.findings}
    vocabulary |= {f"{f.verifier}/{f.code}" for f in report.findings}
    return {s.strip() for s in found if len(s.strip()) >= _MIN_LENGTH} - vocabulary


def _leaks(secrets: set[str], text: str) -> list[str]:
    """Secrets found in ``text`` as whole tokens (``verified`` inside the finding code
    ``unverified_evidence`` is not a leak; ``APPROVE`` anywhere on its own is)."""
    return sorted(s for s in secrets if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", text))


def _people() -> set[str]:
    names = {load_json("investigation", "review.json")["by"]}
    names.add(load_json("postmortem", "answers.json")["by"])
    return names


@pytest.fixture
def sdk(monkeypatch: pytest.MonkeyPatch) -> Iterator[Otel]:
    for var in (otel.CAPTURE_CONTENT_ENV, otel.CONTENT_KEY_ENV, otel.OVERRIDE_SPANS_ENV):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(otel.OVERRIDE_SPANS_ENV, "true")  # the most exported surface
    o = make_otel()
    with global_providers(o):
        yield o


@pytest.mark.parametrize("pipeline", sorted(SCENARIOS))
def test_no_content_in_any_exported_signal(sdk: Otel, pipeline: str) -> None:
    run = run_scenario(pipeline, InMemorySaver())
    assert run.reports, "the scenario crossed no gate"
    secrets = set().union(*(_content(r) for r in run.reports)) | _people()
    assert any(r.decision != "pass" for r in run.reports), "nothing overridden: a weak test"
    exported = everything_exported(sdk)
    assert any(e["what"] == "metric" for e in exported)
    gates = [e for e in exported if e["what"] == "span" and e["name"].startswith("trustgate.gate")]
    assert len(gates) == len(run.reports)  # one span per crossing
    text = json.dumps(exported, default=str)
    leaked = _leaks(secrets, text)
    assert leaked == [], f"{pipeline}: content in telemetry: {leaked[:5]}"
    # and the summary an engineer reads says what happened
    for gate in gates:
        summary = gate["attributes"]["output.value"]
        decision = gate["attributes"]["trustgate.crossing.decision"]
        assert summary.startswith(f"{decision}: ")
        if decision != "pass":
            assert gate["status"] == summary[:1024]


def test_the_same_runs_with_capture_on_do_show_content(
    sdk: Otel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search above can find content: with capture on it does."""
    monkeypatch.setenv(otel.CAPTURE_CONTENT_ENV, "true")
    monkeypatch.setenv(otel.CONTENT_MAX_LENGTH_ENV, "100000")
    run = run_scenario("code-review", InMemorySaver())
    text = json.dumps(everything_exported(sdk), default=str)
    secrets = set().union(*(_content(r) for r in run.reports))
    assert _leaks(secrets, text)
