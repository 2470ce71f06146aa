"""The citation markers of a whole draft, read in one pass.

A drafting model cites with ``[[12]]``, ``[[12, 14]]`` or ``[[12]][[14]]``; every
unit of the draft (:func:`trustgate.verifiers.drafts.segment.units`) needs the ids it
cites that the record has, the ones it does not (each reported, and dropped from the
text), and its unclosed ``[[`` (reported, left as written).

Parsing each sentence's text on its own cost a fifth of the verifier's time on an
ordinary draft, where four sentences in five carry a marker. Here one search of the
whole draft finds every closed marker, each is given to the unit it lies in, and a
marker's ids are parsed once per distinct marker. A unit is read on its own text, as
before, only where the whole-draft reading could differ from it: a unit holding a
``[`` that belongs to no closed marker (an unclosed ``[[`` may be made of it) and a
unit a marker reaches into from outside (a sentence end inside a marker's brackets).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, count, repeat
from operator import itemgetter

from trustgate.verifiers.drafts.segment import Unit

__all__ = ["MARKER", "Found", "Invalid", "read"]

MARKER = re.compile(r"\[\[([^\[\]\n]*)\]\]")
"""A closed citation marker; group 1 holds its ids."""
_OPEN = re.compile(r"\[\[")
_SPACE_BEFORE = re.compile(r"[ \t]+\Z")
_MARKER_RUN = re.compile(r"(?:\[\[[^\[\]\n]*\]\])+")

Edit = tuple[int, int, str]


Invalid = tuple[str, str, str, int, bool, Edit | None]
"""A marker that is not evidence, as :class:`~trustgate.drafts.InvalidCitation`
reports it: ``(id, marker, sentence, start, malformed, fix)`` (``id`` empty and ``fix``
``None`` for an unclosed ``[[``). A plain tuple: an adversarial draft has one for
every ``[[`` it holds."""


@dataclass(slots=True)
class Found:
    """What the markers of a draft say, unit by unit (indices into its units)."""

    cited: list[tuple[str, ...]]
    """Per unit: the valid record ids it cites, in order, without duplicates (for an
    honest draft, a :class:`_Cited` that reads a unit's markers when it is asked)."""
    citing: set[int] = field(default_factory=set)
    """Units citing at least one valid id (whose ``cited`` is not empty)."""
    marked: set[int] = field(default_factory=set)
    """Units whose text holds ``[[``."""
    joins: set[int] = field(default_factory=set)
    """Units where removing the markers would join two non-spaces."""
    bad: dict[int, list[str]] = field(default_factory=dict)
    """Cited ids the record does not have."""
    edits: dict[int, list[Edit]] = field(default_factory=dict)
    """Marker rewrites (draft offsets) that drop the invalid ids."""
    invalid: list[Invalid] = field(default_factory=list)
    """Every invalid and malformed marker, in the order of the draft's units."""


def read(
    draft: str, units: Sequence[Unit], starts: Sequence[int], lines: Mapping[str, str]
) -> Found:
    """The markers of ``draft``, given to its ``units`` (``starts`` their starts)."""
    if "[[" not in draft:
        return Found([()] * len(units))
    contents = MARKER.findall(draft)
    if draft.count("[") == 2 * len(contents):
        honest = _honest(draft, units, lines, contents)
        if honest is not None:
            return honest
    found = _each_marker(draft, units, starts, lines)
    found.citing = {i for i, ids in enumerate(found.cited) if ids}
    return found


def _each_marker(
    draft: str, units: Sequence[Unit], starts: Sequence[int], lines: Mapping[str, str]
) -> Found:
    """:func:`read` marker by marker: each closed marker given to the unit it lies in,
    and a unit read on its own text where the two readings could differ."""
    found = Found([()] * len(units))
    closed = list(MARKER.finditer(draft))
    n = len(units)
    cited = found.cited
    marked = found.marked
    joins = found.joins
    # A unit whose markers' ids the record all has is read here (nearly every unit of
    # an honest draft); a unit with an invalid id, or one to be read on its own text,
    # is read again below, in the order of the units.
    pending: dict[int, list[re.Match[str]]] = {}
    # units read on their own text: holding a bracket no marker of theirs holds (found
    # first, so the loop below passes over their markers), or a marker reaching in
    alone = (
        _holding_stray(draft, closed, units, starts)
        if draft.count("[") != 2 * len(closed)
        else set()
    )
    valid: dict[str, tuple[str, ...] | bool] = {}  # marker ids -> all valid, or False
    last = first = -1  # the unit of the last marker held, and that unit's first marker
    run_unit = run_start = run_end = -1  # the run of adjacent markers being read
    ends = list(map(itemgetter(1), units))
    spans = list(map(re.Match.span, closed))
    where = map(bisect_right, repeat(starts), map(itemgetter(0), spans))
    contents = map(re.Match.group, closed, repeat(1))
    for k, (s, e), after, content in zip(count(), spans, where, contents):
        i = after - 1
        if i >= 0 and e <= ends[i]:
            if i in alone:
                continue
            if s != run_end or i != run_unit:  # a run ends: removing it may join words
                if not draft[run_start - 1].isspace() and run_unit >= 0:
                    u_start, u_end = starts[run_unit], ends[run_unit]
                    if _joined(draft, u_start, u_end, run_start, run_end):
                        joins.add(run_unit)
                run_unit, run_start = i, s
            run_end = e
            ids = valid.get(content)
            if ids is None:
                good, bad = _ids(content, lines)
                ids = valid[content] = False if bad else tuple(dict.fromkeys(good))
            if i == last:  # another marker of the same unit
                got = pending.get(i)
                if got is not None:
                    got.append(closed[k])
                elif ids is False:
                    pending[i] = closed[first : k + 1]
                else:
                    cited[i] = tuple(dict.fromkeys((*cited[i], *ids)))  # type: ignore[misc]
                continue
            last, first = i, k
            if ids is False:
                pending[i] = [closed[k]]
                continue
            cited[i] = ids  # type: ignore[assignment]
            marked.add(i)
            continue
        # a marker outside every unit (code, structure) or reaching across units
        if i >= 0 and s < units[i][1]:
            alone.add(i)
        j = i + 1
        while j < n and starts[j] < e:
            alone.add(j)
            j += 1
    if run_unit >= 0 and _joined(draft, starts[run_unit], ends[run_unit], run_start, run_end):
        joins.add(run_unit)
    if not pending and not alone:
        return found
    cache: dict[str, tuple[list[str], list[str]]] = {}
    for i in sorted(pending.keys() | alone):
        s, e = units[i][0], units[i][1]
        cited[i] = ()  # read again from the start
        joins.discard(i)
        if i in alone:
            raw = draft[s:e]
            if "[[" in raw:
                marked.add(i)
                _alone(found, i, raw, s, lines, cache)
            else:
                marked.discard(i)
        else:
            marked.add(i)
            _inside(found, i, draft, s, e, pending[i], lines, cache)
    return found


class _Cited:
    """The ``cited`` of an honest draft's units, each read from the unit's own markers
    when it is first asked for: a gate asks for a few (the units the rules read or
    delete), and only reading the verdict's kept sentences asks for all."""

    __slots__ = ("_draft", "_units", "_valid", "_values", "_waiting")

    def __init__(
        self,
        draft: str,
        units: Sequence[Unit],
        valid: Mapping[str, tuple[str, ...]],
        marked: set[int],
    ) -> None:
        self._draft = draft
        self._units = units
        self._valid = valid
        self._values: list[tuple[str, ...]] = [()] * len(units)
        self._waiting = set(marked)

    def __getitem__(self, i: int) -> tuple[str, ...]:
        if i in self._waiting:
            self._waiting.discard(i)
            s, e = self._units[i][0], self._units[i][1]
            found = MARKER.findall(self._draft, s, e)
            ids = self._valid[found[0]]
            if len(found) > 1:
                ids = tuple(dict.fromkeys(chain.from_iterable(map(self._valid.__getitem__, found))))
            self._values[i] = ids
        return self._values[i]

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        for i in sorted(self._waiting):
            self[i]
        return iter(self._values)

    def __eq__(self, other: object) -> bool:
        return list(self) == (list(other) if isinstance(other, (_Cited, list)) else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


_MAY_END = re.compile(r"[.!?]")
_JOINING = re.compile(r"\[(?<=\S\[)\[[^\[\]\n]*\]\](?:\[\[[^\[\]\n]*\]\])*(?=\S)")
"""A run of markers with a non-space before and after it (or a run's tail: the
runs of the units holding one are read again). It opens with the bracket so the
engine skips to each one; the look-behind then asks for a non-space before it."""


def _honest(
    draft: str, units: Sequence[Unit], lines: Mapping[str, str], contents: list[str]
) -> Found | None:
    """:func:`read` of a draft whose every ``[`` opens a closed marker, when every
    marker names only lines of the record and lies inside one unit (an honest draft);
    ``None`` when one does not (then :func:`_each_marker` reads it).

    A marker lies inside one unit when no sentence can end inside it (its ids hold no
    ``.``, ``!`` or ``?``: a marker never spans a line, and every other edge of a unit
    is at a line's start or end or after a closing ``]]``) and the units hold every
    marker between them (none is in code). Each unit's ids are read when asked for
    (:class:`_Cited`): every valid marker names an id, so the units citing are the
    units holding a marker.
    """
    valid: dict[str, tuple[str, ...]] = {}
    for content in set(contents):
        good, bad = _ids(content, lines)
        if bad or _MAY_END.search(content) is not None:
            return None  # an invalid id, or a sentence may end inside the marker
        valid[content] = tuple(dict.fromkeys(good))
    starts = list(map(itemgetter(0), units))
    ends = list(map(itemgetter(1), units))
    count = draft.count
    opened = list(map(count, repeat("[["), starts, ends))
    if sum(opened) != len(contents):
        return None  # a marker outside every unit
    marked = set(compress(range(len(units)), opened))
    found = Found(_Cited(draft, units, valid, marked), marked=marked, citing=marked)  # type: ignore[arg-type]
    for m in _JOINING.finditer(draft):
        i = bisect_right(starts, m.start()) - 1
        if i in found.joins:
            continue
        for run in _MARKER_RUN.finditer(draft, starts[i], ends[i]):
            if _joined(draft, starts[i], ends[i], *run.span()):
                found.joins.add(i)
                break
    return found


def _holding_stray(
    draft: str, closed: list[re.Match[str]], units: Sequence[Unit], starts: Sequence[int]
) -> set[int]:
    """Units holding a ``[`` that belongs to none of their own closed markers: more
    than two for each marker inside them (counted in C, unit by unit)."""
    held: dict[int, int] = {}
    for m in closed:
        s, e = m.span()
        i = bisect_right(starts, s) - 1
        if i >= 0 and e <= units[i][1]:
            held[i] = held.get(i, 0) + 2
    count = draft.count
    return {i for i, (s, e, _, _) in enumerate(units) if count("[", s, e) != held.get(i, 0)}


def _ids(content: str, lines: Mapping[str, str]) -> tuple[list[str], list[str]]:
    ids = [part.strip() for part in content.split(",")]
    return [i for i in ids if i and i in lines], [i for i in ids if not (i and i in lines)]


def _inside(
    found: Found,
    i: int,
    draft: str,
    start: int,
    end: int,
    markers: list[re.Match[str]],
    lines: Mapping[str, str],
    cache: dict[str, tuple[list[str], list[str]]],
) -> None:
    """A unit whose every ``[`` belongs to one of its own closed ``markers``: its
    reading is :func:`_alone`'s, taken from the whole-draft search."""
    cited: list[str] = []
    bad_ids: list[str] = []
    edits: list[Edit] = []
    run_start = run_end = -1
    joins = False
    for m in markers:
        s, e = m.span()
        if s != run_end:  # a new run of adjacent markers: does the last one join?
            if run_end >= 0 and _joined(draft, start, end, run_start, run_end):
                joins = True
            run_start = s
        run_end = e
        content = m.group(1)
        parsed = cache.get(content)
        if parsed is None:
            parsed = cache[content] = _ids(content, lines)
        good, bad = parsed
        for g in good:
            if g not in cited:
                cited.append(g)
        if not bad:
            continue
        if good:
            edit = (s, e, "[[" + ", ".join(good) + "]]")
        else:
            lead = _SPACE_BEFORE.search(draft, start, s)
            edit = (lead.start() if lead is not None else s, e, "")
        edits.append(edit)
        sentence = draft[start:end]
        for b in bad:
            bad_ids.append(b)
            found.invalid.append((b, m.group(), sentence, s, False, edit))
    if _joined(draft, start, end, run_start, run_end):
        joins = True
    if joins:
        found.joins.add(i)
    if bad_ids:
        found.bad[i] = bad_ids
        found.edits[i] = edits
    found.cited[i] = tuple(cited)


def _joined(draft: str, start: int, end: int, s: int, e: int) -> bool:
    """Whether removing the run of markers ``draft[s:e]`` of the unit
    ``draft[start:end]`` would join two non-spaces."""
    return s > start and e < end and not draft[s - 1].isspace() and not draft[e].isspace()


def _alone(
    found: Found,
    i: int,
    raw: str,
    base: int,
    lines: Mapping[str, str],
    cache: dict[str, tuple[list[str], list[str]]],
) -> None:
    """Parse the markers of one unit's text ``raw`` (at ``base`` in the draft)."""
    joins = False
    for m in _MARKER_RUN.finditer(raw):
        s, e = m.span()
        if s > 0 and e < len(raw) and not raw[s - 1].isspace() and not raw[e].isspace():
            joins = True
            break
    if joins:
        found.joins.add(i)
    cited: list[str] = []
    closed: list[tuple[int, int]] = []
    bad_ids: list[str] = []
    edits: list[Edit] = []
    for m in MARKER.finditer(raw):
        closed.append(m.span())
        content = m.group(1)
        parsed = cache.get(content)
        if parsed is None:
            parsed = cache[content] = _ids(content, lines)
        good, bad = parsed
        for g in good:
            if g not in cited:
                cited.append(g)
        if not bad:
            continue
        if good:
            edit = (base + m.start(), base + m.end(), "[[" + ", ".join(good) + "]]")
        else:
            lead = _SPACE_BEFORE.search(raw, 0, m.start())
            at = lead.start() if lead is not None else m.start()
            edit = (base + at, base + m.end(), "")
        edits.append(edit)
        for b in bad:
            bad_ids.append(b)
            found.invalid.append((b, m.group(), raw, base + m.start(), False, edit))
    if bad_ids:
        found.bad[i] = bad_ids
        found.edits[i] = edits
    found.cited[i] = tuple(cited)
    if raw.count("[") == 2 * len(closed):
        return  # every bracket belongs to a closed marker: nothing malformed
    opened = [s for s, _ in closed]  # closed markers never overlap: one bisect each
    for o in _OPEN.finditer(raw):
        k = bisect_right(opened, o.start()) - 1
        if not (k >= 0 and o.start() < closed[k][1]):
            frag = raw[o.start() : o.start() + 24].split("\n", 1)[0]
            found.invalid.append(("", frag, raw, base + o.start(), True, None))
