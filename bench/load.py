"""Load: 1,000 runs of a guarded graph over 4 worker processes sharing PostgreSQL.

Why: scale-out is many workers on one database. The guarantee under load is that
every run ends with exactly its own reports in the report log and in its
checkpoints (zero lost, zero duplicated); the cost is printed beside the same
graph unguarded, measured in the same run on the same server. Both sides use the
checkpointer ``trustgate.connect()`` returns (the saver wrapped by
``ReportingSaver``); the unguarded graph writes no reports, so the ratio is the
gate's cost plus the report log's.

Graphs (``--graph``):

* ``code-review`` (default): the code-review reference graph
  (``trustgate.pipelines.code_review``) with the honest scripted models on the
  bundled sample repository: git reads, two model calls, the citation-replay gate.
  Honest models, so both sides do the same rounds and the ratio is the gate's cost.
* ``minimal``: writer → publish with one trivial gate, a third of the runs lying
  (overridden). Nothing but LangGraph and the gate: the overhead's worst case.

The bench starts its own throwaway PostgreSQL (``tests/pg.py``), so it needs only
the PostgreSQL binaries on the machine. Target: guarded ≥ 0.7× unguarded runs/s
(a goal, not a gate: a miss is printed; a lost or duplicated report exits 1).

``--log-cost`` then measures what the report log itself costs: each worker runs
the guarded graph on ``ReportingSaver`` and on LangGraph's bare saver (no log) in
alternating batches, and the two rates are printed side by side.

Usage:
    .venv/bin/python bench/load.py [--graph code-review|minimal] [--runs 1000]
        [--workers 4] [--rounds 2] [--warmup 100] [--log-cost]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import secrets
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from _persist_support import HONEST, LIE, build_graph, cfg  # noqa: E402
from pg import temp_postgres  # noqa: E402

SPAWN = multiprocessing.get_context("spawn")
TARGET = 0.7

# pydantic values in the reference graph's state: LangGraph warns on every read
warnings.filterwarnings("ignore", message="Deserializing unregistered type")


class Scenario:
    """One graph, guarded or not, its inputs and what each guarded run must report."""

    name = "minimal"

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = dict(data)

    @classmethod
    def prepare(cls, workdir: Path) -> dict[str, Any]:
        return {}

    def graph(self, guarded: bool) -> Any:
        return build_graph(guarded=guarded)

    def inputs(self, i: int) -> dict[str, Any]:
        return {"text": LIE if i % 3 == 0 else HONEST, "log": []}

    def expected(self, i: int) -> list[str]:
        return ["modified" if i % 3 == 0 else "pass"]

    def finished(self, values: Mapping[str, Any]) -> bool:
        return values.get("verdict") == "published"


class CodeReview(Scenario):
    name = "code-review"

    @classmethod
    def prepare(cls, workdir: Path) -> dict[str, Any]:
        from trustgate.pipelines import code_review

        return code_review.sample_inputs(workdir / "repo")  # one repository, read-only

    def graph(self, guarded: bool) -> Any:
        from trustgate.graph import guard
        from trustgate.pipelines import code_review
        from trustgate.testing import code_review_models

        models = code_review_models("honest")
        base = code_review.builder(models["builder"], models["inspector"])
        return guard(base, {"inspector": code_review.inspector_gate()}) if guarded else base

    def inputs(self, i: int) -> dict[str, Any]:
        return dict(self.data)

    def expected(self, i: int) -> list[str]:
        return ["pass"]

    def finished(self, values: Mapping[str, Any]) -> bool:
        review = values.get("review") or {}
        return bool(review.get("verdict") == "APPROVE")


SCENARIOS: dict[str, type[Scenario]] = {"code-review": CodeReview, "minimal": Scenario}


def worker(
    url: str,
    scenario: str,
    data: dict[str, Any],
    guarded: bool,
    prefix: str,
    indices: list[int],
    barrier: Any,
) -> None:
    warnings.filterwarnings("ignore", message="Deserializing unregistered type")
    from trustgate.persistence import connect

    sc = SCENARIOS[scenario](data)
    with connect(url) as db:
        app = sc.graph(guarded).compile(checkpointer=db.checkpointer, store=db.store)
        app.invoke(sc.inputs(1), cfg(f"warm-{prefix}-{indices[0]}"))
        barrier.wait()
        for i in indices:
            app.invoke(sc.inputs(i), cfg(f"{prefix}-{i}"))
        barrier.wait()


def measure(
    url: str, scenario: str, data: dict[str, Any], guarded: bool, prefix: str, runs: int, n: int
) -> float:
    """Runs/s of ``runs`` runs over ``n`` worker processes (setup excluded)."""
    barrier = SPAWN.Barrier(n + 1)
    procs = [
        SPAWN.Process(
            target=worker,
            args=(url, scenario, data, guarded, prefix, list(range(w, runs, n)), barrier),
        )
        for w in range(n)
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


BATCH = 10


def log_cost_worker(
    url: str, scenario: str, data: dict[str, Any], indices: list[int], out: Any
) -> None:
    """The guarded graph on the wrapped saver and on the bare one, in alternating batches.

    Alternating small batches inside one process (ABBA order) lets the machine's
    drift hit both sides alike, which separate timed phases cannot promise on a
    shared machine.
    """
    warnings.filterwarnings("ignore", message="Deserializing unregistered type")
    from trustgate.persistence import connect

    sc = SCENARIOS[scenario](data)
    with connect(url) as db:
        apps = {
            "logged": sc.graph(True).compile(checkpointer=db.checkpointer, store=db.store),
            "bare": sc.graph(True).compile(checkpointer=db.checkpointer.saver, store=db.store),
        }
        for side, app in apps.items():
            app.invoke(sc.inputs(1), cfg(f"warm-cost-{side}-{indices[0]}"))
        spent = {"logged": 0.0, "bare": 0.0}
        done = {"logged": 0, "bare": 0}
        batches = [indices[i : i + BATCH] for i in range(0, len(indices), BATCH)]
        for b, batch in enumerate(batches):
            order = ("logged", "bare") if b % 2 == 0 else ("bare", "logged")
            for side in order:
                t0 = time.perf_counter()
                for i in batch:
                    apps[side].invoke(sc.inputs(i), cfg(f"cost-{side}-{i}"))
                spent[side] += time.perf_counter() - t0
                done[side] += len(batch)
        out.put((done, spent))


def measure_log_cost(
    url: str, scenario: str, data: dict[str, Any], runs: int, n: int
) -> tuple[float, float]:
    """Guarded runs/s with and without the report log (per worker, summed over workers)."""
    out = SPAWN.Queue()
    procs = [
        SPAWN.Process(
            target=log_cost_worker,
            args=(url, scenario, data, list(range(w, runs, n)), out),
        )
        for w in range(n)
    ]
    for p in procs:
        p.start()
    results = [out.get(timeout=3600) for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise SystemExit(f"worker exited with {p.exitcode}")
    rate = {
        side: sum(done[side] / spent[side] for done, spent in results)
        for side in ("logged", "bare")
    }
    return rate["logged"], rate["bare"]


def check(url: str, sc: Scenario, prefixes: list[str], runs: int) -> list[str]:
    """Every guarded run has exactly its own reports, in the log and in its state."""
    import psycopg

    from trustgate.persistence import connect

    problems: list[str] = []
    with psycopg.connect(url) as c:
        counts = dict(
            c.execute(
                "SELECT thread_id, count(*) FROM trustgate_reports "
                "WHERE thread_id NOT LIKE 'warm-%%' AND thread_id NOT LIKE 'cost-%%' "
                "GROUP BY thread_id"
            ).fetchall()
        )
    want = {f"{p}-{i}": len(sc.expected(i)) for p in prefixes for i in range(runs)}
    lost = [t for t in want if counts.get(t, 0) < want[t]]
    extra = sorted(counts.keys() - want.keys())
    duplicated = [t for t in want if counts.get(t, 0) > want[t]]
    if lost:
        problems.append(f"{len(lost)} run(s) missing logged reports, e.g. {sorted(lost)[:3]}")
    if extra:
        problems.append(f"reports for threads that had no gate: {extra[:3]}")
    if duplicated:
        problems.append(f"{len(duplicated)} run(s) with duplicated reports")
    import trustgate

    with connect(url) as db:
        app = sc.graph(True).compile(checkpointer=db.checkpointer)
        logged: dict[str | None, list[Any]] = {}
        for r in db.history():
            logged.setdefault(r.thread_id, []).append(r)
        for thread in sorted(want):
            state = app.get_state(cfg(thread))
            in_state = trustgate.reports(app, cfg(thread))
            mine = logged.get(thread, [])
            i = int(thread.rsplit("-", 1)[1])
            if [r.id for r in in_state] != [r.id for r in mine]:
                problems.append(f"{thread}: state and log disagree")
            elif [r.decision for r in mine] != sc.expected(i) or not sc.finished(state.values):
                problems.append(f"{thread}: decisions {[r.decision for r in mine]}")
    return problems


def db_work(sc: Scenario, guarded: bool) -> tuple[int, int]:
    """Checkpoints and pending writes one run stores (what the database has to absorb)."""
    from langgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    app = sc.graph(guarded).compile(checkpointer=saver)
    app.invoke(sc.inputs(0), cfg("count"))
    checkpoints = len(list(saver.list(cfg("count"))))
    writes = sum(len(w) for w in saver.writes.values())
    return checkpoints, writes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--graph", choices=sorted(SCENARIOS), default="code-review")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2, help="paired rounds; best of each")
    parser.add_argument("--warmup", type=int, default=100, help="unmeasured runs per side first")
    parser.add_argument(
        "--log-cost",
        action="store_true",
        help="also run the guarded graph on the bare saver (no report log) each round",
    )
    args = parser.parse_args()
    # the workers share one database, so one ledger key (they inherit the environment)
    if not (os.environ.get("TRUSTGATE_LEDGER_KEY") or os.environ.get("TRUSTGATE_LEDGER_KEY_FILE")):
        os.environ["TRUSTGATE_LEDGER_KEY"] = secrets.token_hex(32)

    kind = SCENARIOS[args.graph]
    with tempfile.TemporaryDirectory(prefix="trustgate-load-") as tmp, temp_postgres() as server:
        data = kind.prepare(Path(tmp))
        sc = kind(data)
        url = server.create_database("load")
        from trustgate.persistence import connect

        connect(url).close()  # tables once, before the workers start
        if args.warmup:  # a cold server (catalog, buffers, first pages) favours no side
            measure(url, args.graph, data, False, "warm-plain", args.warmup, args.workers)
            measure(url, args.graph, data, True, "warm-gated", args.warmup, args.workers)
        plain: list[float] = []
        gated: list[float] = []
        prefixes: list[str] = []
        for r in range(args.rounds):  # interleaved, so drift hits both sides alike
            plain.append(
                measure(url, args.graph, data, False, f"plain{r}", args.runs, args.workers)
            )
            gated.append(measure(url, args.graph, data, True, f"gated{r}", args.runs, args.workers))
            prefixes.append(f"gated{r}")

        log_cost = (
            measure_log_cost(url, args.graph, data, args.runs, args.workers)
            if args.log_cost
            else None
        )
        problems = check(url, sc, prefixes, args.runs)
        (pc, pw), (gc, gw) = db_work(sc, False), db_work(sc, True)

    best_plain, best_gated = max(plain), max(gated)
    ratio = best_gated / best_plain
    total = args.runs * args.rounds
    print(
        f"load ({args.graph}): {args.runs} runs x {args.rounds} rounds over "
        f"{args.workers} worker processes, one PostgreSQL"
    )
    print(
        f"  unguarded  {best_plain:8.1f} runs/s   (rounds: {', '.join(f'{x:.1f}' for x in plain)})"
    )
    print(
        f"  guarded    {best_gated:8.1f} runs/s   (rounds: {', '.join(f'{x:.1f}' for x in gated)})"
    )
    verdict = "met" if ratio >= TARGET else "MISSED"
    print(f"  ratio      {ratio:8.2f}x   (target >= {TARGET}x: {verdict})")
    if log_cost is not None:
        logged_rate, bare_rate = log_cost
        print(
            f"  log cost   {logged_rate / bare_rate:8.2f}x   (guarded runs/s with the report log "
            f"{logged_rate:.1f} / on the bare saver {bare_rate:.1f}, interleaved in batches "
            f"of {BATCH} within each worker)"
        )
    print(
        f"  per run    unguarded {pc} checkpoints + {pw} writes; guarded {gc} checkpoints + "
        f"{gw} writes"
    )
    if problems:
        print(f"  reports    FAILED: {len(problems)} problem(s)")
        for p in problems[:20]:
            print(f"    {p}")
        return 1
    print(f"  reports    {total} guarded runs, each with exactly its own reports (0 lost, 0 dup)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
