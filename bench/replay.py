"""Citation replay throughput: cold and warm, against a plain read of the same files.

10,000 citations over 1,000 files of 200 lines. "Cold" is the first replay_manifest
call on a fresh Workspace (every file guarded, read, decoded, split); it is compared
with ``open(...).read().splitlines()`` of the same files in the same round. "Warm" is
a second call on the same Workspace: a replay keeps nothing from one call to the next
(each file is guarded and read afresh), so the two differ only by what the interpreter
and the allocator carry over; code that caches lines across calls shows the cache here.
The OS page cache is warm for both sides: this measures trustgate, not the disk.

Each figure is process CPU time (on a shared machine wall time mostly measures the
other processes), printed as the median and the range over the rounds; the ratio is
taken round by round, cold against the raw read of the same round.

Targets (goals, not gates): cold <= 1.5x the raw read; warm >= 200,000 citations/s.
"""

from __future__ import annotations

import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from trustgate.evidence.workspace import _RACY_NS
from trustgate.files import FileCitation, SelfReport, Workspace, replay_manifest

N_FILES, N_LINES, N_CITATIONS, REPEATS = 1000, 200, 10_000, 9


def build(root: Path) -> list[SelfReport]:
    rng = random.Random(7)
    files = []
    for i in range(N_FILES):
        rel = f"pkg{i % 20:02d}/mod_{i:04d}.py"
        lines = [
            f"    value_{i}_{n} = compute(arg_{n}, {rng.randint(0, 10**6)})" for n in range(N_LINES)
        ]
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("\n".join(lines) + "\n")
        files.append((rel, lines))
    items = []
    for c in range(N_CITATIONS):
        rel, lines = files[c % N_FILES]
        line = rng.randint(1, N_LINES)
        drift = rng.choice([0, 0, 0, 1, -2])
        cited = min(max(line + drift, 1), N_LINES)
        items.append(
            SelfReport(
                item=f"i{c}",
                status="already_correct",
                evidence=[FileCitation(file=rel, line=cited, content=lines[line - 1].strip())],
            )
        )
    return items


def raw_read(root: Path, rels: list[str]) -> float:
    t = time.process_time()
    for rel in rels:
        with open(root / rel, encoding="utf-8") as fh:
            fh.read().splitlines()
    return time.process_time() - t


def replayed(findings: list) -> int:
    """Citations that passed (one finding per citation, or per file with a list)."""
    assert not [f for f in findings if not f.passed], "every citation must replay"
    return sum(len(f.detail.get("citations", (None,))) for f in findings)


def timed(items: list[SelfReport], ws: Workspace) -> float:
    t = time.process_time()
    findings = replay_manifest(items, ws)
    took = time.process_time() - t
    assert replayed(findings) == N_CITATIONS
    return took


def spread(values: list[float], scale: float = 1e3, fmt: str = "{:8.1f}") -> str:
    lo, mid, hi = (
        fmt.format(v * scale).strip() for v in (min(values), statistics.median(values), max(values))
    )
    return f"{mid:>8} ({lo}-{hi})"


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="tg-bench-replay-"))
    try:
        items = build(tmp)
        rels = sorted({c.file for it in items for c in it.evidence})
        raw_read(tmp, rels)  # warm the page cache
        # files written less than the racy window ago are never cached (a same-tick
        # rewrite could not be told apart); let them settle, as files in a repo have
        time.sleep(_RACY_NS / 1e9 + 0.1)
        timed(items, Workspace(tmp))  # warm the interpreter
        colds, raws, warms = [], [], []
        for _ in range(REPEATS):
            raws.append(raw_read(tmp, rels))
            ws = Workspace(tmp)
            colds.append(timed(items, ws))
            warms.append(timed(items, ws))
        ratios = [c / r for c, r in zip(colds, raws, strict=True)]
        rates = [N_CITATIONS / w for w in warms]
        print(
            f"files={N_FILES} lines/file={N_LINES} citations={N_CITATIONS}; "
            f"CPU time, median (min-max) of {REPEATS} rounds"
        )
        print(f"raw read().splitlines() of the files : {spread(raws)} ms")
        print(f"cold replay_manifest                 : {spread(colds)} ms")
        print(f"warm replay_manifest                 : {spread(warms)} ms")
        print(
            f"cold / raw read, round by round      : {spread(ratios, 1, '{:.2f}')}x "
            "(target <= 1.5x)"
        )
        print(
            f"warm citations/s                     : {spread(rates, 1, '{:,.0f}')} "
            "(target >= 200,000/s)"
        )
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
