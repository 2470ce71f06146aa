"""What a Review gate holds while a person decides: sealed, tamper-refused, keyed.

The node call and verifier runs of a gate that may pause are durable tasks; their
results are the held output, kept in the checkpoint and reported by the task streams
before anyone decided. They are encrypted and authenticated under the review key
(``TRUSTGATE_REVIEW_KEY`` / ``TRUSTGATE_REVIEW_KEY_FILE``, else a random key per
process); a tampered result is refused with a typed error before anything is decoded,
and a result sealed elsewhere under another key says how to configure one.
"""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, TrustGate, _compat
from trustgate.errors import ConfigurationError, TrustgateError
from trustgate.graph._node import _seal, _unseal
from trustgate.policies import Review
from trustgate.readers import LastAIText
from trustgate.verifiers.base import FunctionVerifier

LIE = "ledger entry ZX-4417"
LIE_TEXT = f"The refund was approved, see {LIE}."
KEY = "a-review-key-shared-by-every-worker-0123"
NO_CONFIG: dict[str, Any] = {"configurable": {}}


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRUSTGATE_REVIEW_KEY", raising=False)
    monkeypatch.delenv("TRUSTGATE_REVIEW_KEY_FILE", raising=False)


def _every_reading(sealed: Any) -> str:
    """The envelope as text, plus every field base64-decoded (what a reader tries)."""
    text = [json.dumps(sealed)]
    for value in sealed.values():
        if isinstance(value, str):
            try:
                text.append(base64.b64decode(value).decode("utf-8", "replace"))
            except ValueError:
                continue
    return "\n".join(text)


def _held() -> dict[str, Any]:
    return {"value": {"messages": [AIMessage(LIE_TEXT)]}, "raised": False}


def _new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """What another worker process is to the seal: a random key of its own."""
    from trustgate.graph import _seal as seal

    monkeypatch.setattr(seal, "_random_key", None)


# --- the envelope --------------------------------------------------------------------------


def test_the_held_output_is_unreadable_and_opens_again() -> None:
    sealed = _seal(_held(), NO_CONFIG)
    assert LIE not in _every_reading(sealed)
    assert sealed["trustgate"] == "held for review"
    back = _unseal(sealed, NO_CONFIG)
    assert back["value"]["messages"][0].content == LIE_TEXT
    # a fresh nonce each time: the same output never seals to the same bytes
    assert _seal(_held(), NO_CONFIG)["sealed"] != sealed["sealed"]


@pytest.mark.parametrize("field", ["sealed", "nonce", "tag"])
def test_a_tampered_seal_is_refused_before_anything_is_decoded(
    field: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trustgate.errors import ReviewSealTampered

    sealed = dict(_seal(_held(), NO_CONFIG))
    raw = bytearray(base64.b64decode(sealed[field]))
    raw[len(raw) // 2] ^= 0x01
    sealed[field] = base64.b64encode(bytes(raw)).decode("ascii")
    decoded: list[Any] = []

    class Spy:
        def loads_typed(self, data: Any) -> Any:
            decoded.append(data)
            raise AssertionError("a tampered value reached the deserializer")

    monkeypatch.setattr(_compat, "serde", lambda config: Spy())
    with pytest.raises(ReviewSealTampered, match="does not match its seal") as err:
        _unseal(sealed, NO_CONFIG, "agent")
    assert isinstance(err.value, TrustgateError) and decoded == []


def test_a_value_that_was_never_sealed_is_refused() -> None:
    from trustgate.errors import ReviewSealTampered

    plain = {"trustgate": "held for review", "type": "msgpack", "sealed": "AAAA"}
    with pytest.raises(ReviewSealTampered):
        _unseal(plain, NO_CONFIG, "agent")
    with pytest.raises(ReviewSealTampered):
        _unseal({"value": LIE_TEXT}, NO_CONFIG, "agent")


def test_a_seal_under_another_configured_key_is_a_key_mismatch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from trustgate.errors import ReviewKeyMismatch

    monkeypatch.setenv("TRUSTGATE_REVIEW_KEY", KEY)
    sealed = _seal(_held(), NO_CONFIG)
    monkeypatch.setenv("TRUSTGATE_REVIEW_KEY", KEY.upper())
    with pytest.raises(ReviewKeyMismatch, match="another key") as err:
        _unseal(sealed, NO_CONFIG, "agent")
    assert isinstance(err.value, ConfigurationError)
    assert "TRUSTGATE_REVIEW_KEY" in str(err.value)
    monkeypatch.setenv("TRUSTGATE_REVIEW_KEY", KEY)
    assert _unseal(sealed, NO_CONFIG)["value"]["messages"][0].content == LIE_TEXT


def test_a_seal_made_by_another_process_without_a_key_says_how_to_configure_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from trustgate.errors import ReviewKeyMismatch

    sealed = _seal(_held(), NO_CONFIG)
    assert sealed["random_key"] is True
    _new_process(monkeypatch)
    with pytest.raises(ReviewKeyMismatch, match="another process") as err:
        _unseal(sealed, NO_CONFIG, "agent")
    assert "TRUSTGATE_REVIEW_KEY" in str(err.value) and "agent" in str(err.value)


def test_the_key_file_is_read_and_a_short_key_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key_file = tmp_path / "review.key"
    key_file.write_text(KEY + "\n")
    os.chmod(key_file, stat.S_IRUSR | stat.S_IWUSR)
    monkeypatch.setenv("TRUSTGATE_REVIEW_KEY_FILE", str(key_file))
    sealed = _seal(_held(), NO_CONFIG)
    assert sealed["random_key"] is False
    monkeypatch.delenv("TRUSTGATE_REVIEW_KEY_FILE")
    monkeypatch.setenv("TRUSTGATE_REVIEW_KEY", KEY)  # the same key, given directly
    assert _unseal(sealed, NO_CONFIG)["raised"] is False
    monkeypatch.setenv("TRUSTGATE_REVIEW_KEY", "short")
    with pytest.raises(ConfigurationError, match="at least 16 bytes"):
        _seal(_held(), NO_CONFIG)
    monkeypatch.delenv("TRUSTGATE_REVIEW_KEY")
    monkeypatch.setenv("TRUSTGATE_REVIEW_KEY_FILE", str(tmp_path / "missing.key"))
    with pytest.raises(ConfigurationError, match="cannot read the review key file"):
        _seal(_held(), NO_CONFIG)


# --- in a graph ------------------------------------------------------------------------------


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


def _check(claims: Any, evidence: Any) -> list[Finding]:
    if LIE in str(claims):
        return [Finding.failed("lie_check", "unsupported", f"{LIE} is in no source")]
    return [Finding.ok("lie_check")]


def _app(saver: Any) -> Any:
    g = StateGraph(S)
    g.add_node("agent", lambda s: {"messages": [AIMessage(LIE_TEXT)]})
    g.add_edge(START, "agent")
    gate = TrustGate(
        "text",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(_check, name="lie_check")],
        policy=Review(),
    )
    return trustgate.guard(g, {"agent": gate}).compile(checkpointer=saver)


def _tamper(saver: InMemorySaver) -> int:
    """Flip one byte of every sealed task result kept in the saver."""
    edited = 0
    for writes in saver.writes.values():
        for key, (task_id, channel, typed, path) in list(writes.items()):
            value = saver.serde.loads_typed(typed)
            if isinstance(value, dict) and value.get("trustgate") == "held for review":
                raw = bytearray(base64.b64decode(value["sealed"]))
                raw[0] ^= 0x01
                value = {**value, "sealed": base64.b64encode(bytes(raw)).decode("ascii")}
                writes[key] = (task_id, channel, saver.serde.dumps_typed(value), path)
                edited += 1
    return edited


def test_a_tampered_checkpoint_is_refused_on_resume() -> None:
    from trustgate.errors import ReviewSealTampered

    saver = InMemorySaver()
    app = _app(saver)
    config = {"configurable": {"thread_id": "tamper"}}
    paused = app.invoke({"messages": [HumanMessage("go")]}, config)
    assert paused["__interrupt__"]
    assert _tamper(saver) >= 1
    with pytest.raises(ReviewSealTampered):
        app.invoke(Command(resume={"type": "approve", "by": "alice"}), config)
    assert not trustgate.reports(app, config)  # nothing was released


def test_a_resume_in_another_process_needs_the_shared_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from trustgate.errors import ReviewKeyMismatch

    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "elsewhere"}}
    _app(saver).invoke({"messages": [HumanMessage("go")]}, config)
    _new_process(monkeypatch)
    with pytest.raises(ReviewKeyMismatch, match="TRUSTGATE_REVIEW_KEY"):
        _app(saver).invoke(Command(resume={"type": "approve", "by": "alice"}), config)

    monkeypatch.setenv("TRUSTGATE_REVIEW_KEY", KEY)  # every worker gets the same key
    config = {"configurable": {"thread_id": "shared"}}
    _app(saver).invoke({"messages": [HumanMessage("go")]}, config)
    _new_process(monkeypatch)
    out = _app(saver).invoke(Command(resume={"type": "approve", "by": "alice"}), config)
    assert out["messages"][-1].content == LIE_TEXT  # approved: released as the person saw it
    (report,) = trustgate.reports(_app(saver), config)
    assert report.decision == "reviewed" and report.approval is not None
