"""The trust-boundary node: read → verify → decide → apply → record.

:class:`TrustGate` holds what a crossing needs (how to read claims, which verifiers,
which evidence, which policies) and runs one crossing over a guarded node's raw
update with :meth:`TrustGate.check` / :meth:`TrustGate.acheck`. ``trustgate.guard``
installs it as a real node in a graph; the create_agent middleware calls the same
methods. Whatever path calls it, the rules hold:

* claims come from this step's update only; no claims is a failure (``no_claims``)
  unless ``require_claims=False``;
* a verifier that raises or outlives its timeout halts the crossing, with the error
  in the report (same input, same result: no retry);
* a model verifier (``retries=1``) gets exactly one retry on an outage or an
  unparseable verdict, then halts;
* failures no policy resolved halt: nothing uninspected is released.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langgraph.errors import GraphBubbleUp
from pydantic_core import to_jsonable_python

from trustgate import otel
from trustgate.errors import ClaimParseError, ConfigurationError
from trustgate.findings import Finding
from trustgate.policy import Crossing, Policy, policy_chain
from trustgate.readers import ClaimsReader, as_reader
from trustgate.report import Report
from trustgate.verifiers.base import Evidence, EvidenceSources, Verifier

__all__ = [
    "GateResult",
    "TrustGate",
    "VerifierFailure",
    "add_report_listener",
    "remove_report_listener",
]

_listeners: list[Callable[[Report], None]] = []
_PAUSED_MAX = 4096


def add_report_listener(fn: Callable[[Report], None]) -> None:
    """Call ``fn`` with every finished report (telemetry, audit logs)."""
    _listeners.append(fn)


def remove_report_listener(fn: Callable[[Report], None]) -> None:
    if fn in _listeners:
        _listeners.remove(fn)


def _notify(report: Report) -> None:
    for fn in list(_listeners):
        with contextlib.suppress(Exception):  # a listener never changes an outcome
            fn(report)


class VerifierFailure(Exception):
    """A verifier raised or timed out (internal; becomes a halt with the error)."""

    def __init__(self, verifier: str, code: str, error: str) -> None:
        super().__init__(f"{verifier}: {error}")
        self.verifier = verifier
        self.code = code
        self.error = error


@dataclass
class GateResult:
    """The outcome of one crossing.

    ``update`` is what may be written to user state (``None`` unless released);
    ``writes`` are the gate's own state writes (issue lists for a re-render).
    """

    report: Report
    update: dict[str, Any] | None
    route: str
    rerender_to: str | None = None
    writes: dict[str, Any] = field(default_factory=dict)

    @property
    def released(self) -> bool:
        return self.report.released


def _run_in_thread(fn: Callable[[], Any], timeout: float) -> Any:
    """Run ``fn`` in a daemon thread; a hung verifier cannot keep the process alive."""
    box: dict[str, Any] = {}
    ctx = contextvars.copy_context()

    def target() -> None:
        try:
            box["value"] = ctx.run(fn)
        except BaseException as exc:
            box["error"] = exc

    t = threading.Thread(target=target, name="trustgate-verifier", daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise TimeoutError(f"did not finish within {timeout:g}s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


async def _arun_in_thread(fn: Callable[[], Any], timeout: float | None) -> Any:
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[Any] = loop.create_future()
    ctx = contextvars.copy_context()

    def settle(value: Any, err: BaseException | None) -> None:
        if fut.done():
            return
        if err is not None:
            fut.set_exception(err)
        else:
            fut.set_result(value)

    def target() -> None:
        try:
            value = ctx.run(fn)
        except BaseException as exc:
            loop.call_soon_threadsafe(settle, None, exc)
        else:
            loop.call_soon_threadsafe(settle, value, None)

    threading.Thread(target=target, name="trustgate-verifier", daemon=True).start()
    try:
        return await asyncio.wait_for(asyncio.shield(fut), timeout)
    except TimeoutError:
        raise TimeoutError(f"did not finish within {timeout:g}s") from None


def _check_result(name: str, result: Any) -> list[Finding]:
    if isinstance(result, Finding):
        return [result]
    if not isinstance(result, (list, tuple)) or not all(isinstance(f, Finding) for f in result):
        raise TypeError(f"returned {type(result).__name__}, expected list[Finding]")
    return list(result)


def _attempts(v: Verifier) -> int:
    return 1 + max(0, int(getattr(v, "retries", 0) or 0))


def _verify_sync(v: Verifier, claims: Any, evidence: Evidence) -> list[Finding]:
    last: BaseException | None = None
    code = "verifier_error"
    for _ in range(_attempts(v)):
        try:
            if v.timeout is None:
                result = v.verify(claims, evidence)
            else:
                result = _run_in_thread(lambda: v.verify(claims, evidence), v.timeout)
            return _check_result(v.name, result)
        except GraphBubbleUp:
            raise
        except TimeoutError as exc:
            last, code = exc, "verifier_timeout"
        except Exception as exc:
            last, code = exc, "verifier_error"
    raise VerifierFailure(v.name, code, f"{type(last).__name__}: {last}")


async def _verify_async(v: Verifier, claims: Any, evidence: Evidence) -> list[Finding]:
    last: BaseException | None = None
    code = "verifier_error"
    averify = getattr(v, "averify", None)
    for _ in range(_attempts(v)):
        try:
            if averify is not None:
                result = await asyncio.wait_for(averify(claims, evidence), v.timeout)
            else:
                result = await _arun_in_thread(lambda: v.verify(claims, evidence), v.timeout)
            return _check_result(v.name, result)
        except GraphBubbleUp:
            raise
        except TimeoutError as exc:
            last, code = exc, "verifier_timeout"
        except Exception as exc:
            last, code = exc, "verifier_error"
    raise VerifierFailure(v.name, code, f"{type(last).__name__}: {last}")


def _jsonable(value: Any) -> Any:
    return to_jsonable_python(value, fallback=repr)


class TrustGate:
    """A trust boundary: verifies what one node claims before anything acts on it.

    Args:
        name: the gate's name (also its node name once guarded).
        reads: where the claims are in the guarded node's update: a
            :class:`~trustgate.readers.ClaimsReader`, a state key, or a function.
        verifiers: deterministic checks (plus at most a model verifier).
        policy: what a blocking failure does; a list is applied in order. Default
            :class:`~trustgate.policy.Halt`.
        evidence: where the verifiers read truth (fixed, from state, from context).
        require_claims: when nothing is read, fail ``no_claims`` instead of passing.

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
        reads: ClaimsReader | str | Callable[[Mapping[str, Any]], Any],
        verifiers: Sequence[Verifier] = (),
        policy: Policy | Sequence[Policy] | None = None,
        evidence: EvidenceSources | None = None,
        require_claims: bool = True,
    ) -> None:
        if not name or not isinstance(name, str):
            raise ConfigurationError("a gate needs a name")
        for v in verifiers:
            if not isinstance(v, Verifier):
                raise ConfigurationError(
                    f"{v!r} is not a Verifier (needs name, timeout and verify(claims, evidence))"
                )
        names = [v.name for v in verifiers]
        if len(set(names)) != len(names):
            raise ConfigurationError(f"verifier names must be unique in a gate: {names}")
        self.name = name
        self.reader = as_reader(reads)
        self.verifiers = tuple(verifiers)
        self.policies = policy_chain(policy)
        self.evidence = evidence if evidence is not None else EvidenceSources()
        self.require_claims = require_claims
        self._paused: dict[Any, list[Finding]] = {}
        self._paused_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TrustGate({self.name!r}, verifiers={[v.name for v in self.verifiers]})"

    # -- reading -------------------------------------------------------------------

    def _read(self, update: Mapping[str, Any]) -> tuple[Any, list[Finding]]:
        try:
            claims = self.reader.read(update)
        except ClaimParseError as exc:
            return None, [Finding.failed("gate", "malformed_claim", str(exc))]
        if claims is None or (isinstance(claims, (list, tuple, dict, str)) and not claims):
            if self.require_claims:
                return None, [
                    Finding.failed(
                        "gate",
                        "no_claims",
                        f"no claims at {self.reader.target} in this step's update",
                    )
                ]
            return None, []
        return claims, []

    def _start(
        self,
        update: Mapping[str, Any],
        node: str,
        state: Mapping[str, Any] | None,
        context: Any,
        attempt: int,
    ) -> tuple[Crossing, bool]:
        claims, findings = self._read(update)
        crossing = Crossing(
            gate=self.name,
            node=node,
            reader=self.reader,
            update=dict(update),
            claims=claims,
            findings=findings,
            evidence=Evidence(),
            state=state or {},
            attempt=attempt,
        )
        try:
            crossing.evidence = self.evidence.resolve(state, context)
        except ConfigurationError as exc:
            crossing.error = str(exc)
            crossing.findings.append(Finding.failed("gate", "evidence_unavailable", str(exc)))
            crossing.halt(str(exc))
            return crossing, False
        return crossing, claims is not None

    def _begin(
        self,
        update: Mapping[str, Any],
        node: str,
        state: Mapping[str, Any] | None,
        context: Any,
        attempt: int,
        meta: Mapping[str, Any] | None,
    ) -> tuple[dict[str, Any], Crossing, Any, bool]:
        """Read claims and evidence; say whether verifiers must run (the sync and async
        crossings differ only in how they call the verifiers)."""
        full = {"started_at": datetime.now(UTC), **(meta or {})}
        crossing, has_claims = self._start(update, node, state, context, attempt)
        crossing.reverify = lambda u: self._reverify_sync(u, crossing)
        key = full.get("crossing_key")
        must_verify = not self._restore(crossing, key) and has_claims
        return full, crossing, key, must_verify

    def _end(self, span: Any, crossing: Crossing, meta: dict[str, Any], key: Any) -> GateResult:
        self._decide_once(crossing, meta, key, span)
        result = self._finish(crossing, meta)
        span.finish(result.report)
        return result

    def _fail_verifier(self, crossing: Crossing, failure: VerifierFailure) -> None:
        crossing.error = str(failure)
        crossing.findings.append(Finding.failed(failure.verifier, failure.code, failure.error))
        crossing.halt(f"{failure.verifier}/{failure.code}")

    def _reverify_sync(
        self, update: dict[str, Any], crossing: Crossing
    ) -> tuple[Any, list[Finding]]:
        claims, findings = self._read(update)
        if claims is None:
            return claims, findings
        for v in self.verifiers:
            try:
                findings.extend(_verify_sync(v, claims, crossing.evidence))
            except VerifierFailure as exc:
                findings.append(Finding.failed(exc.verifier, exc.code, exc.error))
        return claims, findings

    # -- deciding ------------------------------------------------------------------

    def _decide(self, crossing: Crossing, meta: Mapping[str, Any], span: Any = None) -> None:
        if crossing.route != "release":
            return
        crossing.report_draft = lambda: self._report(crossing, meta, draft=True).to_json_dict()
        for p in self.policies:
            if span is None:
                p.apply(crossing)
            else:
                with span.policy(type(p).__name__):
                    p.apply(crossing)
            if crossing.settled:
                break
        if crossing.route == "release" and crossing.unresolved:
            crossing.halt("unresolved: " + ", ".join(f.code for f in crossing.unresolved))

    def _report(
        self, crossing: Crossing, meta: Mapping[str, Any], *, draft: bool = False
    ) -> Report:
        claims = crossing.claims
        claim_list = (
            []
            if claims is None
            else list(claims)
            if isinstance(claims, (list, tuple))
            else [claims]
        )
        released = crossing.route == "release" and not draft
        return Report(
            gate=self.name,
            node=crossing.node,
            claims=[_jsonable(c) for c in claim_list],
            findings=list(crossing.findings),
            decision="review" if draft else crossing.decision,
            overrides=list(crossing.overrides),
            released=released,
            error=crossing.error,
            approval=crossing.approval,
            attempt=crossing.attempt,
            thread_id=meta.get("thread_id"),
            run_id=meta.get("run_id"),
            step=meta.get("step"),
            checkpoint_ns=meta.get("checkpoint_ns"),
            task_id=meta.get("task_id"),
            started_at=meta.get("started_at") or datetime.now(UTC),
            finished_at=datetime.now(UTC),
        )

    def _finish(self, crossing: Crossing, meta: Mapping[str, Any]) -> GateResult:
        report = self._report(crossing, meta)
        _notify(report)
        return GateResult(
            report=report,
            update=crossing.update if crossing.route == "release" else None,
            route=crossing.route,
            rerender_to=crossing.rerender_to,
            writes=dict(crossing.writes),
        )

    # -- review resumes ------------------------------------------------------------

    def _restore(self, crossing: Crossing, key: Any) -> bool:
        """Reuse the findings a crossing had when it paused for review.

        A resumed node runs again from the top; without this, a model verifier would
        be asked again and could answer differently from what the person reviewed.
        The cache is per process and bounded: after a restart the checks run again.
        """
        if key is None or crossing.route != "release":
            return False
        with self._paused_lock:
            findings = self._paused.get(key)
        if findings is None:
            return False
        crossing.findings = list(findings)
        return True

    def _decide_once(
        self, crossing: Crossing, meta: Mapping[str, Any], key: Any, span: Any = None
    ) -> None:
        snapshot = list(crossing.findings)
        try:
            self._decide(crossing, meta, span)
        except GraphBubbleUp:
            if key is not None:
                with self._paused_lock:
                    self._paused[key] = snapshot
                    while len(self._paused) > _PAUSED_MAX:
                        self._paused.pop(next(iter(self._paused)))
            raise
        if key is not None:
            with self._paused_lock:
                self._paused.pop(key, None)

    # -- public --------------------------------------------------------------------

    def check(
        self,
        update: Mapping[str, Any],
        *,
        node: str = "",
        state: Mapping[str, Any] | None = None,
        context: Any = None,
        attempt: int = 1,
        meta: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        parent: Any = None,
    ) -> GateResult:
        """Run one crossing over ``update`` (the guarded node's raw update).

        ``config`` and ``parent`` only place the crossing's span (``parent`` is the
        guarded node's :func:`trustgate.otel.span_link`, recorded as a span link).

        Example:
            ```python
            result = gate.check({"review": review}, node="reviewer")
            if not result.released:
                raise GateHalted(result.report)
            ```
        """
        with otel.crossing(self.name, node, config=config, attempt=attempt, link=parent) as span:
            meta, crossing, key, must_verify = self._begin(
                update, node, state, context, attempt, meta
            )
            if must_verify:
                for v in self.verifiers:
                    try:
                        with span.verifier(v.name) as vs:
                            found = _verify_sync(v, crossing.claims, crossing.evidence)
                            vs.record(found)
                        crossing.findings.extend(found)
                    except VerifierFailure as exc:
                        self._fail_verifier(crossing, exc)
                        break
            return self._end(span, crossing, meta, key)

    async def acheck(
        self,
        update: Mapping[str, Any],
        *,
        node: str = "",
        state: Mapping[str, Any] | None = None,
        context: Any = None,
        attempt: int = 1,
        meta: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        parent: Any = None,
    ) -> GateResult:
        """Async :meth:`check`; verifiers with ``averify`` run natively."""
        with otel.crossing(self.name, node, config=config, attempt=attempt, link=parent) as span:
            meta, crossing, key, must_verify = self._begin(
                update, node, state, context, attempt, meta
            )
            if must_verify:
                for v in self.verifiers:
                    try:
                        with span.verifier(v.name) as vs:
                            found = await _verify_async(v, crossing.claims, crossing.evidence)
                            vs.record(found)
                        crossing.findings.extend(found)
                    except VerifierFailure as exc:
                        self._fail_verifier(crossing, exc)
                        break
            return self._end(span, crossing, meta, key)
