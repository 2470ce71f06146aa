"""Real git, asked through its machine-readable interfaces (``-z``, ``ls-tree``, ``cat-file``).

Used for two claims only the repository can settle: what a file held at a revision,
and which files changed since a base. Both are recomputed on every call (seed 000:
a manifest carried over from an earlier round was the bug).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from trustgate.errors import EvidenceRefused, GitError

_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
}
_MAX_HOPS = 40


def run_git(root: str, *args: str, input: bytes | None = None) -> bytes:
    env = {**os.environ, **_ENV}
    try:
        proc = subprocess.run(
            ["git", "-c", "core.quotepath=off", "-C", root, *args],
            input=input,
            capture_output=True,
            env=env,
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {msg[-1] if msg else proc.returncode}")
    return proc.stdout


def resolve_revision(root: str, revision: str) -> str:
    """Full commit id for ``revision``; an unknown one is a refused claim, not a crash."""
    if not isinstance(revision, str) or not revision.strip() or "\x00" in revision:
        raise EvidenceRefused("unknown_revision", f"invalid revision {revision!r}")
    try:
        out = run_git(
            root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"
        )
    except GitError:
        if not is_repository(root):
            raise GitError(f"{root} is not inside a git repository") from None
        raise EvidenceRefused(
            "unknown_revision", f"revision {revision!r} does not exist in the repository"
        ) from None
    return out.decode().strip()


def is_repository(root: str) -> bool:
    try:
        run_git(root, "rev-parse", "--git-dir")
    except GitError:
        return False
    return True


def _prefix(root: str) -> str:
    """The workspace root's path inside the repository ("" at the top level)."""
    return run_git(root, "rev-parse", "--show-prefix").decode("utf-8").strip()


@dataclass(frozen=True, slots=True)
class _Entry:
    mode: str
    kind: str
    oid: str
    size: int | None


def _list_dir(top: str, commit: str, tree_path: str) -> dict[str, _Entry]:
    """Entries of one directory of ``commit``; run from the top level, where
    ``<commit>:<path>`` is unambiguously relative to the repository root."""
    spec = f"{commit}:{tree_path}" if tree_path else f"{commit}:"
    out = run_git(top, "ls-tree", "-l", "-z", spec)
    entries: dict[str, _Entry] = {}
    for record in out.split(b"\x00"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, kind, oid, size = meta.decode().split()
        entries[name.decode("utf-8", "surrogateescape")] = _Entry(
            mode, kind, oid, int(size) if size.isdigit() else None
        )
    return entries


def read_blob(
    root: str,
    commit: str,
    parts: tuple[str, ...],
    shown: str,
    scopes: tuple[str, ...] | None,
    max_bytes: int,
) -> tuple[str, bytes]:
    """Bytes of the file at ``parts`` (root-relative) in ``commit``; returns (rel, bytes).

    The tree is walked one directory at a time. Symlinks stored in the tree are followed
    inside the tree (bounded hops) with the same containment rule as the working tree:
    a link that leaves the workspace root is refused, as is one that leaves the scopes.
    """
    from trustgate.evidence._paths import in_scope

    prefix = [p for p in _prefix(root).split("/") if p]
    top = run_git(root, "rev-parse", "--show-toplevel").decode("utf-8").strip()
    listings: dict[str, dict[str, _Entry]] = {}
    where = f"at revision {commit[:12]}"
    rel: list[str] = list(parts)
    hops = 0
    i = 0
    while True:
        name = rel[i]
        parent = "/".join([*prefix, *rel[:i]])
        if parent not in listings:
            listings[parent] = _list_dir(top, commit, parent)
        entry = listings[parent].get(name)
        last = i == len(rel) - 1
        if entry is None:
            raise EvidenceRefused("file_missing", f"{shown!r} does not exist {where}", path=shown)
        if entry.mode == "120000":
            hops += 1
            if hops > _MAX_HOPS:
                raise EvidenceRefused(
                    "symlink_loop", f"{shown!r} runs into a symlink loop {where}", path=shown
                )
            target = run_git(root, "cat-file", "blob", entry.oid).decode("utf-8", "surrogateescape")
            rel = _join_link(rel[:i], target, rel[i + 1 :], shown)
            i = 0
            continue
        if not last:
            if entry.kind != "tree":
                raise EvidenceRefused(
                    "file_missing",
                    f"{shown!r} does not exist {where} ({'/'.join(rel[: i + 1])} is not a "
                    "directory)",
                    path=shown,
                )
            i += 1
            continue
        rel_s = "/".join(rel)
        if not in_scope(rel_s, scopes):
            raise EvidenceRefused(
                "outside_scope",
                f"{shown!r} resolves to {rel_s!r}, outside the allowed scopes {list(scopes or ())}",
                path=shown,
            )
        if entry.kind != "blob":
            raise EvidenceRefused(
                "not_a_file", f"{shown!r} is a {entry.kind} {where}, not a file", path=shown
            )
        if entry.size is not None and entry.size > max_bytes:
            raise EvidenceRefused(
                "too_large",
                f"{shown!r} is {entry.size} bytes {where}, over the {max_bytes}-byte cap",
                path=shown,
                detail={"size": entry.size, "max_bytes": max_bytes},
            )
        return rel_s, run_git(root, "cat-file", "blob", entry.oid)


def _join_link(link_dir: list[str], target: str, rest: list[str], shown: str) -> list[str]:
    if target.startswith("/"):
        raise EvidenceRefused(
            "outside_workspace",
            f"{shown!r} goes through an absolute symlink ({target!r})",
            path=shown,
        )
    out = list(link_dir)
    for part in [*target.split("/"), *rest]:
        if part in ("", "."):
            continue
        if part == "..":
            if not out:
                raise EvidenceRefused(
                    "outside_workspace",
                    f"{shown!r} resolves outside the workspace root through a symlink",
                    path=shown,
                )
            out.pop()
        else:
            out.append(part)
    if not out:
        raise EvidenceRefused("not_a_file", f"{shown!r} resolves to the workspace root", path=shown)
    return out


def changed_files(root: str, base: str) -> list[str]:
    """Files that differ between ``base`` and the working tree, plus untracked ones.

    Paths are relative to the workspace root. Renames count as a delete and an add, so
    a claim may name either side.
    """
    commit = resolve_revision(root, base)
    diff = run_git(root, "diff", "--name-only", "-z", "--no-renames", "--relative", commit, "--")
    untracked = run_git(root, "ls-files", "--others", "--exclude-standard", "-z")
    names = {n.decode("utf-8", "surrogateescape") for n in diff.split(b"\x00") if n}
    names |= {n.decode("utf-8", "surrogateescape") for n in untracked.split(b"\x00") if n}
    return sorted(names)
