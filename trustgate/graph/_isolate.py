"""The guarded node's own copy of its input, made at the speed of the C pickler.

LangGraph hands a node the very objects its channels hold. A guarded node must work on
copies: an edit it makes in place (``msg.content = ...``,
``msg.additional_kwargs["x"]["y"] = ...``, ``msg.tool_calls.append(...)``,
``state["docs"].extend(...)``) would otherwise change the graph's state without passing
the gate, and would be seen at once by whatever else holds those objects (a parallel
branch of the same step, a stream consumer holding the last values). Detecting such an
edit after the node returned is too late for them, so the copy is made before the call,
and it is a deep one: nothing the node can reach is shared with the graph, except
values that are immutable.

``copy.deepcopy`` does that one object at a time in Python (a hundred messages of
history cost about as much as the rest of the crossing). :func:`isolate` gives the same
copy through one round trip of a restricted pickler: plain data (dicts, lists, tuples,
sets, strings, numbers, bytes) is copied in C, with aliasing kept; a pydantic model
(every LangChain message, a state model) is rebuilt as its own ``__deepcopy__`` would
rebuild it (a new object over a copy of its ``__dict__``, extra and private values, and
its set of fields); anything else is handed to ``copy.deepcopy`` itself, so its own copy
rules apply. Nothing is ever serialized to a form another process reads: classes and
the values ``deepcopy`` copied pass through the round trip by reference. A value the
round trip cannot take raises, and the caller copies with ``copy.deepcopy`` instead.
"""

from __future__ import annotations

import copy
import functools
import io
import logging
import pickle
from typing import Any

from pydantic import BaseModel

__all__ = ["CannotIsolate", "isolate"]

logger = logging.getLogger(__name__)

_BASE_DEEPCOPY = BaseModel.__deepcopy__
_REBUILDABLE: dict[type, bool] = {}


def _rebuildable(kind: type) -> bool:
    """Whether instances of ``kind`` copy as ``BaseModel.__deepcopy__`` copies them (a
    pydantic model that does not define a copy of its own)."""
    known = _REBUILDABLE.get(kind)
    if known is None:
        known = _REBUILDABLE[kind] = (
            issubclass(kind, BaseModel) and kind.__deepcopy__ is _BASE_DEEPCOPY
        )
    return known


def _rebuilt(table: list[Any], cls: int, d: Any, extra: Any, fields: Any, private: Any) -> Any:
    """A pydantic model as ``BaseModel.__deepcopy__`` builds it (values already copied)."""
    kind = table[cls]
    m = kind.__new__(kind)
    _set(m, "__dict__", d)
    _set(m, "__pydantic_extra__", extra)
    _set(m, "__pydantic_fields_set__", fields)
    _set(m, "__pydantic_private__", private)
    return m


_set = object.__setattr__


def _passed(table: list[Any], index: int) -> Any:
    return table[index]


def _defined(private: dict[str, Any]) -> dict[str, Any] | None:
    from pydantic_core import PydanticUndefined

    return {k: v for k, v in private.items() if v is not PydanticUndefined} or None


class _Reducers(dict[type, Any]):
    """The copier's dispatch table, filled on first sight of each type: a pydantic
    model becomes a rebuild instruction; any other type is copied by ``copy.deepcopy``
    and passes by reference. Plain data never gets here (the pickler copies it)."""

    def __init__(self, table: list[Any]) -> None:
        super().__init__()
        self.table = table
        self.memo: dict[int, Any] = {}

    def __missing__(self, kind: type) -> Any:
        table = self.table
        if _rebuildable(kind):
            index = len(table)
            table.append(kind)

            def rebuild(obj: Any) -> Any:
                private = obj.__pydantic_private__
                return (
                    _rebuilt,
                    (
                        index,
                        obj.__dict__,
                        obj.__pydantic_extra__,
                        obj.__pydantic_fields_set__,  # a set of names: the trip copies it
                        _defined(private) if private else None,
                    ),
                )

            reduce: Any = rebuild
        else:
            memo = self.memo

            def reduce(obj: Any) -> Any:
                table.append(copy.deepcopy(obj, memo))
                return (_passed, (len(table) - 1,))

        self[kind] = reduce
        return reduce


class _Copier(pickle.Pickler):
    """Pickles plain data natively and everything else as the copy instructions of
    :class:`_Reducers`."""

    def __init__(self, file: io.BytesIO, table: list[Any]) -> None:
        super().__init__(file, protocol=5)
        self.dispatch_table = _Reducers(table)


class _Loader(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, table: list[Any]) -> None:
        super().__init__(file)
        self.table = table

    def find_class(self, module: str, name: str) -> Any:
        # only the two instructions of this module are ever in the stream
        if module == __name__ and name == "_rebuilt":
            return functools.partial(_rebuilt, self.table)
        if module == __name__ and name == "_passed":
            return functools.partial(_passed, self.table)
        raise pickle.UnpicklingError(f"not a copy instruction: {module}.{name}")


class CannotIsolate(Exception):
    """The round trip cannot copy the value (the caller copies it another way)."""


_ATOMIC = frozenset({str, int, float, bool, type(None), bytes})
MAX_STREAM = 8 * 1024 * 1024
"""Past this many bytes of stream the round trip is given up: ``deepcopy`` shares
strings and bytes (they are immutable), so a state that holds large ones (a file's
text, an image) is copied without copying them."""


def _flat(value: dict[Any, Any]) -> dict[Any, Any] | None:
    """The copy of a state whose values are all immutable or empty containers (no
    round trip needed), or ``None``."""
    out: dict[Any, Any] = {}
    for k, v in value.items():
        kind = type(v)
        if kind in _ATOMIC:
            out[k] = v
        elif (kind is list or kind is dict) and not v:
            out[k] = kind()
        else:
            return None
    return out


def isolate(value: Any) -> Any:
    """A deep copy of ``value`` (see the module docstring).

    Raises :class:`CannotIsolate` when the round trip cannot take the value (a function
    or class in it, a part ``deepcopy`` refuses, nesting deeper than the pickler
    goes), or would copy more than :data:`MAX_STREAM` bytes."""
    if type(value) is dict:
        flat = _flat(value)
        if flat is not None:
            return flat
    table: list[Any] = []
    buffer = io.BytesIO()
    try:
        _Copier(buffer, table).dump(value)
    except Exception as exc:
        raise CannotIsolate(f"{type(exc).__name__}: {exc}") from exc
    if buffer.tell() > MAX_STREAM:
        raise CannotIsolate(f"{buffer.tell()} bytes of stream: large values are shared instead")
    buffer.seek(0)
    try:
        return _Loader(buffer, table).load()
    except Exception as exc:
        raise CannotIsolate(f"{type(exc).__name__}: {exc}") from exc
