"""Causative verbs: a thing making something happen to something.

``The retry storm overwhelmed the auth service`` asserts a cause; ``Engineers
restarted the auth service`` reports an action. The difference is the frame, not the
verb: a causative verb asserts a cause with a *non-human subject* and an *object*
(``the deploy broke the cache``), in a *passive with an agent* (``was blocked by the
migration``), as a *consequence participle* hung on a clause (``..., leaving the
replicas without a primary``), in a *periphrastic* frame (``made the service miss``,
``allowed attackers to access``), or, with a person as subject, as a *means*
(``we mitigated it by shedding traffic``). Verbs that are neutral alone (``send``,
``add``, ``produce``) need a fault next to them (``sent duplicate metrics``). What is
set aside: adjectives (``the hidden column``), infinitives of purpose (``to clear the
backlog``), present passives of design (``is triggered hourly``), impact
(``customers were affected by the outage``), conditions (``until the vendor fixes``).
"""

from __future__ import annotations

from trustgate.verifiers.drafts._grammar import words as W
from trustgate.verifiers.drafts._grammar.clause import Clause, head
from trustgate.verifiers.drafts._text import MASK

__all__ = ["verb"]


def _periphrastic(c: Clause, i: int, lemma: str) -> bool:
    """``made the service miss``, ``let one tenant starve the others``, ``led the
    engineer to restart``, ``allowed attackers to access``, ``left the cluster
    undersized``: a cause making something happen."""
    t = c.t
    window = c.clause(t[i + 1 : i + 7])
    if not window or window[0] in W.NOT_OBJECT:
        return False
    if lemma in W.MAKE_DO:
        return any(k > 0 and (w in c.lex.verbs or w in W.BARE_VERBS) for k, w in enumerate(window))
    if lemma in W.MAKE_TO_DO:
        return any(
            w == "to"
            and k > 0
            and k + 1 < len(window)
            and window[k + 1] not in W.DETERMINERS
            and not window[k + 1].isdigit()
            for k, w in enumerate(window)
        )
    if lemma == "leave":
        adverse = c.lex.words.get("adverse", frozenset())
        return any(
            k > 0 and (w.endswith(("ing", "ed")) or w in adverse) and w not in W.PREPOSITIONS
            for k, w in enumerate(window)
        )
    return False


def _adverse_near(c: Clause, i: int, subject: list[str]) -> bool:
    """A neutral verb (produce, send, add) asserts a cause only with a fault in its
    subject or object, or (add, push) a quantity as its object."""
    adverse = c.lex.words.get("adverse", frozenset())
    t = c.t

    def bad(words: list[str], k: int) -> bool:
        w = words[k]
        if w not in adverse and w not in W.FAULT_NOUNS:
            return False
        nxt = words[k + 1] if k + 1 < len(words) else ""
        return not (w == "load" and nxt.startswith(W.LOAD_COMPOUND))

    found = head(list(reversed(subject)))
    for k, w in enumerate(found):
        if w in adverse and bad(found, k):
            after = found[k + 1] if k + 1 < len(found) else ""
            if (
                w in W.FAULT_NOUNS
                and after.isalpha()
                and after not in W.AUX
                and after not in W.FAULT_HEAD
            ):
                continue  # a compound's modifier: "the bug tracker", "the latency SLO"
            return True
    if any(x in adverse and x.endswith("ly") for x in t[max(0, i - 2) : i]):
        return True  # "accidentally deleted", "inadvertently removed"
    if found and found[-1] in W.FAULT_NOUNS:
        return True
    lemma = c.lex.verbs[t[i]][0]
    if lemma not in W.OBJECT_FAULT_OK:
        return False  # blocking a bad thing is the system working
    for j in range(i + 1, min(len(t), i + 12)):
        if t[j] in W.OBJECT_END:
            break
        if bad(t, j):
            return True
        if (
            lemma in W.RAISE_BY
            and t[j] == "by"
            and j + 1 < len(t)
            and (t[j + 1].isdigit() or t[j + 1] in W.NUMBER_WORDS)
        ):
            return True
        if (
            j == i + 1 and lemma in W.ADD_AMOUNT and (t[j].isdigit() or t[j] in W.NUMBER_WORDS)
        ) and (lemma == "send" or any(u in W.QUANTITY_UNITS for u in t[j + 1 : j + 4])):
            return True
    return False


def _passive(c: Clause, i: int, lemma: str, prev: str) -> str | None:
    """``was blocked by the migration``: causal with an agent that is a thing."""
    t = c.t
    if lemma != "cause" and prev in W.BE_PRESENT:
        return None  # present passive: a habit or a design ("is triggered hourly")
    for k in range(i + 1, min(len(t), i + 6)):
        if t[k] == "by":
            agent = t[k + 1 : k + 8]
            nxt = agent[0] if agent else ""
            nxt2 = agent[1] if len(agent) > 1 else ""
            if nxt in W.BY_NOT_AGENT or (nxt == "the" and nxt2 == "time"):
                return None
            if nxt.isdigit() or nxt in W.NUMBER_WORDS or nxt in W.BY_AMOUNT:
                return None  # "delayed by up to 40 minutes", "resolved by 15:05"
            if nxt.endswith("ing"):
                return f"means {t[i]!r} by {nxt!r}"
            agent_head = head(c.clause(agent))
            if lemma in W.IMPACT_VERBS and agent_head and agent_head[-1] in W.INCIDENT:
                return None  # impact: "customers were affected by the outage"
            if c.human(list(reversed(c.clause(agent)))):
                return None  # "triggered manually by the on-call engineer"
            if any(w in W.NOBODY for w in c.subject(i)):
                return None
            faults = c.lex.words.get("adverse", frozenset()) | W.FAULT_NOUNS
            if (
                lemma in c.lex.neutral
                and not _adverse_near(c, i, c.subject(i))
                and not any(x in faults for x in c.clause(agent))
            ):
                return None
            return f"passive {t[i]!r} by"
        if t[k] in W.PASSIVE_WHEN and lemma in W.CAUSE_TRIGGER:
            return f"passive {t[i]!r} {t[k]}"
        if t[k] in (",", ";", "."):
            break
    return None


def verb(c: Clause, i: int) -> str | None:
    """Whether the causative verb at ``i`` asserts a cause in its frame, and why."""
    t = c.t
    lemma, form = c.lex.verbs[t[i]]
    particle = c.lex.particles.get(lemma)
    if particle is not None and not any(x in particle for x in c.clause(t[i + 1 : i + 9])):
        return None  # the particle anywhere in the clause: "brought the rate back down"
    j, prev = c.prev(i)
    if c.negated(i) and not (
        lemma in W.CAUSE_TRIGGER and (prev in W.VERB_NEGATION or prev.endswith("n't"))
    ):
        # "did not break"; but "did not cause" still speaks of a cause (not "have not
        # found what caused": that negation is another verb's)
        return None
    if prev == "to" and j > 0 and t[j - 1] not in W.TO_CAUSE:
        return None  # an infinitive: purpose, not a claim
    nxt = t[i + 1] if i + 1 < len(t) else ""
    if form in ("ed", "ing") and (
        prev in W.ARTICLES
        or prev in W.QUANTIFIER
        or prev in W.PREPOSITIONS
        or prev in W.SEEING
        or (
            prev.endswith("ed")
            and not prev.endswith("eed")  # "the upstream feed poisoned"
            and form == "ed"
            and prev not in W.BE
        )
    ):
        return None  # an adjective: "the hidden column", "every affected region"
    if lemma == "break" and nxt == "down":
        return None  # "broke down latency by region" / "the link broke down"
    if (
        lemma in W.DIVIDE_VERB
        and W.DIVIDE_PREP.intersection(c.clause(t[i + 1 : i + 8]))
        and not _adverse_near(c, i, c.subject(i))
    ):
        return None  # a division: "the planner broke the query into three stages"
    if form == "s" and (nxt in W.BE or nxt in W.AUX):
        return None  # a plural noun: "duplicate charges were refunded"
    if (
        form == "ed"
        and c.lex.verbs.get(prev, ("", "base"))[1] in ("s", "ed")
        and nxt not in W.DETERMINERS
    ):
        # an adjective after a verb: "deletes expired entries"; but before a
        # determiner the -s word was a noun: "the GC pauses choked the event loop"
        return None
    if lemma == "stop" and nxt.endswith("ing"):
        return None  # "stopped accepting writes": ceased, no cause named
    if lemma == "cause" and form != "base":
        if form == "s" and (
            prev in W.DETERMINERS or prev in W.CAUSE_NOUN_BEFORE or i == 0 or nxt == "of"
        ):
            return None  # the noun
        return f"causative {t[i]!r}"
    if form == "ing":
        if prev in W.CONSEQUENCE_BEFORE:
            before = c.clause_before(i)
            if lemma in W.IMPACT_VERBS and any(w in W.INCIDENT for w in t[:i]):
                return None  # "... experienced an outage, impacting its players"
            if lemma in c.lex.neutral and not _adverse_near(c, i, before):
                return None
            if c.has_object(i) or lemma in W.CAUSE_TRIGGER:
                return f"consequence {t[i]!r}"
            return None
        if prev not in W.BE or prev in W.BEING:
            return None
        progressive = True  # "the cache was crashing the workers": a finite verb
    else:
        progressive = False
    if form in ("ed", "s") and prev in W.BE and prev != "being" and not progressive:
        return _passive(c, i, lemma, prev)
    if form == "ed" and (i == 0 or prev in W.CONSEQUENCE_BEFORE) and "by" in t[i + 1 : i + 4]:
        # a passive without its copula, opening a fragment or hung on a clause:
        # "Triggered by the 14:05 deploy.", "..., delayed by the stuck batch"
        return _passive(c, i, lemma, "was")
    if form == "base" and not progressive:
        plural_noun = (
            len(prev) > 3
            and prev.endswith("s")
            and not prev.endswith("ss")
            and prev not in W.AUX
            and prev not in W.CLAUSE
            and prev not in W.DETERMINERS
            and prev not in W.SEEING
        )
        finite = (
            prev in W.MODAL
            or prev in W.DO_SUPPORT
            or (prev in W.NEG and j > 0 and (t[j - 1] in W.MODAL or t[j - 1] in W.DO_SUPPORT))
        )  # "will cause", "did cause", "did not cause"
        if not finite and not plural_noun:
            return None
    subject = c.subject(i)
    if not subject:
        return None
    if c.subordinate(i):
        return None  # "until the vendor fixes the bug, ...": not a claim
    if c.human(subject):
        # a person acting; causal only as a means ("we mitigated by shedding")
        for k in range(i + 1, min(len(t), i + 10)):
            if t[k] in W.MEANS and k + 1 < len(t):
                if t[k] == "by" and t[k + 1].endswith("ing"):
                    return f"means {t[i]!r} by {t[k + 1]!r}"
                if t[k] != "by" and lemma in W.MEANS_VERBS:
                    return f"means {t[i]!r} {t[k]}"
            if t[k] in (",", ";", "."):
                break
        return None
    if all(w == MASK for w in subject):
        return None
    found = head(list(reversed(subject)))
    if lemma in W.IMPACT_VERBS and found and found[-1] in W.INCIDENT:
        return None  # impact, not cause: "the incident affected customers on all plans"
    if _periphrastic(c, i, lemma):
        return f"causative {t[i]!r} + verb"
    if not c.has_object(i) and lemma != "cause":
        if nxt == "under" and any(x in W.UNDER_LOAD for x in t[i + 2 : i + 6]):
            return f"causative {t[i]!r} under load"
        return None
    if lemma == "explain" and (
        any(w in W.DOC_SUBJECTS for w in subject) or nxt in W.WH or nxt == MASK
    ):
        return None  # a document explains, a vendor explains what; neither causes
    if nxt in W.NOBODY or any(w in W.NOBODY for w in subject):
        return None  # "assign no blame", "nothing broke the build"
    if lemma in c.lex.neutral and not _adverse_near(c, i, subject):
        return None
    return f"causative {t[i]!r}"
