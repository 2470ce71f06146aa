"""What the caps of trustgate._limits cost at their edge, and what they refuse.

1. The largest changes manifest the caps allow (10,000 citations, about 8 MiB of JSON,
   100 files of 400 lines) read by the bounded loader, parsed and replayed against a
   workspace, beside a plain ``json.loads`` of the same text (the baseline, same run).
2. The manifest of the issue (10^6 citations) refused: as JSON text (what a reader or
   the CLI sees) and as already parsed objects (what a node may return).
3. JSON nested 100,000 deep refused.
4. check_citations and check_integrity on 1,000,000-character adversarial drafts (the
   draft cap), beside ``re.findall(r"\\w+")`` over the same text (a linear baseline).
5. A whole guarded Redact crossing (``trustgate.guard``, ``graph.invoke``; gate =
   DraftCheck + Redact) of 10 KB, 100 KB and 1 MB drafts from a stub model, where
   three sentences in four fail (an uncited cause, a hedge, an id the record does not
   have), on an in-memory checkpointer: time, peak memory (tracemalloc, and the peak
   RSS the call adds to its process), the report's JSON size and the bytes the
   checkpointer holds for the run (the report among them), beside a bare sentence split
   of the same text (``re.split``, the baseline). Each size runs in a fresh process.
   Linear means the figures per KB of draft stay flat from 10 KB to 1 MB: the ratios
   between sizes, per KB, are printed (1.00x is linear, 10x would be quadratic).

   ``--old PATH`` runs the crossing of a checkout of the code from before the crossing
   was made linear (``git worktree add /tmp/limits-old <commit>``) the same way, at
   10 KB and 100 KB only (its 1 MB crossing takes minutes; ``--old-sizes`` for others),
   beside the current code.
   ``--crossing-only`` skips sections 1 to 4.

Time is wall clock in sections 1 to 4 (median of a few runs), the process's CPU time in
section 5 (median, the range in brackets; wall clock beside it); memory is the
tracemalloc peak of the call. The machine is shared: compare the ratios, not the
absolute figures.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

# Only what section 5 needs at the top: its child processes may import another
# checkout's trustgate (--old), whose internal modules sections 1 to 4 may not find.
from trustgate import _limits
from trustgate.evidence.record import Record
from trustgate.graph import TrustReports

REPEATS = 3


def measure(fn: Callable[[], Any], repeats: int = REPEATS) -> tuple[float, float, Any]:
    """(median seconds, peak MiB of one traced run, result)."""
    times = []
    result = None
    for _ in range(repeats):
        gc.collect()
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), traced_peak(fn), result


def traced_peak(fn: Callable[[], Any]) -> float:
    """Peak MiB tracemalloc sees during one call of ``fn``."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def refused(fn: Callable[[], Any]) -> Callable[[], str]:
    from trustgate.errors import ClaimTooLarge

    def run() -> str:
        try:
            fn()
        except ClaimTooLarge as exc:
            return str(exc)
        return "NOT REFUSED"

    return run


def largest_manifest(root: Path) -> str:
    n_files, n_lines = 100, 400
    per_citation = _limits.MAX_CLAIM_BYTES // _limits.MAX_CITATIONS - 120
    files = []
    for i in range(n_files):
        lines = [
            f"v{i}_{n} = '" + ("x" * (per_citation - 20)) + f"{n:06d}'" for n in range(n_lines)
        ]
        (root / f"m{i:03d}.py").write_text("\n".join(lines) + "\n")
        files.append(lines)
    items = []
    for item in range(100):
        evidence = []
        for c in range(_limits.MAX_CITATIONS // 100):
            f = (item * 7 + c) % n_files
            line = (c * 13) % n_lines + 1
            evidence.append({"file": f"m{f:03d}.py", "line": line, "content": files[f][line - 1]})
        items.append({"item": f"item {item}", "status": "already_correct", "evidence": evidence})
    text = json.dumps(items)
    while len(text) > _limits.MAX_CLAIM_BYTES:  # trim to fit the cap exactly
        items[-1]["evidence"].pop()
        text = json.dumps(items)
    return text


# one unit of the crossing's draft: a cited description, an uncited cause, a cited
# hedge, a description citing an id the record lacks (each deletion its own gap)
CROSSING_UNIT = (
    "Checkout latency rose to 9.2 seconds at 14:02 [[1]]. "
    "The pool was exhausted because the deploy doubled concurrency. "
    "It was likely the cache [[2]]. "
    "The alert fired at 14:03 [[2, 77]].\n"
)
CROSSING_RECORD = Record.from_text("14:02 checkout p99 latency rose to 9.2s\n14:03 alert fired\n")


class RedactState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    record: Record
    trust_reports: TrustReports


def redact_app(draft: str) -> Any:
    """writer (a stub model returning ``draft``) guarded by DraftCheck + Redact."""
    import trustgate
    from trustgate import DraftCheck, EvidenceSources, FromState, LastAIText, Redact, TrustGate
    from trustgate.testing import lying_model

    model = lying_model(draft, repeat_last=True)

    def writer(state: RedactState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    g = StateGraph(RedactState)
    g.add_node("writer", writer)
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    gate = TrustGate(
        "postmortem",
        reads=LastAIText(),
        verifiers=[DraftCheck()],
        policy=Redact(),
        evidence=EvidenceSources(record=FromState("record")),
    )
    return trustgate.guard(g, {"writer": gate}).compile(checkpointer=InMemorySaver())


def stored_bytes(saver: InMemorySaver, thread: str) -> int:
    """Bytes the checkpointer holds for ``thread``: checkpoints, channel values, writes
    (the report is among them, written before the crossing releases)."""
    n = sum(len(c[1]) + len(m[1]) for c, m, _ in saver.storage[thread][""].values())
    n += sum(len(v[1]) for k, v in saver.blobs.items() if k[0] == thread)
    return n + sum(
        len(w[2][1]) for k, ws in saver.writes.items() if k[0] == thread for w in ws.values()
    )


def timed(
    fn: Callable[[], Any], repeats: int = REPEATS, collect: bool = True
) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of each of ``repeats`` calls of ``fn``; ``collect=False``: with
    the cyclic garbage collector off (what it costs). CPU time is the process's, every
    thread: what the machine's other work does not add to."""
    wall, cpu = [], []
    for _ in range(repeats):
        gc.collect()
        if not collect:
            gc.disable()
        try:
            t, c = time.perf_counter(), time.process_time()
            fn()
            cpu.append(time.process_time() - c)
            wall.append(time.perf_counter() - t)
        finally:
            gc.enable()
    return wall, cpu


def _status(field: str) -> int:
    """A field of /proc/self/status in bytes (VmRSS, VmHWM), 0 where there is none."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


def _reset_peak_rss() -> bool:
    """Set the process's peak RSS back to its current RSS (Linux, clear_refs 5)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def redact_crossing(size: int) -> dict[str, Any]:
    """One guarded Redact crossing of a ``size``-character draft, measured (in a child)."""
    from langchain_core.messages import HumanMessage

    # imports and first calls, outside the figures
    redact_app(CROSSING_UNIT * 4).invoke(
        {"messages": [], "record": CROSSING_RECORD}, {"configurable": {"thread_id": "warm"}}
    )
    draft = (CROSSING_UNIT * (size // len(CROSSING_UNIT) + 1))[:size]
    app = redact_app(draft)
    inputs = {"messages": [HumanMessage("draft the postmortem")], "record": CROSSING_RECORD}
    threads = (f"run-{n}" for n in itertools.count())

    def run() -> Any:  # each run on a thread of its own
        return app.invoke(inputs, {"configurable": {"thread_id": next(threads)}})

    gc.collect()
    rss = _status("VmRSS") if _reset_peak_rss() else 0
    out = run()  # the first call: the peak RSS it adds
    rss_peak = (_status("VmHWM") - rss) / 2**20 if rss else float("nan")
    (report,) = out["trust_reports"]
    text = out["messages"][-1].content
    assert report.decision == "modified" and report.released, report.decision
    assert "because" not in text and "likely" not in text and "77]]" not in text
    report_bytes = len(report.model_dump_json())
    stored = stored_bytes(app.checkpointer, "run-0")
    failed = sum(f.blocking for f in report.findings)
    del out, report, text
    wall, times = timed(run)
    _, nogc = timed(run, collect=False)
    peak = traced_peak(run)
    _, split = timed(lambda: re.split(r"(?<=[.!?])\s+", draft), repeats=5)
    return {
        "times": times,
        "wall": wall,
        "nogc": nogc,
        "split": split,
        "peak": peak,
        "rss": rss_peak,
        "report": report_bytes,
        "stored": stored,
        "failed": failed,
    }


def crossings(tree: Path, sizes: list[int]) -> dict[int, dict[str, Any]]:
    """``redact_crossing`` at each size, each in a fresh process importing ``tree``."""
    out = {}
    for size in sizes:
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--crossing", str(size)],
            env=dict(os.environ, PYTHONPATH=str(tree)),
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise SystemExit(f"the {size:,}-character crossing of {tree} failed:\n{proc.stderr}")
        out[size] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def spread(xs: list[float], scale: float = 1e3) -> str:
    """Median (min-max) of ``xs``, scaled (seconds to ms by default)."""
    return f"{statistics.median(xs) * scale:.0f} ({min(xs) * scale:.0f}-{max(xs) * scale:.0f})"


def print_crossings(label: str, rows: dict[int, dict[str, Any]]) -> None:
    print(f"   {label}")
    print(
        f"   {'draft':>9} {'failed':>7} {'CPU ms (range)':>18} {'wall ms':>8} {'split ms':>9} "
        f"{'ratio':>6} "
        f"{'no gc ms':>9} {'peak MiB':>9} {'RSS MiB':>8} {'KiB/KB':>7} {'report B':>11} "
        f"{'B/B':>5} {'stored B':>11} {'B/B':>5}"
    )
    for size, r in rows.items():
        t, b = statistics.median(r["times"]), statistics.median(r["split"])
        print(
            f"   {size:>9,} {r['failed']:>7,} {spread(r['times']):>18} "
            f"{statistics.median(r['wall']) * 1e3:8.0f} {b * 1e3:9.1f} "
            f"{t / b:5.0f}x {statistics.median(r['nogc']) * 1e3:9.0f} {r['peak']:9.1f} "
            f"{r['rss']:8.1f} {r['peak'] * 1024 / (size / 1000):7.1f} {r['report']:>11,} "
            f"{r['report'] / size:5.1f} {r['stored']:>11,} {r['stored'] / size:5.1f}"
        )
    sizes = list(rows)
    for lo, hi in itertools.pairwise(sizes):
        a, z, k = rows[lo], rows[hi], hi / lo

        def per_kb(name: str, a: dict[str, Any] = a, z: dict[str, Any] = z, k: float = k) -> str:
            x, y = z[name], a[name]
            if isinstance(x, list):  # times: the median, and the range of the ratio
                m = statistics.median(x) / statistics.median(y) / k
                return f"{m:.2f}x ({min(x) / max(y) / k:.2f}-{max(x) / min(y) / k:.2f})"
            return f"{x / y / k:.2f}x"

        print(
            f"   {hi:,} against {lo:,}, per KB of draft (1.00x linear, {k:.0f}x quadratic): "
            f"CPU time {per_kb('times')}, without the cyclic collector {per_kb('nogc')}, "
            f"the split {per_kb('split')}; memory {per_kb('peak')}, RSS {per_kb('rss')}, "
            f"report {per_kb('report')}, stored {per_kb('stored')}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--old", type=Path, help="a checkout to run section 5 against too")
    parser.add_argument(
        "--old-sizes",
        default="10000,100000",
        help="draft sizes for --old, comma-separated (default 10000,100000)",
    )
    parser.add_argument("--crossing-only", action="store_true", help="section 5 only")
    parser.add_argument("--crossing", type=int, help=argparse.SUPPRESS)  # a child's size
    args = parser.parse_args()
    if args.crossing:
        print(json.dumps(redact_crossing(args.crossing)))
        return
    if args.old and not (args.old / "trustgate" / "__init__.py").exists():
        parser.error(f"--old {args.old}: no trustgate package there")
    print(
        f"python {sys.version.split()[0]}; caps: claim {_limits.MAX_CLAIM_BYTES:,} B, "
        f"depth {_limits.MAX_JSON_DEPTH}, citations {_limits.MAX_CITATIONS:,}, "
        f"draft {_limits.MAX_DRAFT_CHARS:,} chars"
    )
    if not args.crossing_only:
        limits()
    root = Path(__file__).resolve().parent.parent
    sizes = [10_000, 100_000, _limits.MAX_DRAFT_CHARS]
    print(
        f"\n5. a guarded Redact crossing (DraftCheck + Redact), each size in a fresh process; "
        f"CPU time of the process: median of {REPEATS} (range)"
    )
    new = crossings(root, sizes)
    print_crossings(f"this tree ({root})", new)
    if args.old:
        old = crossings(args.old.resolve(), [int(x) for x in args.old_sizes.split(",")])
        print_crossings(f"--old {args.old}", old)
        for size in sorted(old.keys() & new.keys()):
            n, o = new[size], old[size]
            print(
                f"   {size:,}: this tree against --old: CPU time "
                f"{statistics.median(n['times']) / statistics.median(o['times']):.2f}x, "
                f"memory {n['peak'] / o['peak']:.2f}x, report {n['report'] / o['report']:.2f}x, "
                f"stored {n['stored'] / o['stored']:.2f}x"
            )


def limits() -> None:
    """Sections 1 to 4."""
    from trustgate._claims import parse_manifest
    from trustgate.evidence.brief import Brief, EvidenceSet
    from trustgate.evidence.workspace import _RACY_NS, Workspace
    from trustgate.verifiers.contracts.citations import check_citations
    from trustgate.verifiers.files.citations import replay_manifest
    from trustgate.verifiers.integrity.check import check_integrity

    tmp = Path(tempfile.mkdtemp(prefix="tg-bench-limits-"))
    try:
        text = largest_manifest(tmp)
        n = sum(len(i["evidence"]) for i in json.loads(text))
        time.sleep(_RACY_NS / 1e9 + 0.1)  # let the files settle (see Workspace's cache)
        base_t, base_m, _ = measure(lambda: json.loads(text))

        def full() -> Any:
            return replay_manifest(_limits.loads_json(text, "manifest"), Workspace(tmp))

        full_t, full_m, findings = measure(full)
        assert len(findings) == n and all(f.passed for f in findings), findings[:3]
        print("\n1. largest manifest the caps allow")
        print(f"   {n:,} citations, {len(text):,} bytes of JSON, 100 files x 400 lines")
        print(f"   json.loads alone (baseline)    : {base_t * 1e3:8.1f} ms  peak {base_m:7.1f} MiB")
        print(f"   loads_json + parse + replay    : {full_t * 1e3:8.1f} ms  peak {full_m:7.1f} MiB")
        print(
            f"   ratio to the baseline          : {full_t / base_t:8.1f}x time, "
            f"{full_m / base_m:.1f}x memory"
        )

        cite = {"file": "a.py", "line": 1, "content": "import os"}
        million = [{"item": "x", "status": "already_correct", "evidence": [cite] * 10**6}]
        million_text = json.dumps(million)
        t_text, m_text, msg = measure(refused(lambda: parse_manifest(million_text)))
        t_obj, m_obj, msg2 = measure(refused(lambda: parse_manifest(million)))
        print("\n2. the manifest of the issue: 10^6 citations")
        print(
            f"   as {len(million_text):,} bytes of JSON : {t_text * 1e3:8.2f} ms  "
            f"peak {m_text:7.2f} MiB  -> {msg}"
        )
        print(
            f"   as parsed objects           : {t_obj * 1e3:8.2f} ms  peak {m_obj:7.2f} MiB"
            f"  -> {msg2}"
        )

        deep = "[" * 100_000 + "]" * 100_000
        t_deep, m_deep, msg3 = measure(refused(lambda: _limits.loads_json(deep)))
        print("\n3. JSON nested 100,000 deep")
        print(f"   refused in {t_deep * 1e3:.2f} ms, peak {m_deep:.2f} MiB -> {msg3}")

        brief = Brief(
            citations=[
                {"id": "ISO/IEC 27001:2022 A.5.9", "text": "Inventory of information assets"},
                "GDPR Article 32(1)",
                "clause 9.2",
            ]
        )
        evidence = EvidenceSet(urls=["https://example.com/a"], prices=["$5"])
        size = _limits.MAX_DRAFT_CHARS
        units = {
            "prose": "The register is kept current by the asset owner each quarter. ",
            "annex list": "A.5.9, ",
            "clause lists": "clauses 9.2 and 9.3 and ",
            "quoted citations": 'A.5.9 "Inventory of information x" ',
            "open quotes": "A.5.9 “ A.5.9 ‘ A.5.9 « ",
            "digit groups": "1 000 ",
            "dollars": "$1,000,000 ",
            "emails": "a@b.c ",
            "fullwidth prices": "\uff04\uff11 ",
            "brackets (capped)": "[" * 19_000 + " word" * 196_000,
        }
        print(f"\n4. {size:,}-character adversarial drafts (median of {REPEATS})")
        print(
            f"   {'draft':<20} {'words baseline':>14} {'check_citations':>16} "
            f"{'check_integrity':>16}"
        )
        for name, unit in units.items():
            draft = (unit * (size // len(unit) + 1))[:size]
            b, _, _ = measure(lambda d=draft: re.findall(r"\w+", d))
            c, cm, _ = measure(lambda d=draft: check_citations(d, brief))
            i, im, _ = measure(lambda d=draft: check_integrity(d, evidence))
            print(
                f"   {name:<20} {b * 1e3:11.0f} ms {c:9.2f} s {c / b:4.0f}x "
                f"{i:9.2f} s {i / b:4.0f}x   peak {max(cm, im):6.1f} MiB"
            )
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
