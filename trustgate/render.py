"""Readable views of what a gate did: terminal text and HTML tables for notebooks.

:func:`to_text` and :func:`to_html` render a :class:`~trustgate.Report`, a
:class:`~trustgate.Finding`, a :class:`~trustgate.drafts.DraftVerdict`, an
:class:`~trustgate.files.Artifact`, or a list of them. In a notebook the objects render
as these tables by themselves (``_repr_html_``); in a terminal, ``to_text(obj,
colour=True)`` adds ANSI colour. Every value is escaped.

Example:
    ```python
    from trustgate import Finding
    from trustgate.render import to_html, to_text

    f = Finding.failed("citation_replay", "file_missing", "app/limits.py does not exist")
    assert "file_missing" in to_text(f)
    assert to_html(f).startswith("<table")
    ```
"""

from __future__ import annotations

from trustgate._render import to_html, to_text

__all__ = ["to_html", "to_text"]
