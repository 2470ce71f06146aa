"""Load: 1,000 runs of a guarded graph over 4 worker processes sharing PostgreSQL.

Why: scale-out is many workers on one database. The guarantee under load is that
every run ends with exactly its own reports in the report log and in its
checkpointed state (zero lost, zero duplicated); the cost is printed beside the
same graph unguarded, measured in the same run on the same server.

The bench starts its own throwaway PostgreSQL (``tests/pg.py``), so it needs only
the PostgreSQL binaries on the machine. Target: guarded ≥ 0.7× unguarded runs/s
(a goal, not a gate: a miss is printed, a lost or duplicated report exits 1).

Usage:
    .venv/bin/python bench/load.py [--runs 1000] [--workers 4] [--rounds 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from _persist_support import HONEST, LIE, build_graph, cfg  # noqa: E402
from pg import temp_postgres  # noqa: E402

SPAWN = multiprocessing.get_context("spawn")
TARGET = 0.7


def _text(i: int) -> str:
    return LIE if i % 3 == 0 else HONEST  # a third of the runs get overridden


def worker(url: str, guarded: bool, prefix: str, indices: list[int], barrier: Any) -> None:
    from trustgate.persistence import connect

    with connect(url) as db:
        app = build_graph(guarded=guarded).compile(checkpointer=db.checkpointer, store=db.store)
        app.invoke({"text": HONEST, "log": []}, cfg(f"warm-{prefix}-{indices[0]}"))
        barrier.wait()
        for i in indices:
            app.invoke({"text": _text(i), "log": []}, cfg(f"{prefix}-{i}"))
        barrier.wait()


def measure(url: str, guarded: bool, prefix: str, runs: int, workers: int) -> float:
    """Runs/s of ``runs`` runs over ``workers`` processes (setup excluded)."""
    barrier = SPAWN.Barrier(workers + 1)
    procs = [
        SPAWN.Process(
            target=worker, args=(url, guarded, prefix, list(range(w, runs, workers)), barrier)
        )
        for w in range(workers)
    ]
    for p in procs:
        p.start()
    barrier.wait()  # every worker connected, compiled and warmed up
    t0 = time.perf_counter()
    barrier.wait()  # every worker finished its runs
    elapsed = time.perf_counter() - t0
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise SystemExit(f"worker exited with {p.exitcode}")
    return runs / elapsed


def check(url: str, prefixes: list[str], runs: int) -> list[str]:
    """Every guarded run has exactly its own reports, in the log and in its state."""
    import psycopg

    from trustgate.persistence import connect

    problems: list[str] = []
    with psycopg.connect(url) as c:
        counts = dict(
            c.execute(
                "SELECT thread_id, count(*) FROM trustgate_reports "
                "WHERE thread_id NOT LIKE 'warm-%%' GROUP BY thread_id"
            ).fetchall()
        )
    expected = {f"{p}-{i}" for p in prefixes for i in range(runs)}
    lost = expected - counts.keys()
    extra = counts.keys() - expected
    duplicated = {t: n for t, n in counts.items() if n != 1}
    if lost:
        problems.append(f"{len(lost)} run(s) without a logged report, e.g. {sorted(lost)[:3]}")
    if extra:
        problems.append(f"reports for threads that had no gate: {sorted(extra)[:3]}")
    if duplicated:
        problems.append(f"{len(duplicated)} run(s) with duplicated reports")
    with connect(url) as db:
        app = build_graph().compile(checkpointer=db.checkpointer)
        logged = {r.thread_id: r for r in db.history()}
        for thread in sorted(expected):
            state = app.get_state(cfg(thread))
            in_state = state.values.get("trust_reports", [])
            report = logged.get(thread)
            i = int(thread.rsplit("-", 1)[1])
            want = "modified" if _text(i) == LIE else "pass"
            if report is None or [r.id for r in in_state] != [report.id]:
                problems.append(f"{thread}: state and log disagree")
            elif report.decision != want or state.values.get("verdict") != "published":
                problems.append(f"{thread}: decision {report.decision}, expected {want}")
    return problems


def db_work(guarded: bool) -> tuple[int, int]:
    """Checkpoints and pending writes one run stores (what the database has to absorb)."""
    from langgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    app = build_graph(guarded=guarded).compile(checkpointer=saver)
    app.invoke({"text": LIE, "log": []}, cfg("count"))
    checkpoints = len(list(saver.list(cfg("count"))))
    writes = sum(len(w) for w in saver.writes.values())
    return checkpoints, writes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2, help="paired rounds; best of each")
    parser.add_argument("--warmup", type=int, default=200, help="unmeasured runs per side first")
    args = parser.parse_args()

    with temp_postgres() as server:
        url = server.create_database("load")
        from trustgate.persistence import connect

        connect(url).close()  # tables once, before the workers start
        if args.warmup:  # a cold server (catalog, buffers, first pages) favours no side
            measure(url, False, "warm-plain", args.warmup, args.workers)
            measure(url, True, "warm-gated", args.warmup, args.workers)
        plain: list[float] = []
        gated: list[float] = []
        prefixes: list[str] = []
        for r in range(args.rounds):  # interleaved, so drift hits both sides alike
            plain.append(measure(url, False, f"plain{r}", args.runs, args.workers))
            gated.append(measure(url, True, f"gated{r}", args.runs, args.workers))
            prefixes.append(f"gated{r}")
        problems = check(url, prefixes, args.runs)

    best_plain, best_gated = max(plain), max(gated)
    ratio = best_gated / best_plain
    total = args.runs * args.rounds
    print(
        f"load: {args.runs} runs x {args.rounds} rounds over {args.workers} worker processes, "
        "one PostgreSQL"
    )
    print(
        f"  unguarded  {best_plain:8.1f} runs/s   (rounds: {', '.join(f'{x:.1f}' for x in plain)})"
    )
    print(
        f"  guarded    {best_gated:8.1f} runs/s   (rounds: {', '.join(f'{x:.1f}' for x in gated)})"
    )
    verdict = "met" if ratio >= TARGET else "MISSED"
    print(f"  ratio      {ratio:8.2f}x   (target >= {TARGET}x: {verdict})")
    (pc, pw), (gc, gw) = db_work(False), db_work(True)
    print(
        f"  per run    unguarded {pc} checkpoints + {pw} writes; guarded {gc} checkpoints + "
        f"{gw} writes (the gate is a real node: one more superstep, staged update)"
    )
    if problems:
        print(f"  reports    FAILED: {len(problems)} problem(s)")
        for p in problems[:20]:
            print(f"    {p}")
        return 1
    print(f"  reports    {total} guarded runs, each with exactly its one report (0 lost, 0 dup)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
