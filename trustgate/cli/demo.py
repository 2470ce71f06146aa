"""``trustgate demo``: the four reference pipelines, run with models that invent, on bundled data.

For every crossing it shows what the model claimed, what was checked, what was
overridden and why, then the final artefact (the review verdict, the case file, the
postmortem with its gaps, the compliance document). Checkpoints go to the embedded
SQLite database under ``.trustgate/`` (or ``--database-url`` /
``TRUSTGATE_DATABASE_URL``), so ``trustgate history`` lists the crossings afterwards.

Exit 0 when the runs completed, whatever was caught (a halt is an outcome); 2 on bad
input.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from trustgate.cli._common import EXIT_OK

__all__ = ["register"]

CHOICES = ["code-review", "investigation", "postmortem", "compliance", "all"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo", help="run the reference pipelines on bundled sample data", description=__doc__
    )
    p.add_argument("pipeline", nargs="?", default="all", choices=CHOICES)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--honest",
        action="store_true",
        help="run the honest models instead: nothing they say is overridden (the file "
        "the investigation changes during its pause is still caught)",
    )
    p.add_argument(
        "--database-url",
        metavar="URL",
        default=None,
        help="SQLite path or postgresql:// URL (default: TRUSTGATE_DATABASE_URL, "
        "else .trustgate/trustgate.db)",
    )
    p.add_argument(
        "--model",
        metavar="PROVIDER:MODEL",
        default=None,
        help="run every role on this chat model (init_chat_model), e.g. openai:gpt-4.1-mini; "
        "default: TRUSTGATE_MODEL when set, else the scripted models",
    )
    p.add_argument(
        "--all-findings", action="store_true", help="list passing findings too, not only failures"
    )
    p.set_defaults(handler=_demo)


class _Progress:
    """Progress on stderr: one rewritten line on a terminal, else one line per node."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.width = 0

    def __call__(self, message: str) -> None:
        if self.tty:
            pad = max(0, self.width - len(message))
            self.stream.write(f"\r  … {message}{' ' * pad}")
            self.width = len(message)
        else:
            self.stream.write(f"  … {message}\n")
        self.stream.flush()

    def done(self) -> None:
        if self.tty and self.width:
            self.stream.write("\r" + " " * (self.width + 6) + "\r")
            self.stream.flush()
            self.width = 0


def _print_run(run: Any, colour: bool, passes: bool) -> None:
    from trustgate._demo.runner import claimed
    from trustgate._demo.verdict import verdict
    from trustgate._render import paint, report_text

    rule = "═" * 78
    status = "stopped by a gate, as designed" if run.status == "halted" else run.status
    print(paint(rule, "dim", colour))
    print(paint(run.title, "bold", colour))
    print(paint(f"thread {run.thread_id} · {status}", "dim", colour))
    print(paint(rule, "dim", colour))
    for i, report in enumerate(run.reports, start=1):
        print(
            f"\n[{i}] " + report_text(report, colour=colour, claimed=claimed(report), passes=passes)
        )
    if run.steps:
        print()
        for step in run.steps:
            print(paint("  person  ", "blue", colour) + step)
    overrides = sum(len(r.overrides) for r in run.reports)
    caught = sum(1 for r in run.reports if r.decision != "pass")
    print(
        "\n"
        + paint(
            f"  {len(run.reports)} crossing(s), {caught} acted on, {overrides} override(s)",
            "bold",
            colour,
        )
    )
    print(paint("\n── final artefact " + "─" * 60, "dim", colour))
    print(run.artefact.rstrip())
    print("\n" + paint("Verdict: ", "bold", colour) + verdict(run))
    print()


def _demo(args: argparse.Namespace) -> int:
    from trustgate._demo.runner import SCENARIOS, dumps, run_scenario
    from trustgate.persistence import connect

    names = list(SCENARIOS) if args.pipeline == "all" else [args.pipeline]
    colour = sys.stdout.isatty() and not args.json
    progress = _Progress(sys.stderr)
    if not args.json:
        from trustgate._demo.verdict import INTRO, INTRO_HONEST

        print((INTRO_HONEST if args.honest else INTRO) + "\n", flush=True)
    runs = []
    with connect(args.database_url) as db:
        for name in names:
            progress(f"{name}: starting")
            run = run_scenario(
                name,
                db.checkpointer,
                personality="honest" if args.honest else "inventing",
                progress=progress,
                model=args.model,
            )
            progress.done()
            runs.append(run)
            if not args.json:
                _print_run(run, colour, args.all_findings)
    if args.json:
        print(dumps(runs))
    else:
        print(f"Crossings recorded in {db.url}; list them with: {_history_command(args)}")
    return EXIT_OK


def _history_command(args: argparse.Namespace) -> str:
    """The command that lists what the demo recorded, as this shell can run it: the
    ledger key the demo was given, this executable when ``trustgate`` is not on PATH."""
    import os
    import shlex
    import shutil

    parts = []
    key_file = os.environ.get("TRUSTGATE_LEDGER_KEY_FILE")
    if key_file:
        parts.append(f"TRUSTGATE_LEDGER_KEY_FILE={shlex.quote(key_file)}")
    exe = sys.argv[0] if os.path.basename(sys.argv[0]) == "trustgate" else "trustgate"
    parts.append("trustgate" if shutil.which("trustgate") == exe else shlex.quote(exe))
    parts.append("history")
    if args.database_url:
        parts += ["--database", shlex.quote(args.database_url)]
    return " ".join(parts)
