"""The path guard: turn an agent-supplied path into a file descriptor inside the root.

Why file descriptors and ``O_NOFOLLOW``: checking a resolved path and then opening it
by name leaves a window in which a component can be swapped for a symlink. Here every
component is opened relative to its already-opened parent with ``O_NOFOLLOW``; a
symlink anywhere forces the slow path, which resolves it, checks containment, and then
walks the resolved path the same way. Nothing is ever opened through a link that was
not checked.
"""

from __future__ import annotations

import errno
import os
import stat
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
    real: str  # absolute real path
    st: os.stat_result

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
    parts: list[str] = []
    for part in path.split("/"):
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
    """A descriptor for the root, for callers that open many files in one go."""
    return os.open(root, _DIR_FLAGS & ~os.O_NOFOLLOW)


class _Symlink(Exception):
    pass


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
                if exc.errno == errno.ELOOP:
                    raise _Symlink from None
                if exc.errno == errno.ENOTDIR:
                    # A component is a symlink (O_NOFOLLOW|O_DIRECTORY) or a plain file.
                    try:
                        st = os.stat(name, dir_fd=cur, follow_symlinks=False)
                    except OSError:
                        st = None
                    if st is not None and stat.S_ISLNK(st.st_mode):
                        raise _Symlink from None
                    raise EvidenceRefused(
                        "file_missing",
                        f"{shown!r} does not exist ({'/'.join(parts[: i + 1])} is not a directory)",
                        path=shown,
                    ) from None
                if exc.errno == errno.ENOENT:
                    raise EvidenceRefused(
                        "file_missing", f"{shown!r} does not exist", path=shown
                    ) from None
                if exc.errno in (errno.EACCES, errno.EPERM):
                    raise EvidenceRefused(
                        "unreadable", f"{shown!r} cannot be read (permission denied)", path=shown
                    ) from None
                if exc.errno == errno.ENXIO:
                    raise EvidenceRefused(
                        "not_a_file", f"{shown!r} is not a regular file", path=shown
                    ) from None
                raise EvidenceRefused(
                    "unreadable", f"{shown!r} cannot be opened: {exc.strerror}", path=shown
                ) from None
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
    if root_fd is None:
        root_fd = os.open(root, _DIR_FLAGS & ~os.O_NOFOLLOW)
    try:
        try:
            fd = _walk(root_fd, parts, shown)
            rel = "/".join(parts)
        except _Symlink:
            rel = _resolve_links(root, parts, shown)
            try:
                fd = _walk(root_fd, tuple(rel.split("/")), shown)
            except _Symlink:
                raise EvidenceRefused(
                    "outside_workspace",
                    f"{shown!r} changed while it was being resolved (a symlink appeared)",
                    path=shown,
                ) from None
    finally:
        if own_fd:
            os.close(root_fd)
    try:
        if not in_scope(rel, scopes):
            raise EvidenceRefused(
                "outside_scope",
                f"{shown!r} resolves to {rel!r}, outside the allowed scopes {list(scopes or ())}",
                path=shown,
                detail={"resolved": rel},
            )
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise EvidenceRefused("not_a_file", f"{shown!r} is {kind}", path=shown)
    except BaseException:
        os.close(fd)
        raise
    # root is real and absolute, rel has no empty, "." or ".." part: the join is plain
    real = (root if root.endswith(os.sep) else root + os.sep) + rel.replace("/", os.sep)
    return Opened(fd, rel, real, st)


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


def read_all(opened: Opened, max_bytes: int, shown: str) -> bytes:
    """Read the whole file from its descriptor, enforcing the size cap as it reads."""
    if opened.st.st_size > max_bytes:
        raise EvidenceRefused(
            "too_large",
            f"{shown!r} is {opened.st.st_size} bytes, over the {max_bytes}-byte cap",
            path=shown,
            detail={"size": opened.st.st_size, "max_bytes": max_bytes},
        )
    # One read of the whole file, then one that finds the end (a file that grew since
    # fstat is read on, in 64 KiB steps, until it passes the cap or ends).
    chunk = os.read(opened.fd, opened.st.st_size + 1)
    chunks = [chunk]
    total = len(chunk)
    while chunk:
        if total > max_bytes:
            raise EvidenceRefused(
                "too_large",
                f"{shown!r} grew past the {max_bytes}-byte cap while being read",
                path=shown,
            )
        chunk = os.read(opened.fd, 65536)
        chunks.append(chunk)
        total += len(chunk)
    return chunks[0] if len(chunks) <= 2 else b"".join(chunks)


def decode_text(data: bytes, shown: str) -> str:
    """Bytes to text, refusing what is not text: NUL in the first 8 KiB, invalid UTF-8."""
    if data.find(b"\x00", 0, 8192) >= 0:
        raise EvidenceRefused(
            "binary_file", f"{shown!r} is binary (NUL byte in its first 8 KiB)", path=shown
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EvidenceRefused(
            "not_utf8",
            f"{shown!r} is not valid UTF-8 ({exc.reason} at byte {exc.start})",
            path=shown,
            detail={"offset": exc.start},
        ) from None


def split_lines(text: str) -> tuple[str, ...]:
    """Lines as a reader sees them: ``\\r\\n``, ``\\n`` and ``\\r`` end a line; no other char.

    ``str.splitlines`` also splits on form feeds and U+2028, which editors and git do
    not count as line breaks; line numbers would then disagree with the agent's.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    return tuple(lines)
