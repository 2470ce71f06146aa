"""``ReportingSaver``: any LangGraph checkpoint saver, plus the report log, by delegation.

Why composition: the report log used to be written inside the saver's own
transaction, which meant subclassing each saver, hooking its private cursor and
copying its SQL, and pinning every saver to one minor release. This wrapper only
calls the public :class:`~langgraph.checkpoint.base.BaseCheckpointSaver` methods of
the saver it holds and never touches its internals, so it works with
``InMemorySaver``, ``SqliteSaver``, ``AsyncSqliteSaver``, ``PostgresSaver``,
``AsyncPostgresSaver`` and third-party savers alike. The price is that the log
write cannot share the saver's transaction (an arbitrary saver exposes none), so
the log is *reconciled* with the saver's rows instead; the windows are below.

How a report reaches the log
----------------------------
A crossing's report is a write of the guarded task to the ``trust_reports``
channel. Every saver sees it three ways, and each is a point where the wrapper logs
it, keyed on the report id with ``ON CONFLICT DO NOTHING``:

1. ``put_writes`` / ``aput_writes`` (the primary path): the writes are handed to
   the wrapped saver first; only when that returned are the reports among them
   logged. A released crossing's report is the guarded task's own write. A
   *halted* crossing's report never reaches a checkpoint: the gate writes it beside
   the failed task (``put_writes`` on the run's checkpointer, under a task id
   LangGraph never runs, so a resume re-runs the task) and the node raises
   ``GateHalted``; a report written as the failing task's own write would be saved
   with its error write too. Either way this wrapper's ``put_writes`` sees it.
2. ``put`` / ``aput``: a released crossing's writes are applied, so the next
   checkpoint's ``channel_values["trust_reports"]`` holds the report
   (cumulatively). When that channel changed, ids this process has not logged are
   logged after the wrapped ``put`` returned. This also covers
   ``durability="exit"``, where intermediate task writes never reach the saver.
3. ``get_tuple`` / ``aget_tuple`` (the read a resume, ``get_state`` and
   ``trustgate.reports`` start with): reports in the checkpoint's channel and in
   its pending writes that the log does not hold are logged (a read first, so the
   usual case writes nothing).

Failure windows (what a crash or an error at each point leaves behind)
----------------------------------------------------------------------
* Killed inside a gate, before its task's writes reached the saver: neither the
  saver nor the log has the report. The resumed run re-runs the gate, which logs
  its one report.
* The wrapped ``put_writes`` raises: the log is not written (it is written only
  after), the run fails with the saver's error, and the resumed task re-runs.
* Killed (or the log write fails) after the wrapped ``put_writes`` returned and
  before the log insert: the report is in the saver's rows but not in the log.
  A log write error is logged at WARNING and raised (the run fails the way it
  would on a saver error; LangGraph drops a background write's error when the run
  already fails for another reason, such as the halt itself, hence the warning).
  The gap closes on the thread's next read: for a released
  crossing LangGraph's resume reads the checkpoint (3) and reuses the saved writes
  without re-running the task, and the next checkpoint carries the report (2); for
  a halted crossing the resume, ``get_state`` or ``trustgate.reports`` reads that
  checkpoint's pending writes (3). A thread nobody reads again keeps the gap until
  :meth:`ReportingSaver.reconcile` (or ``Persistence.reconcile``) sweeps the saver.
* A read (3) that cannot write the log still returns the checkpoint: the failure
  is logged at WARNING and the gap stays for the next read or the sweep.
* The checkpoint ``put`` fails after ``put_writes`` logged the report: the log
  keeps it, and so does the saver (the task's saved writes), so the resume applies
  the same writes with the same id: still one report.
* Replays (LangGraph reapplying saved writes on resume, a retried ``put_writes``,
  time travel and forks copying the cumulative channel, ``copy_thread``, two
  workers reading one thread): the same report id, so ``ON CONFLICT DO NOTHING``
  keeps one row.
* The log never holds a report the saver did not store first. It is an audit
  trail, so ``delete_thread`` / ``prune`` remove checkpoints, not logged reports.
* A task whose gate decided and which was then cancelled (a sibling failed) had
  its writes saved with the cancellation; its report is logged, and if LangGraph
  re-runs the task, that is a second crossing with a report of its own.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import AsyncIterator, Collection, Iterable, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from trustgate._report import REPORTS_KEY, Report
from trustgate.errors import ConfigurationError
from trustgate.persistence._log import ReportHistory

__all__ = ["ReportingSaver"]

logger = logging.getLogger(__name__)


def _items(value: Any) -> list[Any]:
    """The reports in one value of the ``trust_reports`` channel or one write to it."""
    if value is None:
        return []
    if isinstance(value, (Report, dict)):
        return [value]
    if isinstance(value, (list, tuple)):
        return list(value)
    logger.warning(
        "trust_reports holds a %s, not a list of reports; its content is not logged",
        type(value).__name__,
    )
    return []


def _written(writes: Iterable[Sequence[Any]], channel_at: int) -> list[Any]:
    out: list[Any] = []
    for write in writes:
        if len(write) > channel_at + 1 and write[channel_at] == REPORTS_KEY:
            out += _items(write[channel_at + 1])
    return out


def _where(config: RunnableConfig | None) -> dict[str, Any]:
    conf = (config or {}).get("configurable") or {}
    thread = conf.get("thread_id")
    return {
        "thread_id": None if thread is None else str(thread),
        "checkpoint_ns": str(conf.get("checkpoint_ns") or ""),
    }


def _held(item: CheckpointTuple) -> list[Any]:
    """Reports a stored checkpoint holds: its channel and its pending writes."""
    values = item.checkpoint.get("channel_values") or {}
    return _items(values.get(REPORTS_KEY)) + _written(item.pending_writes or (), 1)


def _noted(exc: BaseException, what: str) -> None:
    """Say what a failed log write left behind, on the error and in the log.

    The error is re-raised by the caller; the warning is there because LangGraph
    drops a background write's error when the run is already failing (a halt).
    """
    note = (
        f"trustgate: the checkpoint saver stored {what}, but the report log write failed; "
        "the report is logged when the thread is next read (resume, get_state) or by "
        "reconcile()"
    )
    logger.warning("%s: %s", note, exc)
    exc.add_note(note)


def _read_left_gap(exc: Exception, item: CheckpointTuple) -> None:
    # A read reconciles as a backstop; it must not fail the read (get_state, a
    # resume) because the log could not be written. The gap stays, and the next
    # read or reconcile() closes it.
    logger.warning(
        "report log not reconciled with checkpoint %s of thread %s (retried on the next read): %s",
        item.checkpoint.get("id"),
        _where(item.config)["thread_id"],
        exc,
    )


class ReportingSaver(BaseCheckpointSaver[Any]):
    """Wraps any checkpoint saver; logs every crossing report once, by report id.

    Compile the graph with this instead of the saver it wraps. Every method of
    :class:`~langgraph.checkpoint.base.BaseCheckpointSaver` is delegated to the
    wrapped saver (``saver``); ``put_writes``, ``put`` and ``get_tuple`` (and their
    async twins) also log the crossing reports they carry into ``report_log``
    after the wrapped call returned. Attributes the base class does not define
    (``setup``, ``conn``, ...) are the wrapped saver's. See the module docstring for
    why the log is reconciled rather than written in the saver's transaction, and
    what each failure leaves behind.

    Example:
        ```python
        from langgraph.checkpoint.memory import InMemorySaver
        from trustgate.persistence import InMemoryReportHistory, ReportingSaver

        saver = ReportingSaver(InMemorySaver(), InMemoryReportHistory())
        app = trustgate.guard(builder, gates).compile(checkpointer=saver)
        app.invoke(inputs, {"configurable": {"thread_id": "t1"}})
        saver.report_log.history(thread="t1")
        ```
    """

    saver: BaseCheckpointSaver[Any]
    report_log: ReportHistory

    def __init__(self, saver: BaseCheckpointSaver[Any], report_log: ReportHistory) -> None:
        if not isinstance(saver, BaseCheckpointSaver):
            raise ConfigurationError(
                f"ReportingSaver wraps a LangGraph BaseCheckpointSaver, not {type(saver).__name__}"
            )
        if not isinstance(report_log, ReportHistory):
            raise ConfigurationError(
                f"ReportingSaver logs into a ReportHistory, not {type(report_log).__name__}"
            )
        # BaseCheckpointSaver.__init__ is not called: it would build a serializer of
        # our own, and the serializer in use is the wrapped saver's (``serde``).
        self.saver = saver
        self.report_log = report_log

    def __repr__(self) -> str:
        return f"ReportingSaver({self.saver!r}, {type(self.report_log).__name__})"

    def __getattr__(self, name: str) -> Any:
        # Only reached for names this class and BaseCheckpointSaver do not define:
        # the wrapped saver's own API (setup, conn, from_conn_string, ...).
        saver = self.__dict__.get("saver")
        if saver is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(saver, name)

    @property
    def serde(self) -> SerializerProtocol:
        """The wrapped saver's serializer (the one its rows are written with)."""
        return self.saver.serde

    @serde.setter
    def serde(self, value: SerializerProtocol) -> None:
        self.saver.serde = value

    # -- writes: the primary path --------------------------------------------------

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.saver.put_writes(config, writes, task_id, task_path)
        reports = _written(writes, 0)
        if reports:
            try:
                self.report_log.record(reports, **_where(config))
            except Exception as exc:
                _noted(exc, f"task {task_id}'s writes")
                raise

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self.saver.aput_writes(config, writes, task_id, task_path)
        reports = _written(writes, 0)
        if reports:
            try:
                await self.report_log.arecord(reports, **_where(config))
            except Exception as exc:
                _noted(exc, f"task {task_id}'s writes")
                raise

    # -- checkpoints: the cumulative channel -----------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        stored = self.saver.put(config, checkpoint, metadata, new_versions)
        if REPORTS_KEY in new_versions:
            reports = _items((checkpoint.get("channel_values") or {}).get(REPORTS_KEY))
            if reports:
                try:
                    self.report_log.record(reports, **_where(config), probe=True)
                except Exception as exc:
                    _noted(exc, f"checkpoint {checkpoint.get('id')}")
                    raise
        return stored

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        stored = await self.saver.aput(config, checkpoint, metadata, new_versions)
        if REPORTS_KEY in new_versions:
            reports = _items((checkpoint.get("channel_values") or {}).get(REPORTS_KEY))
            if reports:
                try:
                    await self.report_log.arecord(reports, **_where(config), probe=True)
                except Exception as exc:
                    _noted(exc, f"checkpoint {checkpoint.get('id')}")
                    raise
        return stored

    # -- reads: reconcile what the saver holds -------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        item = self.saver.get_tuple(config)
        if item is not None and (reports := _held(item)):
            try:
                self.report_log.record(reports, **_where(item.config), probe=True)
            except Exception as exc:
                _read_left_gap(exc, item)
        return item

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        item = await self.saver.aget_tuple(config)
        if item is not None and (reports := _held(item)):
            try:
                await self.report_log.arecord(reports, **_where(item.config), probe=True)
            except Exception as exc:
                _read_left_gap(exc, item)
        return item

    def reconcile(self, config: RunnableConfig | None = None) -> int:
        """Log every report the wrapped saver holds that the log lacks; returns how many.

        ``config`` narrows the sweep as for ``list`` (``{"configurable":
        {"thread_id": "t1"}}``); ``None`` sweeps every thread. Only needed after a
        crash for threads nobody reads again (see the module docstring).
        """
        added = 0
        for item in self.saver.list(config):
            if reports := _held(item):
                added += self.report_log.record(reports, **_where(item.config), probe=True)
        if added:
            logger.info("reconciled %d crossing report(s) into the report log", added)
        return added

    async def areconcile(self, config: RunnableConfig | None = None) -> int:
        """Async :meth:`reconcile`."""
        added = 0
        async for item in self.saver.alist(config):
            if reports := _held(item):
                added += await self.report_log.arecord(reports, **_where(item.config), probe=True)
        if added:
            logger.info("reconciled %d crossing report(s) into the report log", added)
        return added

    # -- a clone for a strict serializer ------------------------------------------------

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> ReportingSaver:
        """The wrapped saver's clone (LangGraph's strict msgpack mode), wrapped again."""
        inner = self.saver.with_allowlist(extra_allowlist)
        return self if inner is self.saver else ReportingSaver(inner, self.report_log)


# Methods handled above; every other public BaseCheckpointSaver method is delegated
# as it is to the wrapped saver (installed below, so a method a later
# langgraph-checkpoint adds to the base class is delegated too instead of running
# the base class's default on this wrapper).
INTERCEPTED = frozenset(
    {
        "put_writes",
        "aput_writes",
        "put",
        "aput",
        "get_tuple",
        "aget_tuple",
        "with_allowlist",
        "serde",
    }
)


def _delegate(name: str, base_attr: Any) -> Any:
    if isinstance(base_attr, property):
        return property(lambda self: getattr(self.saver, name), doc=base_attr.__doc__)
    if inspect.isasyncgenfunction(base_attr):

        @functools.wraps(base_attr)
        async def agen(self: ReportingSaver, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            async for item in getattr(self.saver, name)(*args, **kwargs):
                yield item

        return agen
    if inspect.iscoroutinefunction(base_attr):

        @functools.wraps(base_attr)
        async def coro(self: ReportingSaver, *args: Any, **kwargs: Any) -> Any:
            return await getattr(self.saver, name)(*args, **kwargs)

        return coro

    @functools.wraps(base_attr)
    def call(self: ReportingSaver, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.saver, name)(*args, **kwargs)

    return call


def delegated_names() -> list[str]:
    """The public BaseCheckpointSaver members passed through to the wrapped saver."""
    return sorted(
        name
        for name, attr in vars(BaseCheckpointSaver).items()
        if not name.startswith("_")
        and name not in INTERCEPTED
        and (callable(attr) or isinstance(attr, property))
    )


def _install_delegates(cls: type[ReportingSaver], names: Iterable[str]) -> None:
    for name in names:
        setattr(cls, name, _delegate(name, vars(BaseCheckpointSaver)[name]))


_install_delegates(ReportingSaver, delegated_names())
