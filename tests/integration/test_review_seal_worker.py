"""A review paused by a worker process resumes elsewhere only under the shared key (a real
second process).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.types import Command


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRUSTGATE_REVIEW_KEY", raising=False)
    monkeypatch.delenv("TRUSTGATE_REVIEW_KEY_FILE", raising=False)


# --- in a graph ------------------------------------------------------------------------------


def test_a_review_paused_by_a_worker_process_needs_the_shared_key(tmp_path: Path) -> None:
    """A real second process: paused there without a key, resumed here."""
    import multiprocessing

    from _persist_support import build_graph, cfg, worker_invoke

    from trustgate.errors import ReviewKeyMismatch
    from trustgate.persistence import connect

    url = str(tmp_path / "shared.db")
    p = multiprocessing.get_context("spawn").Process(
        target=worker_invoke, args=(url, "rev", "LIE: the fix is already merged", "review", None)
    )
    p.start()
    p.join(120)
    assert p.exitcode == 0
    with connect(url) as db:
        app = build_graph(policy="review").compile(checkpointer=db.checkpointer)
        assert app.get_state(cfg("rev")).interrupts
        with pytest.raises(ReviewKeyMismatch, match="sealed by another process"):
            app.invoke(Command(resume={"type": "approve", "by": "bob"}), cfg("rev"))
