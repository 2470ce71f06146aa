"""One crossing: read → verify → decide → apply → record.

:class:`TrustGate` holds what a crossing needs (how to read claims, which verifiers,
which evidence, which policies, what may pass unverified). :func:`run_chain` runs the
gates of one guarded node over what the node emitted; ``guard()`` calls it inside the
node's own task, :meth:`TrustGate.check` calls it on a plain update. The crossing is
written once, as a generator that yields the verifier runs it needs; a sync and an
async driver run those, so there is one path for both. Whatever calls it, the rules
hold:

* claims come from this step's output only; a missing claim is a failure
  (``no_claims``) unless ``require_claims=False``;
* every part of the output is read by a gate, declared ``passthrough``, or held: an
  unaccounted part halts the crossing (``unverified_output``), and so does a node
  rewriting the state its gate takes evidence from (``evidence_rewritten``);
* a verifier that raises or outlives its time limit halts the crossing, with the
  error in the report (a model verifier with ``retries=1`` gets exactly one retry);
* a policy that cannot apply leaves its findings unresolved; failures no policy
  resolved halt: nothing uninspected is released.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import secrets
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel
from typing_extensions import TypeVar

from trustgate import _executor, otel
from trustgate._findings import Finding
from trustgate._output import NodeOutput, facets, with_text, without_tool_calls
from trustgate._report import Approval, Decision, OverrideRecord, Report
from trustgate.errors import ClaimParseError, ConfigurationError, GateHalted
from trustgate.errors import _declaration as declaration
from trustgate.policies import policy_chain
from trustgate.policies._decision import (
    Ask,
    CutText,
    DropToolCalls,
    PrependText,
    Release,
    ReplaceText,
    Rerender,
    Rewrite,
    SetPath,
    Stop,
    reasons,
)
from trustgate.readers import ClaimsReader, Read, as_reader, covered
from trustgate.verifiers.base import Evidence, EvidenceSources, Verifier

__all__ = [
    "DEFAULT_TIMEOUT",
    "GateResult",
    "TrustGate",
    "VerifierFailure",
    "adrive",
    "arun_verifier",
    "drive",
    "run_chain",
    "run_verifier",
]

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 30.0
"""Seconds a verifier may run when neither it nor its gate says otherwise."""

ClaimsT = TypeVar("ClaimsT", default=Any)  # bare TrustGate means TrustGate[Any]


# --- the verifier runs a crossing asks for -----------------------------------------


class VerifierFailure(Exception):
    """A verifier raised or timed out (becomes a halt with the error)."""

    def __init__(self, verifier: str, code: str, error: str) -> None:
        super().__init__(f"{verifier}: {error}")
        self.verifier = verifier
        self.code = code
        self.error = error


@dataclass(frozen=True, slots=True)
class _Verify:
    verifier: Any
    claims: Any
    evidence: Evidence
    timeout: float


def _quiet(fn: Callable[[], Any]) -> Callable[[], Any]:
    """Run ``fn`` outside the node's LangChain run: a verifier's own model call must
    not stream into the graph's token stream or callbacks."""
    from langchain_core.runnables.config import var_child_runnable_config

    def run() -> Any:
        var_child_runnable_config.set(None)
        return fn()

    return run


def _as_findings(name: str, result: Any) -> list[Finding]:
    if isinstance(result, Finding):
        return [result]
    if not isinstance(result, (list, tuple)) or not all(isinstance(f, Finding) for f in result):
        raise TypeError(f"returned {type(result).__name__}, expected list[Finding]")
    return list(result)


def _attempts(v: Any) -> int:
    return 1 + max(0, int(getattr(v, "retries", 0) or 0))


def _run_sync(req: _Verify) -> list[Finding]:
    from langgraph.errors import GraphBubbleUp

    v = req.verifier
    last: BaseException | None = None
    code = "verifier_error"
    for _ in range(_attempts(v)):
        try:
            call = _quiet(lambda: v.verify(req.claims, req.evidence))
            if getattr(v, "bounded", False):
                result = contextvars.copy_context().run(call)
            else:
                result = _executor.run_sync(call, req.timeout)
            return _as_findings(v.name, result)
        except GraphBubbleUp:
            raise
        except (_executor.VerifierTimeout, TimeoutError) as exc:
            last, code = exc, "verifier_timeout"
        except Exception as exc:
            last, code = exc, "verifier_error"
    raise VerifierFailure(v.name, code, f"{type(last).__name__}: {last}")


async def _run_async(req: _Verify) -> list[Finding]:
    from langgraph.errors import GraphBubbleUp

    v = req.verifier
    # a native coroutine runs on the loop; a sync check runs on trustgate's own threads,
    # never on the loop's default executor (where a stuck one would starve LangGraph's
    # own sync nodes)
    averify = getattr(v, "averify", None) if getattr(v, "is_async", True) else None
    last: BaseException | None = None
    code = "verifier_error"
    for _ in range(_attempts(v)):
        try:
            if averify is not None:
                ctx = contextvars.copy_context()
                coro = ctx.run(_quiet(lambda: averify(req.claims, req.evidence)))
                result = await asyncio.wait_for(coro, req.timeout)
            else:
                call = _quiet(lambda: v.verify(req.claims, req.evidence))
                result = await _executor.run_async(call, req.timeout)
            return _as_findings(v.name, result)
        except GraphBubbleUp:
            raise
        except (_executor.VerifierTimeout, TimeoutError) as exc:
            last, code = exc, "verifier_timeout"
        except Exception as exc:
            last, code = exc, "verifier_error"
    raise VerifierFailure(v.name, code, f"{type(last).__name__}: {last}")


run_verifier = _run_sync
arun_verifier = _run_async

T = TypeVar("T")
Steps = Generator[_Verify, Any, T]


def drive(gen: Steps[T], run: Callable[[Any], list[Finding]] | None = None) -> T:
    """Run a crossing synchronously (``run`` runs one verifier request)."""
    runner = run or _run_sync
    try:
        req = next(gen)
        while True:
            try:
                found: Any = runner(req)
            except VerifierFailure as exc:
                req = gen.throw(exc)
            else:
                req = gen.send(found)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


async def adrive(gen: Steps[T], run: Callable[[Any], Any] | None = None) -> T:
    """Run a crossing asynchronously (verifiers with ``averify`` run natively)."""
    runner = run or _run_async
    try:
        req = next(gen)
        while True:
            try:
                found: Any = await runner(req)
            except VerifierFailure as exc:
                req = gen.throw(exc)
            else:
                req = gen.send(found)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


# --- where the output is rewritten ---------------------------------------------------


class CannotApply(Exception):
    """A decision names something the output does not have (internal)."""


_MSG_REF = "["


def _split_target(target: str) -> tuple[str, list[str], int | None, str | None]:
    """``messages[-1].tool_calls`` → (``messages``, [], -1, ``tool_calls``);
    ``review.summary`` → (``review``, [``summary``], None, None)."""
    if _MSG_REF in target.split(".", 1)[0]:
        head, _, rest = target.partition("[")
        index, _, facet = rest.partition("]")
        try:
            k = int(index)
        except ValueError as exc:
            raise CannotApply(f"{target!r} is not a message reference") from exc
        return head, [], k, facet.lstrip(".") or None
    key, *path = target.split(".")
    return key, path, None, None


def _message_item(output: NodeOutput, key: str, k: int) -> Any:
    items = output.messages(key)
    if k < 0:
        new_ai = [i for i in items if i.new and isinstance(output.message(i), AIMessage)]
        if not new_ai:
            raise CannotApply(f"no AI message under {key!r}")
        return new_ai[k] if -k <= len(new_ai) else new_ai[0]
    if k >= len(items):
        raise CannotApply(f"{key}[{k}] does not exist")
    return items[k]


def _last_write(output: NodeOutput, key: str) -> int:
    for i in range(len(output.writes) - 1, -1, -1):
        if output.writes[i].key == key:
            return i
    raise CannotApply(f"the output has no {key!r}")


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
    import dataclasses

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
    import dataclasses

    return dataclasses.replace(container, **{name: value})


def get_path(output: NodeOutput, path: str) -> Any:
    try:
        key, parts, k, _facet = _split_target(path)
        if k is not None:
            item = _message_item(output, key, k)
            return output.message(item)
        value = output.value_of(_last_write(output, key))
        for name in parts:
            value = _child(value, name)
        return value
    except CannotApply:
        return None


def _set_path(output: NodeOutput, path: str, value: Any, *, create_leaf: bool = False) -> None:
    key, parts, k, _facet = _split_target(path)
    if k is not None:
        raise CannotApply(f"{path!r} names a message, not a field")
    index = _last_write(output, key)
    if not parts:
        output.set_value(index, value)
        return

    def put(container: Any, rest: list[str]) -> Any:
        name = rest[0]
        if len(rest) == 1:
            if create_leaf and isinstance(container, Mapping) and name not in container:
                return {**container, name: value}
            return _with_child(container, name, value)
        return _with_child(container, name, put(_child(container, name), rest[1:]))

    output.set_value(index, put(output.value_of(index), parts))


def text_at(output: NodeOutput, target: str) -> str | None:
    try:
        key, _parts, k, _facet = _split_target(target)
        if k is not None:
            msg = output.message(_message_item(output, key, k))
            return None if msg is None else facets(msg).text
    except CannotApply:
        return None
    value = get_path(output, target)
    return value if isinstance(value, str) else None


def _set_text(output: NodeOutput, target: str, text: str) -> None:
    key, _parts, k, _facet = _split_target(target)
    if k is not None:
        item = _message_item(output, key, k)
        msg = output.message(item)
        if msg is None:
            raise CannotApply(f"{target!r} is a message in a form that cannot be rebuilt")
        output.set_message(item, with_text(msg, text))
        return
    if not isinstance(get_path(output, target), str):
        raise CannotApply(f"{target!r} does not hold text")
    _set_path(output, target, text)


def apply_rewrite(output: NodeOutput, rewrite: Rewrite) -> None:
    """Apply one rewrite to ``output`` (copy on write); :class:`CannotApply` if it
    names something the output does not have."""
    if isinstance(rewrite, SetPath):
        if get_path(output, rewrite.path) is None and not _exists(output, rewrite.path):
            raise CannotApply(f"the output has no field {rewrite.path!r}")
        _set_path(output, rewrite.path, rewrite.value)
        if rewrite.note_path and rewrite.note:
            current = get_path(output, rewrite.note_path)
            text = current if isinstance(current, str) else ""
            if (current is None or isinstance(current, str)) and rewrite.note.strip() not in text:
                try:
                    _set_path(output, rewrite.note_path, text + rewrite.note, create_leaf=True)
                except CannotApply as exc:
                    logger.warning("override note not written: %s", exc)
    elif isinstance(rewrite, ReplaceText):
        if text_at(output, rewrite.target) is None:
            raise CannotApply(f"no text at {rewrite.target!r}")
        _set_text(output, rewrite.target, rewrite.text)
    elif isinstance(rewrite, PrependText):
        current = text_at(output, rewrite.target)
        if current is None:
            raise CannotApply(f"no text at {rewrite.target!r}")
        _set_text(output, rewrite.target, rewrite.text + current)
    elif isinstance(rewrite, CutText):
        current = text_at(output, rewrite.target)
        if current is None:
            raise CannotApply(f"no text at {rewrite.target!r}")
        for fragment in rewrite.fragments:
            current = _cut(current, fragment)
        _set_text(output, rewrite.target, current)
    elif isinstance(rewrite, DropToolCalls):
        key, _parts, k, _facet = _split_target(rewrite.target)
        if k is None:
            raise CannotApply(f"{rewrite.target!r} is not a message")
        item = _message_item(output, key, k)
        msg = output.message(item)
        if msg is None:
            raise CannotApply(f"{rewrite.target!r} is a message that cannot be rebuilt")
        output.set_message(item, without_tool_calls(msg, set(rewrite.ids)))
    else:  # pragma: no cover - the Rewrite union is closed
        raise CannotApply(f"unknown rewrite {rewrite!r}")


def _exists(output: NodeOutput, path: str) -> bool:
    try:
        key, parts, k, _f = _split_target(path)
        if k is not None:
            _message_item(output, key, k)
            return True
        value = output.value_of(_last_write(output, key))
        for name in parts:
            value = _child(value, name)
        return True
    except CannotApply:
        return False


def _cut(text: str, fragment: str) -> str:
    import re

    out = text.replace(fragment, "")
    out = re.sub(r"[ \t]{2,}", " ", out)
    return re.sub(r" +([.,;:])", r"\1", out)


# --- one crossing --------------------------------------------------------------------


@dataclass
class Context:
    """Where a crossing happens: the node, its state and run context, the run ids."""

    node: str = ""
    state: Any = None
    context: Any = None
    attempt: int = 1
    meta: Mapping[str, Any] = field(default_factory=dict)
    config: Any = None
    can_rerender: bool = False
    can_pause: bool = True  # False while the node itself is paused (its own interrupt)


@dataclass
class GateResult:
    """The outcome of one gate's crossing.

    ``output`` is the node output as released (rewrites applied); ``update`` is its
    key → value view (``None`` unless released).
    """

    report: Report
    route: str
    output: NodeOutput | None = None
    rerender: Rerender | None = None

    @property
    def released(self) -> bool:
        return self.report.released

    @property
    def update(self) -> dict[str, Any] | None:
        if self.route != "release" or self.output is None:
            return None
        return self.output.update

    @property
    def rerender_to(self) -> str | None:
        """The node to run again (the guarded node itself), on a re-render."""
        return self.report.node if self.rerender is not None else None

    @property
    def writes(self) -> dict[str, Any]:
        """What a re-render hands the producer: the issues under their state key."""
        r = self.rerender
        if r is None or r.issues_key is None:
            return {}
        return {r.issues_key: list(r.issues)}


class _Crossing:
    """One gate's crossing in progress; also the read-only view policies get."""

    def __init__(self, gate: TrustGate[Any], output: NodeOutput, ctx: Context, read: Read) -> None:
        self._gate = gate
        self.output = output
        self.ctx = ctx
        self.read = read
        self.findings: list[Finding] = []
        self.resolved: set[int] = set()
        self.overrides: list[OverrideRecord] = []
        self.decision: Decision = "pass"
        self.route = "release"
        self.error: str | None = None
        self.approval: Approval | None = None
        self.rerender: Rerender | None = None
        self.accounting: dict[str, str] = {}
        self.started = datetime.now(UTC)
        self.evidence = Evidence()
        self.span: Any = None

    # view for policies
    @property
    def gate(self) -> str:
        return self._gate.name

    @property
    def node(self) -> str:
        return self.ctx.node

    @property
    def attempt(self) -> int:
        return self.ctx.attempt

    @property
    def can_rerender(self) -> bool:
        return self.ctx.can_rerender

    @property
    def claims(self) -> Any:
        return self.read.claims

    @property
    def target(self) -> str | None:
        return self.read.target

    @property
    def unresolved(self) -> list[Finding]:
        return [f for i, f in enumerate(self.findings) if f.blocking and i not in self.resolved]

    def get(self, path: str) -> Any:
        return get_path(self.output, path)

    def text(self, target: str) -> str | None:
        return text_at(self.output, target)

    def report_draft(self) -> dict[str, Any]:
        return self.report(draft=True).to_json_dict()

    # bookkeeping
    def resolve(self, findings: Sequence[Finding]) -> None:
        ids = {id(f) for f in findings}
        for i, f in enumerate(self.findings):
            if id(f) in ids:
                self.resolved.add(i)

    def halt(self, reason: str) -> None:
        self.route = "halt"
        self.decision = "halted"
        self.overrides.append(OverrideRecord(kind="halt", target=self.node, reason=reason))

    def report(self, *, draft: bool = False) -> Report:
        claims = self.read.claims
        claim_list = (
            []
            if claims is None
            else list(claims)
            if isinstance(claims, (list, tuple))
            else [claims]
        )
        meta = self.ctx.meta
        thread = meta.get("thread_id")
        return Report.model_construct(
            id=secrets.token_hex(16),  # not uuid4: runs that pin uuid4 keep their ids
            gate=self._gate.name,
            node=self.ctx.node,
            claims=[_jsonable(c) for c in claim_list],
            findings=list(self.findings),
            decision="review" if draft else self.decision,
            overrides=list(self.overrides),
            released=self.route == "release" and not draft,
            error=self.error,
            approval=self.approval,
            attempt=self.ctx.attempt,
            accounting=dict(self.accounting),
            thread_id=None if thread is None else str(thread),
            run_id=meta.get("run_id"),
            step=meta.get("step"),
            checkpoint_ns=meta.get("checkpoint_ns"),
            task_id=meta.get("task_id"),
            started_at=self.started,
            finished_at=datetime.now(UTC),
        )


def _jsonable(value: Any) -> Any:
    from pydantic_core import to_jsonable_python

    if isinstance(value, BaseMessage):
        return value.text
    return to_jsonable_python(value, fallback=repr)


class TrustGate(Generic[ClaimsT]):
    """A trust boundary: verifies what one node emits before anything acts on it.

    ``TrustGate[ClaimsT]`` is generic in what its reader reads (``TrustGate[str]`` for
    :class:`~trustgate.LastAIText`, ``TrustGate[Review]`` for ``FromKey("review",
    model=Review)``), and a type checker holds every verifier to it
    (``Verifier[ClaimsT]``); a state key or a function as reader gives ``TrustGate[Any]``.

    Args:
        name: the gate's name (in reports, spans and errors).
        reads: where the claims are in the guarded node's output: a reader
            (``FromKey``, ``LastAIText``, ``ToolCallArgs``, ``Routes``,
            ``StreamWrites``), a state key, or a function of the update.
        verifiers: deterministic checks (plus at most a model verifier).
        policy: what a blocking failure does; a list is applied in order. Default
            :class:`~trustgate.policies.Halt`.
        evidence: where the verifiers read truth (fixed, from state, from context).
        require_claims: when the claims are missing, fail ``no_claims`` instead of
            passing.
        passthrough: parts of the output this gate lets through unverified: state
            keys (``"info"``), message facets (``"messages.text"``; of one kind of
            message: ``"messages.tool.text"``, ``"messages.ai.tool_calls"``), ``"goto"``,
            ``"send"``, ``"custom"`` (stream-writer output), ``"interrupt"`` (what the
            node's own ``interrupt()`` shows), ``"store"`` (its store writes),
            ``"subgraph"`` (the steps of a subgraph inside it: nested stream events and
            checkpoints), ``"error"`` (an exception's message), or ``"*"`` for
            everything. Anything the gate neither reads nor lets through is held, and
            the crossing halts.
        timeout: seconds a verifier without its own ``timeout`` may run.

    Example:
        ```python
        gate = TrustGate(
            "inspector",
            reads=FromKey("review", model=Review),
            verifiers=[CitationReplay()],
            policy=Override("review.verdict", "REQUEST_CHANGES", note_field="review.summary"),
            evidence=EvidenceSources(workspace=FromContext("workspace")),
        )
        graph = trustgate.guard(builder, {"reviewer": gate})
        ```
    """

    def __init__(
        self,
        name: str,
        *,
        reads: ClaimsReader[ClaimsT]
        | str
        | Callable[[Mapping[str, Any]], ClaimsT | None]
        | None = None,
        verifiers: Sequence[Verifier[ClaimsT]] = (),
        policy: Any = None,
        evidence: EvidenceSources | None = None,
        require_claims: bool = True,
        passthrough: str | Sequence[str] = (),
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if not name or not isinstance(name, str):
            raise ConfigurationError("a gate needs a name")
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ConfigurationError("timeout must be a positive number of seconds")
        self.name = name
        self.reader = as_reader(reads)
        self.policies = policy_chain(policy)
        chain = list(verifiers)
        have = {type(v) for v in chain}
        for p in self.policies:
            for extra in getattr(p, "required_verifiers", lambda: [])():
                if type(extra) not in have:
                    chain.append(extra)
                    have.add(type(extra))
        for v in chain:
            if not isinstance(v, Verifier):
                raise ConfigurationError(
                    f"{v!r} is not a Verifier (needs name, timeout and verify(claims, evidence))"
                )
        names = [v.name for v in chain]
        if len(set(names)) != len(names):
            raise ConfigurationError(f"verifier names must be unique in a gate: {names}")
        self.verifiers = tuple(chain)
        self.evidence = evidence if evidence is not None else EvidenceSources()
        self.require_claims = require_claims
        if isinstance(passthrough, str):
            passthrough = [passthrough]
        bad = [p for p in passthrough if not isinstance(p, str) or not p]
        if bad:
            raise ConfigurationError(f"passthrough entries must be part names, not {bad!r}")
        self.passthrough = frozenset(passthrough)
        self.timeout = float(timeout)

    def __repr__(self) -> str:
        return f"TrustGate({self.name!r}, verifiers={[v.name for v in self.verifiers]})"

    @property
    def evidence_keys(self) -> set[str]:
        return self.evidence.state_keys()

    # -- reading -----------------------------------------------------------------

    def read(self, output: NodeOutput) -> tuple[Read, list[Finding]]:
        """The claims in ``output`` and the failures reading them produced."""
        try:
            r: Read = self.reader.read_output(output)
        except ClaimParseError as exc:
            target = getattr(self.reader, "target", None)
            code = getattr(exc, "code", "malformed_claim")
            return Read(None, frozenset({target}) if target else frozenset(), target), [
                Finding.failed("gate", code, str(exc))
            ]
        except RecursionError:
            return Read(None), [
                Finding.failed("gate", "malformed_claim", "the claim is nested too deeply")
            ]
        # a node paused mid-way (its own interrupt) has not made its claims yet: only
        # what it shows the person is accounted for, the claims come when it returns
        if r.absent == "missing" and self.require_claims and not output.interrupts:
            return r, [Finding.failed("gate", "no_claims", r.reason or "no claims in this step")]
        return r, []

    # -- one crossing ------------------------------------------------------------

    def crossing(
        self,
        output: NodeOutput,
        ctx: Context,
        *,
        first: tuple[Read, list[Finding]] | None = None,
        held: Sequence[Finding] = (),
        accounting: Mapping[str, str] | None = None,
    ) -> Steps[GateResult]:
        """The crossing as a generator of verifier runs (see :func:`drive`)."""
        read, read_failures = first if first is not None else self.read(output)
        c = _Crossing(self, output, ctx, read)
        c.accounting = dict(accounting or {})
        c.findings.extend(read_failures)
        with otel.crossing(self.name, ctx.node, config=ctx.config, attempt=ctx.attempt) as span:
            c.span = span
            try:
                if held:
                    c.findings.extend(held)
                    c.halt(reasons(list(held)))
                else:
                    try:
                        c.evidence = self.evidence.resolve(ctx.state, ctx.context)
                    except ConfigurationError as exc:
                        c.error = str(exc)
                        c.findings.append(Finding.failed("gate", "evidence_unavailable", str(exc)))
                        c.halt(str(exc))
                if c.route == "release" and read.claims is not None:
                    yield from self._verify(c)
                if c.route == "release":
                    yield from self._decide(c)
                result = GateResult(
                    c.report(),
                    c.route,
                    c.output if c.route == "release" else None,
                    c.rerender,
                )
            except BaseException as exc:
                from langgraph.errors import GraphBubbleUp

                if not isinstance(exc, GraphBubbleUp):
                    logger.warning("gate %r crashed: %s", self.name, exc)
                raise
            span.finish(result.report)
        return result

    def _verify(self, c: _Crossing) -> Steps[None]:
        for v in self.verifiers:
            timeout = v.timeout if v.timeout is not None else self.timeout
            try:
                with c.span.verifier(v.name) as vs:
                    found = yield _Verify(v, c.read.claims, c.evidence, timeout)
                    vs.record(found)
            except VerifierFailure as exc:
                c.error = str(exc)
                c.findings.append(Finding.failed(exc.verifier, exc.code, exc.error))
                c.halt(f"{exc.verifier}/{exc.code}")
                return
            c.findings.extend(found)

    def _decide(self, c: _Crossing) -> Steps[None]:
        for policy in self.policies:
            if not c.unresolved:
                break
            with c.span.policy(type(policy).__name__):
                decision = policy.decide(c)
            if isinstance(decision, Ask) and not c.ctx.can_pause:
                c.halt(
                    f"{type(policy).__name__} cannot ask a person while the node's own pause waits"
                )
                return
            if isinstance(decision, Ask):
                from langgraph.types import interrupt

                answer = interrupt(dict(decision.payload))
                with c.span.policy(type(policy).__name__):
                    decision = policy.resume(c, answer)
            if decision is None:
                continue
            yield from self._apply(c, policy, decision)
            if c.route != "release":
                return
        if c.unresolved:
            c.halt("unresolved: " + reasons(c.unresolved))

    def _apply(self, c: _Crossing, policy: Any, decision: Any) -> Steps[None]:
        name = type(policy).__name__
        if isinstance(decision, Stop):
            c.approval = decision.approval or c.approval
            c.halt(decision.reason)
            return
        if isinstance(decision, Rerender):
            c.overrides.extend(decision.records)
            c.route = "rerender"
            c.decision = "rerender"
            c.rerender = decision
            return
        if not isinstance(decision, Release):
            c.halt(f"{name}: returned {type(decision).__name__}, not a decision")
            return
        trial = _copy_output(c.output)
        try:
            for rewrite in decision.rewrites:
                apply_rewrite(trial, rewrite)
        except CannotApply as exc:
            c.overrides.append(
                OverrideRecord(kind="halt", target=c.node, reason=f"{name} cannot apply: {exc}")
            )
            return  # findings stay unresolved: the crossing halts at the end
        c.output = trial.reread() if decision.rewrites else trial
        c.overrides.extend(decision.records)
        c.resolve(decision.resolves)
        if decision.approval is not None:
            c.approval = decision.approval
        if c.decision in ("pass", "modified") or decision.decision != "modified":
            c.decision = decision.decision
        if decision.reverify:
            read, failures = self.read(c.output)
            c.read = read
            c.findings = list(failures)
            c.resolved = set()
            if read.claims is not None:
                yield from self._verify(c)
            if c.route == "release" and c.unresolved:
                c.halt("edited content failed verification: " + reasons(c.unresolved))

    # -- public, outside a graph -------------------------------------------------

    def check(
        self,
        update: Mapping[str, Any],
        *,
        node: str = "",
        state: Any = None,
        context: Any = None,
        attempt: int = 1,
        meta: Mapping[str, Any] | None = None,
        config: Any = None,
    ) -> GateResult:
        """Run one crossing over a node's update (a mapping of state key → value).

        Example:
            ```python
            result = gate.check({"review": review}, node="reviewer")
            if not result.released:
                raise GateHalted(result.report)
            ```
        """
        output = NodeOutput.read(dict(update), input=state)
        ctx = Context(node, state, context, attempt, meta or {}, config)
        return drive(run_chain([self], output, ctx))[0]

    async def acheck(
        self,
        update: Mapping[str, Any],
        *,
        node: str = "",
        state: Any = None,
        context: Any = None,
        attempt: int = 1,
        meta: Mapping[str, Any] | None = None,
        config: Any = None,
    ) -> GateResult:
        """Async :meth:`check`; verifiers with ``averify`` run natively."""
        output = NodeOutput.read(dict(update), input=state)
        ctx = Context(node, state, context, attempt, meta or {}, config)
        return (await adrive(run_chain([self], output, ctx)))[0]


def _copy_output(output: NodeOutput) -> NodeOutput:
    import copy

    new = copy.copy(output)
    new._replaced = dict(output._replaced)
    new._messages_replaced = dict(output._messages_replaced)
    return new


def _role_covered(part: str, role: str, passed: set[str]) -> bool:
    """``messages[3].text`` of a tool message under ``messages.tool.text`` or
    ``messages.tool``."""
    ref, _, facet = part.partition(".")
    key = ref.partition("[")[0]
    return f"{key}.{role}" in passed or (bool(facet) and f"{key}.{role}.{facet}" in passed)


def account(
    gates: Sequence[TrustGate[Any]], output: NodeOutput, reads: Sequence[Read]
) -> tuple[dict[str, str], list[Finding]]:
    """Every part of ``output``: who verified it or let it through, and what is held."""
    read_covers: set[str] = set().union(*(r.covers for r in reads)) if reads else set()
    passed: set[str] = set().union(*(g.passthrough for g in gates)) if gates else set()
    status: dict[str, str] = {}
    held: list[Finding] = []
    node = ""
    roles = output.part_roles()
    for part, desc in output.parts():
        role = roles.get(part.partition(".")[0])
        if covered(part, read_covers):
            status[part] = "verified"
        elif covered(part, passed) or (role is not None and _role_covered(part, role, passed)):
            status[part] = "passthrough"
        else:
            status[part] = "held"
            fix = declaration(part)
            if role is not None and "." in fix:  # name the kind: the narrowest that fits
                key, _, facet = fix.partition(".")
                fix = f"{key}.{role}.{facet}"
            held.append(
                Finding.failed(
                    "gate",
                    "unverified_output",
                    f"{desc} ({part}) is neither verified nor declared: read it in a gate "
                    f"or declare it with TrustGate(..., passthrough=[{fix!r}])",
                    subject=part,
                )
            )
    evidence_keys = set().union(*(g.evidence_keys for g in gates)) if gates else set()
    for i, w in enumerate(output.writes):
        if w.key in evidence_keys and output.changed(i):
            status[w.key] = "held"
            held.append(
                Finding.failed(
                    "gate",
                    "evidence_rewritten",
                    f"the node rewrote {w.key!r}, which its gate reads evidence from; a node "
                    "may not change the evidence it is judged by",
                    subject=w.key,
                )
            )
    del node
    return status, held


@dataclass
class ChainResult:
    """The gates of one node, run in order over its output."""

    results: list[GateResult]

    def __getitem__(self, i: int) -> GateResult:
        return self.results[i]

    @property
    def last(self) -> GateResult:
        return self.results[-1]

    @property
    def reports(self) -> list[Report]:
        return [r.report for r in self.results]


def run_chain(
    gates: Sequence[TrustGate[Any]], output: NodeOutput, ctx: Context
) -> Steps[ChainResult]:
    """Run ``gates`` in order: each sees the output as the one before released it.

    Accounting is settled first, over what every gate reads and lets through: a part
    nobody accounts for halts the first gate before any verifier runs.
    """
    firsts = [g.read(output) for g in gates]
    accounting, held = account(gates, output, [r for r, _f in firsts])
    results: list[GateResult] = []
    current = output
    for i, gate in enumerate(gates):
        first = firsts[i] if current is output else None
        r = yield from gate.crossing(
            current, ctx, first=first, held=held if i == 0 else (), accounting=accounting
        )
        results.append(r)
        if r.route != "release" or r.output is None:
            break
        current = r.output
    return ChainResult(results)


def halted(chain: ChainResult) -> GateHalted:
    return GateHalted(chain.last.report)
