"""The MCP agent (a real MCP server in a subprocess), guarded: honest runs unchanged, the
lie blocked.
"""

from __future__ import annotations

from pathlib import Path

from _real_graphs_support import honest_runs_alike, lie_blocked
from shapes import mcp_alerts

# --- the harness ------------------------------------------------------------------------------


# --- 6. langchain-mcp-adapters: tools of a real MCP server (a subprocess) -------------------------


def test_mcp_honest_guarded_ends_as_unguarded(tmp_path: Path) -> None:
    shape, _final = honest_runs_alike(mcp_alerts.build, tmp_path)
    # what the server itself recorded
    assert shape.executions() == [
        ("ack_alert", {"alert_id": "ALRT-101", "note": 'on it: "disk 91% full"'}),
        ("get_alert", {"alert_id": "ALRT-101"}),
    ]


def test_mcp_lie_blocked() -> None:
    """MCP tools are async only: the async ways (astream, astream_events)."""
    runs = lie_blocked(mcp_alerts.build, ways=("astream", "events"))
    for obs in runs.values():
        assert obs.halted is not None
