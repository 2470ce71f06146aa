"""Closed-list citation contract: the draft may cite only what the brief approves.

Seed 004's live catch: a draft for an ISO/IEC 27001:2022 asset-register policy cited
clauses 9.2 and 9.3. Both exist in the standard; neither was in the brief. Whether a
clause belongs to a finite, known list is answerable from the two documents alone,
so it is checked mechanically here, and the model verifier is left with what needs a
reader of meaning (contradictions, invented requirements).

Two violations, nothing else:

* ``invented_citation``: a citation whose canonical id the approved list does not
  authorise (see :mod:`trustgate.verifiers.citation_patterns` for what "the same id"
  means).
* ``altered_citation``: an approved citation reproduced wrongly, i.e. quoted with
  wording that is not the approved wording, or cited in an edition the brief does
  not approve ("ISO 27001:2013" when the brief names 2022).

Absence is never a violation: a draft that cites nothing, or a subset, passes.

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

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from trustgate.errors import InputError
from trustgate.evidence.brief import ApprovedCitation, Brief
from trustgate.findings import Finding
from trustgate.verifiers.citation_patterns import (
    DEFAULT_CITATION_PATTERNS,
    CitationId,
    CitationMatch,
    CitationPattern,
    RegexCitationPattern,
    extract_citations,
)

__all__ = ["VERIFIER", "check_citations"]

VERIFIER = "closed_list_citations"

_QUOTES = (
    r"\"(?P<q1>[^\"\n]{1,2000})\"|“(?P<q2>[^”\n]{1,2000})”"
    r"|‘(?P<q3>[^’\n]{1,2000})’|«(?P<q4>[^»\n]{1,2000})»"
)
_GAP = r"[ \t\u00a0*_]*(?:[:,(\[–—-][ \t\u00a0*_]*){0,2}"
_QUOTE_AFTER = re.compile(rf"(?P<gap>{_GAP})(?:{_QUOTES}|(?<=[\s(:])'(?P<q5>[^'\n]{{1,2000}})')")
# After "A.5.9, " a quote is an appositive title only when it closes its own phrase:
# 'A.5.9, "Inventory of ...", requires' yes; 'Under A.5.9, "laptops" are assets' no.
_APPOSITIVE_END = re.compile(r"[ \t\u00a0*_]*(?:[,;.:!?)\]]|$)", re.MULTILINE)
_QUOTE_BEFORE = re.compile(rf"(?:{_QUOTES})[ \t\u00a0*_]*(?:[:,(\[–—-][ \t\u00a0*_]*){{0,2}}$")
_ELLIPSIS = re.compile(r"\[\s*(?:\.\.\.|…)\s*\]|\.\.\.|…")
_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def _contains_run(haystack: list[str], needle: list[str], start: int) -> int:
    """Index just past the first occurrence of ``needle`` in ``haystack[start:]``, or -1."""
    n = len(needle)
    for i in range(start, len(haystack) - n + 1):
        if haystack[i : i + n] == needle:
            return i + n
    return -1


def _faithful(quote: str, approved: str) -> bool:
    target = _words(approved)
    pos = 0
    for fragment in _ELLIPSIS.split(quote):
        words = _words(fragment)
        if not words:
            continue
        pos = _contains_run(target, words, pos)
        if pos < 0:
            return False
    return True


def _quote(m: re.Match[str]) -> tuple[str, int] | None:
    """The quoted words and the offset of their opening quote mark."""
    for g in ("q1", "q2", "q3", "q4", "q5"):
        if g in m.re.groupindex and m.group(g) is not None:
            return m.group(g), m.start(g) - 1
    return None  # pragma: no cover


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


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

    def authorises(self, cid: CitationId) -> bool:
        return any(a.covers(cid) for a, _ in self.entries)

    def texts_for(self, cid: CitationId) -> list[str]:
        return [c.text for a, c in self.entries if c.text is not None and a.same_citation(cid)]

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
        from trustgate import Brief, check_citations

        brief = Brief(citations=["ISO/IEC 27001:2022 Annex A 5.9"])
        draft = "Per A.5.9 we keep a register; audits follow ISO 27001 clauses 9.2 and 9.3."
        codes = [f.code for f in check_citations(draft, brief)]
        assert codes == ["invented_citation", "invented_citation"]
        ```
    """
    if not isinstance(draft, str):
        raise InputError(f"draft must be text (str), got {type(draft).__name__}")
    approved = _ApprovedSet(_coerce_brief(brief), patterns)
    found = extract_citations(draft, approved.patterns, frameworks=approved.frameworks)

    invented: dict[str, list[CitationMatch]] = {}
    failures: list[tuple[int, str, str, Finding]] = []
    seen_altered: set[tuple[str, str, str]] = set()

    groups: dict[tuple[int, int], list[CitationMatch]] = {}
    for m in found:
        groups.setdefault((m.start, m.end), []).append(m)
    quotes: dict[int, tuple[str, int]] = {}  # id(match) -> (quote, offset)
    used_quote_starts: set[int] = set()
    for (_start, end), members in groups.items():
        after = _QUOTE_AFTER.match(draft, end)
        got = _quote(after) if after is not None else None
        if (
            after is not None
            and "," in after.group("gap")
            and not _APPOSITIVE_END.match(draft, after.end())
        ):
            got = None
        if got is not None:
            quotes[id(members[-1])] = got
            used_quote_starts.add(got[1])
    for (start, _end), members in groups.items():
        if id(members[0]) in quotes:
            continue
        line_start = draft.rfind("\n", 0, start) + 1
        before = _QUOTE_BEFORE.search(draft, max(line_start, start - 2100), start)
        got = _quote(before) if before is not None else None
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
                                f'"{m.written}" cites edition {m.edition} of ISO {cid.framework}; '
                                f"the brief approves edition {wanted}",
                                subject=str(cid),
                                detail={
                                    "reason": "edition",
                                    "canonical": cid.key,
                                    "written": m.written,
                                    "remove": [m.written],
                                    "edition": m.edition,
                                    "approved_editions": sorted(editions),
                                    "offset": m.start,
                                    "line": _line(draft, m.start),
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
            "written": m.written,
            "remove": [m.written],
            "quoted": quote,
            "approved_text": texts[0] if len(texts) == 1 else texts,
            "offset": m.start,
            "line": _line(draft, m.start),
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
                    f'{cid} is quoted as "{quote}" but the brief approves "{texts[0]}"{hint}',
                    subject=str(cid),
                    detail=detail,
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
                    f'"{first.written}" cites {first.id}, which is not in the brief\'s approved '
                    f"citations ({len(approved_list)} approved)",
                    subject=str(first.id),
                    detail={
                        "canonical": canonical,
                        "written": sorted({m.written for m in matches}),
                        "remove": sorted({m.written for m in matches}),
                        "occurrences": len(matches),
                        "offset": first.start,
                        "line": _line(draft, first.start),
                        "approved": approved_list,
                    },
                ),
            )
        )

    if failures:
        failures.sort(key=lambda f: (f[0], f[1], f[2]))
        return [f for *_, f in failures]
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
