"""Shared plumbing for the CLI: argument errors, exit codes, reading inputs, output.

Every way a command can go wrong ends in one line on stderr and a documented exit
code, never a traceback: bad input (empty, binary, not UTF-8, not JSON, nested or
sized past :mod:`trustgate._limits`) is exit 2; output that cannot be written (stdout
closed, a full device) is exit 2 with "cannot write output"; a gate that halted a run
the command made is exit 4 (an outcome, not bad input); a reader that went away is
exit 141, quietly; and anything unexpected is exit 2 with "internal error".

Importing this module (and every command module) costs next to nothing: what a
command needs is imported when it runs, so ``trustgate --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

from trustgate.errors import GateHalted, TrustgateError

logger = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_BAD_INPUT = 2
EXIT_HALTED = 4  # a gate stopped a run the command made: the gate worked, the input was fine
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


def error(message: str) -> None:
    """Print one line on stderr (a message with line breaks is joined into one)."""
    line = " ".join(str(message).splitlines()) or "error"
    try:
        print(f"trustgate: {line}", file=sys.stderr)
    except (OSError, AttributeError, ValueError):  # stderr closed too: the exit code says it
        logger.warning("stderr is unusable; lost message: %s", line)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so flushing what is still buffered cannot fail again
    (at exit that would print a second message)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError as exc:
        logger.warning("could not silence stdout: %s", exc)


def stdout_usable() -> bool:
    """False when the process was started with stdout closed (``>&-``)."""
    return sys.stdout is not None


def run(args: argparse.Namespace) -> int:
    from trustgate.cli._telemetry import otlp_session

    handler: Handler = args.handler
    try:
        with otlp_session(
            getattr(args, "otlp_endpoint", None),
            metrics=not getattr(args, "no_metrics", False),
        ):
            code = handler(args)
        sys.stdout.flush()  # a full device fails here for short output
        return code
    except TrustgateError as exc:
        error(str(exc))
        return EXIT_BAD_INPUT
    except GateHalted as exc:
        error(str(exc))
        return EXIT_HALTED
    except KeyboardInterrupt:  # pragma: no cover
        return 130
    except BrokenPipeError:
        # The reader went away (`trustgate history | head`): stop quietly, like any
        # Unix filter, instead of a traceback; flushing stdout again must not raise.
        _silence_stdout()
        return EXIT_SIGPIPE
    except OSError as exc:
        if exc.filename is not None:  # a file the command opened, not its output
            error(f"{exc.filename}: {exc.strerror or exc}")
            return EXIT_BAD_INPUT
        _silence_stdout()
        error(f"cannot write output: {exc.strerror or exc}")
        return EXIT_BAD_INPUT
    except (RecursionError, MemoryError) as exc:
        error(f"input too large or too deeply nested to process ({type(exc).__name__})")
        return EXIT_BAD_INPUT
    except Exception as exc:  # the last line of defence: one line, never a traceback
        logger.warning("internal error in %s", getattr(args, "command", "?"), exc_info=True)
        error(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_BAD_INPUT


def read_bytes_arg(path: str, what: str, *, max_bytes: int | None = None) -> bytes:
    """The bytes of a file named on the command line; empty, binary or oversized files
    and unreadable paths are an ``InputError`` (exit 2)."""
    from trustgate import _limits
    from trustgate.errors import InputError

    cap = _limits.MAX_CLAIM_BYTES if max_bytes is None else max_bytes
    try:
        with open(path, "rb") as fh:
            data = fh.read(cap + 1)
    except OSError as exc:
        raise InputError(f"cannot read {what} {path!r}: {exc.strerror or exc}") from None
    if len(data) > cap:
        raise InputError(f"{what} {path!r} is larger than the {cap:,}-byte cap")
    if not data.strip():
        raise InputError(f"{what} {path!r} is empty")
    if b"\x00" in data[:8192]:
        raise InputError(f"{what} {path!r} is binary (a NUL byte in its first 8 KiB), not text")
    return data


def read_text_arg(path: str, what: str) -> str:
    """Read a text file named on the command line, as a clear InputError when unusable."""
    from trustgate.errors import InputError

    data = read_bytes_arg(path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{what} {path!r} is not valid UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None


def json_kind(value: Any) -> str:
    """How a decoded JSON value is called in messages ("a JSON string", ...)."""
    if value is None:
        return "JSON null"
    if isinstance(value, bool):
        return "a JSON boolean"
    if isinstance(value, (int, float)):
        return "a JSON number"
    if isinstance(value, str):
        return "a JSON string"
    if isinstance(value, list):
        return "a JSON array"
    return "a JSON object"


def read_json_arg(path: str, what: str) -> Any:
    """A JSON file, within the caps of :mod:`trustgate._limits` (depth, size)."""
    from trustgate import _limits

    return _limits.loads_json(read_text_arg(path, what), f"{what} {path!r}")


def read_json_object_arg(path: str, what: str, shape: str) -> dict[str, Any]:
    """A JSON file that must hold an object; anything else is named in the message."""
    from trustgate.errors import InputError

    data = read_json_arg(path, what)
    if not isinstance(data, dict):
        raise InputError(f"{what} {path!r} must be a JSON object ({shape}), got {json_kind(data)}")
    return data


def dump_json(obj: Any) -> None:
    from pydantic import BaseModel

    def default(o: Any) -> Any:
        if isinstance(o, BaseModel):
            return o.model_dump(mode="json")
        raise TypeError(type(o).__name__)

    json.dump(obj, sys.stdout, indent=2, default=default, ensure_ascii=False)
    sys.stdout.write("\n")


def print_findings(findings: Iterable[Any]) -> None:
    for f in findings:
        print(str(f))
