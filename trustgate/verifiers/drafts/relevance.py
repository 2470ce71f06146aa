"""Citation relevance (opt-in): a cause cited to a line that says nothing about it.

A valid marker proves the line exists, not that it supports the sentence. A drafting
model that learned to satisfy the causal law can cite any line ("The deploy exhausted
the connection pool. [[2]]" where line 2 is "14:03 status page updated"). This rule
reads cited causal sentences and reports ``irrelevant_citation`` when the cited lines
share none of the sentence's content words (its cause and effect terms), compared
after folding case, plural and tense endings. Numbers and times count as content:
"at 14:05 the deploy ..." citing the 14:05 line is relevant.

It is opt-in because a shared word is a weak test in both directions (a line can
share a word and still not support the claim; a paraphrase can support it with none
in common); ``bench/calibrate.py`` measures its false-positive rate on honest cited
drafts before anyone turns it on.

Example:
    ```python
    from trustgate.drafts import DEFAULT_RULES, Record, verify_draft
    from trustgate.verifiers.drafts.relevance import CitationRelevanceRule

    record = Record.from_text("14:02 checkout p99 9.2s\\n14:03 status page updated\\n")
    verdict = verify_draft(
        "The deploy exhausted the connection pool. [[2]]",
        record,
        rules=(*DEFAULT_RULES, CitationRelevanceRule()),
    )
    assert verdict.removed[0].code == "irrelevant_citation"
    ```
"""

from __future__ import annotations

import re

from trustgate.verifiers.drafts import _grammar, _lists
from trustgate.verifiers.drafts._text import fold
from trustgate.verifiers.drafts.rules import DraftSentence, SentenceRule

__all__ = ["CitationRelevanceRule", "content_terms"]


# Words that carry no cause or effect: function words, the causal vocabulary itself,
# and the words every incident report uses (the list: lexicon/text.txt).
_STOP = frozenset(_lists.get("stop"))
_WORD = re.compile(r"[a-z0-9]+")


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_terms(text: str) -> set[str]:
    """The content words of ``text`` (stems), without function and causal words."""
    words = _WORD.findall(fold(text).lower())
    return {_stem(w) for w in words if w not in _STOP and (len(w) > 2 or w.isdigit())}


class CitationRelevanceRule(SentenceRule):
    """A cited causal sentence whose cited lines share none of its content words."""

    name = "relevance"
    code = "irrelevant_citation"

    def check(self, sentence: DraftSentence) -> str | None:
        if not sentence.cited:
            return None
        reading = _grammar.analyse_cached(sentence.plain)
        if reading.causal is None:
            return None
        terms = content_terms(sentence.plain)
        if not terms:
            return None
        lines = sentence.record.lines
        cited_terms: set[str] = set()
        for line_id in sentence.cited:
            cited_terms |= content_terms(lines.get(line_id, ""))
        if terms & cited_terms:
            return None
        ids = ", ".join(sentence.cited)
        return f"asserts a cause citing [[{ids}]], which shares none of its terms"
