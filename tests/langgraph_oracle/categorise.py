"""Sort a guarded-only failure of a LangGraph test into what kind of divergence it is.

Input: the record ``oracle_plugin`` wrote for the guarded run (first line, exception
message lines with pytest's full assertion diff, frames, what guard() did) and the
test's own source. Output: ``(category, subcategory)``.

Categories, most specific first:

* ``refused-at-build``: ``guard()`` raised ``ConfigurationError`` when the graph was
  compiled (a shape it declines up front; may be legitimate, then allow-list it);
* ``refused-at-run``: trustgate raised ``ConfigurationError`` while the graph ran (a
  shape guard() accepted, then refused);
* ``crash``: any other exception the unguarded run did not raise;
* ``cosmetic``: an assertion whose whole diff is gate nodes, the ``trust_reports`` key,
  step numbers, or a graph drawing;
* ``real``: an assertion about behaviour (values, order, interrupts, streams),
  sub-categorised by what the test exercises;
* ``missing``: the test did not run guarded (its module failed to import).

The rules are heuristics over text; the report shows the first failure line next to
each verdict so a wrong guess is visible at a glance.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

COSMETIC = "cosmetic"
REFUSED_BUILD = "refused-at-build"
REFUSED_RUN = "refused-at-run"
CRASH = "crash"
REAL = "real"
MISSING = "missing"
CATEGORIES = (REAL, CRASH, REFUSED_RUN, REFUSED_BUILD, COSMETIC, MISSING)

# What an always-pass gate may leave in a diff: its node, its reports, its channels.
_GATE_TOKEN = re.compile(r"\bpass_\w|trust_reports|trustgate|__trustgate|\bReport\(")
_GATE_NAME = re.compile(r"\bpass_(\w)")
_DIGITS = re.compile(r"\d+")
_OPENS = ("[", "{", "(")


def _diff_sections(message: Sequence[str]) -> list[list[tuple[str, str]]] | None:
    """The ``+``/``-`` lines of each of pytest's full diffs (or a syrupy snapshot diff).

    For dataclasses (``StateSnapshot``, ``PregelTask``) pytest drills down into each
    differing attribute and ends with a one-line diff of the whole repr; the
    drill-downs are used then, since the one-liner hides which attribute differs.
    """
    first = next((ln for ln in message if ln.strip()), "")
    if "[+ received] == [- snapshot]" in first:
        starts = [(message.index(first) + 1, 2)]
    else:
        drill = any("Drill down into differing attribute" in ln for ln in message)
        starts = []
        for i, line in enumerate(message):
            if line.strip().startswith("Full diff:"):
                indent = _indent(line)
                if drill and indent <= 2:
                    continue
                starts.append((i + 1, indent))
    if not starts:
        return None
    sections: list[list[tuple[str, str]]] = []
    for start, indent in starts:
        out: list[tuple[str, str]] = []
        for line in message[start:]:
            if "Full diff:" in line or "Drill down into" in line:
                break
            body = line[indent:] if line[:indent].strip() == "" else line.lstrip()
            if body[:1] in "+-" and not body.startswith(("+++", "---")):
                out.append((body[:1], body[1:]))
        sections.append(out)
    return sections


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


Line = tuple[str, str]  # (sign, text) of one diff line


def _drop_gate_blocks(lines: list[Line]) -> tuple[list[Line], set[str], list[Line]]:
    """Remove diff lines (and the blocks they open) that name the gate's own things.

    Returns what is left, what kind of gate things were seen, and the lines inside
    the removed blocks (a node's update that went out under its gate's name).
    """
    kept: list[Line] = []
    pooled: list[Line] = []
    seen: set[str] = set()
    skip_sign: str | None = None
    skip_indent = 0
    for sign, text in lines:
        if skip_sign is not None:
            inside = _indent(text) > skip_indent
            closing = _indent(text) == skip_indent and text.strip()[:1] in "]})"
            if sign == skip_sign and (inside or closing):
                if inside:
                    pooled.append((sign, text))
                continue
            skip_sign = None
        if _GATE_TOKEN.search(text):
            seen.add("trust_reports" if "trust_reports" in text or "Report(" in text else "gate")
            if text.rstrip().rstrip(",").endswith(_OPENS):
                skip_sign, skip_indent = sign, _indent(text)
            continue
        kept.append((sign, text))
    return kept, seen, pooled


def _cancel(lines: list[Line], norm: Any, against: list[Line] | None = None) -> list[Line]:
    """Drop lines that have an equal (once ``norm`` is applied) line of the other
    sign, pair by pair: in ``lines`` itself, or in ``against`` when given."""
    other = lines if against is None else against
    budget = {
        "+": Counter(norm(t) for s, t in other if s == "-"),
        "-": Counter(norm(t) for s, t in other if s == "+"),
    }
    if against is None:
        pairs = budget["+"] & budget["-"]
        budget = {"+": Counter(pairs), "-": Counter(pairs)}
    out = []
    for sign, text in lines:
        key = norm(text)
        if budget[sign][key] > 0:
            budget[sign][key] -= 1
            continue
        out.append((sign, text))
    return out


_BRACKETS = re.compile(r"^[\s()\[\]{},]*$")
_DISPLACED = re.compile(r": (None|\{)$")


def _renamed(text: str) -> str:
    """A line with gate names mapped back to their nodes, and a node's update shown
    as ``None`` (it went out under the gate's name) made equal to the update itself."""
    return _DISPLACED.sub(": <update>", _GATE_NAME.sub(r"\1", text).strip().rstrip(","))


def _section_kind(lines: list[tuple[str, str]], snapshot: bool) -> str | None:
    rest, seen, pooled = _drop_gate_blocks(lines)
    rest = [(s, t) for s, t in rest if not _BRACKETS.match(t)]
    rest = _cancel(rest, _renamed)
    rest = _cancel(rest, _renamed, against=pooled)
    if not rest:
        if snapshot:
            return "drawings"
        return "trust_reports key" if seen == {"trust_reports"} else "visible gate nodes"
    if all(_DIGITS.search(t) for _, t in rest) and not _cancel(
        rest, lambda t: _DIGITS.sub("#", _renamed(t))
    ):
        return "extra steps/checkpoints"
    if snapshot:
        return "drawings"  # a drawing that differs by more than gate nodes: the node's runnable
    return None


_KIND_ORDER = ("drawings", "visible gate nodes", "extra steps/checkpoints", "trust_reports key")
# Also cosmetic, decided from the first line: "report chunk in the custom stream".


def cosmetic_kind(message: Sequence[str]) -> str | None:
    """``None`` unless every diff in the assertion is explained by the gate's
    visible parts (its nodes, its reports, its steps)."""
    first = next((ln for ln in message if ln.strip()), "")
    sections = _diff_sections(message)
    if not sections:
        return None
    snapshot = "[- snapshot]" in first
    kinds = [_section_kind(lines, snapshot) for lines in sections]
    if any(k is None for k in kinds):
        return None
    return min(kinds, key=lambda k: _KIND_ORDER.index(k or "trust_reports key"))


# --- the test's own source ---------------------------------------------------------


@functools.lru_cache(maxsize=256)
def parsed_module(path: str) -> tuple[list[str], ast.Module | None]:
    try:
        text = Path(path).read_text()
        return text.splitlines(), ast.parse(text)
    except (OSError, SyntaxError):
        return [], None


def node_source(lines: Sequence[str], node: ast.AST) -> str:
    """The source lines of ``node`` (``ast.get_source_segment`` re-splits the whole
    file on every call: minutes over LangGraph's 10,000-line test modules)."""
    start = getattr(node, "lineno", 1)
    end = getattr(node, "end_lineno", None) or start
    return "\n".join(lines[start - 1 : end])


def test_source(root: Path, nodeid: str) -> tuple[str, int]:
    """Source of the test function ``nodeid`` names (``file::[Class::]name[params]``)
    and the line it starts on (``("", 0)`` when it cannot be found)."""
    parts = nodeid.split("::")
    lines, tree = parsed_module(str(root / parts[0]))
    names = [re.sub(r"\[.*\]$", "", p) for p in parts[1:]]
    if tree is None or not names:
        return "", 0
    scope: Iterable[ast.stmt] = tree.body
    node: ast.stmt | None = None
    for name in names:
        node = next(
            (
                n
                for n in scope
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n.name == name
            ),
            None,
        )
        if node is None:
            return "", 0
        scope = getattr(node, "body", [])
    assert node is not None
    return node_source(lines, node), node.lineno


def _failing_line(record: dict[str, Any], nodeid: str) -> int | None:
    """The line of the test file where the failure surfaced (its last frame there)."""
    path = nodeid.split("::", 1)[0]
    line = None
    for frame in record.get("frames") or []:
        loc = frame.split(" in ", 1)[0]
        if loc.rsplit(":", 1)[0] == path:
            line = int(loc.rsplit(":", 1)[1])
    return line


# What the test did before it failed, in order of precedence: the first found in the
# test's source up to the failing line names the divergence.
_FEATURES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "update_state/bulk_update_state(as_node=guarded)",
        re.compile(r"bulk_update_state|StateUpdate\(|as_node|\.a?update_state\("),
    ),
    ("interrupt_after", re.compile(r"interrupt_after")),
    (
        "forks/time travel",
        re.compile(r"get_state_history|checkpoint_id|\bfork|replay|time_travel|parent_config"),
    ),
    (
        "messages stream",
        re.compile(r"[\"']messages[\"']\s*[\]),]|ChatModelStream|\.messages\b|StreamMessages"),
    ),
    ("recursion limit/steps", re.compile(r"recursion_limit|GraphRecursionError|langgraph_step")),
    ("lost sibling writes", re.compile(r"\binterrupt\(|Command\(resume|NodeInterrupt")),
    ("metadata/config propagation", re.compile(r"metadata|configurable|\btags\b")),
    ("custom/debug/tasks stream", re.compile(r"[\"'](custom|debug|tasks|checkpoints)[\"']")),
)
_BY_NAME: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("drains", re.compile(r"drain", re.I)),
    (
        "repeated writes collapsed",
        re.compile(r"multiple_writes|same_channel|repeated_write|multiple_updates|mixed_return"),
    ),
    ("dataclass/pydantic state in typed v2 streams", re.compile(r"v2_(dataclass|pydantic)_state")),
    ("forks/time travel", re.compile(r"time_travel|fork|replay|checkpoint_migration", re.I)),
    ("messages stream", re.compile(r"messages", re.I)),
    ("interrupt_after", re.compile(r"interrupt_after", re.I)),
)


# What the failure itself says, before looking at the test's source.
_BY_MESSAGE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("drains", re.compile(r"GraphDrained")),
    ("staging channel in node output/traces", re.compile(r"__trustgate_stage")),
    (
        "dataclass/pydantic state in typed v2 streams",
        re.compile(r"Expected \w*State|got <class 'dict'>|with \w+State values"),
    ),
    (
        "node's update missing from its own chunk",
        re.compile(r"^AssertionError: assert (None|\{'\w+': None\}) == \{"),
    ),
)
_COUNT = re.compile(r"^AssertionError: assert (?:\(True and )?(\d+) == (\d+)\)?$")
_CUSTOM_REPORT = re.compile(r"\{'trustgate': Report\(")


def _real_subcategory(text: str, source: str, start: int, failing: int | None, nodeid: str) -> str:
    for name, pattern in _BY_MESSAGE:
        if pattern.search(text):
            return name
    for name, pattern in _BY_NAME[:3]:
        if pattern.search(nodeid):
            return name
    lines = source.splitlines()
    if failing is not None and start and start <= failing < start + len(lines):
        lines = lines[: failing - start + 1]
    window = "\n".join(line.split("#", 1)[0] for line in lines)
    for name, pattern in _FEATURES:
        if pattern.search(window):
            return name
    for name, pattern in _BY_NAME[3:]:
        if pattern.search(nodeid):
            return name
    return "other"


_CRASH_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("int thread_id", re.compile(r"validation error for Report[\s\S]*thread_id")),
    ("str-Enum node names", re.compile(r"KeyError: '\w+\.\w+'|NodeName\.|Enum")),
    ("waiting edge into END", re.compile(r"join writes")),
    ("UntrackedValue", re.compile(r"msgpack serializable|UntrackedValue")),
    ("node_defaults with TimeoutPolicy", re.compile(r"Node timeouts are only supported")),
    ("dataclass state in typed v2 streams", re.compile(r"dataclass|__dataclass_fields__")),
)


def _router_crash(record: dict[str, Any]) -> bool:
    frames = record.get("frames") or []
    return any("trustgate/" in f and " in route" in f for f in frames) and record.get(
        "first_line", ""
    ).startswith(("KeyError", "AttributeError"))


def categorise(record: dict[str, Any], root: Path, nodeid: str) -> tuple[str, str]:
    """``(category, subcategory)`` for one test that passed unguarded and not guarded;
    ``root`` holds LangGraph's ``tests/`` (for the test's source)."""
    if record.get("outcome") == MISSING:
        return MISSING, record.get("first_line", "")[:80]
    message = [ln for ln in record.get("message") or [] if not ln.startswith("[gw")]
    text = "\n".join(message)
    first = record.get("first_line", "")
    refused = (record.get("guard") or {}).get("refused") or []
    if refused:
        what = refused[0]
        if what.startswith("ConfigurationError"):
            return REFUSED_BUILD, what.split(":", 1)[-1].strip()[:80]
        for name, pattern in _CRASH_RULES:
            if pattern.search(what) or pattern.search(text):
                return CRASH, name
        return CRASH, "guard() raised " + what.split(":", 1)[0]
    if "ConfigurationError" in first and "trustgate" in first:
        if "Command(graph=PARENT)" in first:
            return REFUSED_RUN, "Command.PARENT"
        if re.search(r"returned \w+; expected a dict", first):
            return REFUSED_RUN, "non-dict (root-channel) state"
        return REFUSED_RUN, first.split(":", 1)[-1].strip()[:80]
    if "Timeout" in first:
        return CRASH, "timeout (hang)"
    source, start = test_source(root, nodeid)
    if not first.startswith(("AssertionError", "assert ", "Failed")):
        if "GraphDrained" in first:
            return REAL, "drains"
        for name, pattern in _CRASH_RULES:
            if pattern.search(text):
                return CRASH, name
        if _router_crash(record):
            return CRASH, "routers reading keys outside the schema"
        if "dataclass" in source and "version=" in source:
            return CRASH, "dataclass state in typed v2 streams"
        return CRASH, "other: " + first.split(":")[0].rsplit(".", 1)[-1]
    kind = cosmetic_kind(message)
    if kind is not None:
        return COSMETIC, kind
    if _CUSTOM_REPORT.search(first):
        return COSMETIC, "report chunk in the custom stream"
    count = _COUNT.match(first)
    if count and int(count[1]) > int(count[2]):
        return COSMETIC, "extra steps/checkpoints"  # more chunks/checkpoints than expected
    return REAL, _real_subcategory(text, source, start, _failing_line(record, nodeid), nodeid)
