"""Asking a sentence judge: one code path for the sync and the async check.

:func:`_session` is a generator: it looks each sentence up in the judge's cache, then
yields one :class:`Ask` per batch of the rest and receives the judge's reply (or an
:class:`Outage`), reads it strictly, retries once, and raises
:class:`~trustgate.errors.JudgeError` on a second failure. :func:`run` drives it with
``judge.judge``, :func:`arun` with ``await judge.ajudge`` (or ``judge.judge`` on
trustgate's threads): the same steps, as the gate drives its verifiers.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from trustgate.errors import JudgeError, VerdictError
from trustgate.verifiers.drafts.judge import (
    BATCH_CHARS,
    THREAD_LIMIT,
    JudgeCache,
    JudgeSummary,
    Judgment,
    SentenceJudge,
    bad_answer,
    cache_key,
    identity,
    outside_run,
    parse_judgments,
)

__all__ = ["Ask", "Outage", "Outcome", "arun", "run"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Ask:
    """One call the session needs: these sentences (id → sentence as sent)."""

    sentences: Mapping[str, str]
    attempt: int


@dataclass(frozen=True, slots=True)
class Outage:
    """The judge raised (or timed out) instead of answering."""

    error: BaseException


@dataclass
class _Tally:
    sentences: int = 0
    cached: int = 0
    calls: int = 0


@dataclass
class Outcome:
    """The session's result: a judgment per sentence given, and the tally."""

    judgments: list[Judgment]
    summary: JudgeSummary


def _text(reply: Any) -> str:
    if isinstance(reply, str):
        return reply
    if isinstance(reply, Mapping):
        try:
            return json.dumps(dict(reply), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise bad_answer(f"cannot be written as JSON ({exc})") from None
    raise bad_answer(f"is a {type(reply).__name__}; a judge answers with JSON text or a mapping")


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _batches(texts: Sequence[str], size: int) -> list[list[str]]:
    out: list[list[str]] = []
    chars = 0
    for t in texts:
        if out and len(out[-1]) < size and chars + len(t) <= BATCH_CHARS:
            out[-1].append(t)
            chars += len(t)
        else:
            out.append([t])
            chars = len(t)
    return out


def _session(judge: SentenceJudge, texts: Sequence[str]) -> Generator[Ask, Any, Outcome]:
    """Ask ``judge`` about ``texts`` (sentences as sent): the cache first, then one
    call per batch, each retried once; yields each call, receives its reply or an
    :class:`Outage`."""
    ident = identity(judge)
    cache = getattr(judge, "cache", None)
    if not isinstance(cache, JudgeCache):
        cache = None
    distinct = list(dict.fromkeys(texts))
    tally = _Tally(sentences=len(distinct))
    known: dict[str, Judgment] = {}
    todo: list[str] = []
    for t in distinct:
        hit = cache.get(cache_key(ident, t)) if cache is not None else None
        if hit is None:
            todo.append(t)
        else:
            known[t] = hit
            tally.cached += 1
    for batch in _batches(todo, judge.batch_size):
        asked = MappingProxyType({str(n): t for n, t in enumerate(batch, start=1)})
        failures: list[str] = []
        got: dict[str, Judgment] | None = None
        for attempt in (1, 2):
            tally.calls += 1
            reply = yield Ask(asked, attempt)
            try:
                if isinstance(reply, Outage):
                    err = reply.error
                    failures.append(_short(f"no answer ({type(err).__name__}: {err})"))
                else:
                    got = parse_judgments(_text(reply), asked)
                    break
            except VerdictError as exc:
                failures.append(_short(str(exc)))
                logger.warning(
                    "sentence judge %r: answer %d of 2 about %d sentence(s) is unreadable",
                    judge.name,
                    attempt,
                    len(asked),
                )
        if got is None:
            raise JudgeError(
                f"sentence judge {judge.name!r} failed twice on {len(asked)} sentence(s): "
                + "; then ".join(failures),
                judge.name,
                tally.calls,
            )
        for key, t in asked.items():
            known[t] = got[key]
            if cache is not None:
                cache.put(cache_key(ident, t), got[key])
    summary = JudgeSummary(
        judge=judge.name, sentences=tally.sentences, cached=tally.cached, calls=tally.calls
    )
    return Outcome([known[t] for t in texts], summary)


def run(judge: SentenceJudge, texts: Sequence[str]) -> Outcome:
    """The session, synchronously: each call is ``judge.judge``."""
    gen = _session(judge, texts)
    try:
        ask = next(gen)
        while True:
            try:
                with outside_run():
                    reply: Any = judge.judge(ask.sentences)
            except Exception as exc:  # an outage: the session retries once, then halts
                logger.warning(
                    "sentence judge %r did not answer: %s", judge.name, type(exc).__name__
                )
                reply = Outage(exc)
            ask = gen.send(reply)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


async def arun(judge: SentenceJudge, texts: Sequence[str]) -> Outcome:
    """The session, asynchronously: ``judge.ajudge`` where it has one, else
    ``judge.judge`` on trustgate's threads (never the loop's default executor)."""
    from trustgate import _executor

    ajudge = getattr(judge, "ajudge", None)
    gen = _session(judge, texts)
    try:
        ask = next(gen)
        while True:
            try:
                with outside_run():
                    if ajudge is not None:
                        reply: Any = await ajudge(ask.sentences)
                    else:
                        call = functools.partial(judge.judge, ask.sentences)
                        reply = await _executor.run_async(call, THREAD_LIMIT)
            except Exception as exc:  # an outage: the session retries once, then halts
                logger.warning(
                    "sentence judge %r did not answer: %s", judge.name, type(exc).__name__
                )
                reply = Outage(exc)
            ask = gen.send(reply)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
