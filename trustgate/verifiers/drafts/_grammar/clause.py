"""One sentence's tokens and the look-around every construction is written with.

A construction is a word in a position: a verb with a subject before it and an object
after it, a connective with a clause after it. This module finds those positions
cheaply and the same way for every construction: the clause before a token (its
subject, roughly), the noun phrase that subject starts with, whether that head is a
person (people act, things cause), whether a verb has an object, whether a negation
reaches a word. Each helper looks a bounded number of tokens away, so reading a
sentence stays linear in its length.
"""

from __future__ import annotations

from collections.abc import Iterable

from trustgate.verifiers.drafts._grammar import words as W
from trustgate.verifiers.drafts._grammar.data import GrammarLexicon
from trustgate.verifiers.drafts._text import Sentence

__all__ = ["Clause", "head"]

# Punctuation a clause ends at (not words: the reader's tokens for marks).
STOPS = frozenset({",", ";", ":", "."})
STOPS_SOFT = frozenset({",", ";", ":"})
CLAUSE_END = frozenset({",", ";", ".", ":", "—"})
NEG_STOP = frozenset({",", ";", ":", "—"})
PARENTHETIC = frozenset({",", "—", "–", "("})


def head(ordered: list[str]) -> list[str]:
    """The noun phrase a subject starts with, up to its first preposition ("an operator
    error during maintenance": an error; a hyphen keeps a compound together: "on-call
    engineer", "off-by-one error")."""
    out: list[str] = []
    n = len(ordered)
    for k, w in enumerate(ordered):
        compound = (k > 0 and ordered[k - 1] == "-") or (k + 1 < n and ordered[k + 1] == "-")
        if ((w in W.PREPOSITIONS or w in W.NP_END) and not compound) or w in W.RELATIVE:
            if out:
                break
            continue
        out.append(w)
    return out


class Clause:
    """A sentence as the constructions read it: lower-case tokens (which masking may
    replace), the same tokens with their case, and the vocabulary."""

    __slots__ = ("cased", "lex", "t")

    def __init__(self, s: Sentence, lex: GrammarLexicon) -> None:
        self.lex = lex
        self.cased = s.cased
        self.t = list(s.tokens)

    def phrase_at(self, kind: str, i: int) -> tuple[str, ...] | None:
        """The ``kind`` phrase of the vocabulary starting at ``i`` (longest first; an
        adverb may follow a connective's or a hedge's first word: "led directly to",
        "could also have been"; a hedge on the extent a connective's: "stems in large
        part from")."""
        t = self.t
        candidates = self.lex.phrases[kind].get(t[i], ())
        for p in candidates:
            if tuple(t[i : i + len(p)]) == p:
                return p
        # longest first: only a phrase of two words or more can hold a squeezed word
        if kind == "label" or not candidates or len(candidates[0]) < 2 or i + 2 >= len(t):
            return None
        nxt = t[i + 1]
        skip = 1 if nxt.endswith("ly") or nxt in W.ADVERB_ALSO else 0
        if not skip and kind == "connective" and nxt in W.SQUEEZE_FIRST:
            for sq in W.SQUEEZE:  # "stems in large part from"
                if tuple(t[i + 1 : i + 1 + len(sq)]) == sq:
                    skip = len(sq)
                    break
        if skip:
            squeezed = (t[i], *t[i + 1 + skip : i + 6 + skip])
            for p in candidates:
                if len(p) > 1 and squeezed[: len(p)] == p:
                    return p
        return None

    def phrase_end(self, i: int, p: tuple[str, ...]) -> int:
        """Where the phrase ``p`` found at ``i`` ends, past the words squeezed into it
        (see :meth:`phrase_at`)."""
        t = self.t
        n = len(p)
        if tuple(t[i : i + n]) == p:
            return i + n
        for skip in range(1, 6):
            if (t[i], *t[i + 1 + skip : i + n + skip]) == p:
                return i + n + skip
        return i + n

    def prev(self, i: int) -> tuple[int, str]:
        """The previous token that is not an adverb."""
        j = i - 1
        t = self.t
        while j >= 0 and (t[j] in W.ADVERB_ALSO or (t[j].endswith("ly") and len(t[j]) > 4)):
            j -= 1
        return j, (t[j] if j >= 0 else "")

    def negated(self, i: int) -> bool:
        """A negation in the three tokens before ``i``, within its clause."""
        t = self.t
        for j in range(i - 1, max(-1, i - 4), -1):
            if t[j] in NEG_STOP:
                return False  # a negation in the clause before does not reach here
            if t[j] in W.NEG or t[j].endswith("n't"):
                return True
        return False

    def subject(self, i: int, limit: int = 0) -> list[str]:
        """Tokens of the clause before position ``i`` (its subject, roughly), nearest
        first; a relative pronoun brings its antecedent ("a bug that deleted ...").
        With ``limit``, at most that many tokens back (a reading tried at every verb
        of a sentence stays linear)."""
        t = self.t
        out: list[str] = []
        j = i - 1
        stop = i - limit if limit else -1
        while j >= 0 and j > stop:
            w = t[j]
            if w in W.CLAUSE:
                if w in W.RELATIVE:
                    out.append(w)
                    k = j - 1  # the antecedent: "a bug that deleted ..."
                    while k >= 0 and j - k <= 3 and t[k] not in W.CLAUSE and t[k] not in W.BE:
                        out.append(t[k])
                        k -= 1
                    break
                if not any(x.isalpha() and x not in W.AUX for x in out) and w in W.COORDINATOR:
                    j -= 1
                    continue  # coordinated verbs share the earlier subject
                if w in W.NP_JOIN and out and self._noun_phrase_before(j, stop):
                    out.append(w)  # "a race between the job and the snapshot deleted"
                    j -= 1
                    continue
                break
            out.append(w)
            j -= 1
        return out

    def _noun_phrase_before(self, j: int, stop: int) -> bool:
        """Whether what stands before the word at ``j``, back to the clause's start,
        is a noun phrase with no verb in it: then ``and`` or ``after`` at ``j`` joins
        two parts of one subject ("connection storms after the restart pushed ...")
        rather than two clauses ("we restarted the cache and the queue drained")."""
        t = self.t
        k = j - 1
        if k < 0 or not t[k].isalpha() or t[k] in W.AUX:
            return False
        while k >= 0 and k > stop and t[k] not in W.CLAUSE:
            x = t[k]
            if x in W.AUX or x in W.PERSONAL or self.lex.verbs.get(x, ("", "base"))[1] != "base":
                return False
            participle = len(x) > 4 and x.endswith("ed") and not x.endswith("eed")
            if participle and (
                k == 0 or (t[k - 1] not in W.ARTICLES and t[k - 1] not in W.DETERMINERS)
            ):
                return False  # a verb, not an adjective after a determiner
            k -= 1
        return k < 0 or t[k] in (",", ";", ":")

    def predicate_subject(self, i: int) -> list[str]:
        """The subject of a predicate starting at ``i`` (``was responsible for``,
        ``was at fault``): the clause before the copula and what stands with it."""
        t = self.t
        j = i
        while j > 0 and (t[j - 1] in W.AUX or t[j - 1] in W.NEG or t[j - 1] in W.ADVERB_ALSO):
            j -= 1
        return self.subject(j)

    def human(self, subject: list[str]) -> bool:
        """Whether the subject's head is a person ("the on-call engineer", "we"), not a
        thing that merely mentions one ("heavy load from a single customer")."""
        humans = self.lex.words.get("human", frozenset())
        if "who" in subject:
            return True
        found = head(list(reversed(subject)))
        if not found:
            return False
        if any(w in W.PERSONAL for w in found):
            return True
        if len(found) >= 3 and found[-3:] == ["on", "-", "call"]:
            return True
        last = found[-1]
        return last in humans or last in W.PEOPLE

    def actor(self, subject: list[str]) -> bool:
        """A subject an obligation can bind (we, engineers, the team), unlike ``you`` or
        ``customers`` in "you should now be able to log in"."""
        humans = self.lex.words.get("human", frozenset())
        return any(w in humans for w in subject)

    def has_object(self, i: int) -> bool:
        """Whether the verb at ``i`` is followed by an object (particles and adverbs
        skipped), not a preposition or the end of the clause."""
        t = self.t
        j = i + 1
        while j < len(t) and (
            t[j] in W.PARTICLE
            or t[j] in W.ADVERB_ALSO
            or (t[j].endswith("ly") and len(t[j]) > 4 and t[j] not in W.NOT_ADVERB_LY)
        ):
            j += 1
        return j < len(t) and t[j] not in W.NOT_OBJECT

    def clause_has(self, start: int, words: Iterable[str] | frozenset[str], span: int) -> bool:
        """Whether one of ``words`` stands within ``span`` tokens of ``start``, before
        the clause ends."""
        t = self.t
        ws = words if isinstance(words, frozenset) else frozenset(words)
        for j in range(start, min(len(t), start + span)):
            if t[j] in CLAUSE_END:
                return False
            if t[j] in ws:
                return True
        return False

    @staticmethod
    def clause(tokens: list[str]) -> list[str]:
        """``tokens`` up to the end of their clause."""
        out = []
        for w in tokens:
            if w in STOPS:
                break
            out.append(w)
        return out

    def clause_before(self, i: int) -> list[str]:
        """The clause a consequence participle hangs on, nearest token first."""
        t = self.t
        out: list[str] = []
        j = i - 1
        while j >= 0 and t[j] in PARENTHETIC:
            j -= 1
        while j >= 0 and t[j] not in STOPS:
            out.append(t[j])
            j -= 1
        return out

    def subordinate(self, i: int, limit: int = 0) -> bool:
        """Whether ``i`` is in a clause opened by a condition or a time ("until the
        vendor fixes the bug, ..."): not a claim. ``limit`` bounds the look back."""
        t = self.t
        j = i - 1
        stop = i - limit if limit else -1
        while j >= 0 and j > stop and t[j] not in STOPS_SOFT:
            if t[j] in W.SUBORDINATOR:
                return True
            j -= 1
        return False
