"""Real git, asked through its machine-readable interfaces (``-z``, ``ls-tree``, ``cat-file``).

Used for two claims only the repository can settle: what a file held at a revision,
and which files changed since a base. Both are recomputed on every call (code review:
a manifest carried over from an earlier round was the bug).

**Nothing in the repository can make git run a program.** The agent whose claims are
checked can usually write the workspace, ``.git`` included, and git has many ways to
be told to run something: ``core.fsmonitor``, hooks, pagers, external diff and
textconv drivers, clean/smudge/process filters selected by attributes, credential
helpers, ``core.sshCommand``, promisor remotes that lazily fetch missing objects
through ``remote.*.uploadpack``, config pulled in by ``include``/``includeIf``, and
submodules with their own config. Two layers stop all of them:

* Commands that must run in the repository itself (finding it, resolving a revision
  name) get a scrubbed environment (no inherited ``GIT_*`` variable, no system or
  global config, no replace refs or grafts, no prompts, no protocol allowed) and
  explicit ``-c`` overrides of every key known to execute (:data:`_OVERRIDES`). They
  never read file contents, so attributes and filters do not come into play.
* Commands that read objects or compare the working tree run against a *sandbox
  git directory* trustgate creates outside the workspace: its own config (only the
  object format and a few data-only keys such as ``core.autocrlf`` are carried over),
  no hooks, no ``info/attributes``, and its own index built from the base commit
  (``read-tree``). The repository's objects are used through
  ``GIT_OBJECT_DIRECTORY``; its config, hooks, attribute files and index are never
  read. A filter or diff driver named in a ``.gitattributes`` then names nothing, and
  an index the agent edited cannot make an unchanged file look changed. Without a
  promisor config a missing object is an error, never a fetch.

git's own ownership check stays on: a repository owned by another user is refused
("dubious ownership") and the refusal is reported as a failed check, never a pass.
Directories the operator trusts anyway can be listed in ``TRUSTGATE_GIT_SAFE_DIRECTORY``
(``os.pathsep``-separated; passed as ``-c safe.directory=...``, the only place git
accepts it from besides the ignored global config).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import logging
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass

from trustgate import _limits
from trustgate.errors import EvidenceRefused, GitError

logger = logging.getLogger(__name__)

SAFE_DIRECTORY_ENV = "TRUSTGATE_GIT_SAFE_DIRECTORY"

# Inherited variables git may need to start at all; every other one (``GIT_DIR``,
# ``GIT_EXTERNAL_DIFF``, ``GIT_CONFIG_PARAMETERS``, ``PAGER``...) is dropped.
_KEEP_ENV = ("PATH", "HOME", "TMPDIR", "SYSTEMROOT", "USERPROFILE")
_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_GRAFT_FILE": os.devnull,
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_ALLOW_PROTOCOL": "",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
}
# Every repository key known to make git run a program or reach out, overridden on
# the command line (highest precedence). Filter and diff drivers have free-form names
# and cannot be listed: the sandbox (see the module docstring) is what stops those.
_OVERRIDES = (
    ("core.quotepath", "off"),
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("core.attributesFile", os.devnull),
    ("core.untrackedCache", "false"),
    ("core.askPass", ""),
    ("core.sshCommand", ""),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("core.editor", ""),
    ("sequence.editor", ""),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
    ("diff.external", ""),
    ("diff.ignoreSubmodules", "dirty"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("safe.bareRepository", "explicit"),
)
# Data-only keys carried from the repository's config into the sandbox, so line
# endings and file modes compare as the repository's owner configured them. Keys that
# weaken the stat check (core.trustctime, core.checkStat) are deliberately left out.
_CARRIED = frozenset(
    {
        "core.autocrlf",
        "core.eol",
        "core.ignorecase",
        "core.precomposeunicode",
        "core.filemode",
        "core.symlinks",
    }
)
_MAX_HOPS = 40
_MAX_COPIED = 1024 * 1024  # config and info/exclude copied into a sandbox


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
    env.update(_ENV)
    if extra:
        env.update(extra)
    return env


def _config_args() -> list[str]:
    args: list[str] = []
    for key, value in _OVERRIDES:
        args += ["-c", f"{key}={value}"]
    for entry in os.environ.get(SAFE_DIRECTORY_ENV, "").split(os.pathsep):
        if entry.strip():
            args += ["-c", f"safe.directory={entry.strip()}"]
    return args


def _last_line(stderr: bytes) -> str:
    lines = [ln for ln in stderr.decode("utf-8", "replace").strip().splitlines() if ln.strip()]
    # git's ownership refusal puts the reason first and advice after it
    for ln in lines:
        if "dubious ownership" in ln:
            reason = ln.removeprefix("fatal: ")
            return f"{reason} (it belongs to another user; see {SAFE_DIRECTORY_ENV})"
    return lines[-1].removeprefix("fatal: ") if lines else ""


def _exec(
    cwd: str,
    args: tuple[str, ...],
    env: dict[str, str],
    input: bytes | None,
) -> bytes:
    cmd = ["git", "--no-pager", *_config_args(), "-C", cwd, *args]
    try:
        proc = subprocess.run(
            cmd,
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            env=env,
            check=False,
            timeout=_limits.GIT_TIMEOUT,
        )
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    except subprocess.TimeoutExpired:
        raise GitError(
            f"git {args[0]} did not finish within {_limits.GIT_TIMEOUT:g} s and was stopped"
        ) from None
    if proc.returncode != 0:
        msg = _last_line(proc.stderr)
        raise GitError(f"git {args[0]} failed: {msg or proc.returncode}")
    return proc.stdout


def run_git(root: str, *args: str, input: bytes | None = None) -> bytes:
    """Run git in the repository at ``root`` with nothing in it able to run a program.

    For commands that neither read file contents nor walk the working tree (finding
    the repository, resolving a revision); everything else goes through the sandbox.
    """
    return _exec(root, args, _env(), input)


@dataclass(frozen=True, slots=True)
class _Repo:
    """Where a workspace's repository keeps things, found afresh on every call."""

    top: str
    git_dir: str
    common_dir: str
    objects: str
    exclude: str
    object_format: str
    prefix: str


def _discover(root: str) -> _Repo:
    out = run_git(
        root,
        "rev-parse",
        "--path-format=absolute",
        "--show-toplevel",
        "--git-dir",
        "--git-common-dir",
        "--git-path",
        "objects",
        "--git-path",
        "info/exclude",
        "--show-object-format",
        "--show-prefix",
    )
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) < 7 or any(not ln for ln in lines[:6]):
        raise GitError(f"cannot locate the git repository of {root} (unexpected rev-parse output)")
    top, git_dir, common, objects, exclude, fmt, prefix = lines[:7]
    if fmt not in ("sha1", "sha256"):
        raise GitError(f"unsupported git object format {fmt!r}")
    return _Repo(top, git_dir, common, objects, exclude, fmt, prefix.strip())


def _read_small(path: str) -> bytes | None:
    """A regular file's bytes, without following a link or blocking on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
            logger.warning("not copying %s into the git sandbox: %s", path, exc.strerror)
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_COPIED:
            logger.warning("not copying %s into the git sandbox: not a small regular file", path)
            return None
        return os.read(fd, _MAX_COPIED + 1)[:_MAX_COPIED]
    finally:
        os.close(fd)


def _carried_config(repo: _Repo, scratch: str) -> list[tuple[str, str]]:
    """The whitelisted keys of the repository's own config file, parsed by git from a
    private copy with includes off (the original may be a FIFO or a symlink)."""
    data = _read_small(os.path.join(repo.common_dir, "config"))
    if not data:
        return []
    copy = os.path.join(scratch, "repo-config")
    with open(copy, "wb") as fh:
        fh.write(data)
    try:
        out = _exec(
            scratch,
            ("config", "--file", copy, "--no-includes", "--null", "--list"),
            _env(),
            None,
        )
    except GitError as exc:
        logger.warning("repository config of %s is unreadable, using defaults: %s", repo.top, exc)
        return []
    finally:
        os.unlink(copy)
    carried = []
    for record in out.split(b"\x00"):
        key, _, value = record.decode("utf-8", "replace").partition("\n")
        if key.lower() in _CARRIED:
            carried.append((key.lower(), value))
    return carried


class _Sandbox:
    """A private git directory for one repository: our config, our index, no hooks."""

    def __init__(self, repo: _Repo) -> None:
        self.repo = repo
        self.path = tempfile.mkdtemp(prefix="trustgate-git-")
        self.lock = threading.Lock()
        self.indexes: OrderedDict[str, str] = OrderedDict()
        for sub in ("objects", "refs", "info"):
            os.mkdir(os.path.join(self.path, sub))
        with open(os.path.join(self.path, "HEAD"), "w") as fh:
            fh.write("ref: refs/heads/trustgate-none\n")
        lines = ["[core]", "\trepositoryformatversion = 1", "\tbare = false"]
        lines.append(f"[extensions]\n\tobjectformat = {repo.object_format}")
        carried = _carried_config(repo, self.path)
        if carried:
            lines.append("[core]")
            lines.extend(f"\t{k.split('.', 1)[1]} = {_quote(v)}" for k, v in carried)
        with open(os.path.join(self.path, "config"), "w") as fh:
            fh.write("\n".join(lines) + "\n")
        exclude = _read_small(repo.exclude)
        if exclude:
            with open(os.path.join(self.path, "info", "exclude"), "wb") as fh:
                fh.write(exclude)

    def env(self, index: str | None = None) -> dict[str, str]:
        extra = {"GIT_DIR": self.path, "GIT_OBJECT_DIRECTORY": self.repo.objects}
        if index is not None:
            extra["GIT_WORK_TREE"] = self.repo.top
            extra["GIT_INDEX_FILE"] = index
            extra["GIT_OPTIONAL_LOCKS"] = "1"  # refreshing our own index is allowed
        return _env(extra)

    def run(self, cwd: str, *args: str, index: str | None = None) -> bytes:
        return _exec(cwd, args, self.env(index), None)

    def index_for(self, commit: str) -> str:
        """Our index of ``commit`` (built once; its stat data is ours, not the agent's)."""
        with self.lock:
            index = self.indexes.get(commit)
            if index is not None:
                self.indexes.move_to_end(commit)
                return index
            index = os.path.join(self.path, f"index-{commit}")
            env = _env(
                {
                    "GIT_DIR": self.path,
                    "GIT_OBJECT_DIRECTORY": self.repo.objects,
                    "GIT_INDEX_FILE": index,
                }
            )
            _exec(self.path, ("read-tree", commit), env, None)
            self.indexes[commit] = index
            while len(self.indexes) > _MAX_INDEXES:
                _, old = self.indexes.popitem(last=False)
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(old)
            return index

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


_SANDBOXES: OrderedDict[tuple[object, ...], _Sandbox] = OrderedDict()
_SANDBOX_LOCK = threading.Lock()
_MAX_SANDBOXES = 8
_MAX_INDEXES = 8


def _sandbox(repo: _Repo) -> _Sandbox:
    """The sandbox for ``repo`` (one per repository and config state, LRU-bounded)."""
    key = (
        repo.top,
        repo.git_dir,
        repo.common_dir,
        repo.objects,
        repo.exclude,
        repo.object_format,
        _identity(os.path.join(repo.common_dir, "config")),
        _identity(repo.exclude),
    )
    with _SANDBOX_LOCK:
        box = _SANDBOXES.get(key)
        if box is not None:
            _SANDBOXES.move_to_end(key)
            return box
    box = _Sandbox(repo)
    with _SANDBOX_LOCK:
        other = _SANDBOXES.get(key)
        if other is not None:
            box.close()
            return other
        _SANDBOXES[key] = box
        while len(_SANDBOXES) > _MAX_SANDBOXES:
            _, old = _SANDBOXES.popitem(last=False)
            old.close()
    return box


def _identity(path: str) -> tuple[int, ...] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@atexit.register
def _close_sandboxes() -> None:
    with _SANDBOX_LOCK:
        for box in _SANDBOXES.values():
            box.close()
        _SANDBOXES.clear()


def resolve_revision(root: str, revision: str) -> str:
    """Full commit id for ``revision``; an unknown one is a refused claim, not a crash.

    A directory that is not a repository (or one git refuses, e.g. owned by another
    user) raises ``GitError`` with git's reason.
    """
    return _resolve(root, revision)[1]


def _resolve(root: str, revision: str) -> tuple[_Repo, str]:
    """The repository found for this call, and ``revision``'s full commit id in it."""
    if not isinstance(revision, str) or not revision.strip() or "\x00" in revision:
        raise EvidenceRefused("unknown_revision", f"invalid revision {revision!r}")
    repo = _discover(root)  # not a repository / refused by git: GitError with git's reason
    try:
        out = run_git(
            root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"
        )
    except GitError:
        raise EvidenceRefused(
            "unknown_revision", f"revision {revision!r} does not exist in the repository"
        ) from None
    return repo, out.decode().strip()


@dataclass(frozen=True, slots=True)
class _Entry:
    mode: str
    kind: str
    oid: str
    size: int | None


def _list_dir(box: _Sandbox, commit: str, tree_path: str) -> dict[str, _Entry]:
    """Entries of one directory of ``commit``; ``<commit>:<path>`` is relative to the
    repository root (the sandbox has no working tree to be relative to)."""
    spec = f"{commit}:{tree_path}" if tree_path else f"{commit}:"
    out = box.run(box.path, "ls-tree", "-l", "-z", spec)
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

    repo = _discover(root)
    box = _sandbox(repo)
    prefix = [p for p in repo.prefix.split("/") if p]
    listings: dict[str, dict[str, _Entry]] = {}
    where = f"at revision {commit[:12]}"
    rel: list[str] = list(parts)
    hops = 0
    i = 0
    while True:
        name = rel[i]
        parent = "/".join([*prefix, *rel[:i]])
        if parent not in listings:
            listings[parent] = _list_dir(box, commit, parent)
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
            target = box.run(box.path, "cat-file", "blob", entry.oid).decode(
                "utf-8", "surrogateescape"
            )
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
        return rel_s, box.run(box.path, "cat-file", "blob", entry.oid)


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
    a claim may name either side. The comparison runs in the sandbox against an index
    trustgate built from ``base`` itself, so neither the repository's config nor its
    index (both writable by the agent) takes part: a file is changed when its bytes
    (after the carried line-ending settings) differ from the base's blob. Files not in
    ``base`` and not ignored by ``.gitignore``/``info/exclude`` are untracked, whether
    or not the agent staged them. A submodule counts as changed when its checked-out
    commit differs; what is inside it is not inspected (that would run git there).
    """
    repo, commit = _resolve(root, base)  # one discovery serves the whole comparison
    box = _sandbox(repo)
    index = box.index_for(commit)
    diff = box.run(
        root,
        "diff",
        "--name-only",
        "-z",
        "--no-renames",
        "--relative",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=dirty",
        "--",
        index=index,
    )
    untracked = box.run(root, "ls-files", "--others", "--exclude-standard", "-z", index=index)
    names = {n.decode("utf-8", "surrogateescape") for n in diff.split(b"\x00") if n}
    names |= {n.decode("utf-8", "surrogateescape") for n in untracked.split(b"\x00") if n}
    return sorted(names)
