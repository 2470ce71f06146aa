"""Recorded before released, under SIGKILL and a full disk, in real worker processes.

A guarded ``writer`` (the model: honest, or lying) → ``act`` (which acts on the released
output) → END runs on a shared database (a SQLite file; the test PostgreSQL server), with
``durability`` "async", "sync" or "exit" and the sync or async API. Each run's worker is
SIGKILLed at a seeded point (inside the verifier, just before/after the gate's write
beside its task, between the saver's write and the report log's, just before/after a
checkpoint ``put``, inside ``act``, after ``act``), then resumed by fresh workers, which
may be killed too, until the run finishes. Whatever acts on a release (``act`` and the
stream consumer) writes to a file outside the database what it acted on and whether the
crossing's report was then in the report log, read through a separate connection.

Over every run, on each backend:

* no output is acted on without a durable report;
* no crossing has two released reports (by ``Report.crossing``), in the log or in
  ``trustgate.reports``; every report of a finished thread is in the log;
* no lie is released (nothing ``act`` or the stream saw, no state value, no checkpoint
  value outside the audit record, no released report's output);
* a release delivered again after a crash is one report counting its deliveries, as
  many as the release records the gates saved;
* ``ReportingSaver.reconcile()`` afterwards adds nothing that something acted on.

And with a file-size limit the database cannot grow past (SQLite, ``RLIMIT_FSIZE``): a
run whose report cannot be saved releases nothing (``act`` never runs, nothing of the
writer is streamed), raises the database's own error saying nothing was released, and
prints no traceback; what was released has its report. Each such run is then resumed
with room again, and the same figures are taken over the finished threads.

Workers are forked from a zygote that imported everything once (``tests/_crash_worker.py``),
so a few hundred killed processes cost seconds, not minutes.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from _crash_worker import (
    HONEST,
    LIE,
    LIE_MARK,
    POINTS,
    RELEASE_CHANNEL,
    REMOVED,
    Tripwire,
    build_graph,
    cfg,
    zygote,
)

import trustgate
from trustgate.persistence import connect

SEED = 20261202
RUNS = 100  # per backend
MAX_ATTEMPTS = 5  # the last one is never killed
DURABILITIES = ("async", "sync", "exit")
# which occurrence of a point an attempt dies at: a run has up to three checkpoint puts
OCCURRENCES = {"put-before": 3, "put-after": 3}


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@dataclass
class Run:
    index: int
    thread: str
    lying: bool
    policy: str
    durability: str
    api: str
    dir: Path
    attempts: list[dict[str, Any]] = field(default_factory=list)
    outcome: str | None = None

    def file(self, name: str) -> Path:
        return self.dir / f"{self.index}.{name}"


@dataclass
class Figures:
    backend: str
    runs: int = 0
    attempts: int = 0
    kills: Counter[str] = field(default_factory=Counter)
    fills: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    acted: int = 0
    streamed: int = 0
    acted_without_report: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    lies: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    miscounted: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    redeliveries: int = 0
    halted_again: int = 0
    orphans: int = 0
    reconciled: int = 0
    reconciled_acted: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def show(self) -> str:
        kills = ", ".join(f"{p} {self.kills[p]}" for p in POINTS)
        where = f"kills per point: {kills} (total {sum(self.kills.values())})"
        if self.fills:
            where = f"disk full at: {dict(sorted(self.fills.items()))}"
        return (
            f"[{self.backend}] runs {self.runs}, attempts {self.attempts} "
            f"({self.seconds:.0f} s); {where}; "
            f"outcomes {dict(self.outcomes)}; acted on by act {self.acted}, by the stream "
            f"consumer {self.streamed}; acted on without a durable report "
            f"{len(self.acted_without_report)}; crossings with two released reports "
            f"{len(self.duplicates)}; lies released {len(self.lies)}; reports lost "
            f"{len(self.lost)}; deliveries miscounted {len(self.miscounted)}; redeliveries "
            f"(deliveries >= 2) {self.redeliveries}; halted crossings halted again on "
            f"resume {self.halted_again}; crossings of a restarted exit-mode run "
            f"{self.orphans}; reconcile() added {self.reconciled}, of them acted on "
            f"{len(self.reconciled_acted)}"
        )


def _plan(backend: str, index: int, workdir: Path) -> tuple[Run, random.Random]:
    rng = random.Random(f"{SEED}/{backend}/{index}")
    lying = rng.random() < 0.4
    run = Run(
        index=index,
        thread=f"{backend}-{index}",
        lying=lying,
        policy=rng.choice(["override", "halt"]) if lying else "override",
        durability=DURABILITIES[index % len(DURABILITIES)],
        api=rng.choice(["sync", "async"]),
        dir=workdir,
    )
    return run, rng


def _kill(rng: random.Random, point: str | None) -> tuple[str | None, int]:
    if point is None:
        return None, 1
    return point, rng.randint(1, OCCURRENCES.get(point, 1))


def _drive(z: Any, run: Run, rng: random.Random, url: str, figures: Figures) -> None:
    """Start the run killed at its planned point, then resume it in fresh workers
    (each maybe killed too) until an attempt finishes."""
    first = POINTS[(run.index // len(DURABILITIES)) % len(POINTS)]
    for number in range(MAX_ATTEMPTS):
        if number == 0:
            point, n = _kill(rng, first)
        elif number < MAX_ATTEMPTS - 1 and rng.random() < 0.4:
            point, n = _kill(rng, rng.choice(POINTS))
        else:
            point, n = None, 1
        spec = {
            "url": url,
            "thread": run.thread,
            "lying": run.lying,
            "policy": run.policy,
            "durability": run.durability,
            "api": run.api,
            "mode": "start" if number == 0 else "resume",
            "kill": point,
            "n": n,
            "attempt": number,
            "key": os.environ["TRUSTGATE_LEDGER_KEY"],
            "kills": str(run.file("kills")),
            "acted": str(run.file("acted")),
            "deliveries": str(run.file("deliveries")),
            "result": str(run.file("result")),
            "stderr": str(run.file("stderr")),
        }
        answer = z.run(spec)
        figures.attempts += 1
        run.attempts.append({"kill": point, "n": n, **answer})
        assert not answer["hung"], f"run {run.index} attempt {number} hung: {_tail(run)}"
        if answer["status"] == 0:
            results = [r for r in _lines(run.file("result")) if r["attempt"] == number]
            assert len(results) == 1, f"run {run.index} attempt {number}: {results}"
            run.outcome = results[0]["outcome"]
            assert run.outcome in ("done", "halted"), (run.index, results, _tail(run))
            return
        assert answer["status"] == -9, f"run {run.index} attempt {number}: {answer} {_tail(run)}"
    pytest.fail(f"run {run.index} did not finish in {MAX_ATTEMPTS} attempts")


def _tail(run: Run) -> str:
    path = run.file("stderr")
    return path.read_text()[-3000:] if path.exists() else ""


def _strings(obj: Any) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)
    elif obj is not None and not isinstance(obj, (bool, int, float)):
        yield repr(obj)


def _has_lie(obj: Any) -> bool:
    return any(LIE_MARK in s for s in _strings(obj))


def _outside_record(values: Any) -> Any:
    """A state or checkpoint's values without the audit record (reports quote claims,
    the lie included, word for word; the release record is sealed)."""
    if not isinstance(values, dict):
        return values
    return {k: v for k, v in values.items() if k not in ("trust_reports", RELEASE_CHANNEL)}


def _check_run(run: Run, db: Any, figures: Figures, acted_ids: set[str]) -> None:
    saver = db.checkpointer.saver  # read around the ReportingSaver: reading logs nothing
    wire = Tripwire({"kill": None})
    app = build_graph(wire, run.policy).compile(checkpointer=saver)
    config = cfg(run.thread)
    state = app.get_state(config)
    reports = trustgate.reports(app, config)
    logged = db.history(thread=run.thread)
    assert logged.refused == [], logged.refused
    by_id = {r.id: r for r in logged}
    tag = (
        f"run {run.index} ({run.durability}, {run.api}, {run.policy}, lying={run.lying}, "
        f"attempts {[(a['kill'], a['n'], a['status']) for a in run.attempts]})"
    )

    # whatever acted on a release: on what, and was its report durable then
    for line in _lines(run.file("acted")):
        if line["where"] == "act":
            figures.acted += 1
        else:
            figures.streamed += 1
        if line["report"] is not None:
            acted_ids.add(line["report"])
        if not line["durable"] or line["report"] is None:
            figures.acted_without_report.append(f"{tag}: {line}")
        if _has_lie(line["text"]):
            figures.lies.append(f"{tag}: acted on {line}")
        expected = REMOVED if run.lying else (line["claims"] or [None])[0]
        if line["text"] != expected or run.policy == "halt":
            figures.wrong.append(f"{tag}: acted on {line['text']!r}, expected {expected!r}")
        if line["report"] not in by_id:
            figures.lost.append(f"{tag}: acted on report {line['report']} not in the log")

    # the finished thread
    values = state.values
    if run.outcome == "done":
        ok = state.next == () and values.get("acted") and values.get("text") is not None
        text = str(values.get("text"))
        ok = ok and (text == REMOVED if run.lying else text.startswith(HONEST))
        if not ok:
            figures.wrong.append(f"{tag}: finished as {state.next} {_outside_record(values)}")
    else:
        if state.next != ("writer",) or values.get("acted") or "text" in values:
            figures.wrong.append(f"{tag}: halted as {state.next} {_outside_record(values)}")
    if _has_lie(_outside_record(values)):
        figures.lies.append(f"{tag}: final state {_outside_record(values)}")
    for item in saver.list(config):
        if _has_lie(_outside_record(item.checkpoint.get("channel_values"))):
            figures.lies.append(f"{tag}: checkpoint {item.checkpoint.get('id')}")
        for _task, channel, value in item.pending_writes or ():
            if channel not in ("trust_reports", RELEASE_CHANNEL) and _has_lie(value):
                figures.lies.append(f"{tag}: pending write {channel}")

    # one released report per crossing, in the thread and in the log; none lost
    for source, found in (("thread", reports), ("log", list(logged))):
        crossings: dict[str | None, list[Any]] = defaultdict(list)
        for r in found:
            crossings[r.crossing].append(r)
        for key, rs in crossings.items():
            released = {r.id for r in rs if r.released}
            if len(released) > 1:
                figures.duplicates.append(f"{tag}: {source} crossing {key}: {len(rs)} reports")
            elif len(rs) > 1 and source == "log":
                assert all(r.decision == "halted" for r in rs), (tag, rs)
                figures.halted_again += len(rs) - 1
    for r in reports:
        if r.id not in by_id:
            figures.lost.append(f"{tag}: report {r.id} ({r.decision}) not in the log")
        elif by_id[r.id].deliveries != r.deliveries and r.released:
            figures.miscounted.append(
                f"{tag}: {r.id} thread says {r.deliveries}, log {by_id[r.id].deliveries}"
            )
    thread_crossings = {r.crossing for r in reports}
    figures.orphans += len({r.crossing for r in logged} - thread_crossings)

    # no released report lets the lie out
    for r in logged:
        lie = r.released and any(LIE in str(c) for c in r.claims)
        if lie and (r.decision != "modified" or [o.after for o in r.overrides] != [REMOVED]):
            figures.lies.append(f"{tag}: released {r.id} {r.decision} {r.overrides}")

    # deliveries: one per release record a gate saved for the crossing
    saved = Counter(d["report"] for d in _lines(run.file("deliveries")))
    for rid, count in saved.items():
        row = by_id.get(rid)
        if row is None:
            continue  # killed between the saver's write and the log's, on an unsaved step
        if row.deliveries >= 2:
            figures.redeliveries += 1
        if row.deliveries != count:
            figures.miscounted.append(f"{tag}: {rid} saved {count} times, log {row.deliveries}")

    for k in _lines(run.file("kills")):
        if "point" in k:
            figures.kills[k["point"]] += 1
        else:
            figures.fills[k["full"]] += 1
    figures.outcomes[str(run.outcome)] += 1


def _log_ids(db: Any) -> set[str]:
    return {r.id for r in db.history(limit=1_000_000)}


def _campaign(backend: str, url: str, workdir: Path) -> Figures:
    figures = Figures(backend)
    started = time.monotonic()
    runs: list[Run] = []
    with zygote(workdir, dict(os.environ)) as z:
        for index in range(RUNS):
            run, rng = _plan(backend, index, workdir)
            _drive(z, run, rng, url, figures)
            runs.append(run)
    figures.runs = len(runs)
    with connect(url) as db:
        # first the sweep, before anything in this process reads a thread (a read would
        # reconcile it): whatever it adds, nothing may have acted on it
        before = _log_ids(db)
        figures.reconciled = db.reconcile()
        added = _log_ids(db) - before
        acted_ids: set[str] = set()
        for run in runs:
            _check_run(run, db, figures, acted_ids)
        figures.reconciled_acted = sorted(added & acted_ids)
    figures.seconds = time.monotonic() - started
    return figures


def _assert(figures: Figures) -> None:
    print(figures.show())
    assert figures.runs == RUNS
    assert set(figures.kills) == set(POINTS), f"a point was never reached: {figures.kills}"
    assert figures.acted_without_report == [], figures.acted_without_report[:5]
    assert figures.duplicates == [], figures.duplicates[:5]
    assert figures.lies == [], figures.lies[:5]
    assert figures.lost == [], figures.lost[:5]
    assert figures.miscounted == [], figures.miscounted[:5]
    assert figures.wrong == [], figures.wrong[:5]
    assert figures.reconciled_acted == []
    assert figures.acted > 0 and figures.streamed > 0
    assert figures.redeliveries > 0  # the crash after a release was exercised


@pytest.mark.timeout(400)
def test_sigkill_anywhere_never_acts_without_a_report_sqlite(tmp_path: Path) -> None:
    _assert(_campaign("sqlite", str(tmp_path / "shared.db"), tmp_path))


@pytest.mark.timeout(400)
def test_sigkill_anywhere_never_acts_without_a_report_postgres(pg_url: str, tmp_path: Path) -> None:
    _assert(_campaign("postgres", pg_url, tmp_path))


# -- a full disk -------------------------------------------------------------------------

# the moment the disk fills: before the gate's write beside its task, between the saver's
# write and the report log's (both hold the output back), or later, once released
FILLS = {
    "async": ("beside-before", "beside-logless", "put-before", "after-act", "act"),
    "sync": ("beside-before", "beside-logless", "put-before", "after-act", "act"),
    # an exit-mode run writes nothing before the gate: the log to fill is not there yet
    "exit": ("beside-after", "act"),
}
HELD = ("beside-before", "beside-logless")
# every moment with every durability it applies to, three times
DISK_PLAN = [(durability, fill) for durability in DURABILITIES for fill in FILLS[durability]]
DISK_RUNS = 3 * len(DISK_PLAN)


@pytest.mark.timeout(300)
def test_a_full_disk_releases_nothing_and_loses_no_report(tmp_path: Path) -> None:
    """Each run gets a fresh database file; at a seeded moment of the run the worker's
    files may no longer grow (``RLIMIT_FSIZE``), so the next database write fails. The
    run then gets room again and a fresh worker resumes it to its end; the same figures
    as for the kills are taken over the finished threads."""
    figures = Figures("disk full")
    held: Counter[str] = Counter()
    started = time.monotonic()
    acted_ids: set[str] = set()
    added: set[str] = set()
    with zygote(tmp_path, dict(os.environ)) as z:
        for index in range(DISK_RUNS):
            rng = random.Random(f"{SEED}/disk/{index}")
            durability, fill = DISK_PLAN[index % len(DISK_PLAN)]
            url = tmp_path / f"full{index}.db"
            with connect(url):
                pass  # the tables exist: only the run's own writes need room
            run = Run(
                index, f"disk-{index}", rng.random() < 0.3, "override", durability, "sync", tmp_path
            )
            spec = {
                "url": str(url),
                "thread": run.thread,
                "lying": run.lying,
                "policy": "override",
                "durability": durability,
                "api": "sync",
                "mode": "start",
                "kill": None,
                "n": 1,
                "fill": fill,
                "fill_n": 2 if fill == "put-before" else 1,
                "attempt": 0,
                "key": os.environ["TRUSTGATE_LEDGER_KEY"],
                "kills": str(run.file("kills")),
                "acted": str(run.file("acted")),
                "deliveries": str(run.file("deliveries")),
                "result": str(run.file("result")),
                "stderr": str(run.file("stderr")),
            }
            answer = z.run(spec)
            figures.attempts += 1
            run.attempts.append({"kill": f"full:{fill}", "n": spec["fill_n"], **answer})
            assert answer["status"] == 0 and not answer["hung"], (answer, _tail(run))
            (result,) = _lines(run.file("result"))
            filled = [k for k in _lines(run.file("kills")) if "full" in k]
            assert len(filled) == 1, (index, fill, result)  # the disk did fill
            acted = _lines(run.file("acted"))
            stderr = run.file("stderr").read_text() if run.file("stderr").exists() else ""
            assert "Traceback" not in stderr, stderr
            if result["outcome"] == "error":
                error = result["error"]
                assert error.startswith(("OperationalError", "OSError")), error
                assert any(w in error for w in ("disk", "full", "File too large")), error
                nothing = any("nothing was released" in n for n in result["notes"])
                # filled at or before the gate's write: held; later, a background save
                # may still come first (durability "async")
                assert nothing or fill not in HELD, (index, fill, result)
                if nothing:
                    assert acted == [], (index, acted)  # act never ran, nothing streamed
                    held["failed, nothing released"] += 1
                else:
                    held[f"failed after the release ({fill})"] += 1
                # room again: a fresh worker resumes the run to its end
                again = {**spec, "mode": "resume", "fill": None, "attempt": 1}
                answer = z.run(again)
                figures.attempts += 1
                run.attempts.append({"kill": None, "n": 1, **answer})
                assert answer["status"] == 0 and not answer["hung"], (answer, _tail(run))
            else:
                held[f"finished ({fill})"] += 1
            run.outcome = _lines(run.file("result"))[-1]["outcome"]
            assert run.outcome == "done", _tail(run)
            with connect(url) as db:
                before = _log_ids(db)
                figures.reconciled += db.reconcile()
                added |= _log_ids(db) - before
                _check_run(run, db, figures, acted_ids)
            figures.runs += 1
    figures.reconciled_acted = sorted(added & acted_ids)
    figures.seconds = time.monotonic() - started
    print(figures.show())
    print(f"[disk full] {dict(sorted(held.items()))}")
    assert figures.runs == DISK_RUNS
    assert set(figures.fills) == {f for fills in FILLS.values() for f in fills}, figures.fills
    assert figures.acted_without_report == [], figures.acted_without_report[:5]
    assert figures.duplicates == [], figures.duplicates[:5]
    assert figures.lies == [], figures.lies[:5]
    assert figures.lost == [], figures.lost[:5]
    assert figures.miscounted == [], figures.miscounted[:5]
    assert figures.wrong == [], figures.wrong[:5]
    assert figures.reconciled_acted == []
    # every run filled at or before the gate's write held its output back
    assert held["failed, nothing released"] >= DISK_RUNS * 4 // len(DISK_PLAN)
