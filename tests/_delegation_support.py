"""What the saver delegation tests share: the public base methods and a recording saver."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver


def _public_base_members() -> set[str]:
    return {
        name
        for name, attr in vars(BaseCheckpointSaver).items()
        if not name.startswith("_") and (callable(attr) or isinstance(attr, property))
    }


class _Recording(BaseCheckpointSaver[Any]):
    """Records every public call; returns a value unique to the call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def _hit(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.calls.append((name, args, kwargs))
        return ("result-of", name)


def _recorder(name: str, base: Any) -> Any:
    if name in ("get_tuple", "aget_tuple"):  # a stored checkpoint or None, nothing else

        async def atuple(self: _Recording, *a: Any, **k: Any) -> Any:
            self._hit(name, a, k)

        def stuple(self: _Recording, *a: Any, **k: Any) -> Any:
            self._hit(name, a, k)

        return atuple if name == "aget_tuple" else stuple
    if isinstance(base, property):
        return property(lambda self: self._hit(name, (), {}))
    if inspect.isasyncgenfunction(base):

        async def agen(self: _Recording, *a: Any, **k: Any) -> AsyncIterator[Any]:
            yield self._hit(name, a, k)

        return agen
    if inspect.iscoroutinefunction(base):

        async def coro(self: _Recording, *a: Any, **k: Any) -> Any:
            return self._hit(name, a, k)

        return coro

    def call(self: _Recording, *a: Any, **k: Any) -> Any:
        if name == "list":
            return iter([self._hit(name, a, k)])
        return self._hit(name, a, k)

    return call


for _name in _public_base_members():
    setattr(_Recording, _name, _recorder(_name, vars(BaseCheckpointSaver)[_name]))
