"""``trustgate replay`` and ``trustgate acquire``: file evidence from the shell."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    del sub
