"""Cause and result nouns, and the field labels that introduce a cause.

A noun that names a cause or an effect (``the root cause``, ``the result``, ``the
trigger``, ``the culprit``) asserts one only when a copula states what it is: ``the
root cause was a retry loop``, ``X was the direct result of Y``. The same nouns
stand in compounds (``the reason field``, ``the trigger condition``), as labels of
empty fields (``Impact: none``), before an unknown (``the cause is still unknown``)
or as an incident's impact (``the outcome of the incident was a refund``): none of
those names a cause. A field label (``Root cause: ...``) at the start of a line is a
cause stated, unless what follows says it is not known yet.
"""

from __future__ import annotations

from trustgate.verifiers.drafts._grammar import words as W
from trustgate.verifiers.drafts._grammar.clause import Clause, head
from trustgate.verifiers.drafts._text import MASK

__all__ = ["cause_noun", "effect", "label", "outcome", "predicate", "predicate_noun"]

# What ends a field label: a colon or a dash in prose, a cell boundary in a table row
# ("| Root cause | a retry loop |").
_LABEL_END = frozenset({":", "-", "—", "–", "|"})
# What opens an appositive noun phrase after a clause.
_APPOSITION = frozenset({",", "—", "–", "("})
# What ends the clause a predicate noun closes ("" is the end of the sentence).
_CLAUSE_END = frozenset({"", ".", ",", ";", ":", "—", "–", "!", "(", ")"})


def predicate_noun(c: Clause, i: int) -> str | None:
    """A noun that names a cause only as a predicate (``X was the main contributor
    to Y``, ``X was not a factor``, ``X is the driver behind Y``): a copula before it
    and, after it, a preposition or the end of the clause."""
    t = c.t
    nxt = t[i + 1] if i + 1 < len(t) else ""
    if nxt not in W.PREDICATE_PREP and nxt not in _CLAUSE_END:
        return None
    where = predicate(c, i)
    if where < 0 or (where > 0 and t[where - 1] == "there"):
        return None
    subject = c.subject(where)
    if not subject or c.human(subject) or any(x in W.NOBODY for x in subject):
        return None  # "she was a key contributor to the review"
    negated = any(x in W.NEG for x in t[where:i]) or t[where] in W.COPULA_NEGATED
    return f"{'negated cause' if negated else 'stated cause'} {' '.join(t[where : i + 1])!r}"


def label(c: Clause) -> str | None:
    """A field label at the start (``Root cause: ...``) followed by a stated cause."""
    t = c.t
    n = len(t)
    phrases = c.lex.phrases["label"]
    for k in range(0, min(2, n)):
        p = c.phrase_at("label", k) if t[k] in phrases else None
        if p is not None and k + len(p) < n - 1 and t[k + len(p)] in _LABEL_END:
            after = t[k + len(p) + 1]
            if after not in W.NOT_STATED and after not in W.LABEL_EMPTY and after != MASK:
                return f"label {' '.join(p)!r}"
    return None


def _modifier_before(c: Clause, i: int) -> str:
    """The word modifying the noun at ``i``, the first half of a hyphenated compound
    standing for the compound ("knock-on effect", "root-cause")."""
    t = c.t
    prev = t[i - 1] if i > 0 else ""
    if i > 2 and t[i - 2] == "-" and prev.isalpha():
        return t[i - 3]  # "knock - on effect"
    if prev == "-" and i > 1:
        return t[i - 2]  # "root - cause"
    return prev


def _appositive(c: Clause, i: int) -> bool:
    """The noun at ``i`` opens an appositive after a clause ("..., a side effect of
    a stale launch template"): a comma or a dash, then only its noun phrase."""
    t = c.t
    j = i - 1
    while (
        j > 0
        and i - j <= 3
        and (t[j] in W.DETERMINERS or t[j] in W.OUTCOME_MODIFIER or t[j] in W.PREDICATE_MODIFIER)
    ):
        j -= 1
    return j > 0 and j < i - 1 and t[j] in _APPOSITION


def predicate(c: Clause, i: int) -> int:
    """The copula that makes the noun at ``i`` a predicate (``X was not the main
    cause``, ``X is one likely trigger``): its index, or -1. Only what a noun phrase
    holds stands between them (determiners, modifiers, a negation)."""
    t = c.t
    j = i - 1
    while j >= 0 and i - j <= 5:
        w = t[j]
        if w in W.BE or w in W.COPULA_NEGATED or w in W.BECOME:
            return j
        if not (
            w in W.DETERMINERS
            or w in W.NEG
            or w in W.OUTCOME_MODIFIER
            or w in W.CAUSE_MODIFIER
            or w in W.PREDICATE_MODIFIER
            or (w.endswith(("ly", "est")) and len(w) > 4)
            or (w.isalpha() and j > 0 and t[j - 1] == "-")  # "knock-on"
        ):
            return -1
        j -= 1
    return -1


def cause_noun(c: Clause, i: int) -> str | None:
    """``the root cause was ...``, ``X was the main cause``, ``X was not the root
    cause`` (a cause denied is a statement about the cause)."""
    t = c.t
    prev = _modifier_before(c, i)
    where = predicate(c, i)
    if where > 0 and t[where - 1] == "there":
        where = -1  # existential: "there was no single cause" names none
    if where >= 0:
        negated = any(x in W.NEG for x in t[where:i]) or t[where] in W.COPULA_NEGATED
        kind = "negated cause" if negated else "stated cause"
        return f"{kind} {' '.join(t[where : i + 1])!r}"
    if prev in W.CAUSE_MODIFIER:
        if i > 1 and t[i - 2] in W.CAUSE_COPULA:
            return f"stated cause {' '.join(t[max(0, i - 2) : i + 1])!r}"
        j = i + 1
        if j < len(t) and t[j] == "of":
            while j < len(t) and t[j] not in W.COPULA and t[j] not in (",", ";", ":"):
                j += 1
        if j < len(t) and (t[j] in W.CAUSE_STATED_BY or t[j] == ":"):
            after = t[j + 1] if j + 1 < len(t) else ""
            if after not in W.STATED_PARTICIPLES and (
                after in W.NOT_STATED or after.endswith("ed") or after == ""
            ):
                return None  # "the root cause is still unknown", "... was fixed"
            return f"stated cause '{prev} {t[i]}'"
    return None


def effect(c: Clause, i: int) -> str | None:
    """``X made no difference to Y``, ``X had little effect on Y``, ``X played a part
    in Y``: a statement that one thing did (or did not) change another. A person
    playing a role acts; an incident having an impact is impact, not cause."""
    t = c.t
    nxt = t[i + 1] if i + 1 < len(t) else ""
    if (t[i], nxt) not in W.EFFECT_PHRASE:
        return None
    j = i - 1
    while j >= 0 and i - j <= 4 and t[j] not in W.EFFECT_VERB:
        if t[j] in (",", ";", ":", "."):
            return None
        j -= 1
    if j < 0 or t[j] not in W.EFFECT_VERB:
        return None
    subject = c.subject(j)
    if not subject or c.human(subject) or all(w == MASK for w in subject):
        return None
    found = head(list(reversed(subject)))
    if found and found[-1] in W.INCIDENT:
        return None  # "the outage had no impact on EU customers": impact
    return f"effect '{t[j]} ... {t[i]} {nxt}'"


def outcome(c: Clause, i: int) -> str | None:
    """An outcome or cause noun stated with a copula: ``the result was a gap``,
    ``the trigger was a deploy``, ``X was the direct result of Y``."""
    t = c.t
    if i == 0 and len(t) > 1 and t[1] == ":":
        return None  # a field label ("Impact: none")
    prev = _modifier_before(c, i)
    nxt = t[i + 1] if i + 1 < len(t) else ""
    if nxt == "of" and i + 2 < len(t) and t[i + 2] in W.OF_COMPOUND:
        return None  # "the source of truth", "the system of record"
    if t[i] == "reason" and (nxt in W.REASON_COMPOUND or nxt == "to"):
        return None  # "was the reason field", "the reason code", "reason to believe"
    if t[i] in W.CAUSE_LIKE and nxt in _CLAUSE_END:
        # at the end of its clause: "A malformed regex was the trigger."
        where = predicate(c, i)
        if where >= 0 and (where == 0 or t[where - 1] != "there"):
            return f"outcome {t[i]!r} stated"
    if nxt == "of" and _appositive(c, i):
        return f"outcome {t[i]!r} of"  # "..., the consequence of a clock set a day ahead"
    # predicate position: "X was the direct result of Y", "Y was the trigger for X"
    if (nxt in W.OUTCOME_OF or t[i] == "reason") and i > 1:
        j = i - 1
        copula = W.BE_HAVE
        while j > 0 and i - j <= 4 and t[j] not in copula and t[j] not in (",", ";"):
            j -= 1
        if t[j] in copula:  # negated or not: "was not the result of a breach"
            return f"outcome {t[i]!r} of"
    if i == 0 and nxt not in W.OUTCOME_OF_FROM:
        return None  # "Culprit is the name of our chaos tool"
    if nxt.isalpha() and nxt not in W.BE and nxt not in W.OUTCOME_NEXT and t[i] != "reason":
        return None  # a compound: "the reason field", "the trigger condition"
    if t[i] == "reason" and nxt in W.REASON_COMPOUND:
        return None
    if prev not in W.DETERMINERS and prev not in W.OUTCOME_MODIFIER and i != 0:
        return None
    j = i + 1
    if j < len(t) and (t[j] in W.OUTCOME_LINK or t[i] == "reason"):
        while j < len(t) and j < i + 12 and t[j] not in W.OUTCOME_VERB and t[j] != ",":
            j += 1
    if j < len(t) and (t[j] in W.OUTCOME_VERB or t[j] == ":"):
        after = t[j + 1] if j + 1 < len(t) else ""
        if (
            after in W.NOT_STATED
            or after.endswith(("ed", "ble", "ive", "al", "wn"))
            or after in W.OUTCOME_NOT_CAUSE
            or after == ""
        ):
            return None
        if t[i] in W.IMPACT_NOUNS and any(x in W.INCIDENT for x in t[i + 1 : j]):
            return None  # "the outcome of the incident was ...": impact, not cause
        if t[i] == "trigger" and any(x in W.TRIGGER_COMPOUND for x in t[i + 1 : j]):
            return None  # an alert's condition, not an incident's cause
        return f"outcome {t[i]!r} stated"
    return None
