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

import unicodedata
from collections.abc import Iterable, Iterator, Sequence
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


def _long(content: str, min_chars: int) -> bool:
    """Whether ``content`` has at least ``min_chars`` characters that are not whitespace
    (as ``str.split`` counts it): content shorter than that is too vague for a window."""
    if len(content) < min_chars:
        return False
    if content.isprintable():  # then its only whitespace is " " (the others are not printable)
        return len(content) - content.count(" ") >= min_chars
    return _nonspace(content) >= min_chars


def _content(citation: FileCitation) -> str:
    content = citation.content
    return (content if content.isascii() else _nfc(content)).strip()


class _Source:
    """One file's lines, as read for one replay call."""

    __slots__ = ("ascii", "lines")

    def __init__(self, lines: Sequence[str], ascii: bool) -> None:
        self.lines = lines
        self.ascii = ascii  # all ASCII: no line needs NFC


class _Root:
    """The workspace's root and directories, opened once for one replay call."""

    def __init__(self, workspace: Workspace) -> None:
        self._ws = workspace
        self._reader: _paths.Reader | None = None

    def __enter__(self) -> _Root:
        self._reader = self._ws._reader()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def read(self, path: str, parts: tuple[str, ...] | None = None) -> _Source | EvidenceRefused:
        """The file's lines, guarded and read now (never from a cache), or the refusal
        every citation of it fails with."""
        assert self._reader is not None, "read outside the with block"
        try:
            lines, ascii = self._ws._text_lines(path, reader=self._reader, parts=parts)
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
    if not _long(content, min_chars):
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
    elif not _long(content, min_chars):
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


# (place in citation order, item name, cited line, trimmed NFC content): what the
# judging needs, so it touches no citation object again. (A tuple of plain values: the
# garbage collector stops tracking it at its first pass, as it cannot stop tracking a
# list or an object; a replay of thousands of citations otherwise spends a good part
# of its time in full collections that walk every pending citation.)
_Pending = tuple[int, str, int, str]
_Spellings = list[tuple[str, list[_Pending]]]


class _Placed:
    """A replay's findings, each at its place: the number of the citation it is about
    (a file's passes at the first of them)."""

    __slots__ = ("findings", "seqs")

    def __init__(self) -> None:
        self.seqs: list[int] = []
        self.findings: list[Finding] = []

    def add(self, seq: int, finding: Finding) -> None:
        self.seqs.append(seq)
        self.findings.append(finding)

    def __len__(self) -> int:
        return len(self.seqs)

    def in_order(self) -> list[Finding]:
        seqs, findings = self.seqs, self.findings
        return [findings[k] for k in sorted(range(len(seqs)), key=seqs.__getitem__)]


def _replay_items(
    parsed: list[SelfReport],
    workspace: Workspace,
    window: int,
    min_chars: int,
    changed_items: list[tuple[int, SelfReport]],
) -> list[Finding]:
    placed = _Placed()
    by_path: dict[str, list[_Pending]] = {}
    seq = 0
    for i, item in enumerate(parsed):
        if item.status == "changed":
            changed_items.append((i, item))
            continue
        name = item.item or f"item[{i}]"
        evidence = item.evidence
        if not evidence:
            placed.add(
                seq,
                Finding.failed(
                    VERIFIER,
                    "no_evidence",
                    f"{item.status} claim carries no citations; nothing shows the item was handled",
                    subject=name,
                ),
            )
            seq += 1
            continue
        for raw in evidence:
            if type(raw) is FileCitation:
                citation = raw
            else:
                checked = _as_citation(raw, f"{name}: ")
                if isinstance(checked, Finding):
                    placed.add(seq, checked)
                    seq += 1
                    continue
                citation = checked
            content = citation.content
            if not content.isascii():
                content = _nfc(content)
            content = content.strip()
            if content:
                pending = by_path.get(citation.file)
                if pending is None:
                    by_path[citation.file] = [(seq, name, citation.line, content)]
                else:
                    pending.append((seq, name, citation.line, content))
            else:
                placed.add(seq, _empty(f"{name}: {citation.file}:{citation.line}"))
            seq += 1
    if by_path:
        offsets = [d * sign for d in range(1, window + 1) for sign in (-1, 1)]  # earlier first
        with _Root(workspace) as root:
            for key, parts, spellings in _files(by_path):
                _replay_file(root, key, parts, spellings, placed, window, min_chars, offsets)
    return placed.in_order()


def _files(
    by_path: dict[str, list[_Pending]],
) -> Iterator[tuple[str, tuple[str, ...] | None, _Spellings]]:
    """Each file once, under its normalised path (with its parts), with the spellings
    it was cited by, so ``app.py`` and ``./app.py`` are one read; a path that cannot be
    normalised keeps its own key (it is refused when read)."""
    first: dict[str, tuple[str, tuple[str, ...] | None]] = {}  # key: first spelling, parts
    more: dict[str, list[str]] = {}  # key: the other spellings
    for path in by_path:
        parts: tuple[str, ...] | None
        try:
            parts = _paths.normalise(path)
            key = "/".join(parts)
        except EvidenceRefused:
            parts, key = None, "\x00" + path  # no normalised path holds a NUL
        if key in first:
            more.setdefault(key, []).append(path)
        else:
            first[key] = (path, parts)
    for key, (path, parts) in first.items():
        spellings = [(path, by_path[path])]
        spellings.extend((other, by_path[other]) for other in more.get(key, ()))
        yield key, parts, spellings


def _batch(key: str, passes: list[dict[str, Any]], drifted: int, window: int) -> Finding:
    """The passing citations of one file: one finding, not one per citation (the
    verdict objects, not the checks, were most of a replay's cost)."""
    where = (
        f"{drifted} of them within ±{window} lines of the cited line"
        if drifted
        else "each at the cited line"
    )
    return Finding.ok(
        VERIFIER,
        f"content found for {len(passes)} citation(s) of {key!r} ({where})",
        subject=key,
        detail={"citations": passes},
    )


def _replay_file(
    root: _Root,
    key: str,
    parts: tuple[str, ...] | None,
    spellings: _Spellings,
    placed: _Placed,
    window: int,
    min_chars: int,
    offsets: list[int],
) -> None:
    """Read one file once and judge every citation of it, whatever its spelling; its
    passes become one finding, placed at the first of them. ``offsets`` are the window's
    line offsets, nearest first, earlier first on a tie."""
    first_path = spellings[0][0]
    src = root.read(first_path, parts)
    passes: list[dict[str, Any]] = []
    passed: list[list[_Pending]] = []  # per spelling, the citations that passed
    drifted = 0
    for path, group in spellings:
        if isinstance(src, EvidenceRefused) and path != first_path:
            src = root.read(path, parts)  # a refusal names the path as it was cited
        if isinstance(src, EvidenceRefused):
            for seq, name, line, _ in group:
                placed.add(seq, src.to_finding(VERIFIER, subject=f"{name}: {path}:{line}"))
            continue
        failed_from = len(placed)
        drifted += _judge_group(src, path, group, passes, placed, window, min_chars, offsets)
        if len(placed) > failed_from:  # the passes are the citations that did not fail
            failed = set(placed.seqs[failed_from:])
            group = [p for p in group if p[0] not in failed]
        if group:
            passed.append(group)
    if not passes:
        return
    if len(passed) == 1:  # (a spelling's citations are in citation order, so its passes)
        first = passed[0][0][0]
    else:  # the spellings' passes, merged in citation order
        seqs = [p[0] for group in passed for p in group]
        order = sorted(range(len(passes)), key=seqs.__getitem__)
        passes = [passes[k] for k in order]
        first = seqs[order[0]]
    placed.add(first, _batch(key, passes, drifted, window))


def _judge_group(
    src: _Source,
    path: str,
    group: list[_Pending],
    passes: list[dict[str, Any]],
    placed: _Placed,
    window: int,
    min_chars: int,
    offsets: list[int],
) -> int:
    """Judge the citations of one spelling of a file: each pass is appended to
    ``passes`` (in the group's order), each failure to ``placed``. Returns how many
    passes drifted from the cited line."""
    lines = src.lines
    n = len(lines)
    append = passes.append
    drifted = 0
    ascii = src.ascii
    for seq, name, line, content in group:
        # The common cases inline, for an ASCII file (no NFC); everything else, and every
        # failure, is decided by _judge. (content is trimmed and not empty, so it is in a
        # line exactly when it is in the trimmed line.)
        if ascii and 0 < line <= n:
            raw = lines[line - 1]
            if content in raw:
                # the whole trimmed line passes, whatever its length; a part of it must
                # not be vague
                if content == raw.strip() or _long(content, min_chars):
                    append({"item": name, "line": line, "matched_line": line, "drift": 0})
                    continue
            elif len(content) >= min_chars and (
                len(content) - content.count(" ") >= min_chars
                if content.isprintable()  # (as _long decides, without the call)
                else _long(content, min_chars)
            ):
                for d in offsets:
                    got = line + d
                    if 0 < got <= n and content in lines[got - 1]:
                        drifted += 1
                        append({"item": name, "line": line, "matched_line": got, "drift": d})
                        break
                else:
                    got = 0
                if got:
                    continue
        judged = _judge(line, content, src, window, min_chars)
        if isinstance(judged, str):
            subject = f"{name}: {path}:{line}"
            placed.add(seq, _failed(judged, path, line, content, src, window, min_chars, subject))
            continue
        if judged != line:
            drifted += 1
        append({"item": name, "line": line, "matched_line": judged, "drift": judged - line})
    return drifted


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
