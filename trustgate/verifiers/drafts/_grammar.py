"""Does a sentence assert a cause, or guess? Constructions, not phrase lists.

The shipped causal and hedge rules used to be hundreds of regular-expression
fragments grown sentence by sentence; they scored near perfectly on the sentences
they were grown on and much worse on anyone else's. This module reads the
*construction* instead:

* a causal **connective** joining two things (``because``, ``due to``, ``led to``,
  ``which meant``, ``→``), including the ones whose sense depends on what follows
  (``since`` + a clause, sentence-initial ``as`` + a clause, ``, so`` + a clause,
  ``, for`` + a clause, ``with X down,``, ``without X,``);
* a **causative verb** with a non-human subject and an object (``the retry storm
  overwhelmed the auth service``), a passive with an agent (``was blocked by``), a
  consequence participle (``, leaving the replicas without ...``) or a means clause
  (``we mitigated by shedding traffic``);
* an **outcome noun** stated with a copula (``the result was ...``);
* a **field label** that introduces a cause (``Root cause: ...``);
* for hedges: epistemic adverbs and phrases, epistemic modals (``may have``,
  ``should now be``, ``would have``), and verbs of belief with a first-person subject
  or as ``is thought to``.

Before any of that, what is not an assertion is set aside: questions, embedded
questions (``we are investigating whether ...``), statements about the document
itself, and non-prose spans and names, masked by :mod:`trustgate.verifiers.drafts._text`.

The words that fill these slots live in ``lexicon/draft.txt`` beside this module, where
every entry carries a positive and a negative example that a test runs. Every decision
names the feature that fired, so a person restoring a sentence sees why it went.

Everything here is a single left-to-right pass over the sentence's tokens with
bounded look-around: linear in the length of the sentence.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources

from trustgate.errors import ConfigurationError
from trustgate.verifiers.drafts._text import MASK, Sentence, read

__all__ = ["Lexicon", "Reading", "analyse", "lexicon", "trigger_words"]

_KINDS = (
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
)


def _words(text: str) -> frozenset[str]:
    """A set of words written as one space-separated string (easier to review)."""
    return frozenset(text.split())


# Function words the constructions need; grammar, not vocabulary.
_AUX = _words(
    "is are was were be been being am has have had do does did will would can could "
    "shall should may might must isn't aren't wasn't weren't hasn't haven't hadn't "
    "doesn't don't didn't won't wouldn't can't couldn't cannot"
)
_BE = _words("is are was were be been being am get gets got getting")
_MODAL = _words("will would can could may might must should shall")
_NEG = _words(
    "not never no n't without isn't aren't wasn't weren't hasn't haven't hadn't doesn't "
    "don't didn't won't wouldn't can't couldn't cannot neither nor"
)
_CLAUSE = _words(
    ", ; : ( ) — – and but or which that who whom whose while whereas because so then "
    "when whenever after before until if unless though although once where"
)
_NOT_OBJECT = _words(
    ". , ; : ? ! ( ) at on in into for during after before when while until and or but "
    "as to from with since because due by of than about within over under itself "
    "themselves twice once again between across throughout around behind beyond toward "
    "towards against without despite like upon amid"
)
_PARTICLE = _words("down out off up back away")
_ADVERB_ALSO = _words(
    "also then just still even further thereby thus quickly eventually already "
    "ultimately directly accidentally inadvertently silently immediately effectively "
    "briefly suddenly gradually repeatedly again"
)
_DETERMINERS = _words(
    "the a an our its their this that these those every each all both no some any many "
    "most several his her my your"
)
_SUBJECT_START = _DETERMINERS | _words(
    "we it they there he she i you one nothing nobody none everything"
)
_WH = _words("why what how which who whom whose whether where when if")
_TIME_WORDS = _words(
    "then now yesterday today last early late monday tuesday wednesday thursday friday "
    "saturday sunday january february march april may june july august september "
    "october november december jan feb mar apr jun jul aug sep sept oct nov dec "
    "midnight noon morning evening week month year day hour"
)
_AS_NOT_CAUSAL = _words(
    "of with part a an soon far well per such expected described mentioned noted shown "
    "seen always usual in for to long much many opposed follows before previously "
    "requested promised planned scheduled agreed"
)
_ARTICLES = _words("the a an our its their his her my your")
_REFLEXIVE = _words("itself themselves himself herself ourselves")
_ONCE = _words("twice once again back more further repeatedly")
_PREPOSITIONS = _words("of with for in on at by from to as about and or into onto than per")
_SEEING = _words(
    "saw see sees seeing seen had has have having lists list shows show showed found "
    "find finds noticed observed reported report reports contains contain includes "
    "include experienced experience encountered hit hits"
)
_QUANTITY_UNITS = _words(
    "ms milliseconds millisecond seconds second minutes minute hours hour latency load "
    "overhead delay lag pressure percent % s"
)
_NOT_STATED = _words(
    "still not under being unknown unclear tbd pending yet to currently see listed "
    "tracked documented described covered discussed explained below above"
)
_STATED_PARTICIPLES = _words("identified determined found traced confirmed")
_DOC_VERBS = _words(
    "describes covers explains lists asks contains includes is has was summarises "
    "summarizes outlines shows details documents records will presents provides gives "
    "focuses follows uses below above sets walks looks collects tracks"
)
_QUESTION_NOUNS = _words(
    "question questions unclear unknown sure wonder wondering wondered understand "
    "understanding determine determined learn"
)
_DOC_SUBJECTS = _words(
    "page wiki guide runbook readme faq article post docs doc section document report "
    "template appendix chapter slide slides postmortem mortem writeup review"
)
_PLACES = _words("path road door corridor hallway stairs street way entrance steps")
_NUMBER_WORDS = _words(
    "one two three four five six seven eight nine ten eleven twelve twenty thirty forty "
    "fifty hundred hundreds thousand thousands million millions several many half "
    "extra"
)
_FAULT_NOUNS = _words(
    "failure failures fault faults attack leak issue issues problem problems exhaustion "
    "outage outages incident compromise overload bug bugs corruption saturation slowdown "
    "delay delays drop spike surge lag backlog storm regression errors error loss gap "
    "duplicates crash crashes culprit cause causes degradation disruption latency "
    "timeouts failover evictions bottleneck bottlenecks"
)
_SOURCE_CONNECTIVES = frozenset(
    {
        ("came", "from"),
        ("comes", "from"),
        ("originated", "in"),
        ("originated", "from"),
        ("lay", "behind"),
        ("lies", "behind"),
        ("came", "down", "to"),
        ("comes", "down", "to"),
        ("spread", "to"),
        ("spreads", "to"),
        ("cascaded", "into"),
        ("cascade", "into"),
        ("cascades", "into"),
        ("owed", "to"),
        ("sprang", "from"),
        ("springs", "from"),
        ("turned", "out", "to", "be"),
        ("contributing", "to"),
        ("contributes", "to"),
        ("contribute", "to"),
        ("was", "down", "to"),
        ("is", "down", "to"),
        ("were", "down", "to"),
    }
)
_OBJECT_FAULT_OK = _words(
    "produce generate create make send add ship push introduce turn keep put leave "
    "route skip mark pull assign require consume drive propagate remove allow let enable "
    "increase raise bump publish charge widen redirect divert reset revert"
)
_EVIDENCE = _words(
    "investigation evidence data logs log graph graphs metrics signs analysis numbers "
    "everything findings trace traces dump timeline symptoms pattern indications "
    "telemetry results"
)
_BARE_VERBS = _words(
    "miss wait fail fall stop crash hang time retry drop lose skip return serve send "
    "write read restart run break block starve overwhelm spin loop reject accept go "
    "give point route double exceed overflow stall"
)
_INCIDENT = _words(
    "incident outage issue event disruption problem degradation this it interruption "
    "downtime blackout incidents outages issues events disruptions problems blackouts"
)
_IMPACT_VERBS = _words("affect impact disrupt")
_NOBODY = _words("nobody nothing none no neither")
_BY_NOT_AGENT = _words("default design hand mistake accident then now far")
_HEDGE_SKIP_AFTER_MAY = _words("not")
_DEONTIC_VERBS = _words(
    "request ask contact use hand choose opt apply submit access share call continue "
    "wish need exceed email reach join leave view download"
)


@dataclass
class Lexicon:
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


def _forms(base: str) -> dict[str, str]:
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


def parse_lexicon(text: str, name: str = "draft") -> Lexicon:
    """Parse the lexicon format documented at the top of ``draft.txt``."""
    lex = Lexicon()
    phrases: dict[str, dict[str, list[tuple[str, ...]]]] = {k: {} for k in _KINDS}
    words: dict[str, set[str]] = {k: set() for k in _KINDS}
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
        if kind not in _KINDS or not rest.strip():
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
            forms = _forms(base)
            given = extra.split()
            for form in given:
                kind_of = "ing" if form.endswith("ing") else "s" if form.endswith("s") else "ed"
                forms[form] = kind_of
            for form, kind_of in forms.items():
                lex.verbs.setdefault(form, (base, kind_of))
            continue
        if kind in ("connective", "label", "hedge"):
            others = [v for v in extra.split(",") if v.strip()]
            variants = [toks] + [_tokens(v) for v in others]
            for v in variants:
                if v:
                    phrases[kind].setdefault(v[0], []).append(v)
            continue
        all_terms = [term, *extra.split()]
        for t in all_terms:
            if kind in ("belief",):
                if " " in t:
                    words[kind].add(t)
                    continue
                for form in _forms(t) if t == term else {t: ""}:
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
def lexicon() -> Lexicon:
    """The shipped lexicon (parsed once, on first use)."""
    try:
        text = (
            resources.files("trustgate.verifiers.drafts.lexicon")
            .joinpath("draft.txt")
            .read_text("utf-8")
        )
    except (FileNotFoundError, ModuleNotFoundError) as exc:  # pragma: no cover - packaging
        raise ConfigurationError(f"the draft lexicon is missing: {exc}") from None
    return parse_lexicon(text)


_COMMON = _words(
    "our a an to it in not as there we from one the is was were are could may might must "
    "would should this that at if for so with"
)


def trigger_words() -> frozenset[str]:
    """Every word or phrase that can start a causal or hedge reading (for the document
    pre-scan). Phrases whose first word is a common one are kept whole."""
    lex = lexicon()
    out: set[str] = set(lex.verbs)
    for kind in ("connective", "label", "hedge"):
        for first, phrases in lex.phrases.get(kind, {}).items():
            if first in _COMMON:
                out.update(" ".join(p) for p in phrases if len(p) > 1)
            else:
                out.add(first)
    for kind in ("belief", "outcome", "should"):
        out.update(w.split()[0] for w in lex.words.get(kind, ()))
    out.update({"should", "ought", "cause", "causes", "issue", "problem", "fault", "may"})
    out.update({"could", "might", "must", "would", "since", "given", "thus"})
    return frozenset(w for w in out if w and w not in ("as", "for", "so", "with"))


@functools.cache
def _trigger_tokens() -> frozenset[str]:
    """Single tokens that matter to any rule (the only ones worth name-masking)."""
    lex = lexicon()
    out: set[str] = set(lex.verbs)
    for kind in ("connective", "label", "hedge"):
        for phrases in lex.phrases.get(kind, {}).values():
            for p in phrases:
                out.update(p)
    for words in lex.words.values():
        out.update(words)
    out.update({"cause", "causes", "should", "may", "issue", "problem", "fault"})
    return frozenset(out)


@functools.cache
def _causal_tokens() -> frozenset[str]:
    lex = lexicon()
    return frozenset(
        {"→", "=>", "->", "⇒", "cause", "causes", "issue", "problem", "fault"}
        | set(lex.phrases["connective"])
        | set(lex.words.get("outcome", ()))
        | set(lex.verbs)
    )


@functools.cache
def _hedge_tokens() -> frozenset[str]:
    lex = lexicon()
    return frozenset(
        {"should", "may"} | set(lex.phrases["hedge"]) | set(lex.words.get("belief", ()))
    )


def _trie(words: Iterable[str]) -> str:
    """One regex matching any of ``words`` (spaces match any whitespace), shaped as a
    trie so the engine rejects a position after a character or two."""
    root: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:  # type: ignore[type-arg]
        alts = [
            (r"\s+" if ch == " " else re.escape(ch)) + emit(child)
            for ch, child in sorted(node.items())
            if ch
        ]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:
            return "(?:" + body + ")?"
        return body

    return emit(root)


@dataclass(frozen=True, slots=True)
class Reading:
    """What a sentence asserts, with the features that fired."""

    causal: str | None = None
    """Why the sentence reads as a causal claim (the feature and its words)."""
    hedge: str | None = None
    """Why the sentence reads as a guess."""
    skipped: str | None = None
    """Why the sentence is not an assertion at all (question, about the document)."""


_QUESTION_END = re.compile(r"\?[\s\"')\]*_]*(?:\[\[[^\[\]\n]*\]\][\s]*)*\Z")


_last: list[tuple[str, Reading]] = []


def analyse_cached(text: str) -> Reading:
    """:func:`analyse`, remembering the last sentence (both rules read each one)."""
    last = _last[0] if _last else None  # one read: another thread may replace it
    if last is not None and last[0] == text:
        return last[1]
    reading = analyse(text)
    _last[:] = [(text, reading)]
    return reading


_last_side: list[tuple[str, _Analysis | None]] = []


def side(text: str, which: str) -> str | None:
    """One side of :func:`analyse` (``"causal"`` or ``"hedge"``), read only as far as
    that side needs: a cited sentence is only ever asked about hedges. The last
    sentence is remembered, so the two rules share one reading of it."""
    last = _last_side[0] if _last_side else None  # one read: threads share the cache
    if last is not None and last[0] == text:
        state = last[1]
    else:
        state = None if _QUESTION_END.search(text) else _Analysis(read(text), lexicon())
        if state is not None and (not state.t or state._about_document()):
            state = None
        _last_side[:] = [(text, state)]
    if state is None:
        return None
    return state._causal() if which == "causal" else state._hedge()


@functools.cache
def _document_scans() -> tuple[re.Pattern[str], ...]:
    """Three simple scans rather than one alternation: each starts with something the
    regex engine can skip to quickly (a word boundary into a trie, a non-ASCII
    character, a punctuation mark), so together they run at tens of MB/s."""
    words = [w for w in trigger_words() if w[:1].isalnum()]
    return (
        re.compile(r"\b" + _trie(words) + r"\b"),
        re.compile(r"[^\x00-\x7f]|=>|->|\b[bdw]/[cto]\b"),
        re.compile(
            r"[,;]\s*(?:so|for|as)\b|\band\s+so\b"
            r"|(?:^|[.!?:]\s+|\n[ \t>#|*+-]*)(?:as|with|without|so)\b",
            re.MULTILINE,
        ),
    )


_last_document: list[tuple[str, list[int]]] = []


def document_positions(document: str) -> list[int]:
    """Offsets in a whole draft (lower-cased, see ``rules.document_form``) where a
    causal or hedge reading could start. A sentence holding none is never read.
    (Remembered for the last document: both rules ask for the same one.)"""
    if _last_document and _last_document[0][0] is document:
        return _last_document[0][1]
    found: list[int] = []
    for scan in _document_scans():
        found.extend(m.end() - 1 for m in scan.finditer(document))
    _last_document[:] = [(document, found)]
    return found


def analyse(text: str) -> Reading:
    """Read one sentence: causal claim, hedge, both, or neither."""
    if _QUESTION_END.search(text):
        return Reading(skipped="a question asserts nothing")
    s = read(text)
    return _Analysis(s, lexicon()).run()


def _head(ordered: list[str]) -> list[str]:
    """The noun phrase a subject starts with, up to its first preposition (a hyphen
    keeps a compound together: "on-call engineer", "off-by-one error")."""
    head: list[str] = []
    n = len(ordered)
    for k, w in enumerate(ordered):
        compound = (k > 0 and ordered[k - 1] == "-") or (k + 1 < n and ordered[k + 1] == "-")
        if (w in _PREPOSITIONS and not compound) or w in ("which", "that", "who"):
            if head:
                break
            continue
        head.append(w)
    return head


class _Analysis:
    __slots__ = ("cased", "lex", "t")

    def __init__(self, s: Sentence, lex: Lexicon) -> None:
        self.lex = lex
        self.cased = s.cased
        self.t = list(s.tokens)
        self._mask_names()
        self._mask_embedded_questions()

    # ---- what is not a claim -----------------------------------------------------------
    def _mask_names(self) -> None:
        """A capitalised trigger word inside a sentence is a name (Dr. Reason, the May
        release, Project Likely), unless the sentence is in title case."""
        cased, t = self.cased, self.t
        triggers = _trigger_tokens()
        hits = [i for i in range(1, len(t)) if t[i] in triggers]
        for i in hits:
            if t[i - 1] in ("word", "words", "term", "phrase"):
                t[i] = MASK  # a mention: "the word consequently"
        hits = [i for i in hits if t[i] != MASK and not cased[i].islower()]
        if not hits:
            return
        words = [w for w in cased if len(w) > 3 and w.isalpha()]
        titled = sum(1 for w in words if w[0].isupper())
        if words and titled * 10 >= len(words) * 6:
            return  # a heading in title case: capitals say nothing
        for i in hits:
            w = cased[i]
            if t[i - 1] in ("word", "words", "term", "phrase") and w.isalpha():
                t[i] = MASK  # a mention: "the word consequently"
                continue
            if w.isalpha() and w.isupper() and 1 < len(w) <= 3:
                t[i] = MASK  # an acronym (DT, BC) names something
                continue
            if not (w[:1].isupper() and w[1:].islower()):
                continue
            if t[i - 1] in (".", ":", "(", '"', "-", "—", "–", "•", ";", "!", "?", "'", ">"):
                continue  # a new sentence or item starts here
            t[i] = MASK

    def _mask_embedded_questions(self) -> None:
        """``investigating whether X caused Y``: the rest of the clause is a question;
        ``Why the alert did not fire is unknown``: so is a leading wh-clause."""
        t = self.t
        inquiry = self.lex.words.get("inquiry", frozenset())
        n = len(t)
        if n > 2 and t[0] in ("why", "how", "what", "whether", "which", "who"):
            last = -1
            for j in range(1, n):
                if t[j] in (",", ";", ":"):
                    break
                if t[j] in ("is", "was", "remains", "remained", "are", "were"):
                    last = j
            after = t[last + 1] if 0 < last < n - 1 else ""
            cleft = t[0] in ("what", "why") and after in _ARTICLES | {"that", "because"}
            if not cleft:  # "What caused it was a loop" states; "Why ... is unknown" asks
                for k in range(0, last):
                    t[k] = MASK
        for i, w in enumerate(t):
            if w not in _WH or i == 0:
                continue
            embedded = w == "whether"
            if not embedded and t[i - 1] == "of" and i > 1 and t[i - 2] in _QUESTION_NOUNS:
                embedded = True
            if not embedded and w in ("why", "how", "what", "which", "if", "whom", "who"):
                j = i - 1
                while j >= 0 and i - j <= 6 and t[j] not in (",", ";", ":", "."):
                    if (
                        t[j] in inquiry
                        or t[j] in _QUESTION_NOUNS
                        or (t[j] == "out" and j > 0 and t[j - 1] in ("find", "figure"))
                    ):
                        embedded = True
                        break
                    j -= 1
            if embedded:
                j = i
                while j < n and t[j] not in (";", ".", "!", "?"):
                    t[j] = MASK
                    j += 1

    def _about_document(self) -> bool:
        t = self.t
        docs = self.lex.words.get("document", frozenset())
        k = 0
        if t[:1] == ["in"]:
            k = 1
        head = t[k : k + 4]
        if len(head) >= 2 and head[0] in ("this", "the", "our", "each", "below", "next", "a"):
            for j in range(1, min(4, len(head))):
                if head[j] in docs:
                    nxt = t[k + j + 1] if k + j + 1 < len(t) else ""
                    return nxt in _DOC_VERBS
        return head[:1] == ["section"] and len(head) > 1 and head[1].isdigit()

    # ---- helpers ---------------------------------------------------------------------
    def _phrase_at(self, kind: str, i: int) -> tuple[str, ...] | None:
        t = self.t
        for p in self.lex.phrases[kind].get(t[i], ()):
            if tuple(t[i : i + len(p)]) == p:
                return p
        if kind == "connective" and i + 2 < len(t) and t[i + 1].endswith("ly"):
            squeezed = (t[i], *t[i + 2 : i + 6])
            for p in self.lex.phrases[kind].get(t[i], ()):
                if len(p) > 1 and squeezed[: len(p)] == p:
                    return p
        return None

    def _prev(self, i: int) -> tuple[int, str]:
        """The previous token that is not an adverb."""
        j = i - 1
        t = self.t
        while j >= 0 and (t[j] in _ADVERB_ALSO or (t[j].endswith("ly") and len(t[j]) > 4)):
            j -= 1
        return j, (t[j] if j >= 0 else "")

    def _negated(self, i: int) -> bool:
        t = self.t
        for j in range(i - 1, max(-1, i - 4), -1):
            if t[j] in (",", ";", ":", "—"):
                return False  # a negation in the clause before does not reach here
            if t[j] in _NEG or t[j].endswith("n't"):
                return True
        return False

    def _subject(self, i: int) -> list[str]:
        """Tokens of the clause before position ``i`` (its subject, roughly)."""
        t = self.t
        out: list[str] = []
        j = i - 1
        while j >= 0:
            w = t[j]
            if w in _CLAUSE:
                if w in ("which", "that", "who"):
                    out.append(w)
                    k = j - 1  # the antecedent: "a bug that deleted ..."
                    while k >= 0 and j - k <= 3 and t[k] not in _CLAUSE and t[k] not in _BE:
                        out.append(t[k])
                        k -= 1
                    break
                if not any(x.isalpha() and x not in _AUX for x in out) and w in (
                    "and",
                    ",",
                    "then",
                ):
                    j -= 1
                    continue  # coordinated verbs share the earlier subject
                break
            out.append(w)
            j -= 1
        return out

    def _human(self, subject: list[str]) -> bool:
        """Whether the subject's head is a person ("the on-call engineer", "we"), not a
        thing that merely mentions one ("heavy load from a single customer")."""
        humans = self.lex.words.get("human", frozenset())
        if "who" in subject:
            return True
        head = _head(list(reversed(subject)))
        if not head:
            return False
        if any(w in ("we", "i", "you", "he", "she", "they", "us") for w in head):
            return True
        if len(head) >= 3 and head[-3:] == ["on", "-", "call"]:
            return True
        subject = [head[-1]]
        return any(
            w in humans
            or w
            in (
                "i",
                "you",
                "he",
                "she",
                "they",
                "us",
                "someone",
                "somebody",
                "users",
                "customers",
                "people",
                "staff",
                "employees",
                "developers",
                "user",
                "customer",
                "everyone",
                "anyone",
                "nobody",
            )
            for w in subject
        )

    def _actor(self, subject: list[str]) -> bool:
        """A subject an obligation can bind (we, engineers, the team), unlike ``you`` or
        ``customers`` in "you should now be able to log in"."""
        humans = self.lex.words.get("human", frozenset())
        return any(w in humans for w in subject)

    def _has_object(self, i: int) -> bool:
        t = self.t
        j = i + 1
        while j < len(t) and (
            t[j] in _PARTICLE
            or t[j] in _ADVERB_ALSO
            or (t[j].endswith("ly") and len(t[j]) > 4 and t[j] not in ("only", "early"))
        ):
            j += 1
        return j < len(t) and t[j] not in _NOT_OBJECT

    def _clause_has(self, start: int, words: Iterable[str] | frozenset[str], span: int) -> bool:
        t = self.t
        ws = words if isinstance(words, frozenset) else frozenset(words)
        for j in range(start, min(len(t), start + span)):
            if t[j] in (",", ";", ".", ":", "—"):
                return False
            if t[j] in ws:
                return True
        return False

    # ---- causal ----------------------------------------------------------------------
    def _causal(self) -> str | None:
        t = self.t
        n = len(t)
        lex = self.lex
        if any(w in ("sorry", "apologize", "apologise", "apologies", "apologizes") for w in t[:5]):
            return None  # an apology names no cause, whatever it regrets
        # field label at the start: "Root cause: ..."
        for k in range(0, min(2, n)):
            p = self._phrase_at("label", k) if t[k] in lex.phrases["label"] else None
            if p is not None and k + len(p) < n - 1 and t[k + len(p)] in (":", "-", "—", "–"):
                after = t[k + len(p) + 1]
                if after not in _NOT_STATED and after not in ("none", "n", "na", MASK):
                    return f"label {' '.join(p)!r}"
        triggers = _causal_tokens()
        for i in [k for k, x in enumerate(t) if x in triggers]:
            w = t[i]
            if w in ("→", "=>", "->", "⇒") and 0 < i < n - 1:
                return f"arrow {w!r}"
            if w in lex.phrases["connective"]:
                p = self._phrase_at("connective", i)
                if p is not None:
                    why = self._connective(i, p)
                    if why:
                        return why
            if w in ("cause", "causes") and not self._negated(i):
                why = self._cause_noun(i)
                if why:
                    return why
            if (
                w in ("issue", "problem", "fault")
                and i > 0
                and t[i - 1]
                in (
                    "underlying",
                    "root",
                    "real",
                    "core",
                    "actual",
                )
            ):
                why = self._outcome(i)
                if why:
                    return why
            if w in lex.words.get("outcome", frozenset()):
                why = self._outcome(i)
                if why:
                    return why
            if w in lex.verbs:
                why = self._verb(i)
                if why:
                    return why
        return None

    def _connective(self, i: int, p: tuple[str, ...]) -> str | None:
        t = self.t
        n = len(t)
        w = p[0]
        nxt = t[i + len(p)] if i + len(p) < n else ""
        prev = t[i - 1] if i > 0 else ""
        if prev in _NEG or prev.endswith("n't"):
            return None  # "not because of", "not due to"
        if p == ("due", "to") and (
            nxt == "be" or nxt in self.lex.words.get("schedule", frozenset())
        ):
            return None  # a schedule: "due to expire on 1 July"
        if p == ("thanks", "to") and (
            nxt in ("everyone", "everybody", "all", "you")
            or nxt in self.lex.words.get("human", frozenset())
        ):
            return None  # gratitude
        if p == ("responsible", "for"):
            if prev not in ("was", "were", "is", "are"):
                return None
            subject = self._subject(i)
            if self._negated(i) or self._human(subject) or any(x in _NOBODY for x in subject):
                return None  # a role, not an attribution
            if prev in ("is", "are") and not any(
                x in _FAULT_NOUNS or x in self.lex.words.get("adverse", frozenset())
                for x in self._clause(t[i + 2 : i + 10])
            ):
                return None  # a function: "is responsible for TLS termination"
        if len(p) == 1 and nxt in ("is", "was", "are") and w not in ("since", "as", "for"):
            return None  # the word itself is the subject: "hence is a word ..."
        if len(p) == 1 and prev in _DETERMINERS and w not in ("as", "for", "so", "since"):
            return None  # a noun: "the bc calculator"
        if w == "thus" and nxt in (":", "-", "far"):
            return None  # manner: "configure it thus:"
        if p in (("given", "that"),) and i > 0 and prev not in (",", ";", "and", "but"):
            return None  # "the talk given that day"
        if w in ("meaning",) and prev in _DETERMINERS:
            return None
        if p == ("set", "off") and nxt in ("for", "to", "on", "at", "from", "in", "."):
            return None
        if w in ("leading", "leads", "lead") and prev in _PLACES:
            return None
        if w == "since":
            if nxt.isdigit() or nxt in _TIME_WORDS or nxt in ("then", MASK, "v", "version", "been"):
                return None
            if prev in _AUX:
                return None  # "has since been updated"
            if self._clause_has(i + 1, _AUX, 10) or any(
                x.endswith("ed") and len(x) > 4 for x in self._clause(t[i + 1 : i + 10])
            ):
                return "connective 'since'"
            return None
        if w == "as" and len(p) == 1:
            nxt2 = t[i + 2] if i + 2 < n else ""
            if nxt == "there" and nxt2 in _BE:
                return "connective 'as'"  # "difficult to foresee as there was no alert"
            if nxt in _AS_NOT_CAUSAL or (nxt not in _SUBJECT_START and nxt != MASK):
                return None
            opens = i == 0 or prev in (",", ";")
            if opens and self._clause_has(i + 1, _AUX, 10) and not self._progressive(i + 1, 10):
                return "connective 'as'"
            return None
        if w == "for" and len(p) == 1:
            if prev == "," and nxt in _SUBJECT_START and self._clause_has(i + 1, _AUX, 8):
                return "connective 'for'"
            return None
        if w == "so" and len(p) == 1:
            if prev in (",", ";", "and") and nxt not in (
                "that",
                "far",
                "much",
                "many",
                "long",
                "as",
                "too",
                "on",
                "forth",
                "to",
                "",
                ".",
            ):
                return "connective 'so'"
            if i == 0 and (nxt == "," or (nxt in _SUBJECT_START and nxt != "that")):
                return "connective 'so'"
            return None
        if w == "with" and len(p) == 1:
            if i != 0:
                return None
            states = self.lex.words.get("state", frozenset())
            j = 1
            while j < n and j < 8 and t[j] not in (",", ";"):
                if t[j] in states and j + 1 < n and t[j + 1] == ",":
                    return "connective 'with ... " + t[j] + "'"
                j += 1
            return None
        if w in ("without", "wo") and len(p) == 1:
            if i == 0 and "," in t[1:12]:
                return "connective 'without'"
            return None
        if w == "leads" and prev in ("team", "tech", "sales"):
            return None
        if p == ("meant",) and (
            nxt in ("to", "for", "as", "by", ",", ".", "")
            or prev in ("what", "was", "is", "be", "been", "were", "term", "word", MASK)
            or self._human(self._subject(i))
        ):
            return None
        if p in _SOURCE_CONNECTIVES:
            subject = self._subject(i)
            if self._human(subject) or any(x in _NOBODY for x in subject):
                return None
            faults = _FAULT_NOUNS | self.lex.words.get("adverse", frozenset())
            where = subject + self._clause(t[i + len(p) : i + len(p) + 8])
            if not any(x in faults for x in where):
                return None
        if p == ("given", "the") and (i != 0 or "," not in t[2:12]):
            return None
        if p in (("was", "behind"), ("is", "behind")) and nxt not in _ARTICLES:
            return None
        return f"connective {' '.join(p)!r}"

    def _progressive(self, start: int, span: int) -> bool:
        """``as we were rolling back``: an auxiliary then an -ing verb reads as time."""
        t = self.t
        for j in range(start, min(len(t) - 1, start + span)):
            if t[j] in (",", ";"):
                return False
            if t[j] in _BE and t[j + 1].endswith("ing"):
                return True
        return False

    def _cause_noun(self, i: int) -> str | None:
        t = self.t
        prev = t[i - 1] if i > 0 else ""
        if prev in ("root", "main", "primary", "underlying", "proximate", "immediate", "the"):
            if (i > 1 and t[i - 2] in ("as", "is", "was", "were", "are")) or (
                prev == "the" and (i > 1 and t[i - 2] in ("as", "is", "was"))
            ):
                return f"stated cause {' '.join(t[max(0, i - 2) : i + 1])!r}"
            j = i + 1
            if j < len(t) and t[j] == "of":
                while j < len(t) and t[j] not in ("was", "is", "were", "are", ",", ";", ":"):
                    j += 1
            if j < len(t) and t[j] in ("was", "is", "were", "are", ":", "lies", "lay"):
                after = t[j + 1] if j + 1 < len(t) else ""
                if after in _STATED_PARTICIPLES:
                    return f"stated cause {' '.join(t[max(0, i - 1) : i + 1])!r}"
                if after in _NOT_STATED or after.endswith("ed") or after in ("",):
                    return None
                return f"stated cause {' '.join(t[max(0, i - 1) : i + 1])!r}"
        return None

    def _outcome(self, i: int) -> str | None:
        t = self.t
        if i == 0 and len(t) > 1 and t[1] == ":":
            return None  # a field label ("Impact: none")
        prev = t[i - 1] if i > 0 else ""
        nxt = t[i + 1] if i + 1 < len(t) else ""
        # predicate position: "X was the direct result of Y", "Y was the trigger for X"
        if (nxt in ("of", "for", "behind") or t[i] == "reason") and i > 1:
            j = i - 1
            copula = _BE | {"had", "has", "have"}
            while j > 0 and i - j <= 4 and t[j] not in copula and t[j] not in (",", ";"):
                j -= 1
            if t[j] in copula and not self._negated(j + 1):
                return f"outcome {t[i]!r} of"
        if i == 0 and nxt not in ("of", "from"):
            return None  # "Culprit is the name of our chaos tool"
        if (
            nxt.isalpha()
            and nxt not in _BE
            and nxt
            not in (
                "of",
                "from",
                "for",
                "behind",
                "why",
                "that",
                "the",
                "a",
                "an",
                "included",
                "includes",
            )
            and t[i] != "reason"
        ):
            return None  # a compound: "the reason field", "the trigger condition"
        if t[i] == "reason" and nxt in ("code", "codes", "field", "fields", "column", "phrase"):
            return None
        if (
            prev not in _DETERMINERS
            and prev
            not in (
                "underlying",
                "root",
                "real",
                "core",
                "actual",
                "primary",
                "principal",
                "net",
                "side",
                "main",
                "overall",
                "direct",
                "immediate",
                "knock",
                "-",
                "one",
                "first",
                "second",
                "final",
                "end",
            )
            and i != 0
        ):
            return None
        j = i + 1
        if j < len(t) and (t[j] in ("of", "from", "for", "behind") or t[i] == "reason"):
            while (
                j < len(t)
                and j < i + 12
                and t[j]
                not in (
                    "was",
                    "is",
                    "were",
                    "are",
                    ",",
                    "included",
                    "includes",
                )
            ):
                j += 1
        if j < len(t) and t[j] in ("was", "is", "were", "are", "included", "includes", ":"):
            after = t[j + 1] if j + 1 < len(t) else ""
            if (
                after in _NOT_STATED
                or after.endswith(("ed", "ble", "ive", "al", "wn"))
                or after
                in (
                    "visible",
                    "limited",
                    "low",
                    "high",
                    "minimal",
                    "negligible",
                    "small",
                    "large",
                    "significant",
                    "ready",
                    "available",
                    "",
                )
            ):
                return None
            if t[i] in ("outcome", "impact", "result", "effect", "effects") and any(
                x in _INCIDENT for x in t[i + 1 : j]
            ):
                return None  # "the outcome of the incident was ...": impact, not cause
            if t[i] == "trigger" and any(
                x in ("alert", "alarm", "job", "rule", "page", "pipeline", "workflow", "build")
                for x in t[i + 1 : j]
            ):
                return None  # an alert's condition, not an incident's cause
            return f"outcome {t[i]!r} stated"
        return None

    def _verb(self, i: int) -> str | None:
        t = self.t
        lemma, form = self.lex.verbs[t[i]]
        particle = self.lex.particles.get(lemma)
        if particle is not None and not any(x in particle for x in t[i + 1 : i + 5]):
            return None
        if self._negated(i):
            return None
        j, prev = self._prev(i)
        if (
            prev == "to"
            and j > 0
            and t[j - 1]
            not in (
                "led",
                "lead",
                "leading",
                "due",
                "failed",
                "fails",
                "fail",
            )
        ):
            return None  # an infinitive: purpose, not a claim
        nxt = t[i + 1] if i + 1 < len(t) else ""
        if form in ("ed", "ing") and (
            prev in _ARTICLES
            or prev in _PREPOSITIONS
            or prev in _SEEING
            or (prev.endswith("ed") and form == "ed" and prev not in _BE)
        ):
            return None  # an adjective: "the hidden column", "of affected accounts"
        if lemma == "break" and nxt == "down":
            return None  # "broke down latency by region" / "the link broke down"
        if form == "s" and (nxt in _BE or nxt in _AUX):
            return None  # a plural noun: "duplicate charges were refunded"
        if form == "ed" and self.lex.verbs.get(prev, ("", "base"))[1] in ("s", "ed"):
            return None  # an adjective after a verb: "deletes expired entries"
        if lemma == "stop" and nxt.endswith("ing"):
            return None  # "stopped accepting writes": ceased, no cause named
        if lemma == "cause" and form != "base":
            if form == "s" and (
                prev in _DETERMINERS | {"root", "main", "primary", "possible"}
                or i == 0
                or nxt == "of"
            ):
                return None  # the noun
            return f"causative {t[i]!r}"
        if form == "ing":
            if prev in (",", "—", "–", "(", "thereby", "thus") or (j >= 0 and t[j] in ("thereby",)):
                before = self._clause_before(i)
                if lemma in _IMPACT_VERBS and any(w in _INCIDENT for w in t[:i]):
                    return None  # "... experienced an outage, impacting its players"
                if lemma in self.lex.neutral and not self._adverse_near(i, before):
                    return None
                if self._has_object(i) or lemma in ("cause", "trigger"):
                    return f"consequence {t[i]!r}"
                return None
            if prev in _BE and prev not in ("being", "get", "getting"):
                form = "ed"  # progressive: read as a finite verb below
            else:
                return None
        if form in ("ed", "s") and prev in _BE and prev not in ("being",):
            # passive: causal only with an agent ("was blocked by the migration")
            if lemma != "cause" and prev in ("is", "are", "be", "get", "gets", "am"):
                return None  # present passive: a habit or a design ("is triggered hourly")
            for k in range(i + 1, min(len(t), i + 6)):
                if t[k] == "by":
                    agent = t[k + 1 : k + 8]
                    nxt = agent[0] if agent else ""
                    nxt2 = agent[1] if len(agent) > 1 else ""
                    if nxt in _BY_NOT_AGENT or (nxt == "the" and nxt2 == "time"):
                        return None
                    if (
                        nxt.isdigit()
                        or nxt in _NUMBER_WORDS
                        or nxt
                        in (
                            "up",
                            "about",
                            "around",
                            "roughly",
                            "approximately",
                            "nearly",
                            "over",
                            "more",
                            "less",
                            "almost",
                            "some",
                        )
                    ):
                        return None  # "delayed by up to 40 minutes", "resolved by 15:05"
                    if nxt.endswith("ing"):
                        return f"means {t[i]!r} by {nxt!r}"
                    agent_head = _head(self._clause(agent))
                    if lemma in _IMPACT_VERBS and agent_head and agent_head[-1] in _INCIDENT:
                        return None  # impact: "customers were affected by the outage"
                    if self._human(list(reversed(self._clause(agent)))):
                        return None  # "triggered manually by the on-call engineer"
                    if any(w in _NOBODY for w in self._subject(i)):
                        return None
                    faults = self.lex.words.get("adverse", frozenset()) | _FAULT_NOUNS
                    if (
                        lemma in self.lex.neutral
                        and not self._adverse_near(i, self._subject(i))
                        and not any(x in faults for x in self._clause(agent))
                    ):
                        return None
                    return f"passive {t[i]!r} by"
                if t[k] in ("when", "whenever", "once") and lemma in ("trigger", "cause"):
                    return f"passive {t[i]!r} {t[k]}"
                if t[k] in (",", ";", "."):
                    break
            return None
        if form == "base":
            plural_noun = (
                len(prev) > 3
                and prev.endswith("s")
                and not prev.endswith("ss")
                and prev not in _AUX
                and prev not in _CLAUSE
                and prev not in _DETERMINERS
                and prev not in _SEEING
            )
            if prev not in _MODAL and not plural_noun:
                return None
        subject = self._subject(i)
        if not subject:
            return None
        if self._subordinate(i):
            return None  # "until the vendor fixes the bug, ...": not a claim
        if self._human(subject):
            # a person acting; causal only as a means ("we mitigated by shedding")
            for k in range(i + 1, min(len(t), i + 10)):
                if t[k] in ("by", "with", "through", "using", "via") and k + 1 < len(t):
                    if t[k] == "by" and t[k + 1].endswith("ing"):
                        return f"means {t[i]!r} by {t[k + 1]!r}"
                    if t[k] in ("with", "through", "using", "via") and lemma in (
                        "resolve",
                        "restore",
                        "fix",
                        "mitigate",
                        "clear",
                        "end",
                    ):
                        return f"means {t[i]!r} {t[k]}"
                if t[k] in (",", ";", "."):
                    break
            return None
        if subject == [MASK] or all(w == MASK for w in subject):
            return None
        head = _head(list(reversed(subject)))
        if lemma in _IMPACT_VERBS and head and head[-1] in _INCIDENT:
            return None  # impact, not cause: "the incident affected customers on all plans"
        if self._periphrastic(i, lemma):
            return f"causative {t[i]!r} + verb"
        if not self._has_object(i) and lemma not in ("cause",):
            if nxt == "under" and any(
                x in ("load", "pressure", "flood", "storm", "weight", "traffic", "strain")
                for x in t[i + 2 : i + 6]
            ):
                return f"causative {t[i]!r} under load"
            return None
        if lemma == "explain" and (
            any(w in _DOC_SUBJECTS for w in subject) or nxt in _WH or nxt == MASK
        ):
            return None  # a document explains, a vendor explains what; neither causes
        if nxt in _NOBODY or any(w in _NOBODY for w in subject):
            return None  # "assign no blame", "nothing broke the build"
        if lemma in self.lex.neutral and not self._adverse_near(i, subject):
            return None
        return f"causative {t[i]!r}"

    def _clause_before(self, i: int) -> list[str]:
        """The clause a consequence participle hangs on, nearest token first."""
        t = self.t
        out: list[str] = []
        j = i - 1
        while j >= 0 and t[j] in (",", "—", "–", "("):
            j -= 1
        while j >= 0 and t[j] not in (",", ";", ":", "."):
            out.append(t[j])
            j -= 1
        return out

    def _periphrastic(self, i: int, lemma: str) -> bool:
        """``made the service miss``, ``let one tenant starve the others``, ``led the
        engineer to restart``, ``allowed attackers to access``, ``left the cluster
        undersized``: a cause making something happen."""
        t = self.t
        window = self._clause(t[i + 1 : i + 7])
        if not window or window[0] in _NOT_OBJECT:
            return False
        if lemma in ("make", "let", "have"):
            return any(
                k > 0 and (w in self.lex.verbs or w in _BARE_VERBS) for k, w in enumerate(window)
            )
        if lemma in ("allow", "enable", "force", "cause", "lead", "prompt"):
            return any(
                w == "to"
                and k > 0
                and k + 1 < len(window)
                and window[k + 1] not in _DETERMINERS
                and not window[k + 1].isdigit()
                for k, w in enumerate(window)
            )
        if lemma == "leave":
            adverse = self.lex.words.get("adverse", frozenset())
            return any(
                k > 0 and (w.endswith(("ing", "ed")) or w in adverse) and w not in _PREPOSITIONS
                for k, w in enumerate(window)
            )
        return False

    def _clause(self, tokens: list[str]) -> list[str]:
        out = []
        for w in tokens:
            if w in (",", ";", ".", ":"):
                break
            out.append(w)
        return out

    def _subordinate(self, i: int) -> bool:
        t = self.t
        j = i - 1
        while j >= 0 and t[j] not in (",", ";", ":"):
            if t[j] in ("until", "unless", "if", "once", "whenever"):
                return True
            j -= 1
        return False

    def _adverse_near(self, i: int, subject: list[str]) -> bool:
        """A neutral verb (produce, send, add) asserts a cause only with a fault in its
        subject or object, or (add, push) a quantity as its object."""
        adverse = self.lex.words.get("adverse", frozenset())
        t = self.t

        def bad(words: list[str], k: int) -> bool:
            w = words[k]
            if w not in adverse and w not in _FAULT_NOUNS:
                return False
            nxt = words[k + 1] if k + 1 < len(words) else ""
            return not (w == "load" and nxt.startswith(("balanc", "test")))

        head = _head(list(reversed(subject)))
        for k, w in enumerate(head):
            if w in adverse and bad(head, k):
                return True
        if any(x in adverse and x.endswith("ly") for x in t[max(0, i - 2) : i]):
            return True  # "accidentally deleted", "inadvertently removed"
        if head and head[-1] in _FAULT_NOUNS:
            return True
        lemma = self.lex.verbs[t[i]][0]
        if lemma not in _OBJECT_FAULT_OK:
            return False  # blocking a bad thing is the system working
        for j in range(i + 1, min(len(t), i + 12)):
            if t[j] in (",", ";", ".", "which", "that", "and", "but"):
                break
            if bad(t, j):
                return True
            if (
                lemma in ("increase", "raise", "add")
                and t[j] == "by"
                and j + 1 < len(t)
                and (t[j + 1].isdigit() or t[j + 1] in _NUMBER_WORDS)
            ):
                return True
            if (
                j == i + 1
                and lemma in ("add", "push", "send")
                and (t[j].isdigit() or t[j] in _NUMBER_WORDS)
            ) and (lemma == "send" or any(u in _QUANTITY_UNITS for u in t[j + 1 : j + 4])):
                return True
        return False

    # ---- hedge -----------------------------------------------------------------------
    def _hedge(self) -> str | None:
        t = self.t
        n = len(t)
        lex = self.lex
        beliefs = lex.words.get("belief", frozenset())
        should = lex.words.get("should", frozenset())
        triggers = _hedge_tokens()
        for i in [k for k, x in enumerate(t) if x in triggers]:
            w = t[i]
            if w in lex.phrases["hedge"]:
                p = self._phrase_at("hedge", i)
                if p is not None:
                    why = self._hedge_phrase(i, p)
                    if why:
                        return why
            if w in beliefs:
                why = self._belief(i)
                if why:
                    return why
            if w == "may" and i + 1 < n:
                why = self._may(i)
                if why:
                    return why
            if w == "should" and i + 1 < n and not self._actor(self._subject(i)):
                nxt = t[i + 1]
                nxt2 = t[i + 2] if i + 2 < n else ""
                if nxt in should or (nxt == "not" and nxt2 in should):
                    return f"epistemic 'should {nxt}'"
                if nxt == "be" and f"be {nxt2}" in should:
                    return f"epistemic 'should be {nxt2}'"
        return None

    def _hedge_phrase(self, i: int, p: tuple[str, ...]) -> str | None:
        t = self.t
        n = len(t)
        w = p[0]
        nxt = t[i + len(p)] if i + len(p) < n else ""
        prev = t[i - 1] if i > 0 else ""
        subject = self._subject(i)
        if w in ("suggest", "suggests", "suggested") and (self._human(subject) or nxt in _BE):
            return None  # "we suggest customers ...", "the fix suggested was ..."
        if w == "might" and (prev == "you" or nxt in ("seem", "need")):
            return None
        if p == ("may", "be") and (prev == "you" or self._human(subject)):
            return None
        if p == ("must", "have") and nxt not in ("been",) and not nxt.endswith("ed"):
            return None
        perfect = nxt == "been" or nxt.endswith(("ed", "en", "ne", "wn", "ht"))
        if p in (("could", "have"), ("may", "have"), ("would", "have")) and not perfect:
            return None
        if w in ("uncertain", "unclear", "possible", "probable") and prev in _ARTICLES:
            return None  # attributive: "the uncertain state of the replica"
        if w == "possible":
            prev2 = t[i - 2] if i > 1 else ""
            stated = prev in ("is", "was", "it's", "seems") and prev2 in ("it", "is", "")
            if not (
                stated
                or nxt == "that"
                or nxt in _FAULT_NOUNS
                or prev == "it's"
                or nxt in ("trigger", "explanation", "reason", "source", "factor", "culprit")
            ):
                return None  # "as soon as possible", "where possible"
        if w in ("possibility", "hypothesis"):
            if prev not in ("our", "the", "one", "another", "a", "leading", "working", "current"):
                return None
            if nxt not in ("is", "was", ":", "that", "involves", "remains"):
                return None
        if w == "evidence" and prev not in (
            "some",
            "limited",
            "circumstantial",
            "anecdotal",
            "early",
            "initial",
            "weak",
        ):
            return None
        if p == ("could", "be"):
            if any(x in _NOBODY for x in self._subject(i)):
                return None
            if nxt.endswith(("ed", "en", "ne")) and nxt not in (
                "caused",
                "related",
                "triggered",
                "affected",
                "linked",
                "explained",
                "attributed",
            ):
                return None  # ability: "could be restored"
        if w == "our" and nxt not in ("is", "was", "that", ":", "remains"):
            return None  # "if our understanding changes"
        pointer = w in ("points", "point", "pointed", "hint", "hints", "hinted", "implies", "imply")
        if pointer and not any(x in _EVIDENCE for x in _head(list(reversed(subject)))):
            return None  # "the link points to the wiki": a pointer, not an inference
        if (
            p == ("a", "chance")
            and prev not in ("is", "there's", "was", "some", "small", "slight")
            and nxt != "that"
        ):
            return None  # "had a chance to review"
        if p == ("consistent", "with"):
            faults = self.lex.words.get("adverse", frozenset()) | _FAULT_NOUNS
            if not any(x in faults for x in t[i + 2 : i + 9]):
                return None
        if (
            w == "unclear"
            and nxt not in ("whether", "if", "how", "why", "what", MASK)
            and (prev not in ("remains", "is", "was", "still", "it"))
        ):
            return None
        return f"hedge {' '.join(p)!r}"

    def _may(self, i: int) -> str | None:
        """Epistemic "may" ("the migration may take longer"), not permission ("customers
        may request a copy") or prohibition ("requests may not exceed 100/s")."""
        t = self.t
        j = i + 1
        negated = False
        while j < len(t) and t[j] in ("not", "still", "also", "well", "even", "yet"):
            negated = negated or t[j] == "not"
            j += 1
        verb = t[j] if j < len(t) else ""
        if not verb.isalpha() or verb == MASK:
            return None
        subject = self._subject(i)
        if verb in ("have", "be", "become", "recur", "turn", "take", "need", "require"):
            if verb == "be" and self._actor(subject):
                return None
            return f"epistemic 'may {verb}'"
        if verb in _DEONTIC_VERBS or self._actor(subject) or "you" in subject:
            return None
        if negated and not subject:
            return None
        return f"epistemic 'may {verb}'"

    def _belief(self, i: int) -> str | None:
        t = self.t
        w = t[i]
        prev = t[i - 1] if i > 0 else ""
        nxt = t[i + 1] if i + 1 < len(t) else ""
        if w in ("expected", "expect") and prev in ("as", "than", "the", "an", "-"):
            return None
        if w in ("think", "thought", "thinks", "thinking") and nxt in ("of", "about"):
            return None
        if w == "expected" and prev not in _BE:
            subject = self._subject(i)
            if not any(x in ("we", "i", "our") for x in subject):
                return None  # a past expectation reported, not a guess
        if w in ("appear", "appears", "appeared") and (
            nxt in ("on", "in", "at", "before", "after", "under", "below", "above", "during")
            or nxt in ("when", "if", "for", "twice", "once", "here", "there", "next", ".", "")
            or (prev in _MODAL and prev != "would")
        ):
            return None  # shows up somewhere: "the banner will appear on the page"
        if w in ("appear", "appears", "appeared"):
            return f"belief {w!r}"
        if w in ("look", "looks", "looked") and nxt not in ("like", "as", "to"):
            return None
        if w in ("look", "looks", "looked") and nxt == "like" and prev not in ("it", "this"):
            after = t[i + 2] if i + 2 < len(t) else ""
            if after not in ("it", "they", "there", "we", "someone", "something", "this"):
                return None
        if w in ("seem", "seems", "seemed"):
            return f"belief {w!r}"
        if (prev in _BE and w.endswith("ed")) or (w == "thought" and prev in _BE):
            if nxt == "to":
                return f"belief '{prev} {w} to'"
            return None
        subject = self._subject(i)
        first_person = {"we", "i", "we'd", "i'd", "we're", "i'm", "our"}
        if (
            any(s in first_person for s in subject)
            or self._human(subject)
            or (
                subject
                and subject[-1] in ("it", "this")
                and w in ("appears", "appeared", "seems", "looks", "looked")
            )
        ):
            return f"belief {w!r}"
        if w in ("appears", "appeared", "appear") and nxt == "to":
            return f"belief '{w} to'"
        return None

    def run(self) -> Reading:
        if not self.t:
            return Reading()
        if self._about_document():
            return Reading(skipped="a statement about the document")
        return Reading(causal=self._causal(), hedge=self._hedge())
