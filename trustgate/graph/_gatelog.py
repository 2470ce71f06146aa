"""The report log a guarded graph's gates write themselves: ``guard(..., report_log=...)``.

Why the gate writes it, and not only :class:`~trustgate.persistence.ReportingSaver`: the
saver logs the reports it sees pass through a checkpointer the graph brings, and where
the graph is served by LangGraph's agent server (``langgraph dev``, a deployment) the
server brings its own checkpointer and refuses, or ignores, one the graph brings. There
the only code of ours that sees every crossing is the gate itself, so it records each
report into the log as part of recording the crossing:

* a released crossing: after its report was written beside its task, before anything
  is released; if the log cannot take it, nothing is released (the same as a failed
  write beside the task);
* a halted crossing: before the halt is raised; if the log cannot take it, the run
  fails with the log's error instead (nothing was released either way, and a halt
  whose record is lost must not pass unnoticed);
* a release delivered again after a crash: the same report with ``deliveries`` one
  higher, which the log writes over its first row.

Only what a gate sealed: the log is handed the JSON forms the gate sealed for
``trust_reports`` and checks each seal before it writes; one that does not hold fails
the crossing (nothing released) rather than being skipped.

Idempotent by report id: the log keeps one row per id (and a per-process memory of the
ids it holds), so a gate-written log and a ``ReportingSaver`` over the same database,
retries and nested guarded graphs never make two rows of one crossing.

``report_log`` takes a :class:`~trustgate.persistence.ReportHistory`, a database URL
(SQLite path or ``postgresql://``), or ``True`` for the database
``TRUSTGATE_DATABASE_URL`` names when the first crossing runs (the default database
when it is unset, as for :func:`~trustgate.persistence.connect`). A URL is opened once
per process, on first use, and shared by every gate and by :mod:`trustgate.server`.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from trustgate import _compat
from trustgate import _report_seal as report_seal
from trustgate._report import REPORTS_KEY
from trustgate.errors import ConfigurationError
from trustgate.persistence._log import ReportHistory, report_id

__all__ = ["GateLog", "ReportLogArg", "gate_log", "reports_in", "shared_log"]

logger = logging.getLogger(__name__)

ReportLogArg: TypeAlias = "ReportHistory | str | os.PathLike[str] | bool | None"
"""What ``guard(report_log=...)`` and :mod:`trustgate.server` take."""

# one open log per database and process: a forked worker opens its own (neither a
# SQLite connection nor a psycopg pool survives a fork)
_OPEN: dict[tuple[int, str, str], ReportHistory] = {}
_OPEN_LOCK = threading.Lock()


def shared_log(url: str | os.PathLike[str] | None = None) -> ReportHistory:
    """The report log of the database ``url`` names (``None``: ``TRUSTGATE_DATABASE_URL``,
    else the default), opened for writing once per process and kept open until exit."""
    from trustgate.persistence._urls import resolve_url

    backend, target = resolve_url(url)
    if backend == "sqlite":
        target = os.path.abspath(target)  # the same file whatever the working directory
    key = (os.getpid(), backend, target)
    with _OPEN_LOCK:
        found = _OPEN.get(key)
        if found is None:
            found = _open(backend, target)
            _OPEN[key] = found
            logger.info("report log opened for the gates: %s (%s)", backend, found)
        return found


def _open(backend: str, target: str) -> ReportHistory:
    if backend == "postgres":
        try:
            from trustgate.persistence._postgres import PostgresReportHistory
        except ImportError as exc:
            from trustgate._meta import install_hint

            raise ConfigurationError(
                f"a PostgreSQL report log needs the 'postgres' extra: "
                f"{install_hint('postgres')} ({exc})"
            ) from None
        return PostgresReportHistory(target)
    from trustgate.persistence._sqlite import SqliteReportHistory

    return SqliteReportHistory(target)


@atexit.register
def _close_all() -> None:
    with _OPEN_LOCK:
        opened = [log for (pid, _, _), log in _OPEN.items() if pid == os.getpid()]
        _OPEN.clear()
    for log in opened:
        try:
            log.close()
        except Exception as exc:  # closing at exit: the others still close
            logger.warning("closing the gates' report log failed: %s", exc)


class GateLog:
    """Where the gates of one guarded graph record their reports (see the module
    docstring): a given log, or a database opened on first use."""

    def __init__(self, target: ReportHistory | str | os.PathLike[str] | None) -> None:
        self._given = target if isinstance(target, ReportHistory) else None
        self._url = None if isinstance(target, ReportHistory) else target

    def __repr__(self) -> str:
        where = self._given if self._given is not None else (self._url or "TRUSTGATE_DATABASE_URL")
        return f"GateLog({where!r})"

    def log(self) -> ReportHistory:
        """The log, opened now if it is a URL not yet opened in this process."""
        if self._given is not None:
            return self._given
        return shared_log(self._url)

    def record(self, reports: Iterable[Any], config: Mapping[str, Any]) -> None:
        """Log ``reports`` (or raise, with a note saying what was not recorded)."""
        items = list(reports)
        if not items:
            return
        thread, ns = _where(config)
        try:
            _only_sealed(items)
            self.log().record(items, thread_id=thread, checkpoint_ns=ns)
        except Exception as exc:
            _noted(exc, items)
            raise

    async def arecord(self, reports: Iterable[Any], config: Mapping[str, Any]) -> None:
        """Async :meth:`record`: the log is opened and written off the event loop."""
        items = list(reports)
        if not items:
            return
        thread, ns = _where(config)
        try:
            _only_sealed(items)
            log = self._given if self._given is not None else await asyncio.to_thread(self.log)
            await log.arecord(items, thread_id=thread, checkpoint_ns=ns)
        except Exception as exc:
            _noted(exc, items)
            raise


def _only_sealed(items: Sequence[Any]) -> None:
    """Refuse, before anything is written, a report whose gate seal does not hold.

    The gate hands the log the JSON forms it sealed for ``trust_reports``; the log itself
    would skip one that does not verify (with a warning), and the crossing would then be
    released with no row. So the gate's log checks first and the crossing fails instead:
    only what a gate sealed is recorded, and nothing is released unrecorded."""
    for item in items:
        status, reason = report_seal.check(item)
        if status != "sealed":
            raise ConfigurationError(
                f"the report log records only reports a gate sealed; report "
                f"{str(report_id(item) or '?')[:12]!r} is {status}: {reason}"
            )


def _where(config: Mapping[str, Any]) -> tuple[str | None, str]:
    meta = _compat.meta(config)
    thread = meta.get("thread_id")
    return (None if thread is None else str(thread)), str(meta.get("checkpoint_ns") or "")


def _noted(exc: BaseException, items: Sequence[Any]) -> None:
    ids = [str(report_id(r) or "?") for r in items]
    logger.warning(
        "the report log could not record %d crossing report(s) (%s): %s: %s",
        len(items),
        ", ".join(i[:12] for i in ids),
        type(exc).__name__,
        exc,
    )
    exc.add_note(f"trustgate: the report log could not record crossing report(s) {', '.join(ids)}")


def gate_log(value: Any) -> GateLog | None:
    """``guard(report_log=...)`` checked: a :class:`GateLog`, or ``None`` for none."""
    if value is None or value is False:
        return None
    if value is True:
        return GateLog(None)
    if isinstance(value, ReportHistory):
        return GateLog(value)
    if isinstance(value, (str, os.PathLike)):
        from trustgate.persistence._urls import resolve_url

        resolve_url(value)  # a URL of no known database fails here, not at the first crossing
        return GateLog(value)
    raise ConfigurationError(
        "guard(report_log=...) takes a ReportHistory, a database URL (a SQLite path or "
        f"postgresql://...), True (the database TRUSTGATE_DATABASE_URL names) or None, "
        f"not {type(value).__name__}"
    )


def reports_in(writes: Sequence[tuple[str, Any]]) -> list[Any]:
    """The reports among the writes a gate keeps beside its task: the JSON forms it
    writes to ``trust_reports``, exactly as written (the log records those, not a
    report rebuilt from them)."""
    found: list[Any] = []
    for channel, value in writes:
        if channel == REPORTS_KEY:
            found.extend(value if isinstance(value, (list, tuple)) else [value])
    return found
