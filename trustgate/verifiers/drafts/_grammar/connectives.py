"""Causal connectives: a word or phrase joining a cause to what it caused.

Most connectives assert a cause wherever they stand in a statement (``because``,
``due to``, ``led to``, ``which meant``, ``→``). A few are causal only in one frame,
and the frame is what is read here: ``since`` + a finite clause (not a time),
sentence-initial or post-comma ``as`` + a clause (not a comparison or a manner),
``, for`` + a clause, ``, so`` + a clause (not ``so that``, ``so far``), ``so long
that`` and ``such a backlog that`` (a result clause; ``so that`` is purpose),
``With X down, ...``, ``Without X, ...``. A negated connective (``not due to an
attack``) is still a statement about the cause. The phrases that attribute blame (``was
responsible for``, ``came from``, ``comes down to``) are judged by
:mod:`.attribution`.
"""

from __future__ import annotations

from trustgate.verifiers.drafts._grammar import attribution
from trustgate.verifiers.drafts._grammar import words as W
from trustgate.verifiers.drafts._grammar.clause import Clause
from trustgate.verifiers.drafts._text import MASK

__all__ = ["connective"]


def _progressive(c: Clause, start: int, span: int) -> bool:
    """``as we were rolling back``: an auxiliary then an -ing verb reads as time."""
    t = c.t
    for j in range(start, min(len(t) - 1, start + span)):
        if t[j] in (",", ";"):
            return False
        if t[j] in W.BE and t[j + 1].endswith("ing"):
            return True
    return False


def _finite(c: Clause, i: int) -> bool:
    """A bare verb at ``i`` after a modal or a form of do, a negation between
    ("can result in", "did not stem from")."""
    j, prev = c.prev(i)
    if (prev in W.VERB_NEGATION or prev.endswith("n't")) and j > 0:
        if prev in W.DO_SUPPORT:
            return True
        j, prev = c.prev(j)
    return prev in W.MODAL or prev in W.DO_SUPPORT


def _result_clause(c: Clause, i: int) -> bool:
    """``so long that jobs timed out``, ``such a backlog that ...``: a degree word, one
    to three words, then ``that`` and a clause (not ``so that``, purpose; not ``such
    that``, a condition)."""
    t = c.t
    n = len(t)
    if i + 1 < n and t[i + 1] == "that":
        return False
    for k in range(i + 2, min(n - 1, i + 5)):
        w = t[k - 1]
        if not w.isalpha() or w in W.CLAUSE:
            return False
        if t[k] == "that":
            return t[k + 1].isalpha()
    return False


def connective(c: Clause, i: int, p: tuple[str, ...]) -> str | None:
    """Whether the connective ``p`` at ``i`` asserts a cause, and why."""
    t = c.t
    n = len(t)
    w = p[0]
    end = c.phrase_end(i, p)
    nxt = t[end] if end < n else ""
    prev = t[i - 1] if i > 0 else ""
    negated = prev in W.NEG or prev.endswith("n't")
    if negated and (
        (len(p) == 1 and w in W.CLAUSE_CONNECTIVE_SO | W.WITHOUT)
        or not (prev in W.VERB_NEGATION or prev.endswith("n't"))
    ):
        # "not since Monday", "not so long ago"; "no blame for", "without due to"
        return None
    if p in W.FINITE_ONLY and not _finite(c, i):
        return None  # "the result from the benchmark": a noun, not "did not result from"
    if p == ("due", "to") and (nxt == "be" or nxt in c.lex.words.get("schedule", frozenset())):
        return None  # a schedule: "due to expire on 1 July"
    if p == ("thanks", "to") and (
        nxt in W.GRATITUDE or nxt in c.lex.words.get("human", frozenset())
    ):
        return None  # gratitude
    if p == ("responsible", "for") and not attribution.responsible(c, i):
        return None
    if p in W.RESTS and not attribution.rests(c, i):
        return None  # "the decision lies with the platform lead"
    if len(p) == 1 and nxt in W.COPULA_SUBJECT and w != "since":
        # the word itself is the subject: "hence is a word ..." (as and for before a
        # copula are no connective either: their branches below say so)
        return None
    if len(p) == 1 and prev in W.DETERMINERS and w not in W.CLAUSE_CONNECTIVE_SO:
        return None  # a noun: "the bc calculator"
    if w == "thus" and nxt in W.THUS_MANNER:
        return None  # manner: "configure it thus:"
    if p == ("given", "that") and i > 0 and prev not in W.GIVEN_THAT_AFTER:
        return None  # "the talk given that day"
    if w == "meaning" and prev in W.DETERMINERS:
        return None
    if p == ("set", "off") and (nxt in W.SET_OFF_NOT or nxt == "."):
        return None
    if w in W.LEAD_FORMS and prev in W.PLACES:
        return None
    if w == "since":
        if nxt.isdigit() or nxt in W.TIME_WORDS or nxt in W.SINCE_NOT or nxt == MASK:
            return None
        if prev in W.AUX:
            return None  # "has since been updated"
        if c.clause_has(i + 1, W.AUX, 10) or any(
            x.endswith("ed") and len(x) > 4 for x in c.clause(t[i + 1 : i + 10])
        ):
            return "connective 'since'"
        return None
    if w == "as" and len(p) == 1:
        nxt2 = t[i + 2] if i + 2 < n else ""
        if nxt == "there" and nxt2 in W.BE:
            return "connective 'as'"  # "difficult to foresee as there was no alert"
        if nxt in W.AS_NOT_CAUSAL or (nxt not in W.SUBJECT_START and nxt != MASK):
            return None
        opens = i == 0 or prev in (",", ";")
        if opens and c.clause_has(i + 1, W.AUX, 10) and not _progressive(c, i + 1, 10):
            if c.clause_has(i + 1, W.REPORT_VERB, 10):
                return None  # a reference: "as the annual report has noted"
            return "connective 'as'"
        return None
    if w == "for" and len(p) == 1:
        if prev == "," and nxt in W.SUBJECT_START and c.clause_has(i + 1, W.AUX, 8):
            return "connective 'for'"
        return None
    if w in W.DEGREE and len(p) == 1:
        if nxt == "-":
            return None  # "so-called", "so-so"
        if _result_clause(c, i):
            return f"connective '{w} ... that'"  # "grew so long that jobs timed out"
        if w != "so":
            return None
    if w == "so" and len(p) == 1:
        if prev in W.SO_AFTER and nxt not in W.SO_NOT and nxt not in ("", "."):
            return "connective 'so'"
        if i == 0 and (nxt == "," or (nxt in W.SUBJECT_START and nxt != "that")):
            return "connective 'so'"
        return None
    if w == "with" and len(p) == 1:
        if i != 0:
            return None
        states = c.lex.words.get("state", frozenset())
        j = 1
        while j < n and j < 8 and t[j] not in (",", ";"):
            if t[j] in states and j + 1 < n and t[j + 1] == ",":
                return "connective 'with ... " + t[j] + "'"
            j += 1
        return None
    if w in W.WITHOUT and len(p) == 1:
        if i == 0 and "," in t[1:12]:
            return "connective 'without'"
        return None
    if w == "leads" and prev in W.LEADS_NOUN:
        return None
    if p == ("meant",) and (
        nxt in W.MEANT_NOT_AFTER
        or nxt in (",", ".", "")
        or prev in W.MEANT_NOT_BEFORE
        or prev == MASK
        or c.human(c.subject(i))
    ):
        return None
    if p in W.SOURCE_CONNECTIVES and not attribution.source(c, i, p):
        return None
    if p == ("given", "the") and (i != 0 or "," not in t[2:12]):
        return None
    if p in W.BEHIND and nxt not in W.ARTICLES:
        return None
    if p in W.HOW_CONNECTIVE and (nxt in W.PERSONAL or c.human([nxt])):
        return None  # "which is how we found it": how someone did something
    if negated:
        # "not due to an attack", "not because of the deploy": a statement about the
        # cause, which needs its citation as much as the cause itself
        return f"negated cause {' '.join(p)!r}"
    return f"connective {' '.join(p)!r}"
