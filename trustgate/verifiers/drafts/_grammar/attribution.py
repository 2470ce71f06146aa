"""Blame and attribution: a thing named as the source of a fault.

``X was responsible for the outage``, ``the errors came from a bad push``, ``it comes
down to a script``, ``a race lay behind the corruption``: a cause stated as where a
fault came from. The same phrases have other senses, and the frame tells them apart:
a person or team *responsible for* a service holds a role, not blame (``the SRE team
is responsible for TLS termination``); a request *comes from* a customer, a fix
*came down to* the wire. So each reading needs a thing (not a person, not
``nothing``) on one side and a fault on one side. Blame denied (``the deploy was not
responsible for the data loss``) is still a statement about the cause.
"""

from __future__ import annotations

from trustgate.verifiers.drafts._grammar import words as W
from trustgate.verifiers.drafts._grammar.clause import Clause

__all__ = ["responsible", "source"]


def _faults(c: Clause) -> frozenset[str]:
    return W.FAULT_NOUNS | c.lex.words.get("adverse", frozenset())


def responsible(c: Clause, i: int, prev: str) -> bool:
    """``responsible for`` at ``i``: blame when a thing is stated to be responsible
    (``was responsible for``), or, in the present, responsible for a fault."""
    t = c.t
    if prev in W.COPULA_NEGATED:
        prev = W.COPULA_NEGATED[prev]  # "wasn't responsible for"
    elif prev in W.NEG and i > 1:
        prev = t[i - 2]  # "was not responsible for": blame denied is blame stated
    if prev not in W.COPULA:
        return False
    subject = c.subject(i)
    if c.human(subject) or any(x in W.NOBODY for x in subject):
        return False  # a role, not an attribution
    faults = _faults(c)
    # in the present, a function unless a fault follows: "is responsible for TLS"
    return prev not in W.COPULA_PRESENT or any(x in faults for x in c.clause(t[i + 2 : i + 10]))


def source(c: Clause, i: int, p: tuple[str, ...]) -> bool:
    """A source phrase (``came from``, ``comes down to``, ``lay behind``) at ``i``:
    causal with a thing as subject and a fault on either side."""
    t = c.t
    subject = c.subject(i)
    if c.human(subject) or any(x in W.NOBODY for x in subject):
        return False
    faults = _faults(c)
    where = subject + c.clause(t[i + len(p) : i + len(p) + 8])
    return any(x in faults for x in where)
