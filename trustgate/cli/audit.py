"""``trustgate audit module:attr``: is every model crossing of a graph guarded?

Loads ``attr`` from ``module`` (the current directory is on the import path, as with
uvicorn); it may be a compiled graph, a ``StateGraph`` builder, or a zero-argument
callable returning one. Prints one row per path out of each node whose output is (or
may be) model output, and out of each routing function that calls a model: ``guarded``
(a gate holds it), ``UNGUARDED``, or ``UNKNOWN`` (the audit could not tell). Each row
says what was found, why the path is what it is, and how to close it. ``unknown`` never
counts as guarded; a gate that verifies nothing is no guard.

``--input JSON`` also runs the graph once on that input, on a copy with an in-memory
checkpointer, with every chat model and every tool replaced by a recording stub
(``--run-tools`` runs the real tools). ``--context JSON`` and ``--config JSON`` are
passed to that run; each ``--resume JSON`` answers the next interrupt, in order. Any
argument may be ``@file.json``.

Exit codes:
  0  every model-output path is proven guarded
  1  some path is unguarded
  3  nothing is unguarded, but something is unknown (a node or handoff the audit could
     not follow, a sample run that stopped at an interrupt, halted or failed)
  2  bad input (one line on stderr, no traceback)

Example::

    trustgate audit myapp.graph:app
    trustgate audit myapp.graph:build_graph --input '{"messages": []}' --resume true --json
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any, cast

from trustgate.cli import _common
from trustgate.errors import InputError

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

EXIT_UNKNOWN = 3
"""Nothing unguarded was found, but the audit could not prove everything guarded."""

_STATUS_WORD = {"guarded": "guarded", "unguarded": "UNGUARDED", "unknown": "UNKNOWN"}


def register(sub: Any) -> None:
    p = sub.add_parser(
        "audit",
        help="list model crossings of a graph and whether a gate holds each path",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("target", metavar="MODULE:ATTR", help="where the graph is, e.g. app.graph:app")
    p.add_argument("--input", metavar="JSON", help="sample input for one safe run")
    p.add_argument("--context", metavar="JSON", help="run-time context for the sample run")
    p.add_argument("--config", metavar="JSON", help="config for the sample run (an object)")
    p.add_argument(
        "--resume",
        metavar="JSON",
        action="append",
        default=[],
        help="answer to the next interrupt of the sample run (repeat, in order)",
    )
    p.add_argument(
        "--run-tools",
        action="store_true",
        help="let the sample run execute the graph's real tools (default: recording stubs)",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=_audit)


def load_graph(target: str) -> Any:
    """Resolve ``module:attr`` to a graph (builder, compiled, or a factory's result)."""
    from langgraph.graph import StateGraph
    from langgraph.graph.state import CompiledStateGraph

    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise InputError(f"expected MODULE:ATTR, got {target!r}")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any failure while importing user code is bad input
        raise InputError(
            f"cannot import module {module_name!r}: {type(exc).__name__}: {exc}"
        ) from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InputError(f"module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not isinstance(obj, (StateGraph, CompiledStateGraph)) and callable(obj):
        try:
            obj = obj()
        except Exception as exc:
            raise InputError(f"{target} raised {type(exc).__name__}: {exc}") from None
    if not isinstance(obj, (StateGraph, CompiledStateGraph)):
        raise InputError(
            f"{target} is a {type(obj).__name__}, not a StateGraph or a compiled graph"
        )
    return obj


def _json_arg(text: str | None, what: str) -> Any:
    if text is None:
        return None
    if text.startswith("@"):
        return _common.read_json_arg(text[1:], what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"--{what} is not valid JSON: {exc}") from None


def _context(graph: Any, data: Any) -> Any:
    """The ``--context`` object as the graph's ``context_schema`` wants it."""
    if data is None:
        return None
    schema = getattr(getattr(graph, "builder", graph), "context_schema", None)
    if schema is None or not isinstance(data, dict):
        return data
    try:
        if isinstance(schema, type) and dataclasses.is_dataclass(schema):
            return schema(**data)
        validate = getattr(schema, "model_validate", None)
        if callable(validate):
            return validate(data)
    except Exception as exc:  # a context that does not fit the schema is bad input
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise InputError(
            f"--context does not fit {schema.__name__}: {type(exc).__name__}: {first}"
        ) from None
    return data


def _audit(args: argparse.Namespace) -> int:
    from trustgate._audit import audit

    graph = load_graph(args.target)
    sample = _json_arg(args.input, "input")
    config = _json_arg(args.config, "config")
    if config is not None and not isinstance(config, dict):
        raise InputError("--config must be a JSON object")
    resume = [_json_arg(r, "resume") for r in args.resume]
    if sample is None and (args.context or args.config or resume or args.run_tools):
        raise InputError("--context, --config, --resume and --run-tools need --input")
    result = audit(
        graph,
        sample,
        config=cast("RunnableConfig | None", config),
        context=_context(graph, _json_arg(args.context, "context")),
        resume=resume,
        run_tools=args.run_tools,
    )
    code = {"guarded": _common.EXIT_OK, "unguarded": _common.EXIT_FAIL}.get(
        result.status, EXIT_UNKNOWN
    )
    run = result.sample_run
    if args.json:
        _common.dump_json(
            {
                "status": result.status,
                "guarded": result.status == "guarded",
                "exit_code": code,
                "coverage_gap": result.coverage_gap,
                "crossings": [c.model_dump(mode="json") for c in result],
                "sample_run": run.model_dump(mode="json") if run is not None else None,
            }
        )
    else:
        _print(result)
    if run is not None and run.outcome == "error":
        print(f"trustgate: sample run failed: {run.detail}", file=sys.stderr)
    return code


def _print(result: Any) -> None:
    rows = [
        ("NODE", "FOUND BY", "PATH TO", "KIND", "GATE", "STATUS", "FOUND, WHY, HOW TO CLOSE IT")
    ]
    for c in result:
        node = "START" if c.node == "__start__" else c.node
        if c.routing is not None:
            node = f"{node} (routing {c.routing})"
        for p in c.paths:
            target = "END" if p.target == "__end__" else (p.target or "? (not declared)")
            rows.append(
                (
                    node,
                    c.found_by,
                    target,
                    p.kind,
                    p.gate or "-",
                    _STATUS_WORD[p.status],
                    c.explain(p),
                )
            )
    if len(rows) > 1:
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
        for r in rows:
            cells = [v.ljust(w) for v, w in zip(r, widths, strict=False)]
            print("  ".join([*cells, r[-1]]).rstrip())
    run = result.sample_run
    if run is not None:
        tools = "real tools ran" if run.run_tools else "tools stubbed"
        print(
            f"sample run: {run.outcome}"
            + (f" ({run.detail})" if run.detail else "")
            + f"; {len(run.tool_calls)} tool call(s), {tools}; {run.resumed} interrupt(s) resumed"
        )
        if run.unattributed:
            print(f"sample run: {run.unattributed} model run(s) not tied to a graph node")
    if not result and result.status == "guarded":
        print("no model crossings found")
        return
    counts = {s: sum(1 for c in result if c.status == s) for s in _STATUS_WORD}
    print(
        f"{len(result)} crossing(s): {counts['guarded']} guarded, "
        f"{counts['unguarded']} unguarded, {counts['unknown']} unknown"
    )
    verdict = _STATUS_WORD[result.status]
    why = f" ({result.coverage_gap})" if result.coverage_gap else ""
    print(f"verdict: {verdict}{why}")
