"""What one crossing checked, what failed, and what the gate did about it.

Every crossing produces exactly one :class:`Report`. It lands in the ``trust_reports``
state channel, on ``stream_mode="custom"`` and (later) as one OpenTelemetry span.

The durable record (the channel, the checkpoints, ``GateHalted.report``,
:func:`reports`) keeps the report whole. The custom stream goes to end users' screens,
so what is streamed there is :meth:`Report.content_free` unless content capture is on
(``TRUSTGATE_CAPTURE_CONTENT=true``, the switch telemetry uses): see :func:`for_stream`.

Reports must survive checkpoints under ``LANGGRAPH_STRICT_MSGPACK=true``, where
LangGraph refuses to rebuild any pydantic class that is not on its allow-list and
hands back a bare dict instead. So the channel (:class:`ReportLog`) checkpoints
reports as plain JSON dicts and rebuilds the typed models itself: the stored bytes
contain only msgpack primitives and the values a graph sees are always
:class:`Report` objects, whatever the serializer's mode.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, Self, TypeAlias

from langchain_core.runnables import RunnableConfig
from langgraph.channels.binop import BinaryOperatorAggregate
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from trustgate._findings import Finding

__all__ = [
    "REPORTS_KEY",
    "Approval",
    "Decision",
    "OverrideKind",
    "OverrideRecord",
    "Report",
    "ReportLog",
    "TrustReports",
    "TrustReportsState",
    "add_reports",
    "areports",
    "for_stream",
    "reports",
    "reports_from_state",
]

REPORTS_KEY = "trust_reports"

Decision: TypeAlias = Literal["pass", "modified", "rerender", "caveat", "halted", "review"]
OverrideKind: TypeAlias = Literal[
    "field_override",
    "sentence_delete",
    "citation_drop",
    "tool_call_block",
    "rerender",
    "caveat",
    "halt",
    "review",
    "coerced",
]


def _now() -> datetime:
    return datetime.now(UTC)


class OverrideRecord(BaseModel):
    """One thing the gate changed (or refused) in the guarded node's output.

    Example:
        ```python
        OverrideRecord(kind="field_override", target="verdict", before="APPROVE",
                 after="REQUEST_CHANGES", reason="citation_replay/content_mismatch")
        ```
    """

    model_config = ConfigDict(frozen=True)

    kind: OverrideKind
    target: str
    before: Any = None
    after: Any = None
    reason: str
    verifier: str | None = None


class Approval(BaseModel):
    """A person's decision on a reviewed crossing: testimony, never evidence.

    It is kept apart from the findings on purpose: a failed finding stays failed
    after approval; the report says who released it anyway, when, and what.
    """

    model_config = ConfigDict(frozen=True)

    decision: Literal["approve", "edit", "reject", "respond"]
    who: str | None = None
    when: datetime = Field(default_factory=_now)
    what: str = ""
    message: str | None = None


class Report(BaseModel):
    """The record of one crossing.

    Identifiers and timestamps sit beside the verdict, never inside it:
    :meth:`verdict` is a deterministic function of claims and evidence, so two runs
    over the same input compare equal on it.

    Example:
        ```python
        for r in trustgate.reports(graph, config):
            if r.decision != "pass":
                print(r.gate, r.decision, [str(f) for f in r.failed])
        ```
    """

    model_config = ConfigDict(frozen=True)

    id: str = Field(default_factory=lambda: secrets.token_hex(16))
    gate: str
    node: str
    claims: list[Any] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    decision: Decision
    overrides: list[OverrideRecord] = Field(default_factory=list)
    released: bool
    error: str | None = None
    approval: Approval | None = None
    attempt: int = 1
    accounting: dict[str, str] = Field(default_factory=dict)
    """Every part of the node's output and what became of it: ``verified``,
    ``passthrough`` (declared by a gate) or ``held`` (the crossing halted on it)."""
    thread_id: str | None = None
    run_id: str | None = None
    step: int | None = None
    checkpoint_ns: str | None = None
    task_id: str | None = None
    crossing: str | None = None
    """Where the crossing ran (a key of thread, namespace, task, gate, attempt)."""
    deliveries: int = 1
    """How many times its release was delivered: LangGraph runs a task again when a crash
    came after the release and before the task's writes were saved (at-least-once); the
    gate then delivers the recorded release again, and says so here."""
    started_at: datetime = Field(default_factory=_now)
    finished_at: datetime = Field(default_factory=_now)

    @property
    def failed(self) -> list[Finding]:
        """Blocking failures: the findings that made the policy act."""
        return [f for f in self.findings if f.blocking]

    @property
    def passed(self) -> bool:
        return self.decision == "pass"

    def verdict(self) -> dict[str, Any]:
        """The deterministic part of the report (no ids, no clock, no approval time)."""
        return self.model_dump(
            mode="json",
            include={"gate", "node", "claims", "findings", "decision", "overrides", "released"},
        )

    def to_json_dict(self) -> dict[str, Any]:
        """Plain JSON types only (what a strict checkpoint serializer accepts)."""
        return self.model_dump(mode="json", fallback=repr)

    def _repr_html_(self) -> str:
        from trustgate._render import report_html

        return report_html(self)

    def content_free(self) -> Report:
        """This report without what the model, the verifiers or a person wrote.

        What a gate streams goes where end users see it (``stream_mode="custom"`` feeds
        chat UIs), and a failed claim is reported word for word: the lie the gate just
        stopped would reach the screen inside the report of stopping it. So the stream
        carries this form unless content capture is on, the same switch as telemetry
        (``TRUSTGATE_CAPTURE_CONTENT``). It keeps what a UI needs to say *what*
        happened: ids, gate, node, decision, whether it was released, the accounting
        of parts, and per finding its verifier, status, severity and code
        (``message`` becomes ``verifier/code``, ``detail`` and the proposed fixes are
        dropped, the ``parts`` it judged stay, and ``subject`` stays only where it names
        a part of the output, a key of ``accounting``: a verifier's subject is often the
        sentence, path or URL the model wrote). The claims are
        emptied; an override keeps its kind, target and verifier (``before``,
        ``after`` and ``reason`` go); an approval keeps its decision, ``what`` (the
        decision and the codes or field paths it covered) and when (``who`` is a
        person's name, ``message`` their words: both go); ``error`` keeps only the
        failing component and the error's type. The durable record
        (``trust_reports``, checkpoints, ``GateHalted.report``,
        :func:`trustgate.reports`) keeps the full report.
        """
        update: dict[str, Any] = {
            "claims": [],
            "findings": [
                f.model_copy(
                    update={
                        "message": f"{f.verifier}/{f.code}",
                        "detail": {},
                        "proposals": (),
                        "subject": f.subject if f.subject in self.accounting else None,
                    }
                )
                for f in self.findings
            ],
            "overrides": [
                o.model_copy(update={"before": None, "after": None, "reason": ""})
                for o in self.overrides
            ],
            "error": _error_kind(self.error),
        }
        if self.approval is not None:
            update["approval"] = self.approval.model_copy(update={"who": None, "message": None})
        return self.model_copy(update=update)

    @classmethod
    def coerce(cls, value: Any) -> Self:
        """Accept a Report or its dict form (what a strict checkpoint hands back)."""
        if isinstance(value, cls):
            return value
        return cls.model_validate(value)


# "verifier: TypeName: message" (a verifier that raised or timed out)
_ERROR_KIND = re.compile(r"^([\w.\-]+): ([A-Za-z_][\w.]*)(?::|$)")


def _error_kind(error: str | None) -> str | None:
    """``"citations: ValueError"`` of ``"citations: ValueError: <text>"``; an error of
    another shape becomes ``"error"``: its text may quote what was checked."""
    if error is None:
        return None
    found = _ERROR_KIND.match(error)
    return f"{found.group(1)}: {found.group(2)}" if found else "error"


def for_stream(report: Report) -> Report:
    """The report as a gate streams it: :meth:`Report.content_free` unless content
    capture is on (``TRUSTGATE_CAPTURE_CONTENT=true``)."""
    from trustgate.otel._content import CAPTURE_CONTENT_ENV, env_flag

    return report if env_flag(CAPTURE_CONTENT_ENV) else report.content_free()


def _coerce_list(value: Any) -> list[Report]:
    if value is None:
        return []
    if isinstance(value, (Report, Mapping)):
        return [Report.coerce(value)]
    return [Report.coerce(v) for v in value]


def add_reports(left: Sequence[Any] | None, right: Any) -> list[Report]:
    """Append-only reducer for ``trust_reports``; rebuilds dict forms into Reports."""
    return _coerce_list(left) + _coerce_list(right)


class ReportLog(BinaryOperatorAggregate[list[Report]]):
    """The ``trust_reports`` channel: an append log checkpointed as plain JSON dicts.

    The JSON form of each report is computed once and reused: LangGraph snapshots
    every channel at every step, and the log only ever grows.
    """

    def __init__(self, typ: Any = list, operator: Any = add_reports) -> None:
        super().__init__(list, add_reports)
        self._json_src: list[Report] = []
        self._json: list[dict[str, Any]] = []

    def checkpoint(self) -> Any:
        value: Any = super().checkpoint()
        if not isinstance(value, list):
            return value
        src, done = self._json_src, 0
        while done < len(src) and done < len(value) and value[done] is src[done]:
            done += 1
        if done == len(value) == len(src):
            return self._json
        self._json = self._json[:done] + [Report.coerce(r).to_json_dict() for r in value[done:]]
        self._json_src = list(value)
        return self._json

    def from_checkpoint(self, checkpoint: Any) -> Self:
        restored = super().from_checkpoint(checkpoint)
        if isinstance(restored.value, list):
            restored.value = _coerce_list(restored.value)
        return restored


TrustReports: TypeAlias = Annotated[list[Report], ReportLog]
"""Annotation for a state key holding the crossing reports.

Example:
    ```python
    class State(TypedDict):
        messages: Annotated[list, add_messages]
        trust_reports: TrustReports
    ```
"""


class TrustReportsState(TypedDict, total=False):
    """Mixin schema holding the ``trust_reports`` channel (``guard()`` adds it itself)."""

    trust_reports: TrustReports


def reports_from_state(state: Any) -> list[Report]:
    """The reports in a state dict/snapshot values, typed."""
    if state is None:
        return []
    # A plain dict state has a ``values`` *method*; only a snapshot has ``values`` data.
    values = state if isinstance(state, Mapping) else getattr(state, "values", state)
    if isinstance(values, Mapping):
        return _coerce_list(values.get(REPORTS_KEY))
    return _coerce_list(getattr(values, REPORTS_KEY, None))


def _from_channel(item: Any) -> list[Report]:
    return _coerce_list((item.checkpoint.get("channel_values") or {}).get(REPORTS_KEY))


def _from_writes(item: Any) -> list[Report]:
    """Reports kept beside the step's tasks: a crossing that halted, and every crossing
    of a graph whose state is one root value (no channel to hold them)."""
    found: list[Report] = []
    for write in getattr(item, "pending_writes", None) or ():
        if len(write) >= 3 and write[1] == REPORTS_KEY:
            found += _coerce_list(write[2])
    return found


def _from_tuple(item: Any) -> list[Report]:
    return _from_channel(item) + _from_writes(item)


def _scope(graph: Any, config: RunnableConfig) -> tuple[Any, RunnableConfig, bool] | None:
    """The saver, the config to list, and whether the whole thread is asked for."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    saver = getattr(graph, "checkpointer", None)
    conf = dict(config.get("configurable") or {})
    if not isinstance(saver, BaseCheckpointSaver) or conf.get("thread_id") is None:
        return None
    if conf.get("checkpoint_id") or conf.get("checkpoint_ns"):
        return saver, config, False  # a point in time or a namespace: that state only
    # savers store the thread id as text (LangGraph writes str(thread_id))
    return saver, {"configurable": {"thread_id": str(conf["thread_id"])}}, True


def _collect(items: Any, whole: bool) -> list[Report]:
    """The channel of the latest checkpoint of each namespace (it accumulates), and the
    reports kept beside the tasks of every checkpoint."""
    latest: dict[str, list[Report]] = {}
    aside: list[Report] = []
    for item in items:
        ns = (item.config.get("configurable") or {}).get("checkpoint_ns") or ""
        if ns not in latest:  # newest first: the first seen is the latest
            latest[ns] = _from_channel(item)
        aside += _from_writes(item)
        if not whole:
            break
    return _merged([], [r for rs in latest.values() for r in rs] + aside)


def _merged(own: list[Report], extra: list[Report]) -> list[Report]:
    seen: set[str] = set()
    out: list[Report] = []
    for r in [*own, *extra]:
        if r.id not in seen:
            seen.add(r.id)
            out.append(r)
    return sorted(out, key=lambda r: r.finished_at)


def reports(graph: Any, config: RunnableConfig) -> list[Report]:
    """Every report of the thread in ``config``, oldest first.

    Reads the checkpoints, so it needs a graph compiled with a checkpointer: the
    ``trust_reports`` channel (hidden from the graph's output unless the state schema
    declares it), the reports of crossings that halted (kept with the failed task),
    and those of gates inside subgraphs.

    Example:
        ```python
        result = graph.invoke(inputs, config)
        for report in trustgate.reports(graph, config):
            print(report.gate, report.decision)
        ```
    """
    scope = _scope(graph, config)
    if scope is None:
        return reports_from_state(graph.get_state(config))
    saver, cfg, whole = scope
    if whole:
        return _collect(saver.list(cfg), True)
    item = saver.get_tuple(cfg)
    return [] if item is None else _merged([], _from_tuple(item))


async def areports(graph: Any, config: RunnableConfig) -> list[Report]:
    """Async :func:`reports`."""
    scope = _scope(graph, config)
    if scope is None:
        return reports_from_state(await graph.aget_state(config))
    saver, cfg, whole = scope
    if whole:
        return _collect([item async for item in saver.alist(cfg)], True)
    item = await saver.aget_tuple(cfg)
    return [] if item is None else _merged([], _from_tuple(item))
