"""What a gate costs, measured side by side in one run.

Graph level (CPU time of this process per invoke, sync and async): a 4-node chain
whose state holds 0, 10 or 100 messages of history (human, AI with usage and response
metadata, AI with tool calls, tool results), in three forms measured in interleaved
rounds, so drift on a shared machine hits all alike:

* base: the chain;
* +no-op node: the chain plus one node that returns nothing (the unit of cost);
* +trivial gate: the chain with a gate on its third node that reads one key and runs
  one trivial verifier (a plain ``FunctionVerifier``, no time limit).

A gate runs inside the node it guards, so a crossing adds no node and no step: what it
adds over the base is its whole cost. Goal: a crossing <= 2x a no-op node, at every
size of state (what the crossing costs should depend on what the node emitted, not on
how much history the state holds). Each figure is the best of the rounds; the range
beside a ratio is the ratio's spread over the rounds (min-max).

Check level: ``TrustGate.check`` on an update against calling the bare verifier
function on the same claims (goal <= 3x), for verifiers of a few sizes, and how many
threads are started per crossing (goal: none).

``python bench/gate.py`` (about two minutes); ``--quick`` for a rough pass.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from trustgate import EvidenceSources, Finding, FromKey, FunctionVerifier, TrustGate, guard
from trustgate.contracts import Brief, EvidenceSet, check_citations, check_integrity
from trustgate.files import FileCitation, SelfReport, Workspace
from trustgate.verifiers.files.checks import CitationReplay

QUICK = "--quick" in sys.argv
RUNS, ROUNDS = (10, 5) if QUICK else (25, 15)
SIZES = (0, 10, 100)


class State(TypedDict, total=False):
    n: int
    flag: str
    messages: Annotated[list[AnyMessage], add_messages]


def history(size: int) -> list[BaseMessage]:
    """``size`` messages as a chat agent's state holds them."""
    out: list[BaseMessage] = []
    i = 0
    while len(out) < size:
        out.append(HumanMessage(f"question {i}: what does clause {i} require?", id=f"h{i}"))
        if i % 3 == 2:
            out.append(
                AIMessage(
                    "",
                    id=f"c{i}",
                    tool_calls=[
                        {"name": "lookup", "args": {"clause": i, "q": "scope"}, "id": f"t{i}"}
                    ],
                    response_metadata={"model_name": "m", "finish_reason": "tool_calls"},
                    usage_metadata={"input_tokens": 90, "output_tokens": 12, "total_tokens": 102},
                )
            )
            out.append(ToolMessage(f"clause {i}: the owner keeps a register", tool_call_id=f"t{i}"))
            out[-1].id = f"r{i}"
        out.append(
            AIMessage(
                f"Clause {i} asks for an inventory of assets, reviewed quarterly. " * 3,
                id=f"a{i}",
                response_metadata={"model_name": "m", "finish_reason": "stop"},
                usage_metadata={"input_tokens": 120, "output_tokens": 40, "total_tokens": 160},
            )
        )
        i += 1
    return out[:size]


def chain(extra_noop: bool) -> StateGraph[Any, Any, Any, Any]:
    g = StateGraph(State)
    names = [f"n{i}" for i in range(4)]
    for i, name in enumerate(names):
        if i == 2:  # the node a gate guards: the same work in every form
            g.add_node(name, lambda s: {"n": s.get("n", 0) + 1, "flag": "ok"})
        else:
            g.add_node(name, lambda s: {"n": s.get("n", 0) + 1})
    order = list(names)
    if extra_noop:
        g.add_node("noop", lambda s: {})
        order.insert(3, "noop")
    g.add_edge(START, order[0])
    for a, b in itertools.pairwise(order):
        g.add_edge(a, b)
    g.add_edge(order[-1], END)
    return g


def trivial_check(claims: Any, evidence: Any) -> list[Finding]:
    return [Finding.ok("trivial")]


def trivial_gate() -> TrustGate:
    """What a user writes: a plain function verifier, no time limit asked for."""
    return TrustGate(
        "trivial",
        reads="flag",
        verifiers=[FunctionVerifier(trivial_check, name="trivial")],
        passthrough=["n"],
    )


# --- measuring ------------------------------------------------------------------------


def measure_sync(graphs: dict[str, Any], inputs: dict[str, Any]) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in graphs}
    for _ in range(ROUNDS):
        for name, g in graphs.items():
            inp = inputs[name]
            t0 = time.process_time()
            for _ in range(RUNS):
                g.invoke(inp)
            samples[name].append((time.process_time() - t0) / RUNS)
    return samples


async def measure_async(graphs: dict[str, Any], inputs: dict[str, Any]) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in graphs}
    for _ in range(ROUNDS):
        for name, g in graphs.items():
            inp = inputs[name]
            t0 = time.process_time()
            for _ in range(RUNS):
                await g.ainvoke(inp)
            samples[name].append((time.process_time() - t0) / RUNS)
    return samples


def report_graphs(mode: str, samples: dict[str, list[float]]) -> None:
    print(
        f"\n[{mode}] CPU per invoke, 4-node chain (best of {ROUNDS} interleaved rounds x "
        f"{RUNS} runs; ratio range over the rounds)"
    )
    print(f"  {'messages':>8s} {'base':>9s} {'no-op adds':>11s} {'gate adds':>10s}  ratio")
    for size in SIZES:
        base = samples[f"base/{size}"]
        noop = samples[f"noop/{size}"]
        gate = samples[f"gate/{size}"]
        b = min(base)
        n_add = min(noop) - b
        g_add = min(gate) - b
        per_round = [
            (gt - bt) / (nt - bt) for bt, nt, gt in zip(base, noop, gate, strict=True) if nt > bt
        ]
        lo, hi = (min(per_round), max(per_round)) if per_round else (float("nan"),) * 2
        ratio = g_add / n_add if n_add > 0 else float("nan")
        print(
            f"  {size:8d} {b * 1e6:7.0f}us {n_add * 1e6:9.0f}us {g_add * 1e6:8.0f}us  "
            f"{ratio:5.2f}x  (rounds {lo:.2f}-{hi:.2f}x, median "
            f"{statistics.median(per_round) if per_round else float('nan'):.2f}x)"
        )
    print("  goal: a crossing <= 2x a no-op node at every size")


def per_call(fn: Callable[[], Any], n: int, rounds: int) -> tuple[float, float, float]:
    """Best, median and worst CPU seconds per call over ``rounds`` rounds of ``n``."""
    out = []
    for _ in range(rounds):
        t0 = time.process_time()
        for _ in range(n):
            fn()
        out.append((time.process_time() - t0) / n)
    return min(out), statistics.median(out), max(out)


def threads_started(fn: Callable[[], Any], n: int) -> int:
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


# --- check level ----------------------------------------------------------------------


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


def draft(size: int) -> str:
    text = ""
    while len(text) < size:
        text += DRAFT_UNIT
    return text


VERDICTS = frozenset({"APPROVE", "REQUEST_CHANGES", "COMMENT"})


def verdict_check(claims: Any, evidence: Any) -> list[Finding]:
    """A small user check: the verdict is one of three, the summary names a file."""
    if claims.get("verdict") not in VERDICTS:
        return [Finding.failed("verdict", "unknown_verdict", "verdict not recognised")]
    if ".py" not in claims.get("summary", ""):
        return [Finding.failed("verdict", "no_file", "the summary names no file")]
    return [Finding.ok("verdict")]


def check_level() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        manifest = build_repo(root)
        workspace = Workspace(root)
        brief = Brief(citations=["ISO/IEC 27001:2022 clause 5.9"])
        evidence_set = EvidenceSet(urls=["https://example.com/policy"], prices=["USD 1200"])

        def scan(claims: Any, evidence: Any) -> list[Finding]:
            found = check_citations(claims, evidence.require("brief"))
            found += check_integrity(claims, evidence.require("evidence_set"))
            return found or [Finding.ok("draft_scan")]

        review = {"verdict": "APPROVE", "summary": "Validated in app.py, line 3."}
        small = draft(300)
        big = draft(2048)
        scan_ev = EvidenceSources(brief=brief, evidence_set=evidence_set)
        cases: list[tuple[str, Callable[[], Any], Callable[[], Any], int]] = []

        def case(label: str, verifier: Any, key: str, value: Any, ev: Any, n: int) -> None:
            gate = TrustGate(label, reads=FromKey(key), verifiers=[verifier], evidence=ev)
            resolved = gate.evidence.resolve(None, None)
            update = {key: value}
            assert gate.check(update, node="n").released, label
            bare = verifier.fn if isinstance(verifier, FunctionVerifier) else verifier.verify
            cases.append(
                (label, lambda: bare(value, resolved), lambda: gate.check(update, node="n"), n)
            )

        def fv(fn: Any, name: str) -> FunctionVerifier[Any]:
            return FunctionVerifier(fn, name=name)

        case("trivial function", fv(trivial_check, "trivial"), "flag", "ok", None, 300)
        case("verdict function", fv(verdict_check, "verdict"), "review", review, None, 300)
        case("draft scan 300 B", fv(scan, "draft_scan"), "draft", small, scan_ev, 100)
        case("draft scan 2 KB", fv(scan, "draft_scan"), "draft", big, scan_ev, 40)
        case(
            "citation replay x20",
            CitationReplay(timeout=None),
            "manifest",
            manifest,
            EvidenceSources(workspace=workspace),
            30,
        )

        print(
            "\n[check] TrustGate.check vs the bare verifier function (CPU per call, best "
            "of 10 rounds; median and worst beside)"
        )
        print(f"  {'verifier':22s} {'bare':>9s} {'check':>9s} {'overhead':>9s}  ratio")
        for label, bare_call, gated_call, n in cases:
            b, bm, bw = per_call(bare_call, n, 10)
            c, cm, cw = per_call(gated_call, n, 10)
            print(
                f"  {label:22s} {b * 1e6:7.1f}us {c * 1e6:7.1f}us {(c - b) * 1e6:7.1f}us  "
                f"{c / b:6.2f}x  (median {cm / bm:.2f}x, worst/worst {cw / bw:.2f}x)"
            )
        print("  goal: check <= 3x the bare verifier")

        gate = trivial_gate()
        print(
            f"\n[threads] started by 200 checks of a plain FunctionVerifier: "
            f"{threads_started(lambda: gate.check({'flag': 'ok'}, node='n'), 200)}"
        )


def main() -> None:
    graphs: dict[str, Any] = {}
    inputs: dict[str, Any] = {}
    for size in SIZES:
        inp = {"n": 0, "messages": history(size)}
        graphs[f"base/{size}"] = chain(False).compile()
        graphs[f"noop/{size}"] = chain(True).compile()
        graphs[f"gate/{size}"] = guard(chain(False), {"n2": trivial_gate()}).compile()
        for form in ("base", "noop", "gate"):
            inputs[f"{form}/{size}"] = inp
    for name, g in graphs.items():  # every gate passes: a halt would skew nothing silently
        out = g.invoke(inputs[name])
        assert out["n"] == 4 and len(out["messages"]) == int(name.split("/")[1]), (name, out)

    report_graphs("sync", measure_sync(graphs, inputs))
    report_graphs("async", asyncio.run(measure_async(graphs, inputs)))
    g = graphs["gate/10"]
    print(
        f"\n[threads] started by 200 guarded invokes (sync): "
        f"{threads_started(lambda: g.invoke(inputs['gate/10']), 200)}"
    )
    check_level()


if __name__ == "__main__":
    main()
