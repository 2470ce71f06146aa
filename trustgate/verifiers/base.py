"""The verifier contract and the evidence a gate hands to it.

A gate does not know what a "citation" or a "draft" is: it reads claims from the
guarded node's update, assembles an :class:`Evidence` bundle for this run, and hands
both to each :class:`Verifier`. Evidence is resolved per run (fixed at build time,
read from state, or taken from ``Runtime.context``) so one compiled graph can serve
many repositories or incidents without rebuilding.

Verifiers are deterministic: the same claims and evidence give the same findings.
A verifier that raises is a failed inspection, never a pass (the gate halts).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from types import MappingProxyType
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    Literal,
    Protocol,
    TypeAlias,
    overload,
    runtime_checkable,
)

from typing_extensions import TypeVar

from trustgate._findings import Finding
from trustgate.errors import ConfigurationError

if TYPE_CHECKING:
    from trustgate.evidence.brief import Brief, EvidenceSet
    from trustgate.evidence.ledger import ArtifactLedger
    from trustgate.evidence.record import Record
    from trustgate.evidence.workspace import Workspace

__all__ = [
    "Evidence",
    "EvidenceSources",
    "FromContext",
    "FromState",
    "FunctionVerifier",
    "Verifier",
    "verifier",
]


@dataclass(frozen=True, slots=True)
class FromState:
    """Take an evidence source from the graph state key ``key``, as it stood when the
    guarded node's step began.

    What a model can write is no evidence: ``guard()`` refuses a gate whose evidence key
    another node can write while it calls a model or runs tools the model chooses (a
    deep agent's ``write_file`` into its ``files``), naming the writers. ``trusted=True``
    says that what those nodes write is evidence for you (results of tools you trust).
    The guarded node itself may not change its evidence (``evidence_rewritten``);
    with ``before_step=True`` on an append-only channel (``messages``, a list under
    ``operator.add``) it may append to it, since the gate reads the channel as it stood
    before the step, and only editing or removing what was there is refused.

    Example:
        ```python
        EvidenceSources(record=FromState("record"))
        ```
    """

    key: str
    trusted: bool = False
    before_step: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key.strip():
            raise ConfigurationError(f"FromState needs a state key, not {self.key!r}")
        if not isinstance(self.trusted, bool) or not isinstance(self.before_step, bool):
            raise ConfigurationError("FromState: trusted and before_step are True or False")


@dataclass(frozen=True, slots=True)
class FromContext:
    """Take an evidence source from the run's ``Runtime.context`` attribute ``attr``.

    ``context`` may be a dataclass/pydantic object (attribute) or a mapping (key), so
    one compiled graph serves a different repository per ``invoke(..., context=...)``.

    Example:
        ```python
        EvidenceSources(workspace=FromContext("workspace"))
        ```
    """

    attr: str

    def __post_init__(self) -> None:
        if not isinstance(self.attr, str) or not self.attr.strip():
            raise ConfigurationError(f"FromContext needs an attribute name, not {self.attr!r}")


Source: TypeAlias = Any
"""A fixed value, a :class:`FromState` or a :class:`FromContext`."""

_MISSING: Any = object()


def _resolve(source: Source, state: Mapping[str, Any] | None, context: Any, label: str) -> Any:
    if isinstance(source, FromState):
        if state is None or source.key not in state:
            raise ConfigurationError(
                f"evidence {label!r} should come from state key {source.key!r}, "
                "which the state does not hold"
            )
        return state[source.key]
    if isinstance(source, FromContext):
        if context is None:
            raise ConfigurationError(
                f"evidence {label!r} should come from Runtime.context.{source.attr}, "
                "but the run has no context (pass context=... to invoke)"
            )
        if isinstance(context, Mapping):
            value = context.get(source.attr, _MISSING)
        else:
            value = getattr(context, source.attr, _MISSING)
        if value is _MISSING:
            raise ConfigurationError(
                f"evidence {label!r} should come from Runtime.context.{source.attr}, "
                "which the context does not have"
            )
        return value
    return source


@dataclass(frozen=True, slots=True)
class Evidence:
    """Where truth is read from during one crossing.

    Every field is optional: a verifier that needs one calls :meth:`require`, which
    fails with a clear :class:`~trustgate.errors.ConfigurationError` (and so halts the
    crossing) instead of the verifier silently passing for lack of a source.

    Example:
        ```python
        from trustgate.files import Workspace

        ev = Evidence(workspace=Workspace("."))
        ws = ev.require("workspace")
        ```
    """

    workspace: Workspace | str | PathLike[str] | None = None
    """The repository citations are replayed against (file checks); a path is opened
    as a :class:`~trustgate.files.Workspace`."""
    record: Record | Mapping[str, str] | None = None
    """The numbered record a draft cites (the draft check)."""
    brief: Brief | Mapping[str, Any] | None = None
    """The closed list of approved citations (contract checks)."""
    evidence_set: EvidenceSet | Mapping[str, Any] | None = None
    """The approved figures a draft may state (the integrity check)."""
    ledger: ArtifactLedger | None = None
    """Where acquired artifacts are recorded (grounding checks)."""
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """Any other source, by name (a verifier of your own reads it with ``require``)."""

    @overload
    def require(self, name: Literal["workspace"]) -> Workspace | str | PathLike[str]: ...
    @overload
    def require(self, name: Literal["record"]) -> Record | Mapping[str, str]: ...
    @overload
    def require(self, name: Literal["brief"]) -> Brief | Mapping[str, Any]: ...
    @overload
    def require(self, name: Literal["evidence_set"]) -> EvidenceSet | Mapping[str, Any]: ...
    @overload
    def require(self, name: Literal["ledger"]) -> ArtifactLedger: ...
    @overload
    def require(self, name: str) -> Any: ...
    def require(self, name: str) -> Any:
        """The named source (a field or an ``extra`` key), or a configuration error."""
        value = getattr(self, name) if name in _FIELDS else self.extra.get(name)
        if value is None:
            raise ConfigurationError(
                f"this verifier needs evidence {name!r}, but the gate was given none"
            )
        return value

    def get(self, name: str, default: Any = None) -> Any:
        if name in _FIELDS:
            value = getattr(self, name)
            return default if value is None else value
        return self.extra.get(name, default)


_FIELDS = ("workspace", "record", "brief", "evidence_set", "ledger")


@dataclass(frozen=True, slots=True)
class EvidenceSources:
    """How a gate finds each evidence source: fixed, :class:`FromState`, :class:`FromContext`.

    Example:
        ```python
        from trustgate.contracts import Brief

        sources = EvidenceSources(
            workspace=FromContext("workspace"),
            record=FromState("record"),
            brief=Brief(citations=[...]),
        )
        ```
    """

    workspace: Source = None
    record: Source = None
    brief: Source = None
    evidence_set: Source = None
    ledger: Source = None
    extra: Mapping[str, Source] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not isinstance(self.extra, Mapping) or not all(
            isinstance(k, str) and k for k in self.extra
        ):
            raise ConfigurationError(
                f"EvidenceSources: extra must map names to sources, not {self.extra!r}"
            )
        for name in (*_FIELDS, *self.extra):
            value = getattr(self, name) if name in _FIELDS else self.extra[name]
            if isinstance(value, type):
                raise ConfigurationError(
                    f"EvidenceSources: {name}= takes a source (a value, FromState(...), "
                    f"FromContext(...)), not the class {value.__name__}"
                )

    def resolve(self, state: Mapping[str, Any] | None = None, context: Any = None) -> Evidence:
        """Materialise the sources for one crossing (state and context of this run)."""
        return Evidence(
            workspace=_resolve(self.workspace, state, context, "workspace"),
            record=_resolve(self.record, state, context, "record"),
            brief=_resolve(self.brief, state, context, "brief"),
            evidence_set=_resolve(self.evidence_set, state, context, "evidence_set"),
            ledger=_resolve(self.ledger, state, context, "ledger"),
            extra=MappingProxyType(
                {k: _resolve(v, state, context, k) for k, v in self.extra.items()}
            ),
        )

    def state_keys(self) -> set[str]:
        """State keys these sources read (the gate must be able to see them)."""
        return {s.key for s in self.state_sources()}

    def state_sources(self) -> list[FromState]:
        """The :class:`FromState` sources, in order."""
        found = [getattr(self, f) for f in _FIELDS if isinstance(getattr(self, f), FromState)]
        found += [v for v in self.extra.values() if isinstance(v, FromState)]
        return found


ClaimsT = TypeVar("ClaimsT", default=Any)
"""The type of the claims a verifier checks (``Any`` unless said)."""
ClaimsT_contra = TypeVar("ClaimsT_contra", contravariant=True, default=Any)


@runtime_checkable
class Verifier(Protocol[ClaimsT_contra]):
    """A deterministic check of claims against evidence.

    Generic in the claims it accepts: ``Verifier[str]`` checks a text (what
    :class:`~trustgate.LastAIText` reads), ``Verifier[ChangesManifest]`` a model; a bare
    ``Verifier`` is ``Verifier[Any]``. A gate's verifiers must accept what its reader
    reads (``TrustGate[ClaimsT]``), which a type checker verifies.

    Implementations may also define ``async def averify(claims, evidence)``; the
    async gate uses it when present and runs ``verify`` in a worker thread otherwise.
    ``timeout`` (seconds, ``None`` for none) bounds one run: exceeding it halts the
    crossing, because an inspection that did not finish is not a pass.

    Example:
        ```python
        class NoTodo:
            name = "no_todo"
            timeout = 1.0

            def verify(self, claims, evidence):
                if "TODO" in str(claims):
                    return [Finding.failed(self.name, "todo", "draft still has a TODO")]
                return [Finding.ok(self.name)]
        ```
    """

    name: str
    timeout: float | None

    def verify(self, claims: ClaimsT_contra, evidence: Evidence) -> list[Finding]: ...


def _as_findings(name: str, result: Any) -> list[Finding]:
    if isinstance(result, Finding):
        return [result]
    if result is None:
        raise ConfigurationError(
            f"verifier {name!r} returned None; return Finding(s) (an empty result "
            "would look like a pass that inspected nothing)"
        )
    if isinstance(result, bool):
        raise ConfigurationError(
            f"verifier {name!r} returned a bool; return Finding.ok/Finding.failed so "
            "the report says what was checked"
        )
    findings = list(result)
    for f in findings:
        if not isinstance(f, Finding):
            raise ConfigurationError(
                f"verifier {name!r} returned {type(f).__name__}, expected Finding"
            )
    return findings


class FunctionVerifier(Generic[ClaimsT]):
    """Turn a plain (sync or async) function ``fn(claims, evidence)`` into a verifier.

    The function returns one :class:`~trustgate.Finding` or an iterable of
    them. ``None`` and bare booleans are rejected: a check must say what it found.

    Example:
        ```python
        def cites_something(claims, evidence):
            if not claims.get("citations"):
                return Finding.failed("cites_something", "no_evidence", "nothing cited")
            return Finding.ok("cites_something")

        v = FunctionVerifier(cites_something, timeout=2.0)
        ```
    """

    def __init__(
        self,
        fn: Callable[[ClaimsT, Evidence], Any],
        *,
        name: str | None = None,
        timeout: float | None = None,
    ) -> None:
        from trustgate import _validate

        if not callable(fn) or isinstance(fn, type):
            raise ConfigurationError(
                f"FunctionVerifier needs a function (claims, evidence) -> findings, not {fn!r}"
            )
        if name is not None:
            _validate.text("FunctionVerifier", "name", name)
        _validate.seconds("FunctionVerifier", "timeout", timeout, optional=True)
        self.fn = fn
        self.name: str = name or getattr(fn, "__name__", None) or "function_verifier"
        self.timeout: float | None = timeout
        self.is_async = inspect.iscoroutinefunction(fn)

    def verify(self, claims: ClaimsT, evidence: Evidence) -> list[Finding]:
        if self.is_async:
            coro: Awaitable[Any] = self.fn(claims, evidence)
            return _as_findings(self.name, asyncio.run(_await(coro)))
        return _as_findings(self.name, self.fn(claims, evidence))

    async def averify(self, claims: ClaimsT, evidence: Evidence) -> list[Finding]:
        if self.is_async:
            return _as_findings(self.name, await self.fn(claims, evidence))
        # a sync function runs on trustgate's verifier threads, not the loop's default
        # executor (the gate does this itself; this path is for direct callers)
        from trustgate import _executor

        limit = self.timeout if self.timeout is not None else 30.0
        found: list[Finding] = await _executor.run_async(
            lambda: self.verify(claims, evidence), limit, label=self.name
        )
        return found

    def __call__(self, claims: ClaimsT, evidence: Evidence) -> list[Finding]:
        return self.verify(claims, evidence)

    def __repr__(self) -> str:
        return f"FunctionVerifier({self.name!r}, timeout={self.timeout!r})"


async def _await(coro: Awaitable[Any]) -> Any:
    return await coro


@overload
def verifier(fn: Callable[[ClaimsT, Evidence], Any], /) -> FunctionVerifier[ClaimsT]: ...


@overload
def verifier(
    *, name: str | None = None, timeout: float | None = None
) -> Callable[[Callable[[ClaimsT, Evidence], Any]], FunctionVerifier[ClaimsT]]: ...


def verifier(
    fn: Callable[[ClaimsT, Evidence], Any] | None = None,
    /,
    *,
    name: str | None = None,
    timeout: float | None = None,
) -> (
    FunctionVerifier[ClaimsT]
    | Callable[[Callable[[ClaimsT, Evidence], Any]], FunctionVerifier[ClaimsT]]
):
    """Decorator form of :class:`FunctionVerifier`.

    Example:
        ```python
        @verifier(timeout=1.0)
        def verdict_is_known(claims, evidence):
            ok = claims["verdict"] in {"APPROVE", "REQUEST_CHANGES"}
            return Finding.ok("verdict_is_known") if ok else Finding.failed(
                "verdict_is_known", "unknown_verdict", "verdict not recognised"
            )
        ```
    """
    if fn is not None:
        return FunctionVerifier(fn, name=name, timeout=timeout)

    def wrap(f: Callable[[ClaimsT, Evidence], Any]) -> FunctionVerifier[ClaimsT]:
        return FunctionVerifier(f, name=name, timeout=timeout)

    return wrap
