"""Drafts that cite a record: delete what the record cannot back, leave a gap.

A draft (a postmortem, an incident summary) cites the lines of a pasted
:class:`Record` as ``[[12]]``. :func:`verify_draft` deletes the sentences that could
hurt a reader without a valid citation (a cause, a hedge), drops citation markers
that point nowhere, and puts a gap question (one that never suggests the answer) in
each hole; :func:`answer_gap` records a person's answer as attributed testimony. The
sentence rules are data (:class:`CausalRule`, :class:`HedgeRule`,
:class:`PatternRule`, ...), so a team can add its own.

Importing this module imports no LangGraph and no LangChain: it runs in a CI job, a
pre-commit hook or a web handler as it is. :class:`DraftCheck` (also in
:mod:`trustgate`) is the same check as a gate's verifier.

Example:
    ```python
    from trustgate.drafts import Record, verify_draft

    record = Record.from_text("14:02 latency p99 9.2s\\n14:03 alert fired\\n")
    verdict = verify_draft("Latency rose at 14:02 [[1]]. The deploy caused it.", record)
    assert [r.rule for r in verdict.removed] == ["causal"]
    ```
"""

from __future__ import annotations

from trustgate.evidence.record import Record
from trustgate.verifiers.drafts.check import DraftCheck
from trustgate.verifiers.drafts.figures import FiguresRule
from trustgate.verifiers.drafts.relevance import CitationRelevanceRule
from trustgate.verifiers.drafts.rules import (
    DEFAULT_RULES,
    CausalRule,
    DraftSentence,
    HedgeRule,
    Lexicon,
    PatternRule,
    SentenceRule,
)
from trustgate.verifiers.drafts.segment import Segment, segment
from trustgate.verifiers.drafts.verify import (
    DraftVerdict,
    Gap,
    InvalidCitation,
    KeptSentence,
    Removal,
    Testimony,
    UnsupportedText,
    answer_gap,
    verify_draft,
)

__all__ = [
    "DEFAULT_RULES",
    "CausalRule",
    "CitationRelevanceRule",
    "DraftCheck",
    "DraftSentence",
    "DraftVerdict",
    "FiguresRule",
    "Gap",
    "HedgeRule",
    "InvalidCitation",
    "KeptSentence",
    "Lexicon",
    "PatternRule",
    "Record",
    "Removal",
    "Segment",
    "SentenceRule",
    "Testimony",
    "UnsupportedText",
    "answer_gap",
    "segment",
    "verify_draft",
]
