"""Hedges: a sentence that guesses instead of stating.

Three constructions mark a guess. An **epistemic phrase** (``probably``, ``as far as we
can tell``, ``consistent with``, ``could have``), in its epistemic frame only: ``could
have`` before a participle, ``possible`` stated (``it is possible that``) rather than
``as soon as possible``, ``the evidence`` only when qualified as weak. An **epistemic
modal** (``the migration may take longer``, ``exports should now be complete``),
not permission (``customers may request a copy``) or obligation (``engineers should
review``): the subject tells them apart. A **verb of belief** with a first-person
subject (``we suspect``), as ``is thought to``, or as ``seems`` / ``appears to``,
but not ``appears on the page``.
"""

from __future__ import annotations

from trustgate.verifiers.drafts._grammar import words as W
from trustgate.verifiers.drafts._grammar.clause import Clause, head
from trustgate.verifiers.drafts._text import MASK

__all__ = ["belief", "hedge_phrase", "may", "should"]


def hedge_phrase(c: Clause, i: int, p: tuple[str, ...]) -> str | None:
    """Whether the hedge phrase ``p`` at ``i`` stands in its epistemic frame."""
    t = c.t
    n = len(t)
    w = p[0]
    end = c.phrase_end(i, p)
    nxt = t[end] if end < n else ""
    prev = t[i - 1] if i > 0 else ""
    subject = c.subject(i)
    if w in W.SUGGEST and (c.human(subject) or nxt in W.BE or nxt.endswith("ing")):
        return None  # "we suggest customers ...", "the fix suggested was ...", advice
        # ("the runbook suggests checking the disk first")
    if w == "might" and (prev == "you" or nxt in W.MIGHT_NOT):
        return None
    if p == ("may", "be") and (prev == "you" or c.human(subject) or nxt in W.PERMITTED):
        return None  # "refunds may be requested through the billing page": permission
    if p == ("must", "have") and nxt != "been" and not nxt.endswith("ed"):
        return None
    perfect = nxt == "been" or nxt.endswith(("ed", "en", "ne", "wn", "ht"))
    if p in W.MODAL_PERFECT and not perfect:
        return None
    if w in W.ATTRIBUTIVE_HEDGE and prev in W.ARTICLES:
        return None  # attributive: "the uncertain state of the replica"
    if w == "possible":
        prev2 = t[i - 2] if i > 1 else ""
        stated = prev in W.POSSIBLE_STATED and (prev2 in W.POSSIBLE_STATED_BEFORE or prev2 == "")
        if not (
            stated
            or nxt == "that"
            or nxt in W.FAULT_NOUNS
            or prev == "it's"
            or nxt in W.POSSIBLE_NOUN
        ):
            return None  # "as soon as possible", "where possible"
    if w in W.THEORY_NOUN:
        if prev not in W.THEORY_BEFORE:
            return None
        if nxt not in W.THEORY_AFTER and nxt != ":":
            return None
    if w == "evidence" and prev not in W.EVIDENCE_WEAK:
        return None
    if p == ("could", "be"):
        if any(x in W.NOBODY for x in c.subject(i)):
            return None
        if nxt.endswith(("ed", "en", "ne")) and nxt not in W.COULD_BE_CAUSAL:
            return None  # ability: "could be restored"
    if w == "our" and nxt not in W.OUR_AFTER and nxt != ":":
        return None  # "if our understanding changes"
    if w in W.POINTER and not any(x in W.EVIDENCE for x in head(list(reversed(subject)))):
        return None  # "the link points to the wiki": a pointer, not an inference
    if p == ("a", "chance") and prev not in W.CHANCE_BEFORE and nxt != "that":
        return None  # "had a chance to review"
    if p == ("consistent", "with"):
        faults = c.lex.words.get("adverse", frozenset()) | W.FAULT_NOUNS
        if not any(x in faults for x in t[i + 2 : i + 9]):
            return None
    if w == "unclear" and nxt != MASK and prev not in W.UNCLEAR_BEFORE:
        # a wh-word after "unclear" opens an embedded question, masked by
        # setaside.mask_embedded_questions ("it is unclear whether ...")
        return None
    return f"hedge {' '.join(p)!r}"


def may(c: Clause, i: int) -> str | None:
    """Epistemic "may" ("the migration may take longer"), not permission ("customers
    may request a copy") or prohibition ("requests may not exceed 100/s")."""
    t = c.t
    j = i + 1
    negated = False
    while j < len(t) and t[j] in W.MAY_SKIP:
        negated = negated or t[j] == "not"
        j += 1
    verb = t[j] if j < len(t) else ""
    if not verb.isalpha() or verb == MASK:
        return None
    subject = c.subject(i)
    if verb in W.MAY_EPISTEMIC:
        after = t[j + 1] if j + 1 < len(t) else ""
        if verb == "be" and (c.actor(subject) or after in W.PERMITTED):
            return None  # "refunds may be requested through the billing page"
        return f"epistemic 'may {verb}'"
    if verb in W.DEONTIC_VERBS or c.actor(subject) or "you" in subject:
        return None
    if negated and not subject:
        return None
    return f"epistemic 'may {verb}'"


def _people_to(c: Clause, j: int) -> bool:
    """People, then ``to`` (``all teams to complete``): whom a demand binds."""
    t = c.t
    for k in range(j, min(len(t), j + 5)):
        if t[k] == "to":
            return k > j and c.human(list(reversed(t[j:k])))
        if t[k] in (",", ";", ".", ":"):
            return False
    return False


def should(c: Clause, i: int) -> str | None:
    """Epistemic "should" ("exports should now be complete"), not obligation (a
    person or team as subject: "engineers should review")."""
    t = c.t
    n = len(t)
    if i + 1 >= n or c.actor(c.subject(i)):
        return None
    words = c.lex.words.get("should", frozenset())
    nxt = t[i + 1]
    nxt2 = t[i + 2] if i + 2 < n else ""
    if nxt in words or (nxt == "not" and nxt2 in words):
        return f"epistemic 'should {nxt}'"
    if nxt == "be" and f"be {nxt2}" in words:
        return f"epistemic 'should be {nxt2}'"
    for k in range(i + 2, min(n - 1, i + 9)):
        if t[k] in (",", ";", "."):
            break
        if t[k] == "by" and t[k + 1] in W.BY_NOW:
            return f"epistemic 'should ... by {t[k + 1]}'"  # "should be caught up by now"
    return None


def belief(c: Clause, i: int) -> str | None:
    """A verb of belief in a frame that makes it a guess."""
    t = c.t
    w = t[i]
    prev = t[i - 1] if i > 0 else ""
    nxt = t[i + 1] if i + 1 < len(t) else ""
    if w in W.EXPECT and prev in W.EXPECT_NOT_AFTER:
        return None
    if w not in W.APPEAR and nxt in W.BELIEF_PREP:
        return None  # "think of the cache as", "we believe in blameless reviews"
    if w in W.EXPECT and _people_to(c, i + 1):
        return None  # "we expect all teams to complete the training": a demand
    if w == "expected" and prev not in W.BE:
        subject = c.subject(i)
        if not any(x in W.FIRST_PERSON_PLAIN for x in subject):
            return None  # a past expectation reported, not a guess
    if w in W.APPEAR and (
        nxt in W.APPEAR_PLACE or nxt in W.APPEAR_WHEN or (prev in W.MODAL and prev != "would")
    ):
        return None  # shows up somewhere: "the banner will appear on the page"
    if w in W.APPEAR:
        return f"belief {w!r}"
    if w in W.LOOK and nxt == "to" and i + 2 < len(t) and t[i + 2] in W.LOOK_TO:
        return f"belief '{w} to {t[i + 2]}'"  # "replication lag looks to be under 10 s"
    if w in W.LOOK and nxt not in W.LOOK_AFTER:
        return None
    if w in W.LOOK and nxt == "like" and prev not in W.IT_THIS:
        after = t[i + 2] if i + 2 < len(t) else ""
        if after not in W.LOOK_LIKE_CLAUSE:
            return None
        # "looks like" + a clause guesses whatever the subject: "the dashboard looks
        # like it stopped receiving data at 02:10"
        return f"belief '{w} like {after}'"
    if w in W.SEEM:
        return f"belief {w!r}"
    if (prev in W.BE and w.endswith("ed")) or (w == "thought" and prev in W.BE):
        if nxt == "to" or (nxt == "that" and i > 1 and t[i - 2] == "it"):
            return f"belief '{prev} {w} {nxt}'"  # "is thought to", "it is believed that"
        return None
    subject = c.subject(i)
    if (
        any(s in W.FIRST_PERSON for s in subject)
        or c.human(subject)
        or (subject and subject[-1] in W.IT_THIS and w in W.SEEM_IT)
    ):
        return f"belief {w!r}"
    if w in W.APPEAR and nxt == "to":
        return f"belief '{w} to'"
    return None
