"""What it costs to run a verifier under a time limit, measured side by side.

* inline: calling the verifier (no time limit can be enforced);
* thread per call: the previous design (a daemon thread started for each verifier run);
* pool: trustgate's own verifier threads (started once, reused; a stuck run is written
  off and replaced), sync and async.

Wall time per call, best of several rounds.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Callable
from typing import Any

from trustgate import _executor

N, ROUNDS = 2000, 7


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


if __name__ == "__main__":
    main()
