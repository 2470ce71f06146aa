"""LangGraph's own test suite as the oracle of transparency.

A gate that passes must change nothing about the graph it guards. LangGraph's source
distribution ships its tests; this harness runs them (in-memory checkpointers, stores
and caches only) twice against the installed LangGraph: plainly, and with every
compiled ``StateGraph`` guarded by an always-pass gate on every node. Every test that
passes plainly and fails guarded is a divergence; each one is categorised
(:mod:`categorise`) and written to a report.

The sdist is downloaded with pip into a git-ignored cache keyed by the installed
version (``.langgraph-oracle/langgraph-<version>/``); no LangGraph source is committed.

Run ``python -m langgraph_oracle --help`` from ``tests/`` (or ``make oracle``).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.metadata
import json
import logging
import os
import re
import resource
import subprocess
import sys
import tarfile
import time
import tomllib
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from . import categorise, inventory

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CACHE_ROOT = REPO / ".langgraph-oracle"
ALLOWLIST = HERE / "allowlist.toml"
BASELINES = HERE / "baselines"

# pytest-xdist workers: 2 halves the wall time on an idle 2-core machine (LangGraph's
# tests sleep a lot); on a machine shared under heavy load 1 is as fast and costs less CPU.
DEFAULT_WORKERS = int(os.environ.get("TRUSTGATE_ORACLE_WORKERS", "2"))
DEFAULT_TIMEOUT = 120  # seconds per LangGraph test; a hang is a crash, not a stall of CI
SESSION_TIMEOUT = 1500  # seconds for one run of the whole suite
_FEW = 100  # reruns of fewer tests than this go without xdist
CONFIRM_LIMIT = 150  # more divergences than this are reported without a rerun

# Plugins of trustgate's environment that LangGraph's suite must not see: trustgate's
# own pytest plugin (the guarded run imports trustgate through oracle_plugin instead)
# and pytest-asyncio (LangGraph's async tests run on anyio).
_DISABLED_PLUGINS = ("trustgate", "asyncio", "cacheprovider", "hypothesispytest")


class OracleError(RuntimeError):
    """The oracle could not run (download, extraction, or a LangGraph run that crashed)."""


# --- the source distribution ---------------------------------------------------------


def installed_version() -> str:
    return importlib.metadata.version("langgraph")


def cache_dir(version: str) -> Path:
    return CACHE_ROOT / f"langgraph-{version}"


def _safe_members(tar: tarfile.TarFile, prefix: str) -> Iterable[tarfile.TarInfo]:
    """``tests/`` and ``pyproject.toml`` only: LangGraph's own ``langgraph/`` package
    must not shadow the installed one the suite is meant to test."""
    for member in tar.getmembers():
        name = member.name
        if not name.startswith(prefix):
            continue
        rel = name[len(prefix) :]
        if rel == "pyproject.toml" or rel.startswith("tests/"):
            member = member.replace(name=rel)
            yield member


def fetch(version: str, *, quiet: bool = False) -> Path:
    """The extracted LangGraph ``tests/`` for ``version``; downloads it once."""
    root = cache_dir(version)
    src = root / "src"
    marker = src / ".complete"
    if marker.is_file():
        return src
    download = root / "download"
    download.mkdir(parents=True, exist_ok=True)
    sdist = download / f"langgraph-{version}.tar.gz"
    if not sdist.is_file():
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            f"langgraph=={version}",
            "--no-binary",
            ":all:",
            "--no-deps",
            "--quiet",
            "-d",
            str(download),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not sdist.is_file():
            raise OracleError(
                f"pip could not download the langgraph {version} sdist:\n{done.stderr[-2000:]}"
            )
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    tmp = root / "src.tmp"
    if tmp.exists():
        _rmtree(tmp)
    tmp.mkdir(parents=True)
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp, members=_safe_members(tar, f"langgraph-{version}/"), filter="data")
    if not (tmp / "tests" / "conftest.py").is_file():
        raise OracleError(f"the langgraph {version} sdist has no tests/conftest.py")
    (tmp / ".complete").write_text(f"sha256 {digest}\n")
    if src.exists():
        _rmtree(src)
    tmp.rename(src)
    if not quiet:
        print(f"oracle: langgraph {version} tests extracted to {src}")
    return src


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path)


# --- running the suite -----------------------------------------------------------------


@dataclasses.dataclass
class Run:
    mode: str
    label: str
    results: dict[str, Any]
    wall: float
    cpu: float
    returncode: int
    tail: str

    @property
    def tests(self) -> dict[str, dict[str, Any]]:
        return self.results.get("tests", {})


def pytest_command(
    src: Path,
    *,
    workers: int,
    timeout: int,
    select: Sequence[str] = (),
    args_file: Path | None = None,
) -> list[str]:
    cmd = [sys.executable, "-m", "pytest", "-q", "-rN", "--tb=native", "-p", "oracle_plugin"]
    for name in _DISABLED_PLUGINS:
        cmd += ["-p", f"no:{name}"]
    # LangGraph's addopts (--full-trace, --durations) cost minutes on failures; keep
    # only what keeps its snapshot plugin quiet about snapshots of deselected tests.
    cmd += ["-o", "addopts=--snapshot-warn-unused", "-o", "verbosity_assertions=2"]
    cmd += ["--timeout", str(timeout)]
    if workers > 1:
        cmd += ["-n", str(workers), "--dist", "worksteal"]
    if args_file is not None:
        cmd.append(f"@{args_file}")
    elif select:
        cmd += list(select)
    else:
        cmd.append("tests")
    return cmd


def run_suite(
    src: Path,
    mode: str,
    *,
    workers: int = DEFAULT_WORKERS,
    timeout: int = DEFAULT_TIMEOUT,
    select: Sequence[str] = (),
    label: str | None = None,
    quiet: bool = False,
) -> Run:
    """Run LangGraph's tests in ``mode`` (``unguarded``/``guarded``) in a subprocess."""
    root = src.parent
    label = label or mode
    results = root / f"results-{label}.json"
    results.unlink(missing_ok=True)
    args_file = None
    if len(select) > 50:
        args_file = root / f"args-{label}.txt"
        args_file.write_text("\n".join(select) + "\n")
    env = dict(os.environ)
    env.update(
        {
            "TRUSTGATE_ORACLE_MODE": mode,
            "TRUSTGATE_ORACLE_RESULTS": str(results),
            "NO_DOCKER": "true",  # LangGraph's conftest: no PostgreSQL/Redis parameters
            "PYTHONPATH": os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]).rstrip(
                os.pathsep
            ),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    cmd = pytest_command(src, workers=workers, timeout=timeout, select=select, args_file=args_file)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    try:
        done = subprocess.run(
            cmd,
            cwd=src,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=SESSION_TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        raise OracleError(f"the {label} run took longer than {SESSION_TIMEOUT} s") from exc
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    (root / f"log-{label}.txt").write_text(done.stdout + "\n" + done.stderr)
    tail = (done.stdout.strip().splitlines() or [""])[-1]
    if not results.is_file():
        raise OracleError(
            f"the {label} run of LangGraph's tests wrote no results (exit {done.returncode}):\n"
            + (done.stdout + done.stderr)[-3000:]
        )
    data = json.loads(results.read_text())
    if not quiet:
        print(f"oracle: {label:<20} {tail}  [{wall:.0f} s wall, {cpu:.0f} s CPU]")
    return Run(mode, label, data, wall, cpu, done.returncode, tail)


# --- the pinned baseline ------------------------------------------------------------------


def baseline_file(version: str) -> Path:
    return BASELINES / f"langgraph-{version}.txt"


@dataclasses.dataclass
class Baseline:
    """Which tests pass without trustgate: every test the runs collect, except these."""

    not_passing: dict[str, str]
    collected: int
    source: str


def write_baseline(version: str, run: Run) -> Path:
    not_passing = {k: v["outcome"] for k, v in run.tests.items() if v["outcome"] != "passed"}
    lines = [
        f"# LangGraph {version}: tests that do NOT pass without trustgate (in-memory backends).",
        "# Every other collected test passed plainly on the reference machine.",
        "# Regenerate: make oracle ORACLE_ARGS=--update-baseline",
        f"# collected: {len(run.tests)}",
        f"# passed: {len(run.tests) - len(not_passing)}",
    ]
    lines += [f"{outcome}\t{test}" for test, outcome in sorted(not_passing.items())]
    path = baseline_file(version)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def read_baseline(version: str) -> Baseline | None:
    path = baseline_file(version)
    if not path.is_file():
        return None
    not_passing: dict[str, str] = {}
    collected = -1
    for line in path.read_text().splitlines():
        if line.startswith("# collected:"):
            collected = int(line.split(":", 1)[1])
        elif line and not line.startswith("#"):
            outcome, test = line.split("\t", 1)
            not_passing[test] = outcome
    return Baseline(not_passing, collected, f"pinned ({path.relative_to(REPO)})")


def baseline_from_run(run: Run) -> Baseline:
    not_passing = {k: v["outcome"] for k, v in run.tests.items() if v["outcome"] != "passed"}
    return Baseline(not_passing, len(run.tests), "measured in this run")


# --- the allow-list -------------------------------------------------------------------------


class Allowlist(dict[str, str]):
    """Test id pattern -> reason. A pattern names one test function, possibly with
    ``*`` for its parametrisations or for the same test in the sync and async modules
    (``tests/test_pregel*.py::test_x[*]``); ``get`` matches a test id against them."""

    def get(self, test: str, default: str | None = None) -> str | None:  # type: ignore[override]
        if test in self:
            return self[test]
        for pattern, reason in self.items():
            if "*" in pattern and _wildcard(pattern).fullmatch(test):
                return reason
        return default

    def stale(self, passing: Iterable[str]) -> list[str]:
        """Patterns that match no test passing plainly: a wildcard is compared by matching,
        never by string equality (a pattern is not a test id)."""
        passing = list(passing)
        return sorted(
            p
            for p in self
            if not any(t == p or ("*" in p and _wildcard(p).fullmatch(t)) for t in passing)
        )


def _wildcard(pattern: str) -> re.Pattern[str]:
    """Only ``*`` is special: brackets in test ids are parametrisations, not classes."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")))


def read_allowlist(path: Path = ALLOWLIST) -> Allowlist:
    """Test id pattern -> why it may legitimately differ under an always-pass gate."""
    data = tomllib.loads(path.read_text()) if path.is_file() else {}
    allowed = Allowlist()
    for entry in data.get("allow", []):
        test, reason = entry.get("test"), entry.get("reason")
        if not test or not reason or not str(reason).strip():
            raise OracleError(f"{path}: every allow-list entry needs a test and a reason: {entry}")
        allowed[str(test)] = str(reason).strip()
    return allowed


# --- comparing ---------------------------------------------------------------------------


@dataclasses.dataclass
class Divergence:
    test: str
    category: str
    subcategory: str
    first_line: str
    guarded_outcome: str
    allowed: str | None = None


@dataclasses.dataclass
class Outcome:
    version: str
    baseline: Baseline
    runs: list[Run]
    passed_plainly: int
    divergences: list[Divergence]
    flaky: list[str]
    drift: list[str]
    newly_passing: list[str]
    guard_stats: dict[str, int]
    passing: list[str]
    unconfirmed: int = 0

    @property
    def counted(self) -> list[Divergence]:
        return [d for d in self.divergences if d.allowed is None]


def _candidates(baseline: Baseline, guarded: Run) -> list[str]:
    tests = guarded.tests
    out = [
        t for t, r in tests.items() if t not in baseline.not_passing and r["outcome"] != "passed"
    ]
    return sorted(out)


def _missing(baseline: Baseline, guarded: Run, unguarded: Run | None) -> list[str]:
    if unguarded is None:
        return []
    return sorted(
        t
        for t, r in unguarded.tests.items()
        if r["outcome"] == "passed" and t not in guarded.tests and t not in baseline.not_passing
    )


def compare(
    src: Path,
    baseline: Baseline,
    guarded: Run,
    *,
    unguarded: Run | None = None,
    confirm: tuple[Run, Run] | None = None,
    allowlist: dict[str, str] | None = None,
) -> tuple[list[Divergence], list[str], list[str]]:
    """Divergences (categorised), flaky tests and baseline drift."""
    allowlist = allowlist or {}
    candidates = _candidates(baseline, guarded)
    flaky: list[str] = []
    drift: list[str] = []
    if confirm is not None:
        plain_again, guarded_again = confirm
        kept = []
        for test in candidates:
            if plain_again.tests.get(test, {}).get("outcome") != "passed":
                drift.append(test)
            elif guarded_again.tests.get(test, {}).get("outcome") == "passed":
                flaky.append(test)
            else:
                kept.append(test)
        candidates = kept
    divergences = []
    for test in candidates:
        record = guarded.tests[test]
        cat, sub = categorise.categorise(record, src, test)
        divergences.append(
            Divergence(
                test, cat, sub, record.get("first_line", ""), record["outcome"], allowlist.get(test)
            )
        )
    collect_errors = guarded.results.get("collect_errors", {})
    for test in _missing(baseline, guarded, unguarded):
        module = test.split("::", 1)[0]
        why = next((v.get("first_line", "") for k, v in collect_errors.items() if module in k), "")
        divergences.append(
            Divergence(
                test, categorise.MISSING, "not collected", why, "missing", allowlist.get(test)
            )
        )
    return divergences, flaky, drift


# --- the report -----------------------------------------------------------------------------


def _guard_stats(run: Run) -> dict[str, int]:
    stats: Counter[str] = Counter()
    for record in run.tests.values():
        g = record.get("guard") or {}
        stats["graphs guarded"] += int(g.get("guarded", 0))
        stats["tests with a guarded graph"] += 1 if g.get("guarded") else 0
        stats["guard() raised at build"] += len(g.get("refused") or [])
    return dict(stats)


def summary_lines(outcome: Outcome) -> list[str]:
    by_cat: dict[str, Counter[str]] = defaultdict(Counter)
    for d in outcome.counted:
        by_cat[d.category][d.subcategory] += 1
    total = len(outcome.counted)
    lines = [
        f"LangGraph {outcome.version}: {outcome.passed_plainly} tests pass without trustgate "
        f"(baseline {outcome.baseline.source}); {total} of them diverge with always-pass gates "
        f"on every node.",
    ]
    for cat in categorise.CATEGORIES:
        if cat in by_cat:
            n = sum(by_cat[cat].values())
            lines.append(f"  {cat:<18} {n:>4}")
            for sub, k in by_cat[cat].most_common():
                lines.append(f"      {k:>4}  {sub}")
    allowed = [d for d in outcome.divergences if d.allowed is not None]
    if allowed:
        lines.append(f"  allow-listed (not counted): {len(allowed)}")
    if outcome.flaky:
        lines.append(
            f"  flaky (failed guarded once, passed on rerun; not counted): {len(outcome.flaky)}"
        )
    if outcome.drift:
        lines.append(
            f"  baseline drift (pinned as passing, failed plainly here; not counted): "
            f"{len(outcome.drift)}"
        )
    if outcome.unconfirmed:
        lines.append(
            f"  not rerun to rule out flakes (more than {CONFIRM_LIMIT}): {outcome.unconfirmed}"
        )
    if outcome.newly_passing:
        lines.append(f"  pass only when guarded: {len(outcome.newly_passing)}")
    for run in outcome.runs:
        lines.append(
            f"  run {run.label:<18} {run.wall:5.0f} s wall {run.cpu:5.0f} s CPU  {run.tail}"
        )
    return lines


def write_report(outcome: Outcome, src: Path) -> tuple[Path, Path]:
    root = src.parent
    md = ["# LangGraph test suite under always-pass gates", ""]
    md += ["```", *summary_lines(outcome), "```", ""]
    md.append("Guarding: " + ", ".join(f"{k}: {v}" for k, v in sorted(outcome.guard_stats.items())))
    md.append("")
    by_cat: dict[str, list[Divergence]] = defaultdict(list)
    for d in outcome.divergences:
        by_cat[d.category].append(d)
    for cat in categorise.CATEGORIES:
        items = by_cat.get(cat)
        if not items:
            continue
        md += [f"## {cat} ({len(items)})", ""]
        by_sub: dict[str, list[Divergence]] = defaultdict(list)
        for d in items:
            by_sub[d.subcategory].append(d)
        for sub, ds in sorted(by_sub.items(), key=lambda kv: -len(kv[1])):
            md += [f"### {sub} ({len(ds)})", ""]
            for d in sorted(ds, key=lambda d: d.test):
                note = f" — allowed: {d.allowed}" if d.allowed else ""
                first = d.first_line.replace("|", "\\|")[:220]
                md.append(f"- `{d.test}`{note}  \n  {first}")
            md.append("")
    md += [
        "## What LangGraph's tests inspect",
        "",
        "Tests whose source touches each aspect (a test may touch several), and how many "
        "of them diverge in this run: how invisible a gate has to be.",
        "",
        *inventory.table(src, outcome.passing, [d.test for d in outcome.divergences]),
        "",
    ]
    for title, tests in (
        ("flaky (not counted)", outcome.flaky),
        ("baseline drift (not counted)", outcome.drift),
        ("pass only when guarded", outcome.newly_passing),
    ):
        if tests:
            md += [f"## {title} ({len(tests)})", "", *[f"- `{t}`" for t in tests], ""]
    md_path = root / "report.md"
    md_path.write_text("\n".join(md))
    js_path = root / "report.json"
    js_path.write_text(
        json.dumps(
            {
                "langgraph": outcome.version,
                "baseline": outcome.baseline.source,
                "passed_plainly": outcome.passed_plainly,
                "divergences": [dataclasses.asdict(d) for d in outcome.divergences],
                "flaky": outcome.flaky,
                "drift": outcome.drift,
                "newly_passing": outcome.newly_passing,
                "runs": [
                    {
                        "mode": r.mode,
                        "label": r.label,
                        "wall_s": round(r.wall, 1),
                        "cpu_s": round(r.cpu, 1),
                        "tail": r.tail,
                    }
                    for r in outcome.runs
                ],
                "guard_stats": outcome.guard_stats,
            },
            indent=1,
        )
    )
    return md_path, js_path


# --- the whole thing ----------------------------------------------------------------------


def oracle(
    *,
    baseline_mode: str = "auto",
    workers: int = DEFAULT_WORKERS,
    timeout: int = DEFAULT_TIMEOUT,
    select: Sequence[str] = (),
    confirm: bool = True,
    allowlist: dict[str, str] | None = None,
    quiet: bool = False,
    mode: str = "guarded",
) -> tuple[Outcome, Path]:
    version = installed_version()
    src = fetch(version, quiet=quiet)
    runs: list[Run] = []
    baseline = read_baseline(version) if baseline_mode in ("auto", "pinned") else None
    if baseline is None and baseline_mode == "pinned":
        raise OracleError(f"no pinned baseline for langgraph {version} at {baseline_file(version)}")
    guarded = run_suite(src, mode, workers=workers, timeout=timeout, select=select, quiet=quiet)
    runs.append(guarded)
    unguarded: Run | None = None
    if baseline is not None and not select and len(guarded.tests) != baseline.collected:
        if not quiet:
            print(
                f"oracle: the pinned baseline lists {baseline.collected} tests, this run "
                f"collected {len(guarded.tests)}: measuring the baseline instead"
            )
        baseline = None
    if baseline is None:
        unguarded = run_suite(
            src, "unguarded", workers=workers, timeout=timeout, select=select, quiet=quiet
        )
        runs.append(unguarded)
        baseline = baseline_from_run(unguarded)
    confirmed: tuple[Run, Run] | None = None
    candidates = _candidates(baseline, guarded)
    unconfirmed = 0
    if confirm and len(candidates) > CONFIRM_LIMIT:
        # Hundreds of divergences are not flakes; rerunning them would double the run.
        unconfirmed = len(candidates)
    elif confirm and candidates:
        # Starting xdist workers costs more than it saves on a handful of tests.
        few = 1 if len(candidates) < _FEW else workers
        plain_again = run_suite(
            src,
            "unguarded",
            workers=few,
            timeout=timeout,
            select=candidates,
            label="unguarded-confirm",
            quiet=quiet,
        )
        guarded_again = run_suite(
            src,
            mode,
            workers=few,
            timeout=timeout,
            select=candidates,
            label="guarded-confirm",
            quiet=quiet,
        )
        runs += [plain_again, guarded_again]
        confirmed = (plain_again, guarded_again)
    divergences, flaky, drift = compare(
        src, baseline, guarded, unguarded=unguarded, confirm=confirmed, allowlist=allowlist
    )
    passed_plainly = sum(1 for t in guarded.tests if t not in baseline.not_passing) - len(drift)
    if unguarded is not None:
        passed_plainly = sum(1 for r in unguarded.tests.values() if r["outcome"] == "passed")
    newly = sorted(
        t
        for t, o in baseline.not_passing.items()
        if o == "failed" and guarded.tests.get(t, {}).get("outcome") == "passed"
    )
    outcome = Outcome(
        version,
        baseline,
        runs,
        passed_plainly,
        divergences,
        flaky,
        drift,
        newly,
        _guard_stats(guarded),
        sorted(
            t
            for t in (unguarded or guarded).tests
            if t not in baseline.not_passing and t not in drift
        ),
    )
    outcome.unconfirmed = unconfirmed
    write_report(outcome, src)
    return outcome, src


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m langgraph_oracle",
        description="Run LangGraph's own tests with always-pass gates on every node and "
        "report every test that passes plainly but fails guarded.",
    )
    parser.add_argument(
        "--baseline",
        choices=("auto", "pinned", "run"),
        default="auto",
        help="which tests pass without trustgate: the pinned list for this LangGraph "
        "version (auto: when there is one) or a plain run of the suite (run)",
    )
    parser.add_argument(
        "--update-baseline", action="store_true", help="run plainly and pin the result"
    )
    parser.add_argument(
        "--workers", type=int, default=DEFAULT_WORKERS, help="pytest-xdist workers (1: none)"
    )
    parser.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT, help="seconds per test")
    parser.add_argument("--no-confirm", action="store_true", help="do not rerun divergences")
    parser.add_argument(
        "--control",
        action="store_true",
        help="patch compile but guard nothing: the harness's own false divergences (flakes)",
    )
    parser.add_argument(
        "select",
        nargs="*",
        help="LangGraph test files or ids (tests/test_pregel.py...); default all",
    )
    args = parser.parse_args(argv)
    try:
        if args.update_baseline:
            version = installed_version()
            src = fetch(version)
            run = run_suite(src, "unguarded", workers=args.workers, timeout=args.timeout)
            print(f"oracle: pinned {write_baseline(version, run).relative_to(REPO)}")
            return 0
        outcome, src = oracle(
            baseline_mode=args.baseline,
            workers=args.workers,
            timeout=args.timeout,
            select=args.select,
            confirm=not args.no_confirm,
            allowlist=read_allowlist(),
            mode="control" if args.control else "guarded",
        )
    except OracleError as exc:
        print(f"oracle: {exc}", file=sys.stderr)
        return 2
    print("\n".join(summary_lines(outcome)))
    print(f"oracle: report: {src.parent / 'report.md'} (and report.json)")
    return 1 if outcome.counted else 0
