"""A dead OTLP collector costs a crossing nothing and the process a bounded shutdown.

Two dead collectors, both on 127.0.0.1: one *hanging* (a socket bound and listening
with a backlog of 0 that never accepts: the kernel completes the handshake, the HTTP
client sends its request and waits for an answer that never comes, which is what a
blackholed or wedged collector looks like) and one *refusing* (a port nothing listens
on: each attempt fails at once, and the exporter retries with backoff). A
non-routable address fails at once on a machine without a network, so it proves
nothing here and is not used.

These tests measure wall-clock time, which is their point; the bounds are wide:
a crossing takes less than one export timeout (so no export ran on its thread), a
shutdown less than three times its limit.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import pytest

from trustgate import Finding, Report, otel

EXPORT_TIMEOUT = 3.0
SHUTDOWN_TIMEOUT = 1.0
REPORT = Report(
    gate="inspector",
    node="reviewer",
    findings=[Finding.failed("citation_replay", "content_mismatch", "no")],
    decision="halted",
    released=False,
)


@contextlib.contextmanager
def hanging() -> Iterator[str]:
    """A collector that accepts TCP connections into its backlog and never answers."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(0)
        yield f"http://127.0.0.1:{srv.getsockname()[1]}"


@contextlib.contextmanager
def refusing() -> Iterator[str]:
    """A collector address where nothing listens: every connection is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    yield f"http://127.0.0.1:{port}"


COLLECTORS = {"hanging": hanging, "refusing": refusing}


@pytest.fixture(autouse=True)
def _clean_otel_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
        "OTEL_METRICS_EXPORTER",
    ):
        monkeypatch.delenv(var, raising=False)


def crossing(tel: otel.Telemetry) -> float:
    """One crossing's spans and metrics; returns how long it took."""
    started = time.monotonic()
    with otel.crossing(
        "inspector",
        "reviewer",
        tracer_provider=tel.tracer_provider,
        meter_provider=tel.meter_provider,
    ) as c:
        with c.verifier("citation_replay") as vs:
            vs.record(REPORT.findings)
        c.finish(REPORT)
    return time.monotonic() - started


@pytest.mark.parametrize("batch", [False, True], ids=["batch=False", "batch=True"])
@pytest.mark.parametrize("collector", sorted(COLLECTORS))
def test_crossings_do_not_wait_and_shutdown_keeps_to_its_limit(collector: str, batch: bool) -> None:
    with COLLECTORS[collector]() as url:
        tel = otel.configure(
            url,
            set_global=False,
            batch=batch,
            export_timeout=EXPORT_TIMEOUT,
            shutdown_timeout=SHUTDOWN_TIMEOUT,
        )
        closed = False
        try:
            took = [crossing(tel) for _ in range(3)]
            print(f"{collector}, batch={batch}: crossings took {[round(t, 3) for t in took]} s")
            # an export on the crossing's thread would take about one export timeout
            assert max(took) < EXPORT_TIMEOUT / 3
            started = time.monotonic()
            tel.shutdown()
            closed = True
            shutdown = time.monotonic() - started
            print(f"{collector}, batch={batch}: shutdown took {shutdown:.2f} s")
            assert shutdown < 3 * SHUTDOWN_TIMEOUT
        finally:
            if not closed:
                tel.shutdown()


@pytest.mark.parametrize("collector", sorted(COLLECTORS))
def test_force_flush_keeps_to_its_timeout(collector: str) -> None:
    with COLLECTORS[collector]() as url:
        tel = otel.configure(url, set_global=False, shutdown_timeout=SHUTDOWN_TIMEOUT)
        try:
            crossing(tel)
            started = time.monotonic()
            flushed = tel.force_flush(timeout_millis=1000)
            took = time.monotonic() - started
            print(f"{collector}: force_flush(1 s) returned {flushed} after {took:.2f} s")
            assert flushed is False  # nothing reached the collector
            assert took < 3 * 1.0
        finally:
            tel.shutdown()


def test_a_full_queue_drops_and_counts_instead_of_blocking() -> None:
    with hanging() as url:
        tel = otel.configure(
            url,
            set_global=False,
            batch=False,
            metrics=False,
            max_queue_size=2,
            export_timeout=EXPORT_TIMEOUT,
            shutdown_timeout=SHUTDOWN_TIMEOUT,
        )
        try:
            took = [crossing(tel) for _ in range(10)]  # 2 spans each, one export in flight
            assert max(took) < EXPORT_TIMEOUT / 3
            assert tel.dropped_spans >= 10
        finally:
            tel.shutdown()
        assert tel.dropped_spans >= 14  # and what was still queued at shutdown


_EXITS_WITHOUT_SHUTDOWN = textwrap.dedent(
    """
    import socket, sys, time
    from trustgate import otel
    from trustgate._findings import Finding
    from trustgate._report import Report

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    tel = otel.configure(
        f"http://127.0.0.1:{srv.getsockname()[1]}", set_global=False,
        shutdown_timeout=float(sys.argv[1]),
    )
    report = Report(gate="g", node="n", findings=[Finding.failed("v", "c", "no")],
                    decision="halted", released=False)
    with otel.crossing("g", "n", tracer_provider=tel.tracer_provider,
                       meter_provider=tel.meter_provider) as c:
        c.finish(report)
    print(time.time(), flush=True)  # the script is done; only the exit remains
    """
)


def test_the_process_exits_within_the_limit_without_a_shutdown_call() -> None:
    # the providers' exit hooks flush too: a forgotten shutdown() must not hold the exit
    proc = subprocess.run(
        [sys.executable, "-c", _EXITS_WITHOUT_SHUTDOWN, str(SHUTDOWN_TIMEOUT)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    exited = time.time()
    assert proc.returncode == 0, proc.stderr
    exit_took = exited - float(proc.stdout.split()[-1])
    print(f"exit with spans pending on a hanging collector took {exit_took:.2f} s")
    assert exit_took < 3 * SHUTDOWN_TIMEOUT
