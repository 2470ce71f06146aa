"""Citation replay: does the file really say what the agent cited?

Trimmed substring at the cited line, widened to a ±3-line window for honest drift;
never trusted for content too short to mean anything. Comparison is after Unicode NFC
and nothing else: no case folding, no collapsing of inner whitespace, since either
would let a paraphrase pass as a quote.

How a manifest is replayed, and why so: the citations are grouped by file, and each
file is guarded, read and split once per call, its citations judged, and its lines
dropped before the next file is read. Nothing read is kept from one call (one
crossing) to the next, so a file edited or a symlink swapped between two crossings is
seen by the second, and a call holds one file's lines at a time however many files it
cites. The citations of a file that replay are one finding; each that does not is a
finding of its own.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable
from typing import Any

from trustgate._claims import FileCitation, SelfReport, parse_manifest
from trustgate._findings import Finding, Severity
from trustgate.errors import ClaimParseError, EvidenceRefused, GitError
from trustgate.evidence import _paths
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


def _content(citation: FileCitation) -> str:
    content = citation.content
    return (content if content.isascii() else _nfc(content)).strip()


class _Source:
    """One file's lines, as read for one replay call."""

    __slots__ = ("ascii", "lines")

    def __init__(self, lines: tuple[str, ...], ascii: bool) -> None:
        self.lines = lines
        self.ascii = ascii  # all ASCII: no line needs NFC


class _Root:
    """The workspace root, opened once for one replay call (the caller closes it)."""

    def __init__(self, workspace: Workspace) -> None:
        self._ws = workspace
        self._fd: int | None = None

    def __enter__(self) -> _Root:
        self._fd = self._ws._open_root()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def read(self, path: str, parts: tuple[str, ...] | None = None) -> _Source | EvidenceRefused:
        """The file's lines, guarded and read now (never from a cache), or the refusal
        every citation of it fails with."""
        try:
            lines, ascii = self._ws._text_lines(
                path, use_cache=False, root_fd=self._fd, parts=parts
            )
        except EvidenceRefused as exc:
            return exc
        return _Source(lines, ascii)


# what _judge returns for a citation that does not replay
_OUT_OF_RANGE, _TOO_VAGUE, _MISMATCH = "line_out_of_range", "too_vague", "content_mismatch"


def _judge(line: int, content: str, src: _Source, window: int, min_chars: int) -> int | str:
    """The line the (trimmed, NFC, non-empty) ``content`` was found at, or the failure code.

    ``content in raw`` is the same test as ``content in raw.strip()``: ``content`` is
    non-empty and trimmed, so any occurrence starts and ends on a non-space character,
    inside the trimmed line.
    """
    lines = src.lines
    n = len(lines)
    if line < 1 or line > n:
        return _OUT_OF_RANGE
    raw = lines[line - 1] if src.ascii else _nfc(lines[line - 1])
    if len(content) < min_chars or _nonspace(content) < min_chars:
        return line if content == raw.strip() else _TOO_VAGUE
    if content in raw:
        return line
    for d in range(1, window + 1):
        for candidate in (line - d, line + d):  # earlier line first on a tie
            if 1 <= candidate <= n:
                raw = lines[candidate - 1]
                if content in (raw if src.ascii else _nfc(raw)):
                    return candidate
    return _MISMATCH


def _failed(
    code: str,
    file: str,
    line: int,
    content: str,
    src: _Source,
    window: int,
    min_chars: int,
    subject: str,
) -> Finding:
    n = len(src.lines)
    if code == _OUT_OF_RANGE:
        return Finding.failed(
            VERIFIER,
            code,
            f"line {line} is outside {file!r}, which has {n} line(s)",
            subject=subject,
            detail={"line": line, "line_count": n},
        )
    cited = _nfc(src.lines[line - 1]).strip()
    if code == _TOO_VAGUE:
        return Finding.failed(
            VERIFIER,
            code,
            f"content {content!r} has fewer than {min_chars} non-space characters and is not "
            f"the whole of line {line}",
            subject=subject,
            detail={"content": content, "actual": cited[:_SHOW]},
        )
    return Finding.failed(
        VERIFIER,
        code,
        f"{file!r} does not contain the cited content at line {line} or within ±{window} lines",
        subject=subject,
        detail={"content": content[:_SHOW], "actual": cited[:_SHOW], "window": window},
    )


def _empty(subject: str) -> Finding:
    return Finding.failed(
        VERIFIER, "empty_content", "cited content is empty after trimming", subject=subject
    )


def _as_citation(citation: Any, subject_prefix: str) -> FileCitation | Finding:
    # (isinstance against a pydantic model class goes through ABCMeta: test type first)
    if type(citation) is FileCitation or isinstance(citation, FileCitation):
        return citation
    try:
        return FileCitation.model_validate(citation)
    except Exception as exc:
        return Finding.failed(
            VERIFIER, "malformed_claim", f"{subject_prefix}citation is malformed: {exc}"
        )


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
    checked = _as_citation(citation, "")
    if isinstance(checked, Finding):
        return checked
    subject = f"{checked.file}:{checked.line}"
    content = _content(checked)
    if not content:
        return _empty(subject)
    with _Root(workspace) as root:
        src = root.read(checked.file)
    if isinstance(src, EvidenceRefused):
        return src.to_finding(VERIFIER, subject=subject)
    got = _judge(checked.line, content, src, window, min_chars)
    if isinstance(got, str):
        return _failed(got, checked.file, checked.line, content, src, window, min_chars, subject)
    drift = got - checked.line
    if drift:
        message = f"content found {abs(drift)} line(s) from the cited line"
    elif len(content) < min_chars or _nonspace(content) < min_chars:
        message = "short content equals the cited line"
    else:
        message = "content found at the cited line"
    return Finding.ok(
        VERIFIER, message, subject=subject, detail={"matched_line": got, "drift": drift}
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

    The citations that replay are batched: one passing finding per file (``subject``
    the file's path), at the place of that file's first passing citation, whose
    ``detail["citations"]`` lists each (``item``, ``line``, ``matched_line``,
    ``drift``). Every citation that does not replay is a failed finding of its own, in
    citation order, with its subject (``item: file:line``) and its code. Each file is
    guarded and read once per call, afresh: nothing is kept for the next call.
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
    findings.extend(_replay_items(parsed, workspace, window, min_chars, changed_items))
    findings.extend(_check_changed(changed_items, workspace, base, undeclared_severity))
    return findings


# (slot in the output, item name, cited line, trimmed NFC content): what the judging
# needs, so it touches no citation object again
_Pending = tuple[int, str, int, str]


def _replay_items(
    parsed: list[SelfReport],
    workspace: Workspace,
    window: int,
    min_chars: int,
    changed_items: list[tuple[int, SelfReport]],
) -> list[Finding]:
    # One slot per finding that could be emitted, in citation order; a file's passing
    # citations share the slot of its first one. The slots of the other passes stay None.
    slots: list[Finding | _Batch | None] = []
    by_path: dict[str, list[_Pending]] = {}
    for i, item in enumerate(parsed):
        if item.status == "changed":
            changed_items.append((i, item))
            continue
        name = item.item or f"item[{i}]"
        if not item.evidence:
            slots.append(
                Finding.failed(
                    VERIFIER,
                    "no_evidence",
                    f"{item.status} claim carries no citations; nothing shows the item was handled",
                    subject=name,
                )
            )
            continue
        for raw in item.evidence:
            citation = raw if type(raw) is FileCitation else _as_citation(raw, f"{name}: ")
            if type(citation) is not FileCitation and isinstance(citation, Finding):
                slots.append(citation)
                continue
            content = citation.content
            if not content.isascii():
                content = _nfc(content)
            content = content.strip()
            if not content:
                slots.append(_empty(f"{name}: {citation.file}:{citation.line}"))
                continue
            pending = by_path.get(citation.file)
            if pending is None:
                pending = by_path[citation.file] = []
            pending.append((len(slots), name, citation.line, content))
            slots.append(None)
    if by_path:
        with _Root(workspace) as root:
            for key, group in _by_file(by_path).items():
                _replay_file(root, key, group, slots, window, min_chars)
    return [_emit(s, window) for s in slots if s is not None]


def _emit(slot: Finding | _Batch, window: int) -> Finding:
    return slot.finding(window) if isinstance(slot, _Batch) else slot


def _by_file(by_path: dict[str, list[_Pending]]) -> dict[str, list[tuple[str, list[_Pending]]]]:
    """The cited paths under their normalised form, so ``app.py`` and ``./app.py`` are
    one read; a path that cannot be normalised keeps its own key (it is refused)."""
    out: dict[str, list[tuple[str, list[_Pending]]]] = {}
    for path, group in by_path.items():
        try:
            key = "/".join(_paths.normalise(path))
        except EvidenceRefused:
            key = "\x00" + path  # no normalised path holds a NUL
        out.setdefault(key, []).append((path, group))
    return out


class _Batch:
    """The passing citations of one file: one finding, not one per citation (the
    verdict objects, not the checks, were most of a replay's cost)."""

    __slots__ = ("drifted", "key", "passes")

    def __init__(self, key: str, passes: list[dict[str, Any]], drifted: int) -> None:
        self.key = key
        self.passes = passes
        self.drifted = drifted

    def finding(self, window: int) -> Finding:
        passes, drifted = self.passes, self.drifted
        where = (
            f"{drifted} of them within ±{window} lines of the cited line"
            if drifted
            else "each at the cited line"
        )
        return Finding.ok(
            VERIFIER,
            f"content found for {len(passes)} citation(s) of {self.key!r} ({where})",
            subject=self.key,
            detail={"citations": passes},
        )


def _replay_file(
    root: _Root,
    key: str,
    spellings: list[tuple[str, list[_Pending]]],
    slots: list[Finding | _Batch | None],
    window: int,
    min_chars: int,
) -> None:
    """Read one file once and judge every citation of it, whatever its spelling; its
    passes become one batch, in the slot of the first of them."""
    offsets = [d * sign for d in range(1, window + 1) for sign in (-1, 1)]  # earlier first
    src = root.read(spellings[0][0])
    passes: list[dict[str, Any]] = []
    append = passes.append
    pass_slots: list[int] = []  # for each pass, its slot
    keep_slot = pass_slots.append
    drifted = 0
    for path, group in spellings:
        if isinstance(src, EvidenceRefused) and path != spellings[0][0]:
            src = root.read(path)  # a refusal names the path as it was cited
        if isinstance(src, EvidenceRefused):
            for slot, name, line, _ in group:
                slots[slot] = src.to_finding(VERIFIER, subject=f"{name}: {path}:{line}")
            continue
        lines, ascii = src.lines, src.ascii
        n = len(lines)
        for slot, name, line, content in group:
            got = 0
            # The common cases inline, for an ASCII file (no NFC); everything else, and
            # every failure, is decided by _judge.
            if ascii and 0 < line <= n:
                raw = lines[line - 1]
                if content in raw:
                    # the whole trimmed line passes, whatever its length; a part of it
                    # must not be vague
                    if content == raw.strip() or (
                        len(content) >= min_chars and len("".join(content.split())) >= min_chars
                    ):
                        got = line
                elif len(content) >= min_chars and len("".join(content.split())) >= min_chars:
                    for d in offsets:
                        candidate = line + d
                        if 0 < candidate <= n and content in lines[candidate - 1]:
                            got = candidate
                            break
            if not got:
                judged = _judge(line, content, src, window, min_chars)
                if isinstance(judged, str):
                    subject = f"{name}: {path}:{line}"
                    slots[slot] = _failed(
                        judged, path, line, content, src, window, min_chars, subject
                    )
                    continue
                got = judged
            if got != line:
                drifted += 1
            append({"item": name, "line": line, "matched_line": got, "drift": got - line})
            keep_slot(slot)
    if not passes:
        return
    if len(spellings) > 1:  # list the passes in citation order
        order = sorted(range(len(pass_slots)), key=pass_slots.__getitem__)
        passes = [passes[k] for k in order]
    slots[min(pass_slots)] = _Batch(key, passes, drifted)


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
