"""Code in a draft is scanned, never skipped, by the contract and integrity checks
(issue 12, item 7), and where a renderer puts code is read from the shared CommonMark
reader (trustgate._markdown), so findings can say whether they sit in code.

Why scanned: a reader copies a clause number, URL or price out of a code block as
readily as out of prose, and a check that skips code can be steered by whatever opens
a "code block": a fence CommonMark does not open (a backtick in the info string) would
hide the rest of the draft from a hand-written fence pattern.
"""

from __future__ import annotations

import pytest

from trustgate.contracts import Brief, EvidenceSet, check_citations, check_integrity

BRIEF = Brief(citations=["ISO/IEC 27001:2022 clause 9.2"])
EVIDENCE = EvidenceSet(urls=["https://vendor.example/pricing"], prices=["$1,200"])
LIE = "Audits follow ISO 27001 clause 9.3; see https://evil.example/x for $999."

CASES = {
    "fake fence": "Intro.\n\n```py`x\n" + LIE + "\n",
    "real fence": "Intro.\n\n```\n" + LIE + "\n```\n",
    "unclosed fence": "Intro.\n\n~~~\n" + LIE,
    "indented code": "Intro.\n\n    " + LIE + "\n",
    "code span": "Intro `" + LIE + "` end.\n",
    "html comment": "Intro.\n\n<!-- " + LIE + " -->\n",
    "html block": "<div>\n" + LIE + "\n</div>\n",
    "prose": "Intro.\n\n" + LIE + "\n",
}
IN_CODE = {"real fence", "unclosed fence", "indented code"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_code_never_hides_a_violation(case: str) -> None:
    draft = CASES[case]
    [cited] = [f for f in check_citations(draft, BRIEF) if not f.passed]
    assert cited.code == "invented_citation" and "9.3" in (cited.subject or "")
    failed = {f.code: f for f in check_integrity(draft, EVIDENCE) if not f.passed}
    assert failed["unapproved_url"].subject == "https://evil.example/x"
    assert failed["unapproved_price"].subject == "USD 999"
    for f in (cited, *failed.values()):
        assert f.detail["in_code"] is (case in IN_CODE), (case, f.code)


def test_honest_draft_with_code_passes() -> None:
    draft = (
        "Per ISO 27001 clause 9.2 we audit yearly.\n\n```\nprice = '$1,200'  # "
        "https://vendor.example/pricing\n```\n"
    )
    assert all(f.passed for f in check_citations(draft, BRIEF))
    assert all(f.passed for f in check_integrity(draft, EVIDENCE))
