"""Citation replay: does the file really say what the agent cited?

Trimmed substring at the cited line, widened to a ±3-line window for honest drift;
never trusted for content too short to mean anything. Comparison is after Unicode NFC
and nothing else: no case folding, no collapsing of inner whitespace, since either
would let a paraphrase pass as a quote.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable
from typing import Any

from trustgate._claims import FileCitation, SelfReport, parse_manifest
from trustgate._findings import Finding, Severity
from trustgate.errors import ClaimParseError, EvidenceRefused, GitError
from trustgate.evidence.workspace import Workspace

__all__ = ["DEFAULT_MIN_CHARS", "DEFAULT_WINDOW", "replay_citation", "replay_manifest"]

VERIFIER = "citation_replay"
DEFAULT_WINDOW = 3
DEFAULT_MIN_CHARS = 8
_SHOW = 200


def _nfc(text: str) -> str:
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return text
    return unicodedata.normalize("NFC", text)


def _nonspace(text: str) -> int:
    return len("".join(text.split()))


class _Reader:
    """Line source for one replay call: each path is guarded and read at most once.

    Used as a context manager so the root directory is opened once per call, not once
    per file; it is never kept across calls (the guard must run afresh each time).
    """

    def __init__(self, workspace: Workspace) -> None:
        self._ws = workspace
        self._memo: dict[str, tuple[str, ...] | EvidenceRefused] = {}
        self._root_fd: int | None = None

    def __enter__(self) -> _Reader:
        self._root_fd = self._ws._open_root()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._root_fd is not None:
            os.close(self._root_fd)
            self._root_fd = None

    def lines(self, path: str) -> tuple[str, ...]:
        hit = self._memo.get(path)
        if hit is None:
            try:
                hit = self._ws._lines(path, root_fd=self._root_fd)
            except EvidenceRefused as exc:
                hit = exc
            self._memo[path] = hit
        if isinstance(hit, EvidenceRefused):
            raise hit
        return hit


def replay_citation(
    citation: FileCitation,
    workspace: Workspace,
    *,
    window: int = DEFAULT_WINDOW,
    min_chars: int = DEFAULT_MIN_CHARS,
) -> Finding:
    """Replay one ``{file, line, content}`` citation against the workspace.

    Passes when the trimmed content is a substring of the trimmed cited line, or of the
    nearest line within ``window`` (then ``detail`` has ``matched_line`` and ``drift``).
    Content with fewer than ``min_chars`` non-space characters must equal the whole
    cited line, with no window: a one-letter "citation" matches almost anything.
    """
    with _Reader(workspace) as reader:
        return _replay(citation, reader, window, min_chars, subject_prefix="")


def _replay(
    citation: Any, reader: _Reader, window: int, min_chars: int, subject_prefix: str
) -> Finding:
    if not isinstance(citation, FileCitation):
        try:
            citation = FileCitation.model_validate(citation)
        except Exception as exc:
            return Finding.failed(
                VERIFIER, "malformed_claim", f"{subject_prefix}citation is malformed: {exc}"
            )
    subject = f"{subject_prefix}{citation.file}:{citation.line}"
    content = _nfc(citation.content).strip()
    if not content:
        return Finding.failed(
            VERIFIER, "empty_content", "cited content is empty after trimming", subject=subject
        )
    try:
        lines = reader.lines(citation.file)
    except EvidenceRefused as exc:
        return exc.to_finding(VERIFIER, subject=subject)
    n = len(lines)
    line = citation.line
    if line < 1 or line > n:
        return Finding.failed(
            VERIFIER,
            "line_out_of_range",
            f"line {line} is outside {citation.file!r}, which has {n} line(s)",
            subject=subject,
            detail={"line": line, "line_count": n},
        )
    cited = _nfc(lines[line - 1]).strip()
    if _nonspace(content) < min_chars:
        if content == cited:
            return Finding.ok(
                VERIFIER,
                "short content equals the cited line",
                subject=subject,
                detail={"matched_line": line, "drift": 0},
            )
        return Finding.failed(
            VERIFIER,
            "too_vague",
            f"content {content!r} has fewer than {min_chars} non-space characters and is not "
            f"the whole of line {line}",
            subject=subject,
            detail={"content": content, "actual": cited[:_SHOW]},
        )
    if content in cited:
        return Finding.ok(
            VERIFIER,
            "content found at the cited line",
            subject=subject,
            detail={"matched_line": line, "drift": 0},
        )
    for d in range(1, window + 1):
        for candidate in (line - d, line + d):  # earlier line first on a tie
            if 1 <= candidate <= n and content in _nfc(lines[candidate - 1]).strip():
                return Finding.ok(
                    VERIFIER,
                    f"content found {abs(d)} line(s) from the cited line",
                    subject=subject,
                    detail={"matched_line": candidate, "drift": candidate - line},
                )
    return Finding.failed(
        VERIFIER,
        "content_mismatch",
        f"{citation.file!r} does not contain the cited content at line {line} or within "
        f"±{window} lines",
        subject=subject,
        detail={"content": content[:_SHOW], "actual": cited[:_SHOW], "window": window},
    )


def replay_manifest(
    items: Any,
    workspace: Workspace,
    *,
    window: int = DEFAULT_WINDOW,
    min_chars: int = DEFAULT_MIN_CHARS,
    base: str = "HEAD",
    undeclared_severity: Severity = "warn",
) -> list[Finding]:
    """Check every item of a changes manifest; no status escapes checking.

    * ``already_correct`` / ``not_applicable``: every citation is replayed; no citations
      fails ``no_evidence``.
    * ``changed``: each named file must be in the real diff against ``base`` (computed by
      git now, never taken from state): ``not_in_diff``; naming no file fails
      ``no_files``. Changed files no item claimed fail ``undeclared_change``
      (``undeclared_severity``, a warning by default).
    * Malformed model output becomes ``malformed_claim`` findings with the parse error;
      an empty manifest fails ``no_claims``; one past a cap of :mod:`trustgate._limits`
      (10,000 citations, nesting, size) is one ``claim_too_large`` finding, unread.

    Each path is guarded and read at most once per call.
    """
    try:
        parsed, errors = parse_manifest(items)
    except ClaimParseError as exc:
        return [Finding.failed(VERIFIER, getattr(exc, "code", "malformed_claim"), str(exc))]
    findings = [
        Finding.failed(
            VERIFIER,
            "malformed_claim",
            f"manifest item {i} is malformed: {err}",
            subject=f"item[{i}]",
        )
        for i, err in errors
    ]
    if not parsed and not errors:
        return [Finding.failed(VERIFIER, "no_claims", "the manifest has no items to check")]
    changed_items: list[tuple[int, SelfReport]] = []
    with _Reader(workspace) as reader:
        findings.extend(_replay_items(parsed, reader, window, min_chars, changed_items))
    findings.extend(_check_changed(changed_items, workspace, base, undeclared_severity))
    return findings


def _replay_items(
    parsed: list[SelfReport],
    reader: _Reader,
    window: int,
    min_chars: int,
    changed_items: list[tuple[int, SelfReport]],
) -> list[Finding]:
    findings: list[Finding] = []
    for i, item in enumerate(parsed):
        prefix = f"{item.item or f'item[{i}]'}: "
        if item.status == "changed":
            changed_items.append((i, item))
            continue
        if not item.evidence:
            findings.append(
                Finding.failed(
                    VERIFIER,
                    "no_evidence",
                    f"{item.status} claim carries no citations; nothing shows the item was handled",
                    subject=prefix.rstrip(": "),
                )
            )
            continue
        findings.extend(_replay(c, reader, window, min_chars, prefix) for c in item.evidence)
    return findings


def _check_changed(
    items: list[tuple[int, SelfReport]],
    workspace: Workspace,
    base: str,
    undeclared_severity: Severity,
) -> Iterable[Finding]:
    from trustgate.verifiers.files.changes import VERIFIER as CHANGES
    from trustgate.verifiers.files.changes import check_changed_files

    if not items:
        return []
    out: list[Finding] = []
    claimed: list[str] = []
    for i, item in items:
        if not item.files:
            out.append(
                Finding.failed(
                    CHANGES,
                    "no_files",
                    "changed claim names no files; nothing can check it",
                    subject=item.item or f"item[{i}]",
                )
            )
        claimed.extend(item.files)
    try:
        real = workspace.changed_files(base)
    except (GitError, EvidenceRefused) as exc:
        code = exc.code if isinstance(exc, EvidenceRefused) else "diff_unavailable"
        out.append(Finding.failed(CHANGES, code, f"cannot compute the real diff: {exc}"))
        return out
    out.extend(
        check_changed_files(claimed, real, base=base, undeclared_severity=undeclared_severity)
    )
    return out
