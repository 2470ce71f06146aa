"""Throughput of ``verify_draft``, its growth with size, and its first call.

A gate sits on every crossing of a graph, so the draft verifier has to be cheap next
to the model call it guards, cheap on the first call after import, and linear on text
built to make it slow. This prints, all measured in the same run:

* ``verify_draft`` (default rules) in MB/s, CPU and wall time, as the range over the
  repetitions, on 1 MB of:
  - *ordinary* incident text: the honest cited drafts of
    ``tests/corpus/honest_drafts.json`` (prose, lists, tables, a code block),
  - *trigger-dense* text: sentences of the tuning corpus, where two sentences in
    three hold a causal or hedge word,
  - each *adversarial* input below;
* beside each, a *bare split* of the same text in the same run: ``str.split`` into
  sentences at ". " and into words, and a set test of each sentence's words against
  the trigger words of both readings (the floor: what any sentence-by-sentence look
  at a draft costs in Python), and the ratio of the two;
* growth: CPU time per MB at 0.25, 0.5, 1, 2 and 4 MB for every input, and the ratio
  of the time per MB at 4 MB to that at 0.25 MB (1.0 is linear; a backtracking
  pattern shows as 16 or far more);
* the first call after ``import trustgate`` in a fresh interpreter (target <= 100 ms).

Targets (issue 13): >= 10 MB/s on ordinary text, linear on adversarial text, first
call <= 100 ms. Run: ``.venv/bin/python bench/scan.py`` (``--reps N`` for more
repetitions, ``--no-growth`` to skip the growth table).
"""

from __future__ import annotations

import json
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


def first_call_ms() -> tuple[float, float, float]:
    """(import trustgate.drafts, first verify_draft after it, its CPU time) in a fresh
    interpreter, in ms (the documented import; ``trustgate.verify_draft`` is a
    deprecated alias whose lazy import brings in far more)."""
    code = (
        "import time\n"
        "t0 = time.perf_counter()\n"
        "import trustgate.drafts as drafts\n"
        "t1 = time.perf_counter()\n"
        "c1 = time.process_time()\n"
        "drafts.verify_draft('Latency rose at 14:02. [[1]] The deploy exhausted the pool.',"
        " drafts.Record.from_text('14:02 p99 9.2s'))\n"
        "t2 = time.perf_counter()\n"
        "c2 = time.process_time()\n"
        "print((t1 - t0) * 1000, (t2 - t1) * 1000, (c2 - c1) * 1000)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def _triggers() -> frozenset[str]:
    from trustgate.verifiers.drafts import _triggers as triggers

    return triggers.causal().keys | triggers.hedge().keys


def bare_split(text: str, triggers: frozenset[str]) -> int:
    """The floor: split into sentences and words with ``str.split``, test each
    sentence's words against the trigger words. Returns the sentences that hold one."""
    hits = 0
    for sentence in text.lower().split(". "):
        if not triggers.isdisjoint(sentence.split()):
            hits += 1
    return hits


def cpu_and_wall(fn: Callable[[], object], reps: int) -> tuple[list[float], list[float]]:
    """CPU (process) and wall times of ``reps`` runs: on a shared machine the CPU time
    says what the code costs, the wall time what a caller waits."""
    cpu: list[float] = []
    wall: list[float] = []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return cpu, wall


def _rate(mb: float, times: list[float]) -> str:
    """MB/s as ``slowest–fastest`` over the runs."""
    lo, hi = mb / max(times), mb / min(times)
    return f"{lo:.1f}" if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f}–{hi:.1f}"


INPUTS: list[tuple[str, Callable[[int], str]]] = [
    ("ordinary incident", ordinary_draft),
    ("trigger-dense", trigger_dense_draft),
    *ADVERSARIAL.items(),
]
GROWTH_MB = (0.25, 0.5, 1.0, 2.0, 4.0)


def main() -> int:
    reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 3
    triggers = _triggers()
    verify_draft("warm up the import. The deploy caused it.", RECORD)
    print(
        f"{reps} runs each on 1 MB; MB/s as slowest–fastest run\n"
        f"{'input':<22}{'CPU MB/s':>14}{'wall MB/s':>14}{'bare split CPU':>17}"
        f"{'× bare':>12}"
    )
    for name, make in INPUTS:
        big = make(TARGET_BYTES)
        mb = len(big.encode("utf-8")) / 1_000_000
        cpu, wall = cpu_and_wall(lambda big=big: verify_draft(big, RECORD), reps)  # type: ignore[misc]
        bare = cpu_and_wall(lambda big=big: bare_split(big, triggers), reps)[0]  # type: ignore[misc]
        pairs = sorted(c / b for c, b in zip(cpu, bare, strict=True))
        ratio = f"{pairs[0]:.1f}–{pairs[-1]:.1f}"
        print(
            f"{name:<22}{_rate(mb, cpu):>14}{_rate(mb, wall):>14}{_rate(mb, bare):>17}{ratio:>12}"
        )
    if "--no-growth" not in sys.argv:
        sizes = "".join(f"{f'{size:g} MB':>9}" for size in GROWTH_MB)
        print(f"\ngrowth: CPU ms per MB (best of 2) at\n{'input':<22}{sizes}{'4 / 0.25':>10}")
        for name, make in INPUTS:
            per_mb: list[float] = []
            for size in GROWTH_MB:
                text = make(int(size * TARGET_BYTES))
                mb = len(text.encode("utf-8")) / 1_000_000
                cpu = cpu_and_wall(lambda text=text: verify_draft(text, RECORD), 2)[0]  # type: ignore[misc]
                per_mb.append(min(cpu) / mb * 1000)
            cells = "".join(f"{v:>9.0f}" for v in per_mb)
            print(f"{name:<22}{cells}{per_mb[-1] / per_mb[0]:>10.2f}")
    imp, first, first_cpu = first_call_ms()
    print(
        f"\nimport trustgate.drafts {imp:.0f} ms; first verify_draft after it {first:.1f} ms "
        f"({first_cpu:.1f} ms CPU)"
    )
    print("targets: ordinary >= 10 MB/s; growth ~1.0 (linear); first call <= 100 ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
