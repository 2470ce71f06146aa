"""The workspace: the one place file truth is read from.

Every read goes through the path guard afresh (a symlink swapped after a first read is
caught by the next), and reads text only when it is text. :meth:`Workspace.read_lines`
serves lines from a cache keyed on the real path and the file's ``(dev, inode, size,
mtime_ns, ctime_ns)``; citation replay and acquisition never use it (a replay reads
each file once per call through one :class:`~trustgate.evidence._paths.Reader` and
keeps nothing: filling a cache cost more than the read it saved on a first crossing,
and held every file's lines). ``ctime`` is what makes the
key trustworthy: a rewrite in place at the same size with ``mtime`` put back (``cp
-p``, ``tar``, ``touch -r``) still moves it. File times tick coarsely, so a file whose
``mtime`` or ``ctime`` lies within :data:`_RACY_NS` of the moment it was read could be
rewritten in the same tick without a visible change; such a file is not cached (git
calls this the racy-clean problem and solves it the same way).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import NoReturn

from trustgate._claims import Locator
from trustgate.errors import ConfigurationError, EvidenceRefused
from trustgate.evidence import _paths, git
from trustgate.evidence.artifacts import Artifact, ArtifactStore, file_artifact

__all__ = ["DEFAULT_MAX_BYTES", "Workspace"]

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
_CACHE_BYTES = 64 * 1024 * 1024
# Files changed less than this before they were read are never cached (see above);
# 2 s covers the coarsest common timestamp granularity (FAT's mtime).
_RACY_NS = 2_000_000_000
Identity = tuple[int, int, int, int, int]
Lines = tuple[Sequence[str], bool]
"""A file's lines and whether it is all ASCII."""


class _LineCache:
    """LRU of decoded lines, bounded by bytes; safe under threads (and so under asyncio)."""

    def __init__(self, max_bytes: int = _CACHE_BYTES) -> None:
        self._lock = threading.Lock()
        self._max = max_bytes
        self._size = 0
        self._data: OrderedDict[str, tuple[Identity, Lines, int]] = OrderedDict()

    def get(self, real: str, identity: Identity) -> Lines | None:
        with self._lock:
            hit = self._data.get(real)
            if hit is None or hit[0] != identity:
                return None
            self._data.move_to_end(real)
            return hit[1]

    def put(self, real: str, identity: Identity, lines: Lines, nbytes: int, read_at: int) -> None:
        """Keep ``lines`` unless too big, or changed too close to ``read_at`` (ns) to tell
        a later same-tick rewrite apart."""
        if nbytes > self._max or max(identity[3], identity[4]) >= read_at - _RACY_NS:
            with self._lock:
                old = self._data.pop(real, None)
                if old is not None:
                    self._size -= old[2]
            return
        with self._lock:
            old = self._data.pop(real, None)
            if old is not None:
                self._size -= old[2]
            self._data[real] = (identity, lines, nbytes)
            self._size += nbytes
            while self._size > self._max and self._data:
                _, (_, _, n) = self._data.popitem(last=False)
                self._size -= n

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._size = 0


class Workspace:
    """A directory (usually a git checkout) whose files agents cite.

    Args:
        root: the directory; paths in claims are relative to it.
        scopes: optional allowed sub-paths (``["src", "docs/api.md"]``); a path whose
            *real* location is outside every scope is refused ``outside_scope``.
        max_bytes: files larger than this are refused ``too_large`` (default 8 MiB).

    Example:
        ```python
        import tempfile, pathlib
        from trustgate.files import FileCitation, Workspace, replay_citation

        root = pathlib.Path(tempfile.mkdtemp())
        (root / "app.py").write_text("def handler(event):\\n    return validate(event)\\n")
        finding = replay_citation(FileCitation(file="app.py", line=2,
                                               content="return validate(event)"),
                                  Workspace(root))
        assert finding.passed
        ```
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        scopes: Iterable[str] | None = None,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        real = os.path.realpath(os.fspath(root))
        if not os.path.isdir(real):
            raise ConfigurationError(f"workspace root {os.fspath(root)!r} is not a directory")
        if max_bytes <= 0:
            raise ConfigurationError("max_bytes must be positive")
        self.root = real
        self.max_bytes = max_bytes
        self.scopes = self._normalise_scopes(scopes)
        self._cache = _LineCache()

    def __repr__(self) -> str:
        return f"Workspace({self.root!r}, scopes={list(self.scopes) if self.scopes else None})"

    def _normalise_scopes(self, scopes: Iterable[str] | None) -> tuple[str, ...] | None:
        if scopes is None:
            return None
        if isinstance(scopes, str):
            scopes = [scopes]
        out: list[str] = []
        for scope in scopes:
            try:
                parts = _paths.normalise(scope)
            except EvidenceRefused as exc:
                if exc.code == "not_a_file":  # "." or "": the whole root
                    out.append("")
                    continue
                raise ConfigurationError(f"invalid scope {scope!r}: {exc.message}") from None
            lexical = "/".join(parts)
            out.append(lexical)
            real = os.path.realpath(os.path.join(self.root, *parts))
            if real.startswith(self.root + os.sep):
                resolved = os.path.relpath(real, self.root).replace(os.sep, "/")
                if resolved != lexical:
                    out.append(resolved)
        return tuple(dict.fromkeys(out))

    # -- reading -------------------------------------------------------------------

    def _open(self, path: object) -> _paths.Opened:
        return _paths.open_in_root(self.root, path, self.scopes)

    def _reader(self) -> _paths.Reader:
        """The root and its directories opened once, for a batch of reads (one replay
        call); use it as a context manager."""
        return _paths.Reader(self.root, self.scopes)

    def read_bytes(self, path: str, revision: str | None = None) -> bytes:
        """The file's exact bytes (binary allowed), guarded; at ``revision`` through git."""
        return self._read(path, revision)[1]

    def _read(self, path: str, revision: str | None) -> tuple[str, bytes]:
        if revision is not None:
            parts = _paths.normalise(path)
            commit = git.resolve_revision(self.root, revision)
            return git.read_blob(self.root, commit, parts, path, self.scopes, self.max_bytes)
        opened = self._open(path)
        try:
            return opened.rel, _paths.read_all(opened, self.max_bytes, path)
        finally:
            os.close(opened.fd)

    def read_text(self, path: str, revision: str | None = None) -> str:
        """The file as text; binary and invalid UTF-8 are refused with their own codes."""
        return _paths.decode_text(self.read_bytes(path, revision), path)

    def read_lines(self, path: str) -> tuple[str, ...]:
        """The file's lines without terminators (``\\r\\n``, ``\\n``, ``\\r``), guarded afresh.

        The guard runs on every call; only the decoding is cached, and only while the
        real file keeps its identity.
        """
        read_at = time.time_ns()
        opened = self._open(path)
        try:
            real, identity = opened.real, opened.identity
            hit = self._cache.get(real, identity)
            if hit is not None:
                return tuple(hit[0])
            data = _paths.read_all(opened, self.max_bytes, path)
        finally:
            os.close(opened.fd)
        text = _paths.decode_text(data, path)
        lines = _paths.split_lines(text)
        self._cache.put(real, identity, (lines, text.isascii()), len(data), read_at)  # (a tuple)
        return lines

    def _text_lines(
        self, path: str, *, reader: _paths.Reader, parts: tuple[str, ...] | None = None
    ) -> Lines:
        """The lines, and whether the file is all ASCII (then no line needs NFC), read
        now through a batch's ``reader`` (never from the cache). ``parts`` is
        ``_paths.normalise(path)`` when the caller has it."""
        text = _paths.decode_text(reader.read(path, self.max_bytes, parts), path)
        return _paths.line_list(text), text.isascii()  # (O(1) on a str)

    def clear_cache(self) -> None:
        self._cache.clear()

    def sha256(self, path: str, revision: str | None = None) -> str:
        """Hex sha256 of the file's exact bytes, recomputed on every call."""
        if revision is not None:
            return hashlib.sha256(self.read_bytes(path, revision)).hexdigest()
        opened = self._open(path)
        try:
            with _paths.read_hashed(opened, self.max_bytes, path) as (_, digest):
                return digest
        finally:
            os.close(opened.fd)

    # -- repository state ----------------------------------------------------------

    def changed_files(self, base_revision: str = "HEAD") -> list[str]:
        """Files changed since ``base_revision`` (diff to the working tree + untracked).

        Always computed from git, never from an earlier round's state.
        """
        return git.changed_files(self.root, base_revision)

    def resolve_revision(self, revision: str) -> str:
        return git.resolve_revision(self.root, revision)

    # -- frozen evidence -------------------------------------------------------------

    def acquire(self, locator: Locator, ledger: ArtifactStore | None = None) -> Artifact:
        """Read the bytes a locator points at and freeze them as an ``Artifact``.

        Scope check, exact bytes (at the pinned revision through git, else the working
        tree), range check against the real file, sha256 of the excerpt bytes, id from
        the coordinate. With a ``ledger`` the artifact is stored put-if-absent and the
        stored one returned (so the first ``acquired_at`` is kept). Refusals raise
        ``EvidenceRefused`` with the finding code. The bytes are always read now:
        there is no cached path.

        The whole file must be text (no NUL in its first 8 KiB, valid UTF-8), whether
        the locator takes all of it or a range of lines.
        """
        if not isinstance(locator, Locator):
            raise EvidenceRefused(
                "invalid_locator", f"expected a Locator, got {type(locator).__name__}"
            )
        shown = locator.path
        first, last = locator.first, locator.last
        revision = None
        if locator.revision is not None:
            revision = git.resolve_revision(self.root, locator.revision)
        if revision is None and (first is None or last is None):
            # The whole file, hashed as it is read into a reused buffer, then decoded.
            opened = self._open(shown)
            try:
                with _paths.read_hashed(opened, self.max_bytes, shown) as (view, digest):
                    artifact = file_artifact(
                        path=opened.rel,
                        revision=None,
                        start_line=None,
                        end_line=None,
                        data=view,
                        text=_paths.decode_text(view, shown),
                        content_hash=digest,
                    )
            finally:
                os.close(opened.fd)
        else:
            rel, data = self._read(shown, revision)
            if first is None or last is None:
                chunk, text = data, _paths.decode_text(data, shown)
            else:
                _paths.check_text_head(data, shown)
                if not data.isascii():  # (ASCII is UTF-8: no decode needed to know)
                    _paths.decode_text(data, shown)
                chunk = _slice_lines(data, first, last, shown)
                text = chunk.decode("utf-8")  # (cut at line ends of valid UTF-8)
            artifact = file_artifact(
                path=rel,
                revision=revision,
                start_line=first,
                end_line=last,
                data=chunk,
                text=text,
            )
        return ledger.put(artifact) if ledger is not None else artifact


def _slice_lines(data: bytes, first: int, last: int, shown: str) -> bytes:
    """Lines ``first`` to ``last`` with their terminators (``\\r\\n``, ``\\n``, ``\\r``:
    as :func:`~trustgate.evidence._paths.split_lines` counts), found without splitting
    the file: the newlines up to ``last`` are walked, nothing past them is touched."""
    if b"\r" in data or first < 1 or last < first:
        return _slice_split(data, first, last, shown)
    find = data.find
    start = pos = 0
    for i in range(1, last + 1):
        if i == first:
            start = pos
        nl = find(b"\n", pos)
        if nl < 0:
            if pos < len(data) and i == last:  # the last line, without a terminator
                return data[start:]
            return _out_of_range(first, last, i if pos < len(data) else i - 1, shown)
        pos = nl + 1
    return data[start:pos]


def _slice_split(data: bytes, first: int, last: int, shown: str) -> bytes:
    lines = data.splitlines(keepends=True)  # \r\n, \n, \r: as split_lines counts
    n = len(lines)
    if first < 1 or last < first or last > n:
        _out_of_range(first, last, n, shown)
    return b"".join(lines[first - 1 : last])


def _out_of_range(first: int, last: int, n: int, shown: str) -> NoReturn:
    raise EvidenceRefused(
        "line_out_of_range",
        f"lines {first}-{last} are outside {shown!r}, which has {n} line(s)",
        path=shown,
        detail={"start_line": first, "end_line": last, "line_count": n},
    )
