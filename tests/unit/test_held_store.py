"""The store a guarded node writes to while it runs: its writes wait for the gate."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from trustgate.graph._held import HeldStore


def test_writes_wait_and_reads_see_them() -> None:
    real = InMemoryStore()
    real.put(("m",), "kept", {"v": 1})
    held = HeldStore(real)
    held.put(("m",), "new", {"v": 2})
    held.delete(("m",), "kept")
    assert real.get(("m",), "new") is None  # nothing reached the real store
    assert real.get(("m",), "kept") is not None
    got = held.get(("m",), "new")
    assert got is not None and got.value == {"v": 2}
    assert held.get(("m",), "kept") is None  # the held delete hides it from the node
    # searches see the held writes: the put appears, the deleted item does not
    assert [i.key for i in held.search(("m",))] == ["new"]
    assert [i.key for i in real.search(("m",))] == ["kept"]
    ops = held.take()
    assert [(op.key, op.value) for op in ops] == [("new", {"v": 2}), ("kept", None)]
    assert held.take() == []
    real.batch(ops)
    assert real.get(("m",), "kept") is None and real.get(("m",), "new") is not None


def test_async_reads_and_writes_behave_the_same() -> None:
    real = InMemoryStore()
    held = HeldStore(real)

    async def run() -> object:
        await held.aput(("m",), "k", {"v": 3})
        return await held.aget(("m",), "k")

    got = asyncio.run(run())
    assert getattr(got, "value", None) == {"v": 3}
    assert real.get(("m",), "k") is None


# --- searches and namespace listings see the held writes -----------------------------------


def _seed(store: BaseStore) -> None:
    store.put(("mem", "ann"), "k1", {"text": "tea", "n": 1})
    store.put(("mem", "ann"), "k2", {"text": "coffee", "n": 2})
    store.put(("mem", "bob"), "k3", {"text": "juice", "n": 3})
    store.put(("other",), "k9", {"text": "water", "n": 9})


def _node(store: BaseStore) -> None:
    """An honest memory node's writes: overwrite, new key, new namespace, delete."""
    store.put(("mem", "ann"), "k1", {"text": "green tea", "n": 1})
    store.put(("mem", "cat"), "k4", {"text": "milk", "n": 4})
    store.delete(("mem", "bob"), "k3")
    store.put(("mem", "ann"), "k5", {"text": "cocoa", "n": 5})


def _reads(store: BaseStore) -> list[Any]:
    def items(found: list[SearchItem]) -> list[Any]:
        return [(i.namespace, i.key, i.value, i.score) for i in found]

    return [
        items(store.search(("mem",))),
        items(store.search(("mem", "ann"))),
        items(store.search(("mem",), filter={"n": {"$gte": 2}})),
        items(store.search(("mem",), filter={"text": "milk"})),
        items(store.search(("mem",), limit=2, offset=1)),
        items(store.search(("mem",), query="anything")),  # no index: ranks nothing
        store.list_namespaces(),
        store.list_namespaces(prefix=("mem",), max_depth=1),
        store.list_namespaces(suffix=("cat",)),
        store.list_namespaces(limit=2, offset=1),
    ]


async def _areads(store: BaseStore) -> list[Any]:
    def items(found: list[SearchItem]) -> list[Any]:
        return [(i.namespace, i.key, i.value, i.score) for i in found]

    return [
        items(await store.asearch(("mem",))),
        items(await store.asearch(("mem",), filter={"n": {"$gte": 2}}, limit=2)),
        await store.alist_namespaces(prefix=("mem",)),
    ]


def test_search_and_list_namespaces_answer_as_the_real_store_after_the_writes() -> None:
    plain = InMemoryStore()
    _seed(plain)
    _node(plain)
    expected = _reads(plain)
    real = InMemoryStore()
    _seed(real)
    held = HeldStore(real)
    _node(held)
    assert _reads(held) == expected
    assert [i.key for i in held.search(("mem",))] == ["k1", "k2", "k5", "k4"]
    # nothing reached the real store
    assert [(i.key, i.value["text"]) for i in real.search(("mem",))] == [
        ("k1", "tea"),
        ("k2", "coffee"),
        ("k3", "juice"),
    ]
    assert real.list_namespaces(prefix=("mem",)) == [("mem", "ann"), ("mem", "bob")]


def test_async_search_and_list_namespaces_see_the_held_writes() -> None:
    plain = InMemoryStore()
    _seed(plain)

    async def run(store: BaseStore) -> list[Any]:
        await store.aput(("mem", "ann"), "k1", {"text": "green tea", "n": 1})
        await store.aput(("mem", "cat"), "k4", {"text": "milk", "n": 4})
        await store.adelete(("mem", "bob"), "k3")
        return await _areads(store)

    expected = asyncio.run(run(plain))
    real = InMemoryStore()
    _seed(real)
    assert asyncio.run(run(HeldStore(real))) == expected
    assert real.get(("mem", "cat"), "k4") is None and real.get(("mem", "bob"), "k3") is not None


class Words(Embeddings):
    """Embeds by counting a few words; records every text it was given."""

    WORDS = ("tea", "coffee", "juice", "milk")

    def __init__(self) -> None:
        self.seen: list[str] = []

    def _one(self, text: str) -> list[float]:
        self.seen.append(text)
        return [float(text.count(w)) for w in self.WORDS] + [0.1]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def test_a_query_ranks_the_real_items_and_puts_the_held_ones_after_unscored() -> None:
    words = Words()
    real = InMemoryStore(index={"dims": 5, "embed": words, "fields": ["text"]})
    real.put(("mem",), "a", {"text": "tea"})
    real.put(("mem",), "b", {"text": "coffee"})
    real.put(("mem",), "c", {"text": "juice"})
    held = HeldStore(real)
    held.put(("mem",), "new", {"text": "tea tea"})
    held.put(("mem",), "b", {"text": "milk"})  # the real score belongs to the old value
    held.delete(("mem",), "c")
    words.seen.clear()
    found = held.search(("mem",), query="tea")
    assert [(i.key, i.value["text"]) for i in found] == [
        ("a", "tea"),
        ("b", "milk"),
        ("new", "tea tea"),
    ]
    assert found[0].score is not None and [i.score for i in found[1:]] == [None, None]
    assert words.seen == ["tea"]  # the query only: no held value went to the embedder
    # limit and offset apply after the merge; while the real store has more ranked
    # matches, they come first
    assert [i.key for i in held.search(("mem",), query="tea", limit=1)] == ["a"]
    assert [i.key for i in held.search(("mem",), query="tea", limit=1, offset=1)] == ["b"]
    assert [i.key for i in held.search(("mem",), query="tea", offset=2)] == ["new"]
    assert [i.key for i in held.search(("mem",), query="tea", filter={"text": "milk"})] == ["b"]
    assert real.get(("mem",), "new") is None


class RecencyStore(BaseStore):
    """A store that answers searches most recently written first, as PostgresStore and
    SqliteStore do (a write counter instead of a clock, so the order is exact)."""

    def __init__(self) -> None:
        self.items: dict[tuple[tuple[str, ...], str], tuple[int, Item]] = {}
        self.clock = 0

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        out: list[Result] = []
        for op in ops:
            if isinstance(op, PutOp):
                self.clock += 1
                if op.value is None:
                    self.items.pop((op.namespace, op.key), None)
                else:
                    now = datetime.now(UTC)
                    item = Item(
                        value=dict(op.value),
                        key=op.key,
                        namespace=op.namespace,
                        created_at=now,
                        updated_at=now,
                    )
                    self.items[(op.namespace, op.key)] = (self.clock, item)
                out.append(None)
            elif isinstance(op, GetOp):
                got = self.items.get((op.namespace, op.key))
                out.append(got[1] if got else None)
            elif isinstance(op, SearchOp):
                n = len(op.namespace_prefix)
                found = sorted(
                    (
                        (seq, i)
                        for seq, i in self.items.values()
                        if i.namespace[:n] == op.namespace_prefix
                        and all(i.value.get(k) == v for k, v in (op.filter or {}).items())
                    ),
                    key=lambda x: -x[0],
                )
                out.append(
                    [
                        SearchItem(i.namespace, i.key, i.value, i.created_at, i.updated_at)
                        for _, i in found[op.offset : op.offset + op.limit]
                    ]
                )
            elif isinstance(op, ListNamespacesOp):
                names = {ns for ns, _ in self.items}
                for c in op.match_conditions or ():
                    assert c.match_type == "prefix" and "*" not in c.path
                    names = {ns for ns in names if ns[: len(c.path)] == tuple(c.path)}
                if op.max_depth is not None:
                    names = {ns[: op.max_depth] for ns in names}
                out.append(sorted(names)[op.offset : op.offset + op.limit])
        return out

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return self.batch(ops)


def test_another_store_is_read_most_recent_first_with_the_held_writes_applied() -> None:
    plain = RecencyStore()
    _seed(plain)
    _node(plain)
    real = RecencyStore()
    _seed(real)
    held = HeldStore(real)
    _node(held)

    def reads(store: BaseStore) -> list[Any]:
        return [
            [(i.key, i.value) for i in store.search(("mem",))],
            [i.key for i in store.search(("mem",), limit=2, offset=1)],
            [i.key for i in store.search(("mem",), filter={"n": 4})],
            store.list_namespaces(),
            store.list_namespaces(prefix=("mem",)),
            store.list_namespaces(max_depth=1, limit=1, offset=1),
        ]

    assert reads(held) == reads(plain)
    assert [i.key for i in held.search(("mem",))] == ["k5", "k4", "k1", "k2"]
    # the emptied namespace is gone from the listing, as the real store would drop it
    assert ("mem", "bob") not in held.list_namespaces()
    assert ("mem", "bob") in real.list_namespaces()


def test_a_sqlite_store_sees_the_same_items_and_namespaces() -> None:
    def store() -> SqliteStore:
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        s = SqliteStore(conn)
        s.setup()
        return s

    plain, real = store(), store()
    _seed(plain)
    _node(plain)
    _seed(real)
    held = HeldStore(real)
    _node(held)
    # SQLite orders by update time at one-second resolution: compare what, not the order
    for prefix, filter in ((("mem",), None), (("mem", "ann"), None), (("mem",), {"n": 4})):
        got = {
            (i.namespace, i.key, json.dumps(i.value)) for i in held.search(prefix, filter=filter)
        }
        want = {
            (i.namespace, i.key, json.dumps(i.value)) for i in plain.search(prefix, filter=filter)
        }
        assert got == want
    assert held.list_namespaces() == plain.list_namespaces()
    assert ("mem", "bob") not in held.list_namespaces()
    assert real.get(("mem", "cat"), "k4") is None
