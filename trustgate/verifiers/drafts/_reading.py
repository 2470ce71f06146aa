"""The rules' pass over a draft: which units they delete, and why.

:func:`read` segments the draft once (:func:`~trustgate.verifiers.drafts.segment.units`:
spans, not strings), reads every citation marker once
(:mod:`trustgate.verifiers.drafts._markers`), and then asks the rules only about the
units where they could object. A unit's text is sliced out of the draft only when
something reads it, and the state of a unit the rules pass over is nothing at all: on
an ordinary draft that is most of them, and building an object for each cost more
than reading them.

Which units the shipped rules could object to is decided by their own pre-scan
(:mod:`trustgate.verifiers.drafts._triggers`): a unit holding no key word of a
reading is not read for it, a cited unit is no business of the causal reading, and
every test is a necessary condition of the reading it stands for, so skipping changes
no verdict (``tests/unit/test_draft_equivalence.py`` compares with reading every unit).
"""

from __future__ import annotations

import functools
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field

from trustgate.evidence.record import Record
from trustgate.verifiers.drafts import _markers, _triggers
from trustgate.verifiers.drafts._grammar.setaside import QUESTION_END
from trustgate.verifiers.drafts._text import foreign_words, mostly_symbols, symbols_only_matter
from trustgate.verifiers.drafts._text import unsupported as _unsupported
from trustgate.verifiers.drafts.rules import (
    DraftSentence,
    SentenceRule,
    _ConstructionRule,
    document_form,
    normalise,
)
from trustgate.verifiers.drafts.segment import Unit, units

__all__ = ["UNSUPPORTED", "Reading", "read"]

Reasons = list[tuple[SentenceRule, str]]


class _UnsupportedRule(SentenceRule):
    """Names the removal of a sentence ``strict`` mode could not read."""

    name = "unsupported"
    code = "unsupported_text"
    reason = (
        "the rules cannot read this sentence (another language or mostly symbols): "
        "unverifiable, deleted in strict mode"
    )

    def check(self, sentence: DraftSentence) -> str | None:
        return self.reason if _unsupported(sentence.text) else None


UNSUPPORTED = _UnsupportedRule()


@dataclass(slots=True)
class Reading:
    """A draft as the rules left it: its units (code excluded), what their markers
    say, and the units to delete with every rule's reason (first rule first)."""

    draft: str
    units: list[Unit]
    found: _markers.Found
    reasons: dict[int, Reasons] = field(default_factory=dict)
    unsupported: list[int] = field(default_factory=list)
    """Units the rules cannot read, kept and reported (without ``strict``)."""

    def text(self, i: int) -> str:
        """The text of unit ``i`` as written."""
        start, end = self.units[i][0], self.units[i][1]
        return self.draft[start:end]


@functools.cache
def _unreadable() -> bytes:
    """A ``bytes.translate`` table: 1 for an ASCII character :func:`mostly_symbols`
    counts against a sentence, 0 for the rest (taken from the function itself, so
    the two cannot drift apart)."""
    return bytes(1 if b < 128 and mostly_symbols(chr(b) * 12) else 0 for b in range(256))


@functools.lru_cache(maxsize=16)
def _as_bytes(keys: frozenset[str]) -> frozenset[bytes]:
    return frozenset(k.encode("ascii") for k in keys)


def _first_pass(
    draft: str,
    found_units: list[Unit],
    wform: str,
    citing: set[int],
    any_key: frozenset[str],
    cited_key: frozenset[str],
) -> tuple[dict[int, list[bytes]], set[int]]:
    """For the shipped rules, one tight pass over every unit: the units that may hold
    a key word of a side that could object to them (a cited unit is never the causal
    side's), and the units the rules cannot read.

    Each unit is split once, as bytes (cheaper than ``str.split``), into its runs of
    letters (the word form with digits made spaces too). That split serves both
    tests: a key is all letters, so a unit whose words hold a key holds it as a run
    of letters (a superset: the units found are read exactly after); and an ASCII
    draft none of whose units holds a function word of another language as a run of
    letters (how :func:`~trustgate.verifiers.drafts._text.symbols_only_matter` reads
    words) is unreadable only where it is mostly symbols, counted on the draft's
    bytes. Otherwise every unit is asked :func:`_unsupported`.

    Returns the units found, each with its words (what the sides' keys are looked up
    in next), and the units the rules cannot read.
    """
    letters = wform.encode("ascii").translate(_NO_DIGITS)
    keysets = (_as_bytes(any_key), _as_bytes(cited_key))
    keyed: dict[int, list[bytes]] = {}
    if not draft.isascii():
        for i, (s, e, _, _) in enumerate(found_units):
            words = letters[s:e].split()
            if not keysets[i in citing].isdisjoint(words):
                keyed[i] = words
        return keyed, _unreadable_units(draft, found_units, ask_all=True)
    symbols = draft.encode("ascii").translate(_unreadable())
    foreign = _foreign_bytes()
    counted: list[int] = []
    plain = True
    for i, (s, e, _, _) in enumerate(found_units):
        words = letters[s:e].split()
        if not keysets[i in citing].isdisjoint(words):  # hashes each word, once
            keyed[i] = words
        if plain:
            if e - s >= 12 and symbols.count(1, s, e) * 2 > e - s:
                counted.append(i)
            if not foreign.isdisjoint(words):  # bytes keep their hash: no second hashing
                plain = False
    if plain:
        return keyed, set(counted)
    return keyed, _unreadable_units(draft, found_units, ask_all=True)


_NO_DIGITS = bytes.maketrans(b"0123456789", b" " * 10)


@functools.cache
def _foreign_bytes() -> frozenset[bytes]:
    """The function words of other languages, as the first pass compares them (in an
    ASCII draft: a word with another letter cannot be in one)."""
    return frozenset(w.encode("ascii") for w in foreign_words() if w.isascii())


def _unreadable_units(draft: str, found_units: list[Unit], ask_all: bool = False) -> set[int]:
    """The units the rules cannot read: counted on the draft's bytes where only
    symbols matter (:func:`symbols_only_matter`), otherwise each unit asked."""
    if not ask_all and symbols_only_matter(draft):
        symbols = draft.encode("ascii").translate(_unreadable())
        return {
            i
            for i, (s, e, _, _) in enumerate(found_units)
            if e - s >= 12 and symbols.count(1, s, e) * 2 > e - s
        }
    return {i for i, (s, e, _, _) in enumerate(found_units) if _unsupported(draft[s:e])}


def _choose(
    draft: str,
    keyed: dict[int, list[bytes]],
    exact: set[int],
    found_units: list[Unit],
    form: str,
    citing: set[int],
    ruleset: tuple[SentenceRule, ...],
    sides: list[_triggers.Side],
    marked: set[int],
) -> dict[int, list[SentenceRule]]:
    """The shipped rules' quick pass: for each unit the first pass found (its runs of
    letters in hand), the rules whose side could fire on it.

    A side's keys are looked up in the unit's runs of letters (a superset of its
    words' keys: the keys are all letters); a key found is tried in context only when
    :meth:`~trustgate.verifiers.drafts._triggers.Side.could` lets it. Units in
    ``exact`` (a marker joins two words, a spelling the reading folds) are left to
    :func:`_exact_todo`. A question is chosen for no rule: the reading sets it aside
    before either side looks."""
    causal = _triggers.causal()
    steps = [
        (rule, side, _as_bytes(side.keys), side is causal)
        for rule, side in zip(ruleset, sides, strict=True)
    ]
    marker = _markers.MARKER
    chosen: dict[int, list[SentenceRule]] = {}
    for i, bwords in keyed.items():
        if i in exact:
            continue
        todo: list[SentenceRule] | None = None
        uform: str | None = None
        for rule, side, bkeys, is_causal in steps:
            if is_causal and i in citing:
                continue  # the causal law: a cited sentence is never its business
            found_keys = bkeys.intersection(bwords)
            if not found_keys or not side.could(bwords, found_keys):
                continue
            if uform is None:
                s, e = found_units[i][0], found_units[i][1]
                uform = marker.sub("", form[s:e]) if i in marked else form[s:e]
            if not side.fires(uform, [k.decode("ascii") for k in found_keys]):
                continue
            if todo is None:
                s, e = found_units[i][0], found_units[i][1]
                if "?" in draft[s:e] and _question(draft[s:e], i in marked):
                    break  # the reading never reads a question for either side
                todo = chosen[i] = []
            todo.append(rule)
    return chosen


def _question(text: str, is_marked: bool) -> bool:
    """Whether the shipped reading sets the unit aside as a question (it reads the
    text without its markers, :func:`~trustgate.verifiers.drafts._grammar.side`)."""
    plain = _markers.MARKER.sub("", text) if is_marked else text
    return QUESTION_END.search(plain) is not None


def _exact_todo(
    i: int,
    s: int,
    e: int,
    plan: list[tuple[SentenceRule, _triggers.Side | None, set[int] | None]],
    causal: _triggers.Side,
    citing: set[int],
    form: str | None,
    wform: str,
    folded: set[int],
    joins: set[int],
    is_marked: bool,
) -> list[SentenceRule]:
    """The rules that could object to unit ``i``, read from its own words: every
    unit when not every rule is a shipped side, else a unit the quick pass leaves."""
    todo: list[SentenceRule] = []
    uform: str | None = None
    words: list[str] | None = None
    blind = False
    for rule, side, h in plan:
        if side is None:
            if is_marked or h is None or i in h:
                todo.append(rule)
            continue
        if side is causal and i in citing:
            continue  # the causal law: a cited sentence is never its business
        if form is not None and i not in folded:
            if words is None:
                if i in joins:
                    # a marker between two non-spaces: removing it joins them
                    uform = _markers.MARKER.sub("", form[s:e])
                    blind = _triggers.joined(uform)
                    words = [] if blind else _triggers.words(uform)
                else:  # markers stand apart: the draft's words are the sentence's
                    words = wform[s:e].split()
            if not blind:
                keys = side.keys.intersection(words)
                if not keys:
                    continue
                if uform is None:
                    uform = form[s:e]
                    if is_marked:
                        uform = _markers.MARKER.sub("", uform)
                if not side.fires(uform, keys):
                    continue
        todo.append(rule)
    return todo


def read(
    draft: str, rec: Record, ruleset: tuple[SentenceRule, ...], strict: bool, exhaustive: bool
) -> Reading:
    """Run the rules over ``draft``; ``exhaustive`` reads every unit with the shipped
    rules, skipping none (the tests compare the two)."""
    found_units = units(draft, code=False)
    starts = [u[0] for u in found_units]
    found = _markers.read(draft, found_units, starts, rec.lines)
    reading = Reading(draft, found_units, found)
    if not found_units:
        return reading
    reasons = reading.reasons
    cited = found.cited
    marked = found.marked
    joins = found.joins
    # The shipped rules say for each sentence whether their reading could fire at
    # all (trustgate.verifiers.drafts._triggers); other rules that can say where to look
    # (pattern lexicons) are only shown the sentences holding a possible match.
    sides: list[_triggers.Side | None] = [
        (_triggers.causal() if r._side == "causal" else _triggers.hedge())
        if isinstance(r, _ConstructionRule) and r.lexicon is None and not exhaustive
        else None
        for r in ruleset
    ]
    form = _triggers.scan_form(draft) if any(sides) else None
    wform = _triggers.word_form(form) if form is not None else ""
    folded: set[int] = set()  # units holding a spelling the reading folds
    if form is not None:
        for p in _triggers.unstable(form):
            folded.add(bisect_right(starts, p) - 1)
    document = document_form(draft) if not all(sides) else None
    reach: list[set[int] | None] = []
    for rule, side in zip(ruleset, sides, strict=True):
        where = rule.positions(document) if document is not None and side is None else None
        if where is None:
            reach.append(None)
            continue
        hit: set[int] = set()
        for p in where:
            i = bisect_right(starts, p) - 1
            if i >= 0 and p < found_units[i][1]:
                hit.add(i)
        reach.append(hit)
    # The shipped rules read the sentence themselves; only other rules need the
    # normalised form, so it is built only for them.
    needs_normalised = any(
        not isinstance(r, _ConstructionRule) or r.lexicon is not None for r in ruleset
    )
    plan = list(zip(ruleset, sides, reach, strict=True))
    causal = _triggers.causal()
    # Shipped rules only: a unit holding no key word of a side that could object to
    # it is read by none (most units); a cited unit is never the causal side's.
    quick = all(sides) and form is not None
    any_key: frozenset[str] = frozenset().union(*(side.keys for side in sides if side is not None))
    cited_key: frozenset[str] = frozenset().union(
        *(side.keys for side in sides if side is not None and side is not causal)
    )
    unreadable: set[int]
    visit: Iterable[int]
    chosen: dict[int, list[SentenceRule]] = {}
    exact: set[int] | None = None  # units the quick pass leaves to the exact reading
    if quick:
        assert form is not None
        shipped = [side for side in sides if side is not None]  # every rule's, in order
        keyed, unreadable = _first_pass(draft, found_units, wform, found.citing, any_key, cited_key)
        exact = joins | {i for i in folded if i >= 0}
        chosen = _choose(
            draft, keyed, exact, found_units, form, found.citing, ruleset, shipped, marked
        )
        visit = sorted({*chosen, *unreadable, *exact})
    else:
        visit = range(len(found_units))
        unreadable = _unreadable_units(draft, found_units)
    unsupported = reading.unsupported
    for i in visit:
        s, e, kind, _ = found_units[i]
        if i in unreadable:
            if strict:
                reasons[i] = [(UNSUPPORTED, UNSUPPORTED.reason)]
                continue
            unsupported.append(i)
        is_marked = i in marked
        if exact is not None and i not in exact:
            todo = chosen.get(i, [])
        else:
            todo = _exact_todo(
                i, s, e, plan, causal, found.citing, form, wform, folded, joins, is_marked
            )
        if not todo:
            continue
        text = draft[s:e]
        view = DraftSentence(
            text=text,
            plain=_markers.MARKER.sub("", text) if is_marked else text,
            normalised=normalise(text) if needs_normalised else "",
            cited=cited[i],
            invalid=tuple(found.bad.get(i, ())),
            kind=kind,
            record=rec,
        )
        for rule in todo:
            reason = rule.check(view)
            if reason is not None:
                reasons.setdefault(i, []).append((rule, reason))
    return reading
