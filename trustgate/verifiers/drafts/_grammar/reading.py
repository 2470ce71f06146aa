"""One sentence read: what is set aside, then each construction at each word that can
start it, the first that fires naming the reading.

This is where the constructions meet; each lives in its own module (connectives,
attribution, nouns, verbs, hedges) and is tried only at the tokens that can start it,
so a sentence costs one pass over its tokens plus bounded look-around per candidate.
"""

from __future__ import annotations

from dataclasses import dataclass

from trustgate.verifiers.drafts._grammar import words as W
from trustgate.verifiers.drafts._grammar.attribution import gapped
from trustgate.verifiers.drafts._grammar.clause import Clause
from trustgate.verifiers.drafts._grammar.connectives import connective
from trustgate.verifiers.drafts._grammar.data import GrammarLexicon, lexicon
from trustgate.verifiers.drafts._grammar.hedges import belief, hedge_phrase, may, should
from trustgate.verifiers.drafts._grammar.nouns import (
    cause_noun,
    effect,
    label,
    outcome,
    predicate_noun,
)
from trustgate.verifiers.drafts._grammar.scan import causal_tokens, hedge_tokens, trigger_tokens
from trustgate.verifiers.drafts._grammar.setaside import (
    QUESTION_END,
    about_document,
    apology,
    mask_embedded_questions,
    mask_names,
)
from trustgate.verifiers.drafts._grammar.spelling import correct
from trustgate.verifiers.drafts._grammar.trouble import past_form, starts_trouble, trouble
from trustgate.verifiers.drafts._grammar.verbs import verb
from trustgate.verifiers.drafts._text import Sentence, read

__all__ = ["Analysis", "Reading", "analyse", "analyse_cached", "side"]


@dataclass(frozen=True, slots=True)
class Reading:
    """What a sentence asserts, with the features that fired."""

    causal: str | None = None
    """Why the sentence reads as a causal claim (the feature and its words)."""
    hedge: str | None = None
    """Why the sentence reads as a guess."""
    skipped: str | None = None
    """Why the sentence is not an assertion at all (question, about the document)."""


class Analysis(Clause):
    """A sentence with what is not a claim masked, read for either side."""

    __slots__ = ()

    def __init__(self, s: Sentence, lex: GrammarLexicon) -> None:
        super().__init__(s, lex)
        correct(self.t)
        mask_names(self, trigger_tokens())
        mask_embedded_questions(self)

    def about_document(self) -> bool:
        return about_document(self)

    def causal(self) -> str | None:
        """The first causal reading of the sentence, or ``None``."""
        t = self.t
        n = len(t)
        lex = self.lex
        if apology(self):
            return None
        found = label(self)
        if found:
            return found
        connectives = lex.phrases["connective"]
        outcomes = lex.words.get("outcome", frozenset())
        predicates = lex.words.get("predicate", frozenset())
        for i in [k for k, x in enumerate(t) if x in causal_tokens()]:
            w = t[i]
            if w in W.ARROWS and 0 < i < n - 1:
                return f"arrow {w!r}"
            if w in connectives:
                p = self.phrase_at("connective", i)
                if p is not None:
                    why = connective(self, i, p)
                    if why:
                        return why
            if w in W.CAUSE_NOUN:  # negated too: "X was not the root cause"
                why = cause_noun(self, i)
                if why:
                    return why
            if w in W.EFFECT_NOUN:
                why = effect(self, i)
                if why:
                    return why
            if w in predicates:
                why = predicate_noun(self, i)
                if why:
                    return why
            if w in W.GAPPED_BY_VERB:
                why = gapped(self, i)
                if why:
                    return why
            if w in W.ROOT_FAULT_NOUN and i > 0 and t[i - 1] in W.ROOT_MODIFIER:
                why = outcome(self, i)
                if why:
                    return why
            if w in outcomes:
                why = outcome(self, i)
                if why:
                    return why
            if w in lex.verbs:
                why = verb(self, i)
                if why:
                    return why
        if not starts_trouble(lex).isdisjoint(t):
            for i in range(1, n):
                if past_form(t[i]) or t[i] in lex.verbs:
                    why = trouble(self, i)
                    if why:
                        return why
        return None

    def hedge(self) -> str | None:
        """The first hedge reading of the sentence, or ``None``."""
        t = self.t
        n = len(t)
        lex = self.lex
        beliefs = lex.words.get("belief", frozenset())
        hedges = lex.phrases["hedge"]
        for i in [k for k, x in enumerate(t) if x in hedge_tokens()]:
            w = t[i]
            if w in hedges:
                p = self.phrase_at("hedge", i)
                if p is not None:
                    why = hedge_phrase(self, i, p)
                    if why:
                        return why
            if w in beliefs:
                why = belief(self, i)
                if why:
                    return why
            if w == "may" and i + 1 < n:
                why = may(self, i)
                if why:
                    return why
            if w == "should":
                why = should(self, i)
                if why:
                    return why
        return None

    def run(self) -> Reading:
        if not self.t:
            return Reading()
        if self.about_document():
            return Reading(skipped="a statement about the document")
        return Reading(causal=self.causal(), hedge=self.hedge())


def analyse(text: str) -> Reading:
    """Read one sentence: causal claim, hedge, both, or neither."""
    if QUESTION_END.search(text):
        return Reading(skipped="a question asserts nothing")
    return Analysis(read(text), lexicon()).run()


_last: list[tuple[str, Reading]] = []


def analyse_cached(text: str) -> Reading:
    """:func:`analyse`, remembering the last sentence (both rules read each one)."""
    last = _last[0] if _last else None  # one read: another thread may replace it
    if last is not None and last[0] == text:
        return last[1]
    reading = analyse(text)
    _last[:] = [(text, reading)]
    return reading


_last_side: list[tuple[str, Analysis | None]] = []


def side(text: str, which: str) -> str | None:
    """One side of :func:`analyse` (``"causal"`` or ``"hedge"``), read only as far as
    that side needs: a cited sentence is only ever asked about hedges. The last
    sentence is remembered, so the two rules share one reading of it."""
    last = _last_side[0] if _last_side else None  # one read: threads share the cache
    if last is not None and last[0] == text:
        state = last[1]
    else:
        state = None if QUESTION_END.search(text) else Analysis(read(text), lexicon())
        if state is not None and (not state.t or state.about_document()):
            state = None
        _last_side[:] = [(text, state)]
    if state is None:
        return None
    return state.causal() if which == "causal" else state.hedge()
