"""The verifier contract: evidence resolution and function verifiers."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import pytest

from trustgate import Finding
from trustgate.errors import ConfigurationError
from trustgate.verifiers.base import (
    Evidence,
    EvidenceSources,
    FromContext,
    FromState,
    FunctionVerifier,
    Verifier,
    verifier,
)


@dataclass
class Ctx:
    workspace: str


def test_sources_resolve_fixed_state_and_context() -> None:
    sources = EvidenceSources(
        workspace=FromContext("workspace"),
        record=FromState("record"),
        brief="fixed-brief",
        extra={"k": FromState("x")},
    )
    ev = sources.resolve({"record": "R", "x": 1}, Ctx(workspace="/repo"))
    assert ev.workspace == "/repo"
    assert ev.record == "R"
    assert ev.brief == "fixed-brief"
    assert ev.extra["k"] == 1
    assert sources.state_keys() == {"record", "x"}
    ev2 = sources.resolve({"record": "R", "x": 1}, {"workspace": "/other"})
    assert ev2.workspace == "/other"


def test_missing_sources_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="state key"):
        EvidenceSources(record=FromState("record")).resolve({}, None)
    with pytest.raises(ConfigurationError, match="no context"):
        EvidenceSources(workspace=FromContext("workspace")).resolve({}, None)
    with pytest.raises(ConfigurationError, match="does not have"):
        EvidenceSources(workspace=FromContext("nope")).resolve({}, Ctx("/r"))
    with pytest.raises(ConfigurationError, match="needs evidence"):
        Evidence().require("workspace")
    assert Evidence(extra={"a": 1}).require("a") == 1
    assert Evidence().get("brief", 3) == 3


def test_function_verifier_sync_and_decorator() -> None:
    @verifier(timeout=1.0)
    def no_todo(claims: Any, evidence: Evidence) -> Finding:
        if "TODO" in claims:
            return Finding.failed("no_todo", "todo", "has TODO")
        return Finding.ok("no_todo")

    assert isinstance(no_todo, FunctionVerifier)
    assert isinstance(no_todo, Verifier)
    assert no_todo.name == "no_todo" and no_todo.timeout == 1.0
    assert no_todo.verify("TODO", Evidence())[0].blocking
    assert no_todo.verify("done", Evidence())[0].passed

    bare = verifier(lambda c, e: [Finding.ok("x")])
    assert bare.verify(None, Evidence())[0].passed


async def test_function_verifier_async() -> None:
    async def check(claims: Any, evidence: Evidence) -> list[Finding]:
        return [Finding.ok("check")]

    v = FunctionVerifier(check)
    assert inspect.iscoroutinefunction(v.averify)
    assert (await v.averify(1, Evidence()))[0].passed
    sync_v = FunctionVerifier(lambda c, e: Finding.ok("s"), name="s")
    assert (await sync_v.averify(1, Evidence()))[0].passed


def test_function_verifier_rejects_results_that_say_nothing() -> None:
    with pytest.raises(ConfigurationError, match="None"):
        FunctionVerifier(lambda c, e: None, name="n").verify(1, Evidence())
    with pytest.raises(ConfigurationError, match="bool"):
        FunctionVerifier(lambda c, e: True, name="b").verify(1, Evidence())
    with pytest.raises(ConfigurationError, match="expected Finding"):
        FunctionVerifier(lambda c, e: ["x"], name="l").verify(1, Evidence())
    with pytest.raises(ConfigurationError):
        FunctionVerifier(lambda c, e: None, timeout=0)
