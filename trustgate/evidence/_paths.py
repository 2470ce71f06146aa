"""The path guard: turn an agent-supplied path into a file descriptor inside the root.

Why file descriptors and ``O_NOFOLLOW``: checking a resolved path and then opening it
by name leaves a window in which a component can be swapped for a symlink. Here every
component is opened relative to its already-opened parent with ``O_NOFOLLOW``; a
symlink anywhere forces the slow path, which resolves it, checks containment, and then
walks the resolved path the same way. Nothing is ever opened through a link that was
not checked.

A batch of reads (one replay, one crossing) shares a :class:`Reader`: the root is
opened once and each directory on the way once, each with ``O_NOFOLLOW`` relative to
its already-opened parent, so a file costs one ``open`` relative to its directory's
descriptor and one ``fstat``. A descriptor names the directory it was opened on, not a
path: a directory swapped for a symlink after it was opened is not followed, and the
files read through it are the ones that directory holds.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

from trustgate.errors import EvidenceRefused

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class Opened(NamedTuple):
    """An open regular file inside the root, with the identity used for caching.

    (A named tuple: it is built once per file read, and a frozen dataclass costs
    several times as much to build.)"""

    fd: int
    rel: str  # real path relative to the root, POSIX separators
    root: str  # the workspace root (real, absolute)
    st: os.stat_result

    @property
    def real(self) -> str:
        """The absolute real path (root is real and absolute, rel has no empty, "." or
        ".." part: the join is plain)."""
        root = self.root
        return (root if root.endswith(os.sep) else root + os.sep) + self.rel.replace("/", os.sep)

    @property
    def identity(self) -> tuple[int, int, int, int, int]:
        """What must be unchanged for cached lines to be served: ``ctime_ns`` is in it
        because any write moves it and no writer can set it back (``os.utime``, ``cp
        -p`` and ``touch -r`` restore ``mtime`` only)."""
        st = self.st
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def normalise(path: object) -> tuple[str, ...]:
    """Lexically normalise an agent path, refusing what can never be a workspace path."""
    if not isinstance(path, str):
        raise EvidenceRefused("invalid_path", f"path must be a string, got {type(path).__name__}")
    if "\x00" in path:
        raise EvidenceRefused("nul_byte", "path contains a NUL byte", path=path)
    if not path.strip():
        raise EvidenceRefused("invalid_path", "path is empty", path=path)
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":" and path[0].isalpha()):
        raise EvidenceRefused(
            "absolute_path", f"{path!r} is absolute; cite a path relative to the root", path=path
        )
    split = path.split("/")
    if "" not in split and "." not in split and ".." not in split:
        return tuple(split)  # (already normal: what the walk below would return)
    parts: list[str] = []
    for part in split:
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise EvidenceRefused(
                    "path_traversal",
                    f"{path!r} climbs out of the workspace root with '..'",
                    path=path,
                )
            parts.pop()
        else:
            parts.append(part)
    if not parts:
        raise EvidenceRefused("not_a_file", f"{path!r} names the workspace root", path=path)
    return tuple(parts)


def in_scope(rel: str, scopes: tuple[str, ...] | None) -> bool:
    if scopes is None:
        return True
    return any(s == "" or rel == s or rel.startswith(s + "/") for s in scopes)


def open_root(root: str) -> int:
    """A descriptor for the root (the root itself may be reached through a symlink: it
    was resolved when the workspace was made)."""
    return os.open(root, _DIR_FLAGS & ~os.O_NOFOLLOW)


class _Symlink(Exception):
    pass


def _refusal(
    exc: OSError, name: str, dir_fd: int, parts: tuple[str, ...], i: int, shown: str
) -> Exception:
    """What opening component ``i`` (``name`` under ``dir_fd``) failing with ``exc``
    means: ``_Symlink`` when it is a symlink, else the refusal with its code."""
    if exc.errno == errno.ELOOP:
        return _Symlink()
    if exc.errno == errno.ENOTDIR:
        # A component is a symlink (O_NOFOLLOW|O_DIRECTORY) or a plain file.
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            st = None
        if st is not None and stat.S_ISLNK(st.st_mode):
            return _Symlink()
        return EvidenceRefused(
            "file_missing",
            f"{shown!r} does not exist ({'/'.join(parts[: i + 1])} is not a directory)",
            path=shown,
        )
    if exc.errno == errno.ENOENT:
        return EvidenceRefused("file_missing", f"{shown!r} does not exist", path=shown)
    if exc.errno in (errno.EACCES, errno.EPERM):
        return EvidenceRefused(
            "unreadable", f"{shown!r} cannot be read (permission denied)", path=shown
        )
    if exc.errno == errno.ENXIO:
        return EvidenceRefused("not_a_file", f"{shown!r} is not a regular file", path=shown)
    return EvidenceRefused("unreadable", f"{shown!r} cannot be opened: {exc.strerror}", path=shown)


def _walk(root_fd: int, parts: tuple[str, ...], shown: str) -> int:
    """Open ``parts`` under ``root_fd`` without following any symlink. Caller closes."""
    cur = root_fd
    opened: list[int] = []
    try:
        for i, name in enumerate(parts):
            last = i == len(parts) - 1
            try:
                fd = os.open(name, _FILE_FLAGS if last else _DIR_FLAGS, dir_fd=cur)
            except OSError as exc:
                raise _refusal(exc, name, cur, parts, i, shown) from None
            opened.append(fd)
            cur = fd
        return opened.pop()
    finally:
        for fd in opened:
            os.close(fd)


def open_in_root(
    root: str,
    path: object,
    scopes: tuple[str, ...] | None,
    root_fd: int | None = None,
    parts: tuple[str, ...] | None = None,
) -> Opened:
    """Resolve and open ``path`` under ``root`` (a real, absolute directory path).

    Raises ``EvidenceRefused`` with a stable code for every refusal. Scope is checked on
    the real path, so a symlink cannot lead from an allowed scope into a forbidden one.
    ``parts`` is ``normalise(path)`` when the caller already has it.
    """
    if parts is None:
        parts = normalise(path)
    shown = path if isinstance(path, str) else repr(path)
    own_fd = root_fd is None
    fd_root = open_root(root) if root_fd is None else root_fd
    try:
        try:
            fd, rel = _walk(fd_root, parts, shown), "/".join(parts)
        except _Symlink:
            fd, rel = _after_symlink(root, parts, shown, lambda p: _walk(fd_root, p, shown))
    finally:
        if own_fd:
            os.close(fd_root)
    return _checked(root, fd, rel, scopes, shown)


def _after_symlink(
    root: str, parts: tuple[str, ...], shown: str, walk: Callable[[tuple[str, ...]], int]
) -> tuple[int, str]:
    """For a path whose walk met a symlink: resolve it, check containment, and walk the
    resolved path, which must then hold no symlink at all."""
    rel = _resolve_links(root, parts, shown)
    try:
        return walk(tuple(rel.split("/"))), rel
    except _Symlink:
        raise EvidenceRefused(
            "outside_workspace",
            f"{shown!r} changed while it was being resolved (a symlink appeared)",
            path=shown,
        ) from None


def _checked(root: str, fd: int, rel: str, scopes: tuple[str, ...] | None, shown: str) -> Opened:
    """The opened file, once it is known to be in scope and a regular file (else closed
    and refused)."""
    try:
        if scopes is not None:
            _check_scope(rel, scopes, shown)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(st, shown)
    except BaseException:
        os.close(fd)
        raise
    return Opened(fd, rel, root, st)


def _check_scope(rel: str, scopes: tuple[str, ...], shown: str) -> None:
    if not in_scope(rel, scopes):
        raise EvidenceRefused(
            "outside_scope",
            f"{shown!r} resolves to {rel!r}, outside the allowed scopes {list(scopes)}",
            path=shown,
            detail={"resolved": rel},
        )


def _not_regular(st: os.stat_result, shown: str) -> EvidenceRefused:
    kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
    return EvidenceRefused("not_a_file", f"{shown!r} is {kind}", path=shown)


def _too_large(size: int, max_bytes: int, shown: str) -> EvidenceRefused:
    return EvidenceRefused(
        "too_large",
        f"{shown!r} is {size} bytes, over the {max_bytes}-byte cap",
        path=shown,
        detail={"size": size, "max_bytes": max_bytes},
    )


_MAX_DIRS = 64
"""Directory descriptors a :class:`Reader` keeps open at once (the oldest is closed
first), so a batch citing files in thousands of directories stays within the process's
descriptor limit."""


class Reader:
    """The root and the directories under it, opened once for a batch of reads.

    Each directory is opened with ``O_NOFOLLOW`` relative to its parent's descriptor the
    first time a path needs it, and kept for the batch; each file is then one ``open``
    with ``O_NOFOLLOW`` relative to its directory and one ``fstat``. A symlink anywhere
    takes the same slow path as :func:`open_in_root`. Use it as a context manager (it
    closes every descriptor), one per batch: nothing it holds outlives the batch, so a
    directory swapped between two batches is seen by the second.
    """

    __slots__ = ("_dirs", "_fd", "root", "scopes")

    def __init__(self, root: str, scopes: tuple[str, ...] | None) -> None:
        self.root = root
        self.scopes = scopes
        self._fd = open_root(root)
        self._dirs: dict[tuple[str, ...], int] = {}

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        dirs, self._dirs = self._dirs, {}
        for fd in dirs.values():
            os.close(fd)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def open(self, path: object, parts: tuple[str, ...] | None = None) -> Opened:
        """As :func:`open_in_root`, through this batch's descriptors."""
        if parts is None:
            parts = normalise(path)
        shown = path if isinstance(path, str) else repr(path)
        try:
            fd, rel = self._walk(parts, shown), "/".join(parts)
        except _Symlink:
            fd, rel = _after_symlink(self.root, parts, shown, lambda p: self._walk(p, shown))
        return _checked(self.root, fd, rel, self.scopes, shown)

    def read(self, path: object, max_bytes: int, parts: tuple[str, ...] | None = None) -> bytes:
        """The file's exact bytes, guarded: :meth:`open` and :func:`read_all` in one, with
        one ``fstat`` (what a replay does once per file)."""
        if parts is None:
            parts = normalise(path)
        shown = path if isinstance(path, str) else repr(path)
        try:
            fd, rel = self._walk(parts, shown), ""
        except _Symlink:
            fd, rel = _after_symlink(self.root, parts, shown, lambda p: self._walk(p, shown))
        try:
            if self.scopes is not None:
                _check_scope(rel or "/".join(parts), self.scopes, shown)
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise _not_regular(st, shown)
            size = st.st_size
            if size > max_bytes:
                raise _too_large(size, max_bytes, shown)
            data = os.read(fd, size + 1)
            return data if len(data) == size else _read_on(fd, data, max_bytes, shown)
        finally:
            os.close(fd)

    def _walk(self, parts: tuple[str, ...], shown: str) -> int:
        last = len(parts) - 1
        if last == 0:
            dir_fd = self._fd
        else:
            got = self._dirs.get(parts[:last])
            dir_fd = self._open_dirs(parts, shown) if got is None else got
        try:
            return os.open(parts[last], _FILE_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            raise _refusal(exc, parts[last], dir_fd, parts, last, shown) from None

    def _open_dirs(self, parts: tuple[str, ...], shown: str) -> int:
        """The descriptor of ``parts``' directory, opening (and keeping) each directory
        on the way that is not open yet."""
        cur = self._fd
        dirs = self._dirs
        for i in range(len(parts) - 1):
            key = parts[: i + 1]
            fd = dirs.get(key)
            if fd is None:
                try:
                    fd = os.open(parts[i], _DIR_FLAGS, dir_fd=cur)
                except OSError as exc:
                    raise _refusal(exc, parts[i], cur, parts, i, shown) from None
                if len(dirs) >= _MAX_DIRS:  # (cur was used already; fd is the newest)
                    os.close(dirs.pop(next(iter(dirs))))
                dirs[key] = fd
            cur = fd
        return cur


def _resolve_links(root: str, parts: tuple[str, ...], shown: str) -> str:
    target = os.path.join(root, *parts)
    try:
        real = os.path.realpath(target, strict=True)
    except FileNotFoundError:
        raise EvidenceRefused(
            "file_missing", f"{shown!r} does not exist (a symlink on the way dangles)", path=shown
        ) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise EvidenceRefused(
                "symlink_loop", f"{shown!r} runs into a symlink loop", path=shown
            ) from None
        raise EvidenceRefused(
            "unreadable", f"{shown!r} cannot be resolved: {exc.strerror}", path=shown
        ) from None
    if real == root:
        raise EvidenceRefused("not_a_file", f"{shown!r} resolves to the workspace root", path=shown)
    if not real.startswith(root.rstrip(os.sep) + os.sep):
        raise EvidenceRefused(
            "outside_workspace",
            f"{shown!r} resolves outside the workspace root through a symlink",
            path=shown,
            detail={"resolved": real},
        )
    return os.path.relpath(real, root).replace(os.sep, "/")


def _check_size(opened: Opened, max_bytes: int, shown: str) -> int:
    size = opened.st.st_size
    if size > max_bytes:
        raise _too_large(size, max_bytes, shown)
    return size


def _read_on(fd: int, head: bytes, max_bytes: int, shown: str) -> bytes:
    """``head`` and the rest of the file, in 64 KiB steps, until it passes the cap or
    ends (for a file that is not where its ``fstat`` said it would end)."""
    chunks = [head]
    total = len(head)
    chunk = head
    while chunk:
        if total > max_bytes:
            raise EvidenceRefused(
                "too_large",
                f"{shown!r} grew past the {max_bytes}-byte cap while being read",
                path=shown,
            )
        chunk = os.read(fd, 65536)
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def read_all(opened: Opened, max_bytes: int, shown: str) -> bytes:
    """Read the whole file from its descriptor, enforcing the size cap as it reads.

    One read asks for one byte more than ``fstat`` said. Getting exactly the size back
    means the file ended there when it was read (a regular file reads short only at its
    end); anything else (it grew, or shrank, or a filesystem read short) is read on
    until it ends or passes the cap.
    """
    size = _check_size(opened, max_bytes, shown)
    chunk = os.read(opened.fd, size + 1)
    if len(chunk) == size:
        return chunk
    return _read_on(opened.fd, chunk, max_bytes, shown)


_SCRATCH_MAX = 16 * 1024 * 1024 + 1
_STEP = 256 * 1024
_scratch_lock = threading.Lock()
_scratch = [bytearray()]
"""One buffer, reused by whole-file reads of up to 16 MiB (see :func:`read_hashed`)."""


@contextmanager
def read_hashed(
    opened: Opened, max_bytes: int, shown: str
) -> Iterator[tuple[bytes | memoryview, str]]:
    """The file's bytes, read as :func:`read_all` reads them, with their hex sha256, for
    a caller that only decodes them inside the ``with`` (the view is not valid after).

    Why: a caller that decodes a large file holds its bytes and its text at once, and
    two fresh buffers of that size cost the process a page fault per 4 KiB, every time
    (the allocator hands freed memory of that size back to the system). Reading into
    one buffer kept between calls leaves only the text to allocate, as a plain read
    allocates only its bytes; and hashing each 256 KiB as it is read hashes bytes that
    are still in the CPU's cache, in the same pass. One buffer, for one thread at a
    time (another thread reads as :func:`read_all` does); it holds at most the largest
    such file read so far.
    """
    size = _check_size(opened, max_bytes, shown)
    if size >= _SCRATCH_MAX or not _scratch_lock.acquire(blocking=False):
        data = read_all(opened, max_bytes, shown)
        yield data, hashlib.sha256(data).hexdigest()
        return
    try:
        buf = _scratch[0]
        if len(buf) < size + 1:
            _scratch[0] = buf = bytearray()  # (the old one goes before the new is made)
            _scratch[0] = buf = bytearray(size + 1)
        with memoryview(buf) as whole:
            digest = hashlib.sha256()
            end = size + 1  # one byte more than fstat said: a read of 0 finds the end
            got = 0
            while got < end:
                n = os.readv(opened.fd, [whole[got : min(got + _STEP, end)]])
                if not n:
                    break
                digest.update(whole[got : got + n])
                got += n
            if got < end:  # it ended (where fstat said, or sooner: it was cut short)
                with whole[:got] as view:
                    yield view, digest.hexdigest()
            else:  # it grew since fstat: read on to its end or the cap
                data = _read_on(opened.fd, bytes(whole[:got]), max_bytes, shown)
                yield data, hashlib.sha256(data).hexdigest()
    finally:
        _scratch_lock.release()


def decode_text(data: bytes | memoryview, shown: str) -> str:
    """Bytes to text, refusing what is not text: NUL in the first 8 KiB, invalid UTF-8."""
    check_text_head(data, shown)
    try:
        return str(data, "utf-8")
    except UnicodeDecodeError as exc:
        raise EvidenceRefused(
            "not_utf8",
            f"{shown!r} is not valid UTF-8 ({exc.reason} at byte {exc.start})",
            path=shown,
            detail={"offset": exc.start},
        ) from None


def check_text_head(data: bytes | memoryview, shown: str) -> None:
    """Refuse a file with a NUL byte in its first 8 KiB: binary, whatever else it is."""
    head = data if isinstance(data, bytes) else bytes(data[:8192])
    if head.find(b"\x00", 0, 8192) >= 0:
        raise EvidenceRefused(
            "binary_file", f"{shown!r} is binary (NUL byte in its first 8 KiB)", path=shown
        )


def split_lines(text: str) -> tuple[str, ...]:
    """Lines as a reader sees them: ``\\r\\n``, ``\\n`` and ``\\r`` end a line; no other char.

    ``str.splitlines`` also splits on form feeds and U+2028, which editors and git do
    not count as line breaks; line numbers would then disagree with the agent's.
    """
    return tuple(line_list(text))


def line_list(text: str) -> list[str]:
    """:func:`split_lines` as a list (for a caller that only reads it and drops it)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    return lines
