"""A griffe extension for the docs build: Sphinx roles in docstrings become code.

The package's docstrings name other objects with reST roles (``:class:`~trustgate.Report```,
``:func:`guard```), which MkDocs would print verbatim. This rewrites each role to the
object's name in backticks (the last dotted part when the target starts with ``~``), so
the reference reads as the docstrings mean it. Loaded by ``mkdocs.yml``
(``extensions``); nothing in the package imports it.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj|const):`(~?)([^`]+)`")


def _plain(match: re.Match[str]) -> str:
    tilde, target = match.group(1), match.group(2).strip()
    if "<" in target and target.endswith(">"):  # :class:`text <target>`
        return f"`{target.split('<', 1)[0].strip()}`"
    name = target.rsplit(".", 1)[-1] if tilde else target
    return f"`{name}`"


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx cross-reference roles in every docstring to inline code."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_plain, obj.docstring.value)
