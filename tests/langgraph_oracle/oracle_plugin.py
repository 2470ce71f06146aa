"""pytest plugin loaded into LangGraph's own test run (``-p oracle_plugin``).

It does three things, steered by environment variables the harness sets:

* keeps only in-memory backends: LangGraph's conftest parametrizes checkpointer,
  store and cache fixtures over SQLite/PostgreSQL/Redis; those items are deselected;
* with ``TRUSTGATE_ORACLE_MODE=guarded``, patches ``StateGraph.compile`` so every
  compiled ``StateGraph`` is returned guarded by an always-pass gate on every node
  (``oracle_gates.always_pass_gate``); ``control`` patches it to guard nothing;
* writes one JSON record per test (outcome, first line of the failure, the exception
  message with pytest's full assertion diff, the frames, what was guarded) to
  ``TRUSTGATE_ORACLE_RESULTS``, for the harness to compare and categorise.

It runs in every xdist worker (the patch) and in the controller (the record).
"""

from __future__ import annotations

import contextvars
import functools
import json
import logging
import os
import re
import threading
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

logger = logging.getLogger(__name__)

MODE_ENV = "TRUSTGATE_ORACLE_MODE"
RESULTS_ENV = "TRUSTGATE_ORACLE_RESULTS"

# LangGraph's backend fixtures and the parameter values that are in-memory.
_BACKEND_FIXTURES = frozenset(
    {"sync_checkpointer", "async_checkpointer", "sync_store", "async_store", "cache"}
)
_IN_MEMORY = frozenset({"memory", "in_memory", "memory_migrate_sends"})

_MAX_MESSAGE_LINES = 120
_MAX_FRAMES = 40

# guard() compiles internally: compiles made while it runs are left alone.
_inside_guard: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "trustgate_oracle_inside_guard", default=False
)
_lock = threading.Lock()
_current: dict[str, Any] = {"nodeid": None}
_stats: dict[str, dict[str, Any]] = {}


def _stat(key: str, value: Any) -> None:
    nodeid = _current["nodeid"] or "<collection>"
    with _lock:
        entry = _stats.setdefault(nodeid, {"guarded": 0, "skipped": 0, "refused": []})
        if key == "refused":
            entry["refused"].append(value)
        else:
            entry[key] += 1


def _install_guarding_compile(*, control: bool = False) -> None:
    """Patch ``StateGraph.compile``; with ``control`` the patch guards nothing (the
    harness's control run: what the patch and a second import of trustgate cost
    in divergences, which must be none)."""
    from langgraph.graph import StateGraph
    from langgraph.graph.state import CompiledStateGraph
    from oracle_gates import already_guarded, gates_for

    import trustgate

    original = StateGraph.compile

    @functools.wraps(original)
    def compile_guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        compiled = original(self, *args, **kwargs)
        if _inside_guard.get() or not isinstance(compiled, CompiledStateGraph):
            return compiled
        gates = (
            {} if control or already_guarded(compiled) else gates_for(list(compiled.builder.nodes))
        )
        if not gates:
            _stat("skipped", None)
            return compiled
        token = _inside_guard.set(True)
        try:
            guarded = trustgate.guard(compiled, gates)
        except Exception as exc:
            _stat("refused", f"{type(exc).__name__}: {_first_line(str(exc))}")
            raise
        finally:
            _inside_guard.reset(token)
        _stat("guarded", None)
        return guarded

    StateGraph.compile = compile_guarded  # type: ignore[method-assign]


def pytest_configure(config: pytest.Config) -> None:
    mode = os.environ.get(MODE_ENV)
    if mode in ("guarded", "control"):
        _install_guarding_compile(control=mode == "control")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        backends = {k: v for k, v in params.items() if k in _BACKEND_FIXTURES}
        if all(v in _IN_MEMORY for v in backends.values()):
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    _current["nodeid"] = item.nodeid
    try:
        return (yield)
    finally:
        _current["nodeid"] = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Generator[None, Any, Any]:
    report = yield
    entry = _stats.get(item.nodeid)
    if entry:
        report.user_properties.append(("trustgate_oracle", dict(entry)))
    return report


# --- the record (controller side) -----------------------------------------------


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


_FRAME = re.compile(r'^  File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')
_NOISE = ("/_pytest/", "/pluggy/", "/anyio/", "/asyncio/", "/concurrent/", "/contextlib.py")
_CHAIN = (
    "Traceback (most recent call last):",
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)


def _short_path(path: str) -> str:
    for marker in ("/site-packages/", "/src/tests/", "/tests/"):
        if marker in path:
            prefix = "tests/" if marker.endswith("tests/") else ""
            return prefix + path.split(marker, 1)[1]
    return path


def _parse_native(text: str) -> tuple[list[str], list[str]]:
    """Split a ``--tb=native`` traceback into frames and exception message lines."""
    frames: list[str] = []
    message: list[str] = []
    in_frame = False
    for line in text.splitlines():
        m = _FRAME.match(line)
        if m:
            in_frame = True
            if not any(n in m["path"] for n in _NOISE):
                frames.append(f"{_short_path(m['path'])}:{m['line']} in {m['func']}")
            continue
        if in_frame and line.startswith("    "):
            continue  # the frame's source line and its ^^^ marker
        in_frame = False
        if line.strip() in _CHAIN:
            continue
        message.append(line)
    while message and not message[-1].strip():
        message.pop()
    return frames, message


def _failure(report: pytest.TestReport | pytest.CollectReport) -> dict[str, Any]:
    text = report.longreprtext or ""
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    frames, message = _parse_native(text)
    first = _first_line(getattr(crash, "message", None) or "") or _first_line(
        "\n".join(message) or text
    )
    return {
        "first_line": first,
        "message": message[:_MAX_MESSAGE_LINES],
        "frames": frames[-_MAX_FRAMES:],
    }


class _Recorder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.tests: dict[str, dict[str, Any]] = {}
        self.collect_errors: dict[str, dict[str, Any]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        entry = self.tests.setdefault(report.nodeid, {"outcome": "passed"})
        for name, value in report.user_properties:
            if name == "trustgate_oracle":
                entry["guard"] = value
        if report.when == "call":
            entry["duration"] = round(report.duration, 4)
        if report.failed:
            if entry["outcome"] != "passed":
                return  # keep the first failure (a teardown error after a failed call)
            entry["outcome"] = "failed" if report.when == "call" else "error"
            entry["when"] = report.when
            entry.update(_failure(report))
        elif report.skipped and entry["outcome"] == "passed":
            entry["outcome"] = "xfailed" if hasattr(report, "wasxfail") else "skipped"
        elif report.passed and hasattr(report, "wasxfail"):
            entry["outcome"] = "xpassed"

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_errors[report.nodeid] = _failure(report)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "mode": os.environ.get(MODE_ENV, "unguarded"),
            "exitstatus": int(exitstatus),
            "tests": self.tests,
            "collect_errors": self.collect_errors,
        }
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(payload, indent=1, sort_keys=True))
        tmp.replace(self.path)


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    target = os.environ.get(RESULTS_ENV)
    if target and not hasattr(session.config, "workerinput"):
        session.config.pluginmanager.register(_Recorder(Path(target)), "trustgate_oracle_recorder")
