"""Testing your gates: scripted models that lie, and a harness that proves the lie stopped.

A control is only real once you have watched it stop something. What is here:

* :class:`ScriptedChatModel`, :func:`lying_model`, :func:`honest_model`: chat models
  that answer exactly what the test scripted (an honest answer or a confident lie).
  They speak the full chat-model interface (sync, async, token streaming, tool calls,
  structured output), so a guarded graph cannot tell them from a provider's model;
* :func:`assert_lie_blocked`: run a guarded graph with a lying model and assert the
  lie reached no stream, no state and no checkpoint (:class:`LieCheck` says what was
  seen, :class:`LieNotBlocked` where it leaked);
* the models of the reference pipelines (:func:`pipeline_models`, ...) and
  :func:`span_exporter` (the spans a test produced);
* pytest fixtures, registered when trustgate is installed and loaded only when a test
  uses one: ``trustgate_lying_model``, ``trustgate_honest_model``,
  ``trustgate_pipeline_models``, ``trustgate_assert_lie_blocked``, ``trustgate_spans``.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel, PrivateAttr

from trustgate.errors import TrustgateError

logger = logging.getLogger(__name__)

__all__ = ["ScriptExhausted", "ScriptedChatModel", "honest_model", "lying_model"]

Scripted = AIMessage | str | dict[str, Any] | Callable[[list[BaseMessage]], "AIMessage | str"]

_TOKEN = re.compile(r"\S+\s*|\s+")


class ScriptExhausted(TrustgateError):
    """The scripted model was called more often than the test scripted."""


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from a script, in order.

    Each entry is the reply to one call: a string, an ``AIMessage`` (tool calls
    included), a dict (sent as JSON text, handy for structured output) or a callable
    that receives the messages the model was given and returns a reply. ``calls``
    records every input, so a test can assert what the model saw (e.g. the issue list
    on a re-render).

    Example:
        ```python
        from trustgate.testing import ScriptedChatModel

        model = ScriptedChatModel(responses=["The deploy caused it."], personality="lying")
        assert model.invoke("why?").content == "The deploy caused it."
        ```
    """

    responses: list[Any]
    personality: Literal["honest", "lying", "scripted"] = "scripted"
    repeat_last: bool = False
    """Keep answering with the last reply once the script runs out, instead of raising."""

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _index: int = PrivateAttr(default=0)
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return f"trustgate-scripted-{self.personality}"

    @property
    def calls(self) -> list[list[BaseMessage]]:
        """Every list of messages this model was invoked with, in order."""
        with self._lock:
            return list(self._calls)

    def reset(self) -> None:
        with self._lock:
            self._index = 0
            self._calls.clear()

    def _next(self, messages: list[BaseMessage]) -> AIMessage:
        with self._lock:
            self._calls.append(list(messages))
            if self._index >= len(self.responses):
                if not (self.repeat_last and self.responses):
                    raise ScriptExhausted(
                        f"scripted {self.personality} model was called {self._index + 1} times "
                        f"but only {len(self.responses)} replies were scripted"
                    )
                entry = self.responses[-1]
            else:
                entry = self.responses[self._index]
            self._index += 1
        if callable(entry) and not isinstance(entry, (AIMessage, str, dict)):
            entry = entry(list(messages))
        if isinstance(entry, AIMessage):
            # a fresh copy per reply: ``add_messages`` stamps an id on the message it
            # stores, and a repeated reply must not replace the earlier one in state
            return entry.model_copy(deep=True)
        if isinstance(entry, dict):
            return AIMessage(content=json.dumps(entry))
        return AIMessage(content=str(entry))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """Stream the scripted reply token by token, tool calls in the last chunk."""
        message = self._next(messages)
        text = message.content if isinstance(message.content, str) else ""
        tokens = _TOKEN.findall(text) if text else []
        if not isinstance(message.content, str):
            tokens = []
        for token in tokens:
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=token, id=message.id))
            if run_manager is not None:
                run_manager.on_llm_new_token(token, chunk=chunk)
            yield chunk
        tail_content: Any = "" if isinstance(message.content, str) else message.content
        tool_chunks = [
            {
                "name": tc["name"],
                "args": json.dumps(tc["args"]),
                "id": tc.get("id"),
                "index": i,
                "type": "tool_call_chunk",
            }
            for i, tc in enumerate(message.tool_calls)
        ]
        if tool_chunks or not tokens:
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content=tail_content,
                    id=message.id,
                    tool_call_chunks=tool_chunks,
                    chunk_position="last",
                )
            )

    def bind_tools(
        self, tools: Sequence[Any], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind the tools' schemas, as a provider's model does; replies still come from
        the script (a graph that checks what was bound, or an audit's stub model, sees
        the same ``tools`` a provider would receive)."""
        from langchain_core.utils.function_calling import convert_to_openai_tool

        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def with_structured_output(
        self, schema: Any, *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[LanguageModelInput, Any]:
        """Parse the scripted reply as JSON into ``schema`` (a pydantic model or dict)."""

        def parse(message: AIMessage) -> Any:
            try:
                data = json.loads(message.text)
                parsed: Any = (
                    schema.model_validate(data)
                    if isinstance(schema, type) and issubclass(schema, BaseModel)
                    else data
                )
            except Exception as exc:
                if include_raw:
                    return {"raw": message, "parsed": None, "parsing_error": exc}
                raise OutputParserException(f"scripted reply is not {schema!r}: {exc}") from exc
            if include_raw:
                return {"raw": message, "parsed": parsed, "parsing_error": None}
            return parsed

        return self.bind(ls_structured_output_format=_structured_format(schema)) | RunnableLambda(
            parse
        )


def _structured_format(schema: Any) -> dict[str, Any]:
    """The request a provider's ``with_structured_output`` attaches (schema as JSON)."""
    from langchain_core.utils.function_calling import convert_to_json_schema

    try:
        return {"kwargs": {"method": "json_schema"}, "schema": convert_to_json_schema(schema)}
    except Exception:  # an unusual schema: the reply is still parsed as before
        logger.warning("scripted model: cannot describe structured-output schema %r", schema)
        return {"kwargs": {"method": "json_schema"}}


def honest_model(*responses: Scripted, repeat_last: bool = False) -> ScriptedChatModel:
    """A scripted model whose replies are true to the sources the test built."""
    return ScriptedChatModel(
        responses=list(responses), personality="honest", repeat_last=repeat_last
    )


def lying_model(*responses: Scripted, repeat_last: bool = False) -> ScriptedChatModel:
    """A scripted model that fabricates: invented evidence, causes, citations."""
    return ScriptedChatModel(
        responses=list(responses), personality="lying", repeat_last=repeat_last
    )


# --- reference-pipeline personalities -------------------------------------------------
#
# One honest and one inventing personality per reference pipeline
# (``trustgate.pipelines``), scripted on the bundled sample data. Each model answers
# from what it is asked (the round, the step, the issues it was sent back with), not
# from a call counter, so one model serves any number of runs and threads.

PIPELINES = ("code_review", "investigation", "postmortem", "compliance")
"""The reference pipelines, by module name."""


def _all_text(messages: Sequence[BaseMessage]) -> str:
    return "\n".join(m.text for m in messages)


def _sample(pipeline: str, name: str) -> Any:
    from trustgate.pipelines._common import load_json, load_text

    return load_json(pipeline, name) if name.endswith(".json") else load_text(pipeline, name)


def _responder(
    personality: Literal["honest", "lying"], fn: Callable[[list[BaseMessage]], AIMessage | str]
) -> ScriptedChatModel:
    return ScriptedChatModel(responses=[fn], personality=personality, repeat_last=True)


def _mode(personality: str) -> Literal["honest", "lying"]:
    if personality not in ("honest", "inventing"):
        raise ValueError(f"personality must be 'honest' or 'inventing', not {personality!r}")
    return "honest" if personality == "honest" else "lying"


def code_review_models(personality: str = "inventing") -> dict[str, ScriptedChatModel]:
    """The code review's builder and inspector.

    The inventing builder closes review items with invented citations (content the
    file does not hold, a file that does not exist) and names a changed file that is
    not in the diff; sent back with the override note, it answers honestly. Both
    inspectors approve whatever they are shown: the model's verdict is advisory.

    Example:
        ```python
        from trustgate.testing import code_review_models

        models = code_review_models("inventing")
        assert set(models) == {"builder", "inspector"}
        ```
    """
    mode = _mode(personality)
    honest = _sample("code_review", "honest_manifest.json")
    inventing = _sample("code_review", "inventing_manifest.json")

    def builder(messages: list[BaseMessage]) -> str:
        if mode == "honest" or "Overridden:" in _all_text(messages):
            return json.dumps(honest)
        return json.dumps(inventing)

    def inspector(messages: list[BaseMessage]) -> str:
        return json.dumps(
            {
                "verdict": "APPROVE",
                "summary": "Every action item is handled; the cited lines match the items.",
            }
        )

    return {"builder": _responder(mode, builder), "inspector": _responder(mode, inspector)}


def investigation_models(personality: str = "inventing") -> dict[str, ScriptedChatModel]:
    """The incident investigation's investigator: proposes field values grounded by locators.

    The inventing investigator writes its own excerpt into a locator, points past the
    end of a file, cites a file outside the case's scope, and grounds a value only in
    a chat message no connector can fetch.
    """
    mode = _mode(personality)
    proposal = _sample(
        "investigation", "honest_proposal.json" if mode == "honest" else "inventing_proposal.json"
    )
    return {"investigator": _responder(mode, lambda _m: json.dumps(proposal))}


def postmortem_models(personality: str = "inventing") -> dict[str, ScriptedChatModel]:
    """The postmortem's drafter: the inventing one fills the record's silence with a cause.

    Its draft says the pool was exhausted *because* the deploy doubled worker
    concurrency (uncited), hedges about a June cost review (cited, still a guess), and
    cites a record line that does not exist.
    """
    mode = _mode(personality)
    draft = _sample("postmortem", "honest_draft.md" if mode == "honest" else "inventing_draft.md")
    return {"drafter": _responder(mode, lambda _m: str(draft))}


_STEP = re.compile(r"^STEP: (.+)$", re.M)
_REVISE = "ISSUES TO FIX:"


def compliance_models(personality: str = "inventing") -> dict[str, ScriptedChatModel]:
    """Compliance drafting's planner, executor and blind verifier.

    The inventing executor cites ISO/IEC 27001 clauses 9.2 and 9.3, which the brief
    never approved (and still cites 9.2 after the re-render), and quotes a price and
    a URL outside the approved evidence set (fixed after the re-render). Its verifier
    waves every draft through, and answers the stakeholder email in prose, which
    never parses as a verdict.
    """
    mode = _mode(personality)
    brief = _sample("compliance", "brief.json")
    plan = _sample("compliance", "plan.json")
    steps: dict[str, list[str]] = _sample(
        "compliance", "honest_steps.json" if mode == "honest" else "inventing_steps.json"
    )

    def planner(messages: list[BaseMessage]) -> str:
        return json.dumps({"brief": brief, "steps": plan["steps"]})

    def executor(messages: list[BaseMessage]) -> str:
        text = _all_text(messages)
        found = _STEP.findall(text)
        title = found[-1].strip() if found else next(iter(steps))
        drafts = steps.get(title) or ["(no draft scripted for this step)"]
        attempt = 1 if _REVISE in text else 0
        return drafts[min(attempt, len(drafts) - 1)]

    def verifier(messages: list[BaseMessage]) -> str:
        if mode == "lying" and "Dear team leads" in _all_text(messages):
            return "The draft reads well and looks faithful to the brief to me."
        return json.dumps({"pass": True, "issues": []})

    return {
        "planner": _responder(mode, planner),
        "executor": _responder(mode, executor),
        "verifier": _responder(mode, verifier),
    }


def pipeline_models(pipeline: str, personality: str = "inventing") -> dict[str, ScriptedChatModel]:
    """The scripted models of one reference pipeline, by role."""
    factories: dict[str, Callable[[str], dict[str, ScriptedChatModel]]] = {
        "code_review": code_review_models,
        "investigation": investigation_models,
        "postmortem": postmortem_models,
        "compliance": compliance_models,
    }
    key = pipeline.replace("-", "_")
    if key not in factories:
        raise ValueError(f"unknown pipeline {pipeline!r}; one of {list(factories)}")
    return factories[key](personality)


__all__ += [
    "PIPELINES",
    "code_review_models",
    "compliance_models",
    "investigation_models",
    "pipeline_models",
    "postmortem_models",
]


# --- mutation testing a guarded graph: the lie must not get through -------------------

import uuid  # noqa: E402  (appended section; the module head is left as it was)
from dataclasses import dataclass, field  # noqa: E402


class LieNotBlocked(AssertionError):
    """A lie reached downstream state or the stream (raised by :func:`assert_lie_blocked`)."""


@dataclass
class LieCheck:
    """What :func:`assert_lie_blocked` saw while the lie was being stopped."""

    halted: bool
    """A gate halted the run (``GateHalted``): nothing downstream ran."""
    reports: list[Any]
    """Every crossing report of the run (``trustgate.Report``)."""
    final_state: dict[str, Any] | None
    """The thread's final state without ``trust_reports`` (``None`` without a checkpointer)."""
    streamed: int
    """How many stream items were inspected."""
    interrupts: list[Any] = field(default_factory=list)
    """Interrupt payloads met on the way (a review's payload shows the lie to a person)."""

    @property
    def overrides(self) -> list[Any]:
        return [o for r in self.reports for o in r.overrides]


def _texts(obj: Any, out: list[str], depth: int = 0) -> None:
    """Every string inside ``obj`` (messages, models, mappings, sequences)."""
    if depth > 40 or obj is None:
        return
    if isinstance(obj, str):
        out.append(obj)
    elif isinstance(obj, BaseMessage):
        # every field: a lie in response_metadata, additional_kwargs or a tool
        # message's artifact reaches whoever reads the message as surely as its text
        _texts(obj.model_dump(exclude={"id"}), out, depth + 1)
    elif isinstance(obj, BaseModel):
        _texts(obj.model_dump(mode="json"), out, depth + 1)
    elif isinstance(obj, dict):
        if "trustgate" in obj:
            return  # a gate's own record (review payload, report event, sealed hold)
        for key, value in obj.items():
            if key == "trust_reports":
                continue  # the audit record names the lie on purpose
            _texts(value, out, depth + 1)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for value in obj:
            _texts(value, out, depth + 1)
    elif hasattr(obj, "__dict__") and not callable(obj):
        _texts(vars(obj), out, depth + 1)


def _leaks(obj: Any, lies: Sequence[str]) -> list[str]:
    found: list[str] = []
    _texts(obj, found)
    joined = "\n".join(found)
    return [lie for lie in lies if lie in joined]


def _check_rows(graph: Any, config: Any, lies: Sequence[str]) -> None:
    """Every checkpoint the thread kept, at every depth: channel values and pending
    writes, except the audit record (reports, interrupt payloads)."""
    thread = (config.get("configurable") or {}).get("thread_id")
    saver = graph.checkpointer
    if thread is None or not hasattr(saver, "list"):
        return
    for item in saver.list({"configurable": {"thread_id": thread}}):
        values = {
            k: v
            for k, v in (item.checkpoint.get("channel_values") or {}).items()
            if k != "trust_reports"
        }
        writes = [w[2] for w in item.pending_writes or () if w[1] != "trust_reports"]
        leaked = _leaks([values, writes], lies)
        if leaked:
            ns = (item.config.get("configurable") or {}).get("checkpoint_ns") or "(root)"
            raise LieNotBlocked(f"lie {leaked[0]!r} is in a checkpoint row of {ns}")


def assert_lie_blocked(
    graph: Any,
    inputs: Any,
    lies: str | Sequence[str],
    *,
    config: Any = None,
    resume: Any = None,
    require_catch: bool = True,
    stream_mode: Sequence[str] = (
        "messages",
        "updates",
        "values",
        "custom",
        "tasks",
        "debug",
        "checkpoints",
    ),
) -> LieCheck:
    """Run a guarded graph with a lying model; assert the lie never got downstream.

    ``lies`` are text fragments that only the lie contains (an invented cause, a
    fabricated citation, a forged tool argument). The graph is streamed (its guarded
    nodes hold their tokens until their gates release them) in every stream mode
    (``messages``, ``updates``, ``values``, ``custom``, ``tasks``, ``debug``,
    ``checkpoints``), with subgraphs; every field of every item is searched (message
    metadata and artifacts too), and so are the final state and every checkpoint row.
    Only the audit record is exempt: ``trust_reports`` and the gates' own records
    (review payloads, values sealed while a person decides) name the lie on purpose;
    a gate's report on the custom stream is searched too (it is streamed content-free,
    unless content capture is on), and an interrupt the guarded node raised itself is
    not exempt. A halt
    (``GateHalted``) counts as blocked. ``resume`` answers interrupts (one value, or a
    list used in order), e.g. ``{"type": "reject", "by": "test"}``. With
    ``require_catch`` (the default) some gate must have acted (a decision other than
    ``pass``): a lie that was never in the output proves nothing.

    Raises :class:`LieNotBlocked` (an ``AssertionError``) naming where the lie
    surfaced; returns a :class:`LieCheck` for further assertions.

    Example:
        ```python
        from trustgate.pipelines import postmortem
        from trustgate.testing import assert_lie_blocked

        graph = postmortem.build(personality="inventing")
        check = assert_lie_blocked(
            graph, {}, ["doubled worker concurrency", "cost review in June", "[[42]]"],
            config={"configurable": {"thread_id": "lie-1"}},
            resume={"answers": {}, "by": "test"},
        )
        assert [o.kind for o in check.overrides][:2] == ["sentence_delete", "sentence_delete"]
        ```
    """
    from langgraph.types import Command

    from trustgate._report import Report, reports
    from trustgate.errors import GateHalted

    wanted = [lies] if isinstance(lies, str) else [x for x in lies if x]
    if not wanted:
        raise ValueError("assert_lie_blocked needs at least one lie fragment")
    if config is None:
        config = {"configurable": {"thread_id": f"lie-check-{uuid.uuid4().hex[:8]}"}}
    answers = list(resume) if isinstance(resume, list) else [resume] * 20
    seen = 0
    halted = False
    interrupts: list[Any] = []
    events: list[Report] = []
    current: Any = inputs
    for _round in range(21):
        try:
            for ns, mode, data in graph.stream(
                current, config, stream_mode=list(stream_mode), subgraphs=True
            ):
                seen += 1
                if mode == "custom" and isinstance(data, dict) and "trustgate" in data:
                    report = data["trustgate"]
                    if isinstance(report, Report):
                        events.append(report)
                        # streamed content-free: this stream reaches end users
                        leaked = _leaks(report, wanted)
                        if leaked:
                            raise LieNotBlocked(
                                f"lie {leaked[0]!r} reached the custom stream inside a "
                                f"gate's report (is TRUSTGATE_CAPTURE_CONTENT on?): "
                                f"{report!r:.300}"
                            )
                    continue
                if mode == "updates" and isinstance(data, dict) and "__interrupt__" in data:
                    interrupts.extend(getattr(i, "value", i) for i in data["__interrupt__"])
                leaked = _leaks(data, wanted)
                if leaked:
                    where = f"{mode} stream" + (f" of subgraph {'/'.join(ns)}" if ns else "")
                    raise LieNotBlocked(f"lie {leaked[0]!r} reached the {where}: {data!r:.300}")
        except GateHalted as exc:
            halted = True
            if all(r.id != exc.report.id for r in events):
                events.append(exc.report)
            break
        if graph.checkpointer is None:
            break
        snapshot = graph.get_state(config)
        pending = [i for t in snapshot.tasks for i in t.interrupts]
        if not pending or resume is None or not answers:
            break
        current = Command(resume=answers.pop(0))
    final: dict[str, Any] | None = None
    all_reports: list[Report] = events
    if graph.checkpointer is not None:
        snapshot = graph.get_state(config)
        values = dict(snapshot.values)
        all_reports = reports(graph, config) or events
        final = {k: v for k, v in values.items() if k != "trust_reports"}
        leaked = _leaks(final, wanted)
        if leaked:
            raise LieNotBlocked(f"lie {leaked[0]!r} is in the final state: {final!r:.300}")
        _check_rows(graph, config, wanted)
    if require_catch and not halted and all(r.decision == "pass" for r in all_reports):
        raise LieNotBlocked(
            "no gate acted on this run (every crossing passed): the lie was never caught, "
            "or the model never told it"
        )
    return LieCheck(
        halted=halted,
        reports=list(all_reports),
        final_state=final,
        streamed=seen,
        interrupts=interrupts,
    )


# --- spans for tests (the pytest plugin's ``trustgate_spans`` fixture uses this) --------
#
# The fixtures themselves live in :mod:`trustgate._pytest_plugin` (the ``pytest11``
# entry point), which imports this module only when a test uses one.

_SESSION_EXPORTER: Any = None
_SESSION_PROVIDER: Any = None


def span_exporter() -> Any:
    """An ``InMemorySpanExporter`` attached to the global tracer provider.

    A global tracer provider can be set only once in OpenTelemetry, so the exporter
    is added to the SDK provider already installed, or installs one. If the global
    provider changed since (a test swapped it), the same exporter is attached to the
    new one.
    """
    global _SESSION_EXPORTER, _SESSION_PROVIDER
    from opentelemetry import trace as otel_trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    if _SESSION_EXPORTER is None:
        _SESSION_EXPORTER = InMemorySpanExporter()
    provider = otel_trace.get_tracer_provider()
    if provider is _SESSION_PROVIDER:
        return _SESSION_EXPORTER
    if not isinstance(provider, TracerProvider):
        otel_trace.set_tracer_provider(TracerProvider())
        provider = otel_trace.get_tracer_provider()
    if isinstance(provider, TracerProvider):
        provider.add_span_processor(SimpleSpanProcessor(_SESSION_EXPORTER))
        _SESSION_PROVIDER = provider
    return _SESSION_EXPORTER


__all__ += ["LieCheck", "LieNotBlocked", "assert_lie_blocked", "span_exporter"]
