"""The batch reader and the hashing reader read a file that changes under them as the
plain read does: one that grew since ``fstat`` is read on to its end or refused past the
cap, one cut short is what was there; the bytes handed out always hash to the digest."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from trustgate.errors import EvidenceRefused
from trustgate.evidence import _paths

BODY = b"0123456789abcdef\n" * 40_000  # 680 KB: several steps of the hashing read


def changing(monkeypatch: pytest.MonkeyPatch, path: Path, change: bytes | int) -> None:
    """After the next ``fstat``, append ``change`` (bytes) or cut the file to it (int)."""
    real = os.fstat
    done = []

    def fstat(fd: int) -> Any:
        st = real(fd)
        if not done:
            done.append(True)
            with open(path, "r+b") as fh:
                if isinstance(change, int):
                    fh.truncate(change)
                else:
                    fh.seek(0, os.SEEK_END)
                    fh.write(change)
        return st

    monkeypatch.setattr(os, "fstat", fstat)


def hashed(root: Path, name: str, max_bytes: int) -> tuple[bytes, str]:
    opened = _paths.open_in_root(str(root), name, None)
    try:
        with _paths.read_hashed(opened, max_bytes, name) as (data, digest):
            return bytes(data), digest
    finally:
        os.close(opened.fd)


def batched(root: Path, name: str, max_bytes: int) -> tuple[bytes, str]:
    with _paths.Reader(str(root), None) as reader:
        data = reader.read(name, max_bytes)
    return data, hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("read", [hashed, batched])
@pytest.mark.parametrize("busy", [False, True])
def test_a_file_that_grew_is_read_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: Any, busy: bool
) -> None:
    (tmp_path / "f.txt").write_bytes(BODY)
    changing(monkeypatch, tmp_path / "f.txt", b"appended after fstat\n")
    if busy:
        assert _paths._scratch_lock.acquire(blocking=False)
    try:
        data, digest = read(tmp_path, "f.txt", 4 * len(BODY))
    finally:
        if busy:
            _paths._scratch_lock.release()
    assert data == BODY + b"appended after fstat\n"
    assert digest == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("read", [hashed, batched])
def test_a_file_that_grew_past_the_cap_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: Any
) -> None:
    (tmp_path / "f.txt").write_bytes(BODY)
    changing(monkeypatch, tmp_path / "f.txt", b"x" * 100)
    with pytest.raises(EvidenceRefused) as err:
        read(tmp_path, "f.txt", len(BODY) + 10)
    assert err.value.code == "too_large" and "grew past" in err.value.message
    assert not _paths._scratch_lock.locked()


@pytest.mark.parametrize("read", [hashed, batched])
def test_a_file_cut_short_is_what_was_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: Any
) -> None:
    (tmp_path / "f.txt").write_bytes(BODY)
    changing(monkeypatch, tmp_path / "f.txt", 1000)
    data, digest = read(tmp_path, "f.txt", len(BODY))
    assert data == BODY[:1000] and digest == hashlib.sha256(BODY[:1000]).hexdigest()
