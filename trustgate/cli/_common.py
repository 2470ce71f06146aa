"""Shared plumbing for the CLI: argument errors, exit codes, reading inputs, output.

Every way a command can go wrong ends in one line on stderr and a documented exit
code, never a traceback: bad input (empty, binary, not UTF-8, not JSON, nested or
sized past :mod:`trustgate._limits`, a number out of range) is exit 2; output that
cannot be written (stdout closed, a full device) is exit 2 with "cannot write
output"; a gate that halted a run the command made is exit 4 (an outcome, not bad
input); a reader that went away is exit 141, quietly; and anything unexpected is
exit 2 with "internal error".

Log records reach stderr as one line each too (:func:`cli_logging`): when the host
process configured no logging, Python would otherwise print them through its
last-resort handler, tracebacks included.

Importing this module (and every command module) costs next to nothing: what a
command needs is imported when it runs, so ``trustgate --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

from trustgate.errors import GateHalted, TrustgateError

logger = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_BAD_INPUT = 2
EXIT_HALTED = 4  # a gate stopped a run the command made: the gate worked, the input was fine
EXIT_SIGPIPE = 141  # 128 + SIGPIPE, what a shell reports for a filter cut off

Handler = Callable[[argparse.Namespace], int]

_SHOWN = "trustgate_cli_shown"
"""Set on a log record whose message the command already printed as its error line."""


class OneLineHandler(logging.Handler):
    """Each log record as one ``trustgate: warning: ...`` line on stderr, never with a
    traceback (the traceback stays on the record for handlers the host configured).

    Writes to whatever ``sys.stderr`` is at the time, so a redirected stderr is honoured.
    """

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, _SHOWN, False):
            return  # run() prints this one itself, as the command's one error line
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a record whose arguments do not fit its format
            message = str(record.msg)
        line = " ".join(message.splitlines()) or record.levelname.lower()
        try:
            sys.stderr.write(f"trustgate: {record.levelname.lower()}: {line}\n")
            sys.stderr.flush()
        except (OSError, AttributeError, ValueError):
            return  # stderr is closed too: there is nowhere left to say it


@contextmanager
def cli_logging() -> Iterator[None]:
    """Route logging through :class:`OneLineHandler` for the duration of a command.

    When the root logger has no handler (a plain ``trustgate`` process), one is
    attached; Python's last-resort handler, used for loggers whose records reach no
    handler, is replaced as well. A host that configured logging (an application
    calling ``main()``, pytest) keeps its own handlers.
    """
    handler = OneLineHandler(logging.WARNING)
    root = logging.getLogger()
    attach = not root.handlers
    previous = logging.lastResort
    logging.lastResort = handler
    if attach:
        root.addHandler(handler)
    try:
        yield
    finally:
        if attach:
            root.removeHandler(handler)
        logging.lastResort = previous


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """argparse type: a whole number in ``[low, high]``, else a usage error (exit 2;
    argparse names the flag)."""

    def parse(text: str) -> int:
        shown = text if len(text) <= 40 else text[:40] + "..."
        try:
            value = int(text.strip(), 10)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"takes a whole number, not '{printable(shown)}'"
            ) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"must be between {low:,} and {high:,}, not {printable(shown)}"
            )
        return value

    return parse


def printable(text: object) -> str:
    """``text`` with every character a terminal would act on (control characters,
    bidirectional overrides, line breaks) shown as an escape: what a database row holds
    must not be able to rewrite the lines printed around it."""
    out = []
    for ch in str(text):
        if ch.isprintable():
            out.append(ch)
        elif 0xDC80 <= ord(ch) <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out)


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
        # the traceback goes to the host's handlers only; on stderr the line below says it
        logger.warning(
            "internal error in %s",
            getattr(args, "command", "?"),
            exc_info=True,
            extra={_SHOWN: True},
        )
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
