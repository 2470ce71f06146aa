"""``trustgate demo``: the seed pipelines on bundled data, with scripted models.

Exit 0 when the run completed, whatever was caught; 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from trustgate.cli._common import EXIT_OK, dump_json
from trustgate.findings import Finding

_GREEN, _RED, _YELLOW, _DIM, _RESET = "\033[32m", "\033[31m", "\033[33m", "\033[2m", "\033[0m"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo", help="run the reference pipelines on bundled sample data", description=__doc__
    )
    p.add_argument("pipeline", nargs="?", default="all", choices=["code-review", "all"])
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_demo)


def _paint(text: str, colour: str, on: bool) -> str:
    return f"{colour}{text}{_RESET}" if on else text


def _row(f: Finding, colour: bool) -> str:
    mark = (
        _paint("PASS", _GREEN, colour)
        if f.passed
        else _paint("WARN", _YELLOW, colour)
        if not f.blocking
        else _paint("FAIL", _RED, colour)
    )
    subject = f.subject or ""
    return f"  {mark}  {subject[:58]:<58}  {f.code:<18} {f.message[:70]}"


def _demo(args: argparse.Namespace) -> int:
    from trustgate._demo import code_review

    colour = sys.stdout.isatty() and not args.json
    results: dict[str, Any] = {}
    with code_review.sample_repository() as root:
        for personality in ("honest", "inventing"):
            manifest, findings = code_review.run(personality, root)
            blocked = [f for f in findings if f.blocking]
            results[personality] = {
                "summary": manifest.summary,
                "items": [i.model_dump() for i in manifest.items],
                "findings": findings,
                "failed": len(blocked),
                "verdict": "REQUEST_CHANGES" if blocked else "APPROVE",
            }
            if args.json:
                continue
            print(_paint(f"== code review: {personality} builder ==", _DIM, colour))
            print(f"  claimed: {manifest.summary}")
            for f in findings:
                print(_row(f, colour))
            verdict = results[personality]["verdict"]
            note = (
                " (Overridden: evidence verification failed for already_correct claims)"
                if blocked
                else ""
            )
            print(f"  verdict: {_paint(verdict, _RED if blocked else _GREEN, colour)}{note}\n")
    if args.json:
        dump_json({"pipelines": {"code-review": results}})
    return EXIT_OK
