"""Outcomes apart from usage errors, their exit codes, and no silent ``except``."""

from __future__ import annotations

import argparse
import ast
import logging
from pathlib import Path

import pytest

from trustgate import ConfigurationError, GateHalted, Report, TrustgateError
from trustgate.cli import _common
from trustgate.errors import ClaimParseError, TrustgateOutcome

ROOT = Path(__file__).resolve().parents[2]


def _report() -> Report:
    from trustgate import Finding

    return Report(
        gate="g",
        node="n",
        decision="halted",
        released=False,
        findings=[Finding.failed("v", "bad", "the claim is false")],
    )


def test_a_halt_is_an_outcome_not_a_usage_error() -> None:
    halted = GateHalted(_report())
    assert isinstance(halted, TrustgateOutcome)
    assert not isinstance(halted, TrustgateError)
    assert not issubclass(TrustgateOutcome, TrustgateError)
    with pytest.raises(GateHalted):  # `except TrustgateError` does not swallow a halt
        try:
            raise halted
        except TrustgateError:  # pragma: no cover - must not match
            pytest.fail("a halt was caught as a usage error")
    assert issubclass(ConfigurationError, TrustgateError)
    assert not issubclass(ClaimParseError, ValueError)


def test_a_halt_inside_a_graph_is_both_a_halt_and_a_bubble() -> None:
    from langgraph.errors import GraphBubbleUp

    from trustgate import _compat
    from trustgate.graph._node import HaltedInGraph

    cls = _compat.halted_in_graph()
    assert cls is HaltedInGraph
    assert issubclass(cls, GateHalted) and issubclass(cls, GraphBubbleUp)


def _run(handler: object, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    args = argparse.Namespace(handler=handler, command="probe")
    code = _common.run(args)
    return code, capsys.readouterr().err


def test_cli_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    def halts(_args: argparse.Namespace) -> int:
        raise GateHalted(_report())

    def bad_input(_args: argparse.Namespace) -> int:
        raise ClaimParseError("not a manifest")

    def fine(_args: argparse.Namespace) -> int:
        return _common.EXIT_OK

    code, err = _run(halts, capsys)
    assert code == _common.EXIT_HALTED == 4
    assert err.count("\n") == 1 and "halted" in err and "v/bad" in err
    assert _run(bad_input, capsys) == (_common.EXIT_BAD_INPUT, "trustgate: not a manifest\n")
    assert _run(fine, capsys)[0] == 0


def test_exit_codes_are_documented() -> None:
    import trustgate.cli

    doc = trustgate.cli.__doc__ or ""
    for code in ("0 =", "1 =", "2 =", "3 =", "4 ="):
        assert code in doc, code


# --- no silent except -------------------------------------------------------------------

# Broad handlers that neither raise nor log, and why that is right (file, first line).
_ALLOWED = {
    # the error is kept and raised after the retries, as a VerifierFailure
    ("trustgate/_gate.py", "last, code = (exc, _failure_code(exc))"),
    # handed to the caller's future, which raises it
    ("trustgate/_executor.py", "job.future.set_exception(exc)"),
    # _failed returns a parent command as the node's output and raises everything else
    ("trustgate/graph/_node.py", "value, raised, _hold = self._failed(hold, exc, pause=False)"),
    ("trustgate/graph/_node.py", "return self._failed(hold, exc)"),
    # a task run in line inside a guarded node: its future raises it where it is read
    ("trustgate/graph/_streams.py", "fut.set_exception(exc)"),
    # the audit's sample run reports it as its outcome; failed() logs it at WARNING
    ("trustgate/_audit/_sample_run.py", "started.failed(exc)"),
    # a read's reconcile must not fail the read; _read_left_gap logs it at WARNING
    ("trustgate/persistence/_saver.py", "_read_left_gap(exc, item)"),
    # a report that could not be saved: thrown into the crossing loop, which logs it and
    # raises the saver's error with a note (nothing is released)
    ("trustgate/graph/_node.py", "effect = loop.throw(failed)"),
}
_LOGS = ("logger.warning", "logger.error", "logger.exception", "logger.critical")
_BROAD = {"Exception", "BaseException"}


def _modules() -> list[Path]:
    # the old persistence module is replaced by the persistence package, checked here too
    old = {"trustgate/persistence.py", "trustgate/_persistence_pg.py"}
    return sorted(
        p
        for p in ROOT.glob("trustgate/**/*.py")
        if "_demo/data" not in str(p) and str(p.relative_to(ROOT)) not in old
    )


def _broad(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(ast.unparse(t) in _BROAD for t in types)


def test_no_broad_except_swallows_silently() -> None:
    silent: list[str] = []
    for path in _modules():
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ExceptHandler) and _broad(node):
                body = ast.Module(body=node.body, type_ignores=[])
                text = ast.unparse(body)
                raises = any(isinstance(n, ast.Raise) for n in ast.walk(body))
                logs = any(call in text for call in _LOGS)
                failed_finding = "Finding.failed(" in text  # a failed inspection, reported
                first = text.splitlines()[0] if text else ""
                if not (raises or logs or failed_finding or (rel, first) in _ALLOWED):
                    silent.append(f"{rel}:{node.lineno}: {first}")
            if (
                isinstance(node, ast.Call)
                and ast.unparse(node.func).endswith("suppress")
                and any(ast.unparse(a) in _BROAD for a in node.args)
            ):
                silent.append(f"{rel}:{node.lineno}: suppress({ast.unparse(node.args[0])})")
    assert not silent, "\n".join(silent)


def test_modules_that_log_use_their_own_logger() -> None:
    """``logging.getLogger(__name__)``, so a user can turn one part up or down."""
    problems: list[str] = []
    for path in _modules():
        text = path.read_text()
        rel = str(path.relative_to(ROOT))
        if "logger." in text and "logger = logging.getLogger(__name__)" not in text:
            problems.append(f"{rel}: logs without a module logger")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = ast.unparse(node.func.value)
                if owner == "logging" and node.func.attr in (
                    "debug",
                    "info",
                    "warning",
                    "error",
                    "exception",
                ):
                    problems.append(f"{rel}:{node.lineno}: logs on the root logger")
    assert not problems, problems


def test_a_swallowed_inspection_error_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    """The audit's walk through a node's objects: an object that refuses inspection is
    skipped, with a warning saying what was not seen."""
    from trustgate._audit._crossings import _static_crossings
    from trustgate._audit._discovery import _Finder

    class Refuses:
        @property
        def __dict__(self) -> dict[str, object]:  # type: ignore[override]
            raise RuntimeError("no peeking")

    with caplog.at_level(logging.WARNING, logger="trustgate._audit._discovery"):
        _Finder(subgraphs=_static_crossings).walk(Refuses(), "node 'x'")
    assert any("could not be inspected" in r.getMessage() for r in caplog.records)
