"""Load: guarded against unguarded runs/s, worker processes sharing one database.

Why: scale-out is many workers on one database. The guarantee under load is that
every crossing ends with exactly one report row in the report log and its reports in
its checkpoints (zero lost, zero duplicated), and that each report is durable before
its crossing releases: the gate writes it beside its task through the checkpointer
before the next node acts on the release, whatever the run's durability. The cost is
printed beside the same graph unguarded, measured in the same session on the same
database: per backend (a SQLite file, and a real PostgreSQL server) and per side

* ``unguarded``: the graph without gates, the run's default durability (``async``);
* ``unguarded sync``: the same with ``durability="sync"`` (every checkpoint written
  before the next step starts: what "durable before acting" costs LangGraph alone);
* ``guarded``: the graph with its gates, the default durability.

Both sides use the checkpointer ``trustgate.connect()`` returns (the saver wrapped by
``ReportingSaver``); the unguarded graph writes no reports, so the ratio is the gate's
cost plus the report log's plus the report written before release.

How: one pool of worker processes per backend and tree, each worker with every side
compiled once; the parent tells all the workers of a pool to run a batch of one side
at once and times it from "go" to the last "done". Rounds go through every pool and
side in turn, the order rotated each round, in small batches (many short rounds), so
a machine's drift hits every side alike; a ratio is taken between the sides of the same
round, and its median and range over the rounds are printed. Each side is measured
twice: runs/s (wall clock: what a worker waits on, a commit's sync included) and the
workers' CPU ms per run (what other work on a shared machine does not add to; the
database server's own CPU is not in it).

``--old PATH`` measures a checkout of the code from before reports were recorded
before release (``git worktree add /tmp/bench-old 1ae9833``) in the same session and
on the same server: its workers import trustgate and the graph helpers of
``tests/_persist_support.py`` from PATH (``PYTHONPATH``), on databases of their own.

Then, outside the timed batches:

* the report log is counted against the crossings (rows per thread, straight from the
  table) and every guarded run's reports in its state are compared with its rows;
* a probe (the minimal graph, default durability, one process per backend and tree):
  the node after the gate counts its thread's rows in the report log when it runs,
  through a connection of its own. Recorded before release means it always finds one.

Graphs (``--graph``):

* ``code-review`` (default): the reference pipeline (builder → inspector → record)
  with its model stubbed, so the workload is the graph and the gates, not an API.
  Every run is honest, as production mostly is, so every report passes.
* ``minimal``: writer → publish with one trivial gate, a third of the runs lying
  (overridden). Nothing but LangGraph and the gate: the overhead's worst case.

PostgreSQL: ``--url`` names a server (the new tree only), else the bench starts its own
throwaway one (``tests/pg.py``: initdb into a temporary directory, run as an
unprivileged user when root; needs the PostgreSQL binaries) with PostgreSQL's own
durability settings (``--pg-no-sync``: the tests' fsync=off instead). If it cannot,
it prints why and goes on with SQLite. Target: guarded ≥ 0.7× unguarded runs/s (a
goal, not a gate: a miss is printed; a lost or duplicated report, or a probe of the
new tree that finds no report, exits 1).

The defaults are sized for a shared 2-core machine (2 workers, a few minutes); raise
``--workers``, ``--runs`` and ``--rounds`` on a bigger one.

``--log-cost`` then measures what the report log itself costs (new tree only): each
worker runs the guarded graph on ``ReportingSaver`` and on LangGraph's bare saver (no
log) in alternating batches, and the two rates are printed side by side.

``--profile DIR`` then samples a pool running only the guarded side with py-spy (raw
stacks in DIR) and prints the functions it spent most time in.

Usage:
    .venv/bin/python bench/load.py [--graph code-review|minimal] [--runs N]
        [--workers 2] [--rounds 12] [--warmup 3] [--backend both|sqlite|postgres]
        [--url postgresql://...] [--pg-no-sync] [--old /tmp/bench-old] [--log-cost]
        [--profile DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.7
SIDES = ("unguarded", "unguarded sync", "guarded")
RUNS = {"code-review": 24, "minimal": 100}  # per side and round, by default
PROBES = 40

# pydantic values in the reference graph's state: LangGraph warns on every read
warnings.filterwarnings("ignore", message="Deserializing unregistered type")


def _support() -> ModuleType:
    """tests/_persist_support.py of the tree this process measures (on sys.path)."""
    import _persist_support

    return _persist_support


class Scenario:
    """One graph, guarded or not, its inputs and what each guarded run must report."""

    name = "minimal"

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = dict(data)

    @classmethod
    def prepare(cls, workdir: Path) -> dict[str, Any]:
        return {}

    def graph(self, guarded: bool) -> Any:
        return _support().build_graph(guarded=guarded)

    def inputs(self, i: int) -> dict[str, Any]:
        s = _support()
        return {"text": s.LIE if i % 3 == 0 else s.HONEST, "log": []}

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


def cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def _tag(side: str) -> str:
    return side.replace(" ", "_")


# --- the worker processes ------------------------------------------------------------
#
# Each worker is a fresh interpreter (``load.py --worker SPEC``) started with the
# PYTHONPATH of the tree it measures, so the old and the new code are measured in one
# session. A pool worker connects, compiles every side, warms each up, says "ready"
# and then runs one batch per line it reads ({"side", "prefix", "indices"}), saying
# "done" after each; the other roles do one thing and say "done" with their result.


def _trustgate_file() -> str:
    import trustgate

    return str(trustgate.__file__)


def _run_pool(spec: dict[str, Any]) -> None:
    from trustgate.persistence import connect

    sc = SCENARIOS[spec["scenario"]](spec["data"])
    with connect(spec["url"]) as db:
        apps = {}
        for side in spec["sides"]:
            app = sc.graph(side == "guarded").compile(checkpointer=db.checkpointer, store=db.store)
            apps[side] = (app, {"durability": "sync"} if side == "unguarded sync" else {})
        for side, (app, kw) in apps.items():
            for k in range(spec["warm"]):
                app.invoke(sc.inputs(k), cfg(f"warm-{_tag(side)}-{spec['worker']}-{k}"), **kw)
        print("ready " + json.dumps({"trustgate": _trustgate_file()}), flush=True)
        for line in sys.stdin:
            batch = json.loads(line)
            app, kw = apps[batch["side"]]
            cpu = time.process_time()
            for i in batch["indices"]:
                app.invoke(sc.inputs(i), cfg(f"{batch['prefix']}-{i}"), **kw)
            print("done " + json.dumps({"cpu": time.process_time() - cpu}), flush=True)


BATCH = 10


def _run_log_cost(spec: dict[str, Any]) -> None:
    """The guarded graph on the wrapped saver and on the bare one, in alternating batches.

    Alternating small batches inside one process (ABBA order) lets the machine's
    drift hit both sides alike, which separate timed phases cannot promise on a
    shared machine.
    """
    from trustgate.persistence import connect

    sc = SCENARIOS[spec["scenario"]](spec["data"])
    indices = spec["indices"]
    with connect(spec["url"]) as db:
        apps = {
            "logged": sc.graph(True).compile(checkpointer=db.checkpointer, store=db.store),
            "bare": sc.graph(True).compile(checkpointer=db.checkpointer.saver, store=db.store),
        }
        for side, app in apps.items():
            app.invoke(sc.inputs(1), cfg(f"warm-cost-{side}-{indices[0]}"))
        print("ready " + json.dumps({"trustgate": _trustgate_file()}), flush=True)
        sys.stdin.readline()
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
    print("done " + json.dumps({"done": done, "spent": spent}), flush=True)


def _connect_raw(url: str) -> Any:
    """A plain connection to the database, beside trustgate's own (autocommit)."""
    if url.startswith("postgresql"):
        import psycopg

        return psycopg.connect(url, autocommit=True)
    # the probe asks from whichever thread LangGraph runs its node in
    return sqlite3.connect(url, timeout=30, isolation_level=None, check_same_thread=False)


def _rows(url: str) -> Counter[str]:
    """Report-log rows per thread, read straight from the table."""
    with contextlib.closing(_connect_raw(url)) as c:
        found = c.execute(
            "SELECT thread_id, count(*) FROM trustgate_reports GROUP BY thread_id"
        ).fetchall()
    return Counter({str(t): int(n) for t, n in found})


def _run_check(spec: dict[str, Any]) -> None:
    """Every guarded run has exactly its own reports, in the log and in its state."""
    import trustgate
    from trustgate.persistence import connect

    sc = SCENARIOS[spec["scenario"]](spec["data"])
    counts = _rows(spec["url"])
    want = {f"{p}-{i}": len(sc.expected(i)) for p in spec["gated"] for i in range(spec["runs"])}
    plain = {f"{p}-{i}" for p in spec["plain"] for i in range(spec["runs"])}
    measured = {t: n for t, n in counts.items() if not t.startswith(("warm", "cost-", "probe-"))}
    problems: list[str] = []
    lost = [t for t in want if counts.get(t, 0) < want[t]]
    duplicated = [t for t in want if counts.get(t, 0) > want[t]]
    extra = sorted(set(measured) - want.keys())
    if lost:
        problems.append(f"{len(lost)} run(s) missing logged reports, e.g. {sorted(lost)[:3]}")
    if duplicated:
        problems.append(f"{len(duplicated)} run(s) with duplicated reports")
    if extra:
        problems.append(f"reports for threads that had no gate: {extra[:3]}")
    with connect(spec["url"]) as db:
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
    result = {
        "crossings": sum(want.values()),
        "rows": sum(counts.get(t, 0) for t in want),
        "lost": sum(max(0, want[t] - counts.get(t, 0)) for t in want),
        "duplicated": sum(max(0, counts.get(t, 0) - want[t]) for t in want),
        "unguarded_rows": sum(counts.get(t, 0) for t in plain),
        "problems": problems,
    }
    print("done " + json.dumps(result), flush=True)


def _run_probe(spec: dict[str, Any]) -> None:
    """What the node after the gate finds in the report log when it runs.

    The minimal graph's shape (writer, its gate, publish), built here because its
    publish node looks: it counts its own thread's rows through a connection of its own,
    so what it sees is what another process (an auditor, a crash recovery) would see.
    """
    from langgraph.graph import END, START, StateGraph

    from trustgate import Finding, FunctionVerifier, Override, TrustGate
    from trustgate.graph import guard
    from trustgate.persistence import connect

    s = _support()
    seen: list[int] = []
    thread = ""
    with contextlib.closing(_connect_raw(spec["url"])) as raw:
        mark = "%s" if spec["url"].startswith("postgresql") else "?"
        query = f"SELECT count(*) FROM trustgate_reports WHERE thread_id = {mark}"

        def writer(state: Any) -> dict[str, Any]:
            return {"text": state["text"], "log": ["writer"]}

        def publish(state: Any) -> dict[str, Any]:
            seen.append(int(raw.execute(query, (thread,)).fetchone()[0]))
            return {"verdict": "published", "log": ["publish"]}

        def no_lies(claims: Any, evidence: Any) -> list[Any]:
            if str(claims).startswith("LIE"):
                return [Finding.failed("no_lies", "invented", "the claim is not supported")]
            return [Finding.ok("no_lies")]

        g = StateGraph(s.State)
        g.add_node("writer", writer)
        g.add_node("publish", publish)
        g.add_edge(START, "writer")
        g.add_edge("writer", "publish")
        g.add_edge("publish", END)
        gate = TrustGate(
            "checker",
            reads="text",
            verifiers=[FunctionVerifier(no_lies, name="no_lies")],
            policy=Override("text", "[removed]"),
            passthrough=["log"],
        )
        with connect(spec["url"]) as db:
            app = guard(g, {"writer": gate}).compile(checkpointer=db.checkpointer)
            for i in range(spec["runs"]):  # one run at a time: publish reads ``thread``
                thread = f"probe-{i}"
                app.invoke({"text": s.LIE if i % 3 == 0 else s.HONEST, "log": []}, cfg(thread))
    final = _rows(spec["url"])
    after = sum(final.get(f"probe-{i}", 0) for i in range(spec["runs"]))
    result = {"runs": spec["runs"], "found": sum(n > 0 for n in seen), "rows_after": after}
    print("done " + json.dumps(result), flush=True)


def _run_db_work(spec: dict[str, Any]) -> None:
    """Checkpoints and pending writes one run stores (what the database has to absorb)."""
    from langgraph.checkpoint.memory import InMemorySaver

    sc = SCENARIOS[spec["scenario"]](spec["data"])
    out = {}
    for guarded in (False, True):
        saver = InMemorySaver()
        app = sc.graph(guarded).compile(checkpointer=saver)
        app.invoke(sc.inputs(0), cfg("count"))
        checkpoints = len(list(saver.list(cfg("count"))))
        writes = sum(len(w) for w in saver.writes.values())
        out["guarded" if guarded else "unguarded"] = [checkpoints, writes]
    print("done " + json.dumps(out), flush=True)


ROLES = {
    "pool": _run_pool,
    "cost": _run_log_cost,
    "check": _run_check,
    "probe": _run_probe,
    "work": _run_db_work,
}


# --- the parent --------------------------------------------------------------------


def _spawn(tree: Path, spec: dict[str, Any], profile: Path | None = None) -> Any:
    env = dict(os.environ, PYTHONPATH=str(tree))
    spec = {**spec, "tree": str(tree)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)]
    if profile is not None:
        spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        cmd = [spy, "record", "-r", "50", "-f", "raw", "-o", str(profile), "--", *cmd]
    return subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def _lines(procs: Sequence[Any]) -> list[str]:
    """The next line of every worker (a worker that dies instead ends the bench)."""
    out = []
    for p in procs:
        line = p.stdout.readline()
        while line and not line.startswith(("ready", "done")):  # py-spy's own chatter
            line = p.stdout.readline()
        if not line:
            p.wait()
            raise SystemExit(f"a worker exited with {p.returncode}")
        out.append(line.strip())
    return out


def _ready(procs: Sequence[Any], tree: Path) -> None:
    """Every worker is up, and imported trustgate from the tree it measures."""
    for line in _lines(procs):
        where = Path(json.loads(line.split(" ", 1)[1])["trustgate"]).resolve()
        if not where.is_relative_to(tree):
            raise SystemExit(f"a worker for {tree} imported trustgate from {where}")


def _finish(procs: Sequence[Any]) -> None:
    for p in procs:
        p.stdin.close()
        p.stdout.read()  # to the end: py-spy says where it wrote once its worker exits
        p.stdout.close()
        if p.wait() != 0:
            raise SystemExit(f"a worker exited with {p.returncode}")


def _go(procs: Sequence[Any], lines: Sequence[str]) -> tuple[float, list[Any]]:
    """Seconds from telling every worker its line to the last worker's "done", and what
    each worker said with its "done"."""
    t0 = time.perf_counter()
    for p, line in zip(procs, lines, strict=True):
        p.stdin.write(line + "\n")
        p.stdin.flush()
    said = _lines(procs)
    return time.perf_counter() - t0, [json.loads(x.split(" ", 1)[1]) for x in said]


class Pool:
    """``workers`` processes of one tree on one database, every side compiled in each."""

    def __init__(
        self,
        args: argparse.Namespace,
        data: dict[str, Any],
        tree: Path,
        url: str,
        sides: Sequence[str],
        profile: Path | None = None,
    ) -> None:
        self.tree, self.sides, self.n = tree, tuple(sides), args.workers
        self.profiles = [] if profile is None else [profile / f"w{w}.txt" for w in range(self.n)]
        self.procs = [
            _spawn(
                tree,
                {
                    "role": "pool",
                    "url": url,
                    "scenario": args.graph,
                    "data": data,
                    "sides": self.sides,
                    "warm": args.warmup,
                    "worker": w,
                },
                self.profiles[w] if self.profiles else None,
            )
            for w in range(self.n)
        ]

    def ready(self) -> None:
        _ready(self.procs, self.tree)

    def rate(self, side: str, prefix: str, runs: int) -> tuple[float, float]:
        """Runs/s of ``runs`` runs of ``side``, split over the pool's workers, and the
        workers' CPU ms per run (what the machine's other work does not add to; the
        database server's own CPU is not in it)."""
        lines = [
            json.dumps({"side": side, "prefix": prefix, "indices": list(range(w, runs, self.n))})
            for w in range(self.n)
        ]
        elapsed, said = _go(self.procs, lines)
        return runs / elapsed, sum(x["cpu"] for x in said) / runs * 1e3

    def close(self) -> None:
        _finish(self.procs)


def log_cost(
    args: argparse.Namespace, data: dict[str, Any], url: str, runs: int
) -> tuple[float, float]:
    """Guarded runs/s with the report log and on the bare saver, summed over workers."""
    procs = [
        _spawn(
            ROOT,
            {
                "role": "cost",
                "url": url,
                "scenario": args.graph,
                "data": data,
                "indices": list(range(w, runs, args.workers)),
            },
        )
        for w in range(args.workers)
    ]
    _ready(procs, ROOT)
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    results = [json.loads(s.split(" ", 1)[1]) for s in _lines(procs)]
    _finish(procs)
    logged, bare = (sum(x["done"][k] / x["spent"][k] for x in results) for k in ("logged", "bare"))
    return logged, bare


def once(tree: Path, spec: dict[str, Any]) -> Any:
    (p,) = [_spawn(tree, spec)]
    (line,) = _lines([p])
    _finish([p])
    return json.loads(line.split(" ", 1)[1])


@contextlib.contextmanager
def postgres(args: argparse.Namespace) -> Iterator[Any]:
    """A way to make PostgreSQL databases, or the reason there is none."""
    if args.backend == "sqlite":
        yield "not asked for (--backend sqlite)"
        return
    if args.url:
        yield lambda name: args.url  # one server given (the new tree only, see --url)
        return
    try:
        from pg import PgUnavailable, temp_postgres
    except ImportError as exc:  # psycopg missing: the postgres extra is not installed
        yield f"cannot import the PostgreSQL helpers: {exc}"
        return
    try:
        with temp_postgres(durable=not args.pg_no_sync) as server:
            yield server.create_database
    except PgUnavailable as exc:
        yield f"could not start a throwaway PostgreSQL: {exc}"


def spread(xs: Sequence[float], fmt: str = "{:.2f}") -> str:
    """Median and range of a figure over the rounds."""
    med = fmt.format(statistics.median(xs))
    return f"{med} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--graph", choices=sorted(SCENARIOS), default="code-review")
    parser.add_argument("--runs", type=int, help=f"per side and round (default {RUNS})")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=12, help="interleaved rounds")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured runs per side, worker")
    parser.add_argument("--backend", choices=("both", "sqlite", "postgres"), default="both")
    parser.add_argument("--url", help="a PostgreSQL database to use instead of a throwaway one")
    parser.add_argument(
        "--pg-no-sync", action="store_true", help="the throwaway server without fsync (the tests')"
    )
    parser.add_argument("--old", type=Path, help="a checkout of the code to compare against")
    parser.add_argument("--log-cost", action="store_true", help="also measure the report log")
    parser.add_argument("--profile", type=Path, help="py-spy a guarded pool into DIR")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        spec = json.loads(args.worker)
        sys.path.insert(0, str(Path(spec["tree"]) / "tests"))
        ROLES[spec["role"]](spec)
        return 0
    sys.path.insert(0, str(ROOT / "tests"))
    runs = args.runs or RUNS[args.graph]
    # the workers share one database, so one ledger key (they inherit the environment)
    if not (os.environ.get("TRUSTGATE_LEDGER_KEY") or os.environ.get("TRUSTGATE_LEDGER_KEY_FILE")):
        os.environ["TRUSTGATE_LEDGER_KEY"] = secrets.token_hex(32)
    if args.url and args.old:
        parser.error("--url with --old: the old and the new tree need a database each")
    trees = {"new": ROOT}
    if args.old:
        if not (args.old / "trustgate" / "__init__.py").exists():
            parser.error(f"--old {args.old}: no trustgate package there")
        trees["old"] = args.old.resolve()
    started = time.perf_counter()

    with tempfile.TemporaryDirectory(prefix="trustgate-load-") as tmp, postgres(args) as pg:
        data = SCENARIOS[args.graph].prepare(Path(tmp))
        urls: dict[tuple[str, str], str] = {}
        notes: list[str] = []
        if args.backend in ("both", "sqlite"):
            for t in trees:
                urls[("sqlite", t)] = str(Path(tmp) / f"load-{t}.db")
        if callable(pg):
            for t in trees:
                urls[("postgres", t)] = pg(f"load_{t}")
            if not args.url:
                sync = "fsync=off, as the tests" if args.pg_no_sync else "fsync on, its defaults"
                notes.append(f"PostgreSQL: a throwaway server ({sync})")
        elif args.backend != "sqlite":
            notes.append(f"PostgreSQL not measured: {pg}")
            print(notes[-1], flush=True)
        for (_b, t), url in urls.items():  # tables once, before the workers start
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    f"import trustgate.persistence as p; p.connect({url!r}).close()",
                ],
                env=dict(os.environ, PYTHONPATH=str(trees[t])),
                check=True,
            )
        sides = {t: [s for s in SIDES if not (t == "old" and s == "unguarded sync")] for t in trees}
        pools = {
            key: Pool(args, data, trees[key[1]], url, sides[key[1]]) for key, url in urls.items()
        }
        for pool in pools.values():
            pool.ready()
        cells = [(key, side) for key in pools for side in pools[key].sides]
        rates: dict[tuple[str, str, str], list[float]] = {}
        cpus: dict[tuple[str, str, str], list[float]] = {}
        for r in range(args.rounds):  # every cell once a round, the order rotated
            k = (r * len(cells)) // max(args.rounds, 1)
            for (b, t), side in cells[k:] + cells[:k]:
                rate, cpu = pools[(b, t)].rate(side, f"{_tag(side)}{r}", runs)
                rates.setdefault((b, t, side), []).append(rate)
                cpus.setdefault((b, t, side), []).append(cpu)
            print(f"  round {r + 1} of {args.rounds} done", file=sys.stderr, flush=True)
        for pool in pools.values():
            pool.close()
        timed = time.perf_counter() - started
        checks = {
            key: once(
                trees[key[1]],
                {
                    "role": "check",
                    "url": url,
                    "scenario": args.graph,
                    "data": data,
                    "gated": [f"guarded{r}" for r in range(args.rounds)],
                    "plain": [f"{_tag(s)}{r}" for s in SIDES[:2] for r in range(args.rounds)],
                    "runs": runs,
                },
            )
            for key, url in urls.items()
        }
        probes = {
            key: once(trees[key[1]], {"role": "probe", "url": url, "runs": PROBES})
            for key, url in urls.items()
        }
        cost = {
            b: log_cost(args, data, url, runs)
            for (b, t), url in urls.items()
            if args.log_cost and t == "new"
        }
        work = once(ROOT, {"role": "work", "scenario": args.graph, "data": data})
        profiled: list[Path] = []
        if args.profile:
            for (b, t), url in urls.items():
                if t == "new":
                    where = args.profile / b
                    where.mkdir(parents=True, exist_ok=True)
                    pool = Pool(args, data, ROOT, url, ["guarded"], profile=where)
                    pool.ready()
                    pool.rate("guarded", "profiled", runs)  # its figures: py-spy's
                    pool.close()
                    profiled += pool.profiles
    notes.append(
        f"{timed:.0f} s for the timed rounds, {time.perf_counter() - started:.0f} s in all"
    )
    out = Report(args, runs, trees, urls, {"runs/s": rates, "CPU ms/run": cpus})
    return out.show(checks, probes, cost, work, profiled, notes)


class Report:
    """The printed figures: rates, paired ratios, what the checks and the probe found."""

    def __init__(
        self,
        args: argparse.Namespace,
        runs: int,
        trees: Mapping[str, Path],
        urls: Mapping[tuple[str, str], str],
        figures: Mapping[str, Mapping[tuple[str, str, str], list[float]]],
    ) -> None:
        self.args, self.runs, self.trees, self.urls = args, runs, trees, urls
        self.figures = figures
        self.rates = figures["runs/s"]

    def ratio(
        self, a: tuple[str, str, str], b: tuple[str, str, str], figure: str = "runs/s"
    ) -> list[float]:
        """a / b in each round (both were measured in the same round)."""
        xs, ys = self.figures[figure][a], self.figures[figure][b]
        return [x / y for x, y in zip(xs, ys, strict=True)]

    def both(self, a: tuple[str, str, str], b: tuple[str, str, str]) -> str:
        """The ratio of a to b in runs/s and in CPU per run, median (range)."""
        return (
            f"{spread(self.ratio(a, b)) + 'x':19} runs/s, "
            f"{spread(self.ratio(a, b, 'CPU ms/run'))}x CPU per run"
        )

    def show(
        self,
        checks: Mapping[tuple[str, str], Mapping[str, Any]],
        probes: Mapping[tuple[str, str], Mapping[str, Any]],
        cost: Mapping[str, tuple[float, float]],
        work: Mapping[str, list[int]],
        profiled: list[Path],
        notes: list[str],
    ) -> int:
        args = self.args
        print(
            f"\nload ({args.graph}): {self.runs} runs per side and round x {args.rounds} rounds "
            f"over {args.workers} worker processes, one database per backend and tree; "
            f"median (range) over the rounds, ratios taken within each round"
        )
        for n in notes:
            print(f"  {n}")
        failed = False
        for b in dict.fromkeys(b for b, _t in self.urls):
            print(f"  {b}")
            for t in self.trees:
                if (b, t) not in self.urls:
                    continue
                label = {"new": "reports recorded before release", "old": "the --old tree"}[t]
                print(f"    {t}: {label} ({self.trees[t]})")
                for side in SIDES:
                    if (b, t, side) in self.rates:
                        rate = spread(self.rates[(b, t, side)], "{:.1f}")
                        cpu = spread(self.figures["CPU ms/run"][(b, t, side)], "{:.1f}")
                        print(f"      {side:25} {rate:18} runs/s, {cpu} CPU ms per run")
                g = self.ratio((b, t, "guarded"), (b, t, "unguarded"))
                verdict = "met" if statistics.median(g) >= TARGET else "MISSED"
                print(
                    f"      guarded / unguarded       "
                    f"{self.both((b, t, 'guarded'), (b, t, 'unguarded'))}   "
                    f"(target >= {TARGET}x runs/s: {verdict})"
                )
                if (b, t, "unguarded sync") in self.rates:
                    s = self.both((b, t, "guarded"), (b, t, "unguarded sync"))
                    u = self.both((b, t, "unguarded sync"), (b, t, "unguarded"))
                    print(f"      guarded / unguarded sync  {s}")
                    print(f"      unguarded sync / async    {u}")
                c = checks[(b, t)]
                print(
                    f"      report log: {c['crossings']} crossings, {c['rows']} rows, "
                    f"{c['lost']} lost, {c['duplicated']} duplicated; "
                    f"{c['unguarded_rows']} rows for unguarded runs"
                )
                for p in c["problems"][:10]:
                    print(f"        PROBLEM {p}")
                failed = failed or bool(c["problems"]) or bool(c["lost"]) or bool(c["duplicated"])
                pr = probes[(b, t)]
                print(
                    f"      probe: the node after the gate found its report in the log in "
                    f"{pr['found']} of {pr['runs']} runs ({pr['rows_after']} rows once done)"
                )
                if t == "new" and pr["found"] != pr["runs"]:
                    print("        PROBLEM a release acted on before its report was recorded")
                    failed = True
            if "old" in self.trees and (b, "old", "guarded") in self.rates:
                ng = self.both((b, "new", "guarded"), (b, "old", "guarded"))
                nu = self.both((b, "new", "unguarded"), (b, "old", "unguarded"))
                gn = statistics.median(self.ratio((b, "new", "guarded"), (b, "new", "unguarded")))
                go = statistics.median(self.ratio((b, "old", "guarded"), (b, "old", "unguarded")))
                print("    recording before release, new against old:")
                print(f"      guarded new / old         {ng}")
                print(f"      unguarded new / old       {nu}   (the same LangGraph: the noise)")
                print(f"      guarded / unguarded runs/s {gn:.2f}x new against {go:.2f}x old")
            if b in cost:
                logged, bare = cost[b]
                print(
                    f"    log cost {logged / bare:6.2f}x (guarded runs/s with the report log "
                    f"{logged:.1f} / on the bare saver {bare:.1f}, interleaved in batches of "
                    f"{BATCH} within each worker)"
                )
        (pc, pw), (gc, gw) = work["unguarded"], work["guarded"]
        print(
            f"  per run    unguarded {pc} checkpoints + {pw} writes; guarded {gc} checkpoints "
            f"+ {gw} writes (in memory, new tree)"
        )
        if profiled:
            print_profile(profiled)
        if failed:
            print("  reports    FAILED")
            return 1
        total = sum(c["crossings"] for c in checks.values())
        print(f"  reports    {total} crossings, each with exactly one report row (0 lost, 0 dup)")
        return 0


def print_profile(files: list[Path], top: int = 15) -> None:
    """The functions the profiled workers spent most time in (inclusive, own)."""
    incl: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for f in files:
        if not f.exists():
            continue
        for line in f.read_text().splitlines():
            stack, _, n = line.rpartition(" ")
            if not n.isdigit():
                continue
            frames = [
                x.split(" (")[0] + " " + x.rsplit("/", 1)[-1].split(":")[0].rstrip(")")
                for x in stack.split(";")
            ]
            total += int(n)
            for fr in set(frames):
                incl[fr] += int(n)
            own[frames[-1]] += int(n)
    if not total:
        print("  profile    no samples")
        return
    print(
        f"  profile    {total} samples of a guarded pool ({files[0].parent}), "
        "start-up and warm-up included"
    )
    for name, n in incl.most_common(top):
        print(f"    {100 * n / total:5.1f}% incl  {name}")
    for name, n in own.most_common(8):
        print(f"    {100 * n / total:5.1f}% own   {name}")


if __name__ == "__main__":
    raise SystemExit(main())
