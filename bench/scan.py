"""Throughput of ``verify_draft`` on a 1 MB draft, beside two segmenters, same run.

A gate sits on every crossing of a graph, so the draft verifier has to be cheap next
to the model call it guards. This prints MB/s for:

* a bare regex sentence split (the floor: what any split costs),
* ``verify_draft`` with the default rules (segmentation, citations, rules, gaps),
* pysbd segmentation of the same text (the general-purpose segmenter trustgate does
  not use); pysbd is slow enough that it runs on a slice and is extrapolated, which
  the output says.

Targets: verify_draft >= 15 MB/s and >= 100x pysbd. Run:
``.venv/bin/python bench/scan.py``.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from trustgate.evidence.record import Record  # noqa: E402
from trustgate.verifiers.draft import verify_draft  # noqa: E402
from trustgate.verifiers.segment import segment  # noqa: E402

TARGET_BYTES = 1_000_000
PYSBD_SLICE = 50_000
BARE_SPLIT = re.compile(r"(?<=[.!?])\s+")


def build_draft() -> tuple[str, Record]:
    """A realistic 1 MB postmortem draft: headings, prose, bullets, a table, code."""
    corpus = ROOT / "tests" / "corpus" / "draft_sentences.jsonl"
    rows = [json.loads(line) for line in corpus.read_text("utf-8").splitlines() if line]
    plain = [r["text"] for r in rows if r["label"] == "plain"]
    causal = [r["text"] for r in rows if r["label"] == "causal"]
    hedged = [r["text"] for r in rows if r["label"] == "hedged"]
    record = Record.from_lines(f"14:{i % 60:02d} event {i}" for i in range(1, 401))
    parts: list[str] = []
    size = 0
    i = 0
    while size < TARGET_BYTES:
        section = [f"## Section {i}\n"]
        para = []
        for j in range(6):
            k = i * 7 + j
            para.append(plain[k % len(plain)])
            if j == 2:
                para.append(f"{causal[k % len(causal)][:-1]} [[{k % 400 + 1}]].")
        if i % 3 == 0:
            para.append(causal[i % len(causal)])  # uncited: deleted
        if i % 5 == 0:
            para.append(hedged[i % len(hedged)])  # hedged: deleted
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
        size += len(chunk.encode("utf-8"))
        i += 1
    return "".join(parts), record


def timed(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    draft, record = build_draft()
    mb = len(draft.encode("utf-8")) / 1_000_000
    t_bare = timed(lambda: BARE_SPLIT.split(draft))
    t_seg = timed(lambda: segment(draft))
    t_verify = timed(lambda: verify_draft(draft, record))
    verdict = verify_draft(draft, record)

    try:
        import pysbd
    except ImportError:  # pragma: no cover
        pysbd = None
    sbd_rate = None
    if pysbd is not None:
        piece = draft[:PYSBD_SLICE]
        seg = pysbd.Segmenter(language="en", clean=False, char_span=False)
        t_sbd = timed(lambda: seg.segment(piece), repeat=1)
        sbd_rate = len(piece.encode("utf-8")) / 1_000_000 / t_sbd

    print(
        f"draft: {mb:.2f} MB, {len(verdict.kept)} kept units, {len(verdict.removed)} removed, "
        f"{len(verdict.gaps)} gaps"
    )
    print(f"bare regex split      {mb / t_bare:9.1f} MB/s")
    print(f"trustgate segment     {mb / t_seg:9.1f} MB/s")
    print(f"verify_draft          {mb / t_verify:9.1f} MB/s   (target >= 15)")
    if sbd_rate is not None:
        print(
            f"pysbd segmentation    {sbd_rate:9.3f} MB/s   (measured on the first "
            f"{PYSBD_SLICE // 1000} kB, extrapolated)"
        )
        print(f"ratio verify_draft / pysbd      {mb / t_verify / sbd_rate:8.0f}x  (target >= 100x)")
        print(f"ratio segment / pysbd           {mb / t_seg / sbd_rate:8.0f}x")
    print(f"ratio bare split / verify_draft {t_verify / t_bare:8.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
