"""Span export that never holds a crossing, or the process, on a dead collector.

Why: the OpenTelemetry SDK's ``SimpleSpanProcessor`` exports on the thread that ends
the span, so with a collector that accepts connections and never answers (or refuses
them, with retries), every crossing waited out the exporter's timeout, 10 s per span
by default; and ``shutdown()`` waited for the last export of spans and of metrics in
turn. Here:

* :class:`BackgroundSpanProcessor` (``configure(batch=False)``): the ending thread only
  appends the span to a bounded queue; a daemon thread exports each span as soon as it
  is there. A full queue drops the span and counts it (``dropped``), it never blocks.
* :class:`BoundedBatchSpanProcessor` (``batch=True``): the SDK's batch processor, whose
  ``force_flush`` and ``shutdown`` return after their limit even while an export is
  still in flight (it goes on in a daemon thread until the exporter's own timeout).
* :func:`within`: run a blocking step with a limit; what :meth:`Telemetry.shutdown`
  and ``force_flush`` use, so their total time is bounded too.

This module imports the SDK; only :func:`trustgate.otel.configure` imports it.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from time import monotonic
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

__all__ = [
    "DEFAULT_EXPORT_TIMEOUT",
    "DEFAULT_MAX_QUEUE_SIZE",
    "DEFAULT_SHUTDOWN_TIMEOUT",
    "BackgroundSpanProcessor",
    "BoundedBatchSpanProcessor",
    "within",
]

logger = logging.getLogger(__name__)

DEFAULT_EXPORT_TIMEOUT = 3.0  # seconds, one export request with its retries
DEFAULT_SHUTDOWN_TIMEOUT = 5.0  # seconds, the whole of Telemetry.shutdown()
DEFAULT_MAX_QUEUE_SIZE = 2048  # spans waiting for the background exporter
_MAX_EXPORT_BATCH = 64  # spans per request when several are already waiting


def within(limit: float, fn: Callable[[], Any], what: str) -> bool:
    """Run ``fn()`` for at most ``limit`` seconds; ``True`` when it finished in time.

    ``fn`` runs in a daemon thread: past the limit this returns ``False`` and the
    step goes on (an export ends at its own timeout) without holding the caller or
    the process's exit. An exception of ``fn`` is logged and counts as not done.
    """
    outcome: list[bool] = []

    def run() -> None:
        try:
            fn()
        except Exception as exc:
            logger.warning("%s failed: %s", what, exc)
            outcome.append(False)
            return
        outcome.append(True)

    worker = threading.Thread(target=run, name=f"trustgate-{what.replace(' ', '-')}", daemon=True)
    worker.start()
    worker.join(max(0.0, limit))
    if not outcome:
        logger.warning(
            "%s did not finish within %.1f s (the OTLP collector is not answering?); "
            "not waiting longer, spans still unsent are dropped",
            what,
            limit,
        )
        return False
    return outcome[0]


class BackgroundSpanProcessor(SpanProcessor):
    """Exports every ended span at once, from its own thread, through a bounded queue.

    ``on_end`` never waits on the network: it appends to the queue (or drops the span
    and counts it in ``dropped`` when ``max_queue_size`` spans are already waiting).
    ``force_flush`` and ``shutdown`` wait for the queue to drain for at most their
    timeout; ``shutdown`` then drops (and counts) whatever is left.
    """

    def __init__(
        self,
        exporter: SpanExporter,
        *,
        max_queue_size: int = DEFAULT_MAX_QUEUE_SIZE,
        shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
    ) -> None:
        self.exporter = exporter
        self.max_queue_size = max_queue_size
        self.shutdown_timeout = shutdown_timeout
        self.dropped = 0
        self._queue: deque[ReadableSpan] = deque()
        self._cond = threading.Condition()
        self._busy = False
        self._stopped = False
        self._warned = False
        self._start()
        ref = weakref.ref(self)

        def after_fork() -> None:  # a forked child has the queue but not the thread
            processor = ref()
            if processor is not None:
                processor._reinit()

        os.register_at_fork(after_in_child=after_fork)

    def _start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="trustgate-otlp-export", daemon=True)
        self._thread.start()

    def _reinit(self) -> None:
        self._cond = threading.Condition()
        self._queue.clear()
        self._busy = False
        if not self._stopped:
            self._start()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        if span.context is not None and not span.context.trace_flags.sampled:
            return
        with self._cond:
            if self._stopped or len(self._queue) >= self.max_queue_size:
                self.dropped += 1
                warn = not self._warned
                self._warned = True
            else:
                self._queue.append(span)
                self._cond.notify_all()
                return
        if warn:
            logger.warning(
                "span export is %s: spans are dropped (counted in Telemetry.dropped_spans) "
                "instead of holding the graph",
                "shut down" if self._stopped else f"{self.max_queue_size} spans behind",
            )

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._stopped:
                    self._cond.wait()
                if not self._queue:
                    return
                count = min(len(self._queue), _MAX_EXPORT_BATCH)
                batch: Sequence[ReadableSpan] = [self._queue.popleft() for _ in range(count)]
                self._busy = True
            try:
                self.exporter.export(batch)  # bounded by the exporter's own timeout
            except Exception as exc:
                logger.warning("exporting %d span(s) failed: %s", len(batch), exc)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        deadline = monotonic() + timeout_millis / 1000
        with self._cond:
            while self._queue or self._busy:
                left = deadline - monotonic()
                if left <= 0 or not self._thread.is_alive():
                    return False
                self._cond.wait(left)
        return True

    def shutdown(self, timeout_millis: float | None = None) -> None:
        if self._stopped:
            return
        limit = self.shutdown_timeout * 1000 if timeout_millis is None else timeout_millis
        if not self.force_flush(int(limit)):
            logger.warning(
                "%d span(s) not exported within %.1f s of shutdown; dropped",
                len(self._queue) + int(self._busy),
                limit / 1000,
            )
        with self._cond:
            self._stopped = True
            self.dropped += len(self._queue)
            self._queue.clear()
            self._cond.notify_all()
        # ends the exporter's retries; a request in flight ends at its own timeout
        within(1.0, self.exporter.shutdown, "span exporter shutdown")


class BoundedBatchSpanProcessor(BatchSpanProcessor):
    """The SDK's batch processor, with ``force_flush`` and ``shutdown`` that keep to a limit.

    The SDK's ``force_flush`` exports on the caller's thread whatever its timeout says,
    and its ``shutdown`` (also what the tracer provider calls at exit) waits up to 30 s.
    """

    def __init__(
        self, exporter: SpanExporter, *, shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT
    ) -> None:
        super().__init__(exporter)
        self.shutdown_timeout = shutdown_timeout

    def force_flush(self, timeout_millis: int | None = None) -> bool:
        limit = self.shutdown_timeout if timeout_millis is None else timeout_millis / 1000
        return within(limit, super().force_flush, "span flush")

    def shutdown(self) -> None:
        within(self.shutdown_timeout, super().shutdown, "span processor shutdown")
