"""The contract and integrity checks do work linear in the draft (issue 12, item 5).

No timing assertions (shared machine): the adversarial drafts here made the checks
quadratic in time and cubic in memory (a list of 10,000 "A.5.9, " held ~10^8 copies
of its own text), so a bounded memory peak and a finished run are the evidence;
``bench/limits.py`` prints the times. The quote readers were rewritten from regex
searches to ``str.find`` scans; the old regexes stay here as the oracle.
"""

from __future__ import annotations

import re
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustgate.contracts import Brief, EvidenceSet, check_citations, check_integrity
from trustgate.verifiers.contracts.citations import _faithful, _quote_after, _quote_before
from trustgate.verifiers.contracts.patterns import extract_citations

BRIEF = Brief(
    citations=[
        {"id": "ISO/IEC 27001:2022 A.5.9", "text": "Inventory of information and other assets"},
        "GDPR Article 32(1)",
        "clause 9.2",
    ]
)
EVIDENCE = EvidenceSet(urls=["https://example.com/a"], prices=["$5"])

ADVERSARIAL = {
    "annex list": "A.5.9, ",
    "clause list": "clauses 9.2 and 9.3 and ",
    "article list": "Article 32(1)(b) and ",
    "quoted": 'A.5.9 "Inventory of information x" ',
    "quote before": '"aaaa aaaa aaaa" A.5.9 ',
    "open quotes": "A.5.9 “ A.5.9 ‘ A.5.9 « ",
    "distinct ids": None,  # filled below
    "digit groups": "1 000 ",
    "nbsp groups": "1\u00a0",
    "dollars": "$1,000,000 ",
    "url closers": "http://a.b/" + ")" * 50 + " ",
    "emails": "a@b.c ",
    "fullwidth": "\uff04\uff11 ",
    "brackets": "[",
    "images": "![",
}


def _text(name: str, size: int) -> str:
    if name == "distinct ids":
        return "".join(f"A.{i % 90 + 1}.{i // 90 % 900 + 1} " for i in range(size // 8))[:size]
    unit = ADVERSARIAL[name]
    assert unit is not None
    return (unit * (size // len(unit) + 1))[:size]


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_drafts_stay_bounded(name: str) -> None:
    text = _text(name, 30_000)
    tracemalloc.start()
    try:
        citations = check_citations(text, BRIEF)
        integrity = check_integrity(text, EVIDENCE)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert citations and integrity
    assert peak < 150 * 1024 * 1024, f"{name}: {peak / 2**20:.0f} MiB"
    for f in (*citations, *integrity):
        assert len(f.message) < 600  # a hostile citation cannot bloat the report


def test_a_long_list_is_one_citation_span_read_once() -> None:
    text = "A.5.9, " * 20_000
    found = extract_citations(text)
    assert len(found) == 20_000
    assert len({id(m.written) for m in found}) == 1  # one shared string, not 20,000 copies


# --------------------------------------------------------------- the old regex readers

_QUOTES = (
    r"\"(?P<q1>[^\"\n]{1,2000})\"|“(?P<q2>[^”\n]{1,2000})”"
    r"|‘(?P<q3>[^’\n]{1,2000})’|«(?P<q4>[^»\n]{1,2000})»"
)
_GAP = r"[ \t\u00a0*_]*(?:[:,(\[–—-][ \t\u00a0*_]*){0,2}"
_OLD_AFTER = re.compile(rf"(?P<gap>{_GAP})(?:{_QUOTES}|(?<=[\s(:])'(?P<q5>[^'\n]{{1,2000}})')")
_OLD_BEFORE = re.compile(rf"(?:{_QUOTES})[ \t\u00a0*_]*(?:[:,(\[–—-][ \t\u00a0*_]*){{0,2}}$")


def _old_quote(m: re.Match[str]) -> tuple[str, int] | None:
    for g in ("q1", "q2", "q3", "q4", "q5"):
        if g in m.re.groupindex and m.group(g) is not None:
            return m.group(g), m.start(g) - 1
    return None


_alphabet = st.sampled_from([*"ab \t\n*_:,([–—-\"“”‘’«»'.", "\u00a0"])


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet=_alphabet, max_size=40), st.integers(0, 40))
def test_quote_after_matches_the_old_regex(text: str, pos: int) -> None:
    pos = min(pos, len(text))
    old = _OLD_AFTER.match(text, pos)
    new = _quote_after(text, pos)
    expected = _old_quote(old) if old is not None else None
    assert (new[:2] if new else None) == expected
    if new is not None and old is not None:
        assert new[2] == old.group("gap") and new[3] == old.end()


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet=_alphabet, max_size=40), st.integers(0, 40), st.integers(0, 40))
def test_quote_before_matches_the_old_regex(text: str, start: int, back: int) -> None:
    start = min(start, len(text))
    lo = max(text.rfind("\n", 0, start) + 1, start - back)
    old = _OLD_BEFORE.search(text, lo, start)
    assert _quote_before(text, start, lo) == (_old_quote(old) if old is not None else None)


def _old_faithful(quote: str, approved: str) -> bool:
    import unicodedata

    def words(t: str) -> list[str]:
        return re.findall(r"\w+", unicodedata.normalize("NFKC", t).casefold())

    target, pos = words(approved), 0
    for fragment in re.split(r"\[\s*(?:\.\.\.|…)\s*\]|\.\.\.|…", quote):
        w = words(fragment)
        if not w:
            continue
        for i in range(pos, len(target) - len(w) + 1):
            if target[i : i + len(w)] == w:
                pos = i + len(w)
                break
        else:
            return False
    return True


@settings(max_examples=1000, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab c.…")), max_size=30),
    st.text(alphabet=st.sampled_from(list("ab c")), max_size=30),
)
def test_faithful_matches_the_old_word_scan(quote: str, approved: str) -> None:
    assert _faithful(quote, approved) == _old_faithful(quote, approved)
