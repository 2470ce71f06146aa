"""A crossing's time budget: ``TrustGate(..., budget=seconds)``.

Each verifier has its own limit (``timeout``); the budget bounds the crossing as a
whole: every verifier of the gate, a verifier's retries, the re-verification of a
policy's rewrite, and the earlier attempts of a node the gate re-rendered in the same
run. When it runs out the crossing halts (``budget_exceeded``, naming the verifier that
was running and the budget): a crossing that holds a worker past its budget is worse
than one that stops and says so, and an inspection that did not finish is not a pass.

A verifier run is given ``min(its timeout, what is left of the budget)``; one that
finishes after the budget ran out halts the crossing too (its answer came too late to
count). The node's own work between attempts (its model call) is not the gate's: only
the time the gate's crossings took is carried from one attempt to the next.

The default is ``None``: no budget beyond each verifier's own limit, so gates keep the
behaviour they were built with and a slow but legitimate chain of verifiers is not cut
short by a number nobody chose.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Carry", "Deadline", "clock"]

logger = logging.getLogger(__name__)

clock: Callable[[], float] = time.monotonic
"""The clock budgets are read on (monotonic; replaceable in tests)."""


@dataclass(frozen=True, slots=True)
class Deadline:
    """When a crossing's budget runs out, on :data:`clock`."""

    budget: float
    at: float

    @classmethod
    def start(cls, budget: float, spent: float = 0.0) -> Deadline:
        return cls(budget, clock() + budget - spent)

    def remaining(self) -> float:
        return self.at - clock()

    def limit(self, timeout: float) -> tuple[float, bool]:
        """The limit of the next run and whether the budget (not ``timeout``) set it."""
        left = self.at - clock()
        return (left, True) if left < timeout else (timeout, False)

    def passed(self) -> bool:
        return clock() >= self.at

    def not_started(self, verifier: str) -> str:
        return (
            f"the crossing's budget of {self.budget:g}s ran out before verifier "
            f"{verifier!r} could start"
        )

    def ran_out(self, verifier: str) -> str:
        return (
            f"the crossing's budget of {self.budget:g}s ran out while verifier "
            f"{verifier!r} was running"
        )

    def too_late(self, verifier: str) -> str:
        return (
            f"verifier {verifier!r} finished after the crossing's budget of "
            f"{self.budget:g}s ran out"
        )


class Carry:
    """What a gate's crossings spent on earlier attempts of the same node run.

    A re-render runs the node again in the same task; its next crossing picks up the
    time the earlier ones took. Keyed by where the crossing runs (thread, namespace,
    task, node, phase); a crossing that ends anything but a re-render ends the entry.
    Bounded: a run that dies between attempts leaves an entry the oldest-first cap
    removes."""

    CAP = 1024

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spent: OrderedDict[str, float] = OrderedDict()

    @staticmethod
    def key(meta: Mapping[str, Any], node: str, phase: str) -> str | None:
        thread, task = meta.get("thread_id"), meta.get("task_id")
        if thread is None or task is None:
            return None  # outside a run (TrustGate.check): one crossing, nothing carried
        return "\x1f".join(
            (str(thread), str(meta.get("checkpoint_ns") or ""), str(task), node, phase)
        )

    def take(self, key: str | None, attempt: int) -> float:
        """Seconds spent by earlier attempts (none for a first attempt)."""
        if key is None:
            return 0.0
        with self._lock:
            spent = self._spent.pop(key, 0.0)
        return spent if attempt > 1 else 0.0

    def keep(self, key: str | None, spent: float) -> None:
        if key is None:
            return
        with self._lock:
            self._spent[key] = spent
            while len(self._spent) > self.CAP:
                old, _ = self._spent.popitem(last=False)
                logger.debug("budget carry of an abandoned run dropped: %s", old[:16])
