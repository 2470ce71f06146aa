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
from trustgate.verifiers.drafts._grammar.clause import Clause
from trustgate.verifiers.drafts._text import MASK

__all__ = ["cause_noun", "label", "outcome"]

# What ends a field label: a colon or a dash in prose, a cell boundary in a table row
# ("| Root cause | a retry loop |").
_LABEL_END = frozenset({":", "-", "—", "–", "|"})


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


def cause_noun(c: Clause, i: int) -> str | None:
    """``the root cause was ...``, ``X was the main cause``."""
    t = c.t
    prev = t[i - 1] if i > 0 else ""
    if prev in W.CAUSE_MODIFIER:
        if i > 1 and t[i - 2] in W.CAUSE_COPULA:
            return f"stated cause {' '.join(t[max(0, i - 2) : i + 1])!r}"
        j = i + 1
        if j < len(t) and t[j] == "of":
            while j < len(t) and t[j] not in W.COPULA and t[j] not in (",", ";", ":"):
                j += 1
        if j < len(t) and (t[j] in W.CAUSE_STATED_BY or t[j] == ":"):
            after = t[j + 1] if j + 1 < len(t) else ""
            if after in W.STATED_PARTICIPLES:
                return f"stated cause {' '.join(t[max(0, i - 1) : i + 1])!r}"
            if after in W.NOT_STATED or after.endswith("ed") or after == "":
                return None
            return f"stated cause {' '.join(t[max(0, i - 1) : i + 1])!r}"
    return None


def outcome(c: Clause, i: int) -> str | None:
    """An outcome or cause noun stated with a copula: ``the result was a gap``,
    ``the trigger was a deploy``, ``X was the direct result of Y``."""
    t = c.t
    if i == 0 and len(t) > 1 and t[1] == ":":
        return None  # a field label ("Impact: none")
    prev = t[i - 1] if i > 0 else ""
    nxt = t[i + 1] if i + 1 < len(t) else ""
    # predicate position: "X was the direct result of Y", "Y was the trigger for X"
    if (nxt in W.OUTCOME_OF or t[i] == "reason") and i > 1:
        j = i - 1
        copula = W.BE_HAVE
        while j > 0 and i - j <= 4 and t[j] not in copula and t[j] not in (",", ";"):
            j -= 1
        if t[j] in copula and not c.negated(j + 1):
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
