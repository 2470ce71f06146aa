"""Implicit causatives: a fault doing something to something.

The lexicon's causative verbs (``overwhelmed``, ``broke``, ``wiped``) are causal with
any non-human subject; but a fault can act through any verb at all: ``stale DNS
entries pointed clients at a decommissioned host``, ``a runaway cron job forked
thousands of processes``, ``the typo set the replica count to zero``. Listing every
such verb is what the issue measured deleting a third of plain sentences: ``the
migration moved 40 tables`` and ``the bot posted the timeline`` are the same shape.
What makes the first kind a claim is its *subject*: a noun phrase that names a fault
(a fault noun as its head: ``bug``, ``race``, ``storm``; or a fault's modifier:
``stale``, ``runaway``, ``misrouted``; not a fault word modifying a tool: ``the crash
reporter``, ``the load test``). So here any finite verb in the past (a regular
``-ed`` form or an irregular one; not a verb of reporting, showing or recovering, nor
one a measure moves by: ``latency rose``) that is the first of its clause, with such
a subject and an object or a motion after it (``spilled over to``), reads as a cause.
An incident as the subject is impact, not cause (``the outage cost us four hours``),
and a person acts. A cleft states a cause with any verb (``a saturated gateway is what
ultimately blocked outbound calls``).
"""

from __future__ import annotations

from trustgate.verifiers.drafts._grammar import words as W
from trustgate.verifiers.drafts._grammar.clause import Clause, head
from trustgate.verifiers.drafts._grammar.data import GrammarLexicon
from trustgate.verifiers.drafts._text import MASK

__all__ = ["past_form", "starts_trouble", "trouble"]

# How far back a subject is looked for: a fault's noun phrase is short, and every past
# verb of a sentence is tried, so the look back is bounded.
_REACH = 12


_starts: list[tuple[GrammarLexicon, frozenset[str]]] = []


def starts_trouble(lex: GrammarLexicon) -> frozenset[str]:
    """Words without one of which no reading here can fire: a fault, a fault's
    modifier, the wh-word of a cleft (kept for the last vocabulary asked about)."""
    last = _starts[0] if _starts else None
    if last is not None and last[0] is lex:
        return last[1]
    words = frozenset(
        lex.words.get("adverse", frozenset()) | W.FAULT_NOUNS | W.FAULT_MODIFIER | W.CLEFT_WH
    )
    _starts[:] = [(lex, words)]
    return words


def past_form(w: str) -> bool:
    """Whether ``w`` looks like a past-tense verb: a regular ``-ed`` form (not
    ``need``, ``speed``) or an irregular past."""
    if w in W.IRREGULAR_PAST:
        return True
    return len(w) > 4 and w.endswith("ed") and not w.endswith("eed") and w.isalpha()


def trouble(c: Clause, i: int) -> str | None:
    """Whether the verb at ``i`` is a fault acting on something, and why."""
    t = c.t
    w = t[i]
    if w in W.INERT_VERB or not (past_form(w) or c.lex.verbs.get(w, ("", ""))[1] == "ed"):
        return None
    j, prev = c.prev(i)
    if prev in W.CLEFT_WH and j > 0 and (t[j - 1] in W.BE or t[j - 1] in W.COPULA_NEGATED):
        # a cleft: "a saturated NAT gateway is what ultimately blocked outbound calls"
        return f"cleft 'what {w}'" if c.has_object(i) else None
    if w in c.lex.verbs:
        return None  # read in its own frames (verbs.py)
    if prev in W.BE or (prev in W.AUX and prev not in W.HAVE) or prev in W.NEG:
        return None  # a passive ("was routed"), a modal, a negation
    if prev in W.ARTICLES or prev in W.PREPOSITIONS or prev in W.SEEING or prev == "to":
        return None  # an adjective ("the misrouted traffic"), an infinitive
    if j >= 0 and t[j].endswith("n't"):
        return None
    # what it acts on first (cheap): an object or a motion, not an amount
    nxt = t[i + 1] if i + 1 < len(t) else ""
    has_object = c.has_object(i)
    if w in W.TRAJECTORY:
        # a measure moving ("latency rose to 9 s", "hit 100%"), unless it moves a thing
        if not has_object or nxt.isdigit() or nxt in W.NUMBER_WORDS:
            return None
    elif not has_object:
        after = t[i + 2] if i + 2 < len(t) else ""
        if nxt not in W.MOTION or after.isdigit() or after in W.NUMBER_WORDS:
            return None  # nothing acted on, or an amount: "amounted to about two hours"
        if after in W.BY_AMOUNT:
            return None
    subject = c.subject(i, _REACH)
    if not subject or c.subordinate(i, _REACH) or all(x == MASK for x in subject):
        return None
    adverse = c.lex.words.get("adverse", frozenset())
    for k in range(i - len(subject), i):
        x = t[k]
        if x in W.AUX or (
            (past_form(x) or c.lex.verbs.get(x, ("", "base"))[1] in ("s", "ed"))
            and x not in adverse
            and (k == 0 or (t[k - 1] not in W.ARTICLES and t[k - 1] not in W.PREPOSITIONS))
        ):
            return None  # not the clause's first verb: "suffered a failure of ... distributed"
    if c.human(subject) or any(x in W.NOBODY for x in subject):
        return None
    found = head(list(reversed(subject)))
    if not found or found[-1] in W.INCIDENT:
        return None  # impact: "the outage cost us four hours"
    modified = any(
        x in W.FAULT_MODIFIER and "-" not in found[max(0, k - 1) : k + 2]
        for k, x in enumerate(found[:-1])
    )
    if not modified and (found[-1] not in W.FAULT_NOUNS or found[-1] in W.NOT_TROUBLE_HEAD):
        # the fault is the head ("a race between two jobs") or what modifies it ("a
        # stale lock"); a fault word modifying a tool is the tool ("the crash reporter",
        # "the stale-data banner"), and a failover is a remedy
        return None
    return f"causative {w!r} with a fault as subject"
