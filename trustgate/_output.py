"""Everything one guarded node emitted in one step, as parts a gate must account for.

A gate that checks one key and lets the rest through is not a gate. So the gate does
not look at "the update"; it looks at a :class:`NodeOutput`: every state write (in
order, repeated writes to one key kept), every routing target and ``Send`` argument,
a command addressed to the parent graph, and what the node wrote to the stream
writer. Messages are read in every form LangGraph accepts (message objects, dicts,
``(role, content)`` tuples, strings, content blocks) and split into facets (text,
tool calls, other content) so a reader that verified a message's text does not
silently vouch for its tool calls.

What the node returned is kept as it was: when the gate changes nothing, the very
same object goes back to LangGraph (a passing gate changes nothing about the graph);
when a policy rewrites a part, the return value is rebuilt in the same shape with
only that part replaced.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    RemoveMessage,
    convert_to_messages,
)
from pydantic import BaseModel

from trustgate import _compat

__all__ = ["Facets", "MessageItem", "NodeOutput", "Write", "facets", "is_message_like"]

logger = logging.getLogger(__name__)


_MESSAGE_TYPES = frozenset(
    {"human", "user", "ai", "assistant", "system", "developer", "tool", "function", "chat"}
)
_TOOL_BLOCKS = frozenset(
    {
        "tool_use",
        "tool_call",
        "tool_call_chunk",
        "function_call",
        "server_tool_use",
        "server_tool_call",
        "server_tool_call_chunk",
    }
)
_TEXT_BLOCKS = frozenset({"text", "output_text", "text-plain"})
_TOOL_KWARGS = ("tool_calls", "function_call")
_TEXT_BLOCK_FIELDS = frozenset({"type", "text", "id", "index"})
# response_metadata keys providers fill with bookkeeping about the call, not with what
# the model said; anything else there (citations, grounding, search results) is output
_BOOKKEEPING = frozenset(
    {
        "model_name",
        "model",
        "model_provider",
        "finish_reason",
        "stop_reason",
        "stop_sequence",
        "token_usage",
        "usage",
        "usage_metadata",
        "system_fingerprint",
        "id",
        "created",
        "created_at",
        "service_tier",
        "done",
        "done_reason",
        "total_duration",
        "load_duration",
        "eval_count",
        "eval_duration",
        "prompt_eval_count",
        "prompt_eval_duration",
        "safety_ratings",
        "prompt_feedback",
        "is_blocked",
        "headers",
        "metrics",
        "stopReason",
        "ResponseMetadata",
        "output_version",
        # the Responses API echoes its request settings and status
        "object",
        "status",
        "incomplete_details",
        "temperature",
        "top_p",
        "top_logprobs",
        "max_output_tokens",
        "tool_choice",
        "parallel_tool_calls",
        "truncation",
        "reasoning",
        "text",
        "store",
        "background",
        "previous_response_id",
        "prompt_cache_key",
        "safety_identifier",
        # provider envelopes
        "x_groq",
        "model_version",
        "response_id",
    }
)
_MISSING: Any = object()
_DROPPED: Any = object()


# --- messages ------------------------------------------------------------------------


def is_message_like(value: Any) -> bool:
    """Whether ``add_messages`` would take ``value`` as one message."""
    if isinstance(value, BaseMessage):
        return True
    if isinstance(value, Mapping):
        role = value.get("role", value.get("type"))
        return isinstance(role, str) and role in _MESSAGE_TYPES and "content" in value
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return value[0] in _MESSAGE_TYPES
    return False


def _as_message(value: Any) -> BaseMessage | None:
    if isinstance(value, BaseMessage):
        return value
    try:
        return convert_to_messages([value])[0]
    except Exception as exc:  # an unreadable message form is held, never released
        logger.warning("cannot read a message of form %s: %s", type(value).__name__, exc)
        return None


def _block_type(block: Any) -> str | None:
    return block.get("type") if isinstance(block, Mapping) else None


@dataclass(frozen=True, slots=True)
class Facets:
    """What a message says, split by what can act on it.

    ``tool_calls`` holds one entry per distinct call, in order: a call a provider puts
    in two places (``tool_calls`` and a ``tool_use`` content block, say) is one call.
    ``collisions`` names calls whose identities clash (two calls with one id in one
    place, or one id whose name or arguments differ between places): a consumer could
    act on either, so the message is malformed output, never read as one call.
    """

    text: str
    tool_calls: tuple[dict[str, Any], ...]
    other: tuple[Any, ...]
    collisions: tuple[tuple[tuple[int, ...], str], ...] = ()


def _call_of_block(block: Mapping[str, Any]) -> dict[str, Any]:
    args = block.get("input", block.get("args", block.get("arguments")))
    partial = block.get("partial_json")
    if args in (None, {}) and isinstance(partial, str) and partial:
        args = partial  # a streamed tool_use block: its arguments arrive as JSON text
    return {"name": block.get("name"), "args": args, "id": block.get("id")}


_UNREAD: Any = object()


def _args_value(args: Any) -> Any:
    """Arguments as a consumer would parse them (``_UNREAD`` when they are not JSON)."""
    if isinstance(args, (str, bytes)):
        if not args:
            return {}
        try:
            return json.loads(args)
        except (ValueError, RecursionError):
            return _UNREAD
    return args


def _same_call(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two places describe one call: the same name and, where both can be read,
    the same arguments (partial or unreadable text cannot be acted on as other args)."""
    if a.get("name") is not None and b.get("name") is not None and a["name"] != b["name"]:
        return False
    x, y = _args_value(a.get("args")), _args_value(b.get("args"))
    return x is _UNREAD or y is _UNREAD or _safe_eq(x, y)


class _Calls:
    """The distinct calls of one message, collected place by place (never keyed by the
    id alone: the id is often the model's own text)."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.places: list[str] = []
        self.by_id: dict[Any, int] = {}
        self.collisions: list[tuple[tuple[int, ...], str]] = []

    def add(self, call: dict[str, Any], place: str) -> None:
        cid = call.get("id")
        if cid is not None:
            try:
                j = self.by_id.get(cid)
            except TypeError:  # an unhashable id is not an id anyone can match
                j, cid = None, None
            if j is not None:
                if self.places[j] == place:
                    self.collisions.append(
                        ((j, len(self.calls)), f"two tool calls in {place} share one id")
                    )
                    self.calls.append(call)
                    self.places.append(place)
                elif not _same_call(self.calls[j], call):
                    self.collisions.append(
                        (
                            (j, len(self.calls)),
                            f"one tool call id differs between {self.places[j]} and {place}",
                        )
                    )
                    self.calls.append(call)
                    self.places.append(place)
                return
            if cid is not None:
                self.by_id[cid] = len(self.calls)
        self.calls.append(call)
        self.places.append(place)


def facets(message: BaseMessage) -> Facets:
    """Text, tool calls (in every place a provider puts them) and other content."""
    content = message.content
    texts: list[str] = []
    other: list[Any] = []
    calls = _Calls()
    if isinstance(message, AIMessage):
        # what a tool node executes comes first: the parsed calls
        for tc in message.tool_calls:
            calls.add(
                {"name": tc.get("name"), "args": tc.get("args"), "id": tc.get("id")}, "tool_calls"
            )
        for bad in message.invalid_tool_calls:
            calls.add(
                {"name": bad.get("name"), "args": bad.get("args"), "id": bad.get("id")},
                "invalid_tool_calls",
            )
    if isinstance(content, str):
        texts.append(content)
    else:
        for block in content:
            if isinstance(block, str):
                texts.append(block)
                continue
            kind = _block_type(block)
            if kind in _TEXT_BLOCKS:
                texts.append(str(block.get("text", "")))
                extra_fields = {
                    k: v
                    for k, v in block.items()
                    if k not in _TEXT_BLOCK_FIELDS and v not in (None, "", [], {})
                }
                if extra_fields:  # annotations, citations: said beside the text
                    other.append(extra_fields)
            elif kind in _TOOL_BLOCKS or (
                isinstance(block, Mapping)
                and "name" in block
                and any(k in block for k in ("input", "args", "arguments"))
            ):
                calls.add(_call_of_block(block), "content")
            elif kind == "non_standard" and isinstance(block.get("value"), Mapping):
                inner = block["value"]
                if _block_type(inner) in _TOOL_BLOCKS:
                    calls.add(_call_of_block(inner), "content")
                else:
                    other.append(block)
            elif block:
                other.append(block)
    extra = message.additional_kwargs or {}
    for key in _TOOL_KWARGS:
        raw = extra.get(key)
        items = raw if isinstance(raw, list) else [raw] if raw else []
        for item in items:
            if not isinstance(item, Mapping):
                other.append({key: item})  # not a call anyone can parse, but output
                continue
            inner_fn = item.get("function")
            fn: Mapping[str, Any] = inner_fn if isinstance(inner_fn, Mapping) else item
            calls.add(
                {
                    "name": fn.get("name"),
                    "args": fn.get("arguments", fn.get("args")),
                    "id": item.get("id"),
                },
                f"additional_kwargs.{key}",
            )
    for key, value in extra.items():
        if key not in _TOOL_KWARGS and value not in (None, "", [], {}):
            other.append({key: value})
    for key, value in (message.response_metadata or {}).items():
        # a flag or a count cannot carry a claim; ``__``-keys are a framework's markers
        # (``__is_handoff_back``, ``__handoff_destination``), set by code, not by a model
        if (
            key in _BOOKKEEPING
            or key.startswith("__")
            or value in (None, "", [], {})
            or isinstance(value, (bool, int, float))
        ):
            continue
        other.append({key: value})  # citations, grounding: model output in metadata
    artifact = getattr(message, "artifact", None)
    if artifact not in (None, "", [], {}):  # an agent-as-tool's answer rides here
        other.append({"artifact": artifact})
    return Facets("".join(texts), tuple(calls.calls), tuple(other), tuple(calls.collisions))


def role_of(message: BaseMessage) -> str:
    """The kind of a message as declarations name it: ``ai``, ``tool``, ``human``...

    A streamed call's accumulated ``AIMessageChunk`` is an ``ai`` message like the
    ``AIMessage`` it stands for (its ``type`` says ``AIMessageChunk``)."""
    kind = message.type
    if kind.endswith("MessageChunk"):
        return kind.removesuffix("MessageChunk").lower()
    return kind


def with_text(message: BaseMessage, text: str) -> BaseMessage:
    """The message with its text replaced; tool calls and other blocks kept."""
    if isinstance(message.content, str):
        return message.model_copy(update={"content": text})
    rest = [
        b for b in message.content if not isinstance(b, str) and _block_type(b) not in _TEXT_BLOCKS
    ]
    return message.model_copy(update={"content": [{"type": "text", "text": text}, *rest]})


def without_tool_calls(message: BaseMessage, ids: set[Any]) -> BaseMessage:
    """The message with the given tool calls gone from every place they could be."""

    def keep_block(block: Any) -> bool:
        if not isinstance(block, Mapping):
            return True
        inner = block.get("value") if _block_type(block) == "non_standard" else block
        if not isinstance(inner, Mapping):
            return True
        is_call = _block_type(inner) in _TOOL_BLOCKS or (
            "name" in inner and any(k in inner for k in ("input", "args", "arguments"))
        )
        return not (is_call and inner.get("id") in ids)

    update: dict[str, Any] = {}
    if not isinstance(message.content, str):
        update["content"] = [b for b in message.content if keep_block(b)]
    extra = dict(message.additional_kwargs or {})
    raw = extra.get("tool_calls")
    if isinstance(raw, list):
        kept = [c for c in raw if not (isinstance(c, Mapping) and c.get("id") in ids)]
        if kept:
            extra["tool_calls"] = kept
        else:
            extra.pop("tool_calls")
    fc = extra.get("function_call")
    if isinstance(fc, Mapping) and (fc.get("id") in ids or None in ids):
        extra.pop("function_call")
    update["additional_kwargs"] = extra
    if isinstance(message, AIMessage):
        update["tool_calls"] = [c for c in message.tool_calls if c.get("id") not in ids]
        update["invalid_tool_calls"] = [
            c for c in message.invalid_tool_calls if c.get("id") not in ids
        ]
        if hasattr(message, "tool_call_chunks"):
            update["tool_call_chunks"] = [
                c for c in getattr(message, "tool_call_chunks", []) if c.get("id") not in ids
            ]
    return message.model_copy(update=update)


# --- the output ------------------------------------------------------------------------


@dataclass(slots=True)
class MessageItem:
    """One message a node wrote under a messages key."""

    write: int  # index of the write in NodeOutput.writes
    index: int | None  # position in the written list (None: the value was one message)
    original: Any
    message: BaseMessage | None  # None: a form nobody can read (held)
    new: bool  # False: the node handed back a message it was given, unchanged


@dataclass(slots=True)
class Write:
    key: str
    value: Any
    loc: tuple[Any, ...]
    overwrite: bool = False  # the value was wrapped in langgraph.types.Overwrite
    messages: list[MessageItem] | None = None
    # an Overwrite of a messages key that drops or reorders what the channel held: the
    # removal or the new order is output of its own (a reordered history can put an
    # executed tool call last again)
    reorders: bool = False


PartKind = Literal[
    "write",
    "text",
    "tool_call",
    "other",
    "remove",
    "unreadable",
    "overwrite",
    "store",
    "interrupt",
    "goto",
    "send",
    "custom",
]


@dataclass(frozen=True, slots=True)
class Part:
    """One thing a guarded node emitted, as the crossing accounts for it.

    ``id`` is positional, never a value the model chose: ``verdict`` (a key written
    once), ``notes@1`` (the second write to a key written more than once),
    ``messages[2].text``, ``messages[2].tool_calls[0]``, ``messages[2].other``,
    ``messages[2].remove``, ``messages.overwrite``, ``store[0]``, ``interrupt[0]``,
    ``goto``, ``send[0]``, ``custom``. ``write`` is the index of the write it belongs
    to, ``message`` the message's number under its key (across writes), ``call`` the
    call's position in the message; ``role`` the kind of message (``ai``, ``tool``...).
    """

    id: str
    kind: PartKind
    description: str
    key: str | None = None
    write: int | None = None
    message: int | None = None
    call: int | None = None
    role: str | None = None


Kind = Literal["none", "dict", "command", "list", "state", "root", "other"]


def _safe_eq(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        same = a == b
    except Exception as exc:  # an __eq__ that raises: not provably unchanged
        logger.warning(
            "comparing a %s raised %s: treated as changed", type(a).__name__, type(exc).__name__
        )
        return False
    return same is True


def merged(values: list[Any]) -> Any:
    """One value standing for several writes to one key (see ``NodeOutput.update``)."""
    if len(values) == 1:
        return values[0]
    if all(isinstance(v, (list, tuple)) for v in values):
        return [item for v in values for item in v]
    if all(isinstance(v, str) for v in values):
        return "\n".join(values)
    return list(values)


@dataclass
class NodeOutput:
    """What one guarded node emitted in one step (see the module docstring)."""

    original: Any
    kind: Kind
    writes: list[Write] = field(default_factory=list)
    goto: list[Any] = field(default_factory=list)  # node names and Send objects, in order
    graph: str | None = None
    custom: list[Any] = field(default_factory=list)
    raised: bool = False  # a command that bubbled up as ParentCommand
    input: Any = None
    keys: Sequence[str] | None = None
    message_keys: frozenset[str] = frozenset({"messages"})
    root: bool = False
    was_rewritten: bool = False  # re-read from a rebuilt value (see ``reread``)
    unreadable: list[str] = field(default_factory=list)  # parts no reader can ever cover
    interrupts: list[Any] = field(default_factory=list)  # the node paused: what it showed
    store_writes: list[Any] = field(default_factory=list)  # PutOps held from the store
    plain_keys: frozenset[str] = frozenset()
    reducers: Mapping[str, Any] = field(default_factory=dict)
    _root_index: int = 0
    _effect_cache: list[bool] | None = None
    _ledger_cache: list[Part] | None = None
    _ledger_shape: tuple[int, ...] = ()
    _write_ids: list[str] | None = None
    _replaced: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    _messages_replaced: dict[tuple[int, int | None], BaseMessage] = field(default_factory=dict)

    # -- reading ----------------------------------------------------------------------

    @classmethod
    def read(
        cls,
        value: Any,
        *,
        input: Any = None,
        keys: Sequence[str] | None = None,
        message_keys: frozenset[str] = frozenset({"messages"}),
        root: bool = False,
        raised: bool = False,
        sent: Sequence[tuple[str, Any]] = (),
        plain_keys: frozenset[str] | None = frozenset(),
        reducers: Mapping[str, Any] | None = None,
    ) -> NodeOutput:
        """Split what a node returned (or raised, for a parent command) into parts.

        ``sent`` are the channel writes the node made while it ran (``push_message``,
        a raw send): they come first, as LangGraph applies them, and are written by
        the gate when it releases (see ``sent_writes``), never by the return value.

        ``plain_keys`` are the keys whose channel keeps the last value written (no
        reducer): writing such a key the value it already holds changes nothing, so
        that write is no part. Every other write is a part as written, equal to the
        state or not: a reducer applies it again (an ``operator.add`` counter written
        its own value doubles). ``reducers`` are the reducers of the other keys: a write
        they provably leave unchanged (an empty list appended) is no part either."""
        from langgraph.types import Command

        out = cls(
            original=value,
            kind="none",
            input=input,
            raised=raised,
            keys=keys,
            message_keys=message_keys,
            root=root,
            plain_keys=plain_keys or frozenset(),
            reducers=dict(reducers or {}),
        )
        for n, (chan, written) in enumerate(sent):
            out._add(chan, written, ("sent", n), message_keys)
        if root:
            out.kind = "root"
            if value is not None:
                out._add("__root__", value, ("root",), message_keys)
                out._root_index = len(out.writes) - 1
            return out
        if value is None:
            return out
        if isinstance(value, dict):
            out.kind = "dict"
            for k, v in value.items():
                out._add(k, v, ("d", k), message_keys)
        elif isinstance(value, Command):
            out.kind = "command"
            out._command(value, (), message_keys)
        elif isinstance(value, (list, tuple)) and any(isinstance(i, Command) for i in value):
            out.kind = "list"
            for i, item in enumerate(value):
                if isinstance(item, Command):
                    out._command(item, (i,), message_keys)
                elif isinstance(item, dict):
                    for k, v in item.items():
                        out._add(k, v, (i, "d", k), message_keys)
                elif isinstance(item, BaseModel) or dataclasses.is_dataclass(item):
                    # LangGraph's _get_updates reads a state object in the list as writes
                    for k, v in _compat.update_as_tuples(item, keys):
                        out._add(k, v, (i, "a", k), message_keys)
                elif item is not None:
                    out.unreadable.append(f"an item of type {type(item).__name__} in the list")
        elif isinstance(value, BaseModel) or dataclasses.is_dataclass(value):
            out.kind = "state"
            for k, v in _compat.update_as_tuples(value, keys):
                out._add(k, v, ("a", k), message_keys)
        else:
            out.kind = "other"
            out.unreadable.append(f"a return value of type {type(value).__name__}")
        return out

    def _command(self, cmd: Any, prefix: tuple[Any, ...], message_keys: frozenset[str]) -> None:
        from langgraph.types import Send

        update = cmd.update
        if isinstance(update, dict):
            for k, v in update.items():
                self._add(k, v, (*prefix, "c", "d", k), message_keys)
        elif update is not None:
            for j, (k, v) in enumerate(_compat.command_update(cmd)):
                self._add(k, v, (*prefix, "c", "t", j), message_keys)
        goto = cmd.goto
        targets = goto if isinstance(goto, (list, tuple)) else [goto]
        self.goto.extend(t for t in targets if isinstance(t, Send) or (t not in (None, "")))
        if cmd.graph is not None:
            self.graph = cmd.graph

    def _add(
        self, key: str, value: Any, loc: tuple[Any, ...], message_keys: frozenset[str]
    ) -> None:
        from langgraph.types import Overwrite

        overwrite = isinstance(value, Overwrite)
        inner = value.value if overwrite else value
        w = Write(key, value, loc, overwrite=overwrite)
        idx = len(self.writes)
        items: list[Any] | None = None
        if isinstance(inner, (list, tuple)) and (
            key in message_keys or (inner and all(is_message_like(m) for m in inner))
        ):
            items = list(inner)
            positions: list[int | None] = list(range(len(items)))
        elif is_message_like(inner) or (key in message_keys and isinstance(inner, str)):
            items = [inner]
            positions = [None]
        if items is not None:
            # only add_messages replaces a message by its id: under any other reducer a
            # message handed back is appended again, so it is new output
            known = self._input_messages(key) if key in message_keys else {}
            w.messages = []
            for pos, item in zip(positions, items, strict=True):
                msg = _as_message(item) if not isinstance(item, RemoveMessage) else item
                new = True
                if isinstance(msg, BaseMessage) and msg.id is not None and msg.id in known:
                    new = not _safe_eq(known[msg.id], msg)
                w.messages.append(MessageItem(idx, pos, item, msg, new))
            if overwrite:
                w.reorders = not self._keeps_history(key, w.messages)
        self.writes.append(w)

    def _keeps_history(self, key: str, items: list[MessageItem]) -> bool:
        """Whether an ``Overwrite`` of a messages key starts with exactly the messages
        the channel held, in their order (then it only appends)."""
        before = self._input_value(key)
        held = list(before) if isinstance(before, (list, tuple)) else []
        if len(items) < len(held):
            return False
        for old, item in zip(held, items, strict=False):
            msg = item.message
            if (
                item.new
                or not isinstance(old, BaseMessage)
                or not isinstance(msg, BaseMessage)
                or msg.id is None
                or msg.id != old.id
            ):
                return False
        return True

    def _input_value(self, key: str) -> Any:
        src = self.input
        if isinstance(src, Mapping):
            return src.get(key, _MISSING)
        if src is not None and not isinstance(src, (str, bytes, int, float)):
            return getattr(src, key, _MISSING)
        return _MISSING

    def _input_messages(self, key: str) -> dict[str, Any]:
        value = self._input_value(key)
        if not isinstance(value, (list, tuple)):
            return {}
        return {m.id: m for m in value if isinstance(m, BaseMessage) and m.id is not None}

    # -- views ------------------------------------------------------------------------

    @property
    def update(self) -> dict[str, Any]:
        """Key -> value as readers see it.

        A key written several times in one step (``Command(update=[(k, a), (k, b)])``,
        a list of commands) reaches its reducer once per write, so a reader must see
        every write, not the last: list values are joined, texts joined by newlines,
        anything else is shown as the list of the values written."""
        return {key: merged(self.values(key)) for key in dict.fromkeys(w.key for w in self.writes)}

    def value_of(self, index: int) -> Any:
        """The current (possibly rewritten) value of write ``index``, Overwrite unwrapped."""
        w = self.writes[index]
        value = self._replaced.get(w.loc, _MISSING)
        if value is _MISSING:
            value = w.value.value if w.overwrite else w.value
        if w.messages is not None and any(
            (index, m.index) in self._messages_replaced for m in w.messages
        ):
            if isinstance(value, (list, tuple)):
                value = [
                    v
                    for m in w.messages
                    if (v := self._messages_replaced.get((index, m.index), m.original))
                    is not _DROPPED
                ]
            else:
                value = self._messages_replaced.get((index, None), value)
                if value is _DROPPED:
                    value = []
        return value

    def values(self, key: str) -> list[Any]:
        """The current value of every write to ``key``, in order: a reducer key written
        twice in one step receives both, so a reader must see both."""
        return [
            self.value_of(i)
            for i, w in enumerate(self.writes)
            if w.key == key and not self.dropped(i)
        ]

    def messages(self, key: str) -> list[MessageItem]:
        """Every message written under ``key``, in order, across writes."""
        return [m for w in self.writes if w.key == key and w.messages for m in w.messages]

    def message(self, item: MessageItem) -> BaseMessage | None:
        """The current (possibly rewritten) message of ``item``."""
        msg = self._messages_replaced.get((item.write, item.index), item.message)
        return None if msg is _DROPPED else msg

    def changed(self, index: int) -> bool:
        """Whether write ``index`` carries something the node's input did not hold."""
        w = self.writes[index]
        if w.messages is not None:
            return any(m.new for m in w.messages)
        before = self._input_value(w.key)
        return before is _MISSING or not _safe_eq(before, self.value_of(index))

    def edits_history(self, index: int) -> bool:
        """Whether write ``index`` changes what its channel held, rather than only
        appending to it: a message replaced by id or removed, an overwrite that drops
        or reorders the history, any overwrite of another key."""
        w = self.writes[index]
        if w.messages is None:
            return w.overwrite
        if w.reorders:
            return True
        known = self._input_messages(w.key)
        return any(
            isinstance(m.original, RemoveMessage)
            or (m.new and isinstance(m.message, BaseMessage) and m.message.id in known)
            for m in w.messages
        )

    @property
    def routes(self) -> list[Any]:
        return list(self.goto)

    def indexed_messages(self, key: str) -> list[tuple[int, MessageItem]]:
        """``(k, item)`` for the messages under ``key``: ``k`` numbers them across writes,
        the way part ids (``messages[k].text``) do."""
        return list(enumerate(self.messages(key)))

    def is_part(self, index: int) -> bool:
        """Whether write ``index`` (not a messages write) is output to account for.

        A write is a part as written, not as a difference from the input: a reducer
        applies it again (an ``operator.add`` counter written its current value
        doubles). A write is no part only when it provably changes nothing: a key whose
        channel keeps the last value written, written the value it holds, or a reducer
        that returns the channel's value unchanged (an empty list appended), applied
        in order after the step's earlier writes to the key."""
        return self._effects()[index]

    def _effects(self) -> list[bool]:
        cached = self._effect_cache
        if cached is not None and len(cached) == len(self.writes):
            return cached
        state: dict[str, Any] = {}
        out: list[bool] = []
        for i, w in enumerate(self.writes):
            if w.messages is not None or self.dropped(i):
                out.append(True)
                continue
            before = state.get(w.key, _MISSING)
            if before is _MISSING:
                before = self._input_value(w.key)
            value = self.value_of(i)
            if w.overwrite or before is _MISSING:
                out.append(True)
                state[w.key] = value
                continue
            reducer = self.reducers.get(w.key)
            if w.key in self.plain_keys:
                after = value
            elif reducer is not None:
                try:
                    # a reducer that extends its left side in place must not touch the
                    # graph's own value: it gets a copy of the container
                    left = copy.copy(before) if isinstance(before, (list, dict, set)) else before
                    after = reducer(left, value)
                except Exception as exc:  # a reducer that refuses: the write is output
                    logger.warning("reducer of %r raised %s: the write is a part", w.key, exc)
                    out.append(True)
                    state[w.key] = _MISSING
                    continue
            else:
                out.append(True)
                state[w.key] = _MISSING
                continue
            out.append(not _safe_eq(before, after))
            state[w.key] = after
        self._effect_cache = out
        return out

    def write_part_id(self, index: int) -> str:
        """``verdict`` for a key written once; ``notes@1`` for the second of several."""
        ids = self._write_ids
        if ids is None or len(ids) != len(self.writes):  # writes are only ever appended
            # every id at once: one scan of the writes per id made the ledger of a key
            # written many times quadratic
            counts: dict[str, int] = {}
            nth = []
            for w in self.writes:
                nth.append(counts.get(w.key, 0))
                counts[w.key] = nth[-1] + 1
            ids = [
                w.key if counts[w.key] == 1 else f"{w.key}@{n}"
                for w, n in zip(self.writes, nth, strict=True)
            ]
            self._write_ids = ids
        return ids[index]

    def write_parts(self, key: str) -> list[str]:
        """The part ids of every write to ``key`` (its messages' parts for a messages key)."""
        return [p.id for p in self.ledger() if p.key == key]

    def ledger(self) -> list[Part]:
        """Everything this output carries, in order, as :class:`Part` values.

        Kept until the output is rewritten (a rewrite forgets it); :meth:`malformed`
        names the parts whose identities collide."""
        # the held side channels are attached after the output is read: a change in
        # them is a change of the ledger too
        shape = (
            id(self.custom),
            len(self.custom),
            id(self.store_writes),
            len(self.store_writes),
            id(self.interrupts),
            len(self.interrupts),
            len(self.unreadable),
            len(self.goto),
        )
        if self._ledger_cache is None or self._ledger_shape != shape:
            self._ledger_cache = self._build_ledger()
            self._ledger_shape = shape
        return list(self._ledger_cache)

    def _build_ledger(self) -> list[Part]:
        from langgraph.types import Send

        parts: list[Part] = []
        counters: dict[str, int] = {}
        overwrites: dict[str, int] = {}
        for w in self.writes:
            if w.reorders:
                overwrites[w.key] = overwrites.get(w.key, 0) + 1
        seen_overwrites: dict[str, int] = {}
        for i, w in enumerate(self.writes):
            if self.dropped(i):
                continue
            if w.messages is None:
                if self.is_part(i):
                    parts.append(
                        Part(self.write_part_id(i), "write", f"state key {w.key!r}", w.key, i)
                    )
                continue
            if w.reorders:
                n = seen_overwrites.get(w.key, 0)
                seen_overwrites[w.key] = n + 1
                pid = f"{w.key}.overwrite" if overwrites[w.key] == 1 else f"{w.key}.overwrite@{n}"
                parts.append(
                    Part(
                        pid,
                        "overwrite",
                        f"an overwrite of {w.key!r} that drops or reorders its history",
                        w.key,
                        i,
                    )
                )
            for item in w.messages:
                k = counters.get(w.key, 0)
                counters[w.key] = k + 1
                if not item.new:
                    continue
                ref = f"{w.key}[{k}]"
                msg = self.message(item)
                if isinstance(item.original, RemoveMessage):
                    parts.append(
                        Part(
                            f"{ref}.remove",
                            "remove",
                            f"a removal of messages under {w.key!r}",
                            w.key,
                            i,
                            k,
                        )
                    )
                    # what a removal carries besides its id is output too: it is
                    # streamed and checkpointed as the node's write
                    if msg is not None:
                        parts.extend(self._facet_parts(msg, ref, w.key, i, k, None, "a removal"))
                elif msg is None:
                    parts.append(
                        Part(
                            f"{ref}.unreadable",
                            "unreadable",
                            f"a message under {w.key!r} nobody can read",
                            w.key,
                            i,
                            k,
                        )
                    )
                else:
                    parts.extend(self._facet_parts(msg, ref, w.key, i, k, role_of(msg), None))
        for n, what in enumerate(self.unreadable):
            parts.append(Part(f"unreadable[{n}]", "unreadable", what))
        for n, op in enumerate(self.store_writes):
            what = "a delete from" if op.value is None else "a write to"
            parts.append(
                Part(
                    f"store[{n}]",
                    "store",
                    f"{what} the store at {'/'.join(op.namespace)}:{op.key}",
                )
            )
        for n, _payload in enumerate(self.interrupts):
            parts.append(
                Part(f"interrupt[{n}]", "interrupt", "what the node shows a person while it waits")
            )
        names = [t for t in self.routes if not isinstance(t, Send)]
        if names:
            parts.append(Part("goto", "goto", "routing to " + ", ".join(map(str, names))))
        for n, t in enumerate(t for t in self.routes if isinstance(t, Send)):
            parts.append(Part(f"send[{n}]", "send", f"a Send to {t.node!r}"))
        if self.custom:
            parts.append(Part("custom", "custom", f"{len(self.custom)} stream-writer payload(s)"))
        return parts

    @staticmethod
    def _facet_parts(
        msg: BaseMessage,
        ref: str,
        key: str,
        write: int,
        k: int,
        role: str | None,
        carrier: str | None,
    ) -> list[Part]:
        f = facets(msg)
        what = carrier or f"a {role} message"
        out: list[Part] = []
        if f.text.strip():
            out.append(
                Part(f"{ref}.text", "text", f"the text of {what}", key, write, k, None, role)
            )
        for j, _call in enumerate(f.tool_calls):
            out.append(
                Part(
                    f"{ref}.tool_calls[{j}]",
                    "tool_call",
                    f"tool call {j} of {what}",
                    key,
                    write,
                    k,
                    j,
                    role,
                )
            )
        if f.other:
            out.append(
                Part(
                    f"{ref}.other",
                    "other",
                    f"the other content of {what}",
                    key,
                    write,
                    k,
                    None,
                    role,
                )
            )
        return out

    def malformed(self) -> list[tuple[tuple[str, ...], str]]:
        """``(part ids, why)`` for each collision of identities in this output (two tool
        calls of one message with one id): malformed output, never read as one part."""
        out: list[tuple[tuple[str, ...], str]] = []
        counters: dict[str, int] = {}
        for w in self.writes:
            for item in w.messages or ():
                k = counters.get(w.key, 0)
                counters[w.key] = k + 1
                msg = self.message(item)
                if not item.new or msg is None:
                    continue
                for calls, why in facets(msg).collisions:
                    ids = tuple(f"{w.key}[{k}].tool_calls[{j}]" for j in calls)
                    out.append((ids, f"{w.key}[{k}]: {why}"))
        return out

    # -- rewriting (copy on write; the node's objects are never mutated) ---------------

    def set_value(self, index: int, value: Any) -> None:
        self._replaced[self.writes[index].loc] = value
        self._forget()

    def _forget(self) -> None:
        self._effect_cache = None
        self._ledger_cache = None

    def set_message(self, item: MessageItem, message: BaseMessage) -> None:
        self._messages_replaced[(item.write, item.index)] = message
        self._forget()

    def drop_message(self, item: MessageItem) -> None:
        """Leave ``item`` out of the rebuilt value (see ``reread``)."""
        self._messages_replaced[(item.write, item.index)] = _DROPPED
        self._forget()

    def drop_write(self, index: int) -> None:
        """Leave write ``index`` out of the rebuilt value altogether.

        Raises ``ValueError`` where the shape has no way to leave a write out (a field
        of a state object the node returned, the value of a root graph)."""
        w = self.writes[index]
        if w.loc[0] == "root" or "a" in w.loc[:-1]:
            raise ValueError(f"a write to {w.key!r} in a returned state object cannot be left out")
        self._replaced[w.loc] = _DROPPED
        self._forget()

    def dropped(self, index: int) -> bool:
        return self._replaced.get(self.writes[index].loc, _MISSING) is _DROPPED

    @property
    def _pending(self) -> bool:
        return bool(self._replaced or self._messages_replaced)

    @property
    def rewritten(self) -> bool:
        return self.was_rewritten or self._pending

    def sent_writes(self) -> list[tuple[str, Any]]:
        """The writes the node made while it ran, as the gate releases them."""
        return [
            (w.key, self._write_value(i))
            for i, w in enumerate(self.writes)
            if w.loc[0] == "sent" and not self.dropped(i)
        ]

    def _write_value(self, index: int) -> Any:
        w = self.writes[index]
        v = self.value_of(index)
        if w.overwrite:
            from langgraph.types import Overwrite

            return Overwrite(v)
        return v

    def reread(self) -> NodeOutput:
        """The rewritten output split into parts afresh.

        A rewrite that replaces a whole value (a person's edit of ``messages``) leaves
        the parts read from the old value behind; whatever checks the output next must
        see the new value's messages, texts and calls, not the old ones."""
        fresh = NodeOutput.read(
            self.rebuild(),
            input=self.input,
            keys=self.keys,
            message_keys=self.message_keys,
            root=self.root,
            raised=self.raised,
            sent=self.sent_writes(),
            plain_keys=self.plain_keys,
            reducers=self.reducers,
        )
        fresh.custom = list(self.custom)
        fresh.interrupts = list(self.interrupts)
        fresh.store_writes = list(self.store_writes)
        fresh.was_rewritten = self.rewritten
        return fresh

    def rebuild(self) -> Any:
        """The node's return value with every rewrite applied, in its original shape."""
        if not self._pending:
            return self.original
        from langgraph.types import Command

        def value(index: int) -> Any:
            w = self.writes[index]
            v = self.value_of(index)
            if w.overwrite:
                from langgraph.types import Overwrite

                return Overwrite(v)
            return v

        by_loc = {w.loc: i for i, w in enumerate(self.writes)}

        def command(cmd: Any, prefix: tuple[Any, ...]) -> Any:
            update = cmd.update
            if isinstance(update, dict):
                new_update: Any = {
                    k: value(by_loc[(*prefix, "c", "d", k)])
                    if (*prefix, "c", "d", k) in by_loc
                    else v
                    for k, v in update.items()
                    if not gone((*prefix, "c", "d", k))
                }
            elif update is not None:
                new_update = [
                    (k, value(by_loc[(*prefix, "c", "t", j)]))
                    for j, (k, _v) in enumerate(_compat.command_update(cmd))
                    if not gone((*prefix, "c", "t", j))
                ]
            else:
                new_update = None
            return dataclasses.replace(cmd, update=new_update)

        def gone(loc: tuple[Any, ...]) -> bool:
            return self._replaced.get(loc, _MISSING) is _DROPPED

        if self.kind == "root":
            return value(self._root_index) if self.original is not None else self.original
        if self.kind == "dict":
            return {k: value(by_loc[("d", k)]) for k in self.original if not gone(("d", k))}
        if self.kind == "command":
            return command(self.original, ())
        if self.kind == "list":
            out: list[Any] = []
            for i, item in enumerate(self.original):
                if isinstance(item, Command):
                    out.append(command(item, (i,)))
                elif isinstance(item, dict):
                    out.append(
                        {k: value(by_loc[(i, "d", k)]) for k in item if not gone((i, "d", k))}
                    )
                elif any(loc[:2] == (i, "a") for loc in by_loc):
                    changes = {loc[2]: value(j) for loc, j in by_loc.items() if loc[:2] == (i, "a")}
                    out.append(
                        item.model_copy(update=changes)
                        if isinstance(item, BaseModel)
                        else dataclasses.replace(item, **changes)
                    )
                else:
                    out.append(item)
            return type(self.original)(out) if isinstance(self.original, tuple) else out
        if self.kind == "state":
            changes = {w.key: value(i) for i, w in enumerate(self.writes) if w.loc[0] == "a"}
            if isinstance(self.original, BaseModel):
                return self.original.model_copy(update=changes)
            return dataclasses.replace(self.original, **changes)
        return self.original
