"""trustgate needs ``opentelemetry-api`` only: with the SDK and exporters unimportable,
``import trustgate`` and a guarded crossing work, and ``configure()`` fails with a typed
error naming the extra to install.

Runs in a fresh interpreter whose import system refuses ``opentelemetry.sdk`` and
``opentelemetry.exporter`` (what an install without the ``otlp`` extra looks like).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import importlib.abc, json, sys

class NoSdk(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("opentelemetry.sdk", "opentelemetry.exporter")):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoSdk())

import trustgate
from trustgate import otel
from trustgate.graph import guard
from trustgate.testing import lying_model
from _gate_support import LIE, inspector, reviewer_graph

app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector()}).compile()
out = app.invoke({"log": []})
with otel.pipeline_run("demo", thread_id="t"):
    pass
try:
    otel.configure("http://127.0.0.1:9")
    error = None
except otel.OtlpExtraMissing as exc:
    error = str(exc)
print(json.dumps({
    "verdict": out["review"].verdict,
    "decision": out["trust_reports"][0].decision,
    "error": error,
    "sdk_loaded": sorted(m for m in sys.modules if m.startswith(("opentelemetry.sdk",
                                                                  "opentelemetry.exporter"))),
}))
"""


def test_import_and_crossing_with_the_api_only() -> None:
    env = dict(os.environ, PYTHONPATH=str(TESTS))
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        cwd=TESTS.parent,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["verdict"] == "REQUEST_CHANGES"  # the gate still overrides
    assert result["decision"] == "modified"
    assert result["sdk_loaded"] == []
    assert "pip install 'langgraph-trustgate[otlp]'" in result["error"]
