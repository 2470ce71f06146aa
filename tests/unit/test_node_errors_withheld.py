"""A guarded node's error keeps nothing of the model's text: message, notes, chain,
attributes, frame locals.

Each test raises an error that quotes a lie (``LIE``) the way real code does (a parse
failure, a model-chosen key, a note, ``raise ... from``), and looks where people and
tools read errors: ``traceback.format_exception``, ``logging.exception`` through a
handler, the checkpoint rows and the ``tasks``/``debug`` streams.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import traceback
from collections.abc import Callable
from typing import Annotated, Any

import pydantic
import pytest
from _bypass_support import find_lies
from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, TrustGate
from trustgate.errors import TrustgateOutcome
from trustgate.policies import Halt, Review
from trustgate.readers import LastAIText
from trustgate.verifiers.base import FunctionVerifier

LIE = "ledger entry ZX-4417"
LIE_TEXT = f"The refund was approved, see {LIE}."


def _check(claims: Any, evidence: Any) -> list[Finding]:
    if LIE in str(claims):
        return [Finding.failed("lie_check", "unsupported", "names a record no source has")]
    return [Finding.ok("lie_check")]


def _gate(policy: Any = None, passthrough: tuple[str, ...] = ()) -> TrustGate:
    return TrustGate(
        "text",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(_check, name="lie_check")],
        policy=policy or Halt(),
        passthrough=list(passthrough),
    )


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


def _app(node: Callable[[Any], Any], gate: TrustGate | None = None, *, saver: Any = None) -> Any:
    g = StateGraph(S)
    g.add_node("agent", node)
    g.add_edge(START, "agent")
    return trustgate.guard(g, {"agent": gate or _gate()}).compile(checkpointer=saver)


def _raised(app: Any, config: Any = None) -> BaseException:
    with pytest.raises(BaseException) as info:
        app.invoke({"messages": [HumanMessage("go")]}, config)
    return info.value


def _printed(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))


class _Verdict(pydantic.BaseModel):
    verdict: int


def _parse_failure(state: Any) -> Any:
    """A parse failure as parsers raise it: the model's text in the chained cause."""
    try:
        json.loads(LIE_TEXT)
    except json.JSONDecodeError as exc:
        raise ValueError(f"could not parse the answer: {LIE_TEXT}") from exc


def _handled_badly(state: Any) -> Any:
    """The implicit context: an error raised while handling one that quotes the model."""
    try:
        {"approve": 1}[LIE]
    except KeyError:
        raise RuntimeError("lookup failed")  # noqa: B904 - the implicit context is the point


def _noted(state: Any) -> Any:
    err = ValueError("the answer is malformed")
    err.add_note(f"model said: {LIE_TEXT}")
    raise err


# --- the chain, notes and the printed traceback --------------------------------------------


@pytest.mark.parametrize(
    "node",
    [_parse_failure, _handled_badly, _noted],
    ids=["cause", "context", "note"],
)
def test_the_printed_traceback_holds_nothing_of_the_model(node: Callable[[Any], Any]) -> None:
    err = _raised(_app(node))
    assert type(err).__name__ in ("ValueError", "RuntimeError")  # the type is kept
    assert "message withheld" in str(err)
    assert LIE not in _printed(err), _printed(err)
    assert not find_lies(err, [LIE])  # attributes, args, the chain objects themselves
    # declared, the error is the node's own, whole
    assert LIE in _printed(_raised(_app(node, _gate(passthrough=("error",)))))


def test_the_chain_keeps_its_types_and_shape() -> None:
    err = _raised(_app(_parse_failure))
    assert isinstance(err, ValueError)
    cause = err.__cause__
    assert isinstance(cause, json.JSONDecodeError)  # scrubbed in place, type kept
    assert LIE not in cause.doc and LIE not in cause.msg and "withheld" in str(cause)
    assert "The above exception was the direct cause" in _printed(err)


def test_logging_exception_through_a_handler_shows_nothing_of_the_model() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    log = logging.getLogger("tests.node_errors")
    log.addHandler(handler)
    try:
        for node in (_parse_failure, _handled_badly, _noted):
            try:
                _app(node).invoke({"messages": [HumanMessage("go")]})
            except Exception:
                log.exception("the graph failed")
    finally:
        log.removeHandler(handler)
    text = stream.getvalue()
    assert text.count("the graph failed") == 3
    assert "Traceback" in text and LIE not in text, text


def test_a_cycle_in_the_chain_is_withheld_once_each() -> None:
    from trustgate.graph._withheld import withheld

    first, second = ValueError(LIE_TEXT), KeyError(LIE)
    first.__context__, second.__context__ = second, first
    out = withheld(first, "agent")
    assert out is first
    assert LIE not in str(first) and LIE not in str(second)
    assert out.__context__ is second and second.__context__ is first


# --- errors whose text is not (only) their args -------------------------------------------------


def test_a_json_error_keeps_its_type_not_the_document() -> None:
    def node(state: Any) -> Any:
        json.loads("{" + LIE_TEXT)

    err = _raised(_app(node))
    assert isinstance(err, json.JSONDecodeError)
    assert LIE not in err.doc and not find_lies(err, [LIE])
    assert err.pos > 0  # positions are not text


def test_an_os_error_does_not_name_the_file_the_model_chose() -> None:
    def node(state: Any) -> Any:
        with open(f"/nonexistent/{LIE}"):
            pass

    err = _raised(_app(node))
    assert isinstance(err, FileNotFoundError) and err.errno == 2
    assert err.filename is None and LIE not in str(err) and LIE not in repr(err)


def test_an_attribute_error_does_not_keep_the_object() -> None:
    def node(state: Any) -> Any:
        answer: Any = LIE_TEXT
        return answer.verdict

    err = _raised(_app(node))
    assert isinstance(err, AttributeError)
    assert err.obj is None and LIE not in _printed(err)


@pytest.mark.parametrize(
    ("raise_it", "original"),
    [
        (lambda: _Verdict(verdict=LIE_TEXT), "pydantic_core._pydantic_core.ValidationError"),
        (lambda: (LIE_TEXT.encode() + b"\xff").decode(), "UnicodeDecodeError"),
    ],
    ids=["pydantic", "unicode"],
)
def test_an_error_that_computes_its_text_is_raised_as_a_typed_one(
    raise_it: Callable[[], Any], original: str
) -> None:
    from trustgate.errors import NodeErrorWithheld

    def node(state: Any) -> Any:
        raise_it()

    err = _raised(_app(node))
    assert isinstance(err, NodeErrorWithheld) and isinstance(err, TrustgateOutcome)
    assert err.error_type == original and err.node == "agent"
    assert original in str(err)
    assert err.__cause__ is None and err.__context__ is None and err.__suppress_context__
    assert LIE not in _printed(err) and LIE not in repr(err)
    assert err.__traceback__ is not None  # where it was raised is still shown


def test_an_unscrubbable_error_inside_the_chain_is_replaced_there() -> None:
    def node(state: Any) -> Any:
        try:
            _Verdict(verdict=LIE_TEXT)
        except pydantic.ValidationError as exc:
            raise ValueError("bad verdict") from exc

    err = _raised(_app(node))
    assert isinstance(err, ValueError)
    assert type(err.__cause__).__name__ == "NodeErrorWithheld"
    assert isinstance(err.__cause__, TrustgateOutcome)
    assert err.__cause__.error_type.endswith("ValidationError")
    assert LIE not in _printed(err)


def test_an_exception_group_keeps_its_type_and_withholds_its_members() -> None:
    def node(state: Any) -> Any:
        raise ExceptionGroup(f"two failures: {LIE}", [ValueError(LIE_TEXT), KeyError(LIE)])

    err = _raised(_app(node))
    assert isinstance(err, ExceptionGroup)
    assert [type(e) for e in err.exceptions] == [ValueError, KeyError]
    assert LIE not in _printed(err) and LIE not in repr(err)


def test_the_frames_of_the_node_keep_no_locals() -> None:
    """Error trackers capture local variables of every frame in the traceback."""

    def node(state: Any) -> Any:
        draft = LIE_TEXT
        raise ValueError(f"bad: {draft}")

    err = _raised(_app(node))
    frames = [f for f, _ in traceback.walk_tb(err.__traceback__) if f.f_code is node.__code__]
    assert frames and all(LIE not in repr(f.f_locals) for f in frames)


def test_the_async_path_withholds_the_notes_and_the_chain_too() -> None:
    for raise_it in (_noted, _parse_failure):

        async def node(state: Any, raise_it: Callable[[Any], Any] = raise_it) -> Any:
            raise_it(state)

        with pytest.raises(ValueError) as info:
            asyncio.run(_app(node).ainvoke({"messages": [HumanMessage("go")]}))
        assert LIE not in _printed(info.value) and not find_lies(info.value, [LIE])


def test_a_review_gate_withholds_the_chain_of_its_durable_call() -> None:
    """A gate that may pause runs the node as a durable task: the error leaves that
    task (and is kept with it in the checkpoint) already withheld."""

    def node(state: Any) -> Any:
        try:
            _Verdict(verdict=LIE_TEXT)
        except pydantic.ValidationError as exc:
            raise ValueError("bad verdict") from exc

    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "review-error"}}
    err = _raised(_app(node, _gate(Review()), saver=saver), config)
    assert isinstance(err, ValueError) and LIE not in _printed(err)
    rows = [(i.checkpoint["channel_values"], i.pending_writes) for i in saver.list(config)]
    assert rows and not find_lies(rows, [LIE])


# --- the checkpoint rows and the tasks/debug streams -----------------------------------------


def test_the_checkpoint_rows_keep_nothing_of_the_model() -> None:
    """LangGraph keeps the task's error (its ``repr``) with the task in the checkpoint."""

    def node(state: Any) -> Any:
        _Verdict(verdict=LIE_TEXT)

    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "rows"}}
    _raised(_app(node, saver=saver), config)
    errors = [w for i in saver.list(config) for w in i.pending_writes or () if w[1] == "__error__"]
    assert errors, "the failed task's error is in the checkpoint"
    rows = [(i.checkpoint["channel_values"], i.pending_writes) for i in saver.list(config)]
    assert not find_lies(rows, [LIE]), rows
    tasks = _app(node, saver=saver).get_state(config).tasks
    assert not find_lies([t.error for t in tasks], [LIE])


@pytest.mark.parametrize("node", [_parse_failure, _noted], ids=["cause", "note"])
def test_the_tasks_and_debug_streams_show_nothing_of_the_model(
    node: Callable[[Any], Any],
) -> None:
    app = _app(node, saver=InMemorySaver())
    seen: list[Any] = []
    with pytest.raises(Exception):  # noqa: B017 - the node's own error, withheld
        for part in app.stream(
            {"messages": [HumanMessage("go")]},
            {"configurable": {"thread_id": "streams"}},
            stream_mode=["tasks", "debug"],
        ):
            seen.append(part)
    errors = [p for p in seen if "error" in str(p)]
    assert errors, "the streams report the failed task"
    assert not find_lies(seen, [LIE]), seen
