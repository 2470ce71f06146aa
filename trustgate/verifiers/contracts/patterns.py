"""Finding framework citations in text and giving each one canonical identity.

A closed-list contract is only as good as its notion of "the same citation":
"ISO/IEC 27001:2022 clause 9.2", "ISO 27001 §9.2" and "27001 9.2" must be one id,
or an honest draft that writes the clause its own way is flagged (a false positive
is an outage in compliance drafting), and "clause 9.2" must never be mistaken for "clause 9.3".
The same canonicalisation is applied to the brief's approved ids and to the draft,
so both sides are compared in one vocabulary.

Canonical rules (documented in the README of the contract checker too):

* A citation is ``(kind, framework, ref, sub)``. Kinds shipped: ``clause`` (ISO/IEC
  clauses, ``§`` sections, CFR sections), ``annex`` (Annex A controls), ``article``
  (GDPR-style articles) and ``id`` (bracketed ids like ``[C-12]``).
* ISO frameworks are keyed by number and part only: "ISO/IEC 27001:2022", "ISO 27001"
  and "IEC 27001" are framework ``27001``. The edition year is kept beside the id
  (an edition the brief does not approve is an altered citation, not a new id).
* A bare framework number ("27001 9.2") is read as a citation only when the brief
  names that framework, so "2026 9.2" or "10000 3.5" stay plain numbers.
* Numbers become citations only when attached to a keyword or a framework: "clause",
  "§", "Article", "Annex A", "A.5.9", an ISO/CFR framework, brackets. "9.2 seconds",
  "version 9.2", "14:02" and dates are never citations. "section" counts only next
  to a framework ("ISO 27001 section 9.2"): a bare "see section 3" is the document's
  own structure, and so is a clause or article "of this policy", "of our contract",
  "of the supplier agreement".
* A citation that names no framework ("clause 9.2") is compatible with an approved
  citation of any framework with the same ref; when both name one, they must agree.
* Dotted numbers are distinct ids ("clause 9" does not approve "clause 9.2");
  parenthesised subdivisions are not: an approved "Article 32" covers
  "Article 32(1)(b)", and a draft citing "Article 32" when the brief approves
  "Article 32(1)" names the same article with less precision, which adds no new
  authority and is accepted. "Article 32(2)" against an approved "Article 32(1)" is
  invented.
* Lists and ranges ("clauses 9.2 and 9.3", "9.2–9.3") yield each written endpoint.
* A bare framework ("ISO/IEC 27001:2022" alone) is not a citation of anything in it:
  approving the standard does not approve each of its clauses. A brief id that no
  pattern reads is matched as literal text by the contract checker.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trustgate.errors import ClaimTooLarge

__all__ = [
    "DEFAULT_CITATION_PATTERNS",
    "AnnexControlPattern",
    "ArticlePattern",
    "BracketIdPattern",
    "CitationId",
    "CitationMatch",
    "CitationPattern",
    "ClausePattern",
    "RegexCitationPattern",
    "extract_citations",
]


class CitationId(BaseModel):
    """The canonical identity of one citation; equal ids are the same citation.

    Example:
        ```python
        from trustgate.verifiers.contracts.patterns import CitationId

        approved = CitationId(kind="article", framework="gdpr", ref="32")
        assert approved.covers(CitationId(kind="article", ref="32", sub=("1",)))
        ```
    """

    model_config = ConfigDict(frozen=True)

    kind: str
    framework: str | None = None
    ref: str
    sub: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """A stable string form, used for sorting, dedup and JSON output."""
        return (
            f"{self.kind}:{self.framework or '*'}:{self.ref}{''.join(f'({s})' for s in self.sub)}"
        )

    def __str__(self) -> str:
        sub = "".join(f"({s})" for s in self.sub)
        fw = self.framework
        if self.kind == "clause":
            if fw is None:
                return f"clause {self.ref}{sub}"
            if fw.startswith("cfr"):
                return f"{fw[3:]} CFR § {self.ref}{sub}"
            return f"ISO {fw} clause {self.ref}{sub}"
        if self.kind == "annex":
            return f"{'ISO ' + fw + ' ' if fw else ''}Annex {self.ref}{sub}"
        if self.kind == "article":
            return f"{fw.upper() + ' ' if fw else ''}Article {self.ref}{sub}"
        if self.kind == "id":
            return f"[{self.ref}]"
        return f"{fw + ' ' if fw else ''}{self.ref}{sub}"

    def _same_unit(self, other: CitationId) -> bool:
        if self.kind != other.kind or self.ref != other.ref:
            return False
        return (
            self.framework is None or other.framework is None or self.framework == other.framework
        )

    def covers(self, other: CitationId) -> bool:
        """True when this (approved) citation authorises ``other`` (a draft's citation).

        Same kind and ref, compatible frameworks (unnamed matches any), and one
        subdivision path a prefix of the other.
        """
        if not self._same_unit(other):
            return False
        n = min(len(self.sub), len(other.sub))
        return self.sub[:n] == other.sub[:n]

    def same_citation(self, other: CitationId) -> bool:
        """True when both name exactly the same unit (wording may then be compared)."""
        return self._same_unit(other) and self.sub == other.sub


class CitationMatch(BaseModel):
    """One citation found in a text, with where it was written.

    ``start``/``end`` delimit the whole written citation (for a list such as
    "clauses 9.2 and 9.3" every item shares the span of the list). ``edition`` is the
    edition year written with an ISO framework, if any.
    """

    model_config = ConfigDict(frozen=True)

    id: CitationId
    written: str
    start: int
    end: int
    pattern: str
    edition: str | None = None


class _Taken:
    """How far the citations accepted so far reach (shared by extract_citations with the
    shipped patterns, which skip anchors inside it instead of reading them)."""

    __slots__ = ("limit", "until")

    def __init__(self, limit: int | None = None) -> None:
        self.until = -1
        self.limit = limit  # a list longer than this is not read further


_NOTHING_TAKEN = _Taken()


class CitationPattern(BaseModel):
    """A way citations are written. Subclass and implement :meth:`find` to add one.

    ``frameworks`` is the set of canonical framework keys the brief names; a pattern
    may use it to accept shorthand that is only unambiguous in that context (the
    shipped clause pattern reads "27001 9.2" only when the brief names 27001).

    For most needs :class:`RegexCitationPattern` is enough.
    """

    model_config = ConfigDict(frozen=True)

    name: str

    def find(self, text: str, frameworks: frozenset[str]) -> Iterable[CitationMatch]:
        raise NotImplementedError  # pragma: no cover


class RegexCitationPattern(CitationPattern):
    """A user-defined citation form: a regex, a kind, and optionally a framework.

    The named group ``ref`` (else the whole match) is the reference; it is compared
    case-insensitively with whitespace collapsed.

    Example:
        ```python
        from trustgate.verifiers.contracts.patterns import (
            DEFAULT_CITATION_PATTERNS, RegexCitationPattern, extract_citations)

        soc2 = RegexCitationPattern(name="soc2", regex=r"\\bCC(?P<ref>\\d+\\.\\d+)\\b",
                                    kind="soc2")
        found = extract_citations("Control CC6.1 applies.", [*DEFAULT_CITATION_PATTERNS, soc2])
        assert str(found[0].id) == "6.1"
        ```
    """

    regex: str
    kind: str = Field(min_length=1)
    framework: str | None = None
    ignore_case: bool = False

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"citation pattern does not compile: {exc}") from None
        return value

    def find(self, text: str, frameworks: frozenset[str]) -> Iterable[CitationMatch]:
        rx = re.compile(self.regex, re.IGNORECASE if self.ignore_case else 0)
        for m in rx.finditer(text):
            if m.end() == m.start():
                continue
            raw = m.group("ref") if "ref" in rx.groupindex and m.group("ref") else m.group(0)
            ref = " ".join(raw.split()).upper()
            if not ref:
                continue
            yield CitationMatch(
                id=CitationId(kind=self.kind, framework=self.framework, ref=ref),
                written=m.group(0),
                start=m.start(),
                end=m.end(),
                pattern=self.name,
            )


# --------------------------------------------------------------------------- shared bits

_FW = (
    r"(?:ISO\s*/\s*IEC|ISO|IEC)[\s\u00a0]*(?P<num>\d{4,5}(?:-\d{1,2}){0,2})"
    r"(?:\s*:\s*(?P<year>(?:19|20)\d{2}))?"
)
_FW_RX = re.compile(_FW)
# The separator allowed between list items: "9.2, 9.3 and 10.1", "9.2–9.3", "9.2 to 9.3".
_CONT = re.compile(
    r"[ \t\u00a0]*(?:,[ \t\u00a0]*(?:and|or)?|and|or|&|to|through|–|—|-|/)[ \t\u00a0]*"
    r"(?:(?i:clauses?|cl\.|§§?|sections?|controls?)[ \t\u00a0]*)?"
)
_SUB = r"(?:\((?:\d{1,3}|[a-z]{1,2}|[ivxlc]{1,6}|[A-Z])\))"


# "clause 4 of this policy", "Article 3 of the supplier agreement": the document's own
# structure or a contract's, not a framework citation.
_OWN_DOCUMENT = re.compile(
    r"[ \t\u00a0]+(?i:of|in)[ \t\u00a0]+(?:(?i:this|our|your|that|each)(?!\w)"
    r"|(?i:the|a|an)[ \t\u00a0]+(?:[\w-]+[ \t\u00a0]+){0,2}?"
    r"(?i:contracts?|agreements?|policy|policies|procedures?|documents?|plan|sla|terms|"
    r"template|appendix|annex(?![ \t\u00a0]+[A-Z]\b)|below|above)(?!\w))"
)


_SUB_PARTS = re.compile(r"\(([^)]*)\)")


def _subs(raw: str) -> tuple[str, ...]:
    if "(" not in raw:
        return ()
    return tuple(s.lower() for s in _SUB_PARTS.findall(raw))


def _read_list(
    text: str,
    pos: int,
    item: re.Pattern[str],
    *,
    first_dotted: bool = False,
    limit: int | None = None,
) -> list[re.Match[str]]:
    """Read ``item`` at ``pos`` and every continuation item after it (at most
    ``limit`` + 1 of them: more is refused by the caller anyway)."""
    first = item.match(text, pos)
    if first is None or (first_dotted and "." not in first.group("ref")):
        return []
    items = [first]
    dotted = "." in first.group("ref")
    while limit is None or len(items) <= limit:
        sep = _CONT.match(text, items[-1].end())
        if sep is None or sep.end() == items[-1].end():
            break
        nxt = item.match(text, sep.end())
        if nxt is None or (dotted and "." not in nxt.group("ref")):
            break
        items.append(nxt)
    return items


def _emit(
    text: str,
    start: int,
    end: int,
    items: Sequence[tuple[CitationId, str | None]],
    pattern: str,
) -> list[CitationMatch]:
    written = text[start:end]  # one string shared by every item of the list
    return [
        CitationMatch(id=cid, written=written, start=start, end=end, pattern=pattern, edition=ed)
        for cid, ed in items
    ]


# --------------------------------------------------------------------------- clauses


class ClausePattern(CitationPattern):
    """ISO/IEC clauses, ``§`` sections and CFR sections.

    Written forms: "ISO/IEC 27001:2022 clause 9.2", "ISO 27001 §9.2", "ISO 27001 9.2",
    "27001 9.2" (brief names 27001), "clause 9.2 of ISO 27001", "clauses 9.2 and 9.3",
    "§ 164.312(a)(1)", "45 CFR § 164.312", "45 C.F.R. 164.312".
    """

    name: str = "clause"

    _ITEM: ClassVar[re.Pattern[str]] = re.compile(
        rf"(?P<ref>\d{{1,4}}(?:\.\d{{1,4}}){{0,4}})(?P<sub>{_SUB}*)(?![\w%]|[.,:]\d)"
    )
    _ANCHOR: ClassVar[re.Pattern[str]] = re.compile(
        rf"(?<![\w/]){_FW}"
        r"|(?<![\w.])(?P<title>\d{1,2})[ \t\u00a0]*C\.?[ \t]?F\.?[ \t]?R\.?(?!\w)"
        r"|(?<![\w.:/-])(?P<bare>\d{4,5})(?::(?P<byear>(?:19|20)\d{2}))?(?=[ \t\u00a0])"
        r"|(?P<kw>(?<!\w)(?i:clauses?|cl\.)(?!\w)|§§?)"
    )
    _AFTER_FW: ClassVar[re.Pattern[str]] = re.compile(
        r"[ \t\u00a0]*,?[ \t\u00a0]*"
        r"(?P<kw>(?i:clauses?|cl\.|sections?|sec\.)[ \t\u00a0]*|§§?[ \t\u00a0]*)?"
    )
    _AFTER_CFR: ClassVar[re.Pattern[str]] = re.compile(
        r"[ \t\u00a0]*(?:§§?|(?i:parts?|sections?|sec\.))?[ \t\u00a0]*"
    )
    _OF_FW: ClassVar[re.Pattern[str]] = re.compile(
        rf"[ \t\u00a0]+(?i:of|in)[ \t\u00a0]+(?:(?i:the)[ \t\u00a0]+)?{_FW}"
    )

    def find(self, text: str, frameworks: frozenset[str]) -> Iterable[CitationMatch]:
        return self._find(text, frameworks, _NOTHING_TAKEN)

    def _find(
        self, text: str, frameworks: frozenset[str], taken: _Taken
    ) -> Iterator[CitationMatch]:
        for a in self._ANCHOR.finditer(text):
            if a.start() < taken.until:
                continue  # inside a citation already accepted: it would be discarded
            framework: str | None
            edition: str | None = None
            first_dotted = False
            if a.group("num"):
                framework, edition = a.group("num"), a.group("year")
                after = self._AFTER_FW.match(text, a.end())
                assert after is not None  # everything in it is optional
                pos, first_dotted = after.end(), after.group("kw") is None
            elif a.group("title"):
                framework = "cfr" + a.group("title")
                after = self._AFTER_CFR.match(text, a.end())
                assert after is not None
                pos = after.end()
            elif a.group("bare"):
                if a.group("bare") not in frameworks:
                    continue
                framework, edition = a.group("bare"), a.group("byear")
                after = self._AFTER_FW.match(text, a.end())
                assert after is not None
                pos, first_dotted = after.end(), after.group("kw") is None
            else:
                framework = None
                pos = a.end()
                while pos < len(text) and text[pos] in " \t\u00a0":
                    pos += 1
            items = _read_list(text, pos, self._ITEM, first_dotted=first_dotted, limit=taken.limit)
            if not items:
                continue
            end = items[-1].end()
            if a.group("kw") and _OWN_DOCUMENT.match(text, end):
                continue
            if framework is None:
                of = self._OF_FW.match(text, end)
                if of is not None:
                    framework, edition, end = of.group("num"), of.group("year"), of.end()
            cids = [
                (
                    CitationId(
                        kind="clause",
                        framework=framework,
                        ref=m.group("ref"),
                        sub=_subs(m.group("sub")),
                    ),
                    edition,
                )
                for m in items
            ]
            yield from _emit(text, a.start(), end, cids, self.name)


# --------------------------------------------------------------------------- annex controls


class AnnexControlPattern(CitationPattern):
    """Annex controls: "Annex A 5.9", "Annex A, control 5.9", "Annex A.5.9", "A.5.9".

    The short "A.5.9" form is only read for Annex A (the ISO 27001 convention); other
    annexes need the word "Annex". An optional ISO framework before it names the
    framework ("ISO/IEC 27001:2022 Annex A 5.9").
    """

    name: str = "annex_control"

    _ANCHOR: ClassVar[re.Pattern[str]] = re.compile(
        rf"(?:(?<![\w/]){_FW}[ \t\u00a0]*,?[ \t\u00a0]*)?"
        r"(?:(?<!\w)(?i:annex)[ \t\u00a0]+(?P<letter>[A-Z])"
        r"(?:\.(?=\d)|[ \t\u00a0]*[,:]?[ \t\u00a0]*(?:(?i:controls?)[ \t\u00a0]*)?)"
        r"|(?<![\w.])(?P<short>A)\.)"
    )
    _ITEM: ClassVar[re.Pattern[str]] = re.compile(
        rf"(?:[A-Z]\.)?(?P<ref>\d{{1,2}}(?:\.\d{{1,3}}){{1,2}})(?P<sub>{_SUB}*)(?![\w%]|\.\d)"
    )

    def find(self, text: str, frameworks: frozenset[str]) -> Iterable[CitationMatch]:
        return self._find(text, frameworks, _NOTHING_TAKEN)

    def _find(
        self, text: str, frameworks: frozenset[str], taken: _Taken
    ) -> Iterator[CitationMatch]:
        for a in self._ANCHOR.finditer(text):
            if a.start() < taken.until:
                continue
            letter = a.group("letter") or a.group("short")
            items = _read_list(text, a.end(), self._ITEM, first_dotted=True, limit=taken.limit)
            if not items:
                continue
            cids = [
                (
                    CitationId(
                        kind="annex",
                        framework=a.group("num"),
                        ref=f"{letter}.{m.group('ref')}",
                        sub=_subs(m.group("sub")),
                    ),
                    a.group("year"),
                )
                for m in items
            ]
            yield from _emit(text, a.start(), items[-1].end(), cids, self.name)


# --------------------------------------------------------------------------- articles

_NOT_FRAMEWORKS = frozenset({"EU", "UK", "US", "THE", "AND", "OR", "OF", "IN", "SEE", "PER"})


class ArticlePattern(CitationPattern):
    """Articles of a regulation: "Article 32(1)", "Art. 32(1)(b) GDPR", "GDPR Article 5".

    An upper-case acronym right before "Article" or right after the article number
    ("Article 32 GDPR", "Article 32 of the GDPR") names the framework.
    """

    name: str = "article"

    _ANCHOR: ClassVar[re.Pattern[str]] = re.compile(
        r"(?:(?<![\w-])(?P<pre>[A-Z][A-Z0-9]{1,9})[ \t\u00a0]+)?"
        r"(?<!\w)(?:(?i:articles?)(?!\w)|Arts?\.)[ \t\u00a0]*"
    )
    _ITEM: ClassVar[re.Pattern[str]] = re.compile(
        rf"(?P<ref>\d{{1,3}}[a-z]?)(?P<sub>(?:[ ]?{_SUB})*)(?![\w%]|[.,:]\d)"
    )
    _POST: ClassVar[re.Pattern[str]] = re.compile(
        r"[ \t\u00a0]+(?:(?i:of)[ \t\u00a0]+(?:(?i:the)[ \t\u00a0]+)?)?(?:(?:EU|UK)[ \t\u00a0]+)?"
        r"(?P<post>[A-Z][A-Z0-9]{1,9})(?![\w-])"
    )

    def find(self, text: str, frameworks: frozenset[str]) -> Iterable[CitationMatch]:
        return self._find(text, frameworks, _NOTHING_TAKEN)

    def _find(
        self, text: str, frameworks: frozenset[str], taken: _Taken
    ) -> Iterator[CitationMatch]:
        for a in self._ANCHOR.finditer(text):
            if a.start() < taken.until:
                continue
            items = _read_list(text, a.end(), self._ITEM, limit=taken.limit)
            if not items:
                continue
            end = items[-1].end()
            if _OWN_DOCUMENT.match(text, end):
                continue
            pre = a.group("pre")
            framework = pre.lower() if pre and pre not in _NOT_FRAMEWORKS else None
            post = self._POST.match(text, end)
            if post is not None and post.group("post") not in _NOT_FRAMEWORKS:
                if framework is None:
                    framework = post.group("post").lower()
                end = post.end()
            cids = [
                (
                    CitationId(
                        kind="article",
                        framework=framework,
                        ref=m.group("ref").lower(),
                        sub=_subs(m.group("sub")),
                    ),
                    None,
                )
                for m in items
            ]
            yield from _emit(text, a.start(), end, cids, self.name)


# --------------------------------------------------------------------------- bracketed ids


class BracketIdPattern(CitationPattern):
    """Bracketed requirement ids: "[C-12]", "[REQ-7.1]", "[SOC2-CC6.1]".

    The id needs a hyphen and a digit, so markdown links ("[see here](...)"), task
    boxes ("[x]") and record markers ("[[12]]") are not read as ids.
    """

    name: str = "bracket_id"

    _RX: ClassVar[re.Pattern[str]] = re.compile(
        r"(?<!\[)\[[ \t]*(?P<ref>[A-Za-z][A-Za-z0-9]{0,15}-[A-Za-z0-9]+(?:[.\-][A-Za-z0-9]+)*)"
        r"[ \t]*\](?![(\]])"
    )

    def find(self, text: str, frameworks: frozenset[str]) -> Iterable[CitationMatch]:
        return self._find(text, frameworks, _NOTHING_TAKEN)

    def _find(
        self, text: str, frameworks: frozenset[str], taken: _Taken
    ) -> Iterator[CitationMatch]:
        for m in self._RX.finditer(text):
            ref = m.group("ref")
            if not any(c.isdigit() for c in ref):
                continue
            yield CitationMatch(
                id=CitationId(kind="id", ref=ref.upper()),
                written=m.group(0),
                start=m.start(),
                end=m.end(),
                pattern=self.name,
            )


# The shipped patterns' own find(): a subclass that overrides find() is sorted instead.
_SHIPPED_FIND: dict[type[CitationPattern], object] = {
    cls: cls.find for cls in (ClausePattern, AnnexControlPattern, ArticlePattern, BracketIdPattern)
}

DEFAULT_CITATION_PATTERNS: tuple[CitationPattern, ...] = (
    ClausePattern(),
    AnnexControlPattern(),
    ArticlePattern(),
    BracketIdPattern(),
)
"""The shipped patterns; extend with ``(*DEFAULT_CITATION_PATTERNS, my_pattern)``."""


def extract_citations(
    text: str,
    patterns: Sequence[CitationPattern] = DEFAULT_CITATION_PATTERNS,
    *,
    frameworks: Iterable[str] = (),
    limit: int | None = None,
) -> list[CitationMatch]:
    """Every citation in ``text``, in reading order, overlapping forms resolved.

    With ``limit``, more citations than that raise ``ClaimTooLarge`` as soon as the
    limit is passed (the contract check passes :data:`trustgate._limits.MAX_DRAFT_ITEMS`).

    When two patterns claim overlapping text, the hit that starts first wins, then the
    longer one, then the earlier pattern: "ISO 27001 clause 9.2" is one clause
    citation, not also a bare "clause 9.2"; "45 CFR § 164.312" is one CFR citation.

    Example:
        ```python
        from trustgate.verifiers.contracts.patterns import extract_citations

        found = extract_citations("ISO/IEC 27001:2022 clauses 9.2 and 9.3 apply.")
        assert [str(c.id) for c in found] == ["ISO 27001 clause 9.2", "ISO 27001 clause 9.3"]
        ```
    """
    known = frozenset(frameworks)
    taken = _Taken(limit)
    streams: list[Iterator[tuple[int, int, int, CitationMatch]]] = []
    for index, pattern in enumerate(patterns):
        streams.append(_keyed(pattern, text, known, taken, index))
    result: list[CitationMatch] = []
    accepted: tuple[int, int, int] | None = None
    # Hits arrive in (start, longest first, pattern order): the first hit at a place
    # wins and every hit starting inside it is dropped. The shipped patterns see how far
    # accepted hits reach and skip anchors inside them, so a list of a hundred thousand
    # items is read once, not once per item (which was quadratic in time and memory).
    for start, neg_len, index, match in heapq.merge(*streams, key=lambda h: h[:3]):
        key = (start, neg_len, index)
        if key == accepted or start >= taken.until:
            accepted = key
            taken.until = max(taken.until, start - neg_len)
            result.append(match)
            if limit is not None and len(result) > limit:
                raise ClaimTooLarge(
                    f"the draft cites more than {limit:,} times (the cap of citations "
                    "read in one draft); nothing in it was checked"
                )
    return result


def _keyed(
    pattern: CitationPattern, text: str, known: frozenset[str], taken: _Taken, index: int
) -> Iterator[tuple[int, int, int, CitationMatch]]:
    """One pattern's hits as sortable tuples, in the merge order."""
    finder = getattr(pattern, "_find", None)
    if finder is not None and type(pattern).find is _SHIPPED_FIND.get(type(pattern)):
        for m in finder(text, known, taken):
            yield (m.start, -(m.end - m.start), index, m)
        return
    # a user-defined pattern may yield in any order: sort its hits first
    hits = sorted(
        ((m.start, -(m.end - m.start), index, m) for m in pattern.find(text, known)),
        key=lambda h: h[:3],
    )
    yield from hits
