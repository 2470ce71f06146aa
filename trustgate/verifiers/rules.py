"""Sentence rules for drafts: which class of sentence can hurt you, as data.

Seed 002's lesson is "decide which class of sentence can hurt you": for a postmortem
it is causal claims and speculation, for an audit summary compliance assertions, for
a chronology datetimes. A :class:`SentenceRule` is one such class. The shipped rules
read their vocabulary from lexicon files in ``trustgate/lexicons/`` so the lists can
be read, reviewed and extended without touching code; a user adds a rule for their
own domain with :class:`PatternRule` (a lexicon) or by subclassing
:class:`SentenceRule` (anything deterministic).

Every removal names the rule that made it, so a person restoring a sentence knows
which law it broke.

Example:
    ```python
    from trustgate import DEFAULT_RULES, PatternRule, Record, verify_draft

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


def _first_chars(seq: Any) -> set[str] | None:
    """The characters a match of a parsed pattern can start with (``None``: any)."""
    first, nullable = _first_of(seq)
    return None if first is None or nullable else first


def _first_of(seq: Any) -> tuple[set[str] | None, bool]:
    acc: set[str] = set()
    for op, av in seq:
        if op is _c.LITERAL:
            acc.add(chr(av))
            return acc, False
        if op is _c.IN:
            for kind, arg in av:
                if kind is _c.LITERAL:
                    acc.add(chr(arg))
                elif kind is _c.RANGE and arg[1] - arg[0] < 64:
                    acc.update(chr(c) for c in range(arg[0], arg[1] + 1))
                else:
                    return None, False
            return acc, False
        if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
            continue  # zero width
        if op is _c.SUBPATTERN:
            sub, nullable = _first_of(av[-1])
        elif op is _c.BRANCH:
            sub, nullable = set(), False
            for branch in av[1]:
                part, n = _first_of(branch)
                if part is None:
                    return None, False
                sub |= part
                nullable = nullable or n
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
            sub, nullable = _first_of(av[2])
            nullable = nullable or av[0] == 0
        else:
            return None, False
        if sub is None:
            return None, False
        acc |= sub
        if not nullable:
            return acc, False
    return acc, True


def _anchors(seq: Any) -> set[str] | None:
    """Literal strings of which every match of a parsed pattern contains one.

    ``None`` when no such set was found. Used to build a cheap prefilter: a sentence
    containing none of a lexicon's anchors cannot match it.
    """
    best: set[str] | None = None

    def better(cand: set[str] | None) -> None:
        nonlocal best
        if not cand or "" in cand:
            return
        if best is None:
            best = cand
            return

        def score(words: set[str]) -> tuple[int, int]:
            return (min(len(w.strip()) for w in words), -len(words))

        if score(cand) > score(best):
            best = cand

    run: list[str] = []
    for op, av in seq:
        if op is _c.LITERAL:
            run.append(chr(av))
            continue
        if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
            if op is not _c.AT:
                better({"".join(run)} if run else None)
                run = []
            continue
        better({"".join(run)} if run else None)
        run = []
        cand: set[str] | None = None
        if op is _c.SUBPATTERN:
            cand = _anchors(av[-1])
        elif op is _c.BRANCH:
            union: set[str] = set()
            for branch in av[1]:
                part = _anchors(branch)
                if part is None:
                    union = set()
                    break
                union |= part
            cand = union or None
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and av[0] >= 1:
            cand = _anchors(av[2])
        better(cand)
    better({"".join(run)} if run else None)
    return best


def _trie_pattern(words: set[str]) -> str:
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
        alts = [re.escape(ch) + emit(child) for ch, child in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return emit(trie)


_SECTION = re.compile(r"^\[(match|except)\]$")
_MACRO_DEF = re.compile(r"^@(\w+)\s*=\s*(.+)$")
_MACRO_USE = re.compile(r"%(\w+)%")


class Lexicon:
    """A compiled lexicon: patterns that flag a sentence, exceptions that clear spans.

    The file format is documented at the top of ``trustgate/lexicons/causal.txt``.
    Exceptions are blanked out before the patterns run, so an exception can only
    remove a reading ("due to be upgraded"), never add one.
    """

    __slots__ = ("_except", "_match", "_prefilter", "name")

    def __init__(self, name: str, patterns: Iterable[str], exceptions: Iterable[str] = ()) -> None:
        self.name = name
        fragments = list(patterns)
        self._match = self._compile(name, fragments)
        self._prefilter = self._compile_prefilter(fragments)
        excepts = list(exceptions)
        self._except = self._compile(name, excepts) if excepts else None
        if self._match is None:
            raise ConfigurationError(f"lexicon {name!r} has no patterns")

    @staticmethod
    def _compile_prefilter(fragments: list[str]) -> re.Pattern[str] | None:
        anchors: set[str] = set()
        for fragment in (alt for f in fragments for alt in _top_level_alternatives(f)):
            found = _anchors(_parser.parse(fragment))
            if found is None or min(map(len, found)) < 2:
                return None  # some pattern has no usable anchor: no prefilter
            anchors |= found
        # Short anchors ("so", "it", "bad") would hit inside other words ("also",
        # "with", "badge"); they begin a word in every pattern, so require that.
        short = {a for a in anchors if len(a) <= 3 and a.isalpha()}
        parts = []
        if short:
            parts.append(r"(?<![a-z])" + _trie_pattern(short))
        if anchors - short:
            parts.append(_trie_pattern(anchors - short))
        return re.compile("|".join(parts))

    @staticmethod
    def _compile(name: str, fragments: list[str]) -> re.Pattern[str] | None:
        if not fragments:
            return None
        # Hundreds of alternatives tried one after another at every position are slow;
        # bucketing them by their possible first character lets the engine reject a
        # position with one test per bucket instead of one per alternative.
        buckets: dict[str, list[str]] = {}
        anywhere: list[str] = []
        for fragment in (alt for f in fragments for alt in _top_level_alternatives(f)):
            try:
                first = _first_chars(_parser.parse(fragment))
            except re.error as exc:
                raise ConfigurationError(f"lexicon {name!r}: {fragment!r}: {exc}") from None
            if first is None or len(first) > 40:
                anywhere.append(fragment)
                continue
            for ch in first:
                buckets.setdefault(ch, []).append(fragment)
        branches = [
            f"(?={re.escape(ch)})(?:{'|'.join(f'(?:{f})' for f in group)})"
            for ch, group in sorted(buckets.items())
        ]
        branches += [f"(?:{f})" for f in anywhere]
        body = "|".join(branches)
        # A match must start and end on a word boundary, unless the fragment itself
        # begins or ends on punctuation or whitespace (", so", "verb (?=object)").
        source = rf"(?:(?<!\w)|(?=\W))(?:{body})(?:(?<=\W)|(?!\w))"
        try:
            return re.compile(source)
        except re.error as exc:
            raise ConfigurationError(f"lexicon {name!r} does not compile: {exc}") from None

    @classmethod
    def parse(cls, name: str, text: str) -> Lexicon:
        """Build a lexicon from the text of a lexicon file."""
        macros: dict[str, str] = {}
        sections: dict[str, list[str]] = {"match": [], "except": []}
        current = "match"

        def expand(fragment: str) -> str:
            def sub(m: re.Match[str]) -> str:
                key = m.group(1)
                if key not in macros:
                    raise ConfigurationError(f"lexicon {name!r}: unknown macro %{key}%")
                return macros[key]

            return _MACRO_USE.sub(sub, fragment)

        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if (sec := _SECTION.match(line)) is not None:
                current = sec.group(1)
                continue
            if (mac := _MACRO_DEF.match(line)) is not None:
                macros[mac.group(1)] = expand(mac.group(2).strip())
                continue
            sections[current].append(expand(line))
        return cls(name, sections["match"], sections["except"])

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
        """A lexicon shipped in ``trustgate/lexicons/<name>.txt``."""
        return _package_lexicon(name)

    def search(self, normalised: str) -> str | None:
        """The first phrase that flags ``normalised``, or ``None``."""
        if self._prefilter is not None and self._prefilter.search(normalised) is None:
            return None
        hit = self._match.search(normalised)  # type: ignore[union-attr]
        if hit is None:
            return None
        if self._except is not None:
            masked = self._except.sub(lambda m: " " * len(m.group()), normalised)
            if masked != normalised:
                hit = self._match.search(masked)  # type: ignore[union-attr]
                if hit is None:
                    return None
        return hit.group().strip(" ,;:-")


@cache
def _package_lexicon(name: str) -> Lexicon:
    try:
        text = resources.files("trustgate.lexicons").joinpath(f"{name}.txt").read_text("utf-8")
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
        lexicon: Lexicon,
        *,
        code: str,
        reason: str,
        deletes_cited: bool = False,
    ) -> None:
        if not name or not code:
            raise ConfigurationError("a rule needs a name and a finding code")
        self.name = name
        self.code = code
        self.lexicon = lexicon
        self.reason = reason
        self.deletes_cited = deletes_cited

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

    def check(self, sentence: DraftSentence) -> str | None:
        if sentence.cited and not self.deletes_cited:
            return None
        hit = self.lexicon.search(sentence.normalised)
        if hit is None:
            return None
        return self.reason.format(match=hit)


class CausalRule(PatternRule):
    """Seed 002's first law: a sentence asserting a cause needs a valid citation."""

    def __init__(self, lexicon: Lexicon | None = None) -> None:
        super().__init__(
            "causal",
            lexicon or Lexicon.from_package("causal"),
            code="uncited_causal",
            reason="asserts a cause ({match!r}) without citing a line of the record",
        )


class HedgeRule(PatternRule):
    """Seed 002's third law: speculation is deleted even when cited."""

    def __init__(self, lexicon: Lexicon | None = None) -> None:
        super().__init__(
            "hedge",
            lexicon or Lexicon.from_package("hedge"),
            code="hedged",
            reason="speculates ({match!r}): a hedge is a guess wearing a hat",
            deletes_cited=True,
        )


DEFAULT_RULES: tuple[SentenceRule, ...] = (CausalRule(), HedgeRule())
"""The causal and hedge laws. The figures rule is opt-in: ``(*DEFAULT_RULES, FiguresRule())``."""
