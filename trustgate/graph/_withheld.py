"""A guarded node's error without the model output it may carry.

A node's error is output too: a parse failure quotes the raw model output, a
``KeyError`` names a key the model chose, ``json.JSONDecodeError.doc`` holds the whole
text, a note added with ``add_note()`` or an error it was raised ``from`` repeats it.
LangGraph keeps the error with the task in the checkpoint (as its ``repr``) and hands
the object to the ``tasks``/``debug`` streams; ``logging.exception``, error trackers
and ``traceback.format_exception`` print its message, its notes and its whole chain.

So, unless a gate declares ``passthrough=["error"]``, :func:`withheld` empties every
error of the chain (``__cause__`` and ``__context__``, recursively, each error once):

* the message (``args``) becomes one content-free line naming the type and the node;
* notes are dropped;
* attributes that can hold text are emptied: a string becomes that line, bytes and
  containers empty, other objects ``None`` (an HTTP response keeps only its status code, which
  LangGraph's default retry policy reads); numbers and flags stay;
* the fields of the built-in types that keep them outside ``args`` are cleared (an
  ``OSError``'s file names, an ``AttributeError``'s object, ...);
* the local variables of the finished frames in its traceback are cleared (error
  trackers capture them); the traceback itself (files, lines) stays.

The error keeps its type when, afterwards, its ``str()`` and ``repr()`` are exactly the
content-free line; otherwise its text is computed from data it keeps inside (pydantic's
``ValidationError``, ``UnicodeDecodeError``, ``SyntaxError``) and it is replaced by
:class:`~trustgate.errors.NodeErrorWithheld`, which names the original type and is
chained from nothing (a ``KeyboardInterrupt`` or a cancellation, which callers must
still see as such, is never replaced). An exception group is rebuilt with the line as
its message and its members withheld the same way.

trustgate's own errors keep their message (it is written content-free), and LangGraph's
control flow (interrupts, handoffs, halts) is left as it is; their chain is still
withheld.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import Any

from trustgate.errors import NodeErrorWithheld, TrustgateError, TrustgateOutcome

__all__ = ["withheld"]

logger = logging.getLogger(__name__)

# the fields built-in exception types keep outside ``args`` and ``__dict__``, cleared
# because their ``str()`` or their value quotes what the node handled
_FIELDS: tuple[tuple[type[BaseException], tuple[str, ...]], ...] = (
    (OSError, ("filename", "filename2", "strerror")),
    (ImportError, ("msg", "name", "path")),
    (AttributeError, ("name", "obj")),
    (NameError, ("name",)),
    (StopIteration, ("value",)),
)


class _Response:
    """What an HTTP error keeps of its response: the status code (LangGraph's default
    retry policy reads ``exc.response.status_code``), nothing of the body."""

    def __init__(self, status_code: int) -> None:
        self.status_code = status_code

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<response {self.status_code}: withheld>"


def message(error_type: str, node: str) -> str:
    """The one content-free line an error says instead (the same as the typed error's)."""
    return str(NodeErrorWithheld(node, error_type))


def _emptied(value: Any, text: str) -> Any:
    if value is None or isinstance(value, (bool, int, float, complex)):
        return value
    if isinstance(value, str):  # the line itself: a ``__str__`` returning it still works
        return text
    if isinstance(value, (bytes, bytearray)):
        return b""
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        try:
            return type(value)()
        except TypeError:  # a named tuple or a subclass that needs its fields
            return None
    code = getattr(value, "status_code", None)
    if isinstance(code, int) and not isinstance(code, bool):
        return _Response(code)
    return None


def _clear_frames(exc: BaseException) -> None:
    # finished frames only: the stdlib skips (and says nothing of) executing ones
    if exc.__traceback__ is not None:
        traceback.clear_frames(exc.__traceback__)


def _exempt(exc: BaseException) -> bool:
    """trustgate's own errors keep their text (it is written content-free)."""
    return isinstance(exc, (TrustgateError, TrustgateOutcome))


def _signal(exc: BaseException) -> bool:
    """Control flow in the chain is left untouched (its values are LangGraph's)."""
    from trustgate import _compat

    return _compat.is_control_flow(exc) or _compat.is_parent_command(exc)


def _slots(exc: BaseException) -> list[str]:
    """The ``__slots__`` a user's exception class declares (built-in fields aside)."""
    names: list[str] = []
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            continue
        declared = cls.__dict__.get("__slots__", ())
        for slot in (declared,) if isinstance(declared, str) else declared:
            if isinstance(slot, str) and not slot.startswith("__") and hasattr(exc, slot):
                names.append(slot)
    return names


def _empty_in_place(exc: BaseException, text: str) -> bool:
    """Take the text out of ``exc`` itself; whether it now says only ``text`` (or,
    for an error that said nothing, still nothing)."""
    try:
        said = bool(exc.args) or bool(str(exc))
        if said:
            exc.args = (text,)
        state = getattr(exc, "__dict__", None)
        if state is not None:
            state.pop("__notes__", None)
            for name in [k for k in state if not k.startswith("__")]:
                state[name] = _emptied(state[name], text)
        for kind, fields in _FIELDS:
            if isinstance(exc, kind):
                for name in fields:
                    # deleted, not set to None: an OSError formats a None file name
                    try:
                        delattr(exc, name)
                    except AttributeError:
                        setattr(exc, name, None)
        for slot in _slots(exc):
            setattr(exc, slot, _emptied(getattr(exc, slot), text))
        shown = str(exc)
        if repr(exc) != BaseException.__repr__(exc):
            return False
        return shown in (text, repr(text)) if said else shown == ""
    except Exception as fail:  # a type that refuses new args or computes its text
        logger.warning(
            "cannot empty a %s in place (%s): it is raised as NodeErrorWithheld",
            type(exc).__name__,
            type(fail).__name__,
        )
        return False


def _qualified(exc: BaseException) -> str:
    cls = type(exc)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


class _Scrub:
    """One withholding: each error of the chain once (the chain may be a cycle)."""

    def __init__(self, node: str) -> None:
        self.node = node
        self.done: dict[int, BaseException] = {}
        self.keep: list[BaseException] = []  # ids stay unique while the originals live

    def __call__(self, exc: BaseException) -> BaseException:
        found = self.done.get(id(exc))
        if found is not None:
            return found
        self.keep.append(exc)
        self.done[id(exc)] = exc  # a cycle back to this error finds it
        if _signal(exc):
            return exc
        _clear_frames(exc)
        if _exempt(exc):
            self._chain(exc, exc)
            state = getattr(exc, "__dict__", None)
            if state is not None:
                state.pop("__notes__", None)
            return exc
        out = self._replace(exc)
        self.done[id(exc)] = out
        if out is exc:
            self._chain(exc, out)
        return out

    def _chain(self, old: BaseException, new: BaseException) -> None:
        # assigning __cause__ sets __suppress_context__: what the traceback shows stays
        suppress = old.__suppress_context__
        cause, context = old.__cause__, old.__context__
        new_cause = self(cause) if cause is not None else None
        new_context = self(context) if context is not None else None
        if new is not old or new_cause is not cause:
            new.__cause__ = new_cause
        if new is not old or new_context is not context:
            new.__context__ = new_context
        new.__suppress_context__ = suppress

    def _replace(self, exc: BaseException) -> BaseException:
        text = message(type(exc).__name__, self.node)
        if isinstance(exc, BaseExceptionGroup):
            return self._group(exc, text)
        if _empty_in_place(exc, text) or not isinstance(exc, Exception):
            return exc  # a KeyboardInterrupt or a cancellation keeps what it is
        return self._typed(exc)

    def _group(self, group: BaseExceptionGroup[Any], text: str) -> BaseException:
        members = [self(e) for e in group.exceptions]
        build: Callable[..., BaseException] = type(group)
        try:
            rebuilt = build(text, members)
        except Exception as fail:  # a group subclass with its own constructor
            logger.warning(
                "cannot rebuild a %s (%s): it is raised as NodeErrorWithheld",
                type(group).__name__,
                type(fail).__name__,
            )
            return self._typed(group)
        plural = "s" if len(members) > 1 else ""
        if str(rebuilt) != f"{text} ({len(members)} sub-exception{plural})":
            return self._typed(group)
        rebuilt.__traceback__ = group.__traceback__
        rebuilt.__suppress_context__ = group.__suppress_context__
        self._chain(group, rebuilt)
        return rebuilt

    def _typed(self, exc: BaseException) -> BaseException:
        logger.debug("a %s cannot be emptied: raised as NodeErrorWithheld", type(exc).__name__)
        typed = NodeErrorWithheld(self.node, _qualified(exc))
        typed.__traceback__ = exc.__traceback__
        typed.__cause__ = None
        typed.__context__ = None
        typed.__suppress_context__ = True
        return typed


def withheld(exc: BaseException, node: str) -> BaseException:
    """``exc`` (emptied in place) or the error to raise in its place; see the module
    docstring. Raise the result outside any ``except`` block that still holds ``exc``
    (or ``from None`` with the context cleared), so it is not chained to the original."""
    return _Scrub(node)(exc)
