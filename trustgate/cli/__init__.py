"""The ``trustgate`` command.

Exit codes are part of the interface so the command can sit in a user's CI:
0 = everything checked passed, 1 = something failed or was removed (for
``history``: a row of the report log is not sealed), 2 = bad input, or output that
cannot be written (one line on stderr, never a traceback), 3 = audit only: a
crossing could not be decided, 4 = a gate halted a run the command made (an
outcome, not bad input).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from trustgate.cli import _common
from trustgate.cli import audit as _audit
from trustgate.cli import contracts as _contracts
from trustgate.cli import demo as _demo
from trustgate.cli import drafts as _drafts
from trustgate.cli import files as _files
from trustgate.cli import history as _history

__all__ = ["main"]

# Each command family lives in its own module exposing ``register(subparsers)``.
_FAMILIES = [_files, _contracts, _drafts, _demo, _history, _audit]


def build_parser() -> argparse.ArgumentParser:
    parser = _common.Parser(prog="trustgate", description=__doc__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for family in _FAMILIES:
        family.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    with _common.cli_logging():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except _common.UsageError as exc:
        _common.error(str(exc))
        return _common.EXIT_BAD_INPUT
    if not _common.stdout_usable():
        _common.error("cannot write output: standard output is closed")
        return _common.EXIT_BAD_INPUT
    return _common.run(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
