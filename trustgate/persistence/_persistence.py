"""What ``connect()`` returns: one database's checkpointer, store, ledger and report log.

The backends (:mod:`trustgate.persistence._sqlite`, :mod:`trustgate.persistence._postgres`)
build these; the facade (:mod:`trustgate.persistence._database`) picks the backend.
Kept apart from both so that neither imports the other.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from trustgate.persistence._urls import Backend, redact

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore

    from trustgate.evidence.ledger import ArtifactLedger
    from trustgate.persistence._log import ReportHistory, ReportList
    from trustgate.persistence._saver import ReportingSaver

__all__ = ["AsyncPersistence", "Persistence"]

logger = logging.getLogger(__name__)


def _close_quietly(fn: Callable[[], Any], what: str) -> None:
    try:
        fn()
    except Exception as exc:
        # Closing is best effort: one connection failing to close must not keep
        # the others open, and the caller is done with them anyway.
        logger.warning("closing %s failed: %s", what, exc)


class Persistence:
    """A ready checkpointer, store, artifact ledger and report log on one database.

    Use it as a context manager (or call :meth:`close`). Attributes:

    * ``checkpointer``: a :class:`~trustgate.persistence.ReportingSaver` around
      ``SqliteSaver`` / ``PostgresSaver`` (set up), for ``compile``; the wrapped
      saver is ``checkpointer.saver``;
    * ``store``: ``SqliteStore`` / ``PostgresStore`` (set up), for ``compile``;
    * ``ledger``: the artifact ledger (:class:`~trustgate.files.SqliteLedger` /
      :class:`~trustgate.files.PostgresLedger`);
    * ``report_log``: :class:`~trustgate.persistence.ReportHistory` over every
      logged crossing.
    """

    def __init__(
        self,
        *,
        backend: Backend,
        url: str,
        checkpointer: ReportingSaver,
        store: BaseStore,
        ledger: ArtifactLedger,
        report_log: ReportHistory,
        closers: Sequence[Callable[[], Any]],
    ) -> None:
        self.backend = backend
        self.url = url
        self.checkpointer = checkpointer
        self.store = store
        self.ledger = ledger
        self.report_log = report_log
        self._closers = list(closers)
        self._closed = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.backend}, {redact(self.url)!r})"

    def history(
        self,
        thread: str | None = None,
        gate: str | None = None,
        since: str | datetime | None = None,
        *,
        limit: int | None = None,
    ) -> ReportList:
        """Shortcut for ``self.report_log.history(...)``: the sealed reports, with the
        rows whose seal fails in ``.refused``."""
        return self.report_log.history(thread, gate, since, limit=limit)

    def reconcile(self, thread: str | None = None) -> int:
        """Log what the checkpoints hold and the log lacks (one thread, or all).

        Only needed after a crash, for threads nobody reads again; see
        :mod:`trustgate.persistence`. Returns how many reports were added.
        """
        return self.checkpointer.reconcile(_thread_config(thread))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for fn in reversed(self._closers):
            _close_quietly(fn, f"a {self.backend} connection")

    def __enter__(self) -> Persistence:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _thread_config(thread: str | None) -> Any:
    return None if thread is None else {"configurable": {"thread_id": thread}}


class AsyncPersistence(Persistence):
    """:class:`Persistence` with the async savers and stores (for ``ainvoke``/``astream``).

    The ledger keeps its sync API; the report log is also read with
    :meth:`ahistory`.
    """

    def __init__(self, *, aclosers: Sequence[Callable[[], Any]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._aclosers = list(aclosers)

    async def ahistory(
        self,
        thread: str | None = None,
        gate: str | None = None,
        since: str | datetime | None = None,
        *,
        limit: int | None = None,
    ) -> ReportList:
        return await self.report_log.ahistory(thread, gate, since, limit=limit)

    async def areconcile(self, thread: str | None = None) -> int:
        """Async :meth:`Persistence.reconcile`."""
        return await self.checkpointer.areconcile(_thread_config(thread))

    async def aclose(self) -> None:
        if self._closed:
            return
        for fn in reversed(self._aclosers):
            try:
                await fn()
            except Exception as exc:
                logger.warning("closing an async %s connection failed: %s", self.backend, exc)
        self.close()

    async def __aenter__(self) -> AsyncPersistence:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
