"""Holding the checkpoints a guarded node's own subgraph writes.

A compiled subgraph or agent used as a node checkpoints every one of its steps into
the run's saver (under the task's namespace) while it runs, so the model's unchecked
answer would sit in those rows before the gate has seen it, and stay there after a
halt or a rewrite. The guarded node therefore lends its subgraph a saver that keeps
those rows in memory: written through to the real saver when the gate passes the
output unchanged, or when the subgraph pauses (``interrupt()``: a resume needs them);
dropped when the gate rewrites or halts, or the node fails. Reads see the held rows
over the real ones, so the subgraph behaves exactly as with the real saver.

Dropping has one visible consequence, documented for users: a guarded subgraph with
``checkpointer=True`` keeps no memory of a turn its gate did not pass as it was.
"""

from __future__ import annotations

import builtins
import copy
import logging
import threading
from collections.abc import AsyncIterator, Collection, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, Result

__all__ = ["HeldSaver", "HeldStore"]

logger = logging.getLogger(__name__)


class _Box:
    """What is held, shared by a saver and the narrowed copies LangGraph makes of it."""

    def __init__(self, real: BaseCheckpointSaver[Any]) -> None:
        self.held = InMemorySaver(serde=real.serde)
        self.log: list[tuple[str, tuple[Any, ...]]] = []
        self.lock = threading.Lock()


def _key(config: RunnableConfig | None) -> tuple[str, str, str | None]:
    c = (config or {}).get("configurable") or {}
    return str(c.get("thread_id")), str(c.get("checkpoint_ns") or ""), c.get("checkpoint_id")


class HeldSaver(BaseCheckpointSaver[Any]):
    """The saver a guarded node's subgraph writes to (see the module docstring)."""

    def __init__(self, real: BaseCheckpointSaver[Any]) -> None:
        super().__init__(serde=real.serde)
        self.real = real
        self._box = _Box(real)

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> HeldSaver:
        """LangGraph narrows a lent saver's msgpack allow-list per graph: narrow the real
        one, keep holding in the same place."""
        twin = copy.copy(self)
        twin.real = self.real.with_allowlist(extra_allowlist)
        twin.serde = twin.real.serde
        return twin

    # -- what the subgraph calls ---------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        with self._box.lock:
            self._box.log.append(("put", (config, checkpoint, metadata, new_versions)))
            return self._box.held.put(config, checkpoint, metadata, new_versions)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.put(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        with self._box.lock:
            self._box.log.append(("put_writes", (config, list(writes), task_id, task_path)))
            self._box.held.put_writes(config, writes, task_id, task_path)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.real.get_next_version(current, channel)

    def _with_held_writes(self, tup: CheckpointTuple | None) -> CheckpointTuple | None:
        """A real row, with the writes the subgraph made against it since."""
        if tup is None:
            return None
        held = self._box.held.writes.get(_key(tup.config))  # type: ignore[arg-type]
        if not held:
            return tup
        extra = [
            (task, channel, self.serde.loads_typed(value))
            for task, channel, value, _path in held.values()
        ]
        return tup._replace(pending_writes=[*(tup.pending_writes or []), *extra])

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        with self._box.lock:
            found = self._box.held.get_tuple(config)
        if found is not None:
            return found
        return self._with_held_writes(self.real.get_tuple(config))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        with self._box.lock:
            found = self._box.held.get_tuple(config)
        if found is not None:
            return found
        return self._with_held_writes(await self.real.aget_tuple(config))

    def _merge(
        self, held: list[CheckpointTuple], real: list[CheckpointTuple], limit: int | None
    ) -> list[CheckpointTuple]:
        seen = {_key(t.config) for t in held}
        rows = held + [t for t in real if _key(t.config) not in seen]
        rows.sort(key=lambda t: str(_key(t.config)[2]), reverse=True)
        return rows[:limit] if limit is not None else rows

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        with self._box.lock:
            held = list(self._box.held.list(config, filter=filter, before=before, limit=limit))
        real = [
            t
            for t in (
                self._with_held_writes(r)
                for r in self.real.list(config, filter=filter, before=before, limit=limit)
            )
            if t is not None
        ]
        yield from self._merge(held, real, limit)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        with self._box.lock:
            held = list(self._box.held.list(config, filter=filter, before=before, limit=limit))
        real: list[CheckpointTuple] = []
        async for r in self.real.alist(config, filter=filter, before=before, limit=limit):
            t = self._with_held_writes(r)
            if t is not None:
                real.append(t)
        for t in self._merge(held, real, limit):
            yield t

    def delete_thread(self, thread_id: str) -> None:
        with self._box.lock:
            self._box.held.delete_thread(thread_id)
        self.real.delete_thread(thread_id)

    async def adelete_thread(self, thread_id: str) -> None:
        with self._box.lock:
            self._box.held.delete_thread(thread_id)
        await self.real.adelete_thread(thread_id)

    # -- what the guarded node decides -------------------------------------------------

    def _take(self) -> builtins.list[tuple[str, tuple[Any, ...]]]:
        box = self._box
        with box.lock:
            log, box.log = box.log, []
            box.held = InMemorySaver(serde=box.held.serde)
        return log

    def drop(self) -> None:
        """The gate rewrote or halted, or the node failed: the rows go nowhere."""
        log = self._take()
        if log:
            logger.debug("dropped %d held subgraph checkpoint writes", len(log))

    def flush(self) -> None:
        """Write the held rows to the real saver, in the order they were made."""
        for op, args in self._take():
            if op == "put":
                self.real.put(*args)
            else:
                self.real.put_writes(*args)

    async def aflush(self) -> None:
        for op, args in self._take():
            try:
                if op == "put":
                    await self.real.aput(*args)
                else:
                    await self.real.aput_writes(*args)
            except NotImplementedError:
                # a sync-only saver lent to an async node: write the way it can
                if op == "put":
                    self.real.put(*args)
                else:
                    self.real.put_writes(*args)


class HeldStore(BaseStore):
    """A guarded node's writes to the long-term store, held until its gate decides.

    A node that puts a model's claim into the store while it runs would publish it to
    every later run before any gate looked. Puts and deletes are kept here (reads see
    them, so the node behaves as with the real store) and written to the real store
    when the gate releases the output; a halt or a failed attempt drops them.
    Searches and namespace listings read the real store only.
    """

    def __init__(self, real: BaseStore) -> None:
        self.real = real
        self.ops: list[PutOp] = []

    def _pending(self, namespace: tuple[str, ...], key: str) -> PutOp | None:
        for op in reversed(self.ops):
            if op.namespace == namespace and op.key == key:
                return cast(PutOp, op)
        return None

    def _split(self, ops: Iterable[Op]) -> tuple[list[Result | None], list[tuple[int, Op]]]:
        results: list[Result | None] = []
        passed: list[tuple[int, Op]] = []
        for i, op in enumerate(ops):
            results.append(None)
            if isinstance(op, PutOp):
                self.ops.append(op)
            elif isinstance(op, GetOp) and (held := self._pending(op.namespace, op.key)):
                if held.value is not None:
                    now = datetime.now(UTC)
                    results[i] = Item(
                        value=dict(held.value),
                        key=held.key,
                        namespace=held.namespace,
                        created_at=now,
                        updated_at=now,
                    )
            else:
                passed.append((i, op))
        return results, passed

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        results, passed = self._split(ops)
        if passed:
            for (i, _), got in zip(passed, self.real.batch([op for _, op in passed]), strict=True):
                results[i] = got
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        results, passed = self._split(ops)
        if passed:
            got_all = await self.real.abatch([op for _, op in passed])
            for (i, _), got in zip(passed, got_all, strict=True):
                results[i] = got
        return results

    def take(self) -> list[PutOp]:
        ops, self.ops = self.ops, []
        return ops
