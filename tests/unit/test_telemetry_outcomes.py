"""What a trace says about each crossing's outcome, on the reference pipelines.

ERROR is for a halt or a crash: an override that worked is the gate doing its job, so
its span is OK and its events say what it did. The value an override set from the
gate's configuration (the code review's REQUEST_CHANGES) is recorded with capture off,
because it is configuration, never what the model wrote; the model's own APPROVE stays
out. The run's root span counts the crossings that acted, so a trace list shows it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from _otel import Otel, everything_exported, global_providers, make_otel
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.trace import StatusCode

from trustgate import otel
from trustgate._demo.runner import run_scenario
from trustgate.otel.semconv import CrossingAttributes as C
from trustgate.otel.semconv import OpenInferenceAttributes as OI
from trustgate.otel.semconv import OverrideAttributes as O
from trustgate.otel.semconv import RunAttributes as R


@pytest.fixture
def sdk(monkeypatch: pytest.MonkeyPatch) -> Iterator[Otel]:
    for var in (otel.CAPTURE_CONTENT_ENV, otel.CONTENT_KEY_ENV, otel.OVERRIDE_SPANS_ENV):
        monkeypatch.delenv(var, raising=False)
    o = make_otel()
    with global_providers(o):
        yield o


def test_status_per_decision(sdk: Otel) -> None:
    seen: dict[str, set[StatusCode]] = {}
    for pipeline in ("code-review", "compliance"):
        run_scenario(pipeline, InMemorySaver())
    for span in sdk.named("trustgate.gate "):
        decision = str((span.attributes or {})[C.DECISION])
        seen.setdefault(decision, set()).add(span.status.status_code)
    assert seen == {
        "pass": {StatusCode.UNSET},
        "modified": {StatusCode.OK},
        "rerendered": {StatusCode.OK},
        "caveated": {StatusCode.OK},
        "halted": {StatusCode.ERROR},
    }
    for span in sdk.named("trustgate.gate "):
        a = span.attributes or {}
        assert (OI.ERROR_TYPE in a) == (a[C.DECISION] == "halted")


def test_the_configured_value_of_an_override_is_recorded_and_the_models_is_not(
    sdk: Otel,
) -> None:
    run = run_scenario("code-review", InMemorySaver())
    (record,) = [o for r in run.reports for o in r.overrides if o.target == "review.verdict"]
    assert record.configured and (record.before, record.after) == ("APPROVE", "REQUEST_CHANGES")
    (span,) = [s for s in sdk.named("trustgate.gate ") if s.attributes[C.DECISION] == "modified"]
    events = [e for e in span.events if e.name == "trustgate.override field_override"]
    by_target = {e.attributes[O.TARGET]: dict(e.attributes) for e in events}
    assert by_target["review.verdict"][O.VALUE] == "REQUEST_CHANGES"
    assert by_target["reviewed_manifest"][O.VALUE] == "null"  # Override(..., None), as JSON
    assert span.attributes[C.OVERRIDE_VALUES] == ("REQUEST_CHANGES", "null")
    text = json.dumps(everything_exported(sdk), default=str)
    assert '"APPROVE"' not in text  # what the model wrote stays out with capture off


def test_the_run_root_counts_the_crossings_that_acted(sdk: Otel) -> None:
    run = run_scenario("compliance", InMemorySaver())
    (root,) = sdk.named("trustgate.run compliance")
    a = root.attributes or {}
    acted = sum(1 for r in run.reports if r.decision != "pass")
    assert acted == 4 and a[R.ACTED_COUNT] == acted and a[R.CROSSING_COUNT] == len(run.reports)
    head = str(a[OI.OUTPUT_VALUE]).splitlines()[0]
    assert head == "halted: 5 crossing(s), 4 acted on (2 rerendered, 1 caveated, 1 halted)"
    assert {"acted:4", "outcome:halted", "decision:halted"} <= set(a[OI.TAG_TAGS])
    assert root.status.status_code != StatusCode.ERROR  # a halt is the run's outcome
