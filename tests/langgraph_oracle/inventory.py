"""What LangGraph's tests look at, and so how invisible a gate has to be.

Each test function's source is matched against the aspects below (a test may touch
several). Crossed with the divergences of a guarded run it answers questions such as
"would a hidden reports channel break tests that read checkpoints directly?" or "how
many tests compare a ``custom`` stream chunk for chunk?".
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from .categorise import node_source, parsed_module

_MODE = r"stream_mode\s*=\s*(?:\[[^\]]*|\(?[^)\n]*)['\"]{}['\"]"

ASPECTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "checkpoints / channel values read directly",
        re.compile(
            r"channel_values|get_tuple\(|checkpointer\.a?list\(|pending_writes|versions_seen|"
            r"channel_versions|checkpointer\.a?get\("
        ),
    ),
    ("state snapshots (get_state / history)", re.compile(r"\.a?get_state(_history)?\(")),
    ("task lists / next (snapshot.tasks, .next)", re.compile(r"\.tasks\b|\.next\b|PregelTask\(")),
    ("stream: values", re.compile(_MODE.format("values"))),
    ("stream: updates", re.compile(_MODE.format("updates"))),
    ("stream: messages", re.compile(_MODE.format("messages"))),
    ("stream: debug", re.compile(_MODE.format("debug"))),
    ("stream: tasks", re.compile(_MODE.format("tasks"))),
    ("stream: checkpoints", re.compile(_MODE.format("checkpoints"))),
    (
        "stream: custom / get_stream_writer",
        re.compile(_MODE.format("custom") + r"|StreamWriter|get_stream_writer"),
    ),
    (
        "stream events (astream_events, v2/v3 parts)",
        re.compile(r"stream_events|version=['\"]v[23]"),
    ),
    (
        "graph drawings (get_graph, mermaid, to_json)",
        re.compile(r"get_graph\(|draw_mermaid|draw_ascii|to_json\("),
    ),
    ("syrupy snapshots", re.compile(r"==\s*snapshot")),
    (
        "step counts / recursion limits",
        re.compile(
            r"recursion_limit|GraphRecursionError|['\"]step['\"]\s*:|langgraph_step|supersteps"
        ),
    ),
    (
        "metadata dicts (checkpoint or run metadata)",
        re.compile(
            r"langgraph_node|langgraph_triggers|langgraph_path|langgraph_checkpoint_ns|"
            r"['\"]source['\"]\s*:\s*['\"](loop|input|update|fork)|\.metadata\b"
        ),
    ),
    ("node objects (.nodes[...], .bound)", re.compile(r"\.nodes\[|\.bound\b|\.builder\b")),
    ("interrupt_before / interrupt_after", re.compile(r"interrupt_before|interrupt_after")),
    ("update_state / bulk_update_state", re.compile(r"update_state\(|StateUpdate\(")),
    ("callbacks / tracers", re.compile(r"callbacks|Tracer\b|run_tree|on_chain_start|trace_policy")),
    ("node caches", re.compile(r"cache_policy|CachePolicy|InMemoryCache")),
    (
        "retries / timeouts / error handlers",
        re.compile(r"RetryPolicy|TimeoutPolicy|error_handler|node_defaults"),
    ),
)


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.AST]]:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(
            "test"
        ):
            yield node.name, node
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name.startswith(
                    "test"
                ):
                    yield f"{node.name}::{sub.name}", sub


def aspects_by_function(root: Path) -> dict[str, set[str]]:
    """``tests/test_x.py::[Class::]name`` (no parameters) -> the aspects it touches."""
    found: dict[str, set[str]] = {}
    for path in sorted((root / "tests").glob("test_*.py")):
        lines, tree = parsed_module(str(path))
        if tree is None:
            continue
        for name, node in _functions(tree):
            source = node_source(lines, node)
            code = "\n".join(line.split("#", 1)[0] for line in source.splitlines())
            found[f"tests/{path.name}::{name}"] = {a for a, p in ASPECTS if p.search(code)}
    return found


def function_of(test_id: str) -> str:
    return re.sub(r"\[.*\]$", "", test_id)


def table(root: Path, passing: Iterable[str], diverging: Iterable[str]) -> list[str]:
    """Markdown: per aspect, how many passing tests touch it and how many diverge."""
    by_function = aspects_by_function(root)
    passing = list(passing)
    diverging = set(diverging)
    lines = [
        "| what the test inspects | tests (pass plainly) | diverge guarded | e.g. |",
        "|---|---:|---:|---|",
    ]
    for aspect, _ in ASPECTS:
        touching = [t for t in passing if aspect in by_function.get(function_of(t), set())]
        bad = sorted(t for t in touching if t in diverging)
        example = f"`{bad[0]}`" if bad else ""
        lines.append(f"| {aspect} | {len(touching)} | {len(bad)} | {example} |")
    return lines
