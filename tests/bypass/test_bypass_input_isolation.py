"""The guarded node's copy of its input (``trustgate.graph._isolate``) is a deep copy.

Properties over generated states: the copy equals ``copy.deepcopy`` of the input, type
for type; no mutable object of the input is reachable from the copy (so no edit of the
copy, at any depth, reaches the graph); an object the input holds twice is one object
in the copy too. And through a guarded graph: whatever path into its input the node
edits in place, the state after the run is the state it was given plus what the gate
released.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import operator
from collections import OrderedDict
from typing import Annotated, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from pydantic import BaseModel
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, FunctionVerifier, TrustGate
from trustgate.graph._isolate import CannotIsolate, isolate

LIE = "ledger entry ZX-4417"


class Colour(enum.StrEnum):
    RED = "red"


@dataclasses.dataclass
class Note:
    text: str
    tags: list[str] = dataclasses.field(default_factory=list)


class Section(BaseModel):
    name: str
    lines: list[str] = []
    meta: dict[str, Any] = {}


_atoms = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.binary(max_size=4)
    | st.just(Colour.RED)
)

_plain = st.recursive(
    _atoms,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
        | st.frozensets(st.integers(0, 9), max_size=3)
        | st.sets(st.text(max_size=3), max_size=3)
        | st.binary(max_size=3).map(bytearray)
        | st.dictionaries(st.text(max_size=3), inner, max_size=2).map(OrderedDict)
    ),
    max_leaves=10,
)

_blocks = st.lists(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=10)}), max_size=2
)


@st.composite
def _message(draw: Any) -> Any:
    kind = draw(st.sampled_from(["human", "ai", "tool"]))
    content = draw(st.text(max_size=12) | _blocks)
    kwargs = draw(st.dictionaries(st.text(max_size=5), _plain, max_size=2))
    ident = draw(st.text("abc", min_size=1, max_size=4))
    if kind == "human":
        return HumanMessage(content, id=ident, additional_kwargs=kwargs)
    if kind == "tool":
        return ToolMessage(content, tool_call_id="c", id=ident, artifact=draw(_plain))
    calls = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "name": st.text("xyz", min_size=1, max_size=3),
                    "args": st.dictionaries(st.text(max_size=3), _plain, max_size=2),
                    "id": st.text("0123", min_size=1, max_size=3),
                }
            ),
            max_size=2,
        )
    )
    return AIMessage(
        content,
        id=ident,
        additional_kwargs=kwargs,
        tool_calls=calls,
        response_metadata=draw(st.dictionaries(st.text(max_size=4), _plain, max_size=2)),
    )


_objects = (
    _message()
    | st.builds(Section, name=st.text(max_size=4), lines=st.lists(st.text(max_size=4), max_size=2))
    | st.builds(Note, text=st.text(max_size=4), tags=st.lists(st.text(max_size=3), max_size=2))
)

_states = st.dictionaries(
    st.text(max_size=6),
    _plain | _objects | st.lists(_objects | _plain, max_size=4),
    max_size=4,
)


# a tuple is immutable itself (what it holds is walked, and checked, on its own)
_IMMUTABLE = (str, bytes, int, float, bool, type(None), complex, frozenset, enum.Enum, tuple)


def _walk(value: Any, out: list[Any], depth: int = 0) -> None:
    """Every object reachable from ``value`` (containers, models, their values)."""
    out.append(value)
    if depth > 30:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            _walk(k, out, depth + 1)
            _walk(v, out, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            _walk(v, out, depth + 1)
    elif isinstance(value, BaseModel):
        _walk(value.__dict__, out, depth + 1)
        _walk(value.__pydantic_extra__, out, depth + 1)
        _walk(value.__pydantic_fields_set__, out, depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        _walk(vars(value), out, depth + 1)


def _shape(value: Any) -> Any:
    """The value with every object's exact type beside it, for type-for-type equality."""
    kind = type(value).__qualname__
    if isinstance(value, dict):
        return (kind, [(_shape(k), _shape(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return (kind, [_shape(v) for v in value])
    if isinstance(value, (set, frozenset)):
        return (kind, sorted(repr(_shape(v)) for v in value))
    if isinstance(value, BaseModel):
        return (kind, _shape(value.__dict__), sorted(value.__pydantic_fields_set__))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (kind, _shape(vars(value)))
    return (kind, value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=_states)
def test_the_copy_is_a_deep_copy_that_shares_nothing_mutable(state: dict[str, Any]) -> None:
    copied = isolate(state)
    assert copied == copy.deepcopy(state)
    assert _shape(copied) == _shape(copy.deepcopy(state))
    before: list[Any] = []
    _walk(state, before)
    mutable = {id(o) for o in before if not isinstance(o, _IMMUTABLE)}
    after: list[Any] = []
    _walk(copied, after)
    shared = [o for o in after if not isinstance(o, _IMMUTABLE) and id(o) in mutable]
    assert shared == []


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=_objects | st.lists(_plain, max_size=3) | st.dictionaries(st.text(), _plain))
def test_an_object_held_twice_is_one_object_in_the_copy(obj: Any) -> None:
    state = {"a": obj, "b": [obj, {"again": obj}]}
    copied = isolate(state)
    assert copied["a"] is copied["b"][0] is copied["b"][1]["again"]
    if not isinstance(obj, _IMMUTABLE):
        assert copied["a"] is not obj


def test_what_the_round_trip_cannot_take_is_refused_for_the_caller_to_copy() -> None:
    import threading

    from trustgate.graph import _isolate

    big = "x" * (_isolate.MAX_STREAM + 1)  # deepcopy shares it; the round trip would not
    for value in ({"f": lambda: 1}, {"lock": threading.Lock()}, {"text": [big]}):
        with pytest.raises(CannotIsolate):
            isolate(value)


# --- through a guarded graph --------------------------------------------------------------


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    notes: Annotated[list[Any], operator.add]
    docs: list[Any]
    sections: list[Section]
    verdict: str


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a mutable container or model inside ``value``."""
    found: list[tuple[Any, ...]] = []
    if isinstance(value, (dict, list, BaseModel)):
        found.append(at)
    if isinstance(value, dict):
        for k, v in value.items():
            found += _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _paths(v, (*at, i))
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            found += _paths(getattr(value, name), (*at, name))
    return found


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = getattr(value, step) if isinstance(value, BaseModel) else value[step]
    return value


def _edit(target: Any, how: int) -> None:
    """Edit ``target`` in place, planting the lie."""
    if isinstance(target, BaseModel):
        name = sorted(type(target).model_fields)[how % len(type(target).model_fields)]
        current = getattr(target, name)
        object.__setattr__(target, name, [current, LIE] if not isinstance(current, str) else LIE)
    elif isinstance(target, dict):
        if target and how % 2:
            target[next(iter(target))] = LIE
        else:
            target["planted"] = LIE
    elif isinstance(target, list):
        if target and how % 2:
            target[0] = LIE
        else:
            target.append(LIE)


# what a checkpointer serializes: the graph-level test keeps its state to JSON data
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**31), 2**31) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@st.composite
def _json_message(draw: Any) -> Any:
    kwargs = draw(st.dictionaries(st.text(max_size=5), _json, max_size=2))
    ident = draw(st.text("abc", min_size=1, max_size=4))
    content = draw(st.text(max_size=12) | _blocks)
    if draw(st.booleans()):
        return HumanMessage(content, id=ident, additional_kwargs=kwargs)
    calls = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "name": st.text("xyz", min_size=1, max_size=3),
                    "args": st.dictionaries(st.text(max_size=3), _json, max_size=2),
                    "id": st.text("0123", min_size=1, max_size=3),
                }
            ),
            max_size=2,
        )
    )
    return AIMessage(content, id=ident, additional_kwargs=kwargs, tool_calls=calls)


_history = st.lists(_json_message(), min_size=1, max_size=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    history=_history,
    docs=st.lists(_json, max_size=3),
    sections=st.lists(st.builds(Section, name=st.text(max_size=3)), max_size=2),
    data=st.data(),
)
def test_an_edit_anywhere_in_the_input_stays_in_the_nodes_copy(
    history: list[Any], docs: list[Any], sections: list[Section], data: Any
) -> None:
    inputs = {"messages": history, "docs": docs, "sections": sections, "notes": ["n"]}
    expected = copy.deepcopy(inputs)
    picked: list[tuple[Any, ...]] = []

    def agent(state: S) -> dict[str, Any]:
        paths = _paths({k: state[k] for k in ("messages", "docs", "sections", "notes")})
        path = data.draw(st.sampled_from(paths))
        picked.append(path)
        _edit(_at(state, path), data.draw(st.integers(0, 7)))
        return {"verdict": "ok"}

    g = StateGraph(S)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    gate = TrustGate(
        "verdict",
        reads="verdict",
        verifiers=[FunctionVerifier(lambda c, e: Finding.ok("verdict"), name="verdict")],
    )
    app = trustgate.guard(g, {"agent": gate}).compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    out = app.invoke(copy.deepcopy(inputs), config)
    assert picked, "the node ran"
    assert out["verdict"] == "ok"
    for key in ("docs", "sections", "notes"):
        assert out[key] == expected[key], picked
    assert [m.model_dump() for m in out["messages"]] == [
        m.model_dump() for m in add_messages([], expected["messages"])
    ], picked
    assert LIE not in repr(app.get_state(config).values), picked
