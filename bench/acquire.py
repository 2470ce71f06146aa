"""Acquisition of an 8 MB file against raw read + sha256 of the same bytes, same run.

Acquisition = path guard, exact bytes, text check (NUL scan, UTF-8), sha256, id, the
frozen artifact. The two sides alternate within each round (which goes first swaps
from round to round) and each drops its result before the other runs, so neither
inherits the other's memory. Figures are process CPU time, median and range over the
rounds; the ratio is throughput, taken round by round.

Target (a goal, not a gate): acquisition throughput >= 0.8x the raw read + hash.
"""

from __future__ import annotations

import hashlib
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from trustgate.files import Locator, Workspace

SIZE, REPEATS = 8 * 1000 * 1000, 21


def spread(values: list[float], scale: float, fmt: str) -> str:
    lo, mid, hi = (
        fmt.format(v * scale) for v in (min(values), statistics.median(values), max(values))
    )
    return f"{mid} ({lo}-{hi})"


def timed(fn: Callable[[], object]) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="tg-bench-acquire-"))
    try:
        line = "2026-11-30T14:02:11Z checkout-api pool=checkout wait_ms=9200 status=503\n"
        text = (line * (SIZE // len(line) + 1))[: SIZE - 1] + "\n"
        path = tmp / "big.log"
        path.write_text(text)
        ws = Workspace(tmp, max_bytes=16 * 1024 * 1024)
        loc = Locator(path="big.log")
        want = hashlib.sha256(text.encode()).hexdigest()
        assert ws.acquire(loc).content_hash == want

        def raw() -> None:
            with open(path, "rb") as fh:
                hashlib.sha256(fh.read()).hexdigest()

        def acquire() -> None:
            ws.acquire(loc)

        raw(), acquire()  # warm the page cache and the interpreter
        raws, acqs = [], []
        for r in range(REPEATS):
            if r % 2:
                acqs.append(timed(acquire))
                raws.append(timed(raw))
            else:
                raws.append(timed(raw))
                acqs.append(timed(acquire))
        ratios = [a_raw / a_acq for a_raw, a_acq in zip(raws, acqs, strict=True)]
        mb = SIZE / 1e6
        print(f"file size {mb:.1f} MB; CPU time, median (min-max) of {REPEATS} rounds")
        print(f"raw read + sha256            : {spread(raws, 1e3, '{:.2f}')} ms")
        print(f"Workspace.acquire            : {spread(acqs, 1e3, '{:.2f}')} ms")
        print(
            f"throughput acquire/raw       : {spread(ratios, 1, '{:.2f}')}x, round by round "
            "(target >= 0.8x)"
        )
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
