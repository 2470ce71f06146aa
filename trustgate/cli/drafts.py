"""``trustgate check-draft``: delete what a draft cannot cite from its record.

Prints the redacted draft (deleted sentences gone, a gap question in each hole,
invalid citation markers removed) or, with ``--json``, the full verdict. Exit 0 when
nothing was removed, 1 when anything was (an invalid citation marker alone counts),
2 on bad input (one line, no traceback).

The record is a text file whose lines are cited by number (line 12 is ``[[12]]``),
or, when it ends in ``.json``, an object mapping ids to line text.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from trustgate.cli import _common

if TYPE_CHECKING:
    from trustgate.evidence.record import Record


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check-draft",
        help="delete what a draft cannot cite from its record; leave gap questions",
        description=__doc__,
    )
    p.add_argument("draft", metavar="DRAFT", help="the draft (Markdown or text) file")
    p.add_argument(
        "--record", required=True, metavar="RECORD", help="record file (.txt lines or .json)"
    )
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    p.set_defaults(handler=_check_draft)


def _load_record(path: str) -> Record:
    from trustgate.evidence.record import Record

    if path.lower().endswith(".json"):
        data = _common.read_json_object_arg(path, "record", "of id -> line text")
        return Record(lines=data)
    return Record.from_text(_common.read_text_arg(path, "record"))


def _check_draft(args: argparse.Namespace) -> int:
    draft = _common.read_text_arg(args.draft, "draft")  # empty or binary: exit 2
    record = _load_record(args.record)
    from trustgate.verifiers.drafts.verify import verify_draft

    verdict = verify_draft(draft, record)
    if args.json:
        _common.dump_json(
            {
                "clean": verdict.clean,
                "text": verdict.text,
                "removed": [r.model_dump(mode="json") for r in verdict.removed],
                "gaps": [g.model_dump(mode="json") for g in verdict.gaps],
                "invalid_citations": [c.model_dump(mode="json") for c in verdict.invalid_citations],
                "findings": verdict.findings,
            }
        )
    else:
        sys.stdout.write(verdict.text if verdict.text.endswith("\n") else verdict.text + "\n")
        print(
            f"trustgate: {len(verdict.removed)} sentence(s) removed, "
            f"{len(verdict.invalid_citations)} invalid citation(s), {len(verdict.gaps)} gap(s)",
            file=sys.stderr,
        )
    return _common.EXIT_OK if verdict.clean else _common.EXIT_FAIL
