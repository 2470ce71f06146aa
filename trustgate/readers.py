"""Where a gate finds the claims in what a guarded node emitted.

A reader sees only what the guarded node produced in this step, never the
accumulated state: a changes manifest left over from an earlier round must not be
verified again as if it were new (the stale-manifest bug). Besides the claims, a
reader says which parts of the output it read (``covers``): the gate holds every
part nobody read or declared as passthrough, so a reader that checked a message's
text does not vouch for its tool calls.

A reader also says what absence means. ``FromKey("manifest")`` with no manifest in
the step is a missing claim (``no_claims``: a failure unless ``require_claims=False``);
``ToolCallArgs()`` on an answer without tool calls has nothing to check, and the
report says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, overload, runtime_checkable

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel, ValidationError
from typing_extensions import TypedDict, TypeVar

from trustgate._output import MessageItem, NodeOutput, facets, merged
from trustgate.errors import ClaimParseError, ClaimTooLarge, ConfigurationError

__all__ = [
    "ClaimsReader",
    "FromKey",
    "FunctionReader",
    "LastAIText",
    "RouteClaim",
    "Routes",
    "StreamWrites",
    "ToolCall",
    "ToolCallArgs",
]

logger = logging.getLogger(__name__)

Absence = Literal["missing", "nothing"]

ClaimsT_co = TypeVar("ClaimsT_co", covariant=True, default=Any)
ModelT = TypeVar("ModelT", bound=BaseModel)
ValueT = TypeVar("ValueT", default=Any)


class ToolCall(TypedDict):
    """One tool call as :class:`ToolCallArgs` reads it, whatever form it came in."""

    name: str | None
    args: Any
    """The arguments: a mapping, or the raw text when it is not JSON."""
    id: str | None


class RouteClaim(TypedDict, total=False):
    """One way a node routes, as :class:`Routes` reads it: ``{"goto": node}`` or
    ``{"send": node, "arg": value}``."""

    goto: Any
    send: str
    arg: Any


@dataclass(frozen=True, slots=True)
class Read:
    """What a reader found: the claims, the parts it read, where their text lives.

    ``absent`` is ``None`` when claims were found, ``"missing"`` when the step lacks
    what the gate guards (a failure unless the gate has ``require_claims=False``) and
    ``"nothing"`` when the guarded thing is there and carries nothing to check.

    The claims carry their parts with them, so that a finding can name what it judged:
    ``subjects`` maps a claim's own name (a tool call's id) to its part ids;
    ``claim_parts`` gives, for claims that are a list, each claim's part ids in order;
    ``segments`` says which part each stretch of a text claim was read from
    (``(part id, start, end)`` in the claim text), so that an edit of the text lands in
    the write it came from. ``releases`` are values a reader coerced while reading
    (``FromKey(key, model=M)``): ``(write index, value)``, released in place of what the
    node wrote, since the coerced value is what was verified. ``passthrough`` are parts
    the reader's own declaration lets through unread (``ToolCallArgs(passthrough=...)``:
    calls to the tools it names); they count as declared by this reader's gate.
    """

    claims: Any
    covers: frozenset[str] = frozenset()
    target: str | None = None
    absent: Absence | None = None
    reason: str = ""
    subjects: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    claim_parts: tuple[tuple[str, ...], ...] = ()
    segments: tuple[tuple[str, int, int], ...] = ()
    releases: tuple[tuple[int, Any], ...] = ()
    passthrough: frozenset[str] = frozenset()


@runtime_checkable
class ClaimsReader(Protocol[ClaimsT_co]):
    """Reads claims from one node update (a mapping of state key to written value).

    Generic in what it reads: ``LastAIText`` is a ``ClaimsReader[str]``,
    ``FromKey("review", model=Review)`` a ``ClaimsReader[Review]``; ``None`` means no
    claims in this update. Built-in readers also implement ``read_output(output) ->
    Read`` to say which parts they covered; a reader with only ``read(update)`` covers
    the keys it looked at.
    """

    @property
    def target(self) -> str:
        """Where the claims live, for the report (``"verdict"``, ``"messages[-1]"``)."""
        ...

    def read(self, update: Mapping[str, Any]) -> ClaimsT_co | None: ...


def generalizations(part: str, role: str | None = None) -> set[str]:
    """Every name that covers ``part``: ``messages[2].tool_calls[0]`` of an ``ai``
    message is covered by itself, ``messages[2].tool_calls``, ``messages[2]``,
    ``messages``, ``messages.tool_calls``, ``messages.ai`` and ``messages.ai.tool_calls``;
    ``notes@1`` by ``notes``; ``store[0]`` by ``store``."""
    out = {part}
    head, sep, rest = part.partition("[")
    if not sep:  # a state key, a key's n-th write, an overwrite, goto, custom
        key, dot, facet = part.partition(".")
        base = key.partition("@")[0]
        out.add(base)
        if dot:
            out.add(f"{base}.{facet.partition('@')[0]}")
        return out
    index, _, facet = rest.partition("]")
    facet = facet.lstrip(".")
    out.add(head)
    out.add(f"{head}[{index}]")
    if facet:
        name = facet.partition("[")[0]
        out.add(f"{head}[{index}].{name}")
        out.add(f"{head}.{name}")
        if role:
            out.add(f"{head}.{role}")
            out.add(f"{head}.{role}.{name}")
    return out


def covered(part: str, covers: frozenset[str] | set[str], role: str | None = None) -> bool:
    """Whether ``part`` (``messages[2].text``) falls under a cover (``messages``,
    ``messages[2]``, ``messages.text``, ``messages[2].text``, ``messages.ai.text`` for an
    ``ai`` message, or ``*``)."""
    if "*" in covers or part in covers:
        return True
    return not covers.isdisjoint(generalizations(part, role))


def _last_ai(out: NodeOutput, key: str) -> tuple[int, MessageItem, BaseMessage] | None:
    for k, item in reversed(out.indexed_messages(key)):
        msg = out.message(item)
        if item.new and isinstance(msg, AIMessage):
            return k, item, msg
    return None


def _loads(text: str | bytes, what: str = "claim") -> Any:
    """JSON within trustgate's caps: too large or too deep is ``ClaimTooLarge``,
    not JSON is ``ClaimParseError`` (never a RecursionError)."""
    from trustgate import _limits

    return _limits.loads_json(text, what)


def _checked(value: Any, what: str) -> Any:
    from trustgate import _limits

    _limits.check_claim(value, what)
    return value


_SAME: Any = object()


def _as_written(model: BaseModel, raw: Any) -> Any:
    """The coerced claim in the form the node wrote it, or ``_SAME`` when that is
    what the node wrote already.

    A reader that validates ``{"merge": "false"}`` into ``merge=False`` verified
    ``False``; releasing the raw ``"false"`` would hand a router a value nobody checked.
    Fields the node did not set stay unset (defaults are not written in), and keys the
    model does not know are dropped: they were not verified either."""
    if isinstance(raw, type(model)):
        return _SAME
    try:
        dumped = model.model_dump(mode="python", by_alias=True, exclude_unset=True)
    except Exception as exc:  # a model that cannot dump itself: release what was verified
        logger.warning("cannot dump %s in the written form: %s", type(model).__name__, exc)
        return model
    if isinstance(raw, BaseModel):
        return model
    if isinstance(raw, (str, bytes)):
        try:
            if _loads(raw) == model.model_dump(mode="json", by_alias=True, exclude_unset=True):
                return _SAME
        except (ClaimParseError, ClaimTooLarge):
            pass
        return model.model_dump_json(by_alias=True, exclude_unset=True)
    if isinstance(raw, Mapping):
        try:
            same = dict(raw) == dumped
        except Exception as exc:  # an __eq__ that raises: not provably the same
            logger.warning("comparing a written %s raised %s", type(raw).__name__, exc)
            same = False
        return _SAME if same else dumped
    return model


class FromKey(Generic[ValueT]):
    """Claims held in one state key: a pydantic model, a dict, or a JSON string.

    With ``model``, dicts and JSON strings are validated into it, so a changes
    manifest from structured output and the same manifest as raw JSON text are read
    alike; text that does not parse is a malformed claim, not a crash.

    Example:
        ```python
        from trustgate.files import ChangesManifest

        TrustGate("manifest", reads=FromKey("manifest", model=ChangesManifest), verifiers=[...])
        ```
    """

    @overload
    def __init__(self: FromKey[Any], key: str, *, model: None = None) -> None: ...

    @overload
    def __init__(self: FromKey[ModelT], key: str, *, model: type[ModelT]) -> None: ...

    def __init__(self, key: str, *, model: type[BaseModel] | None = None) -> None:
        from trustgate import _validate

        self.key = _validate.text("FromKey", "key", key)
        if model is not None and not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise ConfigurationError(
                f"FromKey({key!r}): model must be a pydantic model class, not {model!r}"
            )
        self.model = model

    @property
    def target(self) -> str:
        return self.key

    def read_output(self, output: NodeOutput) -> Read:
        writes = [i for i, w in enumerate(output.writes) if w.key == self.key]
        if not writes:
            return Read(None, absent="missing", reason=f"no {self.key!r} in this step's output")
        values = output.values(self.key)
        claims = self._parse(merged(values))  # every write to the key, merged
        if claims is None:
            return Read(None, absent="missing", reason=f"{self.key!r} is empty")
        segments: tuple[tuple[str, int, int], ...] = ()
        if isinstance(claims, str) and all(isinstance(v, str) for v in values):
            # the claim text is the writes joined by newlines (see ``merged``)
            spans, pos = [], 0
            for i, v in zip(writes, values, strict=True):
                spans.append((output.write_part_id(i), pos, pos + len(v)))
                pos += len(v) + 1
            segments = tuple(spans)
        releases: tuple[tuple[int, Any], ...] = ()
        if self.model is not None and len(writes) == 1 and isinstance(claims, BaseModel):
            released = _as_written(claims, values[0])
            if released is not _SAME:
                releases = ((writes[0], released),)
        return Read(claims, frozenset({self.key}), self.key, segments=segments, releases=releases)

    def read(self, update: Mapping[str, Any]) -> ValueT | None:
        if self.key not in update:
            return None
        parsed: ValueT | None = self._parse(update[self.key])
        return parsed

    def _parse(self, value: Any) -> Any:
        if value is None:
            return None
        what = repr(self.key)
        if self.model is None:
            if isinstance(value, str):
                stripped = value.lstrip()
                if stripped[:1] in ("{", "["):
                    try:
                        return _loads(value, what)
                    except ClaimTooLarge:
                        raise
                    except ClaimParseError:
                        return value  # text that only looks like JSON is text
                return value or None
            if isinstance(value, (list, tuple, dict)) and not value:
                return None
            return _checked(value, what)
        if isinstance(value, self.model):
            return value
        try:
            if isinstance(value, (str, bytes)):
                return self.model.model_validate(_loads(value, what))
            if isinstance(value, BaseModel):
                return self.model.model_validate(_checked(value.model_dump(), what))
            return self.model.model_validate(_checked(value, what))
        except ValidationError as exc:
            raise ClaimParseError(
                f"{self.key!r} does not hold a valid {self.model.__name__}: "
                f"{exc.error_count()} error(s): {exc.errors()[0]['msg']}"
            ) from exc
        except RecursionError as exc:
            raise ClaimParseError(f"{self.key!r} is nested too deeply to read") from exc


class LastAIText:
    """The text of the last AI message this step wrote (string or content blocks).

    An AI message that carries only tool calls has no text to check: the crossing
    records that, it does not fail. No AI message at all is a missing claim.

    Example:
        ```python
        TrustGate("draft", reads=LastAIText(), verifiers=[...], policy=Redact())
        ```
    """

    def __init__(self, key: str = "messages") -> None:
        from trustgate import _validate

        self.key = _validate.text("LastAIText", "key", key)

    @property
    def target(self) -> str:
        return f"{self.key}[-1]"

    def read_output(self, output: NodeOutput) -> Read:
        found = _last_ai(output, self.key)
        if found is None:
            return Read(None, absent="missing", reason=f"no AI message in {self.key!r} this step")
        k, _item, msg = found
        parts = facets(msg)
        part = f"{self.key}[{k}].text"
        if not parts.text.strip():
            if parts.tool_calls:
                return Read(
                    None,
                    frozenset({part}),
                    f"{self.key}[{k}]",
                    "nothing",
                    "the AI message carries tool calls and no text",
                )
            return Read(None, absent="missing", reason="the last AI message is empty")
        return Read(
            parts.text,
            frozenset({part}),
            f"{self.key}[{k}]",
            segments=((part, 0, len(parts.text)),),
        )

    def read(self, update: Mapping[str, Any]) -> str | None:
        claims = self.read_output(NodeOutput.read(dict(update))).claims
        return claims if isinstance(claims, str) else None


class ToolCallArgs:
    """The tool calls of the last AI message (``[{"name", "args", "id"}]``), in every
    place a provider puts them (``tool_calls``, ``tool_use`` content blocks, raw
    ``additional_kwargs``).

    ``tools`` restricts the read to the named tools. A call to any other tool is not
    verified by this gate and, by default, held: it halts the step. ``passthrough``
    names the tools whose calls go through unverified (an agent's read-only tools,
    say), so a multi-tool agent needs one declaration, not one per message part. Names
    match exactly; a call to a tool neither read nor declared is still held, and the
    error names the fix. Claims read here are what a tool would act on, so the gate
    stands before the tools run. An answer without tool calls has nothing to check.

    Example:
        ```python
        TrustGate("calls", reads=ToolCallArgs(tools=["close_item"]), verifiers=[...])
        # a multi-tool agent: close_item is verified, search and read_file pass
        ToolCallArgs(tools=["close_item"], passthrough=["search", "read_file"])
        ```
    """

    def __init__(
        self,
        tools: Sequence[str] | None = None,
        *,
        passthrough: Sequence[str] = (),
        key: str = "messages",
    ) -> None:
        from trustgate import _validate
        from trustgate.errors import ConfigurationError

        # one name given as a string would be read as a set of letters
        self.tools = (
            frozenset(_validate.strings("ToolCallArgs", "tools", tools, allow_one=False))
            if tools is not None
            else None
        )
        self.passthrough = frozenset(
            _validate.strings("ToolCallArgs", "passthrough", passthrough, allow_one=False)
        )
        if self.passthrough and self.tools is None:
            raise ConfigurationError(
                "ToolCallArgs: passthrough names tools whose calls go unverified, but "
                "without tools=[...] this reader verifies every call: name the tools it "
                "verifies, e.g. ToolCallArgs(tools=['close_item'], passthrough=[...])"
            )
        both = sorted(self.passthrough & (self.tools or frozenset()))
        if both:
            raise ConfigurationError(
                f"ToolCallArgs: {both} is both verified (tools) and passed through "
                "(passthrough): a tool's calls are one or the other"
            )
        self.key = _validate.text("ToolCallArgs", "key", key)

    @property
    def target(self) -> str:
        return f"{self.key}[-1].tool_calls"

    def read_output(self, output: NodeOutput) -> Read:
        found = _last_ai(output, self.key)
        if found is None:
            return Read(None, absent="missing", reason=f"no AI message in {self.key!r} this step")
        k, _item, msg = found
        target = f"{self.key}[{k}].tool_calls"
        calls = [_normal_call(c) for c in facets(msg).tool_calls]
        picked = [
            (j, c) for j, c in enumerate(calls) if self.tools is None or _named(c, self.tools)
        ]
        # each call is a part of its own: calls to tools this gate does not read stay
        # held unless declared, whatever this gate verified
        part_ids = [f"{target}[{j}]" for j, _c in picked]
        covers = frozenset(part_ids)
        passing = frozenset(
            f"{target}[{j}]" for j, c in enumerate(calls) if _named(c, self.passthrough)
        )
        if not picked:
            return Read(
                None, covers, target, "nothing", "no tool calls to check", passthrough=passing
            )
        subjects: dict[str, tuple[str, ...]] = {}
        for pid, (_j, c) in zip(part_ids, picked, strict=True):
            if c["id"] is not None:
                subjects[str(c["id"])] = (*subjects.get(str(c["id"]), ()), pid)
        return Read(
            [c for _j, c in picked],
            covers,
            target,
            subjects=subjects,
            claim_parts=tuple((pid,) for pid in part_ids),
            passthrough=passing,
        )

    def read(self, update: Mapping[str, Any]) -> list[ToolCall] | None:
        claims: list[ToolCall] | None = self.read_output(NodeOutput.read(dict(update))).claims
        return claims


def _named(call: Mapping[str, Any], names: frozenset[str]) -> bool:
    """Whether a call names one of ``names`` exactly (a name that is not a string, or
    one that differs by a space or a letter's case, is another tool's)."""
    name = call.get("name")
    return type(name) is str and name in names


def _normal_call(call: Mapping[str, Any]) -> ToolCall:
    args = call.get("args")
    if isinstance(args, (str, bytes)):
        # text that is not JSON stays text: a verifier sees exactly what the tool would get
        try:
            args = _loads(args, "tool call arguments") if args else {}
        except ClaimTooLarge:
            raise
        except ClaimParseError:
            pass
    elif isinstance(args, Mapping):
        args = dict(_checked(args, "tool call arguments"))
    return {"name": call.get("name"), "args": args, "id": call.get("id")}


class Routes:
    """Where the node sends the run: ``Command(goto=...)`` targets and ``Send``
    arguments, as ``[{"goto": node}]`` / ``[{"send": node, "arg": ...}]``.

    Example:
        ```python
        TrustGate("handoff", reads=Routes(), verifiers=[allowed_targets])
        ```
    """

    @property
    def target(self) -> str:
        return "goto"

    def read_output(self, output: NodeOutput) -> Read:
        from langgraph.types import Send

        claims: list[dict[str, Any]] = []
        covers = {"goto"}
        where: list[tuple[str, ...]] = []
        sends = 0
        for t in output.routes:
            if isinstance(t, Send):
                claims.append({"send": t.node, "arg": t.arg})
                covers.add(f"send[{sends}]")
                where.append((f"send[{sends}]",))
                sends += 1
            else:
                claims.append({"goto": t})
                where.append(("goto",))
        if not claims:
            return Read(None, frozenset(covers), "goto", "nothing", "the node does not route")
        return Read(claims, frozenset(covers), "goto", claim_parts=tuple(where))

    def read(self, update: Mapping[str, Any]) -> list[RouteClaim] | None:
        return None


class StreamWrites:
    """What the node wrote to LangGraph's stream writer (``get_stream_writer()``).

    Example:
        ```python
        TrustGate("progress", reads=StreamWrites(), verifiers=[no_secrets])
        ```
    """

    @property
    def target(self) -> str:
        return "custom"

    def read_output(self, output: NodeOutput) -> Read:
        if not output.custom:
            return Read(None, frozenset({"custom"}), "custom", "nothing", "no stream writes")
        return Read(list(output.custom), frozenset({"custom"}), "custom")

    def read(self, update: Mapping[str, Any]) -> list[Any] | None:
        return None


class _Tracking(Mapping[str, Any]):
    """The update, remembering which keys a reader looked at."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = data
        self.seen: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.seen.add(key)
        return self._data[key]

    # asking whether a key is there, or listing the keys, is not reading a value: only
    # ``[]`` (and what goes through it: ``get``, ``items``, ``values``) covers a key
    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


@dataclass
class FunctionReader:
    """Any function ``update -> claims | None`` as a reader.

    It covers exactly the keys whose values the function read (indexing, ``get``,
    ``items``, ``values``; not ``in`` or listing the keys), unless ``covers`` names them.
    """

    fn: Callable[[Mapping[str, Any]], Any]
    _target: str = "update"
    covers: Sequence[str] | None = None
    _last: set[str] = field(default_factory=set, repr=False)

    def __init__(
        self,
        fn: Callable[[Mapping[str, Any]], Any],
        *,
        target: str = "update",
        covers: Sequence[str] | None = None,
    ) -> None:
        self.fn = fn
        self._target = target
        self.covers = covers

    @property
    def target(self) -> str:
        return self._target

    def read_output(self, output: NodeOutput) -> Read:
        view = _Tracking(output.update)
        claims = self.fn(view)
        seen = frozenset(self.covers) if self.covers is not None else frozenset(view.seen)
        if claims is None or (isinstance(claims, (list, tuple, dict, str)) and not claims):
            return Read(None, seen, self._target, "missing", f"{self._target} read nothing")
        return Read(claims, seen, self._target)

    def read(self, update: Mapping[str, Any]) -> Any:
        return self.fn(update)


class _Protocolled:
    """A user reader with only ``read(update)``: it covers the keys it looked at."""

    def __init__(self, reader: ClaimsReader) -> None:
        self.reader = reader

    @property
    def target(self) -> str:
        return self.reader.target

    def read_output(self, output: NodeOutput) -> Read:
        view = _Tracking(output.update)
        claims = self.reader.read(view)
        if claims is None or (isinstance(claims, (list, tuple, dict, str)) and not claims):
            return Read(
                None, frozenset(view.seen), self.target, "missing", f"no claims at {self.target}"
            )
        return Read(claims, frozenset(view.seen), self.target)

    def read(self, update: Mapping[str, Any]) -> Any:
        return self.reader.read(update)


class NoClaims:
    """A gate that reads nothing (its outputs pass only through ``passthrough``)."""

    target = "nothing"

    def read_output(self, output: NodeOutput) -> Read:
        return Read(None, frozenset(), None, "nothing", "this gate reads no claims")

    def read(self, update: Mapping[str, Any]) -> Any:
        return None


def as_reader(spec: Any) -> Any:
    """Coerce a reader spec: a reader, a state key (``FromKey``), a function, or None."""
    if spec is None:
        return NoClaims()
    if isinstance(spec, str):
        return FromKey(spec)
    if hasattr(spec, "read_output"):
        return spec
    if isinstance(spec, ClaimsReader):
        return _Protocolled(spec)
    if callable(spec) and not isinstance(spec, type):
        return FunctionReader(spec)
    raise ConfigurationError(
        f"cannot read claims with {spec!r}: reads= takes a reader (FromKey, LastAIText, "
        "ToolCallArgs, Routes, StreamWrites), a state key or a function of the update"
    )
