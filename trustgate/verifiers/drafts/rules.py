"""Sentence rules for drafts: which class of sentence can hurt you, as data.

The postmortem's lesson is "decide which class of sentence can hurt you": for a postmortem
it is causal claims and speculation, for an audit summary compliance assertions, for
a chronology datetimes. A :class:`SentenceRule` is one such class. The shipped
causal and hedge rules read sentence *constructions* (:mod:`._grammar`) whose
vocabulary lives in ``lexicon/draft.txt`` beside them, where every entry carries an
example it must catch and one it must leave alone; a user adds a rule for their own
domain with :class:`PatternRule` (a regular-expression lexicon) or by subclassing
:class:`SentenceRule` (anything deterministic).

Every removal names the rule that made it, so a person restoring a sentence knows
which law it broke.

Example:
    ```python
    from trustgate.drafts import DEFAULT_RULES, PatternRule, Record, verify_draft

    compliance = PatternRule.from_patterns(
        "compliance", ["(?:is|are) (?:fully )?compliant", "meets all requirements"],
        code="uncited_compliance", reason="asserts compliance ({match!r}) without a citation",
    )
    verdict = verify_draft("The vendor is fully compliant.", Record(),
                           rules=(*DEFAULT_RULES, compliance))
    assert verdict.removed[0].rule == "compliance"
    ```
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from re import _constants as _c  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

from trustgate.errors import ConfigurationError
from trustgate.evidence.record import Record
from trustgate.verifiers.drafts import _grammar as _claims

__all__ = [
    "DEFAULT_RULES",
    "CausalRule",
    "DraftSentence",
    "HedgeRule",
    "Lexicon",
    "PatternRule",
    "SentenceRule",
    "normalise",
]

_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "`": " ", "*": " ", "_": " "})
_SPACE = re.compile(r"\s+")
_MARKER_ANY = re.compile(r"\[\[[^\[\]\n]*\]\]")


_DOCUMENT = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "`": " ", "*": " ", "_": " "})


def document_form(draft: str) -> str | None:
    """The whole draft as :meth:`SentenceRule.positions` reads it, or ``None``.

    ``None`` when lower-casing changes the length (a few Unicode letters do), since
    offsets must line up with the draft; the verifier then checks every sentence.
    """
    doc = draft.translate(_DOCUMENT).lower()
    return doc if len(doc) == len(draft) else None


def normalise(text: str) -> str:
    """The form lexicons match against: lower case, no markers, one space, plain quotes."""
    if "[[" in text:
        text = _MARKER_ANY.sub(" ", text)
    return _SPACE.sub(" ", text.translate(_QUOTES).lower()).strip()


@dataclass(frozen=True, slots=True)
class DraftSentence:
    """What a rule sees of one sentence of the draft.

    ``cited`` holds only ids that exist in the record: an invented id is never
    evidence, so a rule cannot be fooled into accepting it.
    """

    text: str
    """The sentence as written, markers included."""
    plain: str
    """The sentence with citation markers removed."""
    normalised: str
    """:func:`normalise` of the sentence, what lexicons match."""
    cited: tuple[str, ...]
    """Valid record ids the sentence cites, in order, without duplicates."""
    invalid: tuple[str, ...]
    """Cited ids the record does not have."""
    kind: str
    """``sentence``, ``item``, ``heading`` or ``row``."""
    record: Record


class SentenceRule(ABC):
    """One class of sentence that must not stand as written.

    ``check`` returns ``None`` to keep the sentence or a one-line reason to delete
    it. It must be deterministic: same sentence and record, same answer.
    """

    name: str
    """Named in every removal the rule makes."""
    code: str
    """The :class:`~trustgate.Finding` code of its removals."""

    @abstractmethod
    def check(self, sentence: DraftSentence) -> str | None:
        """Return why ``sentence`` must be deleted, or ``None`` to keep it."""

    def positions(self, document: str) -> list[int] | None:
        """Optional speed-up: offsets in ``document`` where the rule could fire.

        ``document`` is the whole draft lower-cased, with emphasis marks and curly
        quotes made plain (same length as the draft). Sentences holding none of the
        offsets (and no citation marker) are not shown to :meth:`check`. ``None``, the
        default, means every sentence is checked.
        """
        del document
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def _top_level_alternatives(fragment: str) -> list[str]:
    """Split ``a|b(c|d)|e`` into ``a``, ``b(c|d)``, ``e`` (outside groups and classes)."""
    parts: list[str] = []
    depth = 0
    in_class = False
    start = 0
    i = 0
    n = len(fragment)
    while i < n:
        ch = fragment[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            if fragment.startswith("]", i + 1):
                i += 1
            elif fragment.startswith("^]", i + 1):
                i += 2
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(fragment[start:i])
            start = i + 1
        i += 1
    parts.append(fragment[start:])
    return [p for p in parts if p]


def _ends_at_word_start(seq: Any, before: bool) -> bool:
    """Whether what follows a match of ``seq`` begins a word (it ends on a space...)."""
    state = before
    for op, av in seq:
        if op is _c.LITERAL:
            ch = chr(av)
            state = not (ch.isalnum() or ch == "_")
        elif op is _c.AT:
            state = state or av is _c.AT_BEGINNING or av is _c.AT_BOUNDARY
        elif op in (_c.ASSERT, _c.ASSERT_NOT):
            continue
        elif op is _c.IN:
            state = all(
                kind is _c.LITERAL and not (chr(arg).isalnum() or chr(arg) == "_")
                for kind, arg in av
            )
        elif op is _c.SUBPATTERN:
            state = _ends_at_word_start(av[-1], state)
        elif op is _c.BRANCH:
            state = all(_ends_at_word_start(branch, state) for branch in av[1])
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
            after = _ends_at_word_start(av[2], state)
            state = after if av[0] >= 1 else (after and state)
        else:
            state = False
    return state


_LEAD_MAX = 96


def _leading(seq: list[Any]) -> set[str] | None:
    """Literal prefixes every match of ``seq`` starts with (branches expanded).

    ``None`` when there are too many to be useful. A prefix stops where the pattern
    stops being literal, so ``""`` in the result means "could start with anything".
    """
    if not seq:
        return {""}
    op, av = seq[0]
    rest = seq[1:]
    if op is _c.LITERAL:
        tail = _leading(rest)
        if tail is None:
            return {chr(av)}
        return {(chr(av) + t)[:16] for t in tail}
    if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
        return _leading(rest)
    if op is _c.SUBPATTERN:
        return _leading(list(av[-1]) + rest)
    if op is _c.BRANCH:
        out: set[str] = set()
        for branch in av[1]:
            part = _leading(list(branch) + rest)
            if part is None:
                return None
            out |= part
            if len(out) > _LEAD_MAX:
                return None
        return out
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
        lo, hi, item = av
        if lo == 1 and hi == 1:
            return _leading(list(item) + rest)
        first = _leading(list(item))
        if first is None:
            return None
        if lo >= 1:
            return first
        after = _leading(rest)
        if after is None:
            return None
        out = first | after
        return out if len(out) <= _LEAD_MAX else None
    return {""}


def _anchors(seq: Any, at_word_start: bool = True) -> set[str] | None:
    """Literal strings of which every match of a parsed pattern contains one.

    Each anchor begins a word in the text (it starts the pattern, or follows a space,
    punctuation or ``\\b``), because the scan only looks at word starts. ``None``
    when no such set was found. A sentence containing none of a lexicon's anchors
    cannot match it, which is what makes the scan cheap.
    """
    best: set[str] | None = None

    def score(words: set[str]) -> tuple[int, int]:
        return (min(len(w.strip()) for w in words), -len(words))

    def better(cand: set[str] | None) -> None:
        nonlocal best
        if not cand or any(not w.strip() for w in cand):
            return
        if best is None or score(cand) > score(best):
            best = cand

    if at_word_start:
        better(_leading(list(seq)))
    run: list[str] = []
    run_ok = False
    word_start = at_word_start  # may the next literal begin a word?
    for op, av in seq:
        if op is _c.LITERAL:
            ch = chr(av)
            if not run:
                run_ok = word_start or not (ch.isalnum() or ch == "_")
            run.append(ch)
            word_start = not (ch.isalnum() or ch == "_")
            continue
        if op is _c.AT:
            if av is _c.AT_BOUNDARY or av is _c.AT_BEGINNING:
                if run and run_ok:
                    better({"".join(run)})
                run = []
                word_start = True
            continue
        if run and run_ok:
            better({"".join(run)})
        run = []
        if op in (_c.ASSERT, _c.ASSERT_NOT):
            continue  # zero width: the position, and whether it starts a word, stay
        cand: set[str] | None = None
        if op is _c.SUBPATTERN:
            cand = _anchors(av[-1], word_start)
        elif op is _c.BRANCH:
            union: set[str] = set()
            for branch in av[1]:
                part = _anchors(branch, word_start)
                if part is None:
                    union = set()
                    break
                union |= part
            cand = union or None
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and av[0] >= 1:
            cand = _anchors(av[2], word_start)
        better(cand)
        word_start = _ends_at_word_start([(op, av)], word_start)
    if run and run_ok:
        better({"".join(run)})
    return best


def _trie_pattern(words: set[str], loose_spaces: bool = False) -> str:
    """One regex matching any of ``words``, shaped as a trie so sre rejects fast."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        if "" in node:
            return ""  # a shorter anchor already suffices
        alts = [
            (r"\s+" if loose_spaces and ch == " " else re.escape(ch)) + emit(child)
            for ch, child in sorted(node.items())
        ]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return emit(trie)


_SIMPLE_ALT = re.compile(r"(?:[a-z0-9' -]\??)+")


def _expand_optional(alt: str) -> list[str]:
    """``engineers?`` -> ``engineer``, ``engineers``; ``on-?call`` -> both spellings."""
    out = [""]
    i = 0
    while i < len(alt):
        ch = alt[i]
        if i + 1 < len(alt) and alt[i + 1] == "?":
            out = [o + c for o in out for c in ("", ch)]
            i += 2
        else:
            out = [o + ch for o in out]
            i += 1
    return out


def _trie_exact(words: Iterable[str]) -> str:
    """A regex matching exactly ``words``, shaped as a trie (cheap to reject)."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:
            return "(?:" + body + ")?" if len(alts) == 1 else body + "?"
        return body

    return emit(trie)


def _optimise_macro(body: str) -> str:
    """Rewrite a macro that is a list of words as a trie; leave anything else alone.

    Word lists (``@human = (?:we|i|engineers?|...)``) are checked at every word of a
    sentence inside negative lookaheads; as a trie each check is a few character
    tests instead of one test per word in the list.
    """
    if not (body.startswith("(?:") and body.endswith(")")):
        return body
    alts = _top_level_alternatives(body[3:-1])
    simple = [a for a in alts if _SIMPLE_ALT.fullmatch(a)]
    if len(simple) < 8:
        return body
    words = {w for a in simple for w in _expand_optional(a)}
    words.discard("")
    rest = [a for a in alts if not _SIMPLE_ALT.fullmatch(a)]
    return "(?:" + "|".join([_trie_exact(words), *rest]) + ")"


_EDGE = re.compile(r"^[^a-z0-9]+|\s+$")
_SECTION = re.compile(r"^\[(match|except)\]$")
_MACRO_DEF = re.compile(r"^@(\w+)\s*=\s*(.+)$")
_MACRO_USE = re.compile(r"%(\w+)%")


class _Dispatch:
    """Regex fragments, each tried only when one of its anchor literals occurs.

    A few hundred alternatives tried at every position of every sentence would make
    the rules the slowest thing on a gate's path. Each fragment is compiled on its
    own; one scan over the text finds which anchors occur (at word starts only), and
    only the fragments owning those anchors run.
    """

    __slots__ = ("always", "anchors", "doc_scan", "fragments", "index", "scan", "sorted_anchors")

    def __init__(self, name: str, fast: list[str], plain: list[str]) -> None:
        alternatives = [alt for f in fast for alt in _top_level_alternatives(f)]
        readable = [alt for f in plain for alt in _top_level_alternatives(f)]
        if len(readable) != len(alternatives):
            raise ConfigurationError(f"lexicon {name!r}: anchor patterns do not line up")
        self.fragments = [_compile_fragment(name, alt) for alt in alternatives]
        self.anchors: dict[str, list[int]] = {}
        self.always: list[int] = []
        for i, alt in enumerate(readable):
            try:
                found = _anchors(_parser.parse(alt))
            except re.error as exc:
                raise ConfigurationError(f"lexicon {name!r}: {alt!r}: {exc}") from None
            # Anchors are scanned at word starts only, so trim them to begin on a letter.
            trimmed = {_EDGE.sub("", a) for a in found} if found else set()
            if not trimmed or min(map(len, trimmed)) < 2:
                self.always.append(i)
                continue
            for anchor in trimmed:
                self.anchors.setdefault(anchor, []).append(i)
        self.index: dict[str, tuple[int, ...]] = {}
        self.sorted_anchors = sorted(self.anchors)
        words = set(self.anchors)
        # Zero-width, so anchors that overlap ("side effect", "effect of") all count.
        self.scan = re.compile(r"\b(?=(" + _trie_pattern(words) + "))") if words else None
        self.doc_scan = (
            re.compile(r"\b(?=" + _trie_pattern(words, loose_spaces=True) + ")") if words else None
        )

    def candidates(self, found: str) -> tuple[int, ...]:
        """Fragments whose anchors begin with ``found`` (the scan reports prefixes)."""
        got = self.index.get(found)
        if got is None:
            ids: set[int] = set()
            i = bisect_left(self.sorted_anchors, found)
            while i < len(self.sorted_anchors) and self.sorted_anchors[i].startswith(found):
                ids.update(self.anchors[self.sorted_anchors[i]])
                i += 1
            got = self.index[found] = tuple(sorted(ids))
        return got

    def ids(self, text: str) -> list[int]:
        found: set[int] = set(self.always)
        if self.scan is not None:
            for m in self.scan.finditer(text):
                found.update(self.candidates(m.group(1)))
        return sorted(found)

    def first(self, order: list[int], text: str) -> re.Match[str] | None:
        best: re.Match[str] | None = None
        for i in order:
            m = self.fragments[i].search(text)
            if m is not None and (best is None or m.start() < best.start()):
                best = m
        return best


def _compile_fragment(name: str, fragment: str) -> re.Pattern[str]:
    # A match must start and end on a word boundary, unless the fragment itself
    # begins or ends on punctuation or whitespace (", so", "verb (?=object)").
    source = rf"(?:(?<!\w)|(?=\W))(?:{fragment})(?:(?<=\W)|(?!\w))"
    try:
        return re.compile(source)
    except re.error as exc:
        raise ConfigurationError(f"lexicon {name!r}: {fragment!r}: {exc}") from None


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group())


class Lexicon:
    """A compiled lexicon: patterns that flag a sentence, exceptions that clear spans.

    Format (one fragment per line, matched against :func:`normalise`): ``#`` starts a
    comment; ``@name = (?:a|b|c)`` defines a macro used as ``%name%``; lines after
    ``[match]`` flag a sentence, lines after ``[except]`` clear the spans they match.
    Exceptions are blanked out before the patterns run, so an exception can only
    remove a reading ("due to be upgraded"), never add one.
    """

    __slots__ = ("_except", "_match", "name")

    def __init__(
        self,
        name: str,
        patterns: Iterable[str],
        exceptions: Iterable[str] = (),
        *,
        anchor_patterns: Iterable[str] | None = None,
        anchor_exceptions: Iterable[str] | None = None,
    ) -> None:
        self.name = name
        fast = list(patterns)
        if not fast:
            raise ConfigurationError(f"lexicon {name!r} has no patterns")
        # ``anchor_*``: the same patterns written plainly (before word lists were
        # turned into tries), which is where anchors are easiest to read off.
        self._match = _Dispatch(name, fast, list(anchor_patterns or fast))
        excepts = list(exceptions)
        self._except = (
            _Dispatch(name, excepts, list(anchor_exceptions or excepts)) if excepts else None
        )

    @classmethod
    def parse(cls, name: str, text: str) -> Lexicon:
        """Build a lexicon from the text of a lexicon file."""
        macros: dict[str, str] = {}
        plain_macros: dict[str, str] = {}
        sections: dict[str, list[str]] = {"match": [], "except": []}
        plain: dict[str, list[str]] = {"match": [], "except": []}
        current = "match"

        def expand(fragment: str, table: dict[str, str]) -> str:
            def sub(m: re.Match[str]) -> str:
                key = m.group(1)
                if key not in table:
                    raise ConfigurationError(f"lexicon {name!r}: unknown macro %{key}%")
                return table[key]

            return _MACRO_USE.sub(sub, fragment)

        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if (sec := _SECTION.match(line)) is not None:
                current = sec.group(1)
                continue
            if (mac := _MACRO_DEF.match(line)) is not None:
                body = mac.group(2).strip()
                macros[mac.group(1)] = _optimise_macro(expand(body, macros))
                plain_macros[mac.group(1)] = expand(body, plain_macros)
                continue
            sections[current].append(expand(line, macros))
            plain[current].append(expand(line, plain_macros))
        return cls(
            name,
            sections["match"],
            sections["except"],
            anchor_patterns=plain["match"],
            anchor_exceptions=plain["except"],
        )

    @classmethod
    def from_path(cls, path: str | Path) -> Lexicon:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigurationError(f"cannot read lexicon {str(p)!r}: {exc}") from None
        return cls.parse(p.stem, text)

    @classmethod
    def from_package(cls, name: str) -> Lexicon:
        """A lexicon shipped in ``trustgate/verifiers/drafts/lexicon/<name>.txt``."""
        return _package_lexicon(name)

    def search(self, normalised: str) -> str | None:
        """The first phrase that flags ``normalised`` (see :func:`normalise`), or ``None``."""
        order = self._match.ids(normalised)
        if not order:
            return None
        hit = self._match.first(order, normalised)
        if hit is None:
            return None
        if self._except is not None:
            masked = normalised
            for i in self._except.ids(normalised):
                masked = self._except.fragments[i].sub(_blank, masked)
            if masked != normalised:
                hit = self._match.first(order, masked)
                if hit is None:
                    return None
        return hit.group().strip(" ,;:-")

    def positions(self, document: str) -> list[int] | None:
        """Where in a whole document a match could start (``None``: anywhere).

        ``document`` is the draft lower-cased with whitespace and emphasis marks made
        spaces (the same length as the draft); a sentence holding none of these
        positions cannot match, so the verifier need not look at it.
        """
        if self._match.always or self._match.doc_scan is None:
            return None
        return [m.start() for m in self._match.doc_scan.finditer(document)]


@cache
def _package_lexicon(name: str) -> Lexicon:
    try:
        text = (
            resources.files("trustgate.verifiers.drafts.lexicon")
            .joinpath(f"{name}.txt")
            .read_text("utf-8")
        )
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        raise ConfigurationError(f"no shipped lexicon named {name!r}: {exc}") from None
    return Lexicon.parse(name, text)


class PatternRule(SentenceRule):
    """A rule defined by a lexicon.

    ``deletes_cited=False`` (the causal law): a match needs a valid citation.
    ``deletes_cited=True`` (the hedge law): a match is deleted even when cited.
    ``reason`` may use ``{match}``, the phrase that matched.
    """

    def __init__(
        self,
        name: str,
        lexicon: Lexicon | str,
        *,
        code: str,
        reason: str,
        deletes_cited: bool = False,
    ) -> None:
        if not name or not code:
            raise ConfigurationError("a rule needs a name and a finding code")
        if not isinstance(lexicon, (Lexicon, str)):
            raise ConfigurationError(f"lexicon must be a Lexicon or a shipped name: {lexicon!r}")
        self.name = name
        self.code = code
        # A shipped lexicon is named, and compiled on first use, so importing
        # trustgate does not pay for regexes a program may never run.
        self._lexicon = lexicon
        self.reason = reason
        self.deletes_cited = deletes_cited

    @property
    def lexicon(self) -> Lexicon:
        if isinstance(self._lexicon, str):
            self._lexicon = Lexicon.from_package(self._lexicon)
        return self._lexicon

    @classmethod
    def from_patterns(
        cls,
        name: str,
        patterns: Iterable[str],
        *,
        code: str,
        reason: str,
        exceptions: Iterable[str] = (),
        deletes_cited: bool = False,
    ) -> PatternRule:
        """A rule from regular-expression fragments (matched against :func:`normalise`)."""
        return cls(
            name,
            Lexicon(name, patterns, exceptions),
            code=code,
            reason=reason,
            deletes_cited=deletes_cited,
        )

    def positions(self, document: str) -> list[int] | None:
        return self.lexicon.positions(document)

    def check(self, sentence: DraftSentence) -> str | None:
        if sentence.cited and not self.deletes_cited:
            return None
        hit = self.lexicon.search(sentence.normalised)
        if hit is None:
            return None
        return self.reason.format(match=hit)


class _ConstructionRule(SentenceRule):
    """A shipped rule that reads constructions (:mod:`trustgate.verifiers.drafts._grammar`).

    Given a :class:`Lexicon`, it behaves as a :class:`PatternRule` over that lexicon
    instead (how a custom vocabulary replaces the shipped reading)."""

    _side: str = ""
    deletes_cited = False

    def __init__(self, name: str, code: str, reason: str, lexicon: Lexicon | None) -> None:
        self.name = name
        self.code = code
        self.reason = reason
        self._pattern = (
            PatternRule(name, lexicon, code=code, reason=reason, deletes_cited=self.deletes_cited)
            if lexicon is not None
            else None
        )

    @property
    def lexicon(self) -> Lexicon | None:
        """The custom lexicon this rule matches, or ``None`` for the shipped reading."""
        return self._pattern.lexicon if self._pattern is not None else None

    def positions(self, document: str) -> list[int] | None:
        if self._pattern is not None:
            return self._pattern.positions(document)
        return _claims.document_positions(document)

    def check(self, sentence: DraftSentence) -> str | None:
        if self._pattern is not None:
            return self._pattern.check(sentence)
        if sentence.cited and not self.deletes_cited:
            return None
        why = _claims.side(sentence.plain, self._side)
        return None if why is None else self.reason.format(match=why)


class CausalRule(_ConstructionRule):
    """The postmortem's first law: a sentence asserting a cause needs a valid citation.

    Reads the causal construction (connective, causative verb with a non-human
    subject, outcome noun, cause label), never a question or a statement about the
    document; the removal's reason names the feature that fired."""

    _side = "causal"

    def __init__(self, lexicon: Lexicon | None = None) -> None:
        super().__init__(
            "causal",
            "uncited_causal",
            "asserts a cause ({match}) without citing a line of the record",
            lexicon,
        )


class HedgeRule(_ConstructionRule):
    """The postmortem's third law: speculation is deleted even when cited."""

    _side = "hedge"
    deletes_cited = True

    def __init__(self, lexicon: Lexicon | None = None) -> None:
        super().__init__(
            "hedge",
            "hedged",
            "speculates ({match}): a hedge is a guess wearing a hat",
            lexicon,
        )


DEFAULT_RULES: tuple[SentenceRule, ...] = (CausalRule(), HedgeRule())
"""The causal and hedge laws. The figures rule is opt-in: ``(*DEFAULT_RULES, FiguresRule())``."""
