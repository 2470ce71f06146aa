"""Drafts that cite a record: delete what the record cannot back, leave a gap.

A draft (a postmortem, an incident summary) cites the lines of a pasted
:class:`Record` as ``[[12]]``. :func:`verify_draft` deletes the sentences that could
hurt a reader without a valid citation (a cause, a hedge), drops citation markers
that point nowhere, and puts a gap question (one that never suggests the answer) in
each hole (after :data:`GAP_LABEL`); :func:`answer_gap` records a person's answer as
attributed testimony (:func:`testimony_text`, for a text a gate already redacted). The
sentence rules are data (:class:`CausalRule`, :class:`HedgeRule`,
:class:`PatternRule`, ...), so a team can add its own.

The rules read the causes a sentence says, not the ones it only implies. An optional
sentence judge (:class:`ModelJudge` for a chat model, :class:`FunctionJudge` or a plain
function, anything that is a :class:`SentenceJudge`) is asked about the sentences the
rules keep, ``verify_draft(draft, record, judge=...)``: it can add deletions, never
keep what the rules delete, and a judge that cannot be read twice in a row raises
:class:`~trustgate.errors.JudgeError`.

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
from trustgate.verifiers.drafts.gaps import GAP_LABEL, testimony_text
from trustgate.verifiers.drafts.judge import (
    JUDGE_PROMPT,
    FunctionJudge,
    JudgeCache,
    JudgeSummary,
    Judgment,
    ModelJudge,
    SentenceJudge,
    parse_judgments,
)
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
    averify_draft,
    verify_draft,
)

__all__ = [
    "DEFAULT_RULES",
    "GAP_LABEL",
    "JUDGE_PROMPT",
    "CausalRule",
    "CitationRelevanceRule",
    "DraftCheck",
    "DraftSentence",
    "DraftVerdict",
    "FiguresRule",
    "FunctionJudge",
    "Gap",
    "HedgeRule",
    "InvalidCitation",
    "JudgeCache",
    "JudgeSummary",
    "Judgment",
    "KeptSentence",
    "Lexicon",
    "ModelJudge",
    "PatternRule",
    "Record",
    "Removal",
    "Segment",
    "SentenceJudge",
    "SentenceRule",
    "Testimony",
    "UnsupportedText",
    "answer_gap",
    "averify_draft",
    "parse_judgments",
    "segment",
    "testimony_text",
    "verify_draft",
]
