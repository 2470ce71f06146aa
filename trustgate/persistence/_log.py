"""The report log: one row per crossing report, keyed on the report id.

Why a log beside the checkpoints: checkpoints answer "where is this run"; a reviewer
asks "which gates ran on this thread, what did they find, what did they override,
who approved what", across threads, filtered by gate and time, after runs were
pruned. The log answers that with one row per report.

Why put-if-absent on the report id: the same report reaches the log more than
once by design (the task write that carried it, the cumulative ``trust_reports``
channel of later checkpoints, a reconciliation sweep, two workers reading one
thread), so every insert is ``ON CONFLICT (id) DO NOTHING`` and the id alone
decides. Each log also remembers, per process, which ids it already holds, so the
common case (a report seen again in a later checkpoint) costs a set lookup and no
database round trip.

This module holds the backend-neutral part (rows, the query, ``--since`` parsing)
and the in-memory log; SQLite and PostgreSQL live in their own modules.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, NamedTuple

from pydantic import ValidationError

from trustgate._report import Report
from trustgate.errors import InputError

__all__ = [
    "InMemoryReportHistory",
    "ReportHistory",
    "ReportRow",
    "parse_since",
]

logger = logging.getLogger(__name__)


class ReportRow(NamedTuple):
    """One report as the log stores it (the body is the report's JSON)."""

    id: str
    thread_id: str | None
    checkpoint_ns: str
    gate: str
    node: str
    decision: str
    released: bool
    started_at: datetime
    finished_at: datetime
    body: str


_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(value: str | datetime | None, *, now: datetime | None = None) -> datetime | None:
    """A ``--since`` value as an aware UTC datetime.

    Accepts an ISO 8601 time (naive means UTC) or a duration back from now:
    ``30m``, ``2h``, ``7d``, ``1w``.

    Example:
        ```python
        parse_since("2026-01-31T12:00:00Z")
        parse_since("2h")      # two hours ago
        ```
    """
    if value is None or isinstance(value, datetime):
        if isinstance(value, datetime) and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value
    m = _RELATIVE.match(value)
    if m:
        try:
            delta = timedelta(**{_UNITS[m.group(2).lower()]: float(m.group(1))})
            return (now or datetime.now(UTC)) - delta
        except OverflowError:
            raise InputError(f"time {value!r} reaches too far back") from None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(
            f"cannot read time {value!r}: use ISO 8601 (2026-01-31T12:00:00Z) or a "
            "duration such as 30m, 2h, 7d"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def report_id(item: Any) -> str | None:
    """The id of a report or of its dict form, without validating the rest."""
    value = item.get("id") if isinstance(item, Mapping) else getattr(item, "id", None)
    return value if isinstance(value, str) else None


def _as_report(item: Any) -> Report | None:
    try:
        return Report.coerce(item)
    except (ValidationError, TypeError, ValueError) as exc:
        # Not a report: the trust_reports channel holds only what gates write, so
        # this is someone else's value under our channel name. Logging it as a
        # report would put junk in an audit trail; dropping it silently would hide
        # it. Say so, and keep logging the others.
        logger.warning(
            "trust_reports holds a value that is not a crossing report (%s); not logged: %s",
            type(item).__name__,
            exc,
        )
        return None


class ReportHistory(ABC):
    """The report log: every crossing's report, written once, queryable after the fact.

    Written by :class:`~trustgate.persistence.ReportingSaver` (any checkpoint saver
    wrapped); read with :meth:`history`. Backends: :class:`InMemoryReportHistory`,
    ``SqliteReportHistory``, ``PostgresReportHistory``.

    Example:
        ```python
        with connect() as db:
            halted = [r for r in db.report_log.history(gate="inspector")
                      if r.decision == "halted"]
        ```
    """

    backend: ClassVar[str] = "memory"
    _SEEN_LIMIT: ClassVar[int] = 100_000

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._seen_lock = threading.Lock()

    # -- writing -----------------------------------------------------------------

    def record(
        self,
        reports: Iterable[Any],
        *,
        thread_id: str | None = None,
        checkpoint_ns: str = "",
        probe: bool = False,
    ) -> int:
        """Log the reports not logged yet; returns how many rows this call added.

        ``thread_id`` / ``checkpoint_ns`` fill in what a report does not carry
        itself. ``probe`` first asks which ids the log already holds (a read), so
        a reconciliation that finds nothing new never takes a write lock.
        """
        rows = self._rows(reports, thread_id, checkpoint_ns)
        if not rows:
            return 0
        if probe:
            held = self._existing([r.id for r in rows])
            self._remember(held)
            rows = [r for r in rows if r.id not in held]
            if not rows:
                return 0
        added = self._insert(rows)
        self._remember(r.id for r in rows)
        if added:
            logger.debug("logged %d crossing report(s) of thread %s", added, thread_id)
        return added

    async def arecord(
        self,
        reports: Iterable[Any],
        *,
        thread_id: str | None = None,
        checkpoint_ns: str = "",
        probe: bool = False,
    ) -> int:
        """Async :meth:`record` (no round trip when every report is already known)."""
        rows = self._rows(reports, thread_id, checkpoint_ns)
        if not rows:
            return 0
        if probe:
            held = await self._aexisting([r.id for r in rows])
            self._remember(held)
            rows = [r for r in rows if r.id not in held]
            if not rows:
                return 0
        added = await self._ainsert(rows)
        self._remember(r.id for r in rows)
        if added:
            logger.debug("logged %d crossing report(s) of thread %s", added, thread_id)
        return added

    def _rows(
        self, reports: Iterable[Any], thread_id: str | None, checkpoint_ns: str
    ) -> list[ReportRow]:
        fresh: list[Any] = []
        ids: set[str] = set()
        with self._seen_lock:
            for item in reports:
                rid = report_id(item)
                if rid is not None and (rid in self._seen or rid in ids):
                    continue  # known to the log, or twice in this batch
                if rid is not None:
                    ids.add(rid)
                fresh.append(item)
        out: list[ReportRow] = []
        for item in fresh:
            report = _as_report(item)
            if report is None:
                continue
            out.append(
                ReportRow(
                    id=report.id,
                    thread_id=report.thread_id or thread_id,
                    checkpoint_ns=report.checkpoint_ns or checkpoint_ns or "",
                    gate=report.gate,
                    node=report.node,
                    decision=report.decision,
                    released=report.released,
                    started_at=_aware(report.started_at),
                    finished_at=_aware(report.finished_at),
                    body=report.model_dump_json(),
                )
            )
        return out

    def _remember(self, ids: Iterable[str]) -> None:
        with self._seen_lock:
            if len(self._seen) > self._SEEN_LIMIT:
                self._seen.clear()  # only a cache: the database still decides
            self._seen.update(ids)

    # -- reading -----------------------------------------------------------------

    def history(
        self,
        thread: str | None = None,
        gate: str | None = None,
        since: str | datetime | None = None,
        *,
        limit: int | None = None,
    ) -> list[Report]:
        """Reports oldest first, filtered by thread id, gate name and finish time."""
        if limit is not None and int(limit) < 0:
            raise InputError(f"limit must be 0 or more, not {limit}")
        when = parse_since(since)
        bodies = self._select(thread, gate, when, None if limit is None else int(limit))
        return [Report.model_validate_json(body) for body in bodies]

    async def ahistory(
        self,
        thread: str | None = None,
        gate: str | None = None,
        since: str | datetime | None = None,
        *,
        limit: int | None = None,
    ) -> list[Report]:
        """Async :meth:`history` (the query runs in a worker thread)."""
        return await asyncio.to_thread(self.history, thread, gate, since, limit=limit)

    @abstractmethod
    def count(self) -> int:
        """How many reports the log holds."""

    def close(self) -> None:  # noqa: B027 - a log that owns nothing has nothing to close
        """Release what the log holds open (a connection it owns)."""

    # -- what a backend provides ---------------------------------------------------

    @abstractmethod
    def _insert(self, rows: Sequence[ReportRow]) -> int:
        """Insert, skipping ids already present; returns the rows added."""

    @abstractmethod
    def _existing(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` the log already holds."""

    @abstractmethod
    def _select(
        self, thread: str | None, gate: str | None, since: datetime | None, limit: int | None
    ) -> list[str]:
        """Report bodies (JSON) matching the filters, oldest first."""

    async def _ainsert(self, rows: Sequence[ReportRow]) -> int:
        return await asyncio.to_thread(self._insert, rows)

    async def _aexisting(self, ids: Sequence[str]) -> set[str]:
        return await asyncio.to_thread(self._existing, ids)


def _aware(when: datetime) -> datetime:
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def select_sql(
    mark: str,
    thread: str | None,
    gate: str | None,
    since: Any,
    limit: int | None,
) -> tuple[str, list[Any]]:
    """The history query for a SQL backend (``mark``: its placeholder)."""
    where: list[str] = []
    params: list[Any] = []
    if thread is not None:
        where.append(f"thread_id = {mark}")
        params.append(thread)
    if gate is not None:
        where.append(f"gate = {mark}")
        params.append(gate)
    if since is not None:
        where.append(f"finished_at >= {mark}")
        params.append(since)
    sql = "SELECT body FROM trustgate_reports"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY finished_at, id"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return sql, params


class InMemoryReportHistory(ReportHistory):
    """A report log in this process's memory (tests, notebooks, ``InMemorySaver``).

    Example:
        ```python
        from langgraph.checkpoint.memory import InMemorySaver
        from trustgate.persistence import InMemoryReportHistory, ReportingSaver

        saver = ReportingSaver(InMemorySaver(), InMemoryReportHistory())
        ```
    """

    backend: ClassVar[str] = "memory"

    def __init__(self) -> None:
        super().__init__()
        self._rows_by_id: dict[str, ReportRow] = {}
        self._lock = threading.Lock()

    def count(self) -> int:
        with self._lock:
            return len(self._rows_by_id)

    def _insert(self, rows: Sequence[ReportRow]) -> int:
        added = 0
        with self._lock:
            for row in rows:
                if row.id not in self._rows_by_id:
                    self._rows_by_id[row.id] = row
                    added += 1
        return added

    def _existing(self, ids: Sequence[str]) -> set[str]:
        with self._lock:
            return {i for i in ids if i in self._rows_by_id}

    def _select(
        self, thread: str | None, gate: str | None, since: datetime | None, limit: int | None
    ) -> list[str]:
        with self._lock:
            rows = list(self._rows_by_id.values())
        picked = sorted(
            (
                r
                for r in rows
                if (thread is None or r.thread_id == thread)
                and (gate is None or r.gate == gate)
                and (since is None or r.finished_at >= since)
            ),
            key=lambda r: (r.finished_at, r.id),
        )
        if limit is not None:
            picked = picked[:limit]
        return [r.body for r in picked]

    async def _ainsert(self, rows: Sequence[ReportRow]) -> int:
        return self._insert(rows)

    async def _aexisting(self, ids: Sequence[str]) -> set[str]:
        return self._existing(ids)
