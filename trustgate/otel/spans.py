"""One span per crossing, one child span per verifier run, one event per override.

The gate calls three things (see :func:`crossing`)::

    with otel.crossing(gate.name, node, config=config, attempt=attempt) as c:
        for v in verifiers:
            with c.verifier(v.name) as vs:
                vs.record(v.verify(claims, evidence))
        with c.policy("redact"):            # optional: policy work worth a span
            ...
        c.finish(report)                     # decision, overrides, status, metrics

The span is parented to the run that performs the crossing: the span a LangChain
tracer keeps for the running task (found through ``config``), else the current
OpenTelemetry span. A gate running inside the guarded node's own task therefore nests
in that node's span, inside its time window, and after an interrupt and resume in the
resumed invocation's trace. ``link=`` adds an OpenTelemetry link to another span (the
guarded node's, when the gate runs in a task of its own).

Only what the gate read (the report's claims) and changed (its overrides) is measured,
so the cost follows what is checked, not the size of the node's update.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from contextvars import Token
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from opentelemetry import context as otel_context
from opentelemetry import metrics as otel_metrics
from opentelemetry import trace as otel_trace
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode
from pydantic_core import to_json

from trustgate.otel import _parent
from trustgate.otel._content import OVERRIDE_SPANS_ENV, ContentPolicy, content_policy, env_flag
from trustgate.otel._util import (
    NOOP_TRACER,
    exception_attrs,
    halt_report,
    is_bubble_up,
    tracer_for,
    type_name,
)
from trustgate.otel.metrics import Instruments, instruments
from trustgate.otel.runs import current_run
from trustgate.otel.semconv import CrossingAttributes as C
from trustgate.otel.semconv import EvaluationAttributes as E
from trustgate.otel.semconv import EventNames, SpanNames
from trustgate.otel.semconv import JudgeAttributes as J
from trustgate.otel.semconv import OpenInferenceAttributes as OI
from trustgate.otel.semconv import OverrideAttributes as O
from trustgate.otel.semconv import SpanKindValues as K
from trustgate.otel.semconv import VerifierAttributes as V

if TYPE_CHECKING:
    from trustgate._findings import Finding
    from trustgate._report import Report

__all__ = [
    "CrossingSpan",
    "VerifierSpan",
    "crossing",
    "summarise",
]

Outcome = Literal["pass", "fail", "error"]

_DEFAULT_MAX_EVENTS = 128
_MAX_SUMMARY_PARTS = 5
_MAX_CODES = 5
_MAX_DESCRIPTION = 1024


# --- verifiers and policies -----------------------------------------------------------

_JUDGE_CODE = "judge"
"""The passing finding a draft check with a sentence judge adds: its counts."""
_JUDGE_COUNTS = (
    (J.SENTENCE_COUNT, "judge_sentences"),
    (J.CACHED_COUNT, "judge_cached"),
    (J.CALL_COUNT, "judge_calls"),
    (J.DELETION_COUNT, "judge_deletions"),
)


def _judge_attributes(f: Finding) -> dict[str, Any]:
    """The judge's counts from its finding (its name, and integers only)."""
    d = f.detail
    out: dict[str, Any] = {
        attr: d[key]
        for attr, key in _JUDGE_COUNTS
        if isinstance(d.get(key), int) and not isinstance(d.get(key), bool)
    }
    if isinstance(d.get("judge"), str):
        out[J.NAME] = d["judge"]
    return out


@dataclass(slots=True)
class VerifierSpan:
    """One verifier run; call :meth:`record` with the findings it returned."""

    span: Span
    name: str
    crossing: CrossingSpan | None = None
    outcome: Outcome = "pass"
    finding_count: int = 0
    failure_count: int = 0
    warning_count: int = 0
    codes: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    error_type: str | None = None
    ended_ns: int = 0
    explained: str | None = field(default=None, repr=False, compare=False)
    """:meth:`explanation` as last written to the span (it is read again by finish)."""

    def record(self, findings: Iterable[Finding]) -> None:
        """Outcome (``pass``/``fail``) and counts from the verifier's findings.

        Example:
            ```python
            with c.verifier(v.name) as vs:
                vs.record(v.verify(claims, evidence))
            ```
        """
        c = self.crossing
        if c is not None and c.noop and c.instruments.noop:
            return  # nothing records: the API's no-op costs nothing per finding
        total = failed = warned = 0
        codes: dict[str, int] = {}
        identity = c.identity if c is not None else None
        capture = self.crossing is not None and self.crossing.content.capture
        judged: Finding | None = None
        for f in findings:
            total += 1
            if f.code == _JUDGE_CODE and f.status == "pass":
                judged = f
            if identity is not None and f.verifier != self.name:
                identity[f.verifier] = self.name
            if f.status == "fail":
                if f.severity == "block":
                    failed += 1
                    codes[f.code] = codes.get(f.code, 0) + 1
                    if capture:
                        self.messages.append(f.message)
                else:
                    warned += 1
        self.finding_count, self.failure_count, self.warning_count = total, failed, warned
        self.codes = [f"{c}×{n}" if n > 1 else c for c, n in codes.items()]
        self.outcome = "fail" if failed else "pass"
        if self.span.is_recording():
            explanation = self.explained = self.explanation()
            self.span.set_attributes(
                {
                    V.OUTCOME: self.outcome,
                    V.FINDING_COUNT: total,
                    V.FAILURE_COUNT: failed,
                    V.WARNING_COUNT: warned,
                    E.OI_NAME: self.name,
                    E.OI_LABEL: self.label,
                    E.OI_SCORE: self.score,
                    E.OI_EXPLANATION: explanation,
                    OI.OUTPUT_VALUE: explanation,
                    OI.OUTPUT_MIME_TYPE: "text/plain",
                }
            )
            if judged is not None:
                self.span.set_attributes(_judge_attributes(judged))

    @property
    def label(self) -> str:
        return "pass" if self.outcome == "pass" else "fail"

    @property
    def score(self) -> float:
        return 1.0 if self.outcome == "pass" else 0.0

    def explanation(self) -> str:
        """Content-free: counts and finding codes (messages too when capture is on)."""
        if self.outcome == "error":
            text = f"error: {self.error_type or 'exception'}; a verifier that raised fails"
        elif self.failure_count:
            text = f"{self.failure_count} of {self.finding_count} finding(s) failed: " + ", ".join(
                self.codes
            )
        else:
            text = f"{self.finding_count} finding(s), none failed"
            if self.warning_count:
                text += f" ({self.warning_count} warning(s))"
        if self.messages and self.crossing is not None:
            text = self.crossing.content.text(text + " — " + " | ".join(self.messages))[0]
        return text


class _VerifierScope(AbstractContextManager[VerifierSpan]):
    __slots__ = ("_crossing", "_name", "_token", "_vs")

    def __init__(self, crossing: CrossingSpan, name: str) -> None:
        self._crossing, self._name = crossing, name
        self._token: Token[otel_context.Context] | None = None

    def __enter__(self) -> VerifierSpan:
        c = self._crossing
        if c.noop:
            self._vs = VerifierSpan(span=otel_trace.INVALID_SPAN, name=self._name, crossing=c)
            c.verifiers.append(self._vs)
            return self._vs
        attrs: dict[str, Any] = {
            OI.SPAN_KIND: K.EVALUATOR,
            V.NAME: self._name,
            C.GATE_NAME: c.gate,
        }
        span = c.tracer.start_span(
            f"{SpanNames.VERIFIER} {self._name}", context=c.context, attributes=attrs
        )
        self._vs = VerifierSpan(span=span, name=self._name, crossing=c)
        c.verifiers.append(self._vs)
        # current in this thread, so spans the verifier opens nest under it
        self._token = otel_context.attach(otel_trace.set_span_in_context(span, c.context))
        return self._vs

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        vs = self._vs
        vs.ended_ns = time.time_ns()
        if exc is not None and not is_bubble_up(exc):
            vs.outcome = "error"
            vs.error_type = type(exc).__name__
            if vs.span.is_recording():
                content = self._crossing.content
                vs.span.add_event(EventNames.EXCEPTION, exception_attrs(exc, content))
                vs.span.set_status(Status(StatusCode.ERROR, f"error: {vs.error_type}"))
                explanation = vs.explained = vs.explanation()
                vs.span.set_attributes(
                    {
                        V.OUTCOME: "error",
                        OI.ERROR_TYPE: type_name(exc),
                        E.OI_NAME: vs.name,
                        E.OI_LABEL: "fail",
                        E.OI_SCORE: 0.0,
                        E.OI_EXPLANATION: explanation,
                        OI.OUTPUT_VALUE: explanation,
                        OI.OUTPUT_MIME_TYPE: "text/plain",
                    }
                )
        if self._token is not None:
            otel_context.detach(self._token)
            self._token = None
            self._crossing.pending.append((vs.span, vs.ended_ns))


class _PolicyScope(AbstractContextManager[Span]):
    __slots__ = ("_crossing", "_name", "_span", "_token")

    def __init__(self, crossing: CrossingSpan, name: str) -> None:
        self._crossing, self._name = crossing, name
        self._token: Token[otel_context.Context] | None = None
        self._span: Span = otel_trace.INVALID_SPAN

    def __enter__(self) -> Span:
        c = self._crossing
        if c.noop:
            return self._span
        self._span = c.tracer.start_span(
            f"{SpanNames.POLICY} {self._name}",
            context=c.context,
            attributes={
                OI.SPAN_KIND: K.GUARDRAIL,
                V.POLICY_NAME: self._name,
                C.GATE_NAME: c.gate,
            },
        )
        self._token = otel_context.attach(otel_trace.set_span_in_context(self._span, c.context))
        return self._span

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is None:
            return
        otel_context.detach(self._token)
        self._token = None
        if exc is not None and not is_bubble_up(exc) and halt_report(exc) is None:
            self._span.add_event(EventNames.EXCEPTION, exception_attrs(exc, self._crossing.content))
            self._span.set_status(Status(StatusCode.ERROR, f"error: {type(exc).__name__}"))
            self._span.set_attribute(OI.ERROR_TYPE, type_name(exc))
        self._crossing.pending.append((self._span, time.time_ns()))


# --- the crossing -----------------------------------------------------------------------


@dataclass(slots=True)
class CrossingSpan:
    """The open span of one crossing, as yielded by :func:`crossing`."""

    span: Span
    gate: str
    node: str
    context: otel_context.Context
    content: ContentPolicy
    override_spans: bool
    max_events: int | None
    tracer: otel_trace.Tracer
    instruments: Instruments
    noop: bool = False
    session_id: str | None = None
    attempt: int | None = None
    """The attempt the span was started with (an attribute already on it)."""
    started: float = field(default_factory=time.perf_counter)
    finished: bool = False
    verifiers: list[VerifierSpan] = field(default_factory=list)
    identity: dict[str, str] = field(default_factory=dict)
    """A finding's verifier name → the name the gate ran that verifier under."""
    # Child spans wait here and are ended by finish() with their own end times, so a
    # crossing paused by an interrupt exports nothing at all.
    pending: list[tuple[Span, int]] = field(default_factory=list)

    @property
    def recording(self) -> bool:
        return self.span.is_recording()

    def verifier(self, name: str) -> AbstractContextManager[VerifierSpan]:
        """A ``trustgate.verify {name}`` child span (EVALUATOR) around one verifier run.

        An exception escaping the block marks the run ``error`` and is re-raised for
        the gate to handle (a verifier that raises is a failed inspection).
        """
        return _VerifierScope(self, name)

    def policy(self, name: str) -> AbstractContextManager[Span]:
        """A ``trustgate.policy {name}`` child span around policy work (a redaction)."""
        return _PolicyScope(self, name)

    def finish(self, report: Report, *, exception: BaseException | None = None) -> None:
        """Record the crossing's outcome, end its span and count its metrics (once).

        Call it on every path that produces a report, halts included. ``exception``
        is what crashed the crossing, if anything did.
        """
        if self.finished:
            return
        self.finished = True
        if self.noop and self.instruments.noop:
            return
        names = _Names(self.identity)
        if not self.noop and self.span.is_recording():
            summary = _annotate(self, report, names, exception)
            run = current_run.get()
            if run is not None:
                run.crossings.append((self.gate, summary, report.decision))
            self._end_pending()
            if self.override_spans and report.overrides:
                _override_spans(self, report, names)
            self.span.end()
        if not self.instruments.noop:
            self.instruments.record(
                self.gate,
                self.node,
                "error" if exception is not None else report.decision,
                time.perf_counter() - self.started,
                ((names(f.verifier), f.code, f.status, f.severity) for f in report.findings),
                (o.kind for o in report.overrides),
            )

    def _end_pending(self) -> None:
        pending, self.pending = self.pending, []
        for span, end in pending:
            span.end(end_time=end)


class _Names:
    """Maps a finding's verifier name to the gate's name for that verifier."""

    __slots__ = ("_map",)

    def __init__(self, mapping: Mapping[str, str]) -> None:
        self._map = mapping

    def __call__(self, name: str | None) -> str:
        if not name:
            return ""
        return self._map.get(name, name)


def _distinct(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def _override_codes(
    verifier: str, failures: Sequence[tuple[str, str]], all_codes: Sequence[str]
) -> list[str]:
    own = _distinct(f"{v}/{c}" for v, c in failures if v == verifier)
    return (own or list(all_codes))[:_MAX_CODES]


def summarise(
    decision: str,
    overrides: Sequence[tuple[str, str, Sequence[str]]],
    failure_codes: Sequence[str],
    verifiers: Sequence[str],
    finding_count: int,
    approval: str | None = None,
) -> str:
    """The content-free one-line summary of a crossing (``output.value``).

    ``overrides`` are (kind, target, codes). Example:
    ``modified: field_override review.verdict (citation_replay/content_mismatch)``.
    """
    if overrides:
        groups: dict[tuple[str, str, tuple[str, ...]], int] = {}
        for kind, target, codes in overrides:
            key = (kind, target, tuple(codes))
            groups[key] = groups.get(key, 0) + 1
        parts = []
        for (kind, target, codes), n in list(groups.items())[:_MAX_SUMMARY_PARTS]:
            part = f"{kind} {target}"
            if codes:
                part += f" ({', '.join(codes)})"
            parts.append(part + (f" ×{n}" if n > 1 else ""))
        if len(groups) > _MAX_SUMMARY_PARTS:
            parts.append(f"+{len(groups) - _MAX_SUMMARY_PARTS} more")
        text = f"{decision}: " + "; ".join(parts)
    elif decision == "pass":
        checked = ", ".join(verifiers) or "no verifier"
        text = f"pass: {finding_count} finding(s) from {checked}, none blocking"
    else:
        text = f"{decision}: " + (", ".join(failure_codes[:_MAX_CODES]) or "no failed finding")
    if approval:
        text += f"; reviewed by a person: {approval}"
    return text


def _annotate(
    c: CrossingSpan, report: Report, names: _Names, exception: BaseException | None
) -> str:
    span, content = c.span, c.content
    findings, overrides_ = report.findings, report.overrides
    # One pass over the findings: what failed (and whose), who ran, and the findings of
    # verifiers that did not run in this crossing (a crossing restored after review).
    ran: dict[str, None] = {v.name: None for v in c.verifiers if v.name}
    runs = set(ran)
    failed_by: dict[str, None] = {}
    codes: dict[str, None] = {}
    own_codes: dict[str, dict[str, None]] = {}
    unrun: dict[str, list[Finding]] = {}
    for f in findings:
        name = names(f.verifier)
        if name:
            ran[name] = None
            if name not in runs:
                unrun.setdefault(name, []).append(f)
        if f.status == "fail" and f.severity == "block":
            code = f"{name}/{f.code}"
            codes[code] = None
            own_codes.setdefault(name, {})[code] = None
            if name:
                failed_by[name] = None
    for v in c.verifiers:
        if v.outcome == "error" and v.name:
            failed_by[v.name] = None
    failure_codes, verifiers, failed_verifiers = list(codes), list(ran), list(failed_by)
    overrides = [
        (
            o.kind,
            o.target,
            list(own_codes.get(names(o.verifier)) or failure_codes)[:_MAX_CODES],
        )
        for o in overrides_
    ]
    decision = "error" if exception is not None else report.decision
    approval = report.approval.decision if report.approval is not None else None
    summary = summarise(decision, overrides, failure_codes, verifiers, len(findings), approval)
    kinds = _distinct(o.kind for o in overrides_)
    session = c.session_id or report.thread_id
    attrs: dict[str, Any] = {
        C.DECISION: decision,
        C.RELEASED: report.released,
        C.SUMMARY: summary,
        C.REPORT_ID: report.id,
        C.CLAIM_COUNT: len(report.claims),
        C.FINDING_COUNT: len(findings),
        C.FAILURE_CODES: failure_codes,
        C.VERIFIERS: verifiers,
        C.FAILED_VERIFIERS: failed_verifiers,
        C.OVERRIDE_COUNT: len(overrides_),
        C.OVERRIDE_KINDS: kinds,
        C.OVERRIDE_TARGETS: _distinct(o.target for o in overrides_),
        OI.OUTPUT_VALUE: summary,
        OI.OUTPUT_MIME_TYPE: "text/plain",
        OI.TAG_TAGS: [
            "trustgate",
            f"gate:{c.gate}",
            f"decision:{decision}",
            *(f"override:{k}" for k in kinds),
            *(f"failed:{v}" for v in failed_verifiers),
        ],
        OI.METADATA: to_json(
            {
                "gate": c.gate,
                "node": c.node,
                "decision": decision,
                "released": report.released,
                "override_count": len(overrides_),
                "override_kinds": kinds,
                "failed_verifiers": failed_verifiers,
                "attempt": report.attempt,
            }
        ).decode("utf-8"),
    }
    configured = _distinct(_configured_value(o.after) for o in overrides_ if o.configured)
    if configured:
        attrs[C.OVERRIDE_VALUES] = configured
    # (what the span was started with is on it already: not set twice)
    if report.attempt != c.attempt:
        attrs[C.ATTEMPT] = report.attempt
    if report.run_id:
        attrs[C.RUN_ID] = report.run_id
    if session and session != c.session_id:
        attrs[OI.SESSION_ID] = session
    attrs.update(_input_attrs(c, report))
    if report.approval is not None:
        attrs[C.APPROVAL_DECISION] = report.approval.decision
        if content.capture and report.approval.who:
            attrs[C.APPROVAL_APPROVER] = report.approval.who
    if content.capture and report.error:
        attrs[C.ERROR_MESSAGE] = content.text(report.error)[0]
    if exception is not None:
        attrs[OI.ERROR_TYPE] = type_name(exception)
    elif decision == "halted":
        attrs[OI.ERROR_TYPE] = "verifier_error" if report.error is not None else decision

    # events: one evaluation result per verifier run, then one per override
    limit = _event_limit(span, c.max_events)
    evaluations = _evaluations(c, unrun)
    crashed = exception is not None or report.error is not None
    room = max(0, limit - len(evaluations) - (1 if crashed else 0))
    emitted = min(len(overrides_), room)
    attrs[C.DROPPED_OVERRIDE_EVENTS] = len(overrides_) - emitted
    span.set_attributes(attrs)  # once: each call takes the span's lock and checks it
    for name, event_attrs, when in evaluations[:limit]:
        span.add_event(name, event_attrs, timestamp=when or None)
    for o, (_kind, _target, ocodes) in zip(overrides_[:emitted], overrides, strict=False):
        event = _override_attrs(o, ocodes, names, content)
        span.add_event(f"{EventNames.OVERRIDE} {o.kind}", event)

    # ERROR is for what stopped the run (a halt) or broke it (a crash); an override
    # that worked is the gate doing its job: OK, with its events saying what it did
    if exception is not None:
        span.add_event(EventNames.EXCEPTION, exception_attrs(exception, content))
        span.set_status(Status(StatusCode.ERROR, f"error: {type(exception).__name__}"))
    elif decision == "halted":
        span.set_status(Status(StatusCode.ERROR, summary[:_MAX_DESCRIPTION]))
    elif decision != "pass":
        span.set_status(Status(StatusCode.OK))
    return summary


def _input_attrs(c: CrossingSpan, report: Report) -> dict[str, Any]:
    """What the gate read: the claims (captured), or their count (and keyed digest)."""
    content = c.content
    n = len(report.claims)
    if content.capture:
        text, mime = content.text(report.claims)
        return {OI.INPUT_VALUE: text, OI.INPUT_MIME_TYPE: mime}
    attrs: dict[str, Any] = {
        OI.INPUT_VALUE: f"{n} claim(s) from node {c.node} (content not captured)",
        OI.INPUT_MIME_TYPE: "text/plain",
    }
    if content.key is not None and report.claims:
        digest = content.digest(_serialised(report.claims))
        if digest is not None:
            attrs[C.CLAIMS_DIGEST] = digest
    return attrs


def _serialised(value: Any) -> str:
    from trustgate.otel._content import serialise

    return serialise(value)[0]


def _evaluations(
    c: CrossingSpan, unrun: Mapping[str, list[Finding]]
) -> list[tuple[str, dict[str, Any], int]]:
    """One ``gen_ai.evaluation.result`` per verifier: from the verifier runs, else (a
    crossing restored after review, whose verifiers did not run again) from the
    findings of each verifier that did not run (``unrun``, by the gate's name)."""
    out: list[tuple[str, dict[str, Any], int]] = []
    for v in c.verifiers:
        attrs: dict[str, Any] = {
            E.GEN_AI_NAME: v.name,
            E.GEN_AI_SCORE_LABEL: v.label,
            E.GEN_AI_SCORE_VALUE: v.score,
            E.GEN_AI_EXPLANATION: v.explained if v.explained is not None else v.explanation(),
        }
        if v.outcome == "error":
            attrs[OI.ERROR_TYPE] = v.error_type or "exception"
        out.append((EventNames.EVALUATION_RESULT, attrs, v.ended_ns))
    for name, findings in unrun.items():
        vs = VerifierSpan(span=otel_trace.INVALID_SPAN, name=name, crossing=c)
        vs.record(findings)
        out.append(
            (
                EventNames.EVALUATION_RESULT,
                {
                    E.GEN_AI_NAME: name,
                    E.GEN_AI_SCORE_LABEL: vs.label,
                    E.GEN_AI_SCORE_VALUE: vs.score,
                    E.GEN_AI_EXPLANATION: vs.explanation(),
                },
                0,
            )
        )
    return out


def _override_attrs(
    o: Any, codes: Sequence[str], names: _Names, content: ContentPolicy
) -> dict[str, Any]:
    before_len, before_digest, before = content.measure(o.before)
    after_len, after_digest, after = content.measure(o.after)
    attrs: dict[str, Any] = {
        O.KIND: o.kind,
        O.TARGET: o.target,
        O.VERIFIER: names(o.verifier),
        O.CODES: list(codes),
        O.BEFORE_LENGTH: before_len,
        O.AFTER_LENGTH: after_len,
    }
    if before_digest is not None:
        attrs[O.BEFORE_DIGEST] = before_digest
    if after_digest is not None:
        attrs[O.AFTER_DIGEST] = after_digest
    if o.configured:
        attrs[O.VALUE] = _configured_value(o.after)
    if content.capture:
        if before is not None:
            attrs[O.BEFORE] = before
        if after is not None:
            attrs[O.AFTER] = after
        attrs[O.REASON] = content.text(o.reason)[0]
    return attrs


_MAX_VALUE = 256


def _configured_value(value: Any) -> str:
    """An override's configured value as an attribute (bounded): a string as it is,
    anything else as JSON."""
    text = value if isinstance(value, str) else to_json(value).decode("utf-8")
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 1] + "…"


def _override_spans(c: CrossingSpan, report: Report, names: _Names) -> None:
    parent = otel_trace.set_span_in_context(c.span)
    failures = [(names(f.verifier), f.code) for f in report.findings if f.blocking]
    all_codes = _distinct(f"{v}/{code}" for v, code in failures)
    for o in report.overrides:
        now = time.time_ns()
        codes = _override_codes(names(o.verifier), failures, all_codes)
        attrs = {OI.SPAN_KIND: K.GUARDRAIL, **_override_attrs(o, codes, names, c.content)}
        child = c.tracer.start_span(
            f"{SpanNames.OVERRIDE} {o.kind}",
            context=parent,
            kind=SpanKind.INTERNAL,
            start_time=now,
            attributes=attrs,
        )
        child.end(end_time=now)


def _event_limit(span: Span, explicit: int | None) -> int:
    if explicit is not None:
        return max(0, explicit)
    limits = getattr(span, "_limits", None)
    limit = getattr(limits, "max_events", None)
    return limit if isinstance(limit, int) and limit >= 0 else _DEFAULT_MAX_EVENTS


def _thread_id(config: Mapping[str, Any] | None) -> str | None:
    if config is None:
        return None
    value = (config.get("configurable") or {}).get("thread_id")
    return None if value is None else str(value)


def crossing(
    gate: str,
    node: str,
    *,
    config: Mapping[str, Any] | None = None,
    attempt: int | None = None,
    link: Any = None,
    parent: Any = None,
    parent_run_id: Any = None,
    tracer_provider: otel_trace.TracerProvider | None = None,
    meter_provider: otel_metrics.MeterProvider | None = None,
    capture_content: bool | None = None,
    max_content_length: int | None = None,
    content_key: bytes | str | None = None,
    override_spans: bool | None = None,
    max_events: int | None = None,
) -> AbstractContextManager[CrossingSpan]:
    """Open the ``trustgate.gate {gate}`` span (GUARDRAIL) of one crossing, current in it.

    Args:
        gate: the gate's name.
        node: the guarded node's name.
        config: the running task's ``RunnableConfig`` (``None``: the one LangChain keeps
            for the running node). Names the parent run and the thread (``session.id``).
        attempt: the re-render attempt, from 1.
        link: a span to link to (a :func:`span_link` dict, ``Span`` or ``SpanContext``),
            such as the guarded node's when the gate runs in a task of its own.
        parent: an explicit parent, overriding the one found through ``config``.
        parent_run_id: a LangChain run id to nest under, overriding the config's.
        tracer_provider: default the global provider; without an SDK nothing records.
        meter_provider: default the global provider.
        capture_content: record text (claims, before/after, reasons, messages, names);
            default ``TRUSTGATE_CAPTURE_CONTENT``, off.
        max_content_length: truncation of captured text (``TRUSTGATE_CONTENT_MAX_LENGTH``).
        content_key: key for digests of what was read and changed (default
            ``TRUSTGATE_CONTENT_KEY``; none: no digests).
        override_spans: also emit each override as a zero-length child span (default
            ``TRUSTGATE_OVERRIDE_SPANS``).
        max_events: at most this many events (default: the span's event limit).

    Example:
        ```python
        with otel.crossing("inspector", "reviewer", config=config) as c:
            with c.verifier("citation_replay") as vs:
                vs.record(findings)
            c.finish(report)
        ```
    """
    return _CrossingScope(
        gate,
        node,
        config,
        attempt,
        link,
        parent,
        parent_run_id,
        tracer_provider,
        meter_provider,
        capture_content,
        max_content_length,
        content_key,
        override_spans,
        max_events,
    )


class _CrossingScope(AbstractContextManager[CrossingSpan]):
    """The context manager behind :func:`crossing` (a class: it is on the hot path)."""

    __slots__ = (
        "_args",
        "_handle",
        "_token",
    )

    def __init__(self, *args: Any) -> None:
        self._args = args
        self._token: Token[otel_context.Context] | None = None

    def __enter__(self) -> CrossingSpan:
        (
            gate,
            node,
            config,
            attempt,
            link,
            parent,
            parent_run_id,
            tracer_provider,
            meter_provider,
            capture,
            limit,
            key,
            override_spans,
            max_events,
        ) = self._args
        tracer = tracer_for(tracer_provider)
        inst = instruments(meter_provider)
        if tracer is NOOP_TRACER:
            # no SDK: nothing records, so no parent lookup, no attributes, no context
            self._handle = CrossingSpan(
                span=otel_trace.INVALID_SPAN,
                gate=gate,
                node=node,
                context=otel_context.get_current(),
                content=_NO_CONTENT,
                override_spans=False,
                max_events=max_events,
                tracer=tracer,
                instruments=inst,
                noop=True,
            )
            return self._handle
        config = _parent.run_config(config)
        parent_ctx = _parent.explicit_context(parent) if parent is not None else None
        if parent_ctx is None:
            parent_ctx = _parent.parent_context(config, parent_run_id=parent_run_id)
        content = content_policy(capture, limit, key)
        session = _thread_id(config)
        attrs: dict[str, Any] = {
            OI.SPAN_KIND: K.GUARDRAIL,
            C.GATE_NAME: gate,
            C.NODE_NAME: node,
        }
        if attempt is not None:
            attrs[C.ATTEMPT] = attempt
        if session:
            attrs[OI.SESSION_ID] = session
        linked = _parent.span_context_of(link)
        span = tracer.start_span(
            f"{SpanNames.CROSSING} {gate}",
            context=parent_ctx,
            kind=SpanKind.INTERNAL,
            attributes=attrs,
            links=[Link(linked, {C.NODE_NAME: node})] if linked is not None else None,
        )
        ctx = otel_trace.set_span_in_context(span, parent_ctx)
        self._handle = CrossingSpan(
            span=span,
            gate=gate,
            node=node,
            context=ctx,
            content=content,
            override_spans=env_flag(OVERRIDE_SPANS_ENV)
            if override_spans is None
            else bool(override_spans),
            max_events=max_events,
            tracer=tracer,
            instruments=inst,
            session_id=session,
            attempt=attempt,
        )
        self._token = otel_context.attach(ctx)
        return self._handle

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        handle = self._handle
        if self._token is not None:
            otel_context.detach(self._token)
            self._token = None
        if handle.finished:
            return
        if exc is not None and is_bubble_up(exc):
            # paused (a review interrupt): the crossing runs again on resume and
            # finishes there, in the resumed invocation's trace; nothing is exported
            handle.pending.clear()
            handle.finished = True
            return
        if exc is not None:
            halted = halt_report(exc)
            if halted is not None:  # a halt is an outcome
                handle.finish(halted)
                return
            from trustgate._report import Report

            handle.finish(
                Report(gate=handle.gate, node=handle.node, decision="halted", released=False),
                exception=exc,
            )
            return
        # the gate never called finish(): close the span without a decision
        handle.finished = True
        if not handle.noop:
            handle._end_pending()
            handle.span.end()


_NO_CONTENT = ContentPolicy(capture=False, limit=1, key=None)
