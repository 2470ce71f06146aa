"""The package's name on PyPI, and the install line each optional part names.

The import package is ``trustgate``; the distribution is ``langgraph-trustgate``
(``trustgate`` on PyPI is an unrelated project). Every message that tells a user to
install something is built here, so no message can name the wrong package.
"""

from __future__ import annotations

__all__ = ["DISTRIBUTION", "VERSION", "install_hint"]

DISTRIBUTION = "langgraph-trustgate"
VERSION = "0.1.0"
"""Kept equal to ``importlib.metadata.version(DISTRIBUTION)`` by a test (reading the
installed metadata at import would cost every ``import trustgate`` ~20 ms)."""


def install_hint(extra: str | None = None) -> str:
    """``pip install 'langgraph-trustgate[extra]'`` (or the bare package)."""
    return f"pip install '{DISTRIBUTION}[{extra}]'" if extra else f"pip install {DISTRIBUTION}"
