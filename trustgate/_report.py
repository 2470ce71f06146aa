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

import logging
import operator
import re
import secrets
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, Self, TypeAlias

from langchain_core.runnables import RunnableConfig
from langgraph.channels.binop import BinaryOperatorAggregate
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import TypedDict

from trustgate import _report_json
from trustgate import _report_seal as report_seal
from trustgate._findings import Finding

__all__ = [
    "REPORTS_KEY",
    "Approval",
    "Decision",
    "LoggedRow",
    "OverrideKind",
    "OverrideRecord",
    "Report",
    "ReportList",
    "ReportLog",
    "RowStatus",
    "TrustReports",
    "TrustReportsState",
    "add_reports",
    "admitted",
    "areports",
    "for_stream",
    "gate_json",
    "reports",
    "reports_from_state",
    "sorted_out",
]

logger = logging.getLogger(__name__)

REPORTS_KEY = "trust_reports"

Decision: TypeAlias = Literal[
    "pass", "modified", "blocked", "rerendered", "caveated", "halted", "reviewed"
]
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


RowStatus: TypeAlias = Literal["sealed", "unsealed", "forged", "unreadable"]
"""``sealed``: written by a gate (or the log) of this deployment and unchanged since;
``unsealed``: nothing vouches for it (no seal, or a seal under another key);
``forged``: a seal that does not fit (edited afterwards, or copied from another
thread); ``unreadable``: not even readable as a report."""


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
    configured: bool = False
    """``after`` is the gate's own configuration (an ``Override``'s value), never model
    output: telemetry records it even when content capture is off."""


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
    seal: str | None = None
    """The writing gate's seal over the rest of the report (see
    :mod:`trustgate._report_seal`): what tells a gate's report from one any other node,
    the caller's input or an edited checkpoint put in ``trust_reports``."""

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
            "seal": None,  # the seal vouches for the whole report, not this form
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


_DEFAULTS: dict[str, Any] = {}
_FACTORIES: dict[str, Any] = {}
for _name, _field in Report.model_fields.items():
    if _field.default_factory is not None:
        _FACTORIES[_name] = _field.default_factory
    elif not _field.is_required():
        _DEFAULTS[_name] = _field.default
_NAMES = tuple(Report.model_fields)
_report_json.bind(Report, OverrideRecord, Approval)
_set = object.__setattr__


def built(**values: Any) -> Report:
    """A report of data the gate itself built, without validating it: what
    ``Report.model_construct(**values)`` makes (the same fields, defaults and set of
    fields given), without pydantic's walk over every field of the model."""
    d: dict[str, Any] = {}
    for name in _NAMES:
        if name in values:
            d[name] = values[name]
        elif name in _DEFAULTS:
            d[name] = _DEFAULTS[name]
        elif name in _FACTORIES:
            d[name] = _FACTORIES[name]()
        else:  # a required field the gate did not give: let pydantic say so
            return Report.model_construct(**values)
    m = Report.__new__(Report)
    _set(m, "__dict__", d)
    _set(m, "__pydantic_fields_set__", set(values))
    _set(m, "__pydantic_extra__", None)
    _set(m, "__pydantic_private__", None)
    return m


@dataclass(frozen=True, slots=True)
class LoggedRow:
    """One report as read back (a row of the report log, an entry of the state's
    ``trust_reports``), and whether its seal holds.

    ``report`` is set only when the row is ``sealed``; the other fields are what the
    row's columns *say* (``decision`` included), shown so a reviewer can find the row,
    never vouched for unless sealed. ``reason`` says why a row is not sealed.
    """

    status: RowStatus
    id: str | None
    thread_id: str | None = None
    gate: str | None = None
    node: str | None = None
    decision: str | None = None
    finished_at: str | None = None
    reason: str | None = None
    report: Report | None = None

    @property
    def sealed(self) -> bool:
        return self.status == "sealed"


class ReportList(list[Report]):
    """What :func:`reports` and the report log's ``history`` return: the sealed
    reports, oldest first.

    ``rows`` is every row the query read, in order, with its :class:`LoggedRow`
    status; ``refused`` the rows that are not shown as reports (unsealed, forged or
    unreadable), each with its reason.

    Example:
        ```python
        found = db.history(thread="t1")
        for row in found.refused:
            print("NOT SEALED", row.id, row.status, row.reason)
        ```
    """

    def __init__(self, rows: Iterable[LoggedRow] = ()) -> None:
        self.rows: list[LoggedRow] = list(rows)
        super().__init__(r.report for r in self.rows if r.report is not None)

    @property
    def refused(self) -> list[LoggedRow]:
        return [r for r in self.rows if not r.sealed]


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


def _items(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (Report, Mapping)) or not isinstance(value, Sequence):
        return [value]
    return list(value)


class GateBody(dict[str, Any]):
    """A report's sealed JSON form as the gate that sealed it writes it, with the typed
    report it was made from (its seal set): the ``trust_reports`` channel takes that
    report as it is, without checking the seal it just made or validating data the
    gate built, and the checkpoint reuses this form instead of dumping it again.

    Only this very object is vouched for: a copy, a pickle or any serializer's round
    trip gives a plain dict, which is checked like any other write; and it is taken as
    sealed only while it is sealed under the key gates seal under now (a worker with
    another key vouches for nothing)."""

    __slots__ = ("report",)

    report: Report

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        import copy

        return copy.deepcopy(dict(self), memo)

    def vouched(self) -> Report | None:
        """The typed report, if this form is still sealed under the current key."""
        seal = self.get(report_seal.SEAL_FIELD)
        if not isinstance(seal, str):
            return None
        given = seal.partition(":")[0]
        return self.report if given == report_seal.key_id(report_seal.report_key()) else None


def _with_seal(report: Report, seal: str) -> Report:
    """``report.model_copy(update={"seal": seal})`` without pydantic's copy machinery
    (the gate built the report; the copy shares its values, as ``model_copy`` does)."""
    m = Report.__new__(Report)
    _set(m, "__dict__", {**report.__dict__, "seal": seal})
    _set(m, "__pydantic_fields_set__", {*report.__pydantic_fields_set__, "seal"})
    _set(m, "__pydantic_extra__", report.__pydantic_extra__)
    _set(m, "__pydantic_private__", report.__pydantic_private__)
    return m


def gate_json(reports: Iterable[Report]) -> list[dict[str, Any]]:
    """What a gate writes to ``trust_reports``: each report's JSON form, sealed (see
    :class:`GateBody`). The form of a report of the shape gates build is made by hand
    (:mod:`trustgate._report_json`), the seal over it computed once."""
    out: list[dict[str, Any]] = []
    for r in reports:
        form = _report_json.json_form(r) if type(r) is Report else None
        if form is None:
            body = GateBody(report_seal.seal(r.to_json_dict()))
        else:
            body = GateBody(form)
            report_seal.seal_built(body)
        seal = body[report_seal.SEAL_FIELD]
        body.report = r if r.seal == seal else _with_seal(r, seal)
        out.append(body)
    return out


def _vouched(item: Any) -> Report | None:
    return item.vouched() if type(item) is GateBody else None


def _body(item: Any) -> Any:
    return item.to_json_dict() if isinstance(item, Report) else item


def sorted_out(items: Iterable[Any], thread: str | None = None) -> ReportList:
    """The gate-sealed reports among ``items`` (reports or their JSON forms) and, apart,
    the rest with the reason each is refused. ``thread``: the thread they were read
    from; a sealed report of another thread (copied in) is refused too."""
    rows: list[LoggedRow] = []
    for item in items:
        body = _body(item)
        status, reason = report_seal.check(body)
        report: Report | None = None
        if status == "sealed":
            try:
                report = Report.coerce(item)
            except ValidationError as exc:
                status, reason = "unreadable", f"not a report ({exc.error_count()} error(s))"
            else:
                if thread is not None and report.thread_id not in (None, thread):
                    status, reason = (
                        "forged",
                        (f"a report of thread {report.thread_id!r} copied into {thread!r}"),
                    )
                    report = None
        rows.append(_row(body, status, reason, report))
    found = ReportList(rows)
    if found.refused:
        _warn_refused(found, "reports in the state")
    return found


def _row(body: Any, status: RowStatus, reason: str | None, report: Report | None) -> LoggedRow:
    said = body if isinstance(body, Mapping) else {}

    def text(name: str) -> str | None:
        value = said.get(name)
        return value if isinstance(value, str) else None

    return LoggedRow(
        status,
        text("id"),
        thread_id=text("thread_id"),
        gate=text("gate"),
        node=text("node"),
        decision=text("decision"),
        finished_at=text("finished_at"),
        reason=reason,
        report=report,
    )


def _warn_refused(found: ReportList, what: str) -> None:
    refused = found.refused
    counts = Counter(r.status for r in refused)
    logger.warning(
        "%d of %d %s are not shown as crossings (%s): %s",
        len(refused),
        len(found.rows),
        what,
        ", ".join(f"{n} {status}" for status, n in sorted(counts.items())),
        "; ".join(f"{(r.id or '?')[:12]}: {r.reason}" for r in refused[:3])
        + ("; ..." if len(refused) > 3 else ""),
    )


def admitted(
    value: Any, forms: dict[int, tuple[Report, dict[str, Any]]] | None = None
) -> list[Report]:
    """What the ``trust_reports`` channel takes from one write: the gate-sealed reports.
    Anything else (a report another node or the caller's input wrote, an edited one,
    something that is not a report, an ``Overwrite`` of the log) is refused, with a
    warning: the channel holds gate reports only. ``forms`` collects the sealed form
    of each report a gate of this process just wrote (by report)."""
    if type(value) is list and value and type(value[0]) is GateBody:
        # what a gate of this process writes: its own sealed forms, taken as they are
        fast = [r for r in map(_vouched, value) if r is not None]
        if len(fast) == len(value):
            if forms is not None:
                for r, item in zip(fast, value, strict=True):
                    forms[id(r)] = (r, item)
            return fast
    found = ReportList()
    for item in _items(value):
        vouched = _vouched(item)
        if vouched is not None:  # sealed by a gate of this process a moment ago
            found.append(vouched)
            if forms is not None:
                forms[id(vouched)] = (vouched, item)
            continue
        status, reason = report_seal.check(_body(item))
        report: Report | None = None
        if status == "sealed":
            try:
                report = Report.coerce(item)
            except ValidationError as exc:
                status, reason = "unreadable", f"not a report ({exc.error_count()} error(s))"
        found.rows.append(_row(_body(item), status, reason, report))
        if report is not None:
            found.append(report)
    if found.refused:
        _warn_refused(found, "writes to trust_reports (not written by a gate)")
    return list(found)


def add_reports(left: Sequence[Any] | None, right: Any) -> list[Report]:
    """The ``trust_reports`` reducer: appends the gate-sealed reports of ``right`` (a
    report already held, by id, is replaced: the same crossing delivered again)."""
    return _merge(_coerce_list(left), admitted(right))


def _merge(held: list[Report], fresh: list[Report]) -> list[Report]:
    if not fresh:
        return held
    out = list(held)
    at = {r.id: i for i, r in enumerate(out)}
    for r in fresh:
        if r.id in at:
            out[at[r.id]] = r
        else:
            at[r.id] = len(out)
            out.append(r)
    return out


class ReportLog(BinaryOperatorAggregate[list[Report]]):
    """The ``trust_reports`` channel: an append log of gate-sealed reports, checkpointed
    as plain JSON dicts.

    Every write goes through :func:`add_reports` (an ``Overwrite`` too: it is not a
    report, so it is refused), so only reports a gate sealed get in. The JSON form of
    each report is computed once and reused: LangGraph snapshots every channel at every
    step, and the log only ever grows; a report a gate of this process just wrote comes
    with its form (:class:`GateBody`), which is reused as it is.
    """

    def __init__(self, *_langgraph: object) -> None:
        # LangGraph passes (type[, operator]) to build and copy a channel; this one is always
        super().__init__(list, add_reports)  # a list of reports merged by add_reports
        self._json_src: list[Report] = []
        self._json: list[dict[str, Any]] = []
        # the forms of reports that came in as GateBody, by report, until checkpointed
        self._forms: dict[int, tuple[Report, dict[str, Any]]] = {}
        # the value as this channel last built it (typed reports only), and each
        # report id's place in it: a write then costs what it adds, not a walk of
        # every report the thread holds
        self._typed: list[Report] | None = None
        self._at: dict[str, int] = {}

    def update(self, values: Sequence[Any]) -> bool:
        fresh = [r for value in values for r in admitted(value, self._forms)]
        if not fresh:
            return False
        if self._typed is not None and self.value is self._typed:
            held, at = self._typed, self._at
        else:  # restored, copied or set from outside: typed and indexed once
            held = _coerce_list(self.value if isinstance(self.value, list) else [])
            at = self._at = {r.id: i for i, r in enumerate(held)}
        out = list(held)  # a new list: whoever holds the old value keeps it as it was
        for r in fresh:
            i = at.get(r.id)
            if i is None:
                at[r.id] = len(out)
                out.append(r)
            else:  # the same crossing delivered again: replaced where it stands
                out[i] = r
        self.value = self._typed = out
        return True

    def _form(self, report: Any) -> dict[str, Any]:
        known = self._forms.get(id(report))
        if known is not None and known[0] is report:
            return known[1]
        return Report.coerce(report).to_json_dict()

    def checkpoint(self) -> Any:
        value: Any = super().checkpoint()
        if not isinstance(value, list):
            return value
        src = self._json_src
        if len(src) <= len(value) and all(map(operator.is_, value, src)):
            done = len(src)  # the usual case (the log only grows), compared in C
        else:
            done = 0
            while done < len(src) and done < len(value) and value[done] is src[done]:
                done += 1
        if done == len(value) == len(src):
            return self._json
        self._json = self._json[:done] + [self._form(r) for r in value[done:]]
        self._json_src = list(value)
        self._forms.clear()
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


def reports_from_state(state: Any) -> ReportList:
    """The gate-sealed reports in a state dict or snapshot, typed (the others are in the
    result's ``refused``)."""
    if state is None:
        return ReportList()
    # A plain dict state has a ``values`` *method*; only a snapshot has ``values`` data.
    values = state if isinstance(state, Mapping) else getattr(state, "values", state)
    if isinstance(values, Mapping):
        return sorted_out(_items(values.get(REPORTS_KEY)))
    return sorted_out(_items(getattr(values, REPORTS_KEY, None)))


def _from_channel(item: Any) -> list[Any]:
    return _items((item.checkpoint.get("channel_values") or {}).get(REPORTS_KEY))


def _from_writes(item: Any) -> list[Any]:
    """Reports kept beside the step's tasks: a crossing that halted, and every crossing
    of a graph whose state is one root value (no channel to hold them)."""
    found: list[Any] = []
    for write in getattr(item, "pending_writes", None) or ():
        if len(write) >= 3 and write[1] == REPORTS_KEY:
            found += _items(write[2])
    return found


def _from_tuple(item: Any) -> list[Any]:
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


def _collect(items: Any, whole: bool, thread: str | None) -> ReportList:
    """The channel of the latest checkpoint of each namespace (it accumulates), and the
    reports kept beside the tasks of every checkpoint."""
    latest: dict[str, list[Any]] = {}
    aside: list[Any] = []
    for item in items:
        ns = (item.config.get("configurable") or {}).get("checkpoint_ns") or ""
        if ns not in latest:  # newest first: the first seen is the latest
            latest[ns] = _from_channel(item)
        aside += _from_writes(item)
        if not whole:
            break
    return _merged([b for bs in latest.values() for b in bs] + aside, thread)


def _merged(items: list[Any], thread: str | None) -> ReportList:
    """One entry per report id (the latest delivery of a crossing kept), checked,
    oldest first."""
    by_id: dict[Any, Any] = {}
    odd: list[Any] = []
    for item in items:
        body = _body(item)
        ident = body.get("id") if isinstance(body, Mapping) else None
        if not isinstance(ident, str):
            odd.append(item)
        elif ident not in by_id or _deliveries(body) > _deliveries(_body(by_id[ident])):
            by_id[ident] = item
    found = sorted_out([*by_id.values(), *odd], thread)
    rows = sorted(found.rows, key=lambda r: (r.report is None, r.report and r.report.finished_at))
    return ReportList(rows)


def _deliveries(body: Any) -> int:
    value = body.get("deliveries", 1) if isinstance(body, Mapping) else 1
    return value if isinstance(value, int) else 1


def reports(graph: Any, config: RunnableConfig) -> ReportList:
    """Every report the gates of the thread in ``config`` wrote, oldest first.

    Reads the checkpoints, so it needs a graph compiled with a checkpointer: the
    ``trust_reports`` channel (hidden from the graph's output unless the state schema
    declares it), the reports of crossings that halted (kept with the failed task),
    and those of gates inside subgraphs. Only reports a gate sealed are returned; an
    entry another node, the caller's input or an edit of the checkpoint put there is
    in the result's ``refused`` (with the reason), never shown as a crossing.

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
    thread = _thread(cfg)
    if whole:
        return _collect(saver.list(cfg), True, thread)
    item = saver.get_tuple(cfg)
    return ReportList() if item is None else _merged(_from_tuple(item), thread)


async def areports(graph: Any, config: RunnableConfig) -> ReportList:
    """Async :func:`reports`."""
    scope = _scope(graph, config)
    if scope is None:
        return reports_from_state(await graph.aget_state(config))
    saver, cfg, whole = scope
    thread = _thread(cfg)
    if whole:
        return _collect([item async for item in saver.alist(cfg)], True, thread)
    item = await saver.aget_tuple(cfg)
    return ReportList() if item is None else _merged(_from_tuple(item), thread)


def _thread(config: Mapping[str, Any]) -> str | None:
    value = (config.get("configurable") or {}).get("thread_id")
    return None if value is None else str(value)
