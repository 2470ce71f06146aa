"""Applying a policy's rewrites to a node's output, part by part.

A policy names what it rewrites (a field path, a message, a tool call, a span of the
text the gate read); :func:`apply_rewrite` applies one rewrite to a copy of the output
and returns the ids of the parts it rewrote or removed. The gate resolves a failed
finding only when every part the finding judged is among them, so a policy that
changed something else (a caveat on the text of a message whose tool call failed)
resolves nothing, whatever it says it handled.

Rewrites are copy on write: the node's own objects are never mutated, and a rewrite
the output cannot take (a missing field, a message form that cannot be rebuilt, an
edit outside the text) raises :class:`CannotApply`, which leaves the findings
unresolved so the crossing halts.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage
from pydantic import BaseModel

from trustgate._output import MessageItem, NodeOutput, facets, with_text, without_tool_calls
from trustgate.policies._decision import (
    CutText,
    DropParts,
    DropToolCalls,
    EditText,
    PrependText,
    ReplaceText,
    ReplaceToolCall,
    Rewrite,
    SetPath,
)

__all__ = [
    "CannotApply",
    "SegmentIndex",
    "apply_rewrite",
    "get_path",
    "text_at",
    "text_part_ids",
]

logger = logging.getLogger(__name__)


class CannotApply(Exception):
    """A rewrite names something the output does not have (internal)."""


# --- finding what a target names --------------------------------------------------------


def split_target(target: str) -> tuple[str, list[str], int | None, str | None]:
    """``messages[-1].tool_calls`` → (``messages``, [], -1, ``tool_calls``);
    ``review.summary`` → (``review``, [``summary``], None, None)."""
    if "[" in target.split(".", 1)[0]:
        head, _, rest = target.partition("[")
        index, _, facet = rest.partition("]")
        try:
            k = int(index)
        except ValueError as exc:
            raise CannotApply(f"{target!r} is not a message reference") from exc
        return head, [], k, facet.lstrip(".") or None
    key, *path = target.split(".")
    return key, path, None, None


def _message_at(output: NodeOutput, key: str, k: int) -> tuple[int, MessageItem]:
    """The message ``key[k]``: ``k >= 0`` numbers every message under ``key`` across
    writes (as part ids do), a negative ``k`` counts the node's new AI messages."""
    items = output.messages(key)
    if k < 0:
        new_ai = [
            (n, i)
            for n, i in enumerate(items)
            if i.new and isinstance(output.message(i), AIMessage)
        ]
        if not new_ai:
            raise CannotApply(f"no AI message under {key!r}")
        return new_ai[k] if -k <= len(new_ai) else new_ai[0]
    if k >= len(items):
        raise CannotApply(f"{key}[{k}] does not exist")
    return k, items[k]


def _writes_of(output: NodeOutput, key: str) -> list[int]:
    """The writes a key path addresses: ``notes@1`` one write, ``notes`` every write."""
    base, at, ordinal = key.partition("@")
    found = [i for i, w in enumerate(output.writes) if w.key == base and not output.dropped(i)]
    if not found:
        raise CannotApply(f"the output has no {base!r}")
    if at:
        try:
            return [found[int(ordinal)]]
        except (ValueError, IndexError) as exc:
            raise CannotApply(f"the output has no write {key!r}") from exc
    return found


def _write_ids(output: NodeOutput, indexes: Sequence[int]) -> set[str]:
    """The part ids the given writes carry (the write itself, or its messages' parts)."""
    chosen = set(indexes)
    ids = {p.id for p in output.ledger() if p.write in chosen}
    ids.update(output.write_part_id(i) for i in chosen)
    return ids


def _message_ids(output: NodeOutput, key: str, k: int) -> set[str]:
    return {p.id for p in output.ledger() if p.key == key and p.message == k}


def _child(container: Any, name: str) -> Any:
    if isinstance(container, BaseModel):
        if name not in type(container).model_fields:
            raise CannotApply(f"{type(container).__name__} has no field {name!r}")
        return getattr(container, name)
    if isinstance(container, Mapping):
        if name not in container:
            raise CannotApply(f"no field {name!r}")
        return container[name]
    if isinstance(container, (list, tuple)):
        try:
            return container[int(name)]
        except (ValueError, IndexError) as exc:
            raise CannotApply(f"no item {name!r}") from exc
    if dataclasses.is_dataclass(container) and not isinstance(container, type):
        if name not in {f.name for f in dataclasses.fields(container)}:
            raise CannotApply(f"no field {name!r}")
        return getattr(container, name)
    raise CannotApply(f"cannot look inside a {type(container).__name__} for {name!r}")


def _with_child(container: Any, name: str, value: Any) -> Any:
    _child(container, name)  # must exist
    if isinstance(container, BaseModel):
        return container.model_copy(update={name: value})
    if isinstance(container, Mapping):
        return {**container, name: value}
    if isinstance(container, (list, tuple)):
        items = list(container)
        items[int(name)] = value
        return type(container)(items) if isinstance(container, tuple) else items
    return dataclasses.replace(container, **{name: value})


def _put(container: Any, path: Sequence[str], value: Any, *, create_leaf: bool = False) -> Any:
    name = path[0]
    if len(path) == 1:
        if create_leaf and isinstance(container, Mapping) and name not in container:
            return {**container, name: value}
        return _with_child(container, name, value)
    return _with_child(container, name, _put(_child(container, name), path[1:], value))


def get_path(output: NodeOutput, path: str) -> Any:
    """The current value at ``path`` (``None`` when the output has no such thing); a key
    written several times reads as the last write."""
    try:
        key, parts, k, _facet = split_target(path)
        if k is not None:
            return output.message(_message_at(output, key, k)[1])
        value = output.value_of(_writes_of(output, key)[-1])
        for name in parts:
            value = _child(value, name)
        return value
    except CannotApply:
        return None


def exists(output: NodeOutput, path: str) -> bool:
    try:
        key, parts, k, _f = split_target(path)
        if k is not None:
            _message_at(output, key, k)
            return True
        value = output.value_of(_writes_of(output, key)[-1])
        for name in parts:
            value = _child(value, name)
        return True
    except CannotApply:
        return False


def text_at(output: NodeOutput, target: str) -> str | None:
    """The text at ``target``: a message's text, or a text field (several writes of a
    text key read joined by newlines, as readers see them)."""
    try:
        key, parts, k, _facet = split_target(target)
        if k is not None:
            msg = output.message(_message_at(output, key, k)[1])
            return None if msg is None else facets(msg).text
        values = []
        for i in _writes_of(output, key):
            value = output.value_of(i)
            for name in parts:
                value = _child(value, name)
            values.append(value)
    except CannotApply:
        return None
    if not values or not all(isinstance(v, str) for v in values):
        return None
    return "\n".join(values)


# --- the rewrites ------------------------------------------------------------------------


def _set_message_text(output: NodeOutput, key: str, k: int, text: str) -> set[str]:
    n, item = _message_at(output, key, k)
    msg = output.message(item)
    if msg is None:
        raise CannotApply(f"{key}[{k}] is a message in a form that cannot be rebuilt")
    output.set_message(item, with_text(msg, text))
    return {f"{key}[{n}].text"}


def _set_field(output: NodeOutput, target: str, value: Any, *, one_write: bool) -> set[str]:
    """Set the value at ``target`` in every write it addresses. With ``one_write`` a key
    written several times is left with one write holding ``value``: the rest go."""
    key, parts, k, _facet = split_target(target)
    if k is not None:
        raise CannotApply(f"{target!r} names a message, not a field")
    writes = _writes_of(output, key)
    ids = _write_ids(output, writes)
    if not parts:
        if one_write:
            output.set_value(writes[0], value)
            for extra in writes[1:]:
                _drop_write(output, extra)
        else:
            for i in writes:
                output.set_value(i, value)
        return ids
    for i in writes:
        output.set_value(i, _put(output.value_of(i), parts, value))
    return ids


def _drop_write(output: NodeOutput, index: int) -> None:
    try:
        output.drop_write(index)
    except ValueError as exc:
        raise CannotApply(str(exc)) from exc


def _text_writes(output: NodeOutput, target: str) -> tuple[list[int], list[str], list[str]]:
    key, parts, k, _facet = split_target(target)
    if k is not None:
        raise CannotApply(f"{target!r} names a message")
    writes = _writes_of(output, key)
    texts = []
    for i in writes:
        value = output.value_of(i)
        for name in parts:
            value = _child(value, name)
        if not isinstance(value, str):
            raise CannotApply(f"{target!r} does not hold text")
        texts.append(value)
    return writes, parts, texts


def _set_write_text(output: NodeOutput, index: int, parts: list[str], text: str) -> None:
    if parts:
        output.set_value(index, _put(output.value_of(index), parts, text))
    else:
        output.set_value(index, text)


def _edit(text: str, edits: Sequence[tuple[int, int, str]]) -> str:
    out: list[str] = []
    pos = 0
    for s, e, rep in sorted(edits, key=lambda x: (x[0], x[1])):
        if s < pos or e < s or e > len(text):
            raise CannotApply("text edits overlap or fall outside the text")
        out.append(text[pos:s])
        out.append(rep)
        pos = e
    out.append(text[pos:])
    return "".join(out)


def _cut(text: str, fragment: str) -> str:
    out = text.replace(fragment, "")
    out = re.sub(r"[ \t]{2,}", " ", out)
    return re.sub(r" +([.,;:])", r"\1", out)


def _edit_text(output: NodeOutput, rw: EditText) -> set[str]:
    edits = [(e.start, e.end, e.text) for e in rw.edits]
    key, _parts, k, _facet = split_target(rw.target)
    current = text_at(output, rw.target)
    if current is None:
        raise CannotApply(f"no text at {rw.target!r}")
    if rw.expect is not None and current != rw.expect:
        raise CannotApply(f"the text at {rw.target!r} is not the text the gate read")
    if k is not None:
        return _set_message_text(output, key, k, _edit(current, edits))
    writes, parts, texts = _text_writes(output, rw.target)
    if len(writes) == 1:
        _set_write_text(output, writes[0], parts, _edit(texts[0], edits))
        return _write_ids(output, writes)
    # several writes read as one text, joined by newlines: each edit lands in the write
    # it falls in; one that spans writes takes its text to the first and cuts the rest
    # (found by bisection: a text written in many writes takes many edits, and a scan of
    # every write per edit made the rewrite quadratic)
    starts, ends, pos = [], [], 0
    for t in texts:
        starts.append(pos)
        ends.append(pos + len(t))
        pos += len(t) + 1
    per: dict[int, list[tuple[int, int, str]]] = {}
    for s, e, rep in edits:
        if not 0 <= s <= e <= len(current):
            raise CannotApply("a text edit falls outside the text")
        first = bisect_left(ends, s)  # the first write that ends at or after s
        last = max(first, bisect_left(starts, e) - 1)  # the last that starts before e
        for n in range(first, last + 1):
            st, t = starts[n], texts[n]
            a = min(max(s, st) - st, len(t))
            b = max(a, min(e, st + len(t)) - st)
            per.setdefault(n, []).append((a, b, rep if n == first else ""))
    for n, local in per.items():
        _set_write_text(output, writes[n], parts, _edit(texts[n], local))
    return _write_ids(output, [writes[n] for n in per])


def _drop_calls(output: NodeOutput, target: str, ids: frozenset[str | None]) -> set[str]:
    key, _parts, k, _facet = split_target(target)
    if k is None:
        raise CannotApply(f"{target!r} is not a message")
    n, item = _message_at(output, key, k)
    msg = output.message(item)
    if msg is None:
        raise CannotApply(f"{target!r} is a message that cannot be rebuilt")
    calls = facets(msg).tool_calls
    gone = {
        f"{key}[{n}].tool_calls[{j}]"
        for j, c in enumerate(calls)
        if (c.get("id") if c.get("id") is None else str(c.get("id"))) in ids
    }
    output.set_message(item, without_tool_calls(msg, set(ids)))
    return gone


_WHOLE_MESSAGE = re.compile(r"^([^.\[]+)\[(-?\d+)\]$")


def _drop_parts(output: NodeOutput, parts: Sequence[str]) -> set[str]:
    """Remove whole parts: a write, a message (``messages[2]``), a tool call."""
    touched: set[str] = set()
    ledger = {p.id: p for p in output.ledger()}
    calls: dict[tuple[str, int], set[str | None]] = {}
    for pid in parts:
        whole = _WHOLE_MESSAGE.match(pid)
        if whole is not None:
            key = whole.group(1)
            n, item = _message_at(output, key, int(whole.group(2)))
            touched |= _message_ids(output, key, n)
            output.drop_message(item)
            continue
        part = ledger.get(pid)
        if part is None:
            raise CannotApply(f"the output has no part {pid!r}")
        if part.kind == "tool_call" and part.key is not None and part.message is not None:
            msg = output.message(_message_at(output, part.key, part.message)[1])
            call = facets(msg).tool_calls[part.call or 0] if msg is not None else {}
            cid = call.get("id")
            calls.setdefault((part.key, part.message), set()).add(None if cid is None else str(cid))
        elif part.kind == "write" and part.write is not None:
            _drop_write(output, part.write)
            touched.add(pid)
        else:
            raise CannotApply(f"a {part.kind} part ({pid}) cannot be removed on its own")
    for (key, k), ids in calls.items():
        touched |= _drop_calls(output, f"{key}[{k}]", frozenset(ids))
    return touched


def _replace_call(output: NodeOutput, rw: ReplaceToolCall) -> set[str]:
    ledger = {p.id: p for p in output.ledger()}
    part = ledger.get(rw.part)
    if part is None or part.kind != "tool_call" or part.key is None or part.message is None:
        raise CannotApply(f"{rw.part!r} is not a tool call of this output")
    _n, item = _message_at(output, part.key, part.message)
    msg = output.message(item)
    if not isinstance(msg, AIMessage):
        raise CannotApply(f"{rw.part!r} is not a call of an AI message")
    call = facets(msg).tool_calls[part.call or 0]
    cid = call.get("id")
    fresh = {
        "name": rw.name or call.get("name"),
        "args": dict(rw.args),
        "id": cid,
        "type": "tool_call",
    }
    # the edited call replaces the old one everywhere it was (content blocks, raw
    # kwargs): only the parsed call remains, where it stood
    at = next((n for n, c in enumerate(msg.tool_calls) if c.get("id") == cid), None)
    rest = without_tool_calls(msg, {None if cid is None else str(cid)})
    if not isinstance(rest, AIMessage):  # pragma: no cover - the copy keeps its class
        raise CannotApply(f"{rw.part!r} cannot be rebuilt")
    calls = list(rest.tool_calls)
    calls.insert(len(calls) if at is None else at, fresh)  # type: ignore[arg-type]
    output.set_message(item, rest.model_copy(update={"tool_calls": calls}))
    return {rw.part}


def apply_rewrite(output: NodeOutput, rewrite: Rewrite) -> set[str]:
    """Apply one rewrite to ``output`` (copy on write); the ids of the parts it rewrote
    or removed. :class:`CannotApply` if it names something the output does not have."""
    if isinstance(rewrite, SetPath):
        if not exists(output, rewrite.path):
            raise CannotApply(f"the output has no field {rewrite.path!r}")
        touched = _set_field(output, rewrite.path, rewrite.value, one_write=True)
        if rewrite.note_path and rewrite.note:
            _append_note(output, rewrite.note_path, rewrite.note)
        return touched
    if isinstance(rewrite, ReplaceText):
        if text_at(output, rewrite.target) is None:
            raise CannotApply(f"no text at {rewrite.target!r}")
        key, _parts, k, _facet = split_target(rewrite.target)
        if k is not None:
            return _set_message_text(output, key, k, rewrite.text)
        return _set_field(output, rewrite.target, rewrite.text, one_write=True)
    if isinstance(rewrite, PrependText):
        current = text_at(output, rewrite.target)
        if current is None:
            raise CannotApply(f"no text at {rewrite.target!r}")
        key, _parts, k, _facet = split_target(rewrite.target)
        if k is not None:
            return _set_message_text(output, key, k, rewrite.text + current)
        writes, parts, texts = _text_writes(output, rewrite.target)
        # the text leads the text those writes form: it heads the first of them
        _set_write_text(output, writes[0], parts, rewrite.text + texts[0])
        return _write_ids(output, writes)
    if isinstance(rewrite, CutText):
        current = text_at(output, rewrite.target)
        if current is None:
            raise CannotApply(f"no text at {rewrite.target!r}")
        key, _parts, k, _facet = split_target(rewrite.target)
        if k is not None:
            for fragment in rewrite.fragments:
                current = _cut(current, fragment)
            return _set_message_text(output, key, k, current)
        writes, parts, texts = _text_writes(output, rewrite.target)
        for i, text in zip(writes, texts, strict=True):
            for fragment in rewrite.fragments:
                text = _cut(text, fragment)
            _set_write_text(output, i, parts, text)
        return _write_ids(output, writes)
    if isinstance(rewrite, EditText):
        return _edit_text(output, rewrite)
    if isinstance(rewrite, DropToolCalls):
        return _drop_calls(output, rewrite.target, rewrite.ids)
    if isinstance(rewrite, DropParts):
        return _drop_parts(output, rewrite.parts)
    if isinstance(rewrite, ReplaceToolCall):
        return _replace_call(output, rewrite)
    raise CannotApply(f"unknown rewrite {rewrite!r}")  # pragma: no cover - a closed union


def _append_note(output: NodeOutput, path: str, note: str) -> None:
    """Append ``note`` to the text at ``path`` in every write that has it; a note that
    cannot be written is logged (the override itself stands)."""
    key, parts, k, _facet = split_target(path)
    try:
        if k is not None or not parts:
            found = get_path(output, path)
            text = found if isinstance(found, str) else ""
            if (found is None or isinstance(found, str)) and note.strip() not in text:
                _set_field(output, path, text + note, one_write=False)
            return
        for i in _writes_of(output, key):
            value = output.value_of(i)
            try:
                current: Any = value
                for name in parts:
                    current = _child(current, name)
            except CannotApply:
                current = None
            text = current if isinstance(current, str) else ""
            if (current is None or isinstance(current, str)) and note.strip() not in text:
                output.set_value(i, _put(value, parts, text + note, create_leaf=True))
    except CannotApply as exc:
        logger.warning("override note not written: %s", exc)


class SegmentIndex:
    """Which parts a finding's text edits fall in, given the reader's segments (part id,
    start, end: offsets into the claim text).

    Built once per crossing: a draft written in many writes has as many segments, and
    its check proposes an edit per failed sentence, so scanning every segment for
    every edit would be quadratic. Segments a reader gives in order and apart (as the
    shipped readers do) are searched by bisection; any other layout is scanned.
    """

    def __init__(self, segments: Sequence[tuple[str, int, int]]) -> None:
        self.segments = tuple(segments)
        self.starts = [s for _p, s, _e in self.segments]
        self.ends = [e for _p, _s, e in self.segments]
        self.ordered = all(s <= e for s, e in zip(self.starts, self.ends, strict=True)) and all(
            e < s for e, s in zip(self.ends, self.starts[1:], strict=False)
        )

    def _hits(self, start: int, end: int) -> Sequence[tuple[str, int, int]]:
        if not self.ordered:
            return self.segments
        if end > start:  # overlapping: segments that end after start and start before end
            return self.segments[bisect_left(self.ends, start + 1) : bisect_left(self.starts, end)]
        # an insertion: segments that end at or after it and start at or before it
        return self.segments[bisect_left(self.ends, start) : bisect_left(self.starts, start + 1)]

    def parts_of(self, proposals: Sequence[Any]) -> tuple[str, ...]:
        """The parts the :class:`~trustgate.TextEdit` values among ``proposals`` hit."""
        from trustgate._findings import TextEdit

        found: dict[str, None] = {}
        for p in proposals:
            if not isinstance(p, TextEdit):
                continue
            for part, start, end in self._hits(p.start, p.end):
                # a segment is hit by an edit that overlaps it, or inserts inside or at it
                if p.start < end and p.end > start if p.end > p.start else start <= p.start <= end:
                    found.setdefault(part)
        return tuple(found)


def text_part_ids(output: NodeOutput, target: str) -> tuple[str, ...]:
    """The parts the text at ``target`` lives in (``()`` when it names no text)."""
    try:
        key, _parts, k, _facet = split_target(target)
        if k is not None:
            n, _item = _message_at(output, key, k)
            return (f"{key}[{n}].text",)
        writes = _writes_of(output, key)
    except CannotApply:
        return ()
    return tuple(output.write_part_id(i) for i in writes)
