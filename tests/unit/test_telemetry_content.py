"""Content stays out of telemetry by default, proven on every reference pipeline.

Each pipeline runs its bundled scenario (inventing models, a person's review and
answers) with capture off; every exported span, event, link, status and metric point is
then searched for every string the gate read (claims), changed (override before/after),
explained (finding messages, reasons) and every person's name in the inputs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from _leaks import content_of, leaks, people
from _otel import Otel, everything_exported, global_providers, make_otel
from langgraph.checkpoint.memory import InMemorySaver

from trustgate import otel
from trustgate._demo.runner import SCENARIOS, run_scenario


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
    secrets = set().union(*(content_of(r) for r in run.reports)) | people()
    assert any(r.decision != "pass" for r in run.reports), "nothing overridden: a weak test"
    exported = everything_exported(sdk)
    assert any(e["what"] == "metric" for e in exported)
    gates = [e for e in exported if e["what"] == "span" and e["name"].startswith("trustgate.gate")]
    assert len(gates) == len(run.reports)  # one span per crossing
    text = json.dumps(exported, default=str)
    leaked = leaks(secrets, text)
    assert leaked == [], f"{pipeline}: content in telemetry: {leaked[:5]}"
    # and the summary an engineer reads says what happened
    for gate in gates:
        summary = gate["attributes"]["output.value"]
        decision = gate["attributes"]["trustgate.crossing.decision"]
        assert summary.startswith(f"{decision}: ")
        if decision == "halted":  # the only ERROR: an override that worked is OK
            assert gate["status"] == summary[:1024]
        else:
            assert gate["status"] is None


def test_the_same_runs_with_capture_on_do_show_content(
    sdk: Otel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search above can find content: with capture on it does."""
    monkeypatch.setenv(otel.CAPTURE_CONTENT_ENV, "true")
    monkeypatch.setenv(otel.CONTENT_MAX_LENGTH_ENV, "100000")
    run = run_scenario("code-review", InMemorySaver())
    text = json.dumps(everything_exported(sdk), default=str)
    secrets = set().union(*(content_of(r) for r in run.reports))
    assert leaks(secrets, text)
