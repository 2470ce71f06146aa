"""``trustgate history``: every crossing with its findings and overrides — the audit trail.

Reads the report log of the trustgate database (``--database``, else
``TRUSTGATE_DATABASE_URL``, else ``.trustgate/trustgate.db``), oldest first.
``--since`` takes an ISO 8601 time or a duration back from now (``30m``, ``2h``,
``7d``). ``--reconcile`` first logs the reports the checkpoints hold and the log
lacks (only ever needed after a worker crashed, for threads nobody read since).
Exit 0 when the query ran (whatever the reports say), 2 on bad input or an
unreachable database.

Example::

    trustgate history --thread t1 --since 2h
    trustgate history --gate inspector --json --database postgresql://app@db/trust
    trustgate history --reconcile --database postgresql://app@db/trust
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING, Any

from trustgate.cli import _common

if TYPE_CHECKING:
    from trustgate._report import Report

logger = logging.getLogger(__name__)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "history",
        help="list logged crossings (reports, findings, overrides) from the database",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--thread", metavar="T", help="only this thread id")
    p.add_argument("--gate", metavar="G", help="only this gate")
    p.add_argument("--since", metavar="TIME", help="ISO 8601 time or a duration (30m, 2h, 7d)")
    p.add_argument("--limit", type=int, metavar="N", help="at most N reports")
    p.add_argument("--json", action="store_true", help="print the reports as JSON")
    p.add_argument(
        "--reconcile",
        action="store_true",
        help="first log what the checkpoints hold and the log lacks (after a crash)",
    )
    p.add_argument(
        "--database",
        metavar="URL",
        help="SQLite path or postgresql:// URL (default: env/.trustgate)",
    )
    p.set_defaults(handler=_history)


def _history(args: argparse.Namespace) -> int:
    from trustgate.persistence import history, parse_since

    since = parse_since(args.since)  # bad input fails before touching the database
    if args.reconcile:
        from trustgate.persistence import connect, open_report_log

        with open_report_log(args.database):
            pass  # an existing database only: reconciling must not create one
        with connect(args.database) as db:
            added = db.reconcile(args.thread)
        print(f"reconciled {added} report(s) into the log", file=sys.stderr)
    found = history(args.thread, args.gate, since, url=args.database, limit=args.limit)
    if args.json:
        _common.dump_json([r.to_json_dict() for r in found])
        return _common.EXIT_OK
    for r in found:
        _print_report(r)
    print(f"{len(found)} crossing(s)")
    return _common.EXIT_OK


def _print_report(r: Report) -> None:
    when = r.finished_at.strftime("%Y-%m-%d %H:%M:%S")
    released = "released" if r.released else "not released"
    print(f"{when}  thread={r.thread_id or '-'}  {r.gate} on {r.node}: {r.decision} ({released})")
    for f in r.failed:
        print(f"    {f}")
    for o in r.overrides:
        print(f"    OVERRIDE {o.kind} {o.target}: {o.reason}")
    if r.approval is not None:
        who = r.approval.who or "someone"
        print(f"    APPROVAL {r.approval.decision} by {who} at {r.approval.when.isoformat()}")
    if r.error:
        print(f"    ERROR {r.error}")
