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
  so does a crossing that outlives its gate's ``budget`` (``budget_exceeded``), and a
  gate whose own verifier threads are all stuck (see :mod:`trustgate._executor`: each
  gate has its own bulkhead, so another gate's stuck verifiers cannot stop it);
* a verifier runs where its time limit can be kept: one with a limit (its own
  ``timeout``, the gate's ``timeout=``, or what is left of the gate's ``budget``) on
  the gate's threads, one with none inline, in the crossing itself (a thread hop
  would cost more than most checks do, and there is no limit to keep);
* a policy that cannot apply leaves its findings unresolved; failures no policy
  resolved halt: nothing uninspected is released.
"""

from __future__ import annotations

import contextvars
import hashlib
import logging
import os
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic

from langchain_core.messages import BaseMessage
from langgraph.errors import GraphBubbleUp
from pydantic_core import to_jsonable_python
from typing_extensions import TypeVar

from trustgate import _budget, _compat, _executor, otel
from trustgate._apply import CannotApply, SegmentIndex, apply_rewrite, get_path, text_at
from trustgate._findings import Finding
from trustgate._output import NodeOutput, Part
from trustgate._report import Approval, Decision, OverrideRecord, Report, built
from trustgate.errors import ClaimParseError, ConfigurationError, GateHalted, TrustgateError
from trustgate.errors import _declaration as declaration
from trustgate.policies import policy_chain
from trustgate.policies._decision import (
    Ask,
    Release,
    Rerender,
    Stop,
    reasons,
)
from trustgate.readers import (
    ClaimsReader,
    NoClaims,
    Read,
    as_reader,
    covered,
    generalizations,
)
from trustgate.verifiers.base import Evidence, EvidenceSources, Verifier

__all__ = [
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
    timeout: float | None  # None: no limit asked for, the run is inline
    bulkhead: _executor.Bulkhead | None = None  # the gate's own threads
    deadline: _budget.Deadline | None = None  # when the crossing's budget runs out


def _leave_run() -> None:
    """Clear LangChain's running config in the current context (a copied one: the
    change does not outlast it)."""
    _compat.set_config(None)


def _quiet(fn: Callable[[], Any]) -> Callable[[], Any]:
    """Run ``fn`` outside the node's LangChain run: a verifier's own model call must
    not stream into the graph's token stream or callbacks."""

    def run() -> Any:
        _leave_run()
        return fn()

    return run


def _verify_quietly(v: Any, claims: Any, evidence: Evidence) -> Any:
    """``v.verify(claims, evidence)`` outside the node's LangChain run (see
    :func:`_quiet`); called in a context of its own, so the change does not last."""
    _leave_run()
    return v.verify(claims, evidence)


def _as_findings(name: str, result: Any) -> list[Finding]:
    if isinstance(result, Finding):
        return [result]
    if not isinstance(result, (list, tuple)) or not all(isinstance(f, Finding) for f in result):
        raise TypeError(f"returned {type(result).__name__}, expected list[Finding]")
    return list(result)


def _attempts(v: Any) -> int:
    return 1 + max(0, int(getattr(v, "retries", 0) or 0))


def _failure_code(exc: BaseException) -> str:
    """``verifier_error``, or the code a trustgate error names for itself (a sentence
    judge that failed twice is ``judge_failed``)."""
    code = getattr(exc, "finding_code", None) if isinstance(exc, TrustgateError) else None
    return code if isinstance(code, str) and code else "verifier_error"


def _bounded(v: Any) -> bool:
    """Whether ``v`` declares its work bounded by trustgate's input caps: it runs inline
    even with a limit (a thread hop would cost more than it does)."""
    return bool(getattr(v, "bounded", False))


def _run_sync(req: _Verify) -> list[Finding]:
    v = req.verifier
    last: BaseException | None = None
    code = "verifier_error"
    for _ in range(_attempts(v)):
        limit, cut = _limit(req)
        try:
            if limit is None or _bounded(v):  # no limit to keep: inline
                result = contextvars.copy_context().run(
                    _verify_quietly, v, req.claims, req.evidence
                )
            else:
                call = _quiet(lambda: v.verify(req.claims, req.evidence))
                result = _executor.run_sync(call, limit, req.bulkhead, v.name)
            return _in_time(req, _as_findings(v.name, result))
        except (GraphBubbleUp, VerifierFailure):
            raise
        except (_executor.VerifierTimeout, TimeoutError) as exc:
            _over_budget(req, cut)
            last, code = exc, "verifier_timeout"
        except Exception as exc:
            last, code = exc, _failure_code(exc)
    raise VerifierFailure(v.name, code, f"{type(last).__name__}: {last}")


def _limit(req: _Verify) -> tuple[float | None, bool]:
    """The limit of the next run: the verifier's, or what is left of the crossing's
    budget when that is less (then ``True``); ``None`` when nobody asked for one. A
    budget is a limit asked for: a verifier without a limit of its own in a gate with a
    budget is given what is left of it. A spent budget fails before the run."""
    if req.deadline is None:
        return req.timeout, False
    if req.deadline.passed():
        name = req.verifier.name
        raise VerifierFailure(name, "budget_exceeded", req.deadline.not_started(name))
    if req.timeout is None:
        return req.deadline.remaining(), True
    return req.deadline.limit(req.timeout)


def _over_budget(req: _Verify, cut: bool) -> None:
    """A run that timed out at the budget's limit (not its own) is the budget's halt."""
    if cut and req.deadline is not None:
        name = req.verifier.name
        raise VerifierFailure(name, "budget_exceeded", req.deadline.ran_out(name))


def _in_time(req: _Verify, found: list[Finding]) -> list[Finding]:
    """Findings that arrived after the budget ran out do not count."""
    if req.deadline is not None and req.deadline.passed():
        name = req.verifier.name
        raise VerifierFailure(name, "budget_exceeded", req.deadline.too_late(name))
    return found


async def _run_async(req: _Verify) -> list[Finding]:
    v = req.verifier
    # a native coroutine runs on the loop; a sync check with a time limit runs on
    # trustgate's own threads, never on the loop's default executor (where a stuck one
    # would starve LangGraph's own sync nodes); one without a limit runs inline, on the
    # loop, like any other code of the crossing
    averify = getattr(v, "averify", None) if getattr(v, "is_async", True) else None
    last: BaseException | None = None
    code = "verifier_error"
    for _ in range(_attempts(v)):
        limit, cut = _limit(req)
        try:
            if averify is not None:
                # created and run in a context of its own, outside the node's run; it is
                # cancelled at its limit, and the crossing does not wait for it to agree
                ctx = contextvars.copy_context()
                coro = ctx.run(_quiet(lambda: averify(req.claims, req.evidence)))
                result = await _executor.run_coroutine(coro, limit, ctx)
            elif limit is None or _bounded(v):  # no limit to keep: inline
                result = contextvars.copy_context().run(
                    _verify_quietly, v, req.claims, req.evidence
                )
            else:
                call = _quiet(lambda: v.verify(req.claims, req.evidence))
                result = await _executor.run_async(call, limit, req.bulkhead, v.name)
            return _in_time(req, _as_findings(v.name, result))
        except (GraphBubbleUp, VerifierFailure):
            raise
        except (_executor.VerifierTimeout, TimeoutError) as exc:
            _over_budget(req, cut)
            last, code = exc, "verifier_timeout"
        except Exception as exc:
            last, code = exc, _failure_code(exc)
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
    phase: str = "return"  # "pause": the node's own interrupt, before it returned


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
        self.notes: list[str] = []  # why a policy's release resolved less than it said
        self.deadline: _budget.Deadline | None = None  # the gate's budget, if it has one
        self._ledger: list[Part] | None = None

    # the part ledger of the output as it stands
    @property
    def parts(self) -> list[Part]:
        if self._ledger is None:
            self._ledger = self.output.ledger()
        return self._ledger

    def read_parts(self) -> tuple[str, ...]:
        """The ids of the parts the gate's reader read."""
        covers = self.read.covers
        return tuple(p.id for p in self.parts if covered(p.id, covers, p.role))

    def bind(self, found: Sequence[Finding]) -> list[Finding]:
        """Each finding with the parts it judged (see :mod:`trustgate._findings`)."""
        known = {p.id for p in self.parts}
        everything: tuple[str, ...] | None = None
        edited: SegmentIndex | None = None
        out: list[Finding] = []
        for f in found:
            parts: tuple[str, ...] = ()
            if f.parts:
                parts = tuple(p for p in f.parts if p in known)
                if len(parts) != len(f.parts):
                    logger.warning(
                        "gate %r: finding %s/%s names parts the output does not have: %s",
                        self.gate,
                        f.verifier,
                        f.code,
                        sorted(set(f.parts) - known),
                    )
                    parts = ()
            if not parts and f.subject is not None:
                parts = tuple(self.read.subjects.get(f.subject, ()))
                if not parts and f.subject in known:
                    parts = (f.subject,)
            if not parts and f.proposals and self.read.segments:
                edited = edited or SegmentIndex(self.read.segments)  # once: many findings
                parts = edited.parts_of(f.proposals)
            if not parts:
                if everything is None:
                    everything = self.read_parts()
                parts = everything
            out.append(f if parts == f.parts else f.with_parts(parts))
        return out

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

    @property
    def claim_parts(self) -> tuple[tuple[str, ...], ...]:
        """For claims that are a list, each claim's part ids (see ``Read``)."""
        return self.read.claim_parts

    def text_parts(self, target: str) -> tuple[str, ...]:
        """The parts the text at ``target`` lives in: a message's text part, or every
        write of a text key (``()`` when the target names no text)."""
        from trustgate._apply import text_part_ids

        return text_part_ids(self.output, target)

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
        return built(
            id=os.urandom(16).hex(),  # not uuid4: runs that pin uuid4 keep their ids
            crossing=_crossing_key(self),
            gate=self._gate.name,
            node=self.ctx.node,
            claims=[_jsonable(c) for c in claim_list],
            findings=list(self.findings),
            decision="reviewed" if draft else self.decision,
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


def _crossing_key(c: _Crossing) -> str | None:
    """Where the crossing ran, as one key (thread, namespace, task, gate, attempt, phase):
    a task LangGraph runs again after a crash (at-least-once: its writes were not saved
    yet) is the same crossing executed again, each execution with its own report, and
    the record can tell that its output was released twice. ``None`` outside a run with
    a thread (``TrustGate.check``)."""
    meta = c.ctx.meta
    thread, task = meta.get("thread_id"), meta.get("task_id")
    if thread is None or task is None:
        return None
    key = "\x1f".join(
        (
            str(thread),
            str(meta.get("checkpoint_ns") or ""),
            str(task),
            c.ctx.node,
            c.gate,
            str(c.ctx.attempt),
            c.ctx.phase,
        )
    )
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _jsonable(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value  # what to_jsonable_python returns for them, without the call
    if isinstance(value, BaseMessage):
        return value.text
    return to_jsonable_python(value, fallback=repr)


_FACETS = frozenset({"text", "tool_calls", "other", "remove", "unreadable", "overwrite"})
_SPECIAL = frozenset(
    {"*", "goto", "send", "custom", "interrupt", "store", "subgraph", "error", "unreadable"}
)


def _passthrough(owner: str, passthrough: Any) -> tuple[str, ...]:
    """Check each declared part name: a key, ``key.facet``, ``key.kind.facet``, or one
    of the named parts. A field path (``review.verdict``) is not a part: declaring it
    would silently let nothing through, so it is refused with the fix."""
    from trustgate import _validate

    names = _validate.strings(owner, "passthrough", passthrough)
    for name in names:
        if name in _SPECIAL:
            continue
        head, *facets = name.split(".")
        if not head or not facets:
            continue
        if facets[-1] not in _FACETS and len(facets) > 1:
            raise ConfigurationError(
                f"{owner}: passthrough {name!r} names no part: the last name must be one of "
                f"{sorted(_FACETS)}"
            )
        if len(facets) == 1 and facets[0] not in _FACETS and facets[0] not in _ROLES:
            raise ConfigurationError(
                f"{owner}: passthrough {name!r} is not a part of the output: parts are state "
                f"keys ({head!r}), message facets ({head}.text, {head}.tool_calls, "
                f"{head}.other), facets of one kind of message ({head}.tool.text) or "
                f"{sorted(_SPECIAL)}; a field inside a key is declared with the key"
            )
        if len(facets) == 2 and facets[0] not in _ROLES:
            raise ConfigurationError(
                f"{owner}: passthrough {name!r}: {facets[0]!r} is not a kind of message "
                f"(one of {sorted(_ROLES)})"
            )
        if len(facets) > 2:
            raise ConfigurationError(f"{owner}: passthrough {name!r} names no part")
    return names


_ROLES = frozenset(
    {"ai", "human", "tool", "system", "developer", "function", "chat", "remove", "user"}
)


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
        timeout: seconds a verifier without its own ``timeout`` may run; it then runs
            on the gate's threads, which keep the limit. ``None`` (the default): no
            limit, and such a verifier runs inline, in the crossing itself (a gate with
            a ``budget`` still gives it what is left of the budget as its limit).
        budget: seconds the whole crossing may take (every verifier, retries,
            re-verification, and the earlier attempts of a re-rendered node);
            past it the crossing halts with ``budget_exceeded``. ``None`` (the
            default): no budget beyond each verifier's own limit.
        threads: verifier runs of this gate on a thread at once (4); more wait
            in the gate's own queue, never in front of another gate's.
        max_stuck: this gate's threads that may be stuck past their time limits
            (8) before its crossings halt at once (``verifier_error``,
            ``ExecutorExhausted``); other gates are not affected.

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
        timeout: float | None = None,
        budget: float | None = None,
        threads: int = _executor.DEFAULT_THREADS,
        max_stuck: int = _executor.DEFAULT_MAX_STUCK,
    ) -> None:
        from trustgate import _validate

        if not isinstance(name, str) or not name.strip():
            raise ConfigurationError(f"a gate needs a name (a non-empty string), not {name!r}")
        owner = f"TrustGate({name!r})"
        self.name = name
        self.timeout = _validate.seconds(owner, "timeout", timeout, optional=True)
        self.budget = _validate.seconds(owner, "budget", budget, optional=True)
        self.bulkhead = _executor.Bulkhead(
            name,
            threads=_validate.count(owner, "threads", threads, minimum=1),
            max_stuck=_validate.count(owner, "max_stuck", max_stuck, minimum=1),
        )
        self._carry = _budget.Carry()
        if not isinstance(require_claims, bool):
            raise ConfigurationError(f"{owner}: require_claims must be True or False")
        _validate.not_a_class(owner, "reads", reads, "a reader")
        self.reader = as_reader(reads)
        if isinstance(policy, str):
            raise ConfigurationError(
                f"{owner}: policy takes a policy such as Halt() or a list of them, not the "
                f"string {policy!r}"
            )
        self.policies = policy_chain(policy)
        given: Any = verifiers
        if not isinstance(given, (list, tuple)):
            raise ConfigurationError(
                f"{owner}: verifiers must be a list of verifiers, not {given!r}"
            )
        chain = list(given)
        have = {type(v) for v in chain}
        for p in self.policies:  # a policy declares the check it applies (Redact)
            need = getattr(p, "needs_check", None)
            if need is not None and need[0] not in have:
                chain.append(need[0](**need[1]))
                have.add(need[0])
        for v in chain:
            _validate.not_a_class(owner, "verifiers", v, "a verifier")
            if not isinstance(v, Verifier):
                raise ConfigurationError(
                    f"{v!r} is not a Verifier (needs name, timeout and verify(claims, evidence))"
                )
            if not isinstance(v.name, str) or not v.name:
                raise ConfigurationError(f"{owner}: verifier {v!r} needs a non-empty name")
            _validate.seconds(
                owner, f"the timeout of verifier {v.name!r}", v.timeout, optional=True
            )
        names = [v.name for v in chain]
        if len(set(names)) != len(names):
            raise ConfigurationError(f"verifier names must be unique in a gate: {names}")
        self.verifiers = tuple(chain)
        if evidence is not None and not isinstance(evidence, EvidenceSources):
            raise ConfigurationError(
                f"{owner}: evidence must be EvidenceSources(...), not {evidence!r}"
            )
        self.evidence = evidence if evidence is not None else EvidenceSources()
        self.require_claims = require_claims
        self.passthrough = frozenset(_passthrough(owner, passthrough))
        reads_something = not isinstance(self.reader, NoClaims)
        if reads_something and not self.verifiers:
            raise ConfigurationError(
                f"{owner} reads claims but has no verifier to check them: what it reads would "
                "pass unchecked. Give it verifiers=[...], or read nothing and declare what it "
                "lets through with passthrough=[...]"
            )
        if not reads_something and not self.verifiers and not self.passthrough:
            raise ConfigurationError(
                f"{owner} verifies nothing and declares nothing: give it reads= and "
                "verifiers=[...], or declare what it lets through with passthrough=[...]"
            )

    def __repr__(self) -> str:
        return f"TrustGate({self.name!r}, verifiers={[v.name for v in self.verifiers]})"

    @property
    def verifies(self) -> bool:
        """Whether the gate checks anything (a gate that only declares is no guard)."""
        return bool(self.verifiers) and not isinstance(self.reader, NoClaims)

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
        malformed: Sequence[Finding] = (),
        accounting: Mapping[str, str] | None = None,
    ) -> Steps[GateResult]:
        """The crossing as a generator of verifier runs (see :func:`drive`)."""
        read, read_failures = first if first is not None else self.read(output)
        c = _Crossing(self, output, ctx, read)
        c.accounting = dict(accounting or {})
        c.findings.extend(c.bind(read_failures))
        c.findings.extend(malformed)
        carry_key = None
        if self.budget is not None:
            carry_key = _budget.Carry.key(ctx.meta, ctx.node, ctx.phase)
            spent = self._carry.take(carry_key, ctx.attempt)
            c.deadline = _budget.Deadline.start(self.budget, spent)
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
                if c.route == "release":
                    _release_as_read(c)
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
                if c.deadline is not None and c.route == "rerender":
                    # the next attempt's crossing continues this budget
                    self._carry.keep(carry_key, c.deadline.budget - c.deadline.remaining())
            except BaseException as exc:
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
                    found = yield _Verify(
                        v, c.read.claims, c.evidence, timeout, self.bulkhead, c.deadline
                    )
                    vs.record(found)
            except VerifierFailure as exc:
                c.error = str(exc)
                c.findings.append(Finding.failed(exc.verifier, exc.code, exc.error))
                c.halt(f"{exc.verifier}/{exc.code}")
                return
            c.findings.extend(c.bind(found))

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
            why = "unresolved: " + reasons(c.unresolved)
            if c.notes:
                why += " (" + "; ".join(c.notes) + ")"
            c.halt(why)

    def _apply(self, c: _Crossing, policy: Any, decision: Any) -> Steps[None]:
        name = type(policy).__name__
        if isinstance(decision, Stop):
            c.approval = decision.approval or c.approval
            c.halt(decision.reason)
            return
        if isinstance(decision, Rerender):
            c.overrides.extend(decision.records)
            c.route = "rerender"
            c.decision = decision.decision
            c.rerender = decision
            return
        if not isinstance(decision, Release):
            c.halt(f"{name}: returned {type(decision).__name__}, not a decision")
            return
        trial = _copy_output(c.output)
        touched: set[str] = set()
        try:
            for rewrite in decision.rewrites:
                touched |= apply_rewrite(trial, rewrite)
        except CannotApply as exc:
            c.overrides.append(
                OverrideRecord(kind="halt", target=c.node, reason=f"{name} cannot apply: {exc}")
            )
            c.notes.append(f"{name} cannot apply: {exc}")
            return  # findings stay unresolved: the crossing halts at the end
        settled = touched | set(decision.approves)
        resolved = [f for f in decision.resolves if _settled(f, settled)]
        kept = {id(f) for f in resolved}  # by identity: a comparison per pair was quadratic
        for f in decision.resolves:
            if id(f) not in kept:
                left = [p for p in f.parts if not _is_touched(p, settled)] or ["no part"]
                changed = ", ".join(sorted(touched)) or "nothing"
                c.notes.append(
                    f"{name} changed {changed}, but {f.verifier}/{f.code} judged "
                    f"{', '.join(left)}, which it neither rewrote nor removed"
                )
        c.output = trial.reread() if decision.rewrites else trial
        c._ledger = None
        c.overrides.extend(decision.records)
        c.resolve(resolved)
        if decision.approval is not None:
            c.approval = decision.approval
        if c.decision in ("pass", "modified") or decision.decision != "modified":
            c.decision = decision.decision
        if decision.reverify:
            read, failures = self.read(c.output)
            c.read = read
            c.findings = c.bind(failures)
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


def _is_touched(part: str, touched: set[str]) -> bool:
    """Whether ``part`` was rewritten or removed (a removed message takes its facets)."""
    return part in touched or not touched.isdisjoint(generalizations(part) - {part})


def _settled(finding: Finding, touched: set[str]) -> bool:
    """A failed finding is settled by a release only when every part it judged was
    rewritten or removed (or approved by a person: ``*`` for the whole crossing).

    A finding about an absence (``no_claims``: the step made no claim at all) judges no
    part: there is nothing false to cut, and the release settles it by rewriting what
    acts on the outcome (an override of the verdict), so any rewrite settles it."""
    if "*" in touched:
        return True
    if not finding.parts:
        return bool(touched)
    return all(_is_touched(p, touched) for p in finding.parts)


def _release_as_read(c: _Crossing) -> None:
    """A reader that coerced a value while reading it (``FromKey(key, model=M)``) verified
    the coerced value: that value is what is released, in the form the node wrote."""
    if not c.read.releases:
        return
    trial = _copy_output(c.output)
    for index, value in c.read.releases:
        trial.set_value(index, value)
        c.overrides.append(
            OverrideRecord(
                kind="coerced",
                target=trial.write_part_id(index),
                reason="released as the gate's reader read and verified it",
            )
        )
    c.output = trial
    c._ledger = None


def account(
    gates: Sequence[TrustGate[Any]], output: NodeOutput, reads: Sequence[Read]
) -> tuple[dict[str, str], list[Finding], list[Finding]]:
    """Every part of ``output``: who verified it or let it through, and what is held.

    A part some gate of the node reads is verified; a part no gate reads passes only if
    every gate of the node declares it: one permissive gate in a chain does not let
    through what another holds. Returns the accounting, the findings that halt the
    crossing (held parts, rewritten evidence) and the malformed-output findings (a
    collision of identities: blocking, for the policies to settle)."""
    read_covers: set[str] = set().union(*(r.covers for r in reads)) if reads else set()
    status: dict[str, str] = {}
    held: list[Finding] = []
    for part in output.ledger():
        if covered(part.id, read_covers, part.role):
            status[part.id] = "verified"
            continue
        declared = [
            g
            for g, r in zip(gates, reads, strict=True)
            if covered(part.id, g.passthrough, part.role) or part.id in r.passthrough
        ]
        if gates and len(declared) == len(gates):
            status[part.id] = "passthrough"
            continue
        status[part.id] = "held"
        fix = declaration(part.id)
        if part.role is not None and "." in fix:  # name the kind: the narrowest that fits
            key, _, facet = fix.partition(".")
            fix = f"{key}.{part.role}.{facet}"
        if declared:
            missing = ", ".join(repr(g.name) for g in gates if g not in declared)
            why = (
                f"{part.description} ({part.id}) is declared by "
                f"{', '.join(repr(g.name) for g in declared)} but not by {missing}: a part no "
                f"gate reads must be declared by every gate of the node "
                f"(passthrough=[{fix!r}])"
            )
        else:
            why = (
                f"{part.description} ({part.id}) is neither verified nor declared: read it "
                f"in a gate or declare it with TrustGate(..., passthrough=[{fix!r}])"
            )
            if part.kind == "tool_call":
                why += (
                    "; to let calls of named tools through and verify the others, "
                    "ToolCallArgs(tools=[...], passthrough=['tool_name', ...])"
                )
        held.append(
            Finding.failed("gate", "unverified_output", why, subject=part.id, parts=(part.id,))
        )
    sources = [s for g in gates for s in g.evidence.state_sources()]
    strict = {s.key for s in sources if not s.before_step}
    # read as it stood before the step: appending to it is no rewrite, editing is
    appending = {s.key for s in sources if s.before_step} - strict
    for i, w in enumerate(output.writes):
        if (w.key in strict and output.changed(i)) or (
            w.key in appending and output.edits_history(i)
        ):
            status[w.key] = "held"
            held.append(
                Finding.failed(
                    "gate",
                    "evidence_rewritten",
                    f"the node rewrote {w.key!r}, which its gate reads evidence from; a node "
                    "may not change the evidence it is judged by",
                    subject=w.key,
                    parts=tuple(p for p in output.write_parts(w.key)) or (w.key,),
                )
            )
    malformed = [
        Finding.failed(
            "gate",
            "malformed_output",
            f"{why}: a consumer could act on either, so neither is read as the call",
            parts=ids,
        )
        for ids, why in output.malformed()
    ]
    return status, held, malformed


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
    accounting, held, malformed = account(gates, output, [r for r, _f in firsts])
    results: list[GateResult] = []
    current = output
    for i, gate in enumerate(gates):
        first = firsts[i] if current is output else None
        r = yield from gate.crossing(
            current,
            ctx,
            first=first,
            held=held if i == 0 else (),
            malformed=malformed if i == 0 else (),
            accounting=accounting,
        )
        results.append(r)
        if r.route != "release" or r.output is None:
            break
        current = r.output
    return ChainResult(results)


def halted(chain: ChainResult) -> GateHalted:
    return GateHalted(chain.last.report)
