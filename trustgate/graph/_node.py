"""The guarded node: the original node and its gates, in the node's own task.

The wrapper runs the original node, catches what it returns *and* what it raises (a
``Command.PARENT`` handoff from a tool deep inside a subgraph or agent bubbles up
through it), holds what it streamed, runs the gates over all of it, and hands
LangGraph only what they released: the very same object when nothing changed, a
rebuilt one when a policy rewrote a part, a re-raised parent command for a handoff.
Static edges fire only after the task returns, so nothing downstream sees the
unverified output; there is no extra superstep and no staging channel. A re-render
runs the node again inside the same task. A halt raises
:class:`~trustgate.errors.GateHalted` after the report was written to the task's
writes (so a checkpointer keeps it with the failed task).
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import functools
import hashlib
import hmac
import logging
import secrets
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from trustgate import _compat
from trustgate._findings import Finding
from trustgate._gate import (
    ChainResult,
    Context,
    TrustGate,
    VerifierFailure,
    adrive,
    arun_verifier,
    drive,
    run_chain,
    run_verifier,
)
from trustgate._output import NodeOutput
from trustgate._report import REPORTS_KEY, GateBody, Report, for_stream, gate_json
from trustgate.errors import ConfigurationError, GateHalted, ReviewSealError
from trustgate.graph._gatelog import GateLog, reports_in
from trustgate.graph._isolate import CannotIsolate, isolate
from trustgate.graph._streams import Feedback, StreamHold, stop_collecting
from trustgate.policies._decision import GATE_MESSAGE_PREFIX, Rerender
from trustgate.readers import covered

__all__ = ["GuardedNode", "HaltedInGraph", "withhold"]

logger = logging.getLogger(__name__)

_MISSING: Any = object()
# the durable inner call leaves its stream hold here for the wrapper (same process)
_HOLD: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "trustgate_hold", default=None
)
# the record of the guarded node that is running: a guarded graph used as (or inside) a
# node of another guarded graph hands its crossings' reports up to it, so every
# crossing is on the outer record, halted or released, whatever the outer gate decides
_RECORD: contextvars.ContextVar[list[Report] | None] = contextvars.ContextVar(
    "trustgate_record", default=None
)


def _hand_up(reports: Sequence[Report]) -> None:
    """Give the reports to the guarded node this one runs inside, if any."""
    outer = _RECORD.get()
    if outer is not None:
        outer.extend(reports)


# A released crossing is recorded beside its task with what it released, so that
# LangGraph running the task again after a crash (at-least-once: the crash came after
# the release, before the task's own writes were saved) delivers the same decision
# again instead of deciding anew: one crossing, one report, delivered twice.
RELEASE_CHANNEL = "__trustgate_release__"


_RELEASE_KEY_LABEL = b"trustgate-release-record-key-v1"


def _release_key() -> bytes:
    """The key a release record is sealed under: one the worker that resumes the thread
    after a crash (always another process) holds, the key the gate seals its reports
    under (the configured ledger key, which a database shared by processes requires;
    else this process's key), derived under a label of its own."""
    from trustgate import _report_seal

    return _derived_release_key(_report_seal.report_key().secret)


@functools.lru_cache(maxsize=8)
def _derived_release_key(secret: bytes) -> bytes:
    return hmac.new(secret, _RELEASE_KEY_LABEL, hashlib.sha256).digest()


def _may_run_again(config: Mapping[str, Any]) -> bool:
    """Whether this task may be one LangGraph runs again (worth one read of its step's
    checkpoint for an earlier release): only a resumed run's first step can hold a task
    that ran before and crashed (a retry's attempts are flagged too; they find nothing)."""
    if not _compat.resuming(config):  # the usual answer, from one flag
        return False
    meta = _compat.meta(config)
    return meta.get("thread_id") is not None and meta.get("task_id") is not None


# the halt a guarded node raises (why it is a LangGraph bubble-up: see _compat)
HaltedInGraph = _compat.halted_in_graph()


class _StateView(Mapping[str, Any]):
    """The state a gate's ``FromState`` evidence reads: the node's input first, then
    the channel itself (for keys outside the node's input schema)."""

    def __init__(self, input: Any, config: Mapping[str, Any]) -> None:
        self._input = input
        self._config = config

    def __getitem__(self, key: str) -> Any:
        src = self._input
        if isinstance(src, Mapping):
            if key in src:
                return src[key]
        elif src is not None and hasattr(src, key):
            return getattr(src, key)
        try:
            return _compat.read_channel(self._config, key)
        except Exception as exc:
            raise KeyError(key) from exc

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        try:
            self[key]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        src = self._input
        return iter(src) if isinstance(src, Mapping) else iter(())

    def __len__(self) -> int:
        return len(self._input) if isinstance(self._input, Mapping) else 0


def _with_issues(input: Any, decision: Rerender, carry: Sequence[Any]) -> Any:
    """The node's input for the next attempt: the issues (and any messages the gate
    told the model) added where the node reads them."""
    updates: dict[str, Any] = {}
    if decision.issues_key is not None:
        updates[decision.issues_key] = list(decision.issues)
    extra = list(carry)
    if decision.as_message:
        extra.append(
            HumanMessage(
                "Your previous answer failed verification. Fix every issue:\n"
                + "\n".join(f"- {i}" for i in decision.issues),
                id=f"{GATE_MESSAGE_PREFIX}{secrets.token_hex(8)}",
            )
        )
    if extra:
        key = decision.messages_key
        current = input.get(key) if isinstance(input, Mapping) else getattr(input, key, None)
        updates[key] = [*(current or []), *extra]
    if not updates:
        return input
    if isinstance(input, Mapping):
        return {**input, **updates}
    import dataclasses

    if hasattr(input, "model_copy"):
        known = set(type(input).model_fields)
    elif dataclasses.is_dataclass(input) and not isinstance(input, type):
        known = {f.name for f in dataclasses.fields(input)}
    else:
        known = set()
    missing = [k for k in updates if k not in known]
    if missing:
        raise ConfigurationError(
            f"Rerender hands the node {', '.join(map(repr, missing))}, but its state "
            f"{type(input).__name__} has no such field: add it to the state, or pass "
            "Rerender(issues_key=None, as_message=True) to tell the node in a message"
        )
    if hasattr(input, "model_copy"):
        return input.model_copy(update=updates)
    return dataclasses.replace(input, **updates)


def _seal(
    value: Any,
    config: Mapping[str, Any] | None = None,
    *,
    quiet: bool = False,
    key: bytes | None = None,
) -> dict[str, Any]:
    """A held value as a durable task returns it: encrypted and authenticated (see
    :mod:`trustgate.graph._seal`), so that what is waiting for a person's decision is
    not shown by the streams that report task results, nor readable in the checkpoint
    row that keeps it, nor accepted back if someone edits that row."""
    from trustgate.graph import _seal as seal

    kind, data = _compat.serde(config or _compat.current_config()).dumps_typed(value)
    return seal.seal(kind, data, quiet=quiet, key=key)


def _unseal(
    sealed: Mapping[str, Any],
    config: Mapping[str, Any] | None = None,
    node: str = "?",
    *,
    quiet: bool = False,
    key: bytes | None = None,
) -> Any:
    """The held value, only once its tag is checked: a tampered or foreign task result
    is refused with a typed error before anything is decoded."""
    from trustgate.graph import _seal as seal

    kind, data = seal.open_sealed(sealed, node, quiet=quiet, key=key)
    serde = _compat.serde(config or _compat.current_config())
    return serde.loads_typed((kind, data))


# --- what the crossing loop asks its driver to do (sync or async) -------------------------
# Reports to record are given as reports or as their (channel, value) writes to the
# report channel, the LangGraph writes they become.
_Writes = Sequence[Report] | Sequence[tuple[str, Any]]


@dataclass(frozen=True, slots=True)
class _Prior:
    """Read the release an earlier execution of this task recorded beside it."""


@dataclass(frozen=True, slots=True)
class _Call:
    """Run the node on ``input``; answers ``(value, raised, hold)``."""

    input: Any


@dataclass(frozen=True, slots=True)
class _Chain:
    """Run the gates on ``output``; ``durable``: verifier runs as durable tasks."""

    output: NodeOutput
    context: Context
    durable: bool


@dataclass(frozen=True, slots=True)
class _KeepCheckpoints:
    """Write the checkpoints of subgraphs the hold kept back."""

    hold: StreamHold


@dataclass(frozen=True, slots=True)
class _KeepAside:
    """Record a halted crossing's reports (nothing is released)."""

    writes: _Writes


@dataclass(frozen=True, slots=True)
class _Persist:
    """Make a release's record durable beside the task before anything is released."""

    writes: _Writes


@dataclass(frozen=True, slots=True)
class _Store:
    """Apply held store writes to the run's store."""

    ops: Sequence[Any]


@dataclass(frozen=True, slots=True)
class _Release:
    """Replay the held streams, as ``how`` says (see ``GuardedNode._release_how``)."""

    hold: StreamHold
    how: dict[str, Any]


_Effect = _Prior | _Call | _Chain | _KeepCheckpoints | _KeepAside | _Persist | _Store | _Release


def _report_writes(reports: Sequence[Report]) -> list[tuple[str, Any]]:
    return [(REPORTS_KEY, gate_json(reports))]


def _persisted(arg: _Writes) -> list[tuple[str, Any]]:
    """A persist effect's writes: given as writes, or as reports (a redelivery)."""
    if arg and isinstance(arg[0], Report):
        return _report_writes(cast(Sequence[Report], arg))
    return list(cast(Sequence[tuple[str, Any]], arg))


def _delivery(arg: _Writes) -> int:
    """Which delivery a persist effect records: a redelivery's reports count it."""
    reports = [r for r in arg if isinstance(r, Report)] or [
        body.report
        for write in arg
        if isinstance(write, tuple) and write[0] == REPORTS_KEY
        for body in write[1]
        if isinstance(body, GateBody)
    ]
    return max((r.deliveries for r in reports), default=1)


class _Paused(Exception):
    """The node raised ``interrupt()``: the pause and the hold of what it streamed,
    carried to the gate, which decides whether the pause may surface."""

    def __init__(self, exc: BaseException, hold: StreamHold) -> None:
        super().__init__("the guarded node paused")
        self.exc = exc
        self.hold = hold


# what a durable task is asked, by the opaque key the task takes: the task's input is
# streamed (``tasks``/``debug`` modes, ``astream_events``) before anyone decided on it.
# Scoped to the crossing that lends it, not to the process: a context variable, which
# LangGraph copies into the task it runs for the node (on its thread pool or as an
# asyncio task), so another run never sees it and it is gone with the call that lent it,
# however that call ends.
_REQUESTS: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar(
    "trustgate_requests", default=MappingProxyType({})
)


@contextlib.contextmanager
def _lent(key: str, value: Any) -> Iterator[None]:
    """``value`` readable by ``key`` in this context and the tasks started from it, for
    the ``with`` block (a fresh mapping: a sibling crossing keeps its own)."""
    token = _REQUESTS.set(MappingProxyType({**_REQUESTS.get(), key: value}))
    try:
        yield
    finally:
        _REQUESTS.reset(token)


def _request(key: str) -> Any:
    req = _REQUESTS.get().get(key)
    if req is None:
        raise VerifierFailure(
            "review",
            "crashed",
            "the verifier request is not in this run (run the guarded graph in one "
            "process between the crossing and its check)",
        )
    return req


def _take_request(key: str) -> Any:
    requests = _REQUESTS.get()
    if key not in requests:
        raise RuntimeError(
            "a guarded node's input is not in this run: run the guarded graph in one "
            "process between a crossing and its review"
        )
    return requests[key]


def _checked(key: str) -> dict[str, Any]:
    """One verifier run, as a checkpointable value."""
    try:
        found = run_verifier(_request(key))
    except VerifierFailure as exc:
        return _seal({"failure": [exc.verifier, exc.code, exc.error]})
    return _seal({"findings": [f.model_dump(mode="json") for f in found]})


async def _achecked(key: str) -> dict[str, Any]:
    try:
        found = await arun_verifier(_request(key))
    except VerifierFailure as exc:
        return _seal({"failure": [exc.verifier, exc.code, exc.error]})
    return _seal({"findings": [f.model_dump(mode="json") for f in found]})


def _unpack(sealed: Mapping[str, Any], node: str = "?") -> list[Finding]:
    value = _unseal(sealed, node=node)
    if "failure" in value:
        verifier, code, error = value["failure"]
        raise VerifierFailure(str(verifier), str(code), str(error))
    return [Finding.model_validate(f) for f in value["findings"]]


def _in_config(config: dict[str, Any], fn: Any) -> Any:
    """Call ``fn`` with ``config`` as the current LangChain config, as LangGraph does
    for a traced node: code that calls a model or ``get_stream_writer()`` without
    passing a config reads it from there."""
    with _compat.config_as(config):
        return fn()


def _private(input: Any) -> Any:
    """The node's own copy of its input.

    LangGraph hands a node the very objects its channels hold, so a node that changes
    them in place (``section.content = draft``, ``state["messages"][-1].content = ...``)
    changes the graph's state without returning anything: a write no gate would see. A
    guarded node works on a deep copy instead (:func:`~trustgate.graph._isolate.isolate`,
    which copies plain data and messages at the speed of the C pickler); what it changes
    reaches the graph only through what it returns, and that is what the gates check
    (against the original). A value that cannot be copied (a client, a lock) is shared,
    and logged."""
    try:
        return isolate(input)
    except CannotIsolate as exc:
        logger.debug("the fast copy of a node's input failed (%s); copying it by deepcopy", exc)
    try:
        return copy.deepcopy(input)
    except Exception as exc:
        if not isinstance(input, Mapping):
            logger.warning(
                "a guarded node's input of type %s cannot be copied (%s): the node gets "
                "the graph's own objects, and changes it makes to them in place are not "
                "checked",
                type(input).__name__,
                exc,
            )
            return input
    out = {}
    for key, value in input.items():
        try:
            out[key] = copy.deepcopy(value)
        except Exception as exc:
            logger.warning(
                "state key %r cannot be copied for a guarded node (%s): the node gets the "
                "graph's own object, and changes it makes to it in place are not checked",
                key,
                exc,
            )
            out[key] = value
    return out


def _unchanged(chain: ChainResult) -> bool:
    """The gates released exactly what the node produced."""
    out = chain.last.output
    return chain.last.route == "release" and out is not None and not out.rewritten


def _carried_handoff(carry: Sequence[Any], key: str, cmd: Any) -> Any:
    """A handoff to the parent graph with ``carry`` (the blocked call and what the model
    was told) ahead of its own messages: a parent command is one ``Command``, so the
    carry goes into its update rather than beside it."""
    import dataclasses

    update = cmd.update
    if update is None:
        new_update: Any = {key: list(carry)}
    elif isinstance(update, dict):
        current = update.get(key)
        rest = (
            list(current)
            if isinstance(current, (list, tuple))
            else ([] if current is None else [current])
        )
        new_update = {**update, key: [*carry, *rest]}
    else:  # a list of (key, value) writes: the carry is written first
        new_update = [(key, list(carry)), *_compat.command_update(cmd)]
    return dataclasses.replace(cmd, update=new_update)


def _prepend(carry: Sequence[Any], key: str, value: Any) -> Any:
    """Release ``carry`` (messages) ahead of what the last attempt returned."""
    from langgraph.types import Command

    head: Command[Any] = Command(update={key: list(carry)})
    if isinstance(value, list):
        return [head, *value]
    if isinstance(value, tuple):
        return [head, *value]
    if value is None:
        return head
    return [head, value]


def withhold(exc: BaseException, gates: Sequence[TrustGate[Any]], where: str) -> BaseException:
    """The error to raise for what a guarded step raised. A node's error is output too:
    a parse failure quotes the raw model output, LangGraph keeps the error with the
    task in the checkpoint and shows it in the tasks/debug streams, and tracebacks print
    its notes and its whole chain. Unless every gate declares ``passthrough=["error"]``,
    the error keeps its type and traceback but nothing of its message, notes, chain or
    text attributes, or is a :class:`~trustgate.errors.NodeErrorWithheld` naming the
    type where the text cannot be taken out (see :mod:`trustgate.graph._withheld`)."""
    if gates and all(covered("error", g.passthrough) for g in gates):
        return exc
    if isinstance(exc, _Paused) or _compat.is_control_flow(exc):
        return exc
    from trustgate.graph._withheld import withheld

    out = withheld(exc, where)
    logger.debug(
        "withheld the text of %s from %s%s",
        type(exc).__name__,
        where,
        "" if out is exc else f" (raised as {type(out).__name__})",
    )
    return out


class GuardedNode:
    """One guarded node (see the module docstring)."""

    def __init__(
        self,
        name: str,
        inner: Any,
        gates: Sequence[TrustGate[Any]],
        *,
        keys: Sequence[str],
        message_keys: frozenset[str],
        root: bool,
        durable: bool,
        plain_keys: frozenset[str] = frozenset(),
        reducers: Mapping[str, Any] | None = None,
        log: GateLog | None = None,
        stream_passes: bool = False,
    ) -> None:
        self.name = name
        self.log = log  # the report log the gates write themselves (guard(report_log=))
        self.stream_passes = stream_passes
        self.inner = inner
        self.gates = tuple(gates)
        self.keys = list(keys)
        self.message_keys = message_keys
        self.plain_keys = plain_keys
        self.reducers = dict(reducers or {})
        self.root = root
        self.durable = durable
        # one durable task per path, under one name: a node with a native async path is
        # awaited in async runs and called in sync ones, as LangGraph does
        self._task: Any = _compat.durable(self._durable_call, f"{name}_output") if durable else None
        self._atask: Any = None
        if durable:
            self._atask = (
                _compat.durable(self._adurable_call, f"{name}_output")
                if _compat.has_native_async(inner)
                else self._task
            )
        # a gate that may pause for a person checks durably too: after the resume the
        # person's decision applies to the very findings they saw (a model verifier is
        # not asked again)
        self._check: Any = _compat.durable(_checked, f"{name}_check") if durable else None
        self._native_async = _compat.has_native_async(inner)
        self._declarations: tuple[tuple[Any, ...], dict[str, bool]] | None = None
        self._acheck: Any = _compat.durable(_achecked, f"{name}_check") if durable else None

    # -- running the original node ------------------------------------------------

    def _output(
        self,
        value: Any,
        input: Any,
        raised: bool,
        hold: StreamHold,
        record: Sequence[Report] = (),
    ) -> NodeOutput:
        out = NodeOutput.read(
            value,
            input=input,
            keys=self.keys,
            message_keys=self.message_keys,
            root=self.root,
            raised=raised,
            sent=hold.sent,
            plain_keys=self.plain_keys,
            reducers=self.reducers,
        )
        out.custom = list(hold.custom)
        out.store_writes = hold.held_store if hold.held_store is not None else hold.store_writes()
        # the gate's own feedback to the node (it quotes the findings, so possibly the
        # lie) comes back when an agent returns its whole history: it is not the
        # node's output, and it is not released
        echoed = [
            item
            for w in out.writes
            for item in w.messages or ()
            if isinstance(item.message, BaseMessage)
            and str(item.message.id or "").startswith(GATE_MESSAGE_PREFIX)
        ]
        for item in echoed:
            out.drop_message(item)
        # the reports a guarded graph inside the node returns in its state are the
        # records of its crossings, handed up already: not output. A report the inner
        # gates did not write stays a part (a forged one is held)
        inner = {r.id for r in record}
        for i, w in enumerate(out.writes):
            if w.key == REPORTS_KEY and inner and _only_reports(out.value_of(i), inner):
                out.drop_write(i)
        if out.rewritten:
            out = out.reread()
        return out

    # -- calling the node ------------------------------------------------------------

    def _failed(
        self, hold: StreamHold, exc: BaseException, *, pause: bool = True
    ) -> tuple[Any, bool, StreamHold]:
        """What the node raised: a parent command is output like a return value; a
        pause goes to the gates (``_Paused``; inside a durable task the interrupt itself,
        for the task machinery); anything else is raised with its message withheld."""
        if _compat.is_parent_command(exc):
            return exc.args[0], True, hold
        if _compat.is_interrupt(exc):
            if pause:
                raise _Paused(exc, hold) from None
            raise exc  # the caller inspects the pause and keeps or drops the hold
        hold.close()
        clean = self._withhold(exc)
        if clean is exc:
            raise exc
        del exc  # this frame is in the traceback: it must not keep the original
        try:
            raise clean from None
        except BaseException as again:  # raised inside the caller's handler: unlink it
            again.__context__ = None
            raise

    def _durable_start(self, key: str) -> tuple[Any, StreamHold]:
        input = _take_request(key)
        hold = StreamHold(dict(_compat.current_config() or {}), strict=self._strict)
        box = _HOLD.get()
        if box is not None:
            box["hold"] = hold
        return input, hold

    @staticmethod
    def _sealed(hold: StreamHold, value: Any, raised: bool) -> dict[str, Any]:
        return _seal(
            {
                "value": value,
                "raised": raised,
                "custom": list(hold.custom),
                "sent": list(hold.sent),
                "store": [tuple(op) for op in hold.store_writes()],
            }
        )

    def _durable_call(self, key: str) -> dict[str, Any]:
        """The inner call as a durable task (only for gates that may pause for review):
        its result is checkpointed, so a resumed run verifies what the person saw. It
        takes the input by an opaque key: a task's input is streamed, and the node may
        change its copy in place while it runs."""
        input, hold = self._durable_start(key)
        try:
            value = _in_config(hold.config, lambda: self.inner.invoke(input, hold.config))
            return self._sealed(hold, value, False)
        except BaseException as exc:
            value, raised, _hold = self._failed(hold, exc, pause=False)
            return self._sealed(hold, value, raised)

    async def _adurable_call(self, key: str) -> dict[str, Any]:
        input, hold = self._durable_start(key)
        token = _compat.set_config(hold.config)
        try:
            return self._sealed(hold, await self.inner.ainvoke(input, hold.config), False)
        except BaseException as exc:
            value, raised, _hold = self._failed(hold, exc, pause=False)
            return self._sealed(hold, value, raised)
        finally:
            _compat.reset_config(token)

    @contextlib.contextmanager
    def _task_request(self, input: Any) -> Iterator[tuple[str, dict[str, Any]]]:
        """The node's input lent to its durable task by an opaque key; the task leaves
        its hold in the box. A pause inside the task comes out as ``_Paused``."""
        box: dict[str, Any] = {}
        token = _HOLD.set(box)
        key = secrets.token_hex(12)
        try:
            with _lent(key, input):
                yield key, box
        except BaseException as exc:
            if _compat.is_interrupt(exc):
                raise _Paused(exc, box.get("hold") or StreamHold({})) from None
            raise
        finally:
            _HOLD.reset(token)

    @staticmethod
    def _from_task(
        got: Mapping[str, Any], box: Mapping[str, Any], config: dict[str, Any]
    ) -> tuple[Any, bool, StreamHold]:
        hold = box.get("hold") or StreamHold({})
        hold.custom = list(got.get("custom") or [])
        hold.sent = [tuple(w) for w in got.get("sent") or []]
        hold.held_store = [_compat.put_op(op) for op in got.get("store") or []]
        value = got["value"]
        if got["raised"]:
            value = _compat.readdress(value, config)
        return value, bool(got["raised"]), hold

    def _call(self, input: Any, config: dict[str, Any]) -> tuple[Any, bool, StreamHold]:
        if self._task is not None:
            with self._task_request(input) as (key, box):
                got = _unseal(self._task(key).result(), config, self.name)
            return self._from_task(got, box, config)
        hold = StreamHold(config, strict=self._strict)
        collecting = hold.collecting()
        try:
            value = _in_config(hold.config, lambda: self.inner.invoke(input, hold.config))
            return value, False, hold
        except BaseException as exc:
            return self._failed(hold, exc)
        finally:
            stop_collecting(collecting)

    async def _acall(self, input: Any, config: dict[str, Any]) -> tuple[Any, bool, StreamHold]:
        if self._task is not None:
            with self._task_request(input) as (key, box):
                got = _unseal(await self._atask(key), config, self.name)
            return self._from_task(got, box, config)
        hold = StreamHold(config, strict=self._strict)
        current = _compat.set_config(hold.config)
        collecting = hold.collecting()
        try:
            if self._native_async:
                return await self.inner.ainvoke(input, hold.config), False, hold
            # a sync node runs on a thread, as LangGraph runs it in an async run
            value = await _compat.on_thread(
                hold.config,
                lambda: _in_config(hold.config, lambda: self.inner.invoke(input, hold.config)),
            )
            return value, False, hold
        except BaseException as exc:
            return self._failed(hold, exc)
        finally:
            stop_collecting(collecting)
            _compat.reset_config(current)

    def _durable_verify(self, req: Any) -> list[Finding]:
        key = secrets.token_hex(12)
        with _lent(key, req):
            return _unpack(self._check(key).result(), self.name)

    async def _adurable_verify(self, req: Any) -> list[Finding]:
        key = secrets.token_hex(12)
        with _lent(key, req):
            return _unpack(await self._acheck(key), self.name)

    # -- the crossing ---------------------------------------------------------------

    def _context(self, input: Any, config: dict[str, Any], attempt: int) -> Context:
        runtime = _compat.runtime(config)
        return Context(
            node=self.name,
            state=_StateView(input, config),
            context=getattr(runtime, "context", None),
            attempt=attempt,
            meta=_compat.meta(config),
            config=config,
            can_rerender=True,
        )

    @property
    def _strict(self) -> bool:
        """A node whose every gate lets everything through (``"*"``) keeps the run's own
        store, task machinery and callback handlers; otherwise what goes through them
        waits for the gates. One permissive gate beside a strict one changes nothing:
        what the strict one holds stays held."""
        return not all("*" in g.passthrough for g in self.gates)

    def _declared(self, part: str) -> bool:
        """Whether every gate of the node declares ``part`` (a part no gate reads passes
        only when all of them let it through). Worked out once per set of declarations
        (a gate's ``passthrough`` replaced later is seen)."""
        now = tuple(g.passthrough for g in self.gates)
        known = self._declarations
        if known is None or any(a is not b for a, b in zip(known[0], now, strict=True)):
            known = self._declarations = (now, {})
        found = known[1].get(part)
        if found is None:
            found = known[1][part] = all(covered(part, g.passthrough) for g in self.gates)
        return found

    @property
    def _nested_passes(self) -> bool:
        """Whether what a subgraph inside the node did on the way (its nested stream
        events, its checkpoints) may be released with a passing output. The gate
        inspects what the node returns, not the states in between: a draft a later
        inner node replaced was never verified, so it is released only when every gate
        declares it (``passthrough=["subgraph"]`` or ``"*"``)."""
        return self._declared("subgraph")

    def _withhold(self, exc: BaseException) -> BaseException:
        """The error to raise for what the node raised (see :func:`withhold`)."""
        return withhold(exc, self.gates, self.name)

    def _paused(self, paused: _Paused, input: Any) -> NodeOutput:
        """The node paused for a person (``interrupt()``) before returning: what it
        shows is its output so far, inspected before anyone sees it."""
        out = NodeOutput.read(
            None,
            input=input,
            keys=self.keys,
            message_keys=self.message_keys,
            root=self.root,
            sent=paused.hold.sent,
            plain_keys=self.plain_keys,
            reducers=self.reducers,
        )
        out.store_writes = paused.hold.store_writes()
        out.interrupts = [
            getattr(i, "value", i) for i in (paused.exc.args[0] if paused.exc.args else ())
        ]
        out.custom = list(paused.hold.custom)
        return out

    def _halt_paused(
        self, paused: _Paused, chain: ChainResult, reports: list[Report], config: dict[str, Any]
    ) -> GateHalted:
        """Anything but an unchanged release halts a pause: there is no output yet that a
        policy could rewrite, only what the node shows while it waits."""
        paused.hold.close()
        if chain.last.route == "release":
            logger.warning(
                "a policy of gate %r rewrote what paused node %r shows: a pause cannot be "
                "rewritten, so the crossing halts",
                chain.last.report.gate,
                self.name,
            )
        writer = getattr(_compat.runtime(config), "stream_writer", None)
        if writer is not None:
            for r in reports:
                writer({"trustgate": for_stream(r)})
        return HaltedInGraph(chain.last.report)

    def _pause_ctx(self, input: Any, config: dict[str, Any], attempt: int) -> Context:
        ctx = self._context(input, config, attempt)
        ctx.can_rerender = False
        ctx.can_pause = False
        ctx.phase = "pause"
        return ctx

    def _finish(
        self,
        config: dict[str, Any],
        chain: ChainResult,
        reports: list[Report],
        hold: StreamHold,
        carry: list[Any],
        key: str,
        raised: bool,
        writes: Sequence[tuple[str, Any]],
    ) -> Any:
        last = chain.last
        if last.route == "release":
            self._record(config, writes)
        runtime = _compat.runtime(config)
        writer = getattr(runtime, "stream_writer", None)
        if last.route != "release" or last.output is None:
            hold.close()
            if writer is not None:
                for r in reports:
                    writer({"trustgate": for_stream(r)})
            raise HaltedInGraph(last.report)
        released = last.output
        hold.close()  # what it held was replayed by the "release" effect
        if writer is not None:
            for r in reports:
                if r.decision != "pass" or self.stream_passes:
                    writer({"trustgate": for_stream(r)})
        return self._hand_on(config, released.rebuild(), released.sent_writes(), carry, key, raised)

    @staticmethod
    def _hand_on(
        config: dict[str, Any],
        value: Any,
        sent: Sequence[tuple[str, Any]],
        carry: Sequence[Any],
        key: str,
        raised: bool,
    ) -> Any:
        """What LangGraph gets for a release: the value (the carried messages ahead of
        it), the channel writes made while the node ran, a parent command raised."""
        if sent:  # captured from the task's send function, so the task has one
            _compat.send(config, list(sent))
        if raised:
            if carry:
                value = _carried_handoff(carry, key, value)
            raise _compat.parent_command(value)
        if carry:
            value = _prepend(carry, key, value)
        return value

    def _release_record(
        self,
        config: dict[str, Any],
        released: NodeOutput,
        report_writes: Sequence[tuple[str, Any]],
        carry: Sequence[Any],
        key: str,
        raised: bool,
    ) -> list[tuple[str, Any]]:
        """What a release writes beside its task before anything acts on it: the
        reports, and (sealed) what it released, for a delivery after a crash. A release
        that cannot be sealed is recorded by its reports alone (logged); a run with no
        checkpointer has nowhere to keep it, and nothing runs its task again."""
        writes: list[tuple[str, Any]] = list(report_writes)
        if not _compat.persists(config):
            return writes
        try:
            payload = {
                "value": released.rebuild(),
                "sent": released.sent_writes(),
                "store": [tuple(op) for op in released.store_writes],
                "carry": list(carry),
                "key": key,
                "raised": raised,
                "reports": [body for _k, bodies in report_writes for body in bodies],
            }
            sealed = _seal(payload, config, quiet=True, key=_release_key())
            writes.append((RELEASE_CHANNEL, sealed))
        except Exception as exc:  # a value the serializer cannot take: recorded, not kept
            logger.warning(
                "node %r: what its gates released cannot be kept for a delivery after a "
                "crash (%s: %s); a run after a crash decides again",
                self.name,
                type(exc).__name__,
                exc,
            )
        return writes

    def _redeliver(
        self, config: dict[str, Any], got: Mapping[str, Any], delivered: Mapping[str, int]
    ) -> Generator[_Effect, Any, Any]:
        """An earlier execution of this task released, and a crash came before its own
        writes were saved: the same release is delivered again (recorded as one more
        delivery of the same crossing than ``delivered`` says were saved beside the task),
        the node is not run and nothing is decided anew."""
        reports = [
            r.model_copy(update={"deliveries": max(r.deliveries, delivered.get(r.id, 1)) + 1})
            for r in (Report.coerce(d) for d in got["reports"])
        ]
        logger.warning(
            "node %r ran again after a crash: its release is delivered again, as recorded",
            self.name,
        )
        writes = _report_writes(reports)
        yield _Persist(writes)
        _hand_up(reports)
        if got["store"]:
            yield _Store([_compat.put_op(op) for op in got["store"]])
        self._record(config, writes)
        value = got["value"]
        if got["raised"]:
            value = _compat.readdress(value, config)
        return self._hand_on(
            config, value, [tuple(w) for w in got["sent"]], got["carry"], got["key"], got["raised"]
        )

    def _release_how(self, released: NodeOutput, carry: Sequence[Any]) -> dict[str, Any]:
        """How the hold replays a release: everything or only the stream-writer output,
        and what the release hands on (a model call whose answer is not among it is
        not replayed)."""
        messages = [
            m
            for w in released.writes
            for item in w.messages or ()
            if (m := released.message(item)) is not None
        ]
        values = [released.value_of(i) for i, w in enumerate(released.writes) if not w.messages]
        return {
            "everything": not released.rewritten and not carry,
            "nested": self._nested_passes,
            "messages": messages,
            "values": values,
        }

    def _record(self, config: dict[str, Any], writes: Sequence[tuple[str, Any]]) -> None:
        """A released crossing's reports in the state: the task's own write to
        ``trust_reports``, the very forms made durable beside the task before the
        release (a graph whose state is one root value has no channel for them)."""
        if not self.root:
            _compat.send(config, list(writes))

    # -- the loop: written once, driven sync or async --------------------------------

    def _loop(
        self, input: Any, config: dict[str, Any], record: list[Report]
    ) -> Generator[_Effect, Any, Any]:
        """Run the node, its gates, and re-renders until a release, a halt or a pause.

        It yields what needs I/O (the node call, the gates' chain, checkpoint and store
        writes) as :data:`_Effect` values; :meth:`run` and :meth:`arun` carry them
        out, so the sync and async paths cannot drift apart. A pause of the node comes
        back in as ``_Paused`` thrown at the ``_Call`` effect, a halt of a guarded graph
        inside it as ``GateHalted``; ``record`` collects the reports of guarded nodes
        inside this one, kept with this node's own."""
        if _may_run_again(config):
            prior = yield _Prior()
            sealed, delivered = prior if prior is not None else (None, {})
            earlier = None
            if sealed is not None:
                try:
                    earlier = _unseal(sealed, config, self.name, quiet=True, key=_release_key())
                except ReviewSealError as exc:  # sealed under another key: decide anew
                    logger.warning(
                        "node %r: an earlier release of this task cannot be read (%s); "
                        "it is decided again",
                        self.name,
                        exc,
                    )
            if earlier is not None:
                return (yield from self._redeliver(config, earlier, delivered))
        reports: list[Report] = []
        carry: list[Any] = []
        issues: list[str] = []  # everything the gate told the node so far
        key = "messages"
        attempt, current = 1, _private(input)
        while True:
            try:
                value, raised, hold = yield _Call(current)
            except GateHalted:
                # a guarded graph inside this node halted: its crossings stay on record
                everything = [*record, *reports]
                yield _KeepAside(everything)
                _hand_up(everything)
                raise
            except _Paused as paused:
                pause_out = self._paused(paused, input)
                pause_ctx = self._pause_ctx(input, config, attempt)
                chain = yield _Chain(pause_out, pause_ctx, False)
                reports.extend(chain.reports)
                if chain.last.route == "release" and _unchanged(chain):
                    # what the node wrote before it paused is written, as LangGraph
                    # would have, and the pause surfaces
                    yield _KeepCheckpoints(paused.hold)
                    yield _Store(pause_out.store_writes)
                    if paused.hold.sent:
                        _compat.send(config, paused.hold.sent)
                    paused.hold.close()
                    raise paused.exc from None
                everything = [*record, *reports]
                yield _KeepAside(everything)
                _hand_up(everything)
                raise self._halt_paused(paused, chain, reports, config) from None
            if attempt > 1:
                # the attempt's input quotes the gate's feedback: no stream may show it
                hold.feedback = Feedback(tuple(issues), GATE_MESSAGE_PREFIX, tuple(carry))
            output = self._output(value, input, raised, hold, record)
            chain = yield _Chain(output, self._context(input, config, attempt), True)
            reports.extend(chain.reports)
            decision = chain.last.rerender
            if chain.last.route != "rerender" or decision is None:
                released = chain.last.output
                everything = [*record, *reports]
                _hand_up(everything)
                writes = _report_writes(everything)  # sealed once, written everywhere
                if chain.last.route != "release":
                    yield _KeepAside(writes)
                else:
                    # recorded before released: the report is durable before anything
                    # (a successor, a stream consumer) can act on the release
                    try:
                        yield _Persist(
                            self._release_record(
                                config, chain.last.output, writes, carry, key, raised
                            )
                        )
                    except Exception as exc:
                        hold.close()
                        logger.warning(
                            "gate %r on %r: the report could not be saved, nothing is released: %s",
                            chain.last.report.gate,
                            self.name,
                            exc,
                        )
                        # the saver's own error, as LangGraph would raise it a moment later
                        exc.add_note(
                            f"trustgate: the report of gate {chain.last.report.gate!r} on "
                            f"{self.name!r} could not be saved, so nothing was released "
                            "(recorded before released)"
                        )
                        raise
                if (
                    chain.last.route == "release"
                    and _unchanged(chain)
                    and (self._nested_passes and attempt == 1)
                ):
                    # a later attempt's subgraph state holds the gate's feedback
                    yield _KeepCheckpoints(hold)
                if chain.last.route == "release" and released is not None:
                    yield _Store(released.store_writes)
                    yield _Release(hold, self._release_how(released, carry))
                return self._finish(config, chain, everything, hold, carry, key, raised, writes)
            hold.close()
            if decision.carry:
                key = decision.messages_key
            carry.extend(decision.carry)
            issues.extend(decision.issues)
            current = _private(_with_issues(input, decision, carry))
            attempt += 1

    def run(self, input: Any, config: dict[str, Any]) -> Any:
        record: list[Report] = []
        loop = self._loop(input, config, record)
        try:
            effect = next(loop)
            while True:
                try:
                    if isinstance(effect, _Call):
                        token = _RECORD.set(record)
                        try:
                            result: Any = self._call(effect.input, config)
                        finally:
                            _RECORD.reset(token)
                    elif isinstance(effect, _Chain):
                        check = self._durable_verify if effect.durable and self._check else None
                        result = drive(run_chain(self.gates, effect.output, effect.context), check)
                    elif isinstance(effect, _KeepCheckpoints):
                        result = None
                        effect.hold.keep_checkpoints()
                    elif isinstance(effect, _Release):
                        result = None
                        effect.hold.release(**effect.how)
                    elif isinstance(effect, _Prior):
                        result = _compat.prior_release(config, RELEASE_CHANNEL)
                    elif isinstance(effect, _KeepAside):
                        result = None
                        writes = _persisted(effect.writes)
                        _compat.keep_aside(config, writes)
                        if self.log is not None:
                            try:  # a halt is recorded in the log before it is raised
                                self.log.record(reports_in(writes), config)
                            except Exception as failed:
                                effect = loop.throw(failed)
                                continue
                    elif isinstance(effect, _Persist):
                        try:
                            writes = _persisted(effect.writes)
                            result = _compat.persist_beside(
                                config, writes, _delivery(effect.writes)
                            )
                            if self.log is not None:  # logged before anything is released
                                self.log.record(reports_in(writes), config)
                        except Exception as failed:
                            effect = loop.throw(failed)
                            continue
                    else:  # store
                        result = _compat.put_to_store(config, effect.ops) if effect.ops else None
                except _Paused as paused:
                    effect = loop.throw(paused)
                except GateHalted as halted:
                    if not isinstance(effect, _Call):
                        raise
                    effect = loop.throw(halted)
                else:
                    effect = loop.send(result)
        except StopIteration as stop:
            return stop.value

    async def arun(self, input: Any, config: dict[str, Any]) -> Any:
        record: list[Report] = []
        loop = self._loop(input, config, record)
        try:
            effect = next(loop)
            while True:
                try:
                    if isinstance(effect, _Call):
                        token = _RECORD.set(record)
                        try:
                            result: Any = await self._acall(effect.input, config)
                        finally:
                            _RECORD.reset(token)
                    elif isinstance(effect, _Chain):
                        check = self._adurable_verify if effect.durable and self._acheck else None
                        chain = run_chain(self.gates, effect.output, effect.context)
                        result = await adrive(chain, check)
                    elif isinstance(effect, _KeepCheckpoints):
                        result = None
                        await effect.hold.akeep_checkpoints()
                    elif isinstance(effect, _Release):
                        result = None
                        await effect.hold.arelease(**effect.how)
                    elif isinstance(effect, _Prior):
                        result = await _compat.aprior_release(config, RELEASE_CHANNEL)
                    elif isinstance(effect, _KeepAside):
                        result = None
                        writes = _persisted(effect.writes)
                        await _compat.akeep_aside(config, writes)
                        if self.log is not None:
                            try:  # a halt is recorded in the log before it is raised
                                await self.log.arecord(reports_in(writes), config)
                            except Exception as failed:
                                effect = loop.throw(failed)
                                continue
                    elif isinstance(effect, _Persist):
                        try:
                            writes = _persisted(effect.writes)
                            result = await _compat.apersist_beside(
                                config, writes, _delivery(effect.writes)
                            )
                            if self.log is not None:  # logged before anything is released
                                await self.log.arecord(reports_in(writes), config)
                        except Exception as failed:
                            effect = loop.throw(failed)
                            continue
                    else:  # store: an async store is written from the loop, not its bridge
                        store = getattr(_compat.runtime(config), "store", None)
                        ops = effect.ops
                        result = await store.abatch(list(ops)) if ops and store else None
                except _Paused as paused:
                    effect = loop.throw(paused)
                except GateHalted as halted:
                    if not isinstance(effect, _Call):
                        raise
                    effect = loop.throw(halted)
                else:
                    effect = loop.send(result)
        except StopIteration as stop:
            return stop.value


def _only_reports(value: Any, ids: set[str]) -> bool:
    """Whether ``value`` (a write to the report channel) holds only reports with these
    ids."""
    items = value if isinstance(value, (list, tuple)) else [value]
    found = []
    for item in items:
        rid = (
            item.id
            if isinstance(item, Report)
            else item.get("id")
            if isinstance(item, Mapping)
            else None
        )
        found.append(rid)
    return bool(found) and all(isinstance(r, str) and r in ids for r in found)


def runnable(node: GuardedNode) -> Any:
    """The runnable installed in place of the original node.

    The functions close over the original runnable so LangGraph still finds a
    subgraph inside (state snapshots, ``get_state(subgraphs=True)``, drawings). An
    async run drives the gate on the event loop in both cases; a node without a native
    async path has only its own call run on a thread (see ``GuardedNode._acall``): a
    gate that waited on an async checkpointer from a thread of the loop's executor
    could starve the loop of the threads that saver needs, and hang.
    """
    inner = node.inner
    guarded = node

    def run(input: Any, config: RunnableConfig) -> Any:
        assert inner is guarded.inner
        return guarded.run(input, cast(dict[str, Any], config))

    async def arun(input: Any, config: RunnableConfig) -> Any:
        assert inner is guarded.inner
        return await guarded.arun(input, cast(dict[str, Any], config))

    r = _compat.runnable_callable(run, arun, node.name)
    r.trustgate_node = node  # what guarded_nodes() and audit() look for
    _compat.present_as(r, inner)
    return r
