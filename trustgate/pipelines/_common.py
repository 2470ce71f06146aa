"""What the four reference pipelines share: models, sample data, sample repositories.

The pipelines run offline by default with the scripted personalities of
:mod:`trustgate.testing` (an honest one and an inventing one per pipeline), or with
any LangChain chat model: pass one (or a ``provider:model`` string for
``init_chat_model``) to ``build(model=...)``, or set ``TRUSTGATE_MODEL``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel

from trustgate._meta import install_hint
from trustgate.errors import ConfigurationError, InputError

__all__ = [
    "MODEL_ENV",
    "Personality",
    "data_dir",
    "load_json",
    "load_text",
    "make_sample_repository",
    "resolve_models",
]

MODEL_ENV = "TRUSTGATE_MODEL"
Personality = Literal["honest", "inventing"]


def data_dir(pipeline: str) -> Traversable:
    """The bundled sample data of one pipeline (package data, works installed)."""
    return resources.files("trustgate") / "_demo" / "data" / pipeline


def load_json(pipeline: str, name: str) -> Any:
    return json.loads((data_dir(pipeline) / name).read_text(encoding="utf-8"))


def load_text(pipeline: str, name: str) -> str:
    return (data_dir(pipeline) / name).read_text(encoding="utf-8")


def _git(root: Path, *args: str) -> None:
    try:
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    except FileNotFoundError as exc:
        raise ConfigurationError("the sample repository needs the git command") from exc
    except subprocess.CalledProcessError as exc:
        raise ConfigurationError(
            f"git {' '.join(args)} failed: {exc.stderr.decode(errors='replace').strip()}"
        ) from exc


def make_sample_repository(
    pipeline: str,
    dest: str | Path | None = None,
    *,
    uncommitted: Mapping[str, str] | None = None,
) -> Path:
    """Create a real git repository from a pipeline's bundled ``repo/`` files.

    The files are committed once; ``uncommitted`` files are written afterwards so
    the working tree differs from ``HEAD`` the way a builder's change does. Without
    ``dest`` a fresh temporary directory is used (the caller owns it).

    Example:
        ```python
        from trustgate.pipelines import make_sample_repository

        root = make_sample_repository("code_review")
        assert (root / "app" / "handlers.py").exists()
        ```
    """
    base = Path(dest) if dest is not None else Path(tempfile.mkdtemp(prefix="trustgate-"))
    root = base / f"{pipeline}-repo"
    if root.exists():
        shutil.rmtree(root)
    with resources.as_file(data_dir(pipeline) / "repo") as src:
        shutil.copytree(src, root)
    _git(root, "init", "-q", "-b", "main")
    for key, value in (
        ("user.email", "demo@example.invalid"),
        ("user.name", "trustgate demo"),
        ("commit.gpgsign", "false"),
    ):
        _git(root, "config", key, value)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", f"{pipeline} sample")
    for rel, content in (uncommitted or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


ModelSpec = BaseChatModel | str | Mapping[str, "BaseChatModel | str"] | None


def _init(spec: BaseChatModel | str) -> BaseChatModel:
    if isinstance(spec, BaseChatModel):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"a model is a chat model or a 'provider:model' string, not {spec!r}")
    try:
        from langchain.chat_models import init_chat_model
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigurationError(
            f"choosing a model by name needs langchain: {install_hint('agents')}"
        ) from exc
    try:
        model: BaseChatModel = init_chat_model(spec.strip())
    except Exception as exc:
        raise InputError(f"cannot initialise model {spec!r}: {exc}") from exc
    return model


def resolve_models(
    model: ModelSpec,
    roles: Sequence[str],
    scripted: Callable[[Personality], Mapping[str, BaseChatModel]],
    personality: Personality,
) -> dict[str, BaseChatModel]:
    """One chat model per role of a pipeline.

    ``model`` may be a chat model or a name (used for every role), a mapping role →
    model/name (roles it leaves out stay scripted), or ``None``: then
    ``TRUSTGATE_MODEL`` names the model when set, else the scripted personality runs.
    """
    if personality not in ("honest", "inventing"):
        raise InputError(f"personality must be 'honest' or 'inventing', not {personality!r}")
    if model is None:
        env = os.environ.get(MODEL_ENV, "").strip()
        model = env or None
    base = dict(scripted(personality))
    if model is None:
        return {r: base[r] for r in roles}
    if isinstance(model, Mapping):
        unknown = set(model) - set(roles)
        if unknown:
            raise InputError(f"unknown model roles {sorted(unknown)}; roles are {list(roles)}")
        return {r: _init(model[r]) if r in model else base[r] for r in roles}
    chosen = _init(model)
    return {r: chosen for r in roles}


def checkpointer_for(checkpointer: Any) -> Any:
    """``None``/``True``: an in-memory saver; ``False``: none (a server brings its own)."""
    if checkpointer is None or checkpointer is True:
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver()
    if checkpointer is False:
        return None
    return checkpointer
