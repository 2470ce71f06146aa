"""A small MCP server of on-call alerts, over stdio (the ``mcp`` package's FastMCP).

``tests/shapes/mcp_alerts.py`` starts it through ``langchain-mcp-adapters``' stdio
client, as a subprocess: ``python tests/_mcp_alerts_server.py --markers DIR``. Every
tool execution appends its arguments, as one JSON line, to ``DIR/<tool>.ran``: the
tools run in another process, so the marker files are how a test knows what really
ran, and with which arguments.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ALERTS = {
    "ALRT-101": "db-2: disk 91% full on /var/lib/postgresql",
    "ALRT-102": "api: p99 latency 2.3 s for 10 minutes",
}
"""The alerts the server knows; the test's gate takes its evidence from the same dict."""


def serve(markers: Path) -> None:
    from mcp.server.fastmcp import FastMCP

    server = FastMCP("alerts", log_level="WARNING")

    def ran(tool: str, **args: str) -> None:
        markers.mkdir(parents=True, exist_ok=True)
        with (markers / f"{tool}.ran").open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(args) + "\n")

    @server.tool()
    def get_alert(alert_id: str) -> str:
        """Read an on-call alert: what fired, where."""
        ran("get_alert", alert_id=alert_id)
        return f"{alert_id}: {ALERTS[alert_id]}" if alert_id in ALERTS else f"no alert {alert_id}"

    @server.tool()
    def ack_alert(alert_id: str, note: str) -> str:
        """Acknowledge an alert, with a note quoting what it says."""
        ran("ack_alert", alert_id=alert_id, note=note)
        if alert_id not in ALERTS:
            return f"no alert {alert_id}"
        return f"{alert_id} acknowledged"

    server.run("stdio")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--markers", type=Path, required=True)
    serve(parser.parse_args().markers)


if __name__ == "__main__":
    main()
