"""Closed-list citation contract: the draft may cite only what the brief approves.

A catch from compliance drafting: a draft for an ISO/IEC 27001:2022 asset-register policy cited
clauses 9.2 and 9.3. Both exist in the standard; neither was in the brief. Whether a
clause belongs to a finite, known list is answerable from the two documents alone,
so it is checked mechanically here, and the model verifier is left with what needs a
reader of meaning (contradictions, invented requirements).

Two violations, nothing else:

* ``invented_citation``: a citation whose canonical id the approved list does not
  authorise (see :mod:`trustgate.verifiers.contracts.patterns` for what "the same id"
  means).
* ``altered_citation``: an approved citation reproduced wrongly, i.e. quoted with
  wording that is not the approved wording, or cited in an edition the brief does
  not approve ("ISO 27001:2013" when the brief names 2022).

Absence is never a violation: a draft that cites nothing, or a subset, passes.

**Code is scanned, never skipped.** Every character of the draft is read, fenced and
indented code, code spans and raw HTML (comments included) alike: a reader copies a
clause number out of a code block as readily as out of prose, and a check that skipped
"code" could be steered by whatever opens it (a fence CommonMark does not open, such
as a backtick in the info string, would hide the rest of the draft from a hand-written
fence pattern). Where a renderer puts code is read from :mod:`trustgate._markdown`
(CommonMark, markdown-it) and reported as ``detail["in_code"]`` of each failure.

**What counts as wording attached to a citation.** Only *quoted* text directly
beside the citation: after it (``clause 9.2 "Internal audit"``, ``A.5.9: “…”``,
``Article 32(1) ("…")``) or right before it (``“…” (A.5.9)``), with nothing but
spaces, ``:``, ``,``, dashes, brackets or emphasis marks between. After a comma a
quote is a title only when it closes its own phrase (``A.5.9, "…", requires``); in
``Under A.5.9, "laptops" are assets`` it is the draft's own sentence. Unquoted
prose near a citation is the draft's own words: a paraphrase is not a
reproduction, so it is never compared. A quote is faithful when, ignoring case,
punctuation and spacing, it is a contiguous run of the approved wording (a partial
quote is faithful); ``...``/``…`` inside a quote separate runs that must appear in
order. Wording is compared only against an approved citation of exactly the same
unit (a quote after "Article 32(1)" is not judged against the text approved for
"Article 32"). A citation written without wording is never an alteration.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from trustgate import _limits
from trustgate._findings import Cut, Finding
from trustgate._markdown import code_locator
from trustgate.errors import ClaimTooLarge, InputError
from trustgate.evidence.brief import ApprovedCitation, Brief
from trustgate.verifiers.contracts.patterns import (
    DEFAULT_CITATION_PATTERNS,
    CitationId,
    CitationMatch,
    CitationPattern,
    RegexCitationPattern,
    extract_citations,
)

__all__ = ["VERIFIER", "check_citations"]

VERIFIER = "closed_list_citations"

_MAX_QUOTE = 2000  # characters of quoted wording read beside a citation
_OPEN_TO_CLOSE = {'"': '"', "“": "”", "‘": "’", "«": "»"}
_CLOSE_TO_OPEN = {close: open_ for open_, close in _OPEN_TO_CLOSE.items()}
_GAP_SPACE = frozenset(" \t\u00a0*_")
_GAP_PUNCT = frozenset(":,([–—-")
# After "A.5.9, " a quote is an appositive title only when it closes its own phrase:
# 'A.5.9, "Inventory of ...", requires' yes; 'Under A.5.9, "laptops" are assets' no.
_APPOSITIVE_END = re.compile(r"[ \t\u00a0*_]*(?:[,;.:!?)\]]|$)", re.MULTILINE)
_ELLIPSIS = re.compile(r"\[\s*(?:\.\.\.|…)\s*\]|\.\.\.|…")
_WORD = re.compile(r"\w+")
_SEP = "\x00"  # joins words for substring search; \w never matches it
_SHOW = 120


def _show(text: str) -> str:
    """Text as quoted in a message: bounded, so a hostile citation cannot bloat reports."""
    return text if len(text) <= _SHOW else text[: _SHOW - 1] + "…"


def _words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


class _Wording:
    """Approved wording as one string of words, searched with ``str.find`` (linear in
    C) instead of a word-by-word scan (quadratic on hostile quotes)."""

    def __init__(self, text: str) -> None:
        self.joined = _SEP + _SEP.join(_words(text)) + _SEP

    def faithful(self, quote: str) -> bool:
        """The quote's runs (split at ``...``/``…``) appear in order, contiguous."""
        pos = 0
        for fragment in _ELLIPSIS.split(quote):
            words = _words(fragment)
            if not words:
                continue
            needle = _SEP + _SEP.join(words) + _SEP
            at = self.joined.find(needle, pos)
            if at < 0:
                return False
            pos = at + len(needle) - 1  # the closing separator starts the next run
        return True


@functools.lru_cache(maxsize=256)
def _wording(text: str) -> _Wording:
    return _Wording(text)


def _faithful(quote: str, approved: str) -> bool:
    return _wording(approved).faithful(quote)


def _gap_end(draft: str, pos: int) -> int:
    """End of the gap allowed between a citation and its quote: spaces and emphasis
    marks, with at most two of ``: , ( [ – — -`` among them."""
    punct = 0
    n = len(draft)
    while pos < n:
        ch = draft[pos]
        if ch in _GAP_SPACE:
            pos += 1
        elif ch in _GAP_PUNCT and punct < 2:
            punct += 1
            pos += 1
        else:
            break
    return pos


def _gap_start(draft: str, pos: int, lo: int) -> int:
    """Start of the gap that ends at ``pos`` (the same grammar, read backwards)."""
    punct = 0
    while pos > lo:
        ch = draft[pos - 1]
        if ch in _GAP_SPACE:
            pos -= 1
        elif ch in _GAP_PUNCT and punct < 2:
            punct += 1
            pos -= 1
        else:
            break
    return pos


def _quote_after(draft: str, end: int) -> tuple[str, int, str, int] | None:
    """The quote right after a citation ending at ``end``: (words, offset of the opening
    mark, the gap before it, offset after the closing mark)."""
    q = _gap_end(draft, end)
    if q >= len(draft):
        return None
    opener = draft[q]
    close = _OPEN_TO_CLOSE.get(opener)
    if close is None:
        if opener != "'" or q == 0 or not (draft[q - 1].isspace() or draft[q - 1] in "(:"):
            return None
        close = "'"
    j = draft.find(close, q + 1, q + 2 + _MAX_QUOTE)
    if j <= q + 1 or draft.find("\n", q + 1, j) != -1:
        return None
    return draft[q + 1 : j], q, draft[end:q], j + 1


def _quote_before(draft: str, start: int, lo: int) -> tuple[str, int] | None:
    """The quote right before a citation starting at ``start``, opening at or after
    ``lo``: (words, offset of the opening mark)."""
    k = _gap_start(draft, start, lo) - 1
    if k <= lo:
        return None
    close = draft[k]
    opener = _CLOSE_TO_OPEN.get(close)
    if opener is None:
        return None
    if opener == close:  # "...": the content holds no quote mark, so the nearest one opens
        o = draft.rfind(opener, lo, k)
        if o < 0 or k - o - 1 > _MAX_QUOTE:
            return None
    else:  # “...”: the leftmost opening mark after the previous closing one
        search_lo = max(lo, draft.rfind(close, lo, k) + 1, k - _MAX_QUOTE - 1)
        o = draft.find(opener, search_lo, k)
        if o < 0:
            return None
    if k - o - 1 < 1:
        return None
    return draft[o + 1 : k], o


class _Lines:
    """Line numbers of offsets, from one pass over the text (not a count per finding)."""

    def __init__(self, text: str) -> None:
        self._breaks = [m.start() for m in re.finditer("\n", text)]

    def __call__(self, offset: int) -> int:
        return bisect.bisect_left(self._breaks, offset) + 1


def _literal_pattern(citation: ApprovedCitation) -> tuple[RegexCitationPattern, CitationId]:
    """An approved id no pattern parses is matched as literal text (always approved)."""
    words = citation.id.split()
    regex = r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)"
    ref = " ".join(words).upper()
    pattern = RegexCitationPattern(
        name="approved_literal", regex=regex, kind="literal", framework=None, ignore_case=True
    )
    return pattern, CitationId(kind="literal", ref=ref)


class _ApprovedSet:
    def __init__(self, brief: Brief, patterns: Sequence[CitationPattern]) -> None:
        first = [extract_citations(c.id, patterns) for c in brief.citations]
        self.frameworks = frozenset(
            m.id.framework for ms in first for m in ms if m.id.framework is not None
        )
        self.entries: list[tuple[CitationId, ApprovedCitation]] = []
        self.editions: dict[str, set[str]] = {}
        literal: list[CitationPattern] = []
        for c in brief.citations:
            found = extract_citations(c.id, patterns, frameworks=self.frameworks)
            if not found:
                pattern, cid = _literal_pattern(c)
                literal.append(pattern)
                self.entries.append((cid, c))
                continue
            for m in found:
                self.entries.append((m.id, c))
                if m.id.framework is not None and m.edition is not None:
                    self.editions.setdefault(m.id.framework, set()).add(m.edition)
        self.patterns: tuple[CitationPattern, ...] = (*patterns, *literal)
        # covers() and same_citation() need the same kind and ref: index on them, so a
        # draft with many citations costs one lookup each, not one scan of the brief each
        self._by_unit: dict[tuple[str, str], list[tuple[CitationId, ApprovedCitation]]] = {}
        for a, c in self.entries:
            self._by_unit.setdefault((a.kind, a.ref), []).append((a, c))

    def authorises(self, cid: CitationId) -> bool:
        return any(a.covers(cid) for a, _ in self._by_unit.get((cid.kind, cid.ref), ()))

    def texts_for(self, cid: CitationId) -> list[str]:
        return [
            c.text
            for a, c in self._by_unit.get((cid.kind, cid.ref), ())
            if c.text is not None and a.same_citation(cid)
        ]

    def owner_of_wording(self, quote: str, cid: CitationId) -> str | None:
        """Which other approved citation the quoted words belong to (wrong-clause hint)."""
        for a, c in self.entries:
            if c.text is not None and not a.same_citation(cid) and _faithful(quote, c.text):
                return str(a)
        return None

    def display(self) -> list[str]:
        return sorted({str(a) for a, _ in self.entries})


def _coerce_brief(brief: Brief | Mapping[str, Any]) -> Brief:
    if isinstance(brief, Brief):
        return brief
    if isinstance(brief, Mapping):
        return Brief.from_json(dict(brief))
    raise InputError(f"brief must be a Brief or a mapping, got {type(brief).__name__}")


def check_citations(
    draft: str,
    brief: Brief | Mapping[str, Any],
    *,
    patterns: Sequence[CitationPattern] = DEFAULT_CITATION_PATTERNS,
) -> list[Finding]:
    """Check every citation in ``draft`` against the brief's closed list.

    Returns one passing finding when nothing is wrong (including a draft that cites
    nothing: absence is never a violation), otherwise one failing finding per
    invented citation id (all its occurrences in ``detail``) and per altered
    reproduction, in the order they first appear in the draft.

    Example:
        ```python
        from trustgate.contracts import Brief, check_citations

        brief = Brief(citations=["ISO/IEC 27001:2022 Annex A 5.9"])
        draft = "Per A.5.9 we keep a register; audits follow ISO 27001 clauses 9.2 and 9.3."
        codes = [f.code for f in check_citations(draft, brief)]
        assert codes == ["invented_citation", "invented_citation"]
        ```
    """
    if not isinstance(draft, str):
        raise InputError(f"draft must be text (str), got {type(draft).__name__}")
    approved = _ApprovedSet(_coerce_brief(brief), patterns)
    try:
        _limits.check_draft(draft)
    except ClaimTooLarge as exc:
        return [Finding.failed(VERIFIER, exc.code, str(exc))]
    try:
        found = extract_citations(
            draft, approved.patterns, frameworks=approved.frameworks, limit=_limits.MAX_DRAFT_ITEMS
        )
    except ClaimTooLarge as exc:
        return [Finding.failed(VERIFIER, exc.code, str(exc))]

    line_of = _Lines(draft)
    invented: dict[str, list[CitationMatch]] = {}
    failures: list[tuple[int, str, str, Finding]] = []
    seen_altered: set[tuple[str, str, str]] = set()

    groups: dict[tuple[int, int], list[CitationMatch]] = {}
    for m in found:
        groups.setdefault((m.start, m.end), []).append(m)
    quotes: dict[int, tuple[str, int]] = {}  # id(match) -> (quote, offset)
    used_quote_starts: set[int] = set()
    for (_start, end), members in groups.items():
        after = _quote_after(draft, end)
        if after is not None:
            quote, offset, gap, after_end = after
            if "," in gap and not _APPOSITIVE_END.match(draft, after_end):
                continue
            quotes[id(members[-1])] = (quote, offset)
            used_quote_starts.add(offset)
    for (start, _end), members in groups.items():
        if id(members[0]) in quotes:
            continue
        window = max(0, start - 2100)  # never scan further back: linear on one-line drafts
        lo = max(draft.rfind("\n", window, start) + 1, window)
        got = _quote_before(draft, start, lo)
        if got is not None and got[1] not in used_quote_starts:
            quotes[id(members[0])] = got

    for m in found:
        if not approved.authorises(m.id):
            invented.setdefault(m.id.key, []).append(m)
            continue
        cid = m.id
        if cid.framework is not None and m.edition is not None:
            editions = approved.editions.get(cid.framework)
            if editions and m.edition not in editions:
                key = (cid.key, "edition", m.edition)
                if key not in seen_altered:
                    seen_altered.add(key)
                    wanted = ", ".join(sorted(editions))
                    failures.append(
                        (
                            m.start,
                            "altered_citation",
                            cid.key,
                            Finding.failed(
                                VERIFIER,
                                "altered_citation",
                                f'"{_show(m.written)}" cites edition {m.edition} of ISO '
                                f"{cid.framework}; "
                                f"the brief approves edition {wanted}",
                                subject=str(cid),
                                proposals=[Cut(text=m.written)] if m.written else [],
                                detail={
                                    "reason": "edition",
                                    "canonical": cid.key,
                                    "written": _show(m.written),
                                    "edition": m.edition,
                                    "approved_editions": sorted(editions),
                                    "offset": m.start,
                                    "line": line_of(m.start),
                                },
                            ),
                        )
                    )
        attached = quotes.get(id(m))
        if attached is None:
            continue
        quote, _ = attached
        texts = approved.texts_for(cid)
        if not texts or any(_faithful(quote, t) for t in texts):
            continue
        key = (cid.key, "wording", " ".join(_words(quote)))
        if key in seen_altered:
            continue
        seen_altered.add(key)
        owner = approved.owner_of_wording(quote, cid)
        hint = f" (those words are the approved wording of {owner})" if owner else ""
        detail: dict[str, Any] = {
            "reason": "wording",
            "canonical": cid.key,
            "written": _show(m.written),
            "quoted": quote,
            "approved_text": texts[0] if len(texts) == 1 else texts,
            "offset": m.start,
            "line": line_of(m.start),
        }
        if owner:
            detail["wording_of"] = owner
        failures.append(
            (
                m.start,
                "altered_citation",
                cid.key,
                Finding.failed(
                    VERIFIER,
                    "altered_citation",
                    f'{cid} is quoted as "{_show(quote)}" but the brief approves '
                    f'"{_show(texts[0])}"{hint}',
                    subject=str(cid),
                    detail=detail,
                    proposals=[Cut(text=m.written)] if m.written else [],
                ),
            )
        )

    approved_list = approved.display()
    for canonical, matches in invented.items():
        first = matches[0]
        failures.append(
            (
                first.start,
                "invented_citation",
                canonical,
                Finding.failed(
                    VERIFIER,
                    "invented_citation",
                    f'"{_show(first.written)}" cites {first.id}, which is not in the brief\'s '
                    f"approved "
                    f"citations ({len(approved_list)} approved)",
                    subject=str(first.id),
                    proposals=[Cut(text=w) for w in sorted({m.written for m in matches}) if w],
                    detail={
                        "canonical": canonical,
                        "written": sorted({_show(m.written) for m in matches}),
                        "occurrences": len(matches),
                        "offset": first.start,
                        "line": line_of(first.start),
                        "approved": approved_list,
                    },
                ),
            )
        )

    if failures:
        failures.sort(key=lambda f: (f[0], f[1], f[2]))
        in_code = code_locator(draft)
        return [
            f.model_copy(update={"detail": {**f.detail, "in_code": in_code(offset)}})
            for offset, *_, f in failures
        ]
    if not found:
        message = "the draft cites nothing; absence is never a violation"
    else:
        n = len({m.id.key for m in found})
        message = f"{n} cited id(s), all in the brief's approved list"
    return [
        Finding.ok(
            VERIFIER,
            message,
            detail={"cited": sorted({m.id.key for m in found}), "approved": approved_list},
        )
    ]
