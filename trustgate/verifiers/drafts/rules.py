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
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from trustgate.errors import ConfigurationError
from trustgate.evidence.record import Record
from trustgate.verifiers.drafts import _grammar

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


_SECTION = re.compile(r"^\[(match|except)\]$")
_MACRO_DEF = re.compile(r"^@(\w+)\s*=\s*(.+)$")
_MACRO_USE = re.compile(r"%(\w+)%")


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

    A team's lexicon is a few dozen fragments, each compiled on its own and tried on
    every sentence; the shipped rules read constructions instead (:mod:`._grammar`).
    """

    __slots__ = ("_except", "_match", "name")

    def __init__(self, name: str, patterns: Iterable[str], exceptions: Iterable[str] = ()) -> None:
        self.name = name
        self._match = [_compile_fragment(name, f) for f in patterns]
        if not self._match:
            raise ConfigurationError(f"lexicon {name!r} has no patterns")
        self._except = [_compile_fragment(name, f) for f in exceptions]

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

    def search(self, normalised: str) -> str | None:
        """The first phrase that flags ``normalised`` (see :func:`normalise`), or ``None``."""
        masked = normalised
        for exception in self._except:
            masked = exception.sub(_blank, masked)
        best: re.Match[str] | None = None
        for fragment in self._match:
            m = fragment.search(masked)
            if m is not None and (best is None or m.start() < best.start()):
                best = m
        return None if best is None else best.group().strip(" ,;:-")


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
        if not isinstance(lexicon, Lexicon):
            raise ConfigurationError(f"lexicon must be a Lexicon: {lexicon!r}")
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
        return _grammar.document_positions(document)

    def check(self, sentence: DraftSentence) -> str | None:
        if self._pattern is not None:
            return self._pattern.check(sentence)
        if sentence.cited and not self.deletes_cited:
            return None
        why = _grammar.side(sentence.plain, self._side)
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
