"""``trustgate check-contract``: a draft's citations, URLs and prices against closed lists.

Checks a draft's citations against a brief's approved list and, with
``--evidence``, its URLs and prices against an approved evidence set. Exit 0 when
nothing is violated, 1 when anything is, 2 on bad input (one line, no traceback),
so the command can gate a CI job or a release script.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from trustgate.cli import _common

if TYPE_CHECKING:
    from trustgate._findings import Finding


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check-contract",
        help="check a draft's citations (and URLs/prices) against a brief's closed lists",
        description=__doc__,
    )
    p.add_argument("draft", metavar="DRAFT", help="the draft text file")
    p.add_argument("--brief", required=True, metavar="BRIEF.json", help="brief JSON file")
    p.add_argument(
        "--evidence", metavar="EVIDENCE.json", help="approved evidence set (urls, prices)"
    )
    p.add_argument("--json", action="store_true", help="print findings as JSON")
    p.set_defaults(handler=_check_contract)


def _check_contract(args: argparse.Namespace) -> int:
    from trustgate import _limits
    from trustgate.evidence.brief import Brief, EvidenceSet
    from trustgate.verifiers.contracts.citations import check_citations
    from trustgate.verifiers.integrity.check import check_integrity

    draft = _common.read_text_arg(args.draft, "draft")
    _limits.check_draft(draft, f"draft {args.draft!r}")
    brief = Brief.from_json(
        _common.read_json_object_arg(args.brief, "brief", "with a 'citations' list")
    )
    evidence = (
        EvidenceSet.from_json(
            _common.read_json_object_arg(
                args.evidence, "evidence set", "with 'urls' and 'prices' lists"
            )
        )
        if args.evidence
        else None
    )
    findings: list[Finding] = check_citations(draft, brief)
    if evidence is not None:
        findings += check_integrity(draft, evidence)
    violated = any(f.blocking for f in findings)
    if args.json:
        _common.dump_json(
            {
                "passed": not violated,
                "violations": sum(1 for f in findings if f.blocking),
                "findings": findings,
            }
        )
    else:
        _common.print_findings(findings)
        n = sum(1 for f in findings if f.blocking)
        print(f"{n} violation(s)" if violated else "no violation")
    return _common.EXIT_FAIL if violated else _common.EXIT_OK
