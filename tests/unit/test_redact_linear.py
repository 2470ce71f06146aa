"""A Redact crossing's cost is linear in the draft: its report, and the work it does.

A draft is capped at a million characters, and a long one fails many sentences. The
report of such a crossing once copied the whole fixed text into every finding (a
900 KB draft was killed at 23 GB); since findings propose the edit of their own span
the report holds each failed sentence once, but the crossing still compared every
finding with every other and scanned every gap (and every write of the draft) for
every edit. Time cannot be asserted on a shared machine, so the work is counted: the
Python lines the crossing executes, at two sizes of the same draft, must grow no
faster than the draft does (bench/limits.py measures time and memory at 10 KB to 1 MB).
"""

from __future__ import annotations

import json
import operator
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command
from typing_extensions import TypedDict

import trustgate
from trustgate import (
    DraftCheck,
    EvidenceSources,
    FromKey,
    FromState,
    LastAIText,
    Redact,
    TextEdit,
    TrustGate,
)
from trustgate._apply import SegmentIndex
from trustgate.evidence.record import Record
from trustgate.graph import TrustReports
from trustgate.verifiers.base import Evidence

RECORD = Record.from_text("14:02 checkout p99 latency rose to 9.2s\n14:03 alert fired\n")
# one unit: a kept cited sentence, an invented cause, a cited hedge, and a kept sentence
# with an id the record does not have; the kept sentences keep each deletion its own gap
CITED = "Checkout latency rose to 9.2 seconds at 14:02 [[1]]."
CAUSE = "The pool was exhausted because the deploy doubled concurrency."
HEDGE = "It was likely the cache [[2]]."
BAD_ID = "The alert fired at 14:03 [[2, 77]]."
SENTENCES = (CITED, CAUSE, HEDGE, BAD_ID)
FAILED_PER_UNIT = 3
SMALL, LARGE = 30, 120  # units of the draft at the two sizes
PER_FAILURE = 2_000  # bytes of report a failed sentence may cost (see the report test)


class Messages(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    record: Record
    trust_reports: TrustReports


class Written(TypedDict, total=False):
    draft: Annotated[str, operator.add]
    record: Record
    trust_reports: TrustReports


def _message_app(units: int) -> tuple[Any, dict[str, Any]]:
    """The draft as one AI message (LastAIText)."""
    draft = "\n".join(" ".join(SENTENCES) for _ in range(units))

    def writer(state: Messages) -> dict[str, Any]:
        return {"messages": [AIMessage(draft)]}

    g = StateGraph(Messages)
    g.add_node("writer", writer)
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    gate = TrustGate(
        "postmortem",
        reads=LastAIText(),
        verifiers=[DraftCheck()],
        policy=Redact(),
        evidence=EvidenceSources(record=FromState("record")),
    )
    app = trustgate.guard(g, {"writer": gate}).compile()
    return app, {"messages": [HumanMessage("draft it")], "record": RECORD}


def _written_app(units: int) -> tuple[Any, dict[str, Any]]:
    """The draft written sentence by sentence: one write of the key per sentence."""
    pieces = [s for _ in range(units) for s in SENTENCES]

    def writer(state: Written) -> list[Command[Any]]:
        return [Command(update={"draft": p}) for p in pieces]

    g = StateGraph(Written)
    g.add_node("writer", writer)
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    gate = TrustGate(
        "postmortem",
        reads=FromKey("draft"),
        verifiers=[DraftCheck()],
        policy=Redact(),
        evidence=EvidenceSources(record=FromState("record")),
    )
    app = trustgate.guard(g, {"writer": gate}).compile()
    return app, {"draft": "", "record": RECORD}


SHAPES: dict[str, Callable[[int], tuple[Any, dict[str, Any]]]] = {
    "one message": _message_app,
    "a write per sentence": _written_app,
}


@contextmanager
def _lines_run() -> Iterator[list[int]]:
    """Count the Python lines executed in this thread and in threads started meanwhile."""
    count = [0]

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            count[0] += 1
        return local

    def start(frame: FrameType, event: str, arg: Any) -> Any:
        return local

    before = sys.gettrace()
    threading.settrace(start)
    sys.settrace(start)
    try:
        yield count
    finally:
        sys.settrace(before)
        threading.settrace(before)  # type: ignore[arg-type]


def _cross(shape: str, units: int) -> tuple[int, Any, Any]:
    """(lines executed, final state, report) of one crossing of a draft of ``units``."""
    app, inputs = SHAPES[shape](units)
    app.invoke(inputs)  # warm: imports and first-call caches are not the crossing's work
    with _lines_run() as count:
        out = app.invoke(inputs)
    (report,) = out["trust_reports"]
    return count[0], out, report


@pytest.fixture(autouse=True)
def _inline(monkeypatch: pytest.MonkeyPatch) -> None:
    # the check runs in the crossing's own thread so its lines are counted (the pool's
    # threads were started before the count began); what it does is unchanged
    monkeypatch.setattr(DraftCheck, "bounded", True, raising=False)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_redact_crossing_does_work_linear_in_the_draft(shape: str) -> None:
    small, _, _ = _cross(shape, SMALL)
    large, out, report = _cross(shape, LARGE)
    growth = LARGE / SMALL
    # a fixed cost per crossing makes linear work grow by less than the draft; a pairwise
    # comparison of findings or edits grows by its square (16x here)
    assert large / small <= growth * 1.15, (shape, small, large, large / small)
    assert report.decision == "modified" and report.released
    assert len([f for f in report.findings if f.blocking]) == LARGE * FAILED_PER_UNIT
    text = out["messages"][-1].content if "messages" in out else out["draft"]
    assert "because" not in text and "likely" not in text and "77" not in text


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_report_holds_each_failed_sentence_not_the_draft(shape: str) -> None:
    sizes = {}
    for units in (SMALL, LARGE):
        _, _, report = _cross(shape, units)
        body = json.dumps(report.to_json_dict(), default=str)
        draft = sum(len(s) + 1 for s in SENTENCES) * units
        failed = units * FAILED_PER_UNIT
        sizes[units] = len(body)
        # the claims the gate read are the draft once; each failed finding and its
        # override hold the sentence, the gap's question, the rule's message and field
        # names (about 1 KB here), never the draft (22 KB at the larger size)
        assert len(body) <= draft + failed * PER_FAILURE, (units, len(body))
    assert sizes[LARGE] / sizes[SMALL] <= (LARGE / SMALL) * 1.05, sizes


def test_the_draft_check_proposes_its_edits_in_work_linear_in_the_draft() -> None:
    """Each finding finds its gap's edit directly, not by a scan of every gap."""
    counts = {}
    for units in (100, 400):
        draft = "\n".join(" ".join(SENTENCES) for _ in range(units))
        check = DraftCheck()
        check.verify(draft, Evidence(record=RECORD))  # warm
        with _lines_run() as count:
            found = check.verify(draft, Evidence(record=RECORD))
        counts[units] = count[0]
        assert len(found) == units * FAILED_PER_UNIT
        assert all(len(f.proposals) == 1 for f in found)
    assert counts[400] / counts[100] <= 4 * 1.15, counts


def _scanned(proposals: list[TextEdit], segments: list[tuple[str, int, int]]) -> tuple[str, ...]:
    """Every segment against every edit: what the index must agree with."""
    found: list[str] = []
    for p in proposals:
        for part, start, end in segments:
            hit = p.start < end and p.end > start if p.end > p.start else start <= p.start <= end
            if hit and part not in found:
                found.append(part)
    return tuple(found)


@settings(max_examples=300, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 6), min_size=1, max_size=8),
    edits=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=6),
    shuffled=st.booleans(),
)
def test_the_segment_index_finds_what_a_scan_finds(
    lengths: list[int], edits: list[tuple[int, int]], shuffled: bool
) -> None:
    segments, pos = [], 0
    for n, length in enumerate(lengths):  # as FromKey lays them out: joined by newlines
        segments.append((f"draft@{n}", pos, pos + length))
        pos += length + 1
    if shuffled:  # any other layout is scanned
        segments.reverse()
    proposals = [TextEdit(start=s, end=e) for s, e in edits]
    assert SegmentIndex(segments).parts_of(proposals) == _scanned(proposals, segments)
