"""The pytest plugin (entry point ``pytest11: trustgate``): fixtures that cost nothing
until a test asks for one.

Installing trustgate registers this module in every pytest run of every project in
the environment, so it imports nothing beyond pytest itself: each fixture imports
:mod:`trustgate.testing` (LangChain, the OpenTelemetry SDK) when a test first uses
it. What the fixtures do is documented in :mod:`trustgate.testing`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from trustgate.testing import LieCheck, ScriptedChatModel

__all__ = [
    "trustgate_assert_lie_blocked",
    "trustgate_honest_model",
    "trustgate_lying_model",
    "trustgate_pipeline_models",
    "trustgate_spans",
]


@pytest.fixture
def trustgate_spans() -> Iterator[Any]:
    """The spans finished during the test (``exporter.get_finished_spans()``).

    Example:
        ```python
        def test_override_is_traced(trustgate_spans):
            run_my_guarded_graph()
            names = [s.name for s in trustgate_spans.get_finished_spans()]
            assert "trustgate.gate inspector" in names
        ```
    """
    from trustgate.testing import span_exporter

    exporter = span_exporter()
    exporter.clear()
    yield exporter
    exporter.clear()


@pytest.fixture
def trustgate_lying_model() -> Callable[..., ScriptedChatModel]:
    """Factory: ``trustgate_lying_model("reply", ...)`` → a lying scripted model."""
    from trustgate.testing import lying_model

    return lying_model


@pytest.fixture
def trustgate_honest_model() -> Callable[..., ScriptedChatModel]:
    """Factory: ``trustgate_honest_model("reply", ...)`` → an honest scripted model."""
    from trustgate.testing import honest_model

    return honest_model


@pytest.fixture
def trustgate_pipeline_models() -> Callable[..., dict[str, ScriptedChatModel]]:
    """Factory: ``trustgate_pipeline_models("postmortem", "inventing")`` → role → model."""
    from trustgate.testing import pipeline_models

    return pipeline_models


@pytest.fixture
def trustgate_assert_lie_blocked() -> Callable[..., LieCheck]:
    """:func:`trustgate.testing.assert_lie_blocked`, as a fixture."""
    from trustgate.testing import assert_lie_blocked

    return assert_lie_blocked
