"""``trustgate audit module:attr``: exit 0 all guarded, 1 any unguarded, 3 unknown, 2 bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from trustgate.cli import main

GRAPHS = """
from dataclasses import dataclass
from typing import Any
from typing_extensions import TypedDict
from langgraph.graph import END, START, StateGraph
from trustgate._findings import Finding
from trustgate._gate import TrustGate
from trustgate.policies import Override
from trustgate.readers import FromKey
from trustgate.testing import honest_model
from trustgate.verifiers.base import FunctionVerifier
from trustgate.graph import guard

MODEL = honest_model("text", repeat_last=True)


class S(TypedDict, total=False):
    text: str


def step1(state: S) -> dict[str, Any]:
    return {"text": MODEL.invoke("go").text}


def llm(state: S) -> dict[str, Any]:
    return {"text": (state.get("text") or "").upper()}


def builder():
    g = StateGraph(S)
    g.add_node("step1", step1)
    g.add_node("llm", llm)
    g.add_edge(START, "step1")
    g.add_edge("step1", "llm")
    g.add_edge("llm", END)
    return g


GATE = TrustGate(
    "check",
    reads=FromKey("text"),
    verifiers=[FunctionVerifier(lambda c, e: [Finding.ok("ok")], name="ok")],
    policy=Override("text", "withheld"),
)

open_builder = builder()
open_app = builder().compile()
guarded_app = guard(builder(), {"step1": GATE}).compile()


def make_guarded():
    return guard(builder(), {"step1": GATE})


def no_model():
    g = StateGraph(S)
    g.add_node("llm", llm)
    g.add_edge(START, "llm")
    g.add_edge("llm", END)
    return g


not_a_graph = 42


@dataclass
class Ctx:
    model: str = "x"


def ctx_app():
    g = StateGraph(S, context_schema=Ctx)
    g.add_node("llm", llm)
    g.add_edge(START, "llm")
    g.add_edge("llm", END)
    return g.compile()


def broken():
    raise RuntimeError("cannot build")
"""


@pytest.fixture
def mod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = f"audit_graphs_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(GRAPHS))
    monkeypatch.chdir(tmp_path)  # found through the current directory, like uvicorn
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    yield name
    sys.modules.pop(name, None)


def test_unguarded_exits_1_with_a_table(mod: str, capsys: pytest.CaptureFixture[str]) -> None:
    for attr in ("open_builder", "open_app", "builder"):
        assert main(["audit", f"{mod}:{attr}"]) == 1
        out = capsys.readouterr().out
        assert "step1" in out and "UNGUARDED" in out
        assert "1 crossing(s): 0 guarded, 1 unguarded, 0 unknown" in out
        assert out.rstrip().endswith("verdict: UNGUARDED")
        assert "\nllm " not in out  # the node named llm calls no model


def test_guarded_exits_0(mod: str, capsys: pytest.CaptureFixture[str]) -> None:
    for attr in ("guarded_app", "make_guarded"):
        assert main(["audit", f"{mod}:{attr}"]) == 0
        out = capsys.readouterr().out
        assert "guarded" in out and "UNGUARDED" not in out and "check" in out
    assert main(["audit", f"{mod}:no_model"]) == 0
    assert "no model crossings found" in capsys.readouterr().out


def test_sample_input_and_json(
    mod: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", f"{mod}:guarded_app", "--input", '{"text": "x"}', "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["guarded"] is True and data["status"] == "guarded" and data["exit_code"] == 0
    (crossing,) = data["crossings"]
    assert crossing["node"] == "step1" and crossing["found_by"] == "static+sample_run"
    assert crossing["status"] == "guarded"
    assert crossing["paths"] == [
        {
            "target": "llm",
            "kind": "plain",
            "status": "guarded",
            "reason": "held by the gate on 'step1'",
            "gate": "check",
            "via": "step1",
            "fix": "",
        }
    ]
    assert data["sample_run"]["outcome"] == "finished"
    (tmp_path / "in.json").write_text('{"text": "y"}')
    assert main(["audit", f"{mod}:open_app", "--input", "@in.json"]) == 1
    assert "sample run: finished" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("target", "extra", "message"),
    [
        ("no_such_module_xyz:app", [], "cannot import module"),
        ("{mod}:missing", [], "has no attribute"),
        ("{mod}:not_a_graph", [], "not a StateGraph"),
        ("{mod}:broken", [], "raised RuntimeError"),
        ("{mod}", [], "expected MODULE:ATTR"),
        ("{mod}:open_app", ["--input", "{nope"], "not valid JSON"),
        ("{mod}:open_app", ["--input", "@missing.json"], "cannot read input"),
        ("{mod}:open_app", ["--resume", "true"], "need --input"),
        ("{mod}:open_app", ["--run-tools"], "need --input"),
        ("{mod}:open_app", ["--input", "{}", "--config", "[1]"], "must be a JSON object"),
        ("{mod}:open_app", ["--input", "{}", "--resume", "{bad"], "--resume is not valid JSON"),
        ("{mod}:ctx_app", ["--input", "{}", "--context", '{"nope": 1}'], "does not fit Ctx"),
    ],
)
def test_bad_input_exits_2_one_line(
    mod: str, target: str, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", target.format(mod=mod), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_console_script_in_a_subprocess(mod: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": ""}
    code = "import sys; from trustgate.cli import main; sys.exit(main(sys.argv[1:]))"
    run = subprocess.run(
        [sys.executable, "-c", code, "audit", f"{mod}:open_app"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1, run.stderr
    assert "UNGUARDED" in run.stdout
