"""Every name trustgate writes to OpenTelemetry, as constants: one name, one type, one meaning.

In the style of OpenInference's ``semconv`` module, so a dashboard, a filter or a test
can import the name instead of retyping it. The rules the names follow:

- each name has exactly one type and one meaning wherever it appears (span, event,
  metric);
- arrays have plural names (``..._kinds``, ``..._verifiers``), scalars singular ones;
- no name is also a namespace: ``trustgate.override.before_length`` sits beside
  ``trustgate.override.before`` (captured text), never below it, so backends that nest
  dotted names (Phoenix) never see a value and a namespace collide;
- a verifier is named by the name the gate ran it under, everywhere: span name,
  ``trustgate.verifier.name``, ``trustgate.crossing.failed_verifiers``,
  ``trustgate.override.verifier``, the metrics and the evaluation events.

Names reused from OpenInference (``openinference.span.kind``, ``input.value``,
``session.id``, ``tag.tags``, ``metadata``, ``evaluation.*``) and from the OpenTelemetry
semantic conventions (``error.type``, ``gen_ai.evaluation.*``) keep their published
meaning.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CrossingAttributes",
    "EvaluationAttributes",
    "EventNames",
    "JudgeAttributes",
    "MetricNames",
    "OpenInferenceAttributes",
    "OverrideAttributes",
    "RunAttributes",
    "SpanKindValues",
    "SpanNames",
    "VerifierAttributes",
]


class SpanNames:
    """Span names; the variable part (gate, verifier, kind, pipeline) follows a space."""

    CROSSING: Final = "trustgate.gate"
    """``trustgate.gate {gate}``: one per crossing (OpenInference kind GUARDRAIL)."""
    VERIFIER: Final = "trustgate.verify"
    """``trustgate.verify {verifier}``: one per verifier run (EVALUATOR)."""
    POLICY: Final = "trustgate.policy"
    """``trustgate.policy {policy}``: policy work such as a redaction scan (GUARDRAIL)."""
    OVERRIDE: Final = "trustgate.override"
    """``trustgate.override {kind}``: optional zero-length span per override (GUARDRAIL)."""
    RUN: Final = "trustgate.run"
    """``trustgate.run {pipeline}``: the root of one pipeline run (CHAIN)."""


class EventNames:
    """Span event names."""

    OVERRIDE: Final = "trustgate.override"
    """``trustgate.override {kind}``: one event per override, titled by its kind."""
    EVALUATION_RESULT: Final = "gen_ai.evaluation.result"
    """OpenTelemetry GenAI evaluation event: one per verifier run, on the crossing span."""
    EXCEPTION: Final = "exception"


class SpanKindValues:
    """Values of ``openinference.span.kind`` trustgate uses."""

    GUARDRAIL: Final = "GUARDRAIL"
    EVALUATOR: Final = "EVALUATOR"
    CHAIN: Final = "CHAIN"


class OpenInferenceAttributes:
    """OpenInference names (Phoenix, Arize, Langfuse show these in their lists)."""

    SPAN_KIND: Final = "openinference.span.kind"  # str
    INPUT_VALUE: Final = "input.value"  # str: content-free unless capture is on
    INPUT_MIME_TYPE: Final = "input.mime_type"  # str
    OUTPUT_VALUE: Final = "output.value"  # str: the content-free decision summary
    OUTPUT_MIME_TYPE: Final = "output.mime_type"  # str
    SESSION_ID: Final = "session.id"  # str: the LangGraph thread id
    TAG_TAGS: Final = "tag.tags"  # str[]: gate:, decision:, override:, verifier: tags
    METADATA: Final = "metadata"  # str: JSON object, content-free
    ERROR_TYPE: Final = "error.type"  # str: OpenTelemetry; halted, or the exception type


class CrossingAttributes:
    """Attributes of the crossing span (``trustgate.gate {gate}``) and the metrics."""

    GATE_NAME: Final = "trustgate.gate.name"  # str
    NODE_NAME: Final = "trustgate.node.name"  # str: the guarded node
    # str: pass|modified|blocked|rerendered|caveated|reviewed|halted|error
    DECISION: Final = "trustgate.crossing.decision"
    RELEASED: Final = "trustgate.crossing.released"  # bool
    ATTEMPT: Final = "trustgate.crossing.attempt"  # int: re-render attempt, from 1
    SUMMARY: Final = "trustgate.crossing.summary"  # str: same as output.value
    REPORT_ID: Final = "trustgate.crossing.report_id"  # str
    RUN_ID: Final = "trustgate.crossing.run_id"  # str: the LangGraph run id
    CLAIM_COUNT: Final = "trustgate.crossing.claim_count"  # int
    CLAIMS_DIGEST: Final = "trustgate.crossing.claims_digest"  # str: keyed, only with a key
    FINDING_COUNT: Final = "trustgate.crossing.finding_count"  # int
    FAILURE_CODES: Final = "trustgate.crossing.failure_codes"  # str[]: verifier/code
    VERIFIERS: Final = "trustgate.crossing.verifiers"  # str[]: verifiers that ran
    FAILED_VERIFIERS: Final = "trustgate.crossing.failed_verifiers"  # str[]
    OVERRIDE_COUNT: Final = "trustgate.crossing.override_count"  # int
    OVERRIDE_KINDS: Final = "trustgate.crossing.override_kinds"  # str[]: distinct
    OVERRIDE_TARGETS: Final = "trustgate.crossing.override_targets"  # str[]: distinct
    # str[]: distinct values the overrides set from configuration (never model output)
    OVERRIDE_VALUES: Final = "trustgate.crossing.override_values"
    DROPPED_OVERRIDE_EVENTS: Final = "trustgate.crossing.dropped_override_events"  # int
    APPROVAL_DECISION: Final = "trustgate.approval.decision"  # str: approve|edit|...
    APPROVAL_APPROVER: Final = "trustgate.approval.approver"  # str: only with capture
    ERROR_MESSAGE: Final = "trustgate.crossing.error_message"  # str: only with capture


class VerifierAttributes:
    """Attributes of a verifier span (``trustgate.verify {verifier}``) and the metrics."""

    NAME: Final = "trustgate.verifier.name"  # str
    OUTCOME: Final = "trustgate.verifier.outcome"  # str: pass|fail|error
    FINDING_COUNT: Final = "trustgate.verifier.finding_count"  # int
    FAILURE_COUNT: Final = "trustgate.verifier.failure_count"  # int: blocking failures
    WARNING_COUNT: Final = "trustgate.verifier.warning_count"  # int
    FINDING_CODE: Final = "trustgate.finding.code"  # str: metric attribute
    FINDING_STATUS: Final = "trustgate.finding.status"  # str: pass|fail
    FINDING_SEVERITY: Final = "trustgate.finding.severity"  # str: block|warn
    POLICY_NAME: Final = "trustgate.policy.name"  # str: on a policy span


class JudgeAttributes:
    """Attributes of the verifier span of a draft check that asked a sentence judge.

    Counts only, never a sentence: they come from the check's passing ``judge``
    finding (``DraftCheck(judge=...)``).
    """

    NAME: Final = "trustgate.judge.name"  # str: the judge's name
    SENTENCE_COUNT: Final = "trustgate.judge.sentence_count"  # int: kept sentences asked
    CACHED_COUNT: Final = "trustgate.judge.cached_count"  # int: of those, from its cache
    CALL_COUNT: Final = "trustgate.judge.call_count"  # int: calls, retries included
    DELETION_COUNT: Final = "trustgate.judge.deletion_count"  # int: deleted on its word


class OverrideAttributes:
    """Attributes of an override event (and of the optional override span)."""

    KIND: Final = "trustgate.override.kind"  # str
    TARGET: Final = "trustgate.override.target"  # str: a field path, never content
    VERIFIER: Final = "trustgate.override.verifier"  # str
    CODES: Final = "trustgate.override.codes"  # str[]: verifier/code behind it
    BEFORE_LENGTH: Final = "trustgate.override.before_length"  # int: characters
    AFTER_LENGTH: Final = "trustgate.override.after_length"  # int
    BEFORE_DIGEST: Final = "trustgate.override.before_digest"  # str: keyed, only with a key
    AFTER_DIGEST: Final = "trustgate.override.after_digest"  # str: keyed, only with a key
    BEFORE: Final = "trustgate.override.before"  # str: only with capture
    AFTER: Final = "trustgate.override.after"  # str: only with capture
    # str: the value an override set from the gate's configuration (an Override's
    # constant, e.g. REQUEST_CHANGES), recorded whatever the capture: never model output
    VALUE: Final = "trustgate.override.value"
    REASON: Final = "trustgate.override.reason"  # str: only with capture (may quote)


class EvaluationAttributes:
    """A verifier run as an evaluation: GenAI event attributes and OpenInference ones."""

    GEN_AI_NAME: Final = "gen_ai.evaluation.name"  # str: the verifier
    GEN_AI_SCORE_LABEL: Final = "gen_ai.evaluation.score.label"  # str: pass|fail
    GEN_AI_SCORE_VALUE: Final = "gen_ai.evaluation.score.value"  # float: 1.0|0.0
    GEN_AI_EXPLANATION: Final = "gen_ai.evaluation.explanation"  # str: content-free
    OI_NAME: Final = "evaluation.name"  # str: on the EVALUATOR span
    OI_LABEL: Final = "evaluation.label"  # str
    OI_SCORE: Final = "evaluation.score"  # float
    OI_EXPLANATION: Final = "evaluation.explanation"  # str


class RunAttributes:
    """Attributes of a pipeline run's root span (``trustgate.run {pipeline}``)."""

    PIPELINE: Final = "trustgate.run.pipeline"  # str
    OUTCOME: Final = "trustgate.run.outcome"  # str: completed|halted|error
    CROSSING_COUNT: Final = "trustgate.run.crossing_count"  # int
    ACTED_COUNT: Final = "trustgate.run.acted_count"  # int: crossings whose decision is not pass


class MetricNames:
    """Instrument names; their attributes are the constants above."""

    CROSSINGS: Final = "trustgate.crossings"  # counter {crossing}: gate, node, decision
    FINDINGS: Final = "trustgate.findings"  # counter: gate, verifier, code, status, severity
    OVERRIDES: Final = "trustgate.overrides"  # counter: gate, override kind
    CROSSING_DURATION: Final = "trustgate.crossing.duration"  # histogram, s: gate, decision
