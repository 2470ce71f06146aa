"""``trustgate audit module:attr``: are all model crossings of a graph guarded?

Loads ``attr`` from ``module`` (the current directory is on the import path, as with
uvicorn); it may be a compiled graph, a ``StateGraph`` builder, or a zero-argument
callable returning one. Prints one row per path out of each node whose output is
model output, with the gate standing on it. ``--input JSON`` also runs the graph
once on that input (on a copy with an in-memory checkpointer) and adds the nodes seen
calling a model; ``--input @file.json`` reads it from a file.

Exit 0 when every crossing is guarded, 1 when any is not, 2 on bad input (one line,
no traceback), so the command can sit in a CI job.

Example::

    trustgate audit myapp.graph:app
    trustgate audit myapp.graph:build_graph --input '{"messages": []}' --json
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from typing import Any

from trustgate.cli import _common
from trustgate.errors import InputError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "audit",
        help="list model crossings of a graph and whether a gate stands on each path",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("target", metavar="MODULE:ATTR", help="where the graph is, e.g. app.graph:app")
    p.add_argument(
        "--input",
        metavar="JSON",
        help="sample input for one run (JSON text, or @file.json)",
    )
    p.add_argument("--json", action="store_true", help="print the crossings as JSON")
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


def _sample_input(text: str | None) -> Any:
    if text is None:
        return None
    if text.startswith("@"):
        return _common.read_json_arg(text[1:], "input")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"--input is not valid JSON: {exc}") from None


def _audit(args: argparse.Namespace) -> int:
    from trustgate.audit import audit

    graph = load_graph(args.target)
    result = audit(graph, _sample_input(args.input))
    open_ = result.unguarded
    if args.json:
        _common.dump_json(
            {
                "guarded": not open_,
                "crossings": [c.model_dump(mode="json") for c in result],
                "sample_run": result.sample_run.model_dump(mode="json")
                if result.sample_run is not None
                else None,
            }
        )
    else:
        _print_table(result)
        if result.sample_run is not None:
            run = result.sample_run
            print(f"sample run: {run.outcome}" + (f" ({run.detail})" if run.detail else ""))
            if run.unattributed:
                print(f"sample run: {run.unattributed} model run(s) not tied to a graph node")
        if not result:
            print("no model crossings found")
        else:
            print(f"{len(result)} crossing(s), {len(open_)} unguarded")
    return _common.EXIT_FAIL if open_ else _common.EXIT_OK


def _print_table(result: Any) -> None:
    rows = [("NODE", "FOUND BY", "PATH TO", "KIND", "GATE", "STATUS")]
    for c in result:
        for p in c.paths:
            target = "END" if p.target == "__end__" else (p.target or "? (any node)")
            rows.append(
                (
                    c.node,
                    c.reason,
                    target,
                    p.kind,
                    p.gate or "-",
                    "guarded" if p.guarded else "UNGUARDED",
                )
            )
    if len(rows) == 1:
        return
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
