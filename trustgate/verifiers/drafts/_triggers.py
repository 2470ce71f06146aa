"""Which sentences of a draft a causal or a hedge reading could fire on.

Reading a sentence (:mod:`trustgate.verifiers.drafts._grammar`) costs tens of microseconds of
Python, and most sentences of an honest draft hold nothing either rule could act on.
This module answers "could the reading fire here?" for a sentence in about a
microsecond, so only the sentences where it could are read. Every test here is a
*necessary* condition of the reading it stands for, written from the reading's code,
never a guess at what is likely; a property test holds the verdicts of
candidates-only reading equal to reading every sentence.

A sentence is split into words (one ``str.split`` of a form with punctuation made
spaces); a sentence holding no *key* word of a side is not read for that side. A key
is a word without which the side cannot fire: a verb of belief, ``may``, ``should``,
a causative verb, an outcome noun, one word of every hedge or connective phrase. Some
keys settle it alone (an ``-ed`` verb, ``because``); the rest need their context, as
the reading does, checked by a small pattern on the sentence:

* the rest of their phrase (an adverb in ``-ly`` may follow a connective's first
  word, as the reading allows);
* ``, for``; ``, so``, ``; so`` or ``and so``; ``as`` after a comma or semicolon,
  ``as there was``; ``as``, ``so``, ``with``, ``without`` as the first word;
* a cause noun after ``root``, ``main``, ``the``...; ``issue``, ``problem``,
  ``fault`` after ``root``, ``underlying``...; a field label followed by its colon;
* a causative verb's ``-ing`` form after a comma, dash, bracket or a form of *be*,
  its base form after a modal, a form of *do* or a plural-looking word (adverbs and
  a negation between skipped, as the reading skips them);
* the noun of ``made no difference to``, ``played a part in`` before its preposition;
* pairs, an A with a B somewhere after it (two searches, linear): a fault word and a
  past form (a fault as the subject of any verb), ``what`` and a past form (a cleft),
  ``so`` and ``that`` (a result clause), an attribution verb and its preposition
  (``attributed ... to``);
* a misspelling of a key (``becuase``), as the reading corrects it.

Text the reading folds into something else (a character outside ASCII that is not
plain punctuation or a space, an arrow, ``b/c``) makes its sentence a candidate for
both sides. The scans read :func:`scan_form`: lower case, curly quotes plain, ``*``
a space (as the reading's fold makes it), the same length as the sentence.

A change to the reading that lets it fire in a new way must change this module with
it: ``TRUSTGATE_EQUIVALENCE_EXAMPLES=20000 pytest tests/unit/test_draft_equivalence.py``
compares candidates-only verdicts with reading every sentence on that many drafts.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from trustgate.verifiers.drafts import _grammar
from trustgate.verifiers.drafts._grammar import spelling as _spelling
from trustgate.verifiers.drafts._grammar import words as _words
from trustgate.verifiers.drafts._text import fold

__all__ = ["Side", "causal", "hedge", "scan_form", "unstable"]

_SCAN_FORM = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "*": " "})


def scan_form(text: str) -> str | None:
    """``text`` as the scans read it, or ``None`` when lower-casing changes its length
    (offsets would not line up: then every sentence is a candidate)."""
    form = text.translate(_SCAN_FORM).lower()
    return form if len(form) == len(text) else None


# Everything that is not a lower-case ASCII letter or digit becomes a space for the
# word split (apostrophes too: "'caused" holds the token "caused", "don't" the
# words "don" and "t"); characters outside ASCII are left alone (they are found
# by :func:`unstable`).
_WORDS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})
_ARROWS = frozenset("→⇒")


def word_form(form: str) -> str:
    """A scan form with everything but ASCII letters and digits made a space, the same
    length: a slice of it split is the words of that slice."""
    spaced = form.translate(_WORDS)
    return spaced if spaced.isascii() else _NON_ASCII.sub(" ", spaced)


def words(form: str) -> list[str]:
    """The words of a scan form, as the key sets are written (split at punctuation
    and at every character outside ASCII, which the reading may read as a token)."""
    spaced = form.translate(_WORDS)
    if not spaced.isascii():
        spaced = _NON_ASCII.sub(" ", spaced)
    return spaced.split()


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


@functools.cache
def _stable(ch: str) -> bool:
    """A character outside ASCII the reading sees as it is or as a space: plain
    punctuation (a dash, a bullet, a curly quote) or a space (no-break, thin)."""
    folded = fold(ch)
    if folded and folded.isspace():
        return True
    if folded != ch.translate(_SCAN_FORM) or ch in _ARROWS:
        return False
    return not any(c.isalnum() or unicodedata.combining(c) for c in folded)


# Spellings whose reading is not what they look like: arrows written in ASCII and
# shorthand the reading joins (b/c, w/o, d/t), found with str.find (a pattern that
# opens with a look-behind is tried at every position); and characters outside
# ASCII, each checked by :func:`_stable`.
_NON_ASCII_CHAR = re.compile(r"[^\x00-\x7f]")
_ASCII_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def joined(form: str) -> bool:
    """Whether a sentence's scan form with its markers removed holds an ASCII arrow or
    shorthand (removing ``[[3]]`` can make one: ``=[[3]]>``); characters outside
    ASCII were already found in the whole draft."""
    if "=>" in form or "->" in form or "/" in form:
        return bool(unstable(form.encode("ascii", "replace").decode()))
    return False


def unstable(form: str) -> list[int]:
    """Offsets in a scan form of spellings that make a sentence a candidate for both
    sides (a character the reading folds, an arrow, ``b/c``)."""
    out: list[int] = []
    n = len(form)
    i = form.find(">")
    while i >= 0:  # => and ->
        if i > 0 and form[i - 1] in "=-":
            out.append(i - 1)
        i = form.find(">", i + 1)
    i = form.find("/")
    while i >= 0:  # b/c, w/o, d/t standing alone
        if (
            0 < i < n - 1
            and form[i - 1] in "bdw"
            and form[i + 1] in "cto"
            and (i + 2 == n or form[i + 2] not in _ASCII_WORD)
            and (i == 1 or not form[i - 2].isalnum())
        ):
            out.append(i - 1)
        i = form.find("/", i + 1)
    if not form.isascii():
        odd = {ch for ch in set(_NON_ASCII_CHAR.findall(form)) if not _stable(ch)}
        if odd:
            where = re.compile("[" + "".join(re.escape(ch) for ch in sorted(odd)) + "]")
            out.extend(m.start() for m in where.finditer(form))
    return out


# Common words never chosen as a phrase's key (a rarer word of it is).
_COMMON = _words.KEY_COMMON
_B = r"(?<![a-z0-9])"  # a token starts here
_E = r"(?![a-z0-9])"  # a token ends here


def _key(tokens: tuple[str, ...]) -> str:
    """The word of a phrase a sentence must hold for the phrase to be in it."""
    parts = [w for tok in tokens for w in tok.translate(_WORDS).split()]
    rare = [w for w in parts if w not in _COMMON] or parts
    return max(rare, key=lambda w: (len(w), w))


def _alt(items: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(items), key=lambda w: (-len(w), w)))


_LETTER_RUNS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalpha()})
_NEEDS: dict[str, frozenset[bytes]] = {}
"""Pattern source -> the runs of letters every match of it holds as runs of letters of
the sentence (filled as :func:`_phrase` writes phrases; a pattern not here needs
nothing beyond its key)."""


def _phrase(tokens: tuple[str, ...], squeeze: bool = False) -> str:
    """Tokens as they stand in text: words apart by whitespace, punctuation by any.

    A match holds every token literally, each starting and ending where a run of
    letters and digits does (alphanumeric neighbours stand apart by whitespace), so
    the runs of letters of its tokens are runs of letters of the sentence: they are
    recorded in :data:`_NEEDS` for :meth:`Side.could`."""
    source = _phrase_source(tokens, squeeze)
    if all(tok.isascii() for tok in tokens):
        _NEEDS[source] = frozenset(
            w.encode("ascii") for tok in tokens for w in tok.translate(_LETTER_RUNS).split()
        )
    return source


def _phrase_source(tokens: tuple[str, ...], squeeze: bool) -> str:
    out = ""
    for k, tok in enumerate(tokens):
        if k:
            alnum = tokens[k - 1][-1:].isalnum() and tok[:1].isalnum()
            if alnum and k == 1 and squeeze:  # "led directly to", "stems in part from"
                extent = "|".join(r"\s+".join(map(re.escape, sq)) for sq in _words.SQUEEZE)
                also = _alt(_words.ADVERB_ALSO)
                out += rf"(?:\s+[a-z0-9']*ly(?![a-z0-9])|\s+(?:{also}){_E}|\s+(?:{extent}))?"
            out += r"\s+" if alnum else r"\s*"
        out += re.escape(tok)
    return _B + out + _E


@dataclass(frozen=True)
class Side:
    """The keys of one side: ``alone`` settle it by being there; a key of ``context``
    needs its pattern to match somewhere in the sentence (compiled on first use, so
    the first call after import pays only for what it meets); a key of ``first``
    also settles it as the sentence's first word."""

    alone: frozenset[str]
    context: dict[str, str]
    first: frozenset[str]
    keys: frozenset[str]
    pairs: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    r"""key -> (A, B) patterns, each needing an A with a B somewhere after it (two
    searches, linear, where ``A[\s\S]*B`` would retry at every A)."""
    compiled: dict[str, re.Pattern[str]] = field(default_factory=dict)
    needs: dict[bytes, tuple[frozenset[bytes], ...]] = field(default_factory=dict)
    """key -> the runs of letters each of its context patterns needs besides the key
    (only for keys settled by context patterns alone: no ``alone``, ``first`` or
    ``pairs`` test)."""

    def could(self, words: list[bytes], found: Iterable[bytes]) -> bool:
        """A necessary condition of :meth:`fires`, on the sentence's runs of letters
        only: some key found is settled by more than its context patterns, or one of
        its patterns has every word it needs in the sentence. Cheaper than slicing the
        sentence and searching it, and most keys found in a sentence fail it (the
        sentence's words are made a set only when a key's patterns need words)."""
        needs = self.needs
        wanted: list[tuple[frozenset[bytes], ...]] = []
        for w in found:
            alts = needs.get(w)
            if alts is None:
                return True
            wanted.append(alts)
        held = set(words)
        return any(need <= held for alts in wanted for need in alts)

    def _pattern(self, source: str) -> re.Pattern[str]:
        pattern = self.compiled.get(source)
        if pattern is None:
            pattern = self.compiled[source] = re.compile(source)
        return pattern

    def fires(self, form: str, found: Iterable[str]) -> bool:
        """Whether the reading could fire on a sentence (its scan form and words)."""
        checked: set[str] = set()
        for w in found:
            if w in self.alone:
                return True
            for a, b in self.pairs.get(w, ()):
                if a + _THEN + b in checked:
                    continue
                checked.add(a + _THEN + b)
                m = self._pattern(a).search(form)
                if m is not None and self._pattern(b).search(form, m.end()) is not None:
                    return True
            if w in self.first:
                head = form.lstrip()
                if head.startswith(w):
                    after = head[len(w) : len(w) + 1]
                    if not (after.isalnum() and after.isascii()):
                        return True
            source = self.context.get(w)
            if source is None:
                continue
            if source not in checked:
                checked.add(source)
                if self._pattern(source).search(form) is not None:
                    return True
        return False


def _with_slips(alone: set[str], context: dict[str, list[str]]) -> None:
    """A misspelt key (``becuase``) is a key too, as the reading corrects it
    (:mod:`trustgate.verifiers.drafts._grammar.spelling`): alone where its word is,
    or with its word's patterns spelt its way."""
    for slip, word in _spelling.variants().items():
        if word in alone:
            alone.add(slip)
        elif word in context:
            whole = re.compile(rf"(?<![a-z]){re.escape(word)}(?![a-z])")
            context.setdefault(slip, []).extend(whole.sub(slip, part) for part in context[word])


_THEN = "\x00"  # in a context part: "A" + _THEN + "B", an A then a B after it


def _then(a: str, b: str) -> str:
    return a + _THEN + b


def _build(alone: set[str], context: dict[str, list[str]], first: set[str]) -> Side:
    _with_slips(alone, context)
    sources: dict[str, str] = {}
    pairs: dict[str, tuple[tuple[str, str], ...]] = {}
    for key, parts in context.items():
        if key in alone:
            continue
        plain = sorted({p for p in parts if _THEN not in p})
        ordered = sorted({p for p in parts if _THEN in p})
        if plain:
            sources[key] = "|".join(plain)
        if ordered:
            pairs[key] = tuple(tuple(p.split(_THEN)) for p in ordered)  # type: ignore[misc]
    for key in first - set(sources) - set(pairs) - alone:
        sources[key] = r"(?!)"  # only the first-word test can settle it
    keys = frozenset(alone) | set(sources) | set(pairs)
    needs: dict[bytes, tuple[frozenset[bytes], ...]] = {}
    for key, parts in context.items():
        if key in alone or key in first or key in pairs or not key.isascii():
            continue
        # a pattern not written by _phrase (or rewritten for a misspelling) needs
        # nothing known: the empty set, always held
        needs[key.encode("ascii")] = tuple({_NEEDS.get(part, frozenset()) for part in parts})
    return Side(frozenset(alone), sources, frozenset(first), keys, pairs, needs=needs)


@functools.cache
def hedge() -> Side:
    lex = _grammar.lexicon()
    alone = set(lex.words.get("belief", ())) | {"may", "should"}
    context: dict[str, list[str]] = {}
    for v in lex.phrases["hedge"].values():
        for p in v:
            if len(p) == 1 and p[0].isalnum():
                alone.add(p[0])
            else:  # an adverb may stand after the first word: "could also have been"
                context.setdefault(_key(p), []).append(_phrase(p, squeeze=True))
    return _build(alone, context, set())


@functools.cache
def causal() -> Side:
    lex = _grammar.lexicon()
    alone: set[str] = set(lex.words.get("outcome", ())) | set(lex.words.get("predicate", ()))
    # the noun "cause" is read wherever a noun phrase holds it ("was not the root cause")
    alone |= _words.CAUSE_NOUN
    context: dict[str, list[str]] = {}
    first: set[str] = set()

    def add(key: str, pattern: str) -> None:
        context.setdefault(key, []).append(pattern)

    for v in lex.phrases["label"].values():
        for p in v:
            add(_key(p), _phrase(p)[: -len(_E)] + r"\s*[:\-—–|]")
    contextual = _words.CLAUSE_OPENERS | _words.WITHOUT
    for v in lex.phrases["connective"].values():
        for p in v:
            if len(p) > 1:
                add(_key(p), _phrase(p, squeeze=True))
            elif p[0] not in contextual and p[0].isalnum():
                alone.add(p[0])
    add("for", rf",\s*for{_E}")
    add("so", rf"(?:[,;]\s*|{_B}and\s+)so{_E}")
    add("so", _then(rf"{_B}so{_E}", rf"{_B}that{_E}"))  # a result clause: "so long that"
    add("as", rf"[,;]\s*as{_E}")
    add("as", rf"{_B}as\s+there\s+(?:{_alt(_words.BE)}){_E}")
    first.update((_words.CLAUSE_OPENERS - {"for"}) | _words.WITHOUT)
    for p in _words.EFFECT_PHRASE:  # "made no difference to", "played a part in"
        add(p[0], _phrase(p))
    # a fault as the subject of any past verb ("stale DNS entries pointed clients at")
    past = rf"{_B}(?:[a-z]{{3,}}ed|{_alt(_words.IRREGULAR_PAST)}){_E}"
    for w in _words.CLEFT_WH:  # a cleft: "is what ultimately blocked"
        add(w, _then(rf"{_B}{w}{_E}", past))
    for w in set(lex.words.get("adverse", ())) | _words.FAULT_NOUNS | _words.FAULT_MODIFIER:
        if w.isalnum():
            add(w, _then(rf"{_B}{re.escape(w)}{_E}", past))
    for p in _words.GAPPED:  # "attributed the latency to", what is blamed between
        add(p[0], _then(rf"{_B}{re.escape(p[0])}{_E}", _phrase(p[1:])))
    for w in _words.ROOT_FAULT_NOUN:
        add(w, rf"{_B}(?:{_alt(_words.ROOT_MODIFIER)})\s+{w}{_E}")
    adverb = rf"(?:{_alt(_words.ADVERB_ALSO)}|[a-z0-9']{{3,}}ly){_E}"
    forms: dict[str, set[str]] = {"base": set(), "s": set(), "ed": set(), "ing": set()}
    for form, (lemma, kind) in lex.verbs.items():
        forms[kind].add(form)
        if lemma == "cause" and kind != "base":
            alone.add(form)  # "causing" asserts a cause wherever it stands
    alone |= forms["ed"] | forms["s"]
    ing = (
        rf"(?:[,(—–]|{_B}(?:{_alt(_words.BE - _words.BEING)}){_E})(?:\s*{adverb})*"
        rf"\s*(?:{_alt(forms['ing'])}){_E}"
    )
    negation = rf"(?:{_alt(_words.NEG)}){_E}"
    base = (
        rf"{_B}(?:{_alt(_words.MODAL | _words.DO_SUPPORT)}|[a-z0-9']{{2,}}[a-rt-z0-9']s){_E}"
        rf"(?:\s+(?:{adverb}|{negation}))*\s+(?:{_alt(forms['base'])}){_E}"
    )
    for w in forms["ing"]:
        add(w, ing)
    for w in forms["base"]:
        add(w, base)
    return _build(alone, context, first)
