"""Repository config cannot make trustgate run anything (issue 12, item 1).

An agent that can write the workspace can write ``.git/config``, ``.git/hooks``,
``.git/info/attributes``, ``.gitattributes`` and the index. Each test plants one way
git can be told to run a program (every one writes a marker file when it runs), puts
the working tree in a state where git would have to look at file contents, and then
drives every path through which trustgate runs git: ChangeCheck, CitationReplay (a
``changed`` item), HashCheck and acquisition at a revision, one gate crossing, and the
``trustgate replay`` / ``trustgate acquire`` commands. No marker may appear, and the
answers must still be right.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _support import MakeRepo, git

from trustgate import ChangeCheck, CitationReplay, HashCheck, TrustGate
from trustgate.cli import main
from trustgate.errors import EvidenceRefused, GitError
from trustgate.files import Locator, Workspace
from trustgate.verifiers.base import Evidence, EvidenceSources

HOOKS = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
]

A_TXT = "alpha line one\nalpha line two\n"
B_TXT = "beta line one\nbeta line two\n"


def _script(tmp_path: Path, name: str, *, passthrough: bool = False) -> str:
    """A program that records that it ran (a filter also passes its input through)."""
    markers = tmp_path / "markers"
    markers.mkdir(exist_ok=True)
    path = tmp_path / "bin" / name
    path.parent.mkdir(exist_ok=True)
    body = "cat\n" if passthrough else ""
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> {markers / name}\n{body}exit 0\n')
    path.chmod(0o755)
    return str(path)


def _markers(tmp_path: Path) -> list[str]:
    d = tmp_path / "markers"
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def _cfg(root: Path, key: str, value: str) -> None:
    git(root, "config", key, value)


Plant = Callable[[Path, Path], None]


def plant_fsmonitor(root: Path, tmp: Path) -> None:
    _cfg(root, "core.fsmonitor", _script(tmp, "fsmonitor"))
    _cfg(root, "core.fsmonitorHookVersion", "2")


def plant_hooks(root: Path, tmp: Path) -> None:
    hooks = root / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in HOOKS:
        shutil.copy(_script(tmp, f"hook-{name}"), hooks / name)


def plant_hooks_path(root: Path, tmp: Path) -> None:
    hooks = tmp / "evil-hooks"
    hooks.mkdir()
    for name in HOOKS:
        shutil.copy(_script(tmp, f"hookspath-{name}"), hooks / name)
    _cfg(root, "core.hooksPath", str(hooks))


def plant_pager(root: Path, tmp: Path) -> None:
    _cfg(root, "core.pager", _script(tmp, "core-pager"))
    for cmd in ("diff", "ls-files", "ls-tree", "cat-file", "rev-parse", "config"):
        _cfg(root, f"pager.{cmd}", _script(tmp, f"pager-{cmd}"))


def plant_external_diff(root: Path, tmp: Path) -> None:
    _cfg(root, "diff.external", _script(tmp, "diff-external"))


def plant_diff_driver(root: Path, tmp: Path) -> None:
    (root / ".gitattributes").write_text("* diff=evil\n")
    _cfg(root, "diff.evil.command", _script(tmp, "diff-command"))
    _cfg(root, "diff.evil.textconv", _script(tmp, "diff-textconv"))


def plant_filter(root: Path, tmp: Path) -> None:
    (root / ".gitattributes").write_text("* filter=evil\n")
    _cfg(root, "filter.evil.clean", _script(tmp, "filter-clean", passthrough=True))
    _cfg(root, "filter.evil.smudge", _script(tmp, "filter-smudge", passthrough=True))
    _cfg(root, "filter.evil.required", "true")


def plant_filter_process(root: Path, tmp: Path) -> None:
    (root / ".gitattributes").write_text("* filter=evilp\n")
    _cfg(root, "filter.evilp.process", _script(tmp, "filter-process"))


def plant_info_attributes(root: Path, tmp: Path) -> None:
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "attributes").write_text("* filter=evili diff=evili\n")
    _cfg(root, "filter.evili.clean", _script(tmp, "info-attr-clean", passthrough=True))
    _cfg(root, "diff.evili.textconv", _script(tmp, "info-attr-textconv"))


def plant_attributes_file(root: Path, tmp: Path) -> None:
    attrs = tmp / "evil.attributes"
    attrs.write_text("* filter=evila\n")
    _cfg(root, "core.attributesFile", str(attrs))
    _cfg(root, "filter.evila.clean", _script(tmp, "attributes-file-clean", passthrough=True))


def _evil_cfg(tmp: Path, tag: str) -> Path:
    cfg = tmp / f"{tag}.cfg"
    cfg.write_text(
        f"[core]\n\tfsmonitor = {_script(tmp, f'{tag}-fsmonitor')}\n"
        f'[filter "evil"]\n\tclean = {_script(tmp, f"{tag}-clean", passthrough=True)}\n'
        f"[diff]\n\texternal = {_script(tmp, f'{tag}-external')}\n"
    )
    return cfg


def plant_include(root: Path, tmp: Path) -> None:
    (root / ".gitattributes").write_text("* filter=evil\n")
    _cfg(root, "include.path", str(_evil_cfg(tmp, "include")))


def plant_include_if(root: Path, tmp: Path) -> None:
    (root / ".gitattributes").write_text("* filter=evil\n")
    _cfg(root, "includeIf.gitdir:/.path", str(_evil_cfg(tmp, "includeif-gitdir")))
    _cfg(root, "includeIf.onbranch:main.path", str(_evil_cfg(tmp, "includeif-onbranch")))


def plant_credentials_and_ssh(root: Path, tmp: Path) -> None:
    _cfg(root, "credential.helper", "!" + _script(tmp, "credential-helper"))
    _cfg(root, "core.askPass", _script(tmp, "askpass"))
    _cfg(root, "core.sshCommand", _script(tmp, "ssh-command"))
    _cfg(root, "core.gitProxy", _script(tmp, "git-proxy"))
    _cfg(root, "core.editor", _script(tmp, "editor"))
    _cfg(root, "sequence.editor", _script(tmp, "sequence-editor"))
    _cfg(root, "gpg.program", _script(tmp, "gpg"))
    _cfg(root, "core.alternateRefsCommand", _script(tmp, "alternate-refs"))


def plant_lazy_fetch(root: Path, tmp: Path) -> None:
    """A partial clone whose promisor remote runs a program to fetch a missing blob."""
    other = tmp / "promisor"
    other.mkdir()
    git(other, "init", "-q")
    for name in ("a.txt", "b.txt"):
        oid = git(root, "rev-parse", f"HEAD:{name}")
        (root / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    _cfg(root, "core.repositoryformatversion", "1")
    _cfg(root, "extensions.partialClone", "origin")
    _cfg(root, "remote.origin.url", str(other))
    _cfg(root, "remote.origin.promisor", "true")
    _cfg(root, "remote.origin.uploadpack", _script(tmp, "upload-pack"))


def plant_submodule(root: Path, tmp: Path) -> None:
    """A submodule with its own planted config and a dirty working tree."""
    sub_src = tmp / "subsrc"
    sub_src.mkdir()
    git(sub_src, "init", "-q", "-b", "main")
    (sub_src / "s.txt").write_text("sub\n")
    git(sub_src, "add", "-A")
    git(sub_src, "-c", "user.email=t@e.invalid", "-c", "user.name=t", "commit", "-qm", "s")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub_src), "sub")
    git(root, "commit", "-qm", "add sub", "--", ".gitmodules", "sub")
    sub = root / "sub"
    (sub / "s.txt").write_text("sub dirty\n")
    (sub / ".gitattributes").write_text("* filter=evil\n")
    subgit = Path(git(sub, "rev-parse", "--absolute-git-dir"))
    for key, value in (
        ("core.fsmonitor", _script(tmp, "sub-fsmonitor")),
        ("filter.evil.clean", _script(tmp, "sub-clean", passthrough=True)),
        ("core.pager", _script(tmp, "sub-pager")),
    ):
        git(sub, "config", "--file", str(subgit / "config"), key, value)
    (subgit / "hooks").mkdir(exist_ok=True)
    for name in HOOKS:
        shutil.copy(_script(tmp, f"sub-hook-{name}"), subgit / "hooks" / name)


VECTORS: dict[str, Plant] = {
    "fsmonitor": plant_fsmonitor,
    "hooks": plant_hooks,
    "hooks_path": plant_hooks_path,
    "pager": plant_pager,
    "external_diff": plant_external_diff,
    "diff_driver": plant_diff_driver,
    "filter": plant_filter,
    "filter_process": plant_filter_process,
    "info_attributes": plant_info_attributes,
    "attributes_file": plant_attributes_file,
    "include": plant_include,
    "include_if": plant_include_if,
    "credentials_and_ssh": plant_credentials_and_ssh,
    "lazy_fetch": plant_lazy_fetch,
    "submodule": plant_submodule,
}


def _dirty(root: Path) -> None:
    """A tree git can only judge by reading contents: a real edit, a stat-only change
    (same bytes, new mtime), a new untracked file and a staged new file."""
    (root / "a.txt").write_text(A_TXT.replace("two", "TWO"))
    st = (root / "b.txt").stat()
    os.utime(root / "b.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    (root / "new.txt").write_text("new\n")
    (root / "staged.txt").write_text("staged\n")
    git(root, "add", "staged.txt")


def _run_everything(root: Path, tmp: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """Every way trustgate runs git, once each; returns what each answered."""
    ws = Workspace(root)
    ev = Evidence(workspace=ws)
    manifest = [
        {"item": "edit", "status": "changed", "files": ["a.txt", "new.txt", "staged.txt"]},
        {
            "item": "kept",
            "status": "already_correct",
            "evidence": [{"file": "b.txt", "line": 1, "content": "beta line one"}],
        },
    ]
    out: dict[str, Any] = {
        "change": ChangeCheck().verify({"files": ["a.txt", "new.txt", "staged.txt"]}, ev),
        "replay": CitationReplay().verify(json.dumps(manifest), ev),
        "hashed": HashCheck().verify(
            {
                "path": "a.txt",
                "sha256": hashlib.sha256(A_TXT.encode()).hexdigest(),
                "revision": "HEAD",
            },
            ev,
        ),
    }
    gate = TrustGate(
        "inspect",
        reads="manifest",
        verifiers=[CitationReplay()],
        evidence=EvidenceSources(workspace=str(root)),
    )
    out["crossing"] = gate.check({"manifest": manifest}, node="builder").report
    try:
        out["artifact"] = ws.acquire(Locator(path="a.txt", start_line=1, revision="HEAD"))
    except (EvidenceRefused, GitError) as exc:
        out["artifact"] = exc
    mpath = tmp / "manifest.json"
    mpath.write_text(json.dumps(manifest))
    out["cli_replay"] = main(["replay", str(mpath), "--root", str(root), "--json"])
    out["cli_acquire"] = main(["acquire", "a.txt:1", "--root", str(root), "--rev", "HEAD"])
    capsys.readouterr()
    return out


@pytest.mark.parametrize("vector", sorted(VECTORS))
def test_planted_config_never_runs(
    vector: str, make_repo: MakeRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo({"a.txt": A_TXT, "b.txt": B_TXT})
    _dirty(root)
    VECTORS[vector](root, tmp_path)
    assert _markers(tmp_path) == []  # planting ran nothing itself

    got = _run_everything(root, tmp_path, capsys)

    assert _markers(tmp_path) == [], f"{vector}: git ran a planted program"
    if vector == "lazy_fetch":
        # the base's blobs are missing and may not be fetched: a read at the revision
        # fails closed, never passes
        assert not any(f.passed for f in got["hashed"])
        assert isinstance(got["artifact"], (EvidenceRefused, GitError))
        assert got["cli_acquire"] in (1, 2)
        return
    change = {f.subject: f for f in got["change"]}
    assert change["a.txt"].passed and change["new.txt"].passed and change["staged.txt"].passed
    assert "b.txt" not in change  # same bytes, new mtime: not a change
    assert [f.passed for f in got["hashed"]] == [True]
    assert got["artifact"].excerpt == "alpha line one\n"
    assert not any(f.blocking for f in got["replay"]), got["replay"]
    assert got["crossing"].released
    assert got["cli_replay"] == 0 and got["cli_acquire"] == 0


def test_host_git_environment_is_ignored(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Variables of the host process (a gate running inside a git hook has GIT_DIR set)
    neither redirect trustgate to another repository nor run anything."""
    root = make_repo({"a.txt": A_TXT, "b.txt": B_TXT})
    other = make_repo({"zzz.txt": "other\n"})
    _dirty(root)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", _script(tmp_path, "env-external-diff"))
    monkeypatch.setenv("GIT_PAGER", _script(tmp_path, "env-pager"))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", _script(tmp_path, "env-fsmonitor"))
    ws = Workspace(root)
    assert ws.changed_files("HEAD") == ["a.txt", "new.txt", "staged.txt"]
    assert ws.read_text("a.txt", "HEAD") == A_TXT
    assert _markers(tmp_path) == []


def test_index_written_by_the_agent_cannot_fake_or_hide_a_change(make_repo: MakeRepo) -> None:
    """The agent can write .git/index: staging another blob under skip-worktree makes an
    untouched file look changed to `git diff HEAD`, and assume-unchanged hides a real
    edit. trustgate compares against its own index of the base, so neither works."""
    root = make_repo({"a.txt": A_TXT, "b.txt": B_TXT})
    (root / "a.txt").write_text(A_TXT + "edited\n")
    git(root, "update-index", "--assume-unchanged", "a.txt")
    fake = subprocess.run(
        ["git", "-C", str(root), "hash-object", "-w", "--stdin"],
        input="forged\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(root, "update-index", "--cacheinfo", f"100644,{fake},b.txt")
    git(root, "update-index", "--skip-worktree", "b.txt")
    assert git(root, "diff", "--name-only", "HEAD") == "b.txt"  # what git itself says

    ws = Workspace(root)
    assert ws.changed_files("HEAD") == ["a.txt"]
    findings = ChangeCheck().verify({"files": ["b.txt"]}, Evidence(workspace=ws))
    assert {f.subject: f.code for f in findings} == {
        "b.txt": "not_in_diff",
        "a.txt": "undeclared_change",
    }


def test_git_that_hangs_is_stopped(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO planted as .git/config would block git forever (and a promisor program
    reading stdin would wait on ours): git gets no stdin and a time limit."""
    from trustgate import _limits

    root = make_repo({"a.txt": A_TXT})
    (root / ".git" / "config").unlink()
    os.mkfifo(root / ".git" / "config")
    monkeypatch.setattr(_limits, "GIT_TIMEOUT", 1.0)
    findings = ChangeCheck().verify({"files": ["a.txt"]}, Evidence(workspace=Workspace(root)))
    assert [f.code for f in findings] == ["diff_unavailable"]
    assert "did not finish" in findings[0].message


def test_fifo_exclude_file_is_not_read(make_repo: MakeRepo) -> None:
    root = make_repo({"a.txt": A_TXT})
    (root / ".git" / "info" / "exclude").unlink()
    os.mkfifo(root / ".git" / "info" / "exclude")
    (root / "new.txt").write_text("x\n")
    assert Workspace(root).changed_files("HEAD") == ["new.txt"]


def test_linked_worktree_subdirectory_and_sha256(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo({"a.txt": A_TXT, "docs/d.md": "# d\n"})
    wt = tmp_path / "wt"
    git(root, "worktree", "add", "-q", str(wt), "-b", "side")
    (wt / "docs" / "d.md").write_text("# d changed\n")
    (wt / "docs" / "e.md").write_text("# e\n")
    assert Workspace(wt).changed_files("HEAD") == ["docs/d.md", "docs/e.md"]
    assert Workspace(wt / "docs").changed_files("HEAD") == ["d.md", "e.md"]
    assert Workspace(wt / "docs").read_text("d.md", "main") == "# d\n"

    s256 = tmp_path / "s256"
    s256.mkdir()
    git(s256, "init", "-q", "--object-format=sha256")
    (s256 / "a.txt").write_text(A_TXT)
    git(s256, "add", "-A")
    git(s256, "-c", "user.email=t@e.invalid", "-c", "user.name=t", "commit", "-qm", "i")
    (s256 / "a.txt").write_text("x\n")
    ws = Workspace(s256)
    assert ws.changed_files("HEAD") == ["a.txt"]
    assert ws.read_text("a.txt", "HEAD") == A_TXT


def test_crlf_settings_of_the_repository_are_kept(make_repo: MakeRepo) -> None:
    """core.autocrlf is data, carried into the sandbox: a CRLF checkout of LF blobs is
    not a change when the repository says so."""
    root = make_repo({"a.txt": A_TXT})
    git(root, "config", "core.autocrlf", "true")
    (root / "a.txt").write_bytes(A_TXT.replace("\n", "\r\n").encode())
    assert Workspace(root).changed_files("HEAD") == []


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a repository's owner needs root")
def test_repository_owned_by_another_user_fails_closed(
    make_repo: MakeRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """git refuses a repository owned by someone else; that refusal is a failed check
    with git's reason, never a pass, until the operator lists it as safe."""
    root = make_repo({"a.txt": A_TXT})
    (root / "a.txt").write_text("changed\n")
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), 65534, 65534)
    os.lchown(root, 65534, 65534)
    ws = Workspace(root)
    ev = Evidence(workspace=ws)
    [change] = ChangeCheck().verify({"files": ["a.txt"]}, ev)
    assert change.code == "diff_unavailable" and "dubious ownership" in change.message
    [hashed] = HashCheck().verify({"path": "a.txt", "sha256": "0" * 64, "revision": "HEAD"}, ev)
    assert not hashed.passed and "dubious ownership" in hashed.message
    manifest = [{"item": "x", "status": "changed", "files": ["a.txt"]}]
    assert not any(f.passed for f in CitationReplay().verify(manifest, ev))
    assert main(["acquire", "a.txt", "--root", str(root), "--rev", "HEAD"]) == 2
    assert "dubious ownership" in capsys.readouterr().err

    monkeypatch.setenv("TRUSTGATE_GIT_SAFE_DIRECTORY", str(root))
    assert [f.passed for f in ChangeCheck().verify({"files": ["a.txt"]}, ev)] == [True]
