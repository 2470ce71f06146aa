"""A gate that passes changes nothing about the graph: LangGraph's own test suite as
the oracle.

``test_langgraph_suite_unchanged_under_always_pass_gates`` (marker ``oracle``, a few
minutes) runs LangGraph's tests from the sdist of the installed version with an
always-pass gate on every node of every compiled ``StateGraph`` and fails on every
test that passes without trustgate and fails with it, unless ``allowlist.toml`` says
why it may. The other tests here check the harness's own parts quickly.

The full categorised report: ``make oracle`` (``.langgraph-oracle/*/report.md``).
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph_oracle import categorise, harness, oracle_plugin
from langgraph_oracle.oracle_gates import always_pass_gate, gates_for
from typing_extensions import TypedDict

import trustgate

# --- the categoriser, on failure texts in the shapes pytest prints ------------------------


def _record(first: str, message: list[str], **extra: Any) -> dict[str, Any]:
    return {"outcome": "failed", "first_line": first, "message": message, **extra}


REPORTS_ONLY = [
    "AssertionError: assert {'message': 'hi', 'trust_reports': [Report(gate='pass_a')]} == "
    "{'message': 'hi'}",
    "  ",
    "  Full diff: (-: missing in left side, +: extra in left side)",
    "    {",
    "        'message': 'hi',",
    "  +     'trust_reports': [",
    "  +         Report(id='1', gate='pass_a', node='a', decision='pass'),",
    "  +     ],",
    "    }",
]

# The node's update reported under its gate's name in an ``updates`` stream.
DISPLACED = [
    "AssertionError: assert [{'a': None}, {'pass_a': {'x': 1}}] == [{'a': {'x': 1}}]",
    "  Full diff: (-: missing in left side, +: extra in left side)",
    "    [",
    "        {",
    "  -         'a': {",
    "  +         'a': None,",
    "  +     },",
    "  +     {",
    "  +         'pass_a': {",
    "  +             'x': 1,",
    "  +         },",
    "  -             'x': 1,",
    "  -         },",
    "        },",
    "    ]",
]

VALUES_DIFFER = [
    "AssertionError: assert {'foo': 'a2b'} == {'foo': 'a1a2b'}",
    "  Full diff: (-: missing in left side, +: extra in left side)",
    "  - {'foo': 'a1a2b'}",
    "  ?         --",
    "  + {'foo': 'a2b'}",
]

# A StateSnapshot: pytest drills into each differing attribute, then prints a
# one-line diff of the whole repr (ignored: it cannot say what differs).
SNAPSHOT_TASKS = [
    "AssertionError: assert StateSnapshot(values={'q': 1, 'trust_reports': []}, "
    "next=('pass_qa',)) == StateSnapshot(values={'q': 1}, next=())",
    "  Drill down into differing attribute values:",
    "    Full diff: (-: missing in left side, +: extra in left side)",
    "      {",
    "          'q': 1,",
    "    +     'trust_reports': [],",
    "      }",
    "  Drill down into differing attribute next:",
    "    Full diff: (-: missing in left side, +: extra in left side)",
    "    - ()",
    "    + (",
    "    +     'pass_qa',",
    "    + )",
    "  Full diff: (-: missing in left side, +: extra in left side)",
    "  - StateSnapshot(values={'q': 1}, next=())",
    "  + StateSnapshot(values={'q': 1, 'trust_reports': []}, next=('pass_qa',))",
]

SNAPSHOT_VALUES_DIFFER = [
    *SNAPSHOT_TASKS[:6],
    "    -     'r': 2,",
    *SNAPSHOT_TASKS[6:],
]

DRAWING = [
    "AssertionError: assert [+ received] == [- snapshot]",
    "    '''",
    "    \t__start__ --> a;",
    "  - \ta --> __end__;",
    "  + \ta --> pass_a;",
    "  + \tpass_a -.-> __end__;",
    "    '''",
]

STEPS = [
    "AssertionError: assert [{'step': 3}] == [{'step': 2}]",
    "  Full diff: (-: missing in left side, +: extra in left side)",
    "    [",
    "        {",
    "  -         'step': 2,",
    "  ?                 ^",
    "  +         'step': 3,",
    "  ?                 ^",
    "        },",
    "    ]",
]


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        (REPORTS_ONLY, "trust_reports key"),
        (DISPLACED, "visible gate nodes"),
        (SNAPSHOT_TASKS, "visible gate nodes"),
        (DRAWING, "drawings"),
        (STEPS, "extra steps/checkpoints"),
        (VALUES_DIFFER, None),
        (SNAPSHOT_VALUES_DIFFER, None),
    ],
    ids=["reports", "displaced", "snapshot-tasks", "drawing", "steps", "values", "snapshot-values"],
)
def test_cosmetic_kind_only_for_diffs_the_gate_explains(
    message: list[str], kind: str | None
) -> None:
    assert categorise.cosmetic_kind(message) == kind


def test_a_changed_value_is_a_real_divergence_named_by_what_the_test_did(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_x.py").write_text(
        "def test_fork():\n"
        "    history = list(graph.get_state_history(config))\n"
        "    assert graph.invoke(None, history[1].config) == {'foo': 'a1a2b'}\n"
        "\n"
        "def test_update():\n"
        "    graph.update_state(config, {'foo': 1}, as_node='a')\n"
        "    assert graph.get_state(config).values == {'foo': 'a1a2b'}\n"
    )
    fork = _record(VALUES_DIFFER[0], VALUES_DIFFER, frames=["tests/test_x.py:3 in test_fork"])
    update = _record(VALUES_DIFFER[0], VALUES_DIFFER, frames=["tests/test_x.py:7 in test_update"])
    assert categorise.categorise(fork, tmp_path, "tests/test_x.py::test_fork[memory]") == (
        "real",
        "forks/time travel",
    )
    assert categorise.categorise(update, tmp_path, "tests/test_x.py::test_update") == (
        "real",
        "update_state/bulk_update_state(as_node=guarded)",
    )


@pytest.mark.parametrize(
    ("first", "message", "guard", "expected"),
    [
        (
            "trustgate.errors.ConfigurationError: guarded node 'n' returned list; expected a "
            "dict, a Command or a state object",
            [],
            {},
            ("refused-at-run", "non-dict (root-channel) state"),
        ),
        (
            "trustgate.errors.ConfigurationError: guarded node 't' returned "
            "Command(graph=PARENT); a gate cannot hold a command addressed to the parent graph",
            [],
            {},
            ("refused-at-run", "Command.PARENT"),
        ),
        (
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for Report",
            [
                "pydantic_core._pydantic_core.ValidationError: 1 validation error for Report",
                "thread_id",
                "  Input should be a valid string [type=string_type, input_value=1]",
            ],
            {},
            ("crash", "int thread_id"),
        ),
        (
            "KeyError: 'NodeName.BAZ'",
            ["KeyError: 'NodeName.BAZ'"],
            {"refused": ["KeyError: 'NodeName.BAZ'"]},
            ("crash", "str-Enum node names"),
        ),
        (
            "trustgate.errors.ConfigurationError: guard(): cannot hold this",
            [],
            {"refused": ["ConfigurationError: guard(): cannot hold this"]},
            ("refused-at-build", "guard(): cannot hold this"),
        ),
        (
            "langgraph.errors.GraphDrained: Graph drained: shutdown",
            ["langgraph.errors.GraphDrained: Graph drained: shutdown"],
            {},
            ("real", "drains"),
        ),
        (
            "AssertionError: assert [(0.0, 'x'), (0.2, {'trustgate': Report(id='1')})] == "
            "[(0.0, 'x')]",
            [],
            {},
            ("cosmetic", "report chunk in the custom stream"),
        ),
    ],
    ids=["root-channel", "parent", "thread-id", "enum", "build", "drain", "custom-report"],
)
def test_the_first_line_tells_refusals_crashes_and_extras_apart(
    tmp_path: Path, first: str, message: list[str], guard: dict[str, Any], expected: tuple[str, str]
) -> None:
    record = _record(first, message, guard=guard)
    assert categorise.categorise(record, tmp_path, "tests/test_x.py::test_y") == expected


def test_native_tracebacks_split_into_frames_and_message() -> None:
    text = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "/v/lib/python3.11/site-packages/_pytest/runner.py", line 361, in from_call',
            "    result = func()",
            '  File "/tmp/src/tests/test_pregel.py", line 80, in test_x',
            "    assert state.values == {'foo': 'updated'}",
            "             ^^^^^^^^^^^^",
            "AssertionError: assert {'trust_reports': []} == {'foo': 'updated'}",
            "  ",
            "  Left contains 1 more item:",
        ]
    )
    frames, message = oracle_plugin._parse_native(text)
    assert frames == ["tests/test_pregel.py:80 in test_x"]
    assert message[0].startswith("AssertionError: assert {'trust_reports': []}")
    assert message[-1] == "  Left contains 1 more item:"


def test_allowlist_entries_need_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "allow.toml"
    path.write_text('[[allow]]\ntest = "tests/test_x.py::test_y"\nreason = " "\n')
    with pytest.raises(harness.OracleError, match="reason"):
        harness.read_allowlist(path)
    path.write_text('[[allow]]\ntest = "tests/test_x.py::test_y"\nreason = "why"\n')
    assert harness.read_allowlist(path) == {"tests/test_x.py::test_y": "why"}


def test_the_committed_allowlist_is_short_and_explained() -> None:
    allowed = harness.read_allowlist()
    assert len(allowed) <= 15, "the allow-list is for the few tests no transparent gate can keep"


# --- the always-pass gate the oracle puts on every node ------------------------------------


class _State(TypedDict):
    log: Annotated[list[str], operator.add]


def _builder() -> StateGraph[Any, Any, Any, Any]:
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(_State)
    builder.add_node("a", lambda s: {"log": ["a"]})
    builder.add_node("b", lambda s: {"log": ["b"]})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", END)
    return builder


def test_always_pass_gates_release_what_the_nodes_wrote() -> None:
    plain = _builder().compile().invoke({"log": []})
    guarded = trustgate.guard(_builder().compile(), gates_for(["a", "b"]))
    out = guarded.invoke({"log": []})
    assert {k: v for k, v in out.items() if k != "trust_reports"} == plain
    assert always_pass_gate("a").name == "pass_a"


def test_reserved_node_names_get_no_gate() -> None:
    assert list(gates_for(["a", "__default_error_handler__"])) == ["a"]


def test_a_wildcard_pattern_is_stale_only_when_it_matches_no_passing_test() -> None:
    allowed = harness.Allowlist(
        {"tests/test_pregel*.py::test_x[*]": "why", "tests/t.py::gone": "why"}
    )
    passing = ["tests/test_pregel_async.py::test_x[memory]", "tests/t.py::other"]
    assert allowed.stale(passing) == ["tests/t.py::gone"]
    assert allowed.stale([]) == sorted(allowed)


def test_allowlist_patterns_match_only_what_they_name() -> None:
    allowed = harness.Allowlist({"tests/test_pregel*.py::test_x[*]": "why"})
    assert allowed.get("tests/test_pregel.py::test_x[memory]") == "why"
    assert allowed.get("tests/test_pregel_async.py::test_x[memory-sync]") == "why"
    assert allowed.get("tests/test_pregel.py::test_x_more[memory]") is None
    assert allowed.get("tests/test_other.py::test_x[memory]") is None
