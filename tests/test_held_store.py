"""The store a guarded node writes to while it runs: its writes wait for the gate."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.store.memory import InMemoryStore

from trustgate.graph._held import HeldStore

pytestmark = pytest.mark.unit


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
    # searches read the real store only (documented)
    assert [i.key for i in held.search(("m",))] == ["kept"]
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
