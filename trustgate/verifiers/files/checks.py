"""The file verifiers as gate steps (the :class:`~trustgate.Verifier` protocol).

Each wraps one pure check from this package and takes its source of truth from the
crossing's :class:`~trustgate.Evidence`: the workspace, and for frozen
evidence the ledger. A missing source is a configuration error, which halts the
crossing; it is never a pass for lack of anything to check.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from trustgate import _limits
from trustgate._claims import ChangeClaim, HashClaim, Locator
from trustgate._findings import Finding, Severity, Strike
from trustgate.errors import (
    ArtifactIntegrityError,
    ClaimTooLarge,
    EvidenceRefused,
    GitError,
    LedgerConflict,
    LedgerTampered,
)
from trustgate.evidence.artifacts import Connector, acquire_external
from trustgate.evidence.ledger import ArtifactLedger, InMemoryLedger
from trustgate.evidence.workspace import Workspace
from trustgate.verifiers.base import Evidence
from trustgate.verifiers.files.changes import check_change_claim
from trustgate.verifiers.files.citations import DEFAULT_MIN_CHARS, DEFAULT_WINDOW, replay_manifest
from trustgate.verifiers.files.hashes import check_hash_claim
from trustgate.verifiers.files.trust import Requirement, TrustBar, meets_trust_bar

__all__ = ["ChangeCheck", "CitationReplay", "GroundingCheck", "HashCheck"]


def _too_large(claims: Any, verifier: str, *, entries: int = 0) -> list[Finding] | None:
    """One ``claim_too_large`` finding when the claims are past a cap of
    :mod:`trustgate._limits` (checked before any of them is read), else ``None``."""
    try:
        _limits.check_claim(claims, "the claims")
        if entries > _limits.MAX_CITATIONS:
            raise ClaimTooLarge(
                f"the claims carry {entries:,} evidence entries, over the "
                f"{_limits.MAX_CITATIONS:,}-entry cap; nothing in them was checked"
            )
    except ClaimTooLarge as exc:
        return [Finding.failed(verifier, exc.code, str(exc))]
    return None


def _workspace(evidence: Evidence) -> Workspace:
    ws = evidence.require("workspace")
    if not isinstance(ws, Workspace):
        ws = Workspace(ws)  # a path from state or context
    return ws


class CitationReplay:
    """Replay a changes manifest's citations and changed files (code review).

    Claims: a ``ChangesManifest``, a list of ``SelfReport`` items, or the model's raw
    JSON. Evidence: ``workspace`` (a ``Workspace`` or a path).

    Example:
        ```python
        from trustgate.files import ChangesManifest

        gate = TrustGate(
            "inspect",
            reads=FromKey("manifest", model=ChangesManifest),
            verifiers=[CitationReplay()],
            evidence=EvidenceSources(workspace="/repo"),
        )
        ```
    """

    def __init__(
        self,
        *,
        name: str = "citation_replay",
        window: int = DEFAULT_WINDOW,
        min_chars: int = DEFAULT_MIN_CHARS,
        base: str = "HEAD",
        undeclared_severity: Severity = "warn",
        timeout: float | None = 30.0,
    ) -> None:
        self.name = name
        self.window = window
        self.min_chars = min_chars
        self.base = base
        self.undeclared_severity: Severity = undeclared_severity
        self.timeout = timeout

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        base = evidence.get("base", self.base)
        return replay_manifest(
            claims,
            _workspace(evidence),
            window=self.window,
            min_chars=self.min_chars,
            base=base,
            undeclared_severity=self.undeclared_severity,
        )


def _as_list(claims: Any, model: type[BaseModel]) -> list[Any]:
    if isinstance(claims, (model, Mapping)):
        return [claims]
    if isinstance(claims, Sequence) and not isinstance(claims, (str, bytes)):
        return list(claims)
    return [claims]


_M = TypeVar("_M", bound=BaseModel)


def _each_claim(
    claims: Any, model: type[_M], verifier: str, check: Callable[[_M], list[Finding]]
) -> list[Finding]:
    """Check one claim or a list of them; a malformed one is a failed finding, not a crash."""
    out: list[Finding] = []
    for raw in _as_list(claims, model):
        try:
            claim = model.model_validate(raw)
        except ValidationError as exc:
            what = model.__name__
            msg = f"{what} is malformed: {exc.errors()[0]['msg']}"
            out.append(Finding.failed(verifier, "malformed_claim", msg))
            continue
        out.extend(check(claim))
    return out


class ChangeCheck:
    """Check ``ChangeClaim``s against the real git diff (recomputed every crossing)."""

    def __init__(
        self,
        *,
        name: str = "change_check",
        undeclared_severity: Severity = "warn",
        timeout: float | None = 30.0,
    ) -> None:
        self.name = name
        self.undeclared_severity: Severity = undeclared_severity
        self.timeout = timeout

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        refused = _too_large(claims, self.name)
        if refused is not None:
            return refused
        ws = _workspace(evidence)
        return _each_claim(
            claims,
            ChangeClaim,
            self.name,
            lambda c: check_change_claim(c, ws, undeclared_severity=self.undeclared_severity),
        )


class HashCheck:
    """Recompute the sha256 behind every ``HashClaim``."""

    def __init__(self, *, name: str = "hash_check", timeout: float | None = 30.0) -> None:
        self.name = name
        self.timeout = timeout

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        refused = _too_large(claims, self.name)
        if refused is not None:
            return refused
        ws = _workspace(evidence)
        return _each_claim(claims, HashClaim, self.name, lambda c: [check_hash_claim(c, ws)])


def _with_detail(finding: Finding, **extra: Any) -> Finding:
    return finding.model_copy(update={"detail": {**finding.detail, **extra}})


def _struck(finding: Finding, *path: str | int) -> Finding:
    """The finding, proposing that ``path`` of the claims be struck (in place of what it
    proposed about the locator on its own)."""
    return finding.model_copy(update={"proposals": (Strike(path=path),)})


class GroundingCheck:
    """Acquire the evidence a proposal points at, then hold each field to its trust bar.

    The incident investigation's gate. Claims map a field to ``{"value": ..., "evidence":
    [...]}`` where each evidence entry is a file locator (``{"path", "start_line",
    "end_line", "revision"}``), an external locator (``{"source", "uri"}``) or the id of
    an artifact already in the ledger. The agent locates; the gate reads, hashes and
    freezes. Fields grounded only by unverified evidence fail ``unverified_evidence``,
    which a ``Review`` policy routes to a person. An evidence entry that could not be
    acquired fails proposing ``Strike((field, "evidence", i))`` and a field left with
    nothing that grounds it ``Strike((field,))``: what a policy should drop before
    anything downstream reads the proposal.

    Evidence: ``workspace`` (for file locators) and ``ledger`` (an in-memory one is
    used when none is given, so artifacts at least live for the crossing).
    """

    def __init__(
        self,
        bars: Sequence[TrustBar] | Mapping[str, Requirement] = (),
        *,
        default: Requirement = "unverified",
        name: str = "grounding",
        connectors: Mapping[str, Connector] | Sequence[Connector] = (),
        timeout: float | None = 60.0,
    ) -> None:
        self.bars = bars
        self.default: Requirement = default
        self.name = name
        self.connectors = connectors
        self.timeout = timeout

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        entries = (
            sum(
                len(p.get("evidence") or [])
                for p in claims.values()
                if isinstance(p, Mapping) and isinstance(p.get("evidence"), Sequence)
            )
            if isinstance(claims, Mapping)
            else 0
        )
        refused = _too_large(claims, self.name, entries=entries)
        if refused is not None:
            return refused
        if isinstance(claims, BaseModel):
            claims = claims.model_dump()
        if not isinstance(claims, Mapping) or not claims:
            return [
                Finding.failed(
                    self.name,
                    "malformed_claim",
                    "a proposal must map field names to grounded values",
                )
            ]
        ledger = evidence.get("ledger")
        if ledger is None:  # (an empty ledger is falsy: compare with None)
            ledger = InMemoryLedger()
        if not isinstance(ledger, ArtifactLedger):
            return [Finding.failed(self.name, "no_source", "evidence 'ledger' is not a ledger")]
        findings: list[Finding] = []
        patch: dict[str, Any] = {}
        for name, proposal in claims.items():
            if not isinstance(proposal, Mapping):
                patch[name] = proposal  # meets_trust_bar reports it as malformed
                continue
            ids: list[str] = []
            for i, entry in enumerate(proposal.get("evidence") or []):
                subject = f"{name}[{i}]"
                before = len(findings)
                artifact_id = self._acquire(entry, evidence, ledger, subject, findings)
                if artifact_id is not None:
                    ids.append(artifact_id)
                    # an id already in the ledger adds no finding of its own
                    for k in range(before, len(findings)):
                        findings[k] = _with_detail(findings[k], field=name)
                else:  # evidence that could not be acquired is struck from the proposal
                    for k in range(before, len(findings)):
                        findings[k] = _struck(findings[k], name, "evidence", i)
            patch[name] = {"value": proposal.get("value"), "artifacts": ids}
        findings.extend(meets_trust_bar(patch, ledger, self.bars, default=self.default))
        return findings

    def _acquire(
        self,
        entry: Any,
        evidence: Evidence,
        ledger: ArtifactLedger,
        subject: str,
        findings: list[Finding],
    ) -> str | None:
        if isinstance(entry, str):
            if entry in ledger:
                return entry
            findings.append(
                Finding.failed(
                    self.name,
                    "unknown_artifact",
                    f"artifact {entry!r} is not in the ledger",
                    subject=subject,
                )
            )
            return None
        if isinstance(entry, Mapping) and {"excerpt", "content", "text"} & set(entry):
            findings.append(
                Finding.failed(
                    self.name,
                    "agent_excerpt",
                    "the evidence entry carries text written by the agent; evidence is acquired "
                    "by locator only and trustgate reads the bytes itself",
                    subject=subject,
                )
            )
            return None
        try:
            if isinstance(entry, Mapping) and "uri" in entry:
                artifact = ledger.put(
                    acquire_external(
                        str(entry.get("source", "")), str(entry["uri"]), self.connectors
                    )
                )
            else:
                locator = entry if isinstance(entry, Locator) else Locator.model_validate(entry)
                artifact = _workspace(evidence).acquire(locator, ledger)
        except ValidationError as exc:
            findings.append(
                Finding.failed(
                    self.name,
                    "malformed_claim",
                    f"evidence entry is malformed: {exc.errors()[0]['msg']}",
                    subject=subject,
                )
            )
            return None
        except EvidenceRefused as exc:
            findings.append(exc.to_finding(self.name, subject=subject))
            return None
        except GitError as exc:
            findings.append(Finding.failed(self.name, "git_error", str(exc), subject=subject))
            return None
        except LedgerTampered as exc:
            findings.append(
                Finding.failed(self.name, "ledger_tampered", exc.reason, subject=subject)
            )
            return None
        except (ArtifactIntegrityError, LedgerConflict) as exc:
            findings.append(Finding.failed(self.name, "ledger_conflict", str(exc), subject=subject))
            return None
        findings.append(
            Finding.ok(
                self.name,
                f"acquired {artifact.uri}",
                subject=subject,
                detail={"artifact_id": artifact.id, "verification": artifact.verification},
            )
        )
        return artifact.id
