"""Helpers shared by tests: real git repositories and file trees in temp dirs."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")


MakeRepo = Callable[[Mapping[str, str | bytes]], Path]

APP_PY = (
    "import json\n"
    "\n"
    "def handler(event):\n"
    "    if not event.get('body'):\n"
    "        raise ValueError('empty body')\n"
    "    payload = json.loads(event['body'])\n"
    "    return validate(payload)\n"
    "\n"
    "def validate(payload):\n"
    "    return {'ok': bool(payload)}\n"
)
