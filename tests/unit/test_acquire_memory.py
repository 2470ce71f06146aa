"""Acquisition and hashing read a file once and copy it no more than they must: a whole
file's bytes are hashed and decoded where they were read, a range of lines is cut
without splitting the file, and the refusals and exact bytes stay what they were."""

from __future__ import annotations

import hashlib
import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trustgate.errors import EvidenceRefused
from trustgate.evidence import _paths
from trustgate.evidence import workspace as workspace_module
from trustgate.files import HashClaim, InMemoryLedger, Locator, Workspace, check_hash_claim

SIZE = 2 * 1024 * 1024
LINE = "2026-11-30T14:02:11Z checkout-api pool=checkout wait_ms=9200 status=503\n"


@pytest.fixture
def big(tmp_path: Path) -> Workspace:
    text = (LINE * (SIZE // len(LINE) + 1))[:SIZE]
    (tmp_path / "big.log").write_text(text)
    (tmp_path / "other.log").write_text(text.upper())
    return Workspace(tmp_path)


def peak(fn: Callable[[], object]) -> int:
    """Bytes allocated at the high point of ``fn`` beyond what was held before it."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_whole_file_acquisition_holds_one_copy(big: Workspace) -> None:
    loc = Locator(path="big.log")
    first = big.acquire(loc)  # (the first read may size the buffer)
    assert peak(lambda: big.acquire(loc)) < 1.5 * SIZE  # the text, not also a second buffer
    again = big.acquire(loc)
    data = Path(big.root, "big.log").read_bytes()
    assert again.excerpt == first.excerpt == data.decode()
    assert again.content_hash == first.content_hash == hashlib.sha256(data).hexdigest()


def test_hash_check_copies_nothing(big: Workspace) -> None:
    want = hashlib.sha256(Path(big.root, "big.log").read_bytes()).hexdigest()
    assert big.sha256("big.log") == want
    assert peak(lambda: big.sha256("big.log")) < 0.5 * SIZE
    assert check_hash_claim(HashClaim(path="big.log", sha256=want), big).passed


def test_a_range_of_lines_does_not_split_the_file(big: Workspace) -> None:
    loc = Locator(path="big.log", start_line=2, end_line=3)
    got = big.acquire(loc)
    assert got.excerpt == LINE * 2
    assert peak(lambda: big.acquire(loc)) < 1.5 * SIZE  # the bytes read, nothing more


def test_threads_acquiring_at_once_each_get_their_own_bytes(big: Workspace) -> None:
    for buffer_busy in (False, True):
        _acquire_in_threads(big, buffer_busy)


def _acquire_in_threads(big: Workspace, buffer_busy: bool) -> None:
    want = {
        p: hashlib.sha256(Path(big.root, p).read_bytes()).hexdigest()
        for p in ("big.log", "other.log")
    }
    bad: list[str] = []
    ledger = InMemoryLedger()

    def run(path: str) -> None:
        word = "checkout" if path == "big.log" else "CHECKOUT"
        for _ in range(5):
            art = big.acquire(Locator(path=path), ledger)
            art.check_integrity()  # the excerpt hashes to the content hash
            if art.content_hash != want[path] or (art.excerpt or "")[21:29] != word:
                bad.append(path)

    threads = [threading.Thread(target=run, args=(p,)) for p in ("big.log", "other.log") * 2]
    if buffer_busy:  # every read takes the path for when the reused buffer is in use
        assert _paths._scratch_lock.acquire(blocking=False)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        if buffer_busy:
            _paths._scratch_lock.release()
    assert not bad


@pytest.mark.parametrize("buffer_busy", [False, True])
def test_refusals_of_a_reused_read(tmp_path: Path, buffer_busy: bool) -> None:
    (tmp_path / "bin.dat").write_bytes(b"abc\x00def")
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    ws = Workspace(tmp_path, max_bytes=16)
    (tmp_path / "huge.txt").write_text("x" * 17)
    if buffer_busy:
        assert _paths._scratch_lock.acquire(blocking=False)
    for path, code in [
        ("bin.dat", "binary_file"),
        ("latin.txt", "not_utf8"),
        ("huge.txt", "too_large"),
    ]:
        for loc in (Locator(path=path), Locator(path=path, start_line=1)):
            with pytest.raises(EvidenceRefused) as err:
                ws.acquire(loc)
            assert err.value.code == code, (path, loc)
        with pytest.raises(EvidenceRefused) as err:
            ws.sha256(path) if code == "too_large" else ws.read_text(path)
        assert err.value.code == code
    if buffer_busy:
        _paths._scratch_lock.release()
    assert not _paths._scratch_lock.locked()  # a refusal does not keep the buffer


line_ends = st.sampled_from(["\n", "\r\n", "\r"])
texts = st.lists(
    st.tuples(
        st.text(
            st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=6
        ),
        line_ends,
    ),
    max_size=8,
).map(lambda parts: "".join(a + b for a, b in parts))


@given(texts, st.booleans(), st.integers(-1, 10), st.integers(0, 4))
def test_a_range_is_the_lines_splitlines_would_give(
    text: str, ends: bool, first: int, span: int
) -> None:
    data = (text + ("" if ends else "tail")).encode()
    lines = data.splitlines(keepends=True)
    last = first + span
    if first < 1 or last > len(lines):
        with pytest.raises(EvidenceRefused) as err:
            workspace_module._slice_lines(data, first, last, "f")
        assert err.value.code == "line_out_of_range"
        assert err.value.detail["line_count"] == len(lines)
    else:
        want = b"".join(lines[first - 1 : last])
        assert workspace_module._slice_lines(data, first, last, "f") == want
