"""LangGraph's own released test suite, run with every node behind a strict always-pass
gate: the transparency oracle.
"""

from __future__ import annotations

from langgraph_oracle import harness

# --- the categoriser, on failure texts in the shapes pytest prints ------------------------


# The node's update reported under its gate's name in an ``updates`` stream.


# A StateSnapshot: pytest drills into each differing attribute, then prints a
# one-line diff of the whole repr (ignored: it cannot say what differs).


# --- the always-pass gate the oracle puts on every node ------------------------------------


# --- the oracle ----------------------------------------------------------------------------


def test_langgraph_suite_unchanged_under_always_pass_gates() -> None:
    allowed = harness.read_allowlist()
    outcome, src = harness.oracle(allowlist=allowed, quiet=True)
    stale = allowed.stale(outcome.passing)
    assert not stale, f"allow-listed tests that do not pass plainly (or no longer exist): {stale}"
    counted = outcome.counted
    shown = [
        f"  [{d.category}: {d.subcategory}] {d.test}\n      {d.first_line[:160]}"
        for d in counted[:40]
    ]
    assert not counted, "\n".join(
        [
            *harness.summary_lines(outcome),
            *shown,
            f"  ... {len(counted) - len(shown)} more" if len(counted) > len(shown) else "",
            f"full report: {src.parent / 'report.md'}",
        ]
    )
