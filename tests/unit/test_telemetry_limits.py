"""``configure()``'s bounds on export and shutdown: their defaults, the standard variables,
and limits that would wait for ever refused.

In-process, nothing is exported here (no crossing runs). What a dead collector costs
with these bounds is measured in tests/integration/test_telemetry_dead_collector.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from trustgate import otel
from trustgate.errors import ConfigurationError
from trustgate.otel._export import (
    DEFAULT_EXPORT_TIMEOUT,
    DEFAULT_SHUTDOWN_TIMEOUT,
    BackgroundSpanProcessor,
    BoundedBatchSpanProcessor,
)
from trustgate.otel.sdk import _export_timeout

URL = "http://127.0.0.1:9"


@pytest.fixture(autouse=True)
def _clean_otel_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (
        "OTEL_EXPORTER_OTLP_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
        "OTEL_METRICS_EXPORTER",
    ):
        monkeypatch.delenv(var, raising=False)


def test_the_export_timeout_is_short_by_default_and_the_standard_variables_win(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _export_timeout(None, "TRACES") == DEFAULT_EXPORT_TIMEOUT == 3.0  # not the SDK's 10
    assert _export_timeout(1.5, "TRACES") == 1.5
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "7")
    # None: the exporter reads the variable itself, as it would without trustgate
    assert _export_timeout(None, "TRACES") is None
    assert _export_timeout(None, "METRICS") == DEFAULT_EXPORT_TIMEOUT
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "7")
    assert _export_timeout(None, "METRICS") is None
    assert _export_timeout(2, "METRICS") == 2.0  # the argument still wins


@pytest.mark.parametrize(
    ("batch", "processor"),
    [(True, BoundedBatchSpanProcessor), (False, BackgroundSpanProcessor)],
)
def test_neither_mode_exports_on_the_thread_that_ends_a_span(
    batch: bool, processor: type[Any]
) -> None:
    tel = otel.configure(URL, set_global=False, batch=batch, metrics=False)
    try:
        assert type(tel._processor) is processor
        assert tel.shutdown_timeout == DEFAULT_SHUTDOWN_TIMEOUT == 5.0
        assert tel.dropped_spans == 0
    finally:
        assert tel.shutdown()  # nothing was pending: done well within the limit
    assert tel.shutdown()  # a second call is a no-op


@pytest.mark.parametrize(
    "kwargs",
    [
        {"export_timeout": 0},
        {"export_timeout": -1},
        {"export_timeout": float("inf")},
        {"shutdown_timeout": float("nan")},
        {"shutdown_timeout": 0},
        {"shutdown_timeout": "5"},
        {"max_queue_size": 0},
        {"max_queue_size": 1.5},
        {"max_queue_size": True},
    ],
)
def test_a_bound_that_waits_for_ever_or_is_no_number_is_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        otel.configure(URL, set_global=False, metrics=False, **kwargs)
