"""Every Python code block in the README runs as written.

Blocks that send traces keep their documented endpoints (Phoenix, Jaeger, Langfuse,
a collector); the test points those endpoints at a local OTLP receiver on 127.0.0.1
and checks the spans arrived, and restores the global OpenTelemetry providers after.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest
from _otel import global_providers
from _otlp_receiver import otlp_receiver

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
ENDPOINTS = (
    "http://localhost:6006",
    "http://localhost:4318",
    "http://localhost:5000",
    "https://cloud.langfuse.com/api/public/otel",
)


def run_block(code: str, name: str) -> None:
    """Run a block as its own module, as a user's script would (type hints resolve)."""
    module = types.ModuleType(name)
    module.__file__ = str(README)
    sys.modules[name] = module
    try:
        exec(compile(code, str(README), "exec"), module.__dict__)
    finally:
        del sys.modules[name]


def test_readme_has_python_blocks() -> None:
    assert len(BLOCKS) >= 8


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_block_runs(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if "otel.configure" not in code and "telemetry.configure" not in code:
        run_block(code, "readme_block")
        return
    with otlp_receiver() as (url, received), global_providers(None):
        for endpoint in ENDPOINTS:
            code = code.replace(endpoint, url)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
        run_block(code, "readme_block")
        if ".invoke(" in code:  # a traced run: its gate spans reached the receiver
            names = {span.name for _, span in received.spans()}
            assert any(n.startswith("trustgate.gate ") for n in names), names
