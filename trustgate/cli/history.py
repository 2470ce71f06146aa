"""``trustgate history``: every crossing with its findings and overrides — the audit trail.

Reads the report log of the trustgate database (``--database``, else
``TRUSTGATE_DATABASE_URL``, else ``.trustgate/trustgate.db``), oldest first.
``--since`` takes an ISO 8601 time or a duration back from now (``30m``, ``2h``,
``7d``). ``--reconcile`` first logs the reports the checkpoints hold and the log
lacks (only ever needed after a worker crashed, for threads nobody read since).

Reading opens the database read-only and changes nothing in it (``--reconcile``
writes). Every row's seal is checked with the ledger key (``TRUSTGATE_LEDGER_KEY`` or
``TRUSTGATE_LEDGER_KEY_FILE``, as for the workers): a row that is not sealed (inserted
by hand, edited after it was written, unreadable) is never listed as a crossing but
marked ``NOT SEALED`` in its place, with the reason, and the others are listed as
usual.

Exit 0 when the query ran and every row is sealed (whatever the reports say), 1
when some row is not sealed, 2 on bad input, an unreachable database or no key.

Example::

    trustgate history --thread t1 --since 2h
    trustgate history --gate inspector --json --database postgresql://app@db/trust
    trustgate history --reconcile --database postgresql://app@db/trust
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import TYPE_CHECKING, Any

from trustgate.cli import _common

if TYPE_CHECKING:
    from trustgate._report import Report
    from trustgate.persistence import LoggedRow

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
    p.add_argument(
        "--limit",
        type=_limit,
        metavar="N",
        help="at most N rows (0 to 1,000,000,000)",
    )
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


def _limit(text: str) -> int:
    from trustgate.persistence._log import MAX_LIMIT

    return _common.bounded_int(0, MAX_LIMIT)(text)


def _filter(value: str | None, flag: str) -> str | None:
    """A ``--thread``/``--gate`` value a database can compare (bytes from the shell
    that are not UTF-8 arrive as lone surrogates)."""
    from trustgate.errors import InputError

    if value is None:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{flag} '{_common.printable(value)}' is not valid UTF-8") from None
    if "\x00" in value:
        raise InputError(f"{flag} contains a NUL character")
    return value


def _history(args: argparse.Namespace) -> int:
    from trustgate.persistence import history, parse_since

    # bad input fails before touching the database
    thread, gate = _filter(args.thread, "--thread"), _filter(args.gate, "--gate")
    since = parse_since(args.since)
    if args.reconcile:
        from trustgate.persistence import connect, open_report_log

        with open_report_log(args.database):
            pass  # an existing database with a report log only: reconciling creates none
        with connect(args.database) as db:
            added = db.reconcile(thread)
        print(f"reconciled {added} report(s) into the log", file=sys.stderr)
    found = history(thread, gate, since, url=args.database, limit=args.limit)
    refused = found.refused
    if args.json:
        _common.dump_json([_json_row(row) for row in found.rows])
    else:
        for row in found.rows:
            if row.report is not None:
                _print_report(row.report)
            else:
                _print_refused(row)
        tail = f"; {len(refused)} row(s) NOT SEALED, not counted" if refused else ""
        print(f"{len(found)} crossing(s){tail}")
    return _common.EXIT_FAIL if refused else _common.EXIT_OK


def _json_row(row: LoggedRow) -> dict[str, Any]:
    if row.report is not None:
        return {**row.report.to_json_dict(), "sealed": True}
    return {
        "sealed": False,
        "status": row.status,
        "reason": row.reason,
        "id": row.id,
        "thread_id": row.thread_id,
        "gate": row.gate,
        "node": row.node,
        "finished_at": row.finished_at,
        "claimed_decision": row.decision,
    }


def _print_refused(row: LoggedRow) -> None:
    p = _common.printable
    when = p((row.finished_at or "?")[:19].replace("T", " "))
    print(
        f"{when}  thread={p(row.thread_id or '-')}  NOT SEALED ({row.status}) "
        f"row {p((row.id or '?')[:16])}: not a crossing record"
    )
    print(f"    {p(row.reason or '')}")
    print(
        f"    the row claims: {p(row.gate or '?')} on {p(row.node or '?')}, "
        f"decision {p(row.decision or '?')}"
    )


def _print_report(r: Report) -> None:
    p = _common.printable
    when = r.finished_at.strftime("%Y-%m-%d %H:%M:%S")
    released = "released" if r.released else "not released"
    print(
        f"{when}  thread={p(r.thread_id or '-')}  {p(r.gate)} on {p(r.node)}: "
        f"{r.decision} ({released})"
    )
    for f in r.failed:
        print(f"    {p(f)}")
    for o in r.overrides:
        # the value a configured override set is the gate's own, not the model's
        value = f" → {p(json.dumps(o.after, default=str))}" if o.configured else ""
        print(f"    OVERRIDE {o.kind} {p(o.target)}{value}: {p(o.reason)}")
    if r.approval is not None:
        who = r.approval.who or "someone"
        print(f"    APPROVAL {r.approval.decision} by {p(who)} at {r.approval.when.isoformat()}")
    if r.error:
        print(f"    ERROR {p(r.error)}")
