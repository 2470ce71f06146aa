"""One database for everything a guarded graph keeps: checkpoints, store, ledger, reports.

``connect()`` returns LangGraph's own checkpointer and store for the
configured database (SQLite under ``.trustgate/`` by default, PostgreSQL when the
URL says ``postgresql://``), already set up, together with the artifact ledger and
the report log on the same database.

The report log, by composition
------------------------------
:class:`ReportingSaver` wraps *any* LangGraph checkpoint saver (``InMemorySaver``,
``SqliteSaver``, ``AsyncSqliteSaver``, ``PostgresSaver``, ``AsyncPostgresSaver``,
third-party ones). It delegates every method to the saver it holds, overrides
none of its private methods and runs none of its SQL, and logs each crossing
report it sees pass through (a gate's task write to ``trust_reports``, then the
cumulative channel of later checkpoints) into a :class:`ReportHistory`, once per
report id (``ON CONFLICT DO NOTHING``).

Not one transaction, reconciled instead: an arbitrary saver exposes no
transaction to join, so the log is written *after* the saver stored the writes
that carry a report, and gaps are closed from the saver's own rows:

* killed inside a gate: neither has the report; the resumed gate logs its one
  report;
* the saver's write fails: nothing is logged (the log comes after);
* killed, or the log write fails, between the saver's write and the log's: the
  report is in the saver only, and the log write error is raised, not swallowed.
  The next read of the thread (a resume, ``get_state``, ``trustgate.reports``)
  logs what the checkpoint and its pending writes hold, a released crossing is
  logged again (same id, one row) by the next checkpoint, and
  :meth:`Persistence.reconcile` sweeps threads nobody reads again;
* the checkpoint write fails after the report was logged: the saver keeps the
  task's writes, the resume applies them, the id is the same: one report;
* replayed writes, resumes, forks, two workers on one thread: one row per id.

A halted crossing's report exists only in pending writes kept beside the failed
task (never in a checkpoint), which is why the primary path is ``put_writes``.
The details per method are in :mod:`trustgate.persistence._saver`.

Example:
    ```python
    import trustgate
    from trustgate.persistence import connect

    with connect() as db:                      # or connect("postgresql://...")
        app = trustgate.guard(builder, gates).compile(
            checkpointer=db.checkpointer, store=db.store
        )
        app.invoke(inputs, {"configurable": {"thread_id": "t1"}})
        for report in db.history(thread="t1"):
            print(report.gate, report.decision, [str(f) for f in report.failed])
    ```

Any other saver, any log:

    ```python
    from trustgate.persistence import ReportingSaver, SqliteReportHistory

    saver = ReportingSaver(MyRedisSaver(...), SqliteReportHistory("reports.db"))
    ```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trustgate.evidence.keys import EPHEMERAL_KEY
from trustgate.persistence._database import (
    DEFAULT_DATABASE,
    ENV_VAR,
    AsyncPersistence,
    Backend,
    Persistence,
    aconnect,
    connect,
    history,
    open_report_log,
    resolve_url,
)
from trustgate.persistence._log import (
    InMemoryReportHistory,
    LoggedRow,
    ReportHistory,
    ReportList,
    parse_since,
)
from trustgate.persistence._saver import ReportingSaver
from trustgate.persistence._sqlite import SqliteReportHistory

if TYPE_CHECKING:
    from trustgate.persistence._postgres import PostgresReportHistory

__all__ = [
    "DEFAULT_DATABASE",
    "ENV_VAR",
    "EPHEMERAL_KEY",
    "AsyncPersistence",
    "Backend",
    "InMemoryReportHistory",
    "LoggedRow",
    "Persistence",
    "PostgresReportHistory",
    "ReportHistory",
    "ReportList",
    "ReportingSaver",
    "SqliteReportHistory",
    "aconnect",
    "connect",
    "history",
    "open_report_log",
    "parse_since",
    "resolve_url",
]


def __getattr__(name: str) -> Any:
    # psycopg is imported only when PostgreSQL is asked for (import trustgate
    # works without the postgres extra).
    if name == "PostgresReportHistory":
        from trustgate.persistence._postgres import PostgresReportHistory

        return PostgresReportHistory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
