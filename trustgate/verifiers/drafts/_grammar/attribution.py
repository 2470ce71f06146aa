"""Blame and attribution: a thing named as the source of a fault.

``X was responsible for the outage``, ``the errors came from a bad push``, ``it comes
down to a script``, ``a race lay behind the corruption``: a cause stated as where a
fault came from. The same phrases have other senses, and the frame tells them apart:
a person or team *responsible for* a service holds a role, not blame (``the SRE team
is responsible for TLS termination``); a request *comes from* a customer, a fix
*came down to* the wire. So each reading needs a thing (not a person, not
``nothing``) on one side and a fault on one side. Blame denied (``the deploy was not
responsible for the data loss``) is still a statement about the cause. An attribution
verb may hold what it blames between it and its preposition (``engineers attributed
the latency to noisy neighbours``), and ``lies with`` is blame only when blame lies.
"""

from __future__ import annotations

from trustgate.verifiers.drafts._grammar import words as W
from trustgate.verifiers.drafts._grammar.clause import STOPS, Clause, head

__all__ = ["gapped", "responsible", "rests", "source"]


def _faults(c: Clause) -> frozenset[str]:
    return W.FAULT_NOUNS | c.lex.words.get("adverse", frozenset())


def responsible(c: Clause, i: int) -> bool:
    """``responsible for`` at ``i``: blame when a thing is stated to be responsible for
    a fault (``was responsible for the truncated uploads``, ``for corrupting the
    index``), not a duty (``was responsible for replacing the disk``) nor a function
    (``is responsible for TLS termination``)."""
    t = c.t
    _, prev = c.prev(i)
    if prev in W.COPULA_NEGATED:
        prev = W.COPULA_NEGATED[prev]  # "wasn't responsible for"
    elif prev in W.NEG and i > 1:
        _, prev = c.prev(i - 1)  # "was not responsible for": blame denied is blame stated
    if prev not in W.COPULA:
        return False
    subject = c.predicate_subject(i)
    if c.human(subject) or any(x in W.NOBODY for x in subject):
        return False  # a role, not an attribution
    faults = _faults(c)
    after = c.clause(t[i + 2 : i + 12])
    if after and after[0].endswith("ing") and after[0] not in faults:
        verb = c.lex.verbs.get(after[0])
        if verb is not None and verb[0] not in c.lex.neutral:
            return True  # "responsible for corrupting the index"
        return any(x in faults for x in after)  # a duty: "for rotating the logs"
    return any(x in faults or x in W.INCIDENT for x in after)


def gapped(c: Clause, i: int) -> str | None:
    """``attributed the latency to noisy neighbours``, ``traced the errors back to a
    bad push``, ``blamed the slowdown on the index``: an attribution verb, the thing
    blamed, its preposition and the cause; a fault on one side (a request path traced
    to a gateway is a route, not a cause). Anyone may attribute, people too."""
    t = c.t
    n = len(t)
    for p in W.GAPPED_BY_VERB.get(t[i], ()):
        rest = p[1:]
        for k in range(i + 2, min(n - len(rest), i + 8)):
            if t[k - 1] in W.CLAUSE or t[k - 1] in STOPS:
                break
            if tuple(t[k : k + len(rest)]) == rest:
                blamed = t[i + 1 : k]
                cause = c.clause(t[k + len(rest) : k + len(rest) + 8])
                faults = _faults(c)
                if any(x in faults for x in blamed + cause):
                    return f"attribution '{t[i]} ... {' '.join(rest)}'"
                break
    return None


def rests(c: Clause, i: int) -> bool:
    """``blame lies with a default``, ``the fault lay with the config``: causal only
    when blame (or fault, or responsibility) is what lies there."""
    found = head(list(reversed(c.subject(i))))
    return bool(found) and found[-1] in W.BLAME_NOUN


def source(c: Clause, i: int, p: tuple[str, ...]) -> bool:
    """A source phrase (``came from``, ``comes down to``, ``lay behind``) at ``i``:
    causal with a thing as subject and a fault on either side."""
    t = c.t
    subject = c.predicate_subject(i)
    if c.human(subject) or any(x in W.NOBODY for x in subject):
        return False
    faults = _faults(c)
    end = c.phrase_end(i, p)
    where = [*subject, *p, *c.clause(t[end : end + 8])]
    return any(x in faults for x in where)  # "at fault" names its fault itself
