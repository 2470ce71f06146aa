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

Why every row is sealed: the log is an audit trail kept in a database that more
than the gate can write. Each row carries an HMAC-SHA256 (``seal``) under the ledger
key (:mod:`trustgate.evidence.keys`), with the key's fingerprint (``key_id``), over the
canonical JSON of its identifying columns (id, thread, namespace, gate, node,
decision, released, start and finish times in fixed-width UTC) and the report body
exactly as stored (the report's own JSON). Reading re-computes it:

* ``sealed``: the seal holds under this log's key; the report is returned;
* ``unsealed``: no seal (a row written before rows were sealed, or inserted by
  someone else) or a seal under another key: nothing vouches for it;
* ``forged``: a seal under this key that does not fit the row: a column or the
  report was edited after it was written (a ``halted`` turned ``pass``, a finding
  removed);
* ``unreadable``: the row cannot even be read (a damaged body, a column of the wrong
  type, text that is not UTF-8).

:meth:`ReportHistory.history` returns only sealed reports, as a :class:`ReportList`
whose ``rows`` hold every row read with its status and ``refused`` the others (each
with the reason), and logs one warning with the counts; one bad row never hides the
rest. What the seal cannot see: rows deleted outright, and reports recovered into
the log from the checkpoints (:meth:`~trustgate.persistence.ReportingSaver.reconcile`,
a read after a crash), which are sealed as the checkpoint holds them.

This module holds the backend-neutral part (rows, seals, the query, ``--since``
parsing) and the in-memory log; SQLite and PostgreSQL live in their own modules.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re
import threading
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, NamedTuple

from pydantic import ValidationError

from trustgate import _report_seal as report_seal
from trustgate._report import LoggedRow, Report, ReportList, RowStatus
from trustgate.errors import ConfigurationError, InputError
from trustgate.evidence.keys import KeyArg, SealKey, resolve_key

__all__ = [
    "MAX_LIMIT",
    "InMemoryReportHistory",
    "LoggedRow",
    "ReportHistory",
    "ReportList",
    "ReportRow",
    "RowStatus",
    "parse_since",
]

logger = logging.getLogger(__name__)

MAX_LIMIT = 1_000_000_000
"""The largest ``limit`` a history query takes (``--limit``)."""

_SEAL_CONTEXT = b"trustgate-report-seal-v1\x00"
COLUMNS = (
    "id",
    "thread_id",
    "checkpoint_ns",
    "gate",
    "node",
    "decision",
    "released",
    "started_at",
    "finished_at",
    "body",
    "key_id",
    "seal",
)
"""The report log's columns, in the order every backend selects them."""


class ReportRow(NamedTuple):
    """One report as the log stores it (the body is the report's JSON), with its seal."""

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
    key_id: str
    seal: str


def utc_text(when: datetime) -> str:
    """Fixed-width UTC text: what SQLite stores, and what seals are computed over."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _seal_payload(
    ident: str,
    thread_id: str | None,
    checkpoint_ns: str,
    gate: str,
    node: str,
    decision: str,
    released: bool,
    started_at: str,
    finished_at: str,
    body: str,
) -> bytes:
    envelope = {
        "id": ident,
        "thread_id": thread_id,
        "checkpoint_ns": checkpoint_ns,
        "gate": gate,
        "node": node,
        "decision": decision,
        "released": released,
        "started_at": started_at,
        "finished_at": finished_at,
        "body": body,
    }
    return json.dumps(envelope, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


class _Unreadable(Exception):
    """A column of a stored row has a value no report log writes."""


def _text(value: Any, column: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise _Unreadable(f"its {column} is not valid UTF-8") from None
    if isinstance(value, str):
        return value
    raise _Unreadable(f"its {column} is a {type(value).__name__}, not text")


def _time(value: Any, column: str) -> str:
    if isinstance(value, datetime):
        return utc_text(value)
    text = _text(value, column)
    assert text is not None
    return text


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise _Unreadable(f"its released column holds {value!r}, not a boolean")


def _shown(value: Any) -> str | None:
    """A column as a string for display, whatever it holds."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return utc_text(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


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
    aware = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    try:
        aware.astimezone(UTC)  # what the query compares: it must exist in UTC
    except OverflowError:
        raise InputError(f"time {value!r} is out of range") from None
    return aware


def report_id(item: Any) -> str | None:
    """The id of a report or of its dict form, without validating the rest."""
    value = item.get("id") if isinstance(item, Mapping) else getattr(item, "id", None)
    return value if isinstance(value, str) else None


def _redelivered(item: Any) -> bool:
    """A report of a release delivered again (``deliveries`` above one): logged over the
    row of its first delivery, so the log says the output was released twice."""
    value = item.get("deliveries") if isinstance(item, Mapping) else getattr(item, "deliveries", 1)
    return isinstance(value, int) and value > 1


def _row_deliveries(row: ReportRow) -> int:
    """How many times the row's report says its release was delivered (one unless a
    crashed task was run again)."""
    try:
        value = json.loads(row.body).get("deliveries", 1)
    except (ValueError, AttributeError):
        return 1
    return value if isinstance(value, int) else 1


def _as_report(item: Any) -> Report | None:
    """The report a gate wrote, or ``None`` (with a warning) for anything else under the
    channel's name: a value that is not a report, or a report no gate sealed (written
    by another node or the caller's input, or edited in a checkpoint). Logging those
    would put them in an audit trail as crossings; dropping them silently would hide
    them."""
    body = item.to_json_dict() if isinstance(item, Report) else item
    status, reason = report_seal.check(body)
    if status != "sealed":
        ident = body.get("id") if isinstance(body, Mapping) else None
        logger.warning(
            "trust_reports holds %s that is not logged (%s): %s",
            f"report {str(ident)[:12]!r}" if isinstance(ident, str) else "a value",
            status,
            reason,
        )
        return None
    try:
        return Report.coerce(item)
    except (ValidationError, TypeError, ValueError) as exc:
        logger.warning("a sealed trust_reports entry is not a report; not logged: %s", exc)
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
    _seal_key: SealKey

    def __init__(
        self,
        *,
        key: KeyArg = None,
        required_for: str | None = None,
        allow_readable_key_file: bool = False,
    ) -> None:
        """``key``: what rows are sealed and verified under (see
        :mod:`trustgate.evidence.keys`); ``required_for`` names the database when it is
        one other processes read, so that a missing key is an error, not a random key."""
        self._seal_key = resolve_key(
            key, required_for=required_for, allow_readable_key_file=allow_readable_key_file
        )
        self._seen: set[str] = set()
        self._seen_lock = threading.Lock()

    @property
    def seal_key(self) -> SealKey:
        """The key this log seals and verifies rows under (the same as the ledger's)."""
        if not hasattr(self, "_seal_key"):  # a subclass that did not call __init__
            self._seal_key = resolve_key(None)
        return self._seal_key

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
            rows = [r for r in rows if r.id not in held or _row_deliveries(r) > 1]
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
            rows = [r for r in rows if r.id not in held or _row_deliveries(r) > 1]
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
                if rid is not None and rid in ids:
                    continue  # twice in this batch
                if rid is not None and rid in self._seen and not _redelivered(item):
                    continue  # known to the log
                if rid is not None:
                    ids.add(rid)
                fresh.append(item)
        out: list[ReportRow] = []
        key = self.seal_key
        for item in fresh:
            report = _as_report(item)
            if report is None:
                continue
            row_thread = report.thread_id or thread_id
            ns = report.checkpoint_ns or checkpoint_ns or ""
            started, finished = _aware(report.started_at), _aware(report.finished_at)
            body = report.model_dump_json()
            payload = _seal_payload(
                report.id,
                row_thread,
                ns,
                report.gate,
                report.node,
                report.decision,
                bool(report.released),
                utc_text(started),
                utc_text(finished),
                body,
            )
            out.append(
                ReportRow(
                    id=report.id,
                    thread_id=row_thread,
                    checkpoint_ns=ns,
                    gate=report.gate,
                    node=report.node,
                    decision=report.decision,
                    released=bool(report.released),
                    started_at=started,
                    finished_at=finished,
                    body=body,
                    key_id=key.key_id,
                    seal=key.mac(_SEAL_CONTEXT, payload),
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
    ) -> ReportList:
        """Sealed reports oldest first, filtered by thread id, gate name and finish time.

        Every row's seal is checked on this read; rows that fail are not returned as
        reports but listed in the result's ``refused`` (see :class:`ReportList`), with
        one warning giving the counts.
        """
        thread = _filter_text(thread, "thread")
        gate = _filter_text(gate, "gate")
        checked = _check_limit(limit)
        when = parse_since(since)
        found = ReportList(self._verify(raw) for raw in self._select(thread, gate, when, checked))
        refused = found.refused
        if refused:
            counts = Counter(r.status for r in refused)
            logger.warning(
                "%d of %d report-log row(s) are not shown as crossings (%s): %s",
                len(refused),
                len(found.rows),
                ", ".join(f"{n} {status}" for status, n in sorted(counts.items())),
                "; ".join(f"{(r.id or '?')[:12]}: {r.reason}" for r in refused[:3])
                + ("; ..." if len(refused) > 3 else ""),
            )
        return found

    def _verify(self, raw: Sequence[Any]) -> LoggedRow:
        """One selected row (the columns of :data:`COLUMNS`) checked against its seal."""
        if len(raw) != len(COLUMNS):
            return LoggedRow("unreadable", None, reason="the row has the wrong columns")
        cols = dict(zip(COLUMNS, raw, strict=True))

        def row(status: RowStatus, reason: str | None, report: Report | None = None) -> LoggedRow:
            return LoggedRow(
                status,
                _shown(cols["id"]),
                thread_id=_shown(cols["thread_id"]),
                gate=_shown(cols["gate"]),
                node=_shown(cols["node"]),
                decision=_shown(cols["decision"]),
                finished_at=_shown(cols["finished_at"]),
                reason=reason,
                report=report,
            )

        try:
            ident = _text(cols["id"], "id")
            body = _text(cols["body"], "body")
            assert ident is not None and body is not None
            payload = _seal_payload(
                ident,
                _text(cols["thread_id"], "thread_id", optional=True),
                _text(cols["checkpoint_ns"], "checkpoint_ns") or "",
                _text(cols["gate"], "gate") or "",
                _text(cols["node"], "node") or "",
                _text(cols["decision"], "decision") or "",
                _flag(cols["released"]),
                _time(cols["started_at"], "started_at"),
                _time(cols["finished_at"], "finished_at"),
                body,
            )
            seal = _text(cols["seal"], "seal", optional=True)
            key_id = _text(cols["key_id"], "key_id", optional=True)
        except _Unreadable as exc:
            return row("unreadable", f"the row cannot be read: {exc}")
        key = self.seal_key
        if seal is None:
            return row(
                "unsealed",
                "the row carries no seal (written before report rows were sealed, "
                "or inserted by something other than trustgate)",
            )
        if key_id != key.key_id:
            return row(
                "unsealed",
                f"the row is sealed under another key (key id {key_id!r}), not this log's",
            )
        if not hmac.compare_digest(seal, key.mac(_SEAL_CONTEXT, payload)):
            return row(
                "forged",
                "the row does not match its seal: a column or the report was edited "
                "after it was written",
            )
        try:
            report = Report.model_validate_json(body)
        except ValidationError as exc:
            return row(
                "unreadable", f"the sealed body is not a report ({exc.error_count()} error(s))"
            )
        return row("sealed", None, report)

    async def ahistory(
        self,
        thread: str | None = None,
        gate: str | None = None,
        since: str | datetime | None = None,
        *,
        limit: int | None = None,
    ) -> ReportList:
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
    ) -> list[tuple[Any, ...]]:
        """Rows matching the filters, oldest first, as tuples of :data:`COLUMNS`."""

    async def _ainsert(self, rows: Sequence[ReportRow]) -> int:
        return await asyncio.to_thread(self._insert, rows)

    async def _aexisting(self, ids: Sequence[str]) -> set[str]:
        return await asyncio.to_thread(self._existing, ids)


def _aware(when: datetime) -> datetime:
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _filter_text(value: Any, what: str) -> str | None:
    """A thread or gate filter: text a database can compare (UTF-8, no NUL)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{what} must be text, not {type(value).__name__}")
    if "\x00" in value:
        raise InputError(f"{what} {value!r} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{what} {value!r} is not valid UTF-8") from None
    return value


def _check_limit(limit: Any) -> int | None:
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int):
        try:
            limit = int(limit)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"limit must be a whole number, not {limit!r}") from None
    if not 0 <= limit <= MAX_LIMIT:
        raise InputError(f"limit must be between 0 and {MAX_LIMIT:,}, not {limit}")
    return int(limit)


def select_sql(
    mark: str,
    thread: str | None,
    gate: str | None,
    since: Any,
    limit: int | None,
    *,
    sealed_columns: bool = True,
) -> tuple[str, list[Any]]:
    """The history query for a SQL backend (``mark``: its placeholder).

    ``sealed_columns=False`` reads a table made before rows were sealed (no
    ``key_id``/``seal`` columns): its rows come back unsealed.
    """
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
    columns = ", ".join(COLUMNS if sealed_columns else (*COLUMNS[:-2], "NULL", "NULL"))
    sql = f"SELECT {columns} FROM trustgate_reports"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY finished_at, id"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return sql, params


def read_only_insert(where: str) -> ConfigurationError:
    return ConfigurationError(f"the report log of {where} was opened read-only")


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

    def __init__(self, *, key: KeyArg = None) -> None:
        super().__init__(key=key)  # lives as long as the process: a random key is fine
        self._rows_by_id: dict[str, ReportRow] = {}
        self._lock = threading.Lock()

    def count(self) -> int:
        with self._lock:
            return len(self._rows_by_id)

    def _insert(self, rows: Sequence[ReportRow]) -> int:
        added = 0
        with self._lock:
            for row in rows:
                known = self._rows_by_id.get(row.id)
                if known is None or _row_deliveries(row) > _row_deliveries(known):
                    self._rows_by_id[row.id] = row  # new, or the same crossing delivered again
                    added += 1
        return added

    def _existing(self, ids: Sequence[str]) -> set[str]:
        with self._lock:
            return {i for i in ids if i in self._rows_by_id}

    def _select(
        self, thread: str | None, gate: str | None, since: datetime | None, limit: int | None
    ) -> list[tuple[Any, ...]]:
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
        return [tuple(r) for r in picked]

    async def _ainsert(self, rows: Sequence[ReportRow]) -> int:
        return self._insert(rows)

    async def _aexisting(self, ids: Sequence[str]) -> set[str]:
        return self._existing(ids)
