"""What a gate costs, measured side by side in one run.

Graph level (CPU time per invoke of a 10-node chain, sync and async, best of
interleaved rounds):

* base: the chain;
* +no-op node: the chain plus one node that does nothing (the unit of cost);
* +trivial gate: the chain with a gate on node 5 that reads one key and runs one
  trivial verifier;
* +realistic gate: the chain with a gate replaying 20 file citations and checking a
  2 KB draft's citations, URLs and prices against a brief.

A gate runs inside the node it guards, so a crossing adds no node and no step: what it
adds over the base is its whole cost. Goal: a crossing <= 2x a no-op node.

Check level: ``TrustGate.check`` on an update against calling the bare verifier on the
same claims (goal <= 3x), and how many threads are started per crossing (goal: none).

Previous design (a separate gate node, measured 2026-12-01 on this machine class):
trivial gate added 400-460 us sync (1.9-6.8x a no-op node), 560-910 us async.
"""

from __future__ import annotations

import asyncio
import itertools
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from trustgate import EvidenceSources, Finding, FromKey, FunctionVerifier, TrustGate, guard
from trustgate.contracts import Brief, EvidenceSet, check_citations, check_integrity
from trustgate.files import FileCitation, SelfReport, Workspace
from trustgate.verifiers.base import Evidence
from trustgate.verifiers.files.checks import CitationReplay

RUNS, ROUNDS = 40, 15
PREVIOUS = {"sync": (400e-6, 460e-6), "async": (560e-6, 910e-6)}


class State(TypedDict, total=False):
    n: int
    flag: str
    manifest: list[SelfReport]
    draft: str


def chain(extra_noop: bool, payload: dict[str, Any]) -> StateGraph[Any, Any, Any, Any]:
    g = StateGraph(State)
    names = [f"n{i}" for i in range(10)]
    for i, name in enumerate(names):
        if i == 5:
            g.add_node(name, lambda s, p=payload: {"n": s.get("n", 0) + 1, **p})
        else:
            g.add_node(name, lambda s: {"n": s.get("n", 0) + 1})
    order = list(names)
    if extra_noop:
        g.add_node("noop", lambda s: {})
        order.insert(6, "noop")
    g.add_edge(START, order[0])
    for a, b in itertools.pairwise(order):
        g.add_edge(a, b)
    g.add_edge(order[-1], END)
    return g


def build_repo(root: Path) -> list[SelfReport]:
    items = []
    for i in range(20):
        lines = [f"    value_{i}_{n} = compute(arg_{n}, {n * 7919 % 1000})" for n in range(200)]
        (root / f"mod_{i}.py").write_text("\n".join(lines) + "\n")
        line = 17 + i
        items.append(
            SelfReport(
                item=f"item {i}",
                status="already_correct",
                evidence=[
                    FileCitation(file=f"mod_{i}.py", line=line, content=lines[line - 1].strip())
                ],
            )
        )
    return items


DRAFT_UNIT = (
    "Keep an inventory of information assets (ISO/IEC 27001:2022 clause 5.9). "
    "Owners review it quarterly; see https://example.com/policy for the template. "
    "The tooling licence costs $1,200.00 a year. "
)


def make_draft() -> str:
    text = ""
    while len(text) < 2048:
        text += DRAFT_UNIT
    return text


class Trivial:
    """A verifier whose work is nothing, run inline like trustgate's own bounded ones."""

    name = "trivial"
    timeout = None
    bounded = True

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        return [Finding.ok("trivial")]


def best(samples: list[float]) -> float:
    return min(samples)


def run_sync(graphs: dict[str, Any]) -> dict[str, float]:
    """Rounds interleave the graphs so drift on a shared machine hits all alike; CPU
    time of this process (all threads) and the best round."""
    samples: dict[str, list[float]] = {name: [] for name in graphs}
    for _ in range(ROUNDS):
        for name, g in graphs.items():
            t0 = time.process_time()
            for _ in range(RUNS):
                g.invoke({"n": 0})
            samples[name].append((time.process_time() - t0) / RUNS)
    return {name: best(v) for name, v in samples.items()}


async def run_async(graphs: dict[str, Any]) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in graphs}
    for _ in range(ROUNDS):
        for name, g in graphs.items():
            t0 = time.process_time()
            for _ in range(RUNS):
                await g.ainvoke({"n": 0})
            samples[name].append((time.process_time() - t0) / RUNS)
    return {name: best(v) for name, v in samples.items()}


def per_call(fn: Any, n: int = 300, rounds: int = 10) -> float:
    out = []
    for _ in range(rounds):
        t0 = time.process_time()
        for _ in range(n):
            fn()
        out.append((time.process_time() - t0) / n)
    return best(out)


def threads_started(fn: Any, n: int) -> int:
    started = 0
    original = threading.Thread.start

    def counting(self: threading.Thread) -> None:
        nonlocal started
        started += 1
        original(self)

    threading.Thread.start = counting  # type: ignore[method-assign]
    try:
        for _ in range(n):
            fn()
    finally:
        threading.Thread.start = original  # type: ignore[method-assign]
    return started


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        manifest = build_repo(root)
        workspace = Workspace(root)
        draft = make_draft()
        brief = Brief(citations=["ISO/IEC 27001:2022 clause 5.9"])
        evidence_set = EvidenceSet(urls=["https://example.com/policy"], prices=["USD 1200"])

        trivial = TrustGate("trivial", reads="flag", verifiers=[Trivial()], passthrough=["n"])

        def scan_draft(claims: Any, evidence: Any) -> list[Finding]:
            text = evidence.get("draft")
            found = check_citations(text, evidence.require("brief"))
            found += check_integrity(text, evidence.require("evidence_set"))
            return found or [Finding.ok("draft_scan")]

        replay = CitationReplay(timeout=None)
        realistic = TrustGate(
            "realistic",
            reads=FromKey("manifest"),
            verifiers=[replay, FunctionVerifier(scan_draft, name="draft_scan")],
            evidence=EvidenceSources(
                workspace=workspace,
                brief=brief,
                evidence_set=evidence_set,
                extra={"draft": draft},
            ),
            passthrough=["n", "draft"],
        )

        graphs = {
            "base": chain(False, {}).compile(),
            "+no-op node": chain(True, {}).compile(),
            "+trivial gate": guard(chain(False, {"flag": "ok"}), {"n5": trivial}).compile(),
            "+realistic gate": guard(
                chain(False, {"manifest": manifest, "draft": draft}), {"n5": realistic}
            ).compile(),
        }
        for name, g in graphs.items():  # every gate passes: a halt would skew nothing silently
            out = g.invoke({"n": 0})
            assert out["n"] == 10, (name, out)

        for mode in ("sync", "async"):
            times = run_sync(graphs) if mode == "sync" else asyncio.run(run_async(graphs))
            base = times["base"]
            noop = times["+no-op node"] - base
            print(f"\n[{mode}] CPU per invoke (best of {ROUNDS} interleaved rounds x {RUNS} runs)")
            for name, t in times.items():
                added = t - base
                ratio = added / noop if noop > 0 else float("nan")
                extra = f"  adds {added * 1e6:8.1f} us = {ratio:5.2f}x no-op"
                print(f"  {name:16s} {t * 1e6:9.1f} us" + ("" if name == "base" else extra))
            lo, hi = PREVIOUS[mode]
            print(
                f"  previous design: trivial gate added {lo * 1e6:.0f}-{hi * 1e6:.0f} us; "
                "goal: a crossing <= 2x a no-op node"
            )

        # check level: the gate around a verifier vs the bare verifier
        update = {"manifest": manifest}
        claims = list(manifest)
        ev = Evidence(workspace=workspace)
        bare_gate = TrustGate(
            "replay",
            reads=FromKey("manifest"),
            verifiers=[replay],
            evidence=EvidenceSources(workspace=workspace),
        )
        bare = per_call(lambda: replay.verify(claims, ev), n=30, rounds=8)
        gated = per_call(lambda: bare_gate.check(update, node="n"), n=30, rounds=8)
        triv = per_call(lambda: Trivial().verify("ok", ev))
        triv_gated = per_call(lambda: trivial.check({"flag": "ok"}, node="n"))
        user = TrustGate(
            "user",
            reads="flag",
            verifiers=[FunctionVerifier(lambda c, e: Finding.ok("u"), name="u")],
        )
        user_gated = per_call(lambda: user.check({"flag": "ok"}, node="n"))
        print("\n[check] TrustGate.check vs the bare verifier (CPU per call)")
        print(
            f"  citation replay x20: bare {bare * 1e6:8.1f} us, check {gated * 1e6:8.1f} us "
            f"= {gated / bare:5.2f}x (goal <= 3x)"
        )
        print(
            f"  trivial (inline):    bare {triv * 1e6:8.1f} us, check {triv_gated * 1e6:8.1f} us"
            f"  (overhead {(triv_gated - triv) * 1e6:.1f} us)"
        )
        print(
            f"  trivial user FunctionVerifier (own pool, time limit): check "
            f"{user_gated * 1e6:8.1f} us"
        )
        g = graphs["+trivial gate"]
        print(
            f"\n[threads] started by 200 guarded invokes (sync): "
            f"{threads_started(lambda: g.invoke({'n': 0}), 200)}"
        )
        print(
            f"[threads] started by 200 user-verifier checks: "
            f"{threads_started(lambda: user.check({'flag': 'ok'}, node='n'), 200)}"
        )


if __name__ == "__main__":
    main()
