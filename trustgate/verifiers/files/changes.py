"""Change claims: "I changed these files" is checked against the real diff.

The diff is recomputed from git on every check; a changed-file list carried over from
an earlier round is exactly the stale manifest that misled a code review.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from trustgate._claims import ChangeClaim
from trustgate._findings import Finding, Severity
from trustgate.errors import EvidenceRefused, GitError
from trustgate.evidence import _paths
from trustgate.evidence.workspace import Workspace

__all__ = ["check_change_claim", "check_changed_files"]

VERIFIER = "change_check"


def _norm(path: str) -> str | None:
    try:
        return "/".join(_paths.normalise(path))
    except EvidenceRefused:
        return None


def check_changed_files(
    claimed: Iterable[str],
    real: Sequence[str],
    *,
    base: str = "HEAD",
    undeclared_severity: Severity = "warn",
) -> list[Finding]:
    """Compare claimed changed files with the real changed files (already computed)."""
    real_set = set(real)
    findings: list[Finding] = []
    seen: set[str] = set()
    for raw in claimed:
        path = _norm(raw) if isinstance(raw, str) else None
        if path is None:
            findings.append(
                Finding.failed(
                    VERIFIER,
                    "invalid_path",
                    f"claimed path {raw!r} is not a workspace path",
                    subject=str(raw),
                )
            )
            continue
        if path in seen:
            continue
        seen.add(path)
        if path in real_set:
            findings.append(Finding.ok(VERIFIER, f"{path} changed since {base}", subject=path))
        else:
            findings.append(
                Finding.failed(
                    VERIFIER,
                    "not_in_diff",
                    f"{path} is claimed as changed but git shows no change to it since {base}",
                    subject=path,
                    detail={"base": base},
                )
            )
    for path in sorted(real_set - seen):
        findings.append(
            Finding.failed(
                VERIFIER,
                "undeclared_change",
                f"{path} changed since {base} but no claim mentions it",
                severity=undeclared_severity,
                subject=path,
                detail={"base": base},
            )
        )
    return findings


def check_change_claim(
    claim: ChangeClaim, workspace: Workspace, *, undeclared_severity: Severity = "warn"
) -> list[Finding]:
    """Check a ``ChangeClaim`` against ``git diff`` of the workspace since ``claim.base``."""
    if not claim.files:
        return [Finding.failed(VERIFIER, "no_files", "the change claim names no files")]
    try:
        real = workspace.changed_files(claim.base)
    except EvidenceRefused as exc:
        return [exc.to_finding(VERIFIER, subject=claim.base)]
    except GitError as exc:
        return [
            Finding.failed(
                VERIFIER, "diff_unavailable", f"cannot compute the diff: {exc}", subject=claim.base
            )
        ]
    return check_changed_files(
        claim.files, real, base=claim.base, undeclared_severity=undeclared_severity
    )
