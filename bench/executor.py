"""What it costs to run a verifier under a time limit, and what a stuck one costs the
other gates, measured side by side.

Per call (wall time per call, best of several rounds):

* inline: calling the verifier (no time limit can be enforced);
* thread per call: the previous design (a daemon thread started for each verifier run);
* pool: trustgate's own verifier threads (reused; a stuck run is written off and
  replaced), sync and async.

Isolation: an unrelated gate whose verifier takes 1 ms, crossed ``CROSSINGS`` times,
sync and async: its pass rate and per-crossing latency (median, 95th percentile) with
nothing stuck, beside the same after another gate's verifier hung past its limit in
``STUCK`` crossings and while that gate keeps being crossed from another thread (about
one crossing a millisecond, each refused at once: its threads are written off). Each
gate has its own bulkhead, so the stuck gate's written-off threads (its ``max_stuck``)
cost it alone. Before bulkheads, one pool and one process-wide cap of 32 written-off
threads served every gate: after 40 such crossings the unrelated gate halted 10 of 10
(``verifier_error``, ``ExecutorExhausted``).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from trustgate import Finding, FunctionVerifier, TrustGate, _executor
from trustgate.verifiers.base import Evidence

N, ROUNDS = 2000, 7
CROSSINGS, STUCK, LIMIT = 300, 40, 0.05


def work() -> int:
    return sum(range(50))


def thread_per_call(fn: Callable[[], Any], timeout: float) -> Any:
    """The previous design's ``_run_in_thread``."""
    box: dict[str, Any] = {}
    ctx = contextvars.copy_context()

    def target() -> None:
        box["value"] = ctx.run(fn)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    return box.get("value")


def per_call(run: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(N):
            run()
        best = min(best, (time.perf_counter() - t0) / N)
    return best


async def per_call_async() -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(N):
            await _executor.run_async(work, 5.0)
        best = min(best, (time.perf_counter() - t0) / N)
    return best


def one_ms(claims: Any, evidence: Evidence) -> list[Finding]:
    time.sleep(0.001)
    return [Finding.ok("one_ms")]


def unrelated_gate() -> TrustGate:
    return TrustGate("unrelated", reads="claim", verifiers=[FunctionVerifier(one_ms, timeout=5)])


def figures(decisions: Sequence[str], took: list[float]) -> str:
    took = sorted(took)
    rate = decisions.count("pass") / len(decisions)
    median, p95 = took[len(took) // 2], took[int(len(took) * 0.95)]
    return (
        f"{decisions.count('pass'):4d}/{len(decisions)} passed ({rate:6.1%}), "
        f"median {median * 1e3:6.2f} ms, p95 {p95 * 1e3:6.2f} ms"
    )


def crossings_sync(gate: TrustGate) -> str:
    decisions, took = [], []
    for i in range(CROSSINGS):
        t0 = time.perf_counter()
        decisions.append(gate.check({"claim": str(i)}, node="n").report.decision)
        took.append(time.perf_counter() - t0)
    return figures(decisions, took)


async def crossings_async(gate: TrustGate) -> str:
    decisions, took = [], []
    for i in range(CROSSINGS):
        t0 = time.perf_counter()
        decisions.append((await gate.acheck({"claim": str(i)}, node="n")).report.decision)
        took.append(time.perf_counter() - t0)
    return figures(decisions, took)


def isolation() -> None:
    logging.getLogger("trustgate").setLevel(logging.ERROR)  # the written-off threads' warnings
    release, stop = threading.Event(), threading.Event()

    def hang(claims: Any, evidence: Evidence) -> list[Finding]:
        release.wait()
        return [Finding.ok("hang")]

    stuck = TrustGate("stuck", reads="claim", verifiers=[FunctionVerifier(hang, timeout=LIMIT)])
    halted = [stuck.check({"claim": str(i)}, node="n").report.decision for i in range(STUCK)]

    meanwhile: list[str] = []

    def keep_crossing() -> None:
        while not stop.wait(0.001):  # one crossing a millisecond, each refused at once
            meanwhile.append(stuck.check({"claim": "again"}, node="n").report.decision)

    baseline_sync = crossings_sync(unrelated_gate())
    baseline_async = asyncio.run(crossings_async(unrelated_gate()))
    pressure = threading.Thread(target=keep_crossing, daemon=True)
    pressure.start()
    try:
        beside_sync = crossings_sync(unrelated_gate())
        beside_async = asyncio.run(crossings_async(unrelated_gate()))
        held = stuck.bulkhead.stats()["stuck"]
    finally:
        stop.set()
        pressure.join()
        release.set()
    print(
        f"isolation: an unrelated gate with a 1 ms verifier, {CROSSINGS} crossings each; "
        f"the other gate's verifier hung past its {LIMIT:g}s limit in "
        f"{halted.count('halted')} of {STUCK} crossings, {held} of its threads stuck"
    )
    print(
        f"  meanwhile {len(meanwhile)} more crossings of the stuck gate, "
        f"{meanwhile.count('halted')} halted"
    )
    print(f"  nothing stuck, sync            {baseline_sync}")
    print(f"  another gate stuck, sync       {beside_sync}")
    print(f"  nothing stuck, async           {baseline_async}")
    print(f"  another gate stuck, async      {beside_async}")


def main() -> None:
    inline = per_call(work)
    old = per_call(lambda: thread_per_call(work, 5.0))
    pool = per_call(lambda: _executor.run_sync(work, 5.0))
    pool_async = asyncio.run(per_call_async())
    print(f"per verifier call (best of {ROUNDS} x {N}), wall time")
    print(f"  inline                 {inline * 1e6:8.1f} us")
    print(f"  thread per call (old)  {old * 1e6:8.1f} us")
    print(f"  trustgate pool, sync   {pool * 1e6:8.1f} us  = {pool / old:4.2f}x the old way")
    print(f"  trustgate pool, async  {pool_async * 1e6:8.1f} us  = {pool_async / old:4.2f}x")
    print(f"  threads started by the pool so far: {_executor.stats()['started']}")
    isolation()


if __name__ == "__main__":
    main()
