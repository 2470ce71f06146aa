"""The code-review sample (seed 000) on bundled data: a builder's manifest, replayed.

Builds a real git repository in a temporary directory from the bundled files, applies
the one real change, then asks a scripted builder model (honest or inventing) for its
changes manifest and replays it against the repository.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from trustgate.claims import ChangesManifest
from trustgate.evidence.workspace import Workspace
from trustgate.findings import Finding
from trustgate.testing import ScriptedChatModel
from trustgate.verifiers.citations import replay_manifest

DATA = resources.files("trustgate") / "_demo" / "data" / "code_review"


def _load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@contextmanager
def sample_repository() -> Iterator[Path]:
    """A throwaway git repository holding the sample service, with the builder's change."""
    tmp = Path(tempfile.mkdtemp(prefix="trustgate-demo-"))
    try:
        root = tmp / "orders-service"
        with resources.as_file(DATA / "repo") as src:
            shutil.copytree(src, root)
        _git(root, "init", "-q", "-b", "main")
        for key, value in (
            ("user.email", "demo@example.invalid"),
            ("user.name", "demo"),
            ("commit.gpgsign", "false"),
        ):
            _git(root, "config", key, value)
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "orders service")
        change = _load("review.json")["change"]
        (root / change["path"]).write_text(change["content"], encoding="utf-8")
        yield root
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def builder(personality: str) -> ScriptedChatModel:
    manifest = _load(
        "honest_manifest.json" if personality == "honest" else "inventing_manifest.json"
    )
    return ScriptedChatModel(
        responses=[manifest], personality="honest" if personality == "honest" else "lying"
    )


def run(personality: str, root: Path) -> tuple[ChangesManifest, list[Finding]]:
    review = _load("review.json")
    prompt = "Review action items:\n" + "\n".join(f"- {a}" for a in review["action_items"])
    manifest = builder(personality).with_structured_output(ChangesManifest).invoke(prompt)
    return manifest, replay_manifest(manifest, Workspace(root))
