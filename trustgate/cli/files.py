"""``trustgate replay`` and ``trustgate acquire``: file evidence from the shell."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from trustgate.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_FAIL,
    EXIT_OK,
    bounded_int,
    dump_json,
    print_findings,
    read_json_arg,
)
from trustgate.errors import ConfigurationError, EvidenceRefused, GitError, InputError

if TYPE_CHECKING:
    from trustgate.evidence.workspace import Workspace

MAX_WINDOW = 10_000
"""The widest ``--window``: a drift past this many lines is no longer the cited line."""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "replay",
        help="replay a changes manifest's citations against a root",
        description="Exit 0: all pass; 1: any fails; 2: bad input.",
    )
    p.add_argument("manifest", metavar="MANIFEST.json")
    p.add_argument("--root", required=True, metavar="DIR")
    p.add_argument("--base", default="HEAD", help="git base for 'changed' items (HEAD)")
    p.add_argument(
        "--window",
        type=bounded_int(0, MAX_WINDOW),
        default=3,
        metavar="N",
        help=f"lines a cited line may have drifted (0 to {MAX_WINDOW:,}; default 3)",
    )
    p.add_argument("--json", action="store_true", help="print findings as JSON")
    p.set_defaults(handler=_replay)

    a = sub.add_parser(
        "acquire",
        help="freeze the bytes at PATH[:START[-END]] as an artifact",
        description="Exit 0: acquired; 1: refused; 2: bad input.",
    )
    a.add_argument("locator", metavar="PATH[:START[-END]]")
    a.add_argument("--root", required=True, metavar="DIR")
    a.add_argument("--rev", default=None, help="read at this git revision")
    a.add_argument("--scope", action="append", default=None, help="allowed sub-path (repeat)")
    a.add_argument("--json", action="store_true")
    a.set_defaults(handler=_acquire)


def _workspace(root: str, scopes: list[str] | None = None) -> Workspace:
    from trustgate.evidence.workspace import Workspace

    try:
        return Workspace(root, scopes)
    except ConfigurationError as exc:
        raise InputError(str(exc)) from None


def _replay(args: argparse.Namespace) -> int:
    if args.window < 0:
        raise InputError("--window must be >= 0")
    from trustgate._claims import parse_manifest
    from trustgate.verifiers.files.citations import replay_manifest

    raw = read_json_arg(args.manifest, "manifest")
    parse_manifest(raw)  # not a manifest at all, or past a cap: bad input (exit 2)
    workspace = _workspace(args.root)
    findings = replay_manifest(raw, workspace, window=args.window, base=args.base)
    for f in findings:
        if f.code == "unknown_revision":  # --base names nothing: the command's input
            raise InputError(f"--base {args.base!r}: {f.message}")
    failed = [f for f in findings if f.blocking]
    if args.json:
        dump_json({"passed": not failed, "findings": findings})
    else:
        print_findings(findings)
        # the citations of a file that replay are one finding: count the citations
        passed = sum(len(f.detail.get("citations", ())) or 1 for f in findings if not f.blocking)
        print(f"{passed} passed, {len(failed)} failed")
    return EXIT_FAIL if failed else EXIT_OK


def _acquire(args: argparse.Namespace) -> int:
    from trustgate._claims import Locator

    workspace = _workspace(args.root, args.scope)
    locator = Locator.parse(args.locator, revision=args.rev)  # a bad one: ClaimParseError
    try:
        artifact = workspace.acquire(locator)
    except EvidenceRefused as exc:
        if exc.code == "unknown_revision":  # --rev names nothing: the command's input
            raise InputError(f"--rev {args.rev!r}: {exc.message}") from None
        if args.json:
            dump_json({"acquired": False, "code": exc.code, "message": exc.message})
        else:
            print(f"refused {exc.code}: {exc.message}")
        return EXIT_FAIL
    except GitError as exc:
        raise InputError(str(exc)) from None
    if args.json:
        dump_json({"acquired": True, "artifact": artifact})
    else:
        print(f"id           {artifact.id}")
        print(f"uri          {artifact.uri}")
        print(f"content_hash {artifact.content_hash}")
        print(f"verification {artifact.verification}")
        print("excerpt:")
        print(artifact.excerpt, end="" if (artifact.excerpt or "").endswith("\n") else "\n")
    return EXIT_OK


__all__ = ["EXIT_BAD_INPUT", "register"]
