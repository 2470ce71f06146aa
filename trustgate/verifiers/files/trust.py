"""Per-field trust bars: a value is only as good as what grounds it.

An investigator proposes field values, each grounded by artifact ids. A field whose bar
requires verified evidence fails when every artifact grounding it is unverified,
tampered or unknown; the approval policy then routes the proposal to a human.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from trustgate._findings import Finding, Strike
from trustgate.errors import ArtifactIntegrityError
from trustgate.evidence.artifacts import Artifact
from trustgate.evidence.ledger import ArtifactLedger, ArtifactStatus

__all__ = ["GroundedValue", "TrustBar", "check_artifact_refs", "meets_trust_bar"]

VERIFIER = "trust_bar"
Requirement = Literal["verified", "unverified", "none"]


class TrustBar(BaseModel):
    """What grounding a field needs: ``verified`` evidence, any known evidence, or none."""

    model_config = ConfigDict(frozen=True)

    field: str
    require: Requirement = "verified"


class GroundedValue(BaseModel):
    """A proposed value and the ids of the artifacts the agent says ground it."""

    model_config = ConfigDict(frozen=True)

    value: Any = None
    artifacts: list[str] = Field(default_factory=list)


Artifacts = Mapping[str, Artifact] | ArtifactLedger


def _inspect(artifacts: Artifacts, artifact_id: str) -> ArtifactStatus:
    """The artifact's status, re-checked now (a ledger re-checks its rows and seals; a
    plain mapping's artifacts are held to their own hash and id)."""
    if isinstance(artifacts, ArtifactLedger):
        return artifacts.inspect(artifact_id)
    artifact = artifacts.get(artifact_id)
    if artifact is None:
        return ArtifactStatus(None, None)
    try:
        artifact.check_integrity()
        if artifact.id != artifact_id:
            raise ArtifactIntegrityError(f"held under id {artifact_id[:12]}")
    except ArtifactIntegrityError as exc:
        return ArtifactStatus(None, "tampered", "ledger_tampered", str(exc))
    return ArtifactStatus(artifact, artifact.verification)


def _ref_findings(artifact_id: str, status: ArtifactStatus, label: str) -> list[Finding]:
    if status.verification is None:
        return [
            Finding.failed(
                VERIFIER,
                "unknown_artifact",
                f"cited artifact {artifact_id!r} is not in the ledger",
                subject=label,
            )
        ]
    if status.code == "ledger_tampered":
        return [
            Finding.failed(
                VERIFIER,
                "ledger_tampered",
                f"the stored artifact {artifact_id[:12]} fails its integrity data: {status.reason}",
                subject=label,
                detail={"artifact_id": artifact_id},
            )
        ]
    return []


def check_artifact_refs(ids: Sequence[str], artifacts: Artifacts) -> list[Finding]:
    """Fail ``unknown_artifact`` for every cited id the ledger does not hold, and
    ``ledger_tampered`` for every one whose stored row fails its integrity data."""
    out: list[Finding] = []
    for artifact_id in ids:
        out.extend(_ref_findings(artifact_id, _inspect(artifacts, artifact_id), artifact_id))
    return out


def meets_trust_bar(
    patch: Mapping[str, Any],
    artifacts: Artifacts,
    bars: Sequence[TrustBar] | Mapping[str, Requirement],
    *,
    default: Requirement = "unverified",
) -> list[Finding]:
    """Hold each patched field's grounding to its bar; one finding per field (plus unknowns).

    ``patch`` maps field → ``GroundedValue`` (or a dict of that shape). Fields without a
    bar get ``default`` (by default: grounded by at least one artifact the ledger holds).
    Codes: ``no_evidence``, ``unknown_artifact``, ``ledger_tampered``,
    ``unverified_evidence``, ``malformed_claim``. Every status is re-checked now: a
    stored row that was edited counts as tampered, never as verified. A field that is
    malformed or grounded by nothing fails proposing ``Strike((field,))``: it must not
    be released as if grounded.
    """
    required = {b.field: b.require for b in bars} if not isinstance(bars, Mapping) else dict(bars)
    findings: list[Finding] = []
    for name in sorted(patch):
        try:
            grounded = GroundedValue.model_validate(patch[name])
        except ValidationError as exc:
            findings.append(
                Finding.failed(
                    VERIFIER,
                    "malformed_claim",
                    f"field {name!r} is not a grounded value: {exc.errors()[0]['msg']}",
                    subject=name,
                    proposals=[Strike(path=(name,))],
                )
            )
            continue
        need = required.get(name, default)
        if need == "none":
            findings.append(Finding.ok(VERIFIER, "no evidence required", subject=name))
            continue
        inspected = [(a, _inspect(artifacts, a)) for a in grounded.artifacts]
        for artifact_id, status in inspected:
            findings.extend(_ref_findings(artifact_id, status, f"{name}: {artifact_id}"))
        statuses = [st.verification for _, st in inspected if st.verification]
        if not grounded.artifacts:
            findings.append(
                Finding.failed(
                    VERIFIER,
                    "no_evidence",
                    f"field {name!r} is grounded by no evidence that could be acquired",
                    subject=name,
                    proposals=[Strike(path=(name,))],
                )
            )
        elif not statuses:
            findings.append(
                Finding.failed(
                    VERIFIER,
                    "no_evidence",
                    f"field {name!r} cites only unknown artifacts",
                    subject=name,
                    proposals=[Strike(path=(name,))],
                )
            )
        elif need == "verified" and "verified" not in statuses:
            findings.append(
                Finding.failed(
                    VERIFIER,
                    "unverified_evidence",
                    f"field {name!r} needs verified evidence but is grounded only by "
                    f"{'/'.join(sorted(set(statuses)))} artifacts",
                    subject=name,
                    detail={"statuses": statuses},
                )
            )
        else:
            findings.append(
                Finding.ok(VERIFIER, f"field {name!r} meets its trust bar ({need})", subject=name)
            )
    return findings
