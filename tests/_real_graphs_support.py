"""What the tests of the real third-party graphs share: the honest-run comparison and
the lie harness."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from _bypass_support import Observation, Run, find_lies, normalise, observe, observe_async
from _bypass_support import see_recorder as _see_recorder
from langchain_core.messages import AIMessage
from shapes._real import RealShape, scrub

import trustgate


def _comparable(final: dict[str, Any]) -> Any:
    return scrub(normalise({k: v for k, v in final.items() if k != "trust_reports"}))


def _verified(app: Any, config: dict[str, Any]) -> list[trustgate.Report]:
    """The gates' reports of a run: every one passed, and some verifier checked a claim."""
    reports = trustgate.reports(app, config)
    assert reports, "the gates never ran"
    assert [r.decision for r in reports] == ["pass"] * len(reports), [
        (r.gate, r.decision, [(f.code, f.message) for f in r.failed]) for r in reports
    ]
    checked = [f for r in reports for f in r.findings if f.passed and f.verifier != "gate"]
    assert checked, "no verifier checked anything: the honest run proves nothing"
    return reports


def honest_runs_alike(build: Any, tmp_path: Path) -> tuple[RealShape, dict[str, Any]]:
    """An honest build run unguarded, a second one guarded: the same final state
    (reports aside), the same tool executions, the same store; the guarded shape and
    its final state."""
    plain = build("honest", marker_dir=tmp_path / "plain")
    final_plain = plain.run_to_end(plain.app)
    shape = build("honest", marker_dir=tmp_path / "guarded")
    app = shape.guarded()
    config = shape.config()
    final = shape.run_to_end(app, config)
    assert _comparable(final) == _comparable(final_plain)
    assert shape.executions() == plain.executions()
    assert shape.executions(), "no tool ran: the run proves nothing about tools"
    assert shape.store_values() == plain.store_values()
    assert shape.answered == plain.answered
    assert not find_lies(final, shape.lies)
    assert "trust_reports" not in final_plain
    _verified(app, config)
    return shape, final


def _watch(shape: RealShape, app: Any, how: str) -> Observation:
    """One observed run: every stream item, the state everywhere, the store, the tools."""
    run = Run(
        app=app,
        inputs=shape.inputs,
        config=shape.config(),
        lies=shape.lies,
        context=shape.context,
        answer=shape.answer,
    )
    shape.reset()
    obs = observe(run, how) if how == "stream" else asyncio.run(observe_async(run, how))
    _see_recorder(obs, shape.recorder, ())
    obs.see("tool_executions", shape.executions())
    obs.see("store", shape.store_values())
    return obs


def lie_blocked(build: Any, ways: tuple[str, ...] = ("stream", "astream")) -> dict[str, Any]:
    """The control (unguarded, the lie reaches the state, and the tools the shape names),
    then each way guarded, on a fresh build: the lie appears nowhere but in the audit
    record, and no tool runs with it."""
    plain = build("lying")
    control = _watch(plain, plain.app, ways[0])
    assert control.halted is None and control.error is None
    assert find_lies(control.final, plain.lies), "unguarded, the lie never reached the state"
    for tool in plain.lie_tools:
        runs = [args for name, args in plain.executions() if name == tool]
        assert find_lies(runs, plain.lies), f"unguarded, the lie never reached {tool}"
    out: dict[str, Observation] = {}
    for how in ways:
        shape = build("lying")
        obs = _watch(shape, shape.guarded(), how)
        obs.assert_blocked()
        assert not find_lies(shape.executions(), shape.lies)
        failed = [f for r in obs.reports for f in r.failed if f.verifier != "gate"]
        assert failed, f"[{how}] no verifier failed the lie"
        assert obs.error is None, obs.error
        out[how] = obs
    return out


def _answers(final: dict[str, Any]) -> list[str]:
    return [m.text for m in final.get("messages", []) if isinstance(m, AIMessage) and m.text]
