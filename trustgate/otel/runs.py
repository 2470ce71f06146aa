"""A pipeline run's root span: every invocation and crossing of one run in one trace.

Without a LangChain tracer each graph invocation would start a trace of its own, and
each crossing with it; a person's review splits a run into two invocations. The CLI
(and anyone driving a pipeline) wraps the whole run in :func:`pipeline_run`, whose
``output.value`` then lists what the run's gates did, one line per crossing that acted:
the first thing a trace view shows.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace
from opentelemetry.trace import Span, Status, StatusCode

from trustgate.otel._content import content_policy
from trustgate.otel._util import (
    NOOP_TRACER,
    exception_attrs,
    halt_report,
    is_bubble_up,
    tracer_for,
    type_name,
)
from trustgate.otel.semconv import EventNames, SpanNames
from trustgate.otel.semconv import OpenInferenceAttributes as OI
from trustgate.otel.semconv import RunAttributes as R
from trustgate.otel.semconv import SpanKindValues as K

__all__ = ["PipelineRun", "current_run", "pipeline_run"]


@dataclass
class PipelineRun:
    """The root span of one pipeline run, as yielded by :func:`pipeline_run`."""

    span: Span
    outcome: str = "completed"
    crossings: list[tuple[str, str, str]] = field(default_factory=list)
    """(gate, summary, decision) of each crossing finished inside the run."""

    def set_outcome(self, outcome: str) -> None:
        """``completed`` (default), ``halted`` (a gate stopped it: an outcome) or other."""
        self.outcome = outcome

    @property
    def acted(self) -> int:
        """How many crossings did something (any decision but ``pass``)."""
        return sum(1 for _g, _t, decision in self.crossings if decision != "pass")

    def decisions(self) -> dict[str, int]:
        """How many crossings ended in each decision, in order of first appearance."""
        counts: dict[str, int] = {}
        for _g, _t, decision in self.crossings:
            counts[decision] = counts.get(decision, 0) + 1
        return counts

    def summary(self) -> str:
        """What the run's gates did, one line per crossing that acted (content-free):
        the run's ``output.value``, what a trace view shows first. Its first line
        counts the crossings that acted, by decision (``completed: 5 crossing(s), 4
        acted on (2 rerendered, 1 caveated, 1 halted)``)."""
        acted = [(g, text) for g, text, decision in self.crossings if decision != "pass"]
        head = f"{self.outcome}: {len(self.crossings)} crossing(s), {len(acted)} acted on"
        by = [f"{n} {d}" for d, n in self.decisions().items() if d != "pass"]
        if by:
            head += f" ({', '.join(by)})"
        lines = [f"{g} — {text}" for g, text in acted[:_MAX_RUN_LINES]]
        if len(acted) > _MAX_RUN_LINES:
            lines.append(f"+{len(acted) - _MAX_RUN_LINES} more")
        return "\n".join([head, *lines])


_MAX_RUN_LINES = 20
# The run a crossing belongs to; a mutable holder, so crossings in copied contexts
# (LangGraph's worker threads and tasks) report to the same run.
current_run: ContextVar[PipelineRun | None] = ContextVar("trustgate_run", default=None)


class _RunScope(AbstractContextManager[PipelineRun]):
    __slots__ = ("_args", "_run", "_run_token", "_token")

    def __init__(self, *args: Any) -> None:
        self._args = args
        self._token: Token[otel_context.Context] | None = None
        self._run_token: Token[PipelineRun | None] | None = None

    def __enter__(self) -> PipelineRun:
        name, thread_id, tracer_provider, new_trace = self._args
        tracer = tracer_for(tracer_provider)
        if tracer is NOOP_TRACER:
            self._run = PipelineRun(span=otel_trace.INVALID_SPAN)
            return self._run
        attrs: dict[str, Any] = {OI.SPAN_KIND: K.CHAIN, R.PIPELINE: name}
        if thread_id:
            attrs[OI.SESSION_ID] = str(thread_id)
        ctx = otel_context.Context() if new_trace else None
        span = tracer.start_span(f"{SpanNames.RUN} {name}", context=ctx, attributes=attrs)
        self._run = PipelineRun(span=span)
        self._token = otel_context.attach(otel_trace.set_span_in_context(span))
        self._run_token = current_run.set(self._run)
        return self._run

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        run = self._run
        if self._token is None:
            return
        otel_context.detach(self._token)
        self._token = None
        if self._run_token is not None:
            current_run.reset(self._run_token)
            self._run_token = None
        if exc is not None:
            if halt_report(exc) is not None:
                run.outcome = "halted"
            elif not is_bubble_up(exc):
                run.outcome = "error"
                run.span.add_event(
                    EventNames.EXCEPTION, exception_attrs(exc, content_policy(None, None))
                )
                run.span.set_attribute(OI.ERROR_TYPE, type_name(exc))
                run.span.set_status(Status(StatusCode.ERROR, f"error: {type(exc).__name__}"))
        # the counts as attributes and tags too: a trace list filters and shows them
        # without opening the trace
        run.span.set_attributes(
            {
                R.OUTCOME: run.outcome,
                R.CROSSING_COUNT: len(run.crossings),
                R.ACTED_COUNT: run.acted,
                OI.OUTPUT_VALUE: run.summary(),
                OI.OUTPUT_MIME_TYPE: "text/plain",
                OI.TAG_TAGS: [
                    "trustgate",
                    f"outcome:{run.outcome}",
                    f"acted:{run.acted}",
                    *(f"decision:{d}" for d in run.decisions() if d != "pass"),
                ],
            }
        )
        run.span.end()


def pipeline_run(
    name: str,
    *,
    thread_id: str | None = None,
    tracer_provider: otel_trace.TracerProvider | None = None,
    new_trace: bool = True,
) -> AbstractContextManager[PipelineRun]:
    """A root span ``trustgate.run {name}`` (CHAIN) grouping one run of a pipeline.

    Every invocation of the graph inside the block (a first run, each resume after an
    interrupt) and every crossing in them land in this one trace, with ``session.id``
    the thread id. A halt by a gate is an outcome (``trustgate.run.outcome=halted``),
    never an error status. ``new_trace=False`` nests the run under the current span.

    Example:
        ```python
        with otel.pipeline_run("code-review", thread_id=thread):
            graph.invoke(inputs, config)
        ```
    """
    return _RunScope(name, thread_id, tracer_provider, new_trace)
