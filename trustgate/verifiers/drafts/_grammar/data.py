"""The grammar's words, read from the data files beside it, never written in Python.

Two files in ``trustgate/verifiers/drafts/lexicon/``, each entry proving itself with
examples a test runs through ``verify_draft``:

* ``draft.txt``, the **vocabulary** (connectives, causative verbs, hedges, beliefs...):
  one entry per word or phrase, parsed into a :class:`GrammarLexicon`;
* ``grammar.txt``, the **word classes** the constructions are written with
  (auxiliaries, determiners, the prepositions that cannot start an object, the nouns
  that name a fault...): one entry per class, parsed into :class:`Classes`;
* ``constructions.txt``, the **constructions** themselves, each with sentences it must
  get deleted and sentences it must leave alone (no words: examples only).

Both formats are documented at the top of their file. Keeping every word here and the
constructions in code is what lets a reviewer see what a class holds, and a test prove
each class does what its examples say, without reading the code.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources

from trustgate.errors import ConfigurationError
from trustgate.verifiers.drafts._text import MASK, read

__all__ = [
    "Classes",
    "GrammarLexicon",
    "classes",
    "constructions",
    "lexicon",
    "parse_classes",
    "parse_constructions",
    "parse_lexicon",
    "read_data",
]

KINDS = (
    "connective",
    "label",
    "verb",
    "outcome",
    "hedge",
    "belief",
    "should",
    "human",
    "document",
    "inquiry",
    "state",
    "neutral",
    "adverse",
    "schedule",
    "predicate",
)


def read_data(name: str) -> str:
    """The text of a data file shipped in ``trustgate/verifiers/drafts/lexicon/``."""
    try:
        return (
            resources.files("trustgate.verifiers.drafts.lexicon").joinpath(name).read_text("utf-8")
        )
    except (FileNotFoundError, ModuleNotFoundError) as exc:  # pragma: no cover - packaging
        raise ConfigurationError(f"the draft grammar data {name!r} is missing: {exc}") from None


@dataclass
class GrammarLexicon:
    """The vocabulary of ``draft.txt`` with each entry's examples."""

    phrases: dict[str, dict[str, tuple[tuple[str, ...], ...]]] = field(default_factory=dict)
    """kind -> first token -> candidate phrases (token tuples), longest first."""
    verbs: dict[str, tuple[str, str]] = field(default_factory=dict)
    """verb form -> (lemma, form kind: base, s, ed, ing)."""
    neutral: frozenset[str] = frozenset()
    """lemmas of verbs that assert a cause only next to an adverse word."""
    particles: dict[str, frozenset[str]] = field(default_factory=dict)
    """lemma -> particles, one of which must follow ("take down", "take out")."""
    words: dict[str, frozenset[str]] = field(default_factory=dict)
    """kind -> single words (belief forms, should, human, document, inquiry, state)."""
    entries: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(kind, term, positive example, negative example) for every entry."""


def forms(base: str) -> dict[str, str]:
    """The regular forms of an English verb: form -> base, s, ed or ing."""
    if base.endswith("e"):
        ed, ing = base + "d", base[:-1] + "ing"
    elif base.endswith("y") and base[-2:-1] not in "aeiou":
        ed, ing = base[:-1] + "ied", base + "ing"
    else:
        ed, ing = base + "ed", base + "ing"
    s = base + "es" if base.endswith(("s", "sh", "ch", "x", "z")) else base + "s"
    if base.endswith("y") and base[-2:-1] not in "aeiou":
        s = base[:-1] + "ies"
    return {base: "base", s: "s", ed: "ed", ing: "ing"}


def _tokens(text: str) -> tuple[str, ...]:
    return read(text).tokens


def parse_lexicon(text: str, name: str = "draft") -> GrammarLexicon:
    """Parse the lexicon format documented at the top of ``draft.txt``."""
    lex = GrammarLexicon()
    phrases: dict[str, dict[str, list[tuple[str, ...]]]] = {k: {} for k in KINDS}
    words: dict[str, set[str]] = {k: set() for k in KINDS}
    current: list[str] | None = None  # kind, term, positive, negative
    neutral: set[str] = set()
    lines = text.splitlines()

    def close(line_no: int) -> None:
        if current is None:
            return
        if not current[2] or not current[3]:
            raise ConfigurationError(
                f"lexicon {name!r}: entry {current[0]} {current[1]!r} before line {line_no} "
                "needs a '+' and a '-' example"
            )
        lex.entries.append((current[0], current[1], current[2], current[3]))

    for n, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line[0] in "+-" and line[1:2] == " ":
            if current is None:
                raise ConfigurationError(f"lexicon {name!r} line {n}: example before any entry")
            slot = 2 if line[0] == "+" else 3
            if current[slot]:
                raise ConfigurationError(f"lexicon {name!r} line {n}: second {line[0]} example")
            current[slot] = line[2:].strip()
            continue
        close(n)
        kind, _, rest = line.partition(" ")
        if kind not in KINDS or not rest.strip():
            raise ConfigurationError(f"lexicon {name!r} line {n}: unknown entry {line!r}")
        term, _, extra = rest.partition("|")
        term = term.strip()
        current = [kind, term, "", ""]
        toks = _tokens(term) if kind in ("connective", "label", "hedge") else ()
        if kind in ("verb", "neutral"):
            parts = term.split()
            if kind == "neutral":
                neutral.add(parts[0])
            base = parts[0]
            if len(parts) > 1:
                lex.particles[base] = lex.particles.get(base, frozenset()) | {parts[1]}
            made = forms(base)
            for form in extra.split():
                kind_of = "ing" if form.endswith("ing") else "s" if form.endswith("s") else "ed"
                made[form] = kind_of
            for form, kind_of in made.items():
                lex.verbs.setdefault(form, (base, kind_of))
            continue
        if kind in ("connective", "label", "hedge"):
            others = [v for v in extra.split(",") if v.strip()]
            variants = [toks] + [_tokens(v) for v in others]
            for v in variants:
                if v:
                    phrases[kind].setdefault(v[0], []).append(v)
            continue
        for t in [term, *extra.split()]:
            if kind == "belief":
                if " " in t:
                    words[kind].add(t)
                    continue
                for form in forms(t) if t == term else {t: ""}:
                    words[kind].add(form)
            else:
                words[kind].add(t)
    close(len(lines) + 1)
    for kind, table in phrases.items():
        lex.phrases[kind] = {
            k: tuple(sorted(set(v), key=len, reverse=True)) for k, v in table.items()
        }
    lex.words = {k: frozenset(v) for k, v in words.items()}
    lex.neutral = frozenset(neutral)
    return lex


@functools.cache
def lexicon() -> GrammarLexicon:
    """The shipped vocabulary (parsed once, on first use)."""
    return parse_lexicon(read_data("draft.txt"))


# ---- word classes (grammar.txt) ------------------------------------------------------

# Written in the data for tokens that are not words: the end of the sentence (no token)
# and a span the reader masked (code, a quoted mention, a name).
_PLACEHOLDERS = {"<end>": "", "<mask>": MASK}


@dataclass
class Classes:
    """The word classes of ``grammar.txt`` with each class's examples."""

    words: dict[str, frozenset[str]] = field(default_factory=dict)
    """class -> its words (tokens as the reader cuts them)."""
    phrases: dict[str, frozenset[tuple[str, ...]]] = field(default_factory=dict)
    """phrase class -> its phrases (token tuples)."""
    examples: list[tuple[str, str, str]] = field(default_factory=list)
    """(class, sign, example) for every example; ``sign`` is ``+`` (deleted) or ``-``
    (kept). An example holding ``{}`` stands for one sentence per word of its class."""

    def get(self, name: str) -> frozenset[str]:
        """The words of class ``name``; a missing class is a packaging error."""
        try:
            return self.words[name]
        except KeyError:
            raise ConfigurationError(f"the draft grammar has no word class {name!r}") from None

    def get_phrases(self, name: str) -> frozenset[tuple[str, ...]]:
        """The phrases of phrase class ``name``."""
        try:
            return self.phrases[name]
        except KeyError:
            raise ConfigurationError(f"the draft grammar has no phrase class {name!r}") from None

    def expanded(self) -> list[tuple[str, str, str]]:
        """Every example as sentences: (class, sign, sentence), ``{}`` filled with each
        word (or phrase) of its class in turn."""
        out: list[tuple[str, str, str]] = []
        for name, sign, example in self.examples:
            if "{}" not in example:
                out.append((name, sign, example))
                continue
            members = (
                sorted(self.words[name])
                if name in self.words
                else sorted(" ".join(p) for p in self.phrases[name])
            )
            for word in members:
                if word in _PLACEHOLDERS.values():
                    continue
                filled = example.replace("{}", word)
                out.append((name, sign, filled[:1].upper() + filled[1:]))
        return out


def parse_classes(text: str, name: str = "grammar") -> Classes:
    """Parse the class format documented at the top of ``grammar.txt``."""
    out = Classes()
    current: tuple[str, str] | None = None  # (kind, class name)
    members: list[str] = []
    signs: set[str] = set()
    lines = text.splitlines()

    def close(line_no: int) -> None:
        if current is None:
            return
        kind, cname = current
        if signs != {"+", "-"}:
            raise ConfigurationError(
                f"grammar {name!r}: class {cname!r} before line {line_no} needs a '+' and "
                "a '-' example"
            )
        if not members:
            raise ConfigurationError(f"grammar {name!r}: class {cname!r} has no words")
        if cname in out.words or cname in out.phrases:
            raise ConfigurationError(f"grammar {name!r}: class {cname!r} defined twice")
        if kind == "class":
            words = [_PLACEHOLDERS.get(w, w) for w in members]
            out.words[cname] = frozenset(words)
        else:
            made = [_tokens(p) for p in members]
            if not all(made):
                raise ConfigurationError(f"grammar {name!r}: an empty phrase in {cname!r}")
            out.phrases[cname] = frozenset(made)

    for n, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line[0] in "+-|" and line[1:2] in (" ", ""):
            if current is None:
                raise ConfigurationError(f"grammar {name!r} line {n}: {line[0]!r} before any class")
            body = line[2:].strip()
            if line[0] == "|":
                if current[0] == "class":
                    members.extend(body.split())
                else:
                    members.extend(p.strip() for p in body.split(",") if p.strip())
                continue
            if not body:
                raise ConfigurationError(f"grammar {name!r} line {n}: an empty example")
            signs.add(line[0])
            out.examples.append((current[1], line[0], body))
            continue
        close(n)
        kind, _, cname = line.partition(" ")
        cname = cname.strip()
        if kind not in ("class", "phrases") or not cname or " " in cname:
            raise ConfigurationError(f"grammar {name!r} line {n}: unknown entry {line!r}")
        current = (kind, cname)
        members = []
        signs = set()
    close(len(lines) + 1)
    return out


@functools.cache
def classes() -> Classes:
    """The shipped word classes (parsed once, on import of the grammar)."""
    return parse_classes(read_data("grammar.txt"))


# ---- constructions (constructions.txt) ----------------------------------------------


def parse_constructions(text: str, name: str = "constructions") -> list[tuple[str, str, str]]:
    """Parse ``constructions.txt``: (construction, sign, draft) for every example."""
    out: list[tuple[str, str, str]] = []
    current: str | None = None
    signs: set[str] = set()
    lines = text.splitlines()

    def close(line_no: int) -> None:
        if current is not None and signs != {"+", "-"}:
            raise ConfigurationError(
                f"{name!r}: construction {current!r} before line {line_no} needs a '+' "
                "and a '-' example"
            )

    for n, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line[0] in "+-" and line[1:2] == " ":
            if current is None:
                raise ConfigurationError(f"{name!r} line {n}: example before any construction")
            signs.add(line[0])
            out.append((current, line[0], line[2:].strip().replace("\\n", "\n")))
            continue
        close(n)
        kind, _, cname = line.partition(" ")
        if kind != "construction" or not cname.strip() or " " in cname.strip():
            raise ConfigurationError(f"{name!r} line {n}: unknown entry {line!r}")
        current = cname.strip()
        signs = set()
    close(len(lines) + 1)
    return out


@functools.cache
def constructions() -> list[tuple[str, str, str]]:
    """The shipped construction examples."""
    return parse_constructions(read_data("constructions.txt"))
