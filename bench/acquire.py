"""Acquisition of an 8 MB file against raw read + sha256 of the same bytes, same run.

Acquisition = path guard, exact bytes, text check (NUL scan, UTF-8), sha256, id.
Target (a goal, not a gate): acquisition throughput >= 0.8x the raw read + hash.
"""

from __future__ import annotations

import hashlib
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from trustgate.files import Locator, Workspace

SIZE, REPEATS = 8 * 1000 * 1000, 15


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="tg-bench-acquire-"))
    try:
        line = "2026-11-30T14:02:11Z checkout-api pool=checkout wait_ms=9200 status=503\n"
        text = (line * (SIZE // len(line) + 1))[: SIZE - 1] + "\n"
        (tmp / "big.log").write_text(text)
        ws = Workspace(tmp, max_bytes=16 * 1024 * 1024)
        loc = Locator(path="big.log")
        raws, acqs = [], []
        for _ in range(REPEATS):
            t = time.perf_counter()
            with open(tmp / "big.log", "rb") as fh:
                hashlib.sha256(fh.read()).hexdigest()
            raws.append(time.perf_counter() - t)
            t = time.perf_counter()
            art = ws.acquire(loc)
            acqs.append(time.perf_counter() - t)
        assert art.content_hash == hashlib.sha256(text.encode()).hexdigest()
        raw, acq = statistics.median(raws), statistics.median(acqs)
        mb = SIZE / 1e6
        print(f"file size                    : {mb:.1f} MB (median of {REPEATS})")
        print(f"raw read + sha256            : {raw * 1e3:7.2f} ms ({mb / raw:7.1f} MB/s)")
        print(f"Workspace.acquire            : {acq * 1e3:7.2f} ms ({mb / acq:7.1f} MB/s)")
        print(f"throughput ratio acquire/raw : {raw / acq:7.2f}x  (target >= 0.8x)")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
