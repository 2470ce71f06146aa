"""Four reference pipelines, as guarded LangGraph graphs: code review, incident
investigation, postmortem and compliance drafting.

Each module exposes ``build(model=None, *, personality="inventing", ...)`` returning a
compiled, guarded graph, and ``sample_inputs()`` for the bundled data:

* :mod:`~trustgate.pipelines.code_review`: citations replayed, a reviewer's
  ``APPROVE`` overridden to ``REQUEST_CHANGES`` when one fails;
* :mod:`~trustgate.pipelines.investigation`: locators acquired into the ledger,
  per-field trust bars, review of unverified grounding, tamper re-hash;
* :mod:`~trustgate.pipelines.postmortem`: uncited causes and hedges deleted, gaps
  asked of a person, answers kept as attributed testimony;
* :mod:`~trustgate.pipelines.compliance`: a closed citation list and URL/price
  integrity over a blind verifier model, re-render once, caveat or halt.

Models are the scripted personalities of :mod:`trustgate.testing` by default, or any
chat model (``build(model=...)``, or the ``TRUSTGATE_MODEL`` environment variable
naming one for ``init_chat_model``). ``graphs/*.py`` at the repository root expose
``graph = build()`` for ``langgraph.json``.

Example:
    ```python
    from trustgate.pipelines import PIPELINES, load

    assert set(PIPELINES) == {"code_review", "investigation", "postmortem", "compliance"}
    graph = load("postmortem").build(personality="honest")
    ```
"""

from __future__ import annotations

import importlib
from types import ModuleType

from trustgate.errors import InputError
from trustgate.pipelines._common import MODEL_ENV, make_sample_repository

__all__ = ["MODEL_ENV", "PIPELINES", "load", "make_sample_repository"]

PIPELINES = ("code_review", "investigation", "postmortem", "compliance")


def load(name: str) -> ModuleType:
    """The pipeline module for ``name`` (``code-review`` and ``code_review`` alike)."""
    key = name.replace("-", "_")
    if key not in PIPELINES:
        raise InputError(f"unknown pipeline {name!r}; choose one of {', '.join(PIPELINES)}")
    return importlib.import_module(f"trustgate.pipelines.{key}")
