"""Where verifiers run: a small pool of threads trustgate owns.

A verifier that outlives its time limit cannot be killed (Python threads cannot be),
but it must not take anyone else down with it: not later crossings, not LangGraph's
own sync nodes (which use the event loop's default executor), not the event loop,
and not interpreter shutdown. So verifiers never run on the default executor; they
run on these daemon threads. A job that times out is abandoned: its thread is
written off and a fresh one takes its place, up to a hard cap of written-off threads
beyond which new jobs fail at once (a failed inspection halts the crossing) instead
of piling up. Nothing is started per crossing: threads are started once and reused.

Built-in verifiers whose work is bounded by trustgate's input caps (``bounded =
True``) run inline in a sync crossing; a thread hop would cost more than they do.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import contextvars
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["ExecutorExhausted", "VerifierTimeout", "run_async", "run_sync"]

logger = logging.getLogger(__name__)

WORKERS = 4
MAX_ABANDONED = 32


class VerifierTimeout(Exception):
    """A verifier did not finish within its time limit (internal)."""


class ExecutorExhausted(Exception):
    """Too many verifiers are stuck past their time limits to start another (internal)."""


class _Job:
    __slots__ = ("ctx", "fn", "future", "worker")

    def __init__(self, fn: Callable[[], Any], ctx: contextvars.Context) -> None:
        self.fn = fn
        self.ctx = ctx
        self.future: cf.Future[Any] = cf.Future()
        self.worker: _Worker | None = None


class _Worker(threading.Thread):
    def __init__(self, pool: _Pool, n: int) -> None:
        super().__init__(name=f"trustgate-verifier-{n}", daemon=True)
        self.pool = pool
        self.abandoned = False

    def run(self) -> None:
        while not self.abandoned:
            job = self.pool.jobs.get()
            if job.future.cancelled():
                continue
            job.worker = self
            if not job.future.set_running_or_notify_cancel():
                continue
            try:
                result = job.ctx.run(job.fn)
            except BaseException as exc:
                job.future.set_exception(exc)
                del exc
            else:
                job.future.set_result(result)
                del result
            job.worker = None
            del job  # the job's context holds the run's config: let the run go
        self.pool.retired(self)


class _Pool:
    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.workers: list[_Worker] = []
        self.abandoned = 0
        self.started = 0

    def _spawn(self) -> None:
        self.started += 1
        w = _Worker(self, self.started)
        self.workers.append(w)
        w.start()

    def submit(self, fn: Callable[[], Any]) -> _Job:
        with self.lock:
            if self.abandoned >= MAX_ABANDONED:
                raise ExecutorExhausted(
                    f"{self.abandoned} verifiers are still running past their time limits"
                )
            while len(self.workers) < WORKERS:  # all at once: none later, per crossing
                self._spawn()
        job = _Job(fn, contextvars.copy_context())
        self.jobs.put(job)
        return job

    def abandon(self, job: _Job) -> None:
        """Write off the thread running ``job`` and start a replacement."""
        if job.future.cancel():
            return  # never started: nothing to write off
        with self.lock:
            w = job.worker
            if w is None or w.abandoned:
                return
            w.abandoned = True
            self.abandoned += 1
            self.workers.remove(w)
            self._spawn()
        logger.warning("a verifier outlived its time limit; its thread %s is written off", w.name)

    def retired(self, w: _Worker) -> None:
        with self.lock:
            if w.abandoned:
                self.abandoned -= 1


_POOL = _Pool()


def run_sync(fn: Callable[[], Any], timeout: float) -> Any:
    """Run ``fn`` on the pool; raise :class:`VerifierTimeout` after ``timeout`` s."""
    job = _POOL.submit(fn)
    try:
        return job.future.result(timeout)
    except cf.TimeoutError:
        _POOL.abandon(job)
        raise VerifierTimeout(f"did not finish within {timeout:g}s") from None


async def run_async(fn: Callable[[], Any], timeout: float) -> Any:
    """Await ``fn`` run on the pool (never on the loop's default executor)."""
    job = _POOL.submit(fn)
    try:
        return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(job.future)), timeout)
    except TimeoutError:
        _POOL.abandon(job)
        raise VerifierTimeout(f"did not finish within {timeout:g}s") from None


def stats() -> dict[str, int]:
    """Threads started and written off so far (for tests and benchmarks)."""
    with _POOL.lock:
        return {
            "workers": len(_POOL.workers),
            "started": _POOL.started,
            "abandoned": _POOL.abandoned,
        }
