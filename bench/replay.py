"""Citation replay throughput: cold and warm, against a plain read of the same files.

10,000 citations over 1,000 files of 200 lines. "Cold" is the first replay_manifest
call on a fresh Workspace (every file guarded, read, decoded, split); it is compared
with ``open(...).read().splitlines()`` of the same files in the same run. "Warm" is a
second call on the same Workspace (files guarded afresh, lines from the cache).
The OS page cache is warm for both sides: this measures trustgate, not the disk.

Targets (goals, not gates): cold <= 1.3x the raw read; warm >= 200,000 citations/s.
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

N_FILES, N_LINES, N_CITATIONS, REPEATS = 1000, 200, 10_000, 7


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
    t = time.perf_counter()
    for rel in rels:
        with open(root / rel, encoding="utf-8") as fh:
            fh.read().splitlines()
    return time.perf_counter() - t


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="tg-bench-replay-"))
    try:
        items = build(tmp)
        rels = sorted({c.file for it in items for c in it.evidence})
        raw_read(tmp, rels)  # warm the page cache
        # files written less than the racy window ago are never cached (a same-tick
        # rewrite could not be told apart); let them settle, as files in a repo have
        time.sleep(_RACY_NS / 1e9 + 0.1)
        colds, raws, warms = [], [], []
        for _ in range(REPEATS):
            raws.append(raw_read(tmp, rels))
            ws = Workspace(tmp)
            t = time.perf_counter()
            findings = replay_manifest(items, ws)
            colds.append(time.perf_counter() - t)
            assert len(findings) == N_CITATIONS and all(f.passed for f in findings)
            t = time.perf_counter()
            replay_manifest(items, ws)
            warms.append(time.perf_counter() - t)
        raw, cold, warm = (statistics.median(x) for x in (raws, colds, warms))
        print(f"files={N_FILES} lines/file={N_LINES} citations={N_CITATIONS} (median of {REPEATS})")
        print(f"raw read().splitlines() of the files : {raw * 1e3:8.1f} ms")
        print(
            f"cold replay_manifest                 : {cold * 1e3:8.1f} ms "
            f"({N_CITATIONS / cold:,.0f} citations/s)"
        )
        print(
            f"warm replay_manifest                 : {warm * 1e3:8.1f} ms "
            f"({N_CITATIONS / warm:,.0f} citations/s)"
        )
        print(f"cold / raw read ratio                : {cold / raw:8.2f}x  (target <= 1.3x)")
        print(
            f"warm throughput                      : {N_CITATIONS / warm:,.0f}/s "
            f"(target >= 200,000/s)"
        )
        print(
            f"reading share of cold (cold - warm)  : {(cold - warm) * 1e3:8.1f} ms = "
            f"{(cold - warm) / raw:.2f}x the raw read (guard + read + decode + split)"
        )
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
