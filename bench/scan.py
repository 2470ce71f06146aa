"""Throughput of ``verify_draft``, its first call, and its growth on adversarial text.

A gate sits on every crossing of a graph, so the draft verifier has to be cheap next
to the model call it guards, cheap on the first call after import, and linear on text
built to make it slow. This prints, all measured in the same run:

* a bare regex sentence split of each draft (the floor: what any split costs) and the
  ratio of ``verify_draft`` to it;
* ``verify_draft`` (default rules) in MB/s on 1 MB of:
  - *ordinary* incident text: the honest cited drafts of
    ``tests/corpus/honest_drafts.json`` (prose, lists, tables, a code block),
  - *trigger-dense* text: sentences of the tuning corpus, where two sentences in
    three hold a causal or hedge word,
  - each *adversarial* input below;
* linearity: the CPU time on 1 MB divided by the CPU time on 0.25 MB for every input
  (4.0 is linear; a backtracking pattern shows as 16 or far more);
* the first call after ``import trustgate`` in a fresh interpreter (target <= 100 ms).

Targets (issue 13): >= 10 MB/s on ordinary text, linear on adversarial text, first
call <= 100 ms. Run: ``.venv/bin/python bench/scan.py``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from trustgate.evidence.record import Record  # noqa: E402
from trustgate.verifiers.drafts.verify import verify_draft  # noqa: E402

TARGET_BYTES = 1_000_000
BARE_SPLIT = re.compile(r"(?<=[.!?])\s+")
RECORD = Record.from_lines(f"14:{i % 60:02d} event {i}" for i in range(1, 401))


def _fill(unit: str, size: int = TARGET_BYTES) -> str:
    reps = max(1, size // max(1, len(unit.encode("utf-8"))))
    return unit * reps


def ordinary_draft(size: int = TARGET_BYTES) -> str:
    """Honest cited drafts in many styles, repeated to ``size`` bytes."""
    drafts = json.loads((ROOT / "tests" / "corpus" / "honest_drafts.json").read_text("utf-8"))
    return _fill("\n\n".join(d["draft"] for d in drafts) + "\n\n", size)


def trigger_dense_draft(size: int = TARGET_BYTES) -> str:
    """Tuning-corpus sentences in sections with bullets, tables and code."""
    corpus = ROOT / "tests" / "corpus" / "draft_sentences.jsonl"
    rows = [json.loads(line) for line in corpus.read_text("utf-8").splitlines() if line]
    plain = [r["text"] for r in rows if r["label"] == "plain"]
    causal = [r["text"] for r in rows if r["label"] == "causal"]
    hedged = [r["text"] for r in rows if r["label"] == "hedged"]
    parts: list[str] = []
    total = 0
    i = 0
    while total < size:
        section = [f"## Section {i}\n"]
        para = []
        for j in range(6):
            k = i * 7 + j
            para.append(plain[k % len(plain)])
            if j == 2:
                para.append(f"{causal[k % len(causal)][:-1]} [[{k % 400 + 1}]].")
        if i % 3 == 0:
            para.append(causal[i % len(causal)])
        if i % 5 == 0:
            para.append(hedged[i % len(hedged)])
        section.append(" ".join(para) + "\n")
        section.append(
            "\n".join(f"- {plain[(i + n) % len(plain)]} [[{(i + n) % 400 + 1}]]" for n in range(3))
            + "\n"
        )
        if i % 10 == 0:
            section.append("| time | event |\n|---|---|\n| 14:02 | alert fired |\n")
            section.append("```\nkubectl get pods -n checkout. Not a sentence.\n```\n")
        chunk = "\n".join(section) + "\n"
        parts.append(chunk)
        total += len(chunk.encode("utf-8"))
        i += 1
    return "".join(parts)


ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "trigger words only": lambda n: _fill("because due to caused probably may have ", n),
    "one endless sentence": lambda n: _fill("the deploy caused the pool to drain and ", n),
    "causal sentences": lambda n: _fill("The deploy caused the outage because it broke. ", n),
    "identifier runs": lambda n: _fill("a_b.c-d/e=f ", n),
    "dots": lambda n: _fill("a.", n),
    "brackets": lambda n: _fill("[[1]][[", n),
    "quotes": lambda n: _fill('"a ', n),
    "zero-width": lambda n: _fill("be\u200bcause ", n),
    "fences": lambda n: _fill("```\n", n),
    "list items": lambda n: _fill("- a\n", n),
    "faults, no verb": lambda n: _fill("the stale error storm so ", n),
    "attributions, no to": lambda n: _fill("traced the errors blamed the ", n),
}


def timed(fn: Callable[[], object], repeat: int = 3) -> float:
    """Best wall-clock time of ``repeat`` runs."""
    return timed_both(fn, repeat)[0]


def timed_both(fn: Callable[[], object], repeat: int = 3) -> tuple[float, float]:
    """Best wall-clock and best CPU (process) time of ``repeat`` runs: on a shared
    machine the CPU time says what the code costs, the wall time what a caller waits."""
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        best_wall = min(best_wall, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return best_wall, best_cpu


def first_call_ms() -> tuple[float, float, float]:
    """(import trustgate, first verify_draft after it, its CPU time) in a fresh
    interpreter, in ms."""
    code = (
        "import time\n"
        "t0 = time.perf_counter()\n"
        "import trustgate\n"
        "t1 = time.perf_counter()\n"
        "c1 = time.process_time()\n"
        "trustgate.verify_draft('Latency rose at 14:02. [[1]] The deploy exhausted the pool.',"
        " trustgate.Record.from_text('14:02 p99 9.2s'))\n"
        "t2 = time.perf_counter()\n"
        "c2 = time.process_time()\n"
        "print((t1 - t0) * 1000, (t2 - t1) * 1000, (c2 - c1) * 1000)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def main() -> int:
    verify_draft("warm up the import. The deploy caused it.", RECORD)
    print(
        f"{'input':<22}{'MB/s':>8}{'CPU MB/s':>10}{'bare split MB/s':>17}{'ratio':>8}"
        f"{'1 MB / 0.25 MB':>16}"
        "\n(MB/s and the ratio to the bare split are wall time; growth is CPU time)"
    )
    rows: list[tuple[str, Callable[[int], str], int]] = [
        ("ordinary incident", ordinary_draft, 3),
        ("trigger-dense", trigger_dense_draft, 1),
    ]
    rows += [(name, make, 1) for name, make in ADVERSARIAL.items()]
    for name, make, repeat in rows:
        big = make(TARGET_BYTES)
        small = make(TARGET_BYTES // 4)
        mb = len(big.encode("utf-8")) / 1_000_000
        t_big, c_big = timed_both(lambda big=big: verify_draft(big, RECORD), repeat)  # type: ignore[misc]
        c_small = timed_both(lambda small=small: verify_draft(small, RECORD), repeat)[1]  # type: ignore[misc]
        t_bare = timed(lambda big=big: BARE_SPLIT.split(big), 3)  # type: ignore[misc]
        print(
            f"{name:<22}{mb / t_big:>8.2f}{mb / c_big:>10.2f}{mb / t_bare:>17.1f}"
            f"{t_big / t_bare:>7.0f}x{c_big / c_small:>16.1f}"
        )
    imp, first, first_cpu = first_call_ms()
    print(
        f"\nimport trustgate {imp:.0f} ms; first verify_draft after import {first:.1f} ms "
        f"({first_cpu:.1f} ms CPU)"
    )
    print("targets: ordinary >= 10 MB/s; growth ~4.0 (linear); first call <= 100 ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
