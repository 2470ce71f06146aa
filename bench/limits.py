"""What the caps of trustgate._limits cost at their edge, and what they refuse.

1. The largest changes manifest the caps allow (10,000 citations, about 8 MiB of JSON,
   100 files of 400 lines) read by the bounded loader, parsed and replayed against a
   workspace, beside a plain ``json.loads`` of the same text (the baseline, same run).
2. The manifest of the issue (10^6 citations) refused: as JSON text (what a reader or
   the CLI sees) and as already parsed objects (what a node may return).
3. JSON nested 100,000 deep refused.
4. check_citations and check_integrity on 1,000,000-character adversarial drafts (the
   draft cap), beside ``re.findall(r"\\w+")`` over the same text (a linear baseline).

Time is wall clock (median of a few runs); memory is the tracemalloc peak of the call.
The machine is shared: compare the ratios, not the absolute figures.
"""

from __future__ import annotations

import gc
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trustgate import _limits
from trustgate._claims import parse_manifest
from trustgate.errors import ClaimTooLarge
from trustgate.evidence.brief import Brief, EvidenceSet
from trustgate.evidence.workspace import _RACY_NS, Workspace
from trustgate.verifiers.contracts.citations import check_citations
from trustgate.verifiers.files.citations import replay_manifest
from trustgate.verifiers.integrity.check import check_integrity

REPEATS = 3


def measure(fn: Callable[[], Any], repeats: int = REPEATS) -> tuple[float, float, Any]:
    """(median seconds, peak MiB of one traced run, result)."""
    times = []
    result = None
    for _ in range(repeats):
        gc.collect()
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    gc.collect()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return statistics.median(times), peak / 2**20, result


def refused(fn: Callable[[], Any]) -> Callable[[], str]:
    def run() -> str:
        try:
            fn()
        except ClaimTooLarge as exc:
            return str(exc)
        return "NOT REFUSED"

    return run


def largest_manifest(root: Path) -> str:
    n_files, n_lines = 100, 400
    per_citation = _limits.MAX_CLAIM_BYTES // _limits.MAX_CITATIONS - 120
    files = []
    for i in range(n_files):
        lines = [
            f"v{i}_{n} = '" + ("x" * (per_citation - 20)) + f"{n:06d}'" for n in range(n_lines)
        ]
        (root / f"m{i:03d}.py").write_text("\n".join(lines) + "\n")
        files.append(lines)
    items = []
    for item in range(100):
        evidence = []
        for c in range(_limits.MAX_CITATIONS // 100):
            f = (item * 7 + c) % n_files
            line = (c * 13) % n_lines + 1
            evidence.append({"file": f"m{f:03d}.py", "line": line, "content": files[f][line - 1]})
        items.append({"item": f"item {item}", "status": "already_correct", "evidence": evidence})
    text = json.dumps(items)
    while len(text) > _limits.MAX_CLAIM_BYTES:  # trim to fit the cap exactly
        items[-1]["evidence"].pop()
        text = json.dumps(items)
    return text


def main() -> None:
    print(
        f"python {sys.version.split()[0]}; caps: claim {_limits.MAX_CLAIM_BYTES:,} B, "
        f"depth {_limits.MAX_JSON_DEPTH}, citations {_limits.MAX_CITATIONS:,}, "
        f"draft {_limits.MAX_DRAFT_CHARS:,} chars"
    )
    tmp = Path(tempfile.mkdtemp(prefix="tg-bench-limits-"))
    try:
        text = largest_manifest(tmp)
        n = sum(len(i["evidence"]) for i in json.loads(text))
        time.sleep(_RACY_NS / 1e9 + 0.1)  # let the files settle (see Workspace's cache)
        base_t, base_m, _ = measure(lambda: json.loads(text))

        def full() -> Any:
            return replay_manifest(_limits.loads_json(text, "manifest"), Workspace(tmp))

        full_t, full_m, findings = measure(full)
        assert len(findings) == n and all(f.passed for f in findings), findings[:3]
        print("\n1. largest manifest the caps allow")
        print(f"   {n:,} citations, {len(text):,} bytes of JSON, 100 files x 400 lines")
        print(f"   json.loads alone (baseline)    : {base_t * 1e3:8.1f} ms  peak {base_m:7.1f} MiB")
        print(f"   loads_json + parse + replay    : {full_t * 1e3:8.1f} ms  peak {full_m:7.1f} MiB")
        print(
            f"   ratio to the baseline          : {full_t / base_t:8.1f}x time, "
            f"{full_m / base_m:.1f}x memory"
        )

        cite = {"file": "a.py", "line": 1, "content": "import os"}
        million = [{"item": "x", "status": "already_correct", "evidence": [cite] * 10**6}]
        million_text = json.dumps(million)
        t_text, m_text, msg = measure(refused(lambda: parse_manifest(million_text)))
        t_obj, m_obj, msg2 = measure(refused(lambda: parse_manifest(million)))
        print("\n2. the manifest of the issue: 10^6 citations")
        print(
            f"   as {len(million_text):,} bytes of JSON : {t_text * 1e3:8.2f} ms  "
            f"peak {m_text:7.2f} MiB  -> {msg}"
        )
        print(
            f"   as parsed objects           : {t_obj * 1e3:8.2f} ms  peak {m_obj:7.2f} MiB"
            f"  -> {msg2}"
        )

        deep = "[" * 100_000 + "]" * 100_000
        t_deep, m_deep, msg3 = measure(refused(lambda: _limits.loads_json(deep)))
        print("\n3. JSON nested 100,000 deep")
        print(f"   refused in {t_deep * 1e3:.2f} ms, peak {m_deep:.2f} MiB -> {msg3}")

        brief = Brief(
            citations=[
                {"id": "ISO/IEC 27001:2022 A.5.9", "text": "Inventory of information assets"},
                "GDPR Article 32(1)",
                "clause 9.2",
            ]
        )
        evidence = EvidenceSet(urls=["https://example.com/a"], prices=["$5"])
        size = _limits.MAX_DRAFT_CHARS
        units = {
            "prose": "The register is kept current by the asset owner each quarter. ",
            "annex list": "A.5.9, ",
            "clause lists": "clauses 9.2 and 9.3 and ",
            "quoted citations": 'A.5.9 "Inventory of information x" ',
            "open quotes": "A.5.9 “ A.5.9 ‘ A.5.9 « ",
            "digit groups": "1 000 ",
            "dollars": "$1,000,000 ",
            "emails": "a@b.c ",
            "fullwidth prices": "\uff04\uff11 ",
            "brackets (capped)": "[" * 19_000 + " word" * 196_000,
        }
        print(f"\n4. {size:,}-character adversarial drafts (median of {REPEATS})")
        print(
            f"   {'draft':<20} {'words baseline':>14} {'check_citations':>16} "
            f"{'check_integrity':>16}"
        )
        for name, unit in units.items():
            draft = (unit * (size // len(unit) + 1))[:size]
            b, _, _ = measure(lambda d=draft: re.findall(r"\w+", d))
            c, cm, _ = measure(lambda d=draft: check_citations(d, brief))
            i, im, _ = measure(lambda d=draft: check_integrity(d, evidence))
            print(
                f"   {name:<20} {b * 1e3:11.0f} ms {c:9.2f} s {c / b:4.0f}x "
                f"{i:9.2f} s {i / b:4.0f}x   peak {max(cm, im):6.1f} MiB"
            )
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
