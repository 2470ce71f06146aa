"""What is not an assertion, set aside before any construction is read.

A trigger word is only a claim inside a statement. A question asks ("Did the deploy
cause it?"), an embedded question asks inside a statement ("we are investigating
whether the deploy caused it"), a sentence about the document describes the document
("This section covers the causes"), an apology regrets, and a capitalised trigger word
inside a sentence is a name ("the May release", "Dr. Reason"). Each is masked here
(its tokens replaced by the reader's neutral token) or skipped whole, so the
constructions never see it.
"""

from __future__ import annotations

import re

from trustgate.verifiers.drafts._grammar import words as W
from trustgate.verifiers.drafts._grammar.clause import Clause
from trustgate.verifiers.drafts._text import MASK

__all__ = ["QUESTION_END", "about_document", "apology", "mask_embedded_questions", "mask_names"]

QUESTION_END = re.compile(r"\?[\s\"')\]*_]*(?:\[\[[^\[\]\n]*\]\][\s]*)*\Z")
"""A sentence ending in a question mark (markers and closing quotes after it)."""

# Marks after which a capitalised word starts a new sentence or item, not a name.
_STARTS = frozenset({".", ":", "(", '"', "-", "—", "–", "•", ";", "!", "?", "'", ">"})
_SOFT = frozenset({",", ";", ":"})
# What ends a leading wh-clause: a comma, or the mark after a label ("Why it happened —
# the lease was never renewed", a table cell).
_LEAD_END = _SOFT | {"—", "–", "|"}


def mask_names(c: Clause, triggers: frozenset[str]) -> None:
    """A capitalised trigger word inside a sentence is a name (Dr. Reason, the May
    release, Project Likely), unless the sentence is in title case; a word after
    "the word" is a mention."""
    cased, t = c.cased, c.t
    hits = [i for i in range(1, len(t)) if t[i] in triggers]
    for i in hits:
        if t[i - 1] in W.MENTION:
            t[i] = MASK  # a mention: "the word consequently"
    hits = [i for i in hits if t[i] != MASK and not cased[i].islower()]
    if not hits:
        return
    words = [w for w in cased if len(w) > 3 and w.isalpha()]
    titled = sum(1 for w in words if w[0].isupper())
    if words and titled * 10 >= len(words) * 6:
        return  # a heading in title case: capitals say nothing
    for i in hits:
        w = cased[i]
        if t[i - 1] in W.MENTION and w.isalpha():
            t[i] = MASK  # a mention: "the word consequently"
            continue
        if w.isalpha() and w.isupper() and 1 < len(w) <= 3:
            t[i] = MASK  # an acronym (DT, BC) names something
            continue
        if not (w[:1].isupper() and w[1:].islower()):
            continue
        if t[i - 1] in _STARTS:
            continue  # a new sentence or item starts here
        t[i] = MASK


def mask_embedded_questions(c: Clause) -> None:
    """``investigating whether X caused Y``: the rest of the clause is a question;
    ``Why the alert did not fire is unknown``: so is a leading wh-clause."""
    t = c.t
    inquiry = c.lex.words.get("inquiry", frozenset())
    n = len(t)
    if n > 2 and t[0] in W.WH_LEAD:
        last = -1
        for j in range(1, n):
            if t[j] in _LEAD_END:
                break
            if t[j] in W.COPULA_REMAIN:
                last = j
        after = t[last + 1] if 0 < last < n - 1 else ""
        cleft = t[0] in W.WH_CLEFT and after in W.CLEFT_AFTER
        if not cleft:  # "What caused it was a loop" states; "Why ... is unknown" asks
            for k in range(0, last):
                t[k] = MASK
    for i, w in enumerate(t):
        if w not in W.WH or i == 0:
            continue
        embedded = w == "whether"
        if not embedded and t[i - 1] == "of" and i > 1 and t[i - 2] in W.QUESTION_NOUNS:
            embedded = True
        if not embedded and w in W.WH_EMBED:
            j = i - 1
            while j >= 0 and i - j <= 6 and t[j] not in (",", ";", ":", "."):
                if (
                    t[j] in inquiry
                    or t[j] in W.QUESTION_NOUNS
                    or (t[j] == "out" and j > 0 and t[j - 1] in W.FIND_OUT)
                ):
                    embedded = True
                    break
                j -= 1
        if embedded:
            j = i
            while j < n and t[j] not in (";", ".", "!", "?"):
                t[j] = MASK
                j += 1


def about_document(c: Clause) -> bool:
    """``This section describes ...``, ``Section 3 covers ...``: the document speaks
    of itself."""
    t = c.t
    docs = c.lex.words.get("document", frozenset())
    k = 0
    if t[:1] == ["in"]:
        k = 1
    head = t[k : k + 4]
    if len(head) >= 2 and head[0] in W.DOC_DETERMINER:
        for j in range(1, min(4, len(head))):
            if head[j] in docs:
                nxt = t[k + j + 1] if k + j + 1 < len(t) else ""
                return nxt in W.DOC_VERBS
    return head[:1] == ["section"] and len(head) > 1 and head[1].isdigit()


def apology(c: Clause) -> bool:
    """An apology names no cause, whatever it regrets."""
    return any(w in W.APOLOGY for w in c.t[:5])
