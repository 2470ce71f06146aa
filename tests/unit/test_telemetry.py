"""The ``trustgate.otel`` span API with real Reports and in-memory SDK exporters.

The gate calls ``otel.crossing`` / ``CrossingSpan.verifier`` / ``CrossingSpan.finish``;
these tests drive the same calls, inside real LangGraph graphs where nesting matters.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
import operator
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any

import pytest
from _otel import (
    Otel,
    everything_exported,
    global_providers,
    hexid,
    make_otel,
    restoring_langchain_patches,
)
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphInterrupt
from langgraph.graph import END, START, StateGraph
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import SpanLimits
from opentelemetry.trace import StatusCode
from typing_extensions import TypedDict

from trustgate import Finding, Report, otel
from trustgate.errors import ConfigurationError, GateHalted
from trustgate.otel.semconv import CrossingAttributes as C
from trustgate.otel.semconv import EvaluationAttributes as E
from trustgate.otel.semconv import MetricNames as M
from trustgate.otel.semconv import OpenInferenceAttributes as OI
from trustgate.otel.semconv import OverrideAttributes as O
from trustgate.otel.semconv import VerifierAttributes as V
from trustgate.policies import Approval, OverrideRecord


@pytest.fixture
def otel_sdk() -> Otel:
    return make_otel()


LIE = "APPROVE: everything is already correct"
CLAIM_TEXT = "def handler(): return cached_value  # line 4"
FAILED = Finding.failed(
    "citation_replay", "content_mismatch", f"line 4 does not say {CLAIM_TEXT!r}"
)
PASSED = Finding.ok("citation_replay")
SUMMARY = "modified: field_override review.verdict (citation_replay/content_mismatch)"


def modified_report(n_overrides: int = 1, **extra: Any) -> Report:
    overrides = [
        OverrideRecord(
            kind="field_override",
            target="review.verdict",
            before="APPROVE",
            after="REQUEST_CHANGES",
            reason=f"citation_replay/content_mismatch: {CLAIM_TEXT}",
            verifier="citation_replay",
        )
    ]
    overrides += [
        OverrideRecord(
            kind="sentence_delete",
            target="draft",
            before=f"invented sentence {i}",
            after=None,
            reason="uncited_causal",
            verifier="draft",
        )
        for i in range(n_overrides - 1)
    ]
    return Report(
        gate="inspector",
        node="reviewer",
        claims=[{"file": "app.py", "line": 4, "content": CLAIM_TEXT}, LIE],
        findings=[PASSED, FAILED],
        decision="modified",
        overrides=overrides,
        released=True,
        thread_id="thread-7",
        **extra,
    )


def run_crossing(
    o: Otel,
    report: Report,
    *,
    verifier_findings: list[Finding] | None = None,
    **kwargs: Any,
) -> None:
    with otel.crossing(
        report.gate,
        report.node,
        tracer_provider=o.tracer_provider,
        meter_provider=o.meter_provider,
        **kwargs,
    ) as c:
        with c.verifier("citation_replay") as vs:
            vs.record(verifier_findings if verifier_findings is not None else [PASSED, FAILED])
        c.finish(report)


def attrs_of(span: Any) -> dict[str, Any]:
    return dict(span.attributes or {})


# --- what an engineer sees --------------------------------------------------------------


def test_crossing_span_reads_at_a_glance(otel_sdk: Otel) -> None:
    run_crossing(otel_sdk, modified_report())
    span = otel_sdk.one("trustgate.gate")
    assert span.name == "trustgate.gate inspector"
    a = attrs_of(span)
    assert a[OI.SPAN_KIND] == "GUARDRAIL"
    assert a[C.GATE_NAME] == "inspector"
    assert a[C.NODE_NAME] == "reviewer"
    assert a[C.DECISION] == "modified"
    assert a[C.RELEASED] is True
    assert a[OI.OUTPUT_VALUE] == SUMMARY
    assert a[C.SUMMARY] == SUMMARY
    assert a[OI.OUTPUT_MIME_TYPE] == "text/plain"
    assert a[OI.SESSION_ID] == "thread-7"
    assert a[C.OVERRIDE_COUNT] == 1
    assert a[C.OVERRIDE_KINDS] == ("field_override",)
    assert a[C.OVERRIDE_TARGETS] == ("review.verdict",)
    assert a[C.FAILED_VERIFIERS] == ("citation_replay",)
    assert a[C.FAILURE_CODES] == ("citation_replay/content_mismatch",)
    assert a[C.VERIFIERS] == ("citation_replay",)
    assert a[C.CLAIM_COUNT] == 2
    assert a[C.FINDING_COUNT] == 2
    assert a[C.DROPPED_OVERRIDE_EVENTS] == 0
    assert set(a[OI.TAG_TAGS]) >= {
        "trustgate",
        "gate:inspector",
        "decision:modified",
        "override:field_override",
        "failed:citation_replay",
    }
    meta = json.loads(a[OI.METADATA])
    assert meta["decision"] == "modified" and meta["override_kinds"] == ["field_override"]
    # an override that worked is OK (red is for halts and crashes); its summary and
    # events say what the gate did
    assert span.status.status_code == StatusCode.OK
    assert a[OI.OUTPUT_VALUE] == SUMMARY
    assert OI.ERROR_TYPE not in a


def test_passing_crossing_is_unset(otel_sdk: Otel) -> None:
    report = Report(gate="g", node="n", findings=[PASSED], decision="pass", released=True)
    run_crossing(otel_sdk, report, verifier_findings=[PASSED])
    span = otel_sdk.one("trustgate.gate")
    assert span.status.status_code == StatusCode.UNSET
    a = attrs_of(span)
    assert a[OI.OUTPUT_VALUE] == "pass: 1 finding(s) from citation_replay, none blocking"
    assert OI.ERROR_TYPE not in a


def test_override_events_are_titled_by_kind(otel_sdk: Otel) -> None:
    run_crossing(otel_sdk, modified_report(n_overrides=3))
    span = otel_sdk.one("trustgate.gate")
    overrides = [e for e in span.events if e.name.startswith("trustgate.override")]
    assert [e.name for e in overrides] == [
        "trustgate.override field_override",
        "trustgate.override sentence_delete",
        "trustgate.override sentence_delete",
    ]
    first = dict(overrides[0].attributes or {})
    assert first[O.KIND] == "field_override"
    assert first[O.TARGET] == "review.verdict"
    assert first[O.VERIFIER] == "citation_replay"
    assert first[O.CODES] == ("citation_replay/content_mismatch",)
    assert first[O.BEFORE_LENGTH] == len("APPROVE")
    assert first[O.AFTER_LENGTH] == len("REQUEST_CHANGES")
    assert attrs_of(span)[OI.OUTPUT_VALUE].startswith(
        "modified: field_override review.verdict (citation_replay/content_mismatch); "
        "sentence_delete draft (citation_replay/content_mismatch) ×2"
    )


def test_evaluation_events_per_verifier(otel_sdk: Otel) -> None:
    with otel.crossing("g", "n", tracer_provider=otel_sdk.tracer_provider) as c:
        with c.verifier("citation_replay") as vs:
            vs.record([PASSED, FAILED, FAILED])
        with c.verifier("hash_check") as vs:
            vs.record([Finding.ok("hash_check")])
        c.finish(modified_report())
    span = otel_sdk.one("trustgate.gate")
    evals = [dict(e.attributes or {}) for e in span.events if e.name == "gen_ai.evaluation.result"]
    assert evals == [
        {
            E.GEN_AI_NAME: "citation_replay",
            E.GEN_AI_SCORE_LABEL: "fail",
            E.GEN_AI_SCORE_VALUE: 0.0,
            E.GEN_AI_EXPLANATION: "2 of 3 finding(s) failed: content_mismatch×2",
        },
        {
            E.GEN_AI_NAME: "hash_check",
            E.GEN_AI_SCORE_LABEL: "pass",
            E.GEN_AI_SCORE_VALUE: 1.0,
            E.GEN_AI_EXPLANATION: "1 finding(s), none failed",
        },
    ]
    replay = attrs_of(otel_sdk.one("trustgate.verify citation_replay"))
    assert replay[OI.SPAN_KIND] == "EVALUATOR"
    assert replay[E.OI_NAME] == "citation_replay"
    assert replay[E.OI_LABEL] == "fail"
    assert replay[E.OI_SCORE] == 0.0
    assert replay[OI.OUTPUT_VALUE] == "2 of 3 finding(s) failed: content_mismatch×2"
    assert (replay[V.FINDING_COUNT], replay[V.FAILURE_COUNT]) == (3, 2)


def test_restored_crossing_still_has_evaluations_from_findings(otel_sdk: Otel) -> None:
    """After a review resume the verifiers do not run again; findings still report."""
    with otel.crossing("g", "n", tracer_provider=otel_sdk.tracer_provider) as c:
        c.finish(modified_report())
    span = otel_sdk.one("trustgate.gate")
    [ev] = [dict(e.attributes or {}) for e in span.events if e.name == "gen_ai.evaluation.result"]
    assert ev[E.GEN_AI_NAME] == "citation_replay" and ev[E.GEN_AI_SCORE_LABEL] == "fail"


def test_verifier_identity_is_the_same_everywhere(otel_sdk: Otel) -> None:
    """A verifier run as "replay" whose findings say "citation_replay" is "replay"
    in the span name, the gate's attributes, the override event and the metrics."""
    report = modified_report()
    with otel.crossing(
        "g", "n", tracer_provider=otel_sdk.tracer_provider, meter_provider=otel_sdk.meter_provider
    ) as c:
        with c.verifier("replay") as vs:
            vs.record(report.findings)
        c.finish(report)
    a = attrs_of(otel_sdk.one("trustgate.gate"))
    assert a[C.FAILED_VERIFIERS] == ("replay",)
    assert a[C.VERIFIERS] == ("replay",)
    assert a[C.FAILURE_CODES] == ("replay/content_mismatch",)
    event = next(e for e in otel_sdk.one("trustgate.gate").events if e.name.endswith("override"))
    assert dict(event.attributes or {})[O.VERIFIER] == "replay"
    assert otel_sdk.counter(M.FINDINGS, **{V.NAME: "replay"}) == 2
    assert otel_sdk.counter(M.FINDINGS, **{V.NAME: "citation_replay"}) == 0
    assert otel_sdk.one("trustgate.verify").name == "trustgate.verify replay"


def test_attribute_names_follow_the_conventions(otel_sdk: Otel) -> None:
    """One type per name, plural names for arrays, no name that is also a namespace."""
    report = modified_report(n_overrides=2, approval=Approval(decision="approve", who="Dana"))
    run_crossing(otel_sdk, report, override_spans=True)
    seen: dict[str, type] = {}
    for item in everything_exported(otel_sdk):
        for key, value in item["attributes"].items():
            t = type(value)
            assert seen.setdefault(key, t) is t, (key, seen[key], t)
    names = set(seen)
    for name in names:
        assert not any(other.startswith(name + ".") for other in names), name
        if name.startswith("trustgate.") and seen[name] is tuple:
            assert name.endswith("s"), f"array attribute {name} is not plural"


# --- content ----------------------------------------------------------------------------


def _text_of_everything(o: Otel) -> str:
    return json.dumps(everything_exported(o), default=str)


def test_content_is_kept_out_by_default(otel_sdk: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (otel.CAPTURE_CONTENT_ENV, otel.CONTENT_KEY_ENV):
        monkeypatch.delenv(var, raising=False)
    report = modified_report(approval=Approval(decision="approve", who="Dana Whitfield"))
    run_crossing(otel_sdk, report)
    text = _text_of_everything(otel_sdk)
    for secret in (LIE, CLAIM_TEXT, "APPROVE", "REQUEST_CHANGES", "Dana", "invented"):
        assert secret not in text, secret
    # nor an unkeyed digest of any of them
    for value in ("APPROVE", "REQUEST_CHANGES", LIE):
        assert hashlib.sha256(value.encode()).hexdigest()[:16] not in text
    a = attrs_of(otel_sdk.one("trustgate.gate"))
    assert a[OI.INPUT_VALUE] == "2 claim(s) from node reviewer (content not captured)"
    assert C.CLAIMS_DIGEST not in a
    assert C.APPROVAL_APPROVER not in a
    assert a[C.APPROVAL_DECISION] == "approve"


def test_keyed_digests_with_a_deployment_key(
    otel_sdk: Otel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(otel.CONTENT_KEY_ENV, "k" * 32)
    run_crossing(otel_sdk, modified_report())
    event = dict(otel_sdk.one("trustgate.gate").events[-1].attributes or {})
    digest = str(event[O.BEFORE_DIGEST])
    algo, key_id, mac = digest.split(":")
    assert algo == "hmac-sha256" and len(key_id) == 8 and len(mac) == 32
    assert mac not in hashlib.sha256(b"APPROVE").hexdigest()
    assert str(attrs_of(otel_sdk.one("trustgate.gate"))[C.CLAIMS_DIGEST]).startswith("hmac-sha256:")
    # deterministic for one key, different under another
    otel_sdk.exporter.clear()
    run_crossing(otel_sdk, modified_report())
    again = dict(otel_sdk.one("trustgate.gate").events[-1].attributes or {})
    assert again[O.BEFORE_DIGEST] == digest
    otel_sdk.exporter.clear()
    run_crossing(otel_sdk, modified_report(), content_key=b"another key, 16+ bytes")
    other = dict(otel_sdk.one("trustgate.gate").events[-1].attributes or {})
    assert other[O.BEFORE_DIGEST] != digest


def test_short_keys_are_refused(
    otel_sdk: Otel, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(ConfigurationError, match="16 bytes"):
        run_crossing(otel_sdk, modified_report(), content_key="short")
    otel_sdk.exporter.clear()
    monkeypatch.setenv(otel.CONTENT_KEY_ENV, "short")
    with caplog.at_level(logging.WARNING, logger="trustgate.otel._content"):
        run_crossing(otel_sdk, modified_report())
    assert "digests stay off" in caplog.text
    event = dict(otel_sdk.one("trustgate.gate").events[-1].attributes or {})
    assert O.BEFORE_DIGEST not in event


def test_content_capture_opt_in(otel_sdk: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(otel.CAPTURE_CONTENT_ENV, "true")
    report = modified_report(approval=Approval(decision="approve", who="Dana"))
    run_crossing(otel_sdk, report)
    span = otel_sdk.one("trustgate.gate")
    a = attrs_of(span)
    assert json.loads(a[OI.INPUT_VALUE])[1] == LIE
    assert a[OI.INPUT_MIME_TYPE] == "application/json"
    # the decision, captured or not
    assert a[OI.OUTPUT_VALUE] == SUMMARY + "; reviewed by a person: approve"
    assert a[C.APPROVAL_APPROVER] == "Dana"
    event = dict(next(e for e in span.events if e.name.endswith("field_override")).attributes or {})
    assert event[O.BEFORE] == "APPROVE"
    assert event[O.AFTER] == "REQUEST_CHANGES"
    assert CLAIM_TEXT in str(event[O.REASON])
    replay = next(e for e in span.events if e.name == "gen_ai.evaluation.result")
    assert CLAIM_TEXT in str(dict(replay.attributes or {})[E.GEN_AI_EXPLANATION])


def test_truncated_json_is_no_longer_json(otel_sdk: Otel) -> None:
    run_crossing(otel_sdk, modified_report(), capture_content=True, max_content_length=20)
    a = attrs_of(otel_sdk.one("trustgate.gate"))
    assert "…[truncated" in a[OI.INPUT_VALUE]
    assert a[OI.INPUT_MIME_TYPE] == "text/plain"


def test_capture_argument_beats_env(otel_sdk: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(otel.CAPTURE_CONTENT_ENV, "true")
    run_crossing(otel_sdk, modified_report(), capture_content=False)
    assert LIE not in _text_of_everything(otel_sdk)


# --- errors and halts ------------------------------------------------------------------


def test_crashed_verifier_is_content_free(otel_sdk: Otel) -> None:
    report = Report(
        gate="inspector",
        node="reviewer",
        findings=[Finding.failed("flaky", "verifier_error", f"RuntimeError: {CLAIM_TEXT}")],
        decision="halted",
        overrides=[OverrideRecord(kind="halt", target="reviewer", reason=CLAIM_TEXT)],
        released=False,
        error=f"flaky: RuntimeError: {CLAIM_TEXT}",
    )
    with otel.crossing("inspector", "reviewer", tracer_provider=otel_sdk.tracer_provider) as c:
        with pytest.raises(RuntimeError), c.verifier("flaky"):
            raise RuntimeError(CLAIM_TEXT)
        c.finish(report)
    flaky = otel_sdk.one("trustgate.verify flaky")
    assert flaky.status.status_code == StatusCode.ERROR
    assert flaky.status.description == "error: RuntimeError"
    fa = attrs_of(flaky)
    assert fa[V.OUTCOME] == "error" and fa[E.OI_LABEL] == "fail"
    [exc] = [dict(e.attributes or {}) for e in flaky.events if e.name == "exception"]
    assert exc["exception.type"] == "RuntimeError"
    assert exc["exception.message"] == "RuntimeError (message not captured)"
    gate = otel_sdk.one("trustgate.gate")
    assert gate.status.status_code == StatusCode.ERROR
    assert gate.status.description == "halted: halt reviewer (flaky/verifier_error)"
    ga = attrs_of(gate)
    assert ga[C.FAILED_VERIFIERS] == ("flaky",)
    assert ga[OI.ERROR_TYPE] == "verifier_error"
    assert C.ERROR_MESSAGE not in ga
    assert CLAIM_TEXT not in _text_of_everything(otel_sdk)


def test_policy_halt_names_the_decision(otel_sdk: Otel) -> None:
    report = Report(
        gate="inspector",
        node="reviewer",
        findings=[FAILED],
        decision="halted",
        overrides=[OverrideRecord(kind="halt", target="reviewer", reason="unresolved")],
        released=False,
    )
    run_crossing(otel_sdk, report)
    gate = otel_sdk.one("trustgate.gate")
    assert gate.status.description == "halted: halt reviewer (citation_replay/content_mismatch)"
    assert "exception" not in [e.name for e in gate.events]
    assert attrs_of(gate)[C.RELEASED] is False


def test_gate_halted_through_the_block_finishes_with_its_report(otel_sdk: Otel) -> None:
    report = Report(gate="g", node="n", decision="halted", released=False, findings=[FAILED])
    with (
        pytest.raises(GateHalted),
        otel.crossing(
            "g", "n", tracer_provider=otel_sdk.tracer_provider,
            meter_provider=otel_sdk.meter_provider,
        ),
    ):  # fmt: skip
        raise GateHalted(report)
    gate = otel_sdk.one("trustgate.gate")
    assert attrs_of(gate)[C.DECISION] == "halted"
    assert "exception" not in [e.name for e in gate.events]
    assert otel_sdk.counter(M.CROSSINGS, **{C.DECISION: "halted"}) == 1


def test_gate_crash_is_an_error_without_content(otel_sdk: Otel) -> None:
    with (
        pytest.raises(KeyError),
        otel.crossing(
            "g", "n", tracer_provider=otel_sdk.tracer_provider,
            meter_provider=otel_sdk.meter_provider,
        ) as c,
    ):  # fmt: skip
        with c.verifier("ok") as vs:
            vs.record([])
        raise KeyError(CLAIM_TEXT)
    gate = otel_sdk.one("trustgate.gate")
    assert gate.status.status_code == StatusCode.ERROR
    assert gate.status.description == "error: KeyError"
    [exc] = [dict(e.attributes or {}) for e in gate.events if e.name == "exception"]
    assert exc["exception.type"] == "KeyError"
    assert CLAIM_TEXT not in json.dumps(exc)
    assert attrs_of(gate)[C.DECISION] == "error"
    assert otel_sdk.one("trustgate.verify ok").parent.span_id == gate.context.span_id  # type: ignore[union-attr]
    assert otel_sdk.counter(M.CROSSINGS, **{C.DECISION: "error"}) == 1


def test_event_limit_overflow_is_counted() -> None:
    o = make_otel(SpanLimits(max_events=5))
    run_crossing(o, modified_report(n_overrides=8))
    span = o.one("trustgate.gate")
    overrides = [e for e in span.events if e.name.startswith("trustgate.override")]
    assert len(overrides) == 4  # one event is the verifier's evaluation result
    a = attrs_of(span)
    assert a[C.OVERRIDE_COUNT] == 8
    assert a[C.DROPPED_OVERRIDE_EVENTS] == 4


def test_override_spans_opt_in(otel_sdk: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    run_crossing(otel_sdk, modified_report(n_overrides=3))
    assert otel_sdk.named("trustgate.override") == []
    otel_sdk.exporter.clear()
    monkeypatch.setenv(otel.OVERRIDE_SPANS_ENV, "true")
    run_crossing(otel_sdk, modified_report(n_overrides=3))
    gate = otel_sdk.one("trustgate.gate")
    children = otel_sdk.named("trustgate.override")
    assert [c.name for c in children] == [
        "trustgate.override field_override",
        "trustgate.override sentence_delete",
        "trustgate.override sentence_delete",
    ]
    for child in children:
        assert child.parent is not None and child.parent.span_id == gate.context.span_id
        assert attrs_of(child)[OI.SPAN_KIND] == "GUARDRAIL"
        assert child.kind == otel_trace.SpanKind.INTERNAL
    assert attrs_of(children[0])[O.TARGET] == "review.verdict"


def test_policy_spans(otel_sdk: Otel) -> None:
    with otel.crossing("g", "n", tracer_provider=otel_sdk.tracer_provider) as c:
        with c.policy("Redact"):
            pass
        c.finish(modified_report())
    policy = otel_sdk.one("trustgate.policy Redact")
    assert attrs_of(policy)[OI.SPAN_KIND] == "GUARDRAIL"
    assert policy.parent is not None
    assert policy.parent.span_id == otel_sdk.one("trustgate.gate").context.span_id


# --- metrics ------------------------------------------------------------------------------


def test_metrics(otel_sdk: Otel) -> None:
    run_crossing(otel_sdk, modified_report(n_overrides=3))
    run_crossing(otel_sdk, modified_report(n_overrides=1))
    passing = Report(gate="inspector", node="reviewer", findings=[PASSED], decision="pass",
                     released=True)  # fmt: skip
    run_crossing(otel_sdk, passing, verifier_findings=[PASSED])
    assert otel_sdk.counter(M.CROSSINGS) == 3
    assert otel_sdk.counter(M.CROSSINGS, **{C.DECISION: "modified"}) == 2
    assert otel_sdk.counter(M.CROSSINGS, **{C.NODE_NAME: "reviewer"}) == 3
    assert (
        otel_sdk.counter(
            M.FINDINGS, **{V.NAME: "citation_replay", V.FINDING_CODE: "content_mismatch"}
        )
        == 2
    )
    assert otel_sdk.counter(M.OVERRIDES, **{O.KIND: "sentence_delete"}) == 2
    hist = otel_sdk.metric_points(M.CROSSING_DURATION)
    assert sum(p.count for p in hist) == 3
    for p in hist:
        assert tuple(p.explicit_bounds) == otel.DURATION_BUCKETS  # seconds, not ms
        assert p.max < 5  # a crossing is recorded in seconds
        assert sum(p.bucket_counts[:6]) == p.count  # all well under 25 ms


# --- providers ---------------------------------------------------------------------------


def test_no_sdk_is_the_api_noop() -> None:
    with global_providers(None):
        with otel.crossing("g", "n") as c:
            assert not c.recording
            with c.verifier("v") as vs:
                vs.record([FAILED])
            with c.policy("p"):
                pass
            c.finish(modified_report())
        assert not otel_trace.get_current_span().get_span_context().is_valid


def test_global_provider_set_after_import_is_used() -> None:
    with global_providers(None), otel.crossing("g", "n") as c:
        c.finish(modified_report())
    later = make_otel()
    with global_providers(later):
        with otel.crossing("g", "n") as c:
            c.finish(modified_report())
        assert len(later.named("trustgate.gate")) == 1
        assert later.counter(M.CROSSINGS) == 1


def test_explicit_providers_win_over_global(otel_sdk: Otel) -> None:
    glob = make_otel()
    with global_providers(glob):
        run_crossing(otel_sdk, modified_report())
    assert glob.spans() == []
    assert len(otel_sdk.named("trustgate.gate")) == 1


# --- nesting and time -------------------------------------------------------------------------


def test_nested_under_plain_outer_span(otel_sdk: Otel) -> None:
    tracer = otel_sdk.tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("request") as outer:
        run_crossing(otel_sdk, modified_report())
    gate = otel_sdk.one("trustgate.gate")
    assert gate.parent is not None
    assert gate.parent.span_id == outer.get_span_context().span_id


def test_thread_pool_children_nest_under_the_verifier(otel_sdk: Otel) -> None:
    with otel.crossing("inspector", "reviewer", tracer_provider=otel_sdk.tracer_provider) as c:

        def verify() -> None:
            with c.verifier("threaded") as vs:
                tracer = otel_sdk.tracer_provider.get_tracer("user-verifier")
                with tracer.start_as_current_span("read file"):
                    pass
                vs.record([PASSED])

        ctx = contextvars.copy_context()
        with ThreadPoolExecutor(1) as pool:
            pool.submit(ctx.run, verify).result()
        c.finish(modified_report())
    gate = otel_sdk.one("trustgate.gate")
    threaded = otel_sdk.one("trustgate.verify threaded")
    inner = otel_sdk.one("read file")
    assert threaded.parent is not None and threaded.parent.span_id == gate.context.span_id
    assert inner.parent is not None and inner.parent.span_id == threaded.context.span_id


def test_verifier_span_nests_even_in_a_thread_without_the_context(otel_sdk: Otel) -> None:
    with otel.crossing("g", "n", tracer_provider=otel_sdk.tracer_provider) as c:

        def verify() -> None:
            with c.verifier("bare-thread") as vs:
                vs.record([PASSED])

        with ThreadPoolExecutor(1) as pool:
            pool.submit(verify).result()
        c.finish(modified_report())
    gate = otel_sdk.one("trustgate.gate")
    v = otel_sdk.one("trustgate.verify bare-thread")
    assert v.parent is not None and v.parent.span_id == gate.context.span_id


async def test_async_concurrent_crossings_keep_their_own_parents(otel_sdk: Otel) -> None:
    tracer = otel_sdk.tracer_provider.get_tracer("app")

    async def one(i: int) -> int:
        with tracer.start_as_current_span(f"run {i}") as outer:
            with otel.crossing(f"gate{i}", "n", tracer_provider=otel_sdk.tracer_provider) as c:
                await asyncio.sleep(0)
                with c.verifier("v") as vs:
                    await asyncio.sleep(0)
                    vs.record([PASSED])
                c.finish(Report(gate=f"gate{i}", node="n", decision="pass", released=True))
            return outer.get_span_context().span_id

    outers = await asyncio.gather(*(one(i) for i in range(20)))
    for i, outer_id in enumerate(outers):
        gate = next(s for s in otel_sdk.spans() if s.name == f"trustgate.gate gate{i}")
        assert gate.parent is not None and gate.parent.span_id == outer_id
    gate_ids = {s.context.span_id for s in otel_sdk.named("trustgate.gate")}
    assert {v.parent.span_id for v in otel_sdk.named("trustgate.verify") if v.parent} == gate_ids


class GraphState(TypedDict, total=False):
    text: str
    log: Annotated[list[str], operator.add]


def _graph(o: Otel, pass_config: bool = True) -> Any:
    """A LangGraph graph whose ``reviewer`` node runs one crossing itself: the gate
    placement the in-node wrapper gives."""

    def write(state: GraphState) -> GraphState:
        return {"text": LIE}

    def reviewer(state: GraphState, config: RunnableConfig) -> GraphState:
        with otel.crossing(
            "inspector",
            "reviewer",
            config=config if pass_config else None,
            tracer_provider=o.tracer_provider,
        ) as c:
            with c.verifier("citation_replay") as vs:
                vs.record([FAILED])
            c.finish(modified_report())
        return {"log": ["reviewed"]}

    b = StateGraph(GraphState)
    b.add_node("writer", write)
    b.add_node("reviewer", reviewer)
    b.add_edge(START, "writer")
    b.add_edge("writer", "reviewer")
    b.add_edge("reviewer", END)
    return b.compile()


def _assert_inside_node(o: Otel, node: str = "reviewer") -> None:
    """Parent = the node's run; trace and time window inside it."""
    gate = o.one("trustgate.gate")
    nodes = [s for s in o.spans() if s.name == node]
    assert len(nodes) == 1, [s.name for s in o.spans()]
    (parent,) = nodes
    assert gate.parent is not None, "gate span is a root"
    assert hexid(gate.parent.span_id) == hexid(parent.context.span_id)
    assert gate.context.trace_id == parent.context.trace_id
    assert parent.start_time is not None and parent.end_time is not None
    assert gate.start_time is not None and gate.end_time is not None
    assert parent.start_time <= gate.start_time <= gate.end_time <= parent.end_time
    verify = o.one("trustgate.verify")
    assert verify.parent is not None and verify.parent.span_id == gate.context.span_id


@pytest.fixture
def openinference(otel_sdk: Otel) -> Iterator[Otel]:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    inst = LangChainInstrumentor()
    with restoring_langchain_patches():
        inst.instrument(tracer_provider=otel_sdk.tracer_provider)
        try:
            yield otel_sdk
        finally:
            inst.uninstrument()


@pytest.fixture
def openllmetry(otel_sdk: Otel, monkeypatch: pytest.MonkeyPatch) -> Iterator[Otel]:
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    monkeypatch.setenv("TRACELOOP_TRACE_CONTENT", "false")
    inst = LangchainInstrumentor()
    with restoring_langchain_patches():
        inst.instrument(
            tracer_provider=otel_sdk.tracer_provider, meter_provider=otel_sdk.meter_provider
        )
        try:
            yield otel_sdk
        finally:
            inst.uninstrument()


def test_inside_the_openinference_node_span(openinference: Otel) -> None:
    _graph(openinference).invoke({"text": ""})
    _assert_inside_node(openinference)


async def test_inside_the_openinference_node_span_async(openinference: Otel) -> None:
    await _graph(openinference).ainvoke({"text": ""})
    _assert_inside_node(openinference)


def test_inside_the_openinference_node_span_without_passing_config(openinference: Otel) -> None:
    _graph(openinference, pass_config=False).invoke({"text": ""})
    _assert_inside_node(openinference)


def test_inside_the_openllmetry_node_span(openllmetry: Otel) -> None:
    # sync and async in one test: OpenLLMetry's uninstrument() does not undo all of its
    # patches, so instrumenting twice in one process loses the node spans
    for run in ("sync", "async"):
        openllmetry.exporter.clear()
        graph = _graph(openllmetry)
        if run == "sync":
            graph.invoke({"text": ""})
        else:
            asyncio.run(graph.ainvoke({"text": ""}))
        _assert_inside_node(openllmetry, "execute_task reviewer")


def test_session_id_from_the_thread(otel_sdk: Otel) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    def reviewer(state: GraphState, config: RunnableConfig) -> GraphState:
        with otel.crossing("g", "reviewer", tracer_provider=otel_sdk.tracer_provider) as c:
            c.finish(Report(gate="g", node="reviewer", decision="pass", released=True))
        return {"log": ["ok"]}

    b = StateGraph(GraphState)
    b.add_node("reviewer", reviewer)
    b.add_edge(START, "reviewer")
    b.compile(checkpointer=InMemorySaver()).invoke({}, {"configurable": {"thread_id": "t-42"}})
    assert attrs_of(otel_sdk.one("trustgate.gate"))[OI.SESSION_ID] == "t-42"


# --- interrupts -------------------------------------------------------------------------------


def test_interrupt_exports_nothing_and_resume_gives_one_span(otel_sdk: Otel) -> None:
    with (
        pytest.raises(GraphInterrupt),
        otel.crossing(
            "inspector", "reviewer", tracer_provider=otel_sdk.tracer_provider,
            meter_provider=otel_sdk.meter_provider,
        ) as c,
    ):  # fmt: skip
        with c.verifier("citation_replay") as vs:
            vs.record([FAILED])
        raise GraphInterrupt(())
    assert otel_sdk.spans() == []
    assert otel_sdk.counter(M.CROSSINGS) == 0
    run_crossing(otel_sdk, modified_report())  # the resumed crossing
    assert len(otel_sdk.named("trustgate.gate")) == 1
    assert otel_sdk.counter(M.CROSSINGS) == 1


def test_review_resume_lands_in_the_resumed_invocation(openinference: Otel) -> None:
    """The node re-runs on resume: its crossing span is in the resumed run's trace."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command, interrupt

    o = openinference

    def reviewer(state: GraphState, config: RunnableConfig) -> GraphState:
        with otel.crossing("inspector", "reviewer", tracer_provider=o.tracer_provider) as c:
            with c.verifier("citation_replay") as vs:
                vs.record([FAILED])
            answer = interrupt({"trustgate": "review"})
            c.finish(
                Report(
                    gate="inspector",
                    node="reviewer",
                    findings=[FAILED],
                    decision="reviewed",
                    overrides=[OverrideRecord(kind="review", target="x", reason=str(answer))],
                    released=True,
                )
            )
        return {"log": ["reviewed"]}

    b = StateGraph(GraphState)
    b.add_node("reviewer", reviewer)
    b.add_edge(START, "reviewer")
    graph = b.compile(checkpointer=InMemorySaver())
    cfg: RunnableConfig = {"configurable": {"thread_id": "t1"}}
    graph.invoke({"text": LIE}, cfg)
    assert o.named("trustgate") == []
    first_traces = {s.context.trace_id for s in o.spans()}
    o.exporter.clear()
    graph.invoke(Command(resume="approved"), cfg)
    gate = o.one("trustgate.gate")
    assert gate.context.trace_id not in first_traces
    _assert_inside_node(o)
    assert attrs_of(gate)[C.DECISION] == "reviewed"


def test_finish_twice_is_harmless(otel_sdk: Otel) -> None:
    with otel.crossing("g", "n", tracer_provider=otel_sdk.tracer_provider) as c:
        c.finish(modified_report())
        c.finish(modified_report())
    assert len(otel_sdk.named("trustgate.gate")) == 1


def test_block_without_finish_still_ends_the_span(otel_sdk: Otel) -> None:
    with otel.crossing("g", "n", tracer_provider=otel_sdk.tracer_provider):
        pass
    assert len(otel_sdk.named("trustgate.gate")) == 1


# --- links, explicit parents -----------------------------------------------------------------


def test_link_to_another_span(otel_sdk: Otel) -> None:
    tracer = otel_sdk.tracer_provider.get_tracer("app")
    assert otel.span_link() is None  # nothing traced
    with tracer.start_as_current_span("guarded node") as node:
        link = otel.span_link()
    assert link is not None
    with tracer.start_as_current_span("gate task") as task:
        run_crossing(otel_sdk, modified_report(), link=link)
    gate = otel_sdk.one("trustgate.gate")
    assert gate.parent is not None and gate.parent.span_id == task.get_span_context().span_id
    [lnk] = gate.links
    assert lnk.context.span_id == node.get_span_context().span_id


def test_parent_forms(otel_sdk: Otel) -> None:
    tracer = otel_sdk.tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("a") as a:
        pass
    for parent in (a, a.get_span_context(), otel_trace.set_span_in_context(a)):
        otel_sdk.exporter.clear()
        run_crossing(otel_sdk, modified_report(), parent=parent)
        gate = otel_sdk.one("trustgate.gate")
        assert gate.parent is not None and gate.parent.span_id == a.get_span_context().span_id
    otel_sdk.exporter.clear()
    with tracer.start_as_current_span("outer") as outer:
        run_crossing(otel_sdk, modified_report(), parent={"trace_id": "zz", "span_id": 1})
    gate = otel_sdk.one("trustgate.gate")
    assert gate.parent is not None
    assert gate.parent.span_id == outer.get_span_context().span_id


# --- pipeline runs ------------------------------------------------------------------------------


def test_pipeline_run_is_the_root_of_its_crossings(otel_sdk: Otel) -> None:
    halted = Report(gate="g", node="n", decision="halted", released=False, findings=[FAILED])
    with (
        pytest.raises(GateHalted),
        otel.pipeline_run("code-review", thread_id="t-9", tracer_provider=otel_sdk.tracer_provider),
    ):
        run_crossing(otel_sdk, modified_report())
        run_crossing(otel_sdk, modified_report())
        raise GateHalted(halted)
    run = otel_sdk.one("trustgate.run")
    assert run.name == "trustgate.run code-review"
    assert run.parent is None
    assert attrs_of(run)[OI.SESSION_ID] == "t-9"
    assert attrs_of(run)["trustgate.run.outcome"] == "halted"
    assert run.status.status_code == StatusCode.UNSET  # a halt is an outcome
    # what the run's gates did is the first thing its trace view shows
    assert attrs_of(run)[OI.OUTPUT_VALUE] == (
        f"halted: 2 crossing(s), 2 acted on (2 modified)\n"
        f"inspector — {SUMMARY}\ninspector — {SUMMARY}"
    )
    for gate in otel_sdk.named("trustgate.gate"):
        assert gate.parent is not None and gate.parent.span_id == run.context.span_id


def test_global_providers_helper_restores_what_was_there() -> None:
    outer, inner = make_otel(), make_otel()
    with global_providers(outer):
        with global_providers(inner):
            assert otel_trace.get_tracer_provider() is inner.tracer_provider
        assert otel_trace.get_tracer_provider() is outer.tracer_provider
