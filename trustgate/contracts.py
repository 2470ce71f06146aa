"""Closed lists: a draft may cite only what a brief approves, and a verdict is strict.

A :class:`Brief` lists the citations a draft may use (:class:`ApprovedCitation`);
an :class:`EvidenceSet` lists the URLs and prices it may state.
:func:`check_citations` finds every citation in the text (with its canonical
identity: ``Art. 5(1)(a)`` and ``Article 5 (1) (a)`` are one citation) and fails the
ones outside the list or quoted with the wrong title; :func:`check_integrity` does the
same for URLs and prices. :func:`parse_verdict` reads a model verifier's
``{"pass", "issues"}`` verdict strictly: anything but exactly one well-formed,
agreeing object is a :class:`~trustgate.errors.VerdictError`, never a pass.

Importing this module imports no LangGraph and no LangChain.

Example:
    ```python
    from trustgate.contracts import Brief, check_citations

    brief = Brief(citations=["ISO/IEC 27001:2022 Annex A 5.9"])
    draft = "Per A.5.9 we keep a register; audits follow ISO 27001 clause 9.2."
    assert [f.code for f in check_citations(draft, brief)] == ["invented_citation"]
    ```
"""

from __future__ import annotations

from trustgate.errors import VerdictError
from trustgate.evidence.brief import ApprovedCitation, ApprovedPrice, Brief, EvidenceSet
from trustgate.verifiers.contracts.citations import check_citations
from trustgate.verifiers.contracts.patterns import (
    DEFAULT_CITATION_PATTERNS,
    CitationId,
    CitationMatch,
    CitationPattern,
    RegexCitationPattern,
    extract_citations,
)
from trustgate.verifiers.contracts.verdict import Verdict, VerdictIssue, parse_verdict
from trustgate.verifiers.integrity.check import check_integrity, normalize_price, normalize_url

__all__ = [
    "DEFAULT_CITATION_PATTERNS",
    "ApprovedCitation",
    "ApprovedPrice",
    "Brief",
    "CitationId",
    "CitationMatch",
    "CitationPattern",
    "EvidenceSet",
    "RegexCitationPattern",
    "Verdict",
    "VerdictError",
    "VerdictIssue",
    "check_citations",
    "check_integrity",
    "extract_citations",
    "normalize_price",
    "normalize_url",
    "parse_verdict",
]
