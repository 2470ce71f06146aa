"""Where verifiers run: threads trustgate owns, partitioned into one bulkhead per gate.

A verifier that outlives its time limit cannot be killed (Python threads cannot be),
but it must not take anyone else down with it: not later crossings, not other gates,
not LangGraph's own sync nodes (which use the event loop's default executor), not the
event loop, and not interpreter shutdown. So verifiers never run on the default
executor; they run on these daemon threads.

Each gate has its own :class:`Bulkhead`: at most ``threads`` of its verifier runs are
on a thread at once (more wait in the gate's own queue, never in front of another
gate's runs), and at most ``max_stuck`` of its threads may be written off (a run that
outlived its limit is abandoned: its thread keeps running it until it returns, and a
fresh thread takes its place). A gate whose stuck threads reach its cap fails its next
runs at once (:class:`ExecutorExhausted`, a failed inspection that halts the crossing)
instead of piling up more: its stuck verifiers count against that gate only, and every
other gate keeps its full capacity.

The threads themselves are shared: an idle thread serves whichever gate needs one, a
thread is started only when more runs are on their way than threads exist, and an idle
thread ends after :data:`IDLE_SECONDS` (a few are kept warm), so a process with many
gates does not hold a thread per gate. Every thread, stuck or not, counts against one
process-wide ceiling, :data:`MAX_THREADS`; with the defaults one gate holds at most
``4 + 8 = 12`` of its 256, so no single gate can use it up.

A process that forks (a pre-forking server, a worker pool) gives its child none of its
threads: the child starts with empty books (no threads, no queued or stuck runs), so its
first verifier starts a thread of its own instead of queueing for the parent's.

Only a run with a time limit comes here. A verifier nobody gave a limit (no
``timeout`` of its own, none on its gate, no budget) runs inline, in the crossing
itself, and so does one that declares itself ``bounded`` (its work is bounded by
trustgate's input caps): a thread hop would cost more than they do.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures as cf
import contextvars
import logging
import os
import queue
import threading
import weakref
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = [
    "DEFAULT_MAX_STUCK",
    "DEFAULT_THREADS",
    "MAX_THREADS",
    "Bulkhead",
    "ExecutorExhausted",
    "VerifierTimeout",
    "run_async",
    "run_coroutine",
    "run_sync",
    "stats",
]

logger = logging.getLogger(__name__)

DEFAULT_THREADS = 4
"""Verifier runs of one gate on a thread at once (``TrustGate(threads=...)``)."""
DEFAULT_MAX_STUCK = 8
"""Threads of one gate that may be stuck past their limits (``TrustGate(max_stuck=...)``)."""
MAX_THREADS = 256
"""Verifier threads in the whole process, stuck ones included."""
IDLE_SECONDS = 30.0
"""An idle thread ends after this long, unless it is one of the :data:`KEEP_WARM`."""
KEEP_WARM = 2


class VerifierTimeout(Exception):
    """A verifier did not finish within its time limit (internal)."""


class ExecutorExhausted(Exception):
    """Too many verifiers are stuck past their time limits to start another (internal)."""


class _Job:
    __slots__ = ("bulkhead", "ctx", "fn", "future", "label", "released", "settled", "worker")

    def __init__(
        self, bulkhead: Bulkhead, label: str, fn: Callable[[], Any], ctx: contextvars.Context
    ) -> None:
        self.bulkhead = bulkhead
        self.label = label
        self.fn = fn
        self.ctx = ctx
        self.future: cf.Future[Any] = cf.Future()
        self.worker: _Worker | None = None
        self.released = False  # handed to the shared threads (not waiting in its bulkhead)
        self.settled = False  # finished, cancelled or written off: no longer counted


class Bulkhead:
    """One gate's share of the verifier threads: its concurrency and its stuck threads.

    Example:
        ```python
        bulkhead = Bulkhead("answer", threads=4, max_stuck=8)
        run_sync(lambda: 1 + 1, 5.0, bulkhead)
        ```
    """

    def __init__(
        self, name: str, *, threads: int = DEFAULT_THREADS, max_stuck: int = DEFAULT_MAX_STUCK
    ) -> None:
        self.name = name
        self.threads = threads
        self.max_stuck = max_stuck
        self.running = 0  # jobs handed to the shared threads, not yet settled
        self.waiting: collections.deque[_Job] = collections.deque()
        self.stuck: collections.Counter[str] = collections.Counter()
        with _LOCK:
            _BULKHEADS.add(self)

    def stats(self) -> dict[str, int]:
        """Runs in flight, waiting, and threads stuck past their limits (for tests)."""
        with _LOCK:
            return {
                "running": self.running,
                "waiting": len(self.waiting),
                "stuck": sum(self.stuck.values()),
            }

    def __repr__(self) -> str:
        return f"Bulkhead({self.name!r}, threads={self.threads}, max_stuck={self.max_stuck})"


class _Worker(threading.Thread):
    def __init__(self, n: int) -> None:
        super().__init__(name=f"trustgate-verifier-{n}", daemon=True)
        self.abandoned: str | None = None  # the label of the run it was written off with
        self.bulkhead: Bulkhead | None = None

    def run(self) -> None:
        while True:
            try:
                job = _JOBS.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with _LOCK:
                    # leave only if the threads that stay can take every run on its way
                    if len(_LIVE) > KEEP_WARM and _STATE["pending"] < len(_LIVE):
                        _LIVE.discard(self)
                        return
                continue
            with _LOCK:
                job.worker = self
                started = job.future.set_running_or_notify_cancel()
                if not started:
                    _settle(job)
            if not started:
                continue
            try:
                result = job.ctx.run(_call, job)
            except BaseException as exc:
                job.future.set_exception(exc)
                del exc
            else:
                job.future.set_result(result)
                del result
            job.worker = None
            del job  # the job's context holds the run's config: let the run go
            if self.abandoned is not None:
                with _LOCK:
                    _STATE["abandoned"] -= 1
                    if self.bulkhead is not None:
                        self.bulkhead.stuck[self.abandoned] -= 1
                        if self.bulkhead.stuck[self.abandoned] <= 0:
                            del self.bulkhead.stuck[self.abandoned]
                logger.info("a written-off verifier thread %s returned and ends", self.name)
                return


def _call(job: _Job) -> Any:
    try:
        return job.fn()
    finally:
        with _LOCK:
            _settle(job)  # before the outcome: the caller's next run finds this thread free


_LOCK = threading.Lock()
_JOBS: queue.SimpleQueue[_Job] = queue.SimpleQueue()
_LIVE: set[_Worker] = set()
_STATE = {"pending": 0, "abandoned": 0, "started": 0}
# pending: jobs handed to the shared threads and not settled (queued or running)
_BULKHEADS: weakref.WeakSet[Bulkhead] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    """A forked child has only the thread that forked: books that list the parent's
    threads, runs and stuck threads would queue every verifier for nobody (each run
    would time out). Start the child's books empty; its lock is new too, in case
    another thread of the parent held it at the fork."""
    global _LOCK, _JOBS
    _LOCK = threading.Lock()
    _JOBS = queue.SimpleQueue()
    _LIVE.clear()
    _STATE.update(pending=0, abandoned=0, started=0)
    for b in list(_BULKHEADS):
        b.running = 0
        b.waiting.clear()
        b.stuck.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _spawn_if_needed() -> None:
    """Start a thread when more runs are on their way than threads can take (under the
    process-wide ceiling). Called with the lock held."""
    while _STATE["pending"] > len(_LIVE) and len(_LIVE) + _STATE["abandoned"] < MAX_THREADS:
        _STATE["started"] += 1
        w = _Worker(_STATE["started"])
        _LIVE.add(w)
        w.start()


def _release(job: _Job) -> None:
    """Hand ``job`` to the shared threads (lock held)."""
    job.released = True
    job.bulkhead.running += 1
    _STATE["pending"] += 1
    _spawn_if_needed()
    _JOBS.put(job)


def _settle(job: _Job) -> None:
    """``job`` no longer needs a thread: free its place and let its gate's next run
    go (lock held; idempotent)."""
    if job.settled:
        return
    job.settled = True
    b = job.bulkhead
    if not job.released:
        try:
            b.waiting.remove(job)
        except ValueError:
            logger.debug("job of %r was already out of its bulkhead's queue", b.name)
        return
    b.running -= 1
    _STATE["pending"] -= 1
    while b.waiting and b.running < b.threads:
        _release(b.waiting.popleft())


def _stuck_names(b: Bulkhead) -> str:
    return ", ".join(f"{name!r} x{n}" for name, n in sorted(b.stuck.items()))


def submit(fn: Callable[[], Any], bulkhead: Bulkhead, label: str = "verifier") -> _Job:
    """Queue ``fn`` in ``bulkhead``; raise :class:`ExecutorExhausted` at once when the
    gate's stuck threads reached its cap, or every thread of the process is stuck."""
    with _LOCK:
        stuck = sum(bulkhead.stuck.values())
        if stuck >= bulkhead.max_stuck:
            raise ExecutorExhausted(
                f"gate {bulkhead.name!r} has {stuck} verifier threads stuck past their time "
                f"limits (its cap, max_stuck={bulkhead.max_stuck}), running "
                f"{_stuck_names(bulkhead)}: {label!r} was not started"
            )
        if not _LIVE and _STATE["abandoned"] >= MAX_THREADS:
            raise ExecutorExhausted(
                f"all {MAX_THREADS} verifier threads of the process are stuck past their "
                f"time limits: {label!r} of gate {bulkhead.name!r} was not started"
            )
        job = _Job(bulkhead, label, fn, contextvars.copy_context())
        if bulkhead.running < bulkhead.threads:
            _release(job)
        else:
            bulkhead.waiting.append(job)
    return job


def abandon(job: _Job) -> None:
    """Give up on ``job``: cancel it if it has not started, else write off its thread
    (it counts against its gate's ``max_stuck`` until it returns) and start another."""
    with _LOCK:
        if job.future.cancel():
            _settle(job)
            return  # never started: nothing to write off
        w = job.worker
        if job.settled or w is None or w.abandoned is not None:
            return  # it finished meanwhile
        w.abandoned = job.label
        w.bulkhead = job.bulkhead
        job.bulkhead.stuck[job.label] += 1
        _STATE["abandoned"] += 1
        _LIVE.discard(w)
        _settle(job)
        _spawn_if_needed()
    logger.warning(
        "verifier %r of gate %r outlived its time limit; its thread %s is written off",
        job.label,
        job.bulkhead.name,
        w.name,
    )


_DIRECT = Bulkhead("direct calls")
"""For verifier runs outside a gate (``FunctionVerifier.averify`` called directly)."""


def run_sync(
    fn: Callable[[], Any],
    timeout: float,
    bulkhead: Bulkhead | None = None,
    label: str = "verifier",
) -> Any:
    """Run ``fn`` in ``bulkhead``; raise :class:`VerifierTimeout` after ``timeout`` s."""
    job = submit(fn, bulkhead or _DIRECT, label)
    try:
        return job.future.result(timeout)
    except cf.TimeoutError:
        abandon(job)
        raise VerifierTimeout(f"did not finish within {timeout:g}s") from None
    except BaseException:
        if not job.future.done():
            abandon(job)  # interrupted while waiting: nobody waits for it any more
        raise


async def run_async(
    fn: Callable[[], Any],
    timeout: float,
    bulkhead: Bulkhead | None = None,
    label: str = "verifier",
) -> Any:
    """Await ``fn`` run in ``bulkhead`` (never on the loop's default executor)."""
    job = submit(fn, bulkhead or _DIRECT, label)
    try:
        return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(job.future)), timeout)
    except TimeoutError:
        abandon(job)
        raise VerifierTimeout(f"did not finish within {timeout:g}s") from None
    except asyncio.CancelledError:
        abandon(job)  # the crossing was cancelled: nobody waits for the run any more
        raise


def _late(task: asyncio.Task[Any]) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        logger.warning("a verifier that outlived its time limit failed later: %r", exc)
    else:
        logger.warning("a verifier that outlived its time limit returned later; ignored")


async def run_coroutine(
    coro: Coroutine[Any, Any, Any],
    timeout: float | None,
    context: contextvars.Context | None = None,
) -> Any:
    """Await a native verifier coroutine for at most ``timeout`` s (``None``: no limit),
    then cancel it.

    The crossing does not wait for the cancellation to be honoured: a verifier that
    catches it and carries on keeps running on the loop, but holds no crossing (its
    late outcome is logged and ignored)."""
    task = asyncio.get_running_loop().create_task(coro, context=context)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if task in done:
        return task.result()
    task.cancel()
    task.add_done_callback(_late)
    raise VerifierTimeout(f"did not finish within {timeout:g}s")


def stats() -> dict[str, int]:
    """Threads of the process: live, started so far, written off (for tests and benchmarks)."""
    with _LOCK:
        return {
            "workers": len(_LIVE),
            "started": _STATE["started"],
            "abandoned": _STATE["abandoned"],
        }
