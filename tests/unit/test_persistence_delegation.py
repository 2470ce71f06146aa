"""ReportingSaver is composition: it overrides nothing private and delegates the rest.

Why these tests: the old report log subclassed each saver, hooked its private
cursor and copied its SQL, which broke with every saver release. These tests pin
the opposite: the wrapper is no subclass of any saver, defines no private method a
saver has, runs no upstream SQL, and every public BaseCheckpointSaver method it does
not handle itself reaches the wrapped saver with the same arguments, returning
what the wrapped saver returned (a recording saver proves each call; real savers
prove the ones with observable effects).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _delegation_support import _public_base_members, _Recording
from _persist_support import LIE, build_graph, cfg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

import trustgate
from trustgate.errors import ConfigurationError
from trustgate.persistence import InMemoryReportHistory, ReportingSaver
from trustgate.persistence._saver import INTERCEPTED, delegated_names

SAVER_CLASSES = (InMemorySaver, SqliteSaver, AsyncSqliteSaver, PostgresSaver, AsyncPostgresSaver)
PACKAGE = Path(trustgate.__file__).parent / "persistence"


def test_no_saver_is_subclassed() -> None:
    assert ReportingSaver.__mro__[1] is BaseCheckpointSaver
    for cls in SAVER_CLASSES:
        assert not issubclass(ReportingSaver, cls)


@pytest.mark.parametrize("cls", SAVER_CLASSES, ids=lambda c: c.__name__)
def test_no_private_method_of_a_saver_is_overridden(cls: type) -> None:
    ours = {
        name
        for name in vars(ReportingSaver)
        if name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
    }
    theirs = {name for name in dir(cls) if name.startswith("_") and not name.startswith("__")}
    assert ours & theirs == set()


def test_no_upstream_sql_or_private_hook_in_the_persistence_package() -> None:
    """No statement on LangGraph's tables, no use of a saver's private cursor."""
    for path in PACKAGE.glob("*.py"):
        text = path.read_text()
        assert "._cursor" not in text, path  # LangGraph's private cursor hook, gone
        assert not re.search(r"def _?cursor\b", text), path
        assert "INSERT OR REPLACE" not in text.upper(), path
        statements = re.finditer(
            r"\b(?:INSERT INTO|(?<!DO )UPDATE|DELETE FROM|FROM|JOIN)\s+(\w+)", text
        )
        for match in statements:
            table = match.group(1)
            assert table.startswith("trustgate_") or table == "unnest", (path, match.group(0))


def test_every_public_base_method_is_handled_or_delegated() -> None:
    members = _public_base_members()
    assert members == set(delegated_names()) | (INTERCEPTED & members)
    for name in members:
        # none is the base class's own implementation running on the wrapper
        assert vars(ReportingSaver).get(name) is not vars(BaseCheckpointSaver)[name], name
    # the ones the issue names, where they exist in this langgraph-checkpoint
    for name in ("get_next_version", "delete_thread", "list", "copy_thread", "prune"):
        assert name in delegated_names()


@pytest.mark.parametrize("name", delegated_names())
async def test_delegated_method_reaches_the_wrapped_saver(name: str) -> None:
    inner = _Recording()
    wrapper = ReportingSaver(inner, InMemoryReportHistory())
    base = vars(BaseCheckpointSaver)[name]
    args, kwargs = (object(), object()), {"key": object()}
    if isinstance(base, property):
        assert getattr(wrapper, name) == ("result-of", name)
        assert inner.calls == [(name, (), {})]
        return
    attr = getattr(wrapper, name)
    if inspect.isasyncgenfunction(base):
        got = [x async for x in attr(*args, **kwargs)]
        assert got == [("result-of", name)]
    elif inspect.iscoroutinefunction(base):
        assert inspect.iscoroutinefunction(attr)
        assert await attr(*args, **kwargs) == ("result-of", name)
    else:
        result = attr(*args, **kwargs)
        if name == "list":
            result = next(iter(result))
        assert result == ("result-of", name)
    assert inner.calls == [(name, args, kwargs)]


async def test_intercepted_methods_also_reach_the_wrapped_saver() -> None:
    inner = _Recording()
    wrapper = ReportingSaver(inner, InMemoryReportHistory())
    conf: Any = {"configurable": {"thread_id": "t"}}
    ckpt: Any = {"id": "c", "channel_values": {}}
    wrapper.put_writes(conf, [("x", 1)], "task", "path")
    await wrapper.aput_writes(conf, [("x", 1)], "task", "path")
    assert wrapper.put(conf, ckpt, {}, {}) == ("result-of", "put")
    assert await wrapper.aput(conf, ckpt, {}, {}) == ("result-of", "aput")
    wrapper.get_tuple(conf)
    await wrapper.aget_tuple(conf)
    assert [c[0] for c in inner.calls] == [
        "put_writes",
        "aput_writes",
        "put",
        "aput",
        "get_tuple",
        "aget_tuple",
    ]
    assert inner.calls[0][1] == (conf, [("x", 1)], "task", "path")


def test_serde_and_other_attributes_are_the_wrapped_savers() -> None:
    inner = InMemorySaver()
    wrapper = ReportingSaver(inner, InMemoryReportHistory())
    assert wrapper.serde is inner.serde
    assert wrapper.storage is inner.storage  # not on the base class: __getattr__
    with pytest.raises(AttributeError):
        _ = wrapper.no_such_attribute
    with pytest.raises(ConfigurationError):
        ReportingSaver(object(), InMemoryReportHistory())  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        ReportingSaver(inner, object())  # type: ignore[arg-type]


def test_allowlist_clone_is_wrapped_and_shares_the_log() -> None:
    inner = InMemorySaver()
    log = InMemoryReportHistory()
    wrapper = ReportingSaver(inner, log)
    clone = wrapper.with_allowlist({("trustgate", "report", "Report")})
    assert isinstance(clone, ReportingSaver) and clone.report_log is log
    assert (clone is wrapper) == (clone.saver is inner)  # re-wrapped only when cloned


# -- real savers: delegated methods with observable effects ------------------------------


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[Any]:
    with trustgate.persistence.connect(tmp_path / "d.db") as db:
        yield db


def test_real_sqlite_saver_delegation(sqlite_db: Any) -> None:
    saver: ReportingSaver = sqlite_db.checkpointer
    app = build_graph().compile(checkpointer=saver)
    app.invoke({"text": LIE, "log": []}, cfg("d1"))
    app.invoke({"text": LIE, "log": []}, cfg("d2"))
    # SqliteSaver's own version format, not the base class's integers
    mine, theirs = saver.get_next_version(None, None), saver.saver.get_next_version(None, None)
    assert isinstance(mine, str) and mine.split(".")[0] == theirs.split(".")[0]

    def ids(items: Any) -> list[str]:
        return [i.config["configurable"]["checkpoint_id"] for i in items]

    assert ids(saver.list(cfg("d1"))) == ids(saver.saver.list(cfg("d1")))
    assert saver.get(cfg("d1")) == saver.saver.get(cfg("d1"))
    saver.delete_thread("d1")
    assert saver.saver.get_tuple(cfg("d1")) is None and saver.get_tuple(cfg("d2")) is not None
    assert len(sqlite_db.history(thread="d1")) == 1  # the audit trail outlives the thread
    with pytest.raises(NotImplementedError):
        saver.copy_thread("d2", "d3")  # SqliteSaver has none: its own answer, passed on
