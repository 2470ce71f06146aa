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
from collections.abc import (
    AsyncIterator,
    Collection,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
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
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from trustgate import _compat

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


_PAGE = 500
"""How many items or namespaces one read of the real store asks for while merging."""

_Steps = Generator[list[Op], list[Result], Any]
"""A read plan: yields the ops it needs the real store to answer, receives their results."""


def _under(namespace: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    return namespace[: len(prefix)] == prefix


def _compare(value: Any, wanted: Any) -> bool:
    """A search filter on one value, the JSONB-like way LangGraph's stores apply it
    (nested objects, lists element by element, ``$eq``/``$ne``/``$gt``/``$gte``/
    ``$lt``/``$lte``)."""
    if isinstance(wanted, dict):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(value, k, v) for k, v in wanted.items())
        return isinstance(value, dict) and all(_compare(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(wanted)
            and all(_compare(a, b) for a, b in zip(value, wanted, strict=False))
        )
    return bool(value == wanted)


def _operator(value: Any, op: str, wanted: Any) -> bool:
    if op == "$eq":
        return bool(value == wanted)
    if op == "$ne":
        return bool(value != wanted)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        if value is None:
            return False  # no such field: no match (a database compares NULL as unknown)
        a, b = float(value), float(wanted)  # a value that is no number fails, as in a store
        return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]
    raise ValueError(f"Unsupported operator: {op}")


def _matches(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    return not filter or all(_compare(value.get(k), v) for k, v in filter.items())


def _ns_matches(conditions: Sequence[MatchCondition] | None, ns: tuple[str, ...]) -> bool:
    """A namespace against ``list_namespaces`` prefix/suffix conditions (``*`` matches
    any one label)."""
    for c in conditions or ():
        path = tuple(c.path)
        if len(ns) < len(path):
            return False
        pairs = (
            zip(ns, path, strict=False)
            if c.match_type == "prefix"
            else zip(reversed(ns), reversed(path), strict=False)
        )
        if any(p != "*" and k != p for k, p in pairs):
            return False
    return True


def _final(ops: Sequence[PutOp]) -> dict[tuple[tuple[str, ...], str], PutOp]:
    """The last held write of each key, oldest last write first."""
    last: dict[tuple[tuple[str, ...], str], PutOp] = {}
    for op in ops:
        last.pop((op.namespace, op.key), None)
        last[(op.namespace, op.key)] = op
    return last


class HeldStore(BaseStore):
    """A guarded node's writes to the long-term store, held until its gate decides.

    A node that puts a model's claim into the store while it runs would publish it to
    every later run before any gate looked. Puts and deletes are kept here and written
    to the real store when the gate releases the output; a halt or a failed attempt
    drops them. Every read sees the held writes, so an honest node (put a memory, then
    search for it) behaves exactly as with the real store:

    * ``get``: a held put returns its value, a held delete returns nothing.
    * ``search`` without a ``query`` (or on a store without an index, where a query
      ranks nothing): the real store's items with the held writes applied, in the
      order the real store would return them after those writes. Held puts under the
      namespace prefix that match the filter appear with their held value, held
      deletes hide items, held overwrites replace values; ``limit`` and ``offset``
      apply after the merge. An ``InMemoryStore`` is read as a scratch copy of its
      items with the held writes applied (its own order: insertion order, an
      overwrite keeps its place); any other store is read in the order of
      ``PostgresStore`` and ``SqliteStore`` (most recently updated first, so the held
      items come first, the latest write first).
    * ``search`` with a ``query`` on a store with an index: the real store ranks what
      it holds; a held item is not ranked, because ranking it would send the value, not
      yet released by the gate, to the index's embedding model. Items the held writes
      delete or overwrite are dropped from the real ranking (their score belongs to
      the old value), and the held puts matching the prefix and filter follow every
      ranked item, unscored (``score=None``), latest write first; ``limit`` and
      ``offset`` apply to the merged list. A node that searches by meaning for a memory
      it wrote in the same step finds it after the real matches.
    * ``list_namespaces``: the namespaces as the real store would list them after the
      held writes: a held put adds its namespace; a namespace whose every item is
      deleted by held writes disappears (an ``InMemoryStore`` keeps listing an emptied
      namespace, and so does its scratch copy); conditions, ``max_depth``, ``limit``
      and ``offset`` apply after the merge.

    Reads answer from the held writes made before them (in the same batch too).
    """

    def __init__(self, real: BaseStore) -> None:
        self.real = real
        self.ops: list[PutOp] = []

    def _pending(self, namespace: tuple[str, ...], key: str) -> PutOp | None:
        for op in reversed(self.ops):
            if op.namespace == namespace and op.key == key:
                return cast(PutOp, op)
        return None

    def _plan(self, ops: Iterable[Op]) -> Generator[list[Op], list[Result], list[Result]]:
        """Answer a batch: held writes kept, reads merged with them; what needs the real
        store is yielded to the driver (sync or async)."""
        results: list[Result] = []
        passed: list[tuple[int, Op]] = []
        merged: list[tuple[int, _Steps]] = []
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
            elif isinstance(op, SearchOp) and any(
                _under(p.namespace, op.namespace_prefix) for p in self.ops
            ):
                merged.append((i, self._search(op, list(self.ops))))
            elif isinstance(op, ListNamespacesOp) and self.ops:
                merged.append((i, self._namespaces(op, list(self.ops))))
            else:
                passed.append((i, op))
        if passed:
            got = yield [op for _, op in passed]
            for (i, _), r in zip(passed, got, strict=True):
                results[i] = r
        for i, steps in merged:
            results[i] = yield from steps
        return results

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        steps = self._plan(ops)
        try:
            need = next(steps)
            while True:
                need = steps.send(self.real.batch(need))
        except StopIteration as done:
            return cast(list[Result], done.value)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        steps = self._plan(ops)
        try:
            need = next(steps)
            while True:
                need = steps.send(await self.real.abatch(need))
        except StopIteration as done:
            return cast(list[Result], done.value)

    def take(self) -> list[PutOp]:
        ops, self.ops = self.ops, []
        return ops

    # -- reads merged with the held writes ---------------------------------------------

    def _ranks(self, op: SearchOp) -> bool:
        """Whether the real store ranks this search by meaning (a query and an index)."""
        return bool(op.query) and bool(getattr(self.real, "index_config", True))

    def _search(self, op: SearchOp, held_ops: list[PutOp]) -> _Steps:
        ranked = self._ranks(op)
        if not ranked:
            scratch = _compat.store_with_writes(self.real, held_ops)
            if scratch is not None:  # an in-memory store: its own order, exactly
                return scratch.batch([op])[0]
        final = {
            k: p for k, p in _final(held_ops).items() if _under(p.namespace, op.namespace_prefix)
        }
        ask = op._replace(offset=0, limit=op.offset + op.limit + len(final))
        (answer,) = yield [ask]
        got = cast(list[SearchItem], answer)
        real = [i for i in got if (i.namespace, i.key) not in final]
        now = datetime.now(UTC)
        held = [
            SearchItem(
                namespace=p.namespace,
                key=p.key,
                value=dict(p.value),
                created_at=now,
                updated_at=now,
            )
            for p in reversed(final.values())
            if p.value is not None and _matches(p.value, op.filter)
        ]
        # ranked: the unranked held items come after every ranked one, so only once the
        # real store has no more matches to give; else the held items are the newest
        merged = (real + (held if len(got) < ask.limit else [])) if ranked else held + real
        return merged[op.offset : op.offset + op.limit]

    def _namespaces(self, op: ListNamespacesOp, held_ops: list[PutOp]) -> _Steps:
        scratch = _compat.store_with_writes(self.real, held_ops)
        if scratch is not None:
            return scratch.batch([op])[0]
        final = _final(held_ops)
        listed: list[tuple[str, ...]] = []
        while True:  # every full namespace the real store lists under the conditions
            (page,) = yield [
                ListNamespacesOp(op.match_conditions, None, limit=_PAGE, offset=len(listed))
            ]
            names_page = cast(list[tuple[str, ...]], page)
            listed.extend(names_page)
            if len(names_page) < _PAGE:
                break
        added = {ns for (ns, _), p in final.items() if p.value is not None}
        gone: set[tuple[str, ...]] = set()
        for ns in sorted({ns for (ns, _), p in final.items() if p.value is None} - added):
            if ns in listed and not (yield from self._keeps_items(ns, final)):
                gone.add(ns)
        names = (set(listed) - gone) | {ns for ns in added if _ns_matches(op.match_conditions, ns)}
        if op.max_depth is not None:
            names = {ns[: op.max_depth] for ns in names}
        return sorted(names)[op.offset : op.offset + op.limit]

    def _keeps_items(
        self, ns: tuple[str, ...], final: dict[tuple[tuple[str, ...], str], PutOp]
    ) -> Generator[list[Op], list[Result], bool]:
        """Whether an item stays in ``ns`` itself once the held deletes are applied."""
        offset = 0
        while True:
            (page,) = yield [SearchOp(ns, None, _PAGE, offset)]
            items = cast(list[SearchItem], page)
            if any(i.namespace == ns and (ns, i.key) not in final for i in items):
                return True
            if len(items) < _PAGE:
                return False
            offset += _PAGE
