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

import dataclasses
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    RemoveMessage,
    convert_to_messages,
)
from pydantic import BaseModel

__all__ = ["Facets", "MessageItem", "NodeOutput", "Write", "facets", "is_message_like"]

logger = logging.getLogger(__name__)

Facet = Literal["text", "tool_calls", "other"]

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
    """What a message says, split by what can act on it."""

    text: str
    tool_calls: tuple[dict[str, Any], ...]
    other: tuple[Any, ...]

    def present(self) -> tuple[Facet, ...]:
        out: list[Facet] = []
        if self.text.strip():
            out.append("text")
        if self.tool_calls:
            out.append("tool_calls")
        if self.other:
            out.append("other")
        return tuple(out)


def _call_of_block(block: Mapping[str, Any]) -> dict[str, Any]:
    args = block.get("input", block.get("args", block.get("arguments")))
    return {"name": block.get("name"), "args": args, "id": block.get("id")}


def facets(message: BaseMessage) -> Facets:
    """Text, tool calls (in every place a provider puts them) and other content."""
    content = message.content
    texts: list[str] = []
    other: list[Any] = []
    calls: dict[Any, dict[str, Any]] = {}
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
                call = _call_of_block(block)
                calls[call["id"] if call["id"] is not None else id(block)] = call
            elif kind == "non_standard" and isinstance(block.get("value"), Mapping):
                inner = block["value"]
                if _block_type(inner) in _TOOL_BLOCKS:
                    call = _call_of_block(inner)
                    calls[call["id"] if call["id"] is not None else id(inner)] = call
                else:
                    other.append(block)
            elif block:
                other.append(block)
    if isinstance(message, AIMessage):
        for tc in message.tool_calls:
            calls[tc.get("id") or id(tc)] = {
                "name": tc["name"],
                "args": tc["args"],
                "id": tc.get("id"),
            }
        for bad in message.invalid_tool_calls:
            calls[bad.get("id") or id(bad)] = {
                "name": bad.get("name"),
                "args": bad.get("args"),
                "id": bad.get("id"),
            }
    extra = message.additional_kwargs or {}
    for key in _TOOL_KWARGS:
        raw = extra.get(key)
        items = raw if isinstance(raw, list) else [raw] if raw else []
        for item in items:
            if not isinstance(item, Mapping):
                continue
            inner_fn = item.get("function")
            fn: Mapping[str, Any] = inner_fn if isinstance(inner_fn, Mapping) else item
            cid = item.get("id")
            if cid is None or cid not in calls:
                calls[cid if cid is not None else id(item)] = {
                    "name": fn.get("name"),
                    "args": fn.get("arguments", fn.get("args")),
                    "id": cid,
                }
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
    return Facets("".join(texts), tuple(calls.values()), tuple(other))


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
    _root_index: int = 0
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
    ) -> NodeOutput:
        """Split what a node returned (or raised, for a parent command) into parts.

        ``sent`` are the channel writes the node made while it ran (``push_message``,
        a raw send): they come first, as LangGraph applies them, and are written by
        the gate when it releases (see ``sent_writes``), never by the return value."""
        from langgraph.types import Command

        out = cls(
            original=value,
            kind="none",
            input=input,
            raised=raised,
            keys=keys,
            message_keys=message_keys,
            root=root,
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
                    from trustgate.graph import _compat

                    for k, v in _compat.update_as_tuples(item, keys):
                        out._add(k, v, (i, "a", k), message_keys)
                elif item is not None:
                    out.unreadable.append(f"an item of type {type(item).__name__} in the list")
        elif isinstance(value, BaseModel) or dataclasses.is_dataclass(value):
            out.kind = "state"
            from trustgate.graph import _compat

            for k, v in _compat.update_as_tuples(value, keys):
                out._add(k, v, ("a", k), message_keys)
        else:
            out.kind = "other"
            out.unreadable.append(f"a return value of type {type(value).__name__}")
        return out

    def _command(self, cmd: Any, prefix: tuple[Any, ...], message_keys: frozenset[str]) -> None:
        from langgraph.types import Send

        from trustgate.graph import _compat

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
            known = self._input_messages(key)
            w.messages = []
            for pos, item in zip(positions, items, strict=True):
                msg = _as_message(item) if not isinstance(item, RemoveMessage) else item
                new = True
                if isinstance(msg, BaseMessage) and msg.id is not None and msg.id in known:
                    new = not _safe_eq(known[msg.id], msg)
                w.messages.append(MessageItem(idx, pos, item, msg, new))
        self.writes.append(w)

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
        return [self.value_of(i) for i, w in enumerate(self.writes) if w.key == key]

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

    @property
    def routes(self) -> list[Any]:
        return list(self.goto)

    def indexed_messages(self, key: str) -> list[tuple[int, MessageItem]]:
        """``(k, item)`` for the messages under ``key``: ``k`` numbers them across writes,
        the way part ids (``messages[k].text``) do."""
        return list(enumerate(self.messages(key)))

    def parts(self) -> Iterator[tuple[str, str]]:
        """``(part id, description)`` for everything new this output carries."""
        from langgraph.types import Send

        counters: dict[str, int] = {}
        for i, w in enumerate(self.writes):
            if w.messages is not None:
                for item in w.messages:
                    k = counters.get(w.key, 0)
                    counters[w.key] = k + 1
                    if not item.new:
                        continue
                    ref = f"{w.key}[{k}]"
                    msg = self.message(item)
                    if isinstance(item.original, RemoveMessage):
                        yield f"{ref}.remove", f"a removal of messages under {w.key!r}"
                        # what a removal carries besides its id is output too: it is
                        # streamed and checkpointed as the node's write
                        if msg is not None:
                            for facet in facets(msg).present():
                                yield f"{ref}.{facet}", f"the {facet} a removal carries"
                    elif msg is None:
                        yield f"{ref}.unreadable", f"a message under {w.key!r} nobody can read"
                    else:
                        for facet in facets(msg).present():
                            yield f"{ref}.{facet}", f"the {facet} of a {msg.type} message"
            elif self.changed(i):
                yield w.key, f"state key {w.key!r}"
        for n, what in enumerate(self.unreadable):
            yield f"unreadable[{n}]", what
        for n, op in enumerate(self.store_writes):
            what = "a delete from" if op.value is None else "a write to"
            yield f"store[{n}]", f"{what} the store at {'/'.join(op.namespace)}:{op.key}"
        for n, _payload in enumerate(self.interrupts):
            yield f"interrupt[{n}]", "what the node shows a person while it waits"
        names = [t for t in self.routes if not isinstance(t, Send)]
        if names:
            yield "goto", "routing to " + ", ".join(map(str, names))
        for n, t in enumerate(t for t in self.routes if isinstance(t, Send)):
            yield f"send[{n}]", f"a Send to {t.node!r}"
        if self.custom:
            yield "custom", f"{len(self.custom)} stream-writer payload(s)"

    def part_roles(self) -> dict[str, str]:
        """``messages[3]`` → ``tool``: the type of the message behind a message part, so
        a declaration can name one kind (``messages.tool.text``: tool results' text)
        without letting through the same facet of every other message."""
        roles: dict[str, str] = {}
        for key in dict.fromkeys(w.key for w in self.writes if w.messages is not None):
            for k, item in self.indexed_messages(key):
                msg = self.message(item)
                # a removal is named by its own facet (``messages.remove``), never by
                # kind: ``messages.remove`` must not cover what a removal carries
                if msg is not None and not isinstance(msg, RemoveMessage):
                    roles[f"{key}[{k}]"] = msg.type
        return roles

    # -- rewriting (copy on write; the node's objects are never mutated) ---------------

    def set_value(self, index: int, value: Any) -> None:
        self._replaced[self.writes[index].loc] = value

    def set_message(self, item: MessageItem, message: BaseMessage) -> None:
        self._messages_replaced[(item.write, item.index)] = message

    def drop_message(self, item: MessageItem) -> None:
        """Leave ``item`` out of the rebuilt value (see ``reread``)."""
        self._messages_replaced[(item.write, item.index)] = _DROPPED

    @property
    def _pending(self) -> bool:
        return bool(self._replaced or self._messages_replaced)

    @property
    def rewritten(self) -> bool:
        return self.was_rewritten or self._pending

    def sent_writes(self) -> list[tuple[str, Any]]:
        """The writes the node made while it ran, as the gate releases them."""
        return [
            (w.key, self._write_value(i)) for i, w in enumerate(self.writes) if w.loc[0] == "sent"
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
            from trustgate.graph import _compat

            update = cmd.update
            if isinstance(update, dict):
                new_update: Any = {
                    k: value(by_loc[(*prefix, "c", "d", k)])
                    if (*prefix, "c", "d", k) in by_loc
                    else v
                    for k, v in update.items()
                }
            elif update is not None:
                new_update = [
                    (k, value(by_loc[(*prefix, "c", "t", j)]))
                    for j, (k, _v) in enumerate(_compat.command_update(cmd))
                ]
            else:
                new_update = None
            return dataclasses.replace(cmd, update=new_update)

        if self.kind == "root":
            return value(self._root_index) if self.original is not None else self.original
        if self.kind == "dict":
            return {k: value(by_loc[("d", k)]) for k in self.original}
        if self.kind == "command":
            return command(self.original, ())
        if self.kind == "list":
            out: list[Any] = []
            for i, item in enumerate(self.original):
                if isinstance(item, Command):
                    out.append(command(item, (i,)))
                elif isinstance(item, dict):
                    out.append({k: value(by_loc[(i, "d", k)]) for k in item})
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
