"""Shared plumbing for the CLI: argument errors, exit codes, JSON output."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel

from trustgate.errors import TrustgateError

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_BAD_INPUT = 2
EXIT_SIGPIPE = 141  # 128 + SIGPIPE, what a shell reports for a filter cut off

Handler = Callable[[argparse.Namespace], int]


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as exit 2 with one line, no usage dump.

    Every parser (top level and each command) takes ``--otlp-endpoint``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from trustgate.cli._telemetry import add_otlp_option

        add_otlp_option(self)

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def run(args: argparse.Namespace) -> int:
    from trustgate.cli._telemetry import otlp_session

    handler: Handler = args.handler
    try:
        with otlp_session(
            getattr(args, "otlp_endpoint", None),
            metrics=not getattr(args, "no_metrics", False),
        ):
            return handler(args)
    except TrustgateError as exc:
        print(f"trustgate: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:  # pragma: no cover
        return 130
    except BrokenPipeError:
        # The reader went away (`trustgate history | head`): stop quietly, like any
        # Unix filter, instead of a traceback; flushing stdout again must not raise.
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_SIGPIPE


def read_text_arg(path: str, what: str) -> str:
    """Read a file named on the command line, as a clear InputError when unusable."""
    from trustgate.errors import InputError

    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {what} {path!r}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{what} {path!r} is not valid UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None


def read_json_arg(path: str, what: str) -> Any:
    from trustgate.errors import InputError

    text = read_text_arg(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{what} {path!r} is not valid JSON: {exc}") from None


def dump_json(obj: Any) -> None:
    def default(o: Any) -> Any:
        if isinstance(o, BaseModel):
            return o.model_dump(mode="json")
        raise TypeError(type(o).__name__)

    json.dump(obj, sys.stdout, indent=2, default=default, ensure_ascii=False)
    sys.stdout.write("\n")


def print_findings(findings: Iterable[Any]) -> None:
    for f in findings:
        print(str(f))
