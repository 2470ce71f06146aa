"""A process that forks after its gates ran (a pre-forking server, a worker pool).

The child has only the thread that forked. Before the executor reset its books at a
fork, the child believed it still had the parent's idle verifier threads, queued its
first verifier run for them, and nobody took it: every crossing in the child halted as
``verifier_timeout``.
"""

from __future__ import annotations

import json
import os
import select

import pytest

from trustgate import FunctionVerifier, TrustGate, _executor

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _gate() -> TrustGate:
    ok = FunctionVerifier(lambda claims, evidence: [], name="ok", timeout=2.0)
    return TrustGate("after-fork", reads="answer", verifiers=[ok])


def _in_child(fn: object) -> dict[str, object]:
    """Run ``fn`` in a forked child; its JSON answer, or why there was none."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        try:
            out = fn()  # type: ignore[operator]
        except BaseException as exc:
            out = {"error": f"{type(exc).__name__}: {exc}"}
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    try:
        ready, _w, _x = select.select([r], [], [], 30)
        data = os.read(r, 65536) if ready else b'{"error": "no answer in 30 s"}'
    finally:
        os.close(r)
        os.waitpid(pid, 0)
    return json.loads(data or b'{"error": "the child died"}')


def test_a_forked_child_runs_its_verifiers_on_threads_of_its_own() -> None:
    gate = _gate()
    assert gate.check({"answer": "fine"}).report.decision == "pass"
    assert _executor.stats()["workers"] >= 1  # the parent has verifier threads now

    def child() -> dict[str, object]:
        report = gate.check({"answer": "fine"}).report
        return {"decision": report.decision, "workers": _executor.stats()["workers"]}

    assert _in_child(child) == {"decision": "pass", "workers": 1}


def test_a_child_forked_while_a_verifier_is_stuck_keeps_its_full_capacity() -> None:
    import threading

    release = threading.Event()
    stuck = FunctionVerifier(
        lambda claims, evidence: release.wait(10) and [], name="stuck", timeout=0.05
    )
    gate = TrustGate("stuck", reads="answer", verifiers=[stuck], max_stuck=1)
    try:
        assert gate.check({"answer": "x"}).report.decision == "halted"  # one thread written off
        assert gate.check({"answer": "x"}).report.decision == "halted"  # the cap: refused at once

        def child() -> dict[str, object]:
            # the gate's own bulkhead: its stuck thread is the parent's, not the child's
            return {"ran": _executor.run_sync(lambda: "ran", 2.0, gate.bulkhead, "ok")}

        assert _in_child(child) == {"ran": "ran"}
    finally:
        release.set()
