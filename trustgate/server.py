"""The crossing record over HTTP, for graphs served by LangGraph's agent server.

Why an endpoint: a client of a deployed graph reads what the server shows, which is
checkpoint values. A halted crossing's report is kept beside its failed task, never in
a checkpoint value, and a graph whose state schema does not declare ``trust_reports``
has the channel hidden from its state; neither reaches thread state or history through
the API. The report log the gates write themselves (``guard(..., report_log=...)``)
holds every crossing, halted or released, whatever the schema, so this module serves it.

The agent server mounts a Starlette app named in ``langgraph.json``::

    "http": {"app": "trustgate.server:app"}

``app`` answers ``GET /trustgate/reports?thread_id=...`` from the log
``TRUSTGATE_DATABASE_URL`` names (the one ``guard(..., report_log=True)`` writes), with
the thread's reports oldest first. Read-only: no other method, nothing written. Each
report is content-free (:meth:`~trustgate.Report.content_free`: which gate did what and
which checks failed, not what the model claimed) unless content capture is on
(``TRUSTGATE_CAPTURE_CONTENT=true``), as on the ``custom`` stream. Rows whose seal does
not hold under the ledger key are not returned, only counted (``refused``).

Optional filters: ``gate``, ``since`` (``2h``, an ISO time), ``limit``. To serve another
log, add routes of your own, or check who may read a thread, build the app with
:func:`reports_app` / :func:`reports_route`. Starlette is what the agent server runs on;
this module needs it installed.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from trustgate._report import for_stream
from trustgate.errors import ConfigurationError, InputError

try:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route
except ImportError as exc:  # pragma: no cover - the agent server always has Starlette
    raise ConfigurationError(
        f"trustgate.server needs Starlette (the agent server's web framework): "
        f"pip install starlette ({exc})"
    ) from None

from trustgate.persistence._log import ReportHistory

__all__ = ["REPORTS_PATH", "app", "reports_app", "reports_route"]

logger = logging.getLogger(__name__)

REPORTS_PATH = "/trustgate/reports"
"""Where :data:`app` serves a thread's reports."""

Authorize = Callable[[Request, str], bool | Awaitable[bool]]
"""``authorize(request, thread_id)``: whether this request may read the thread's reports."""


def _log_of(report_log: ReportHistory | str | os.PathLike[str] | bool) -> Callable[[], Any]:
    """How the route finds its log: the one given, or the shared one of a URL (opened on
    the first request, in the thread the query runs in)."""
    from trustgate.graph._gatelog import shared_log

    if isinstance(report_log, ReportHistory):
        given = report_log
        return lambda: given
    if report_log is True:
        return shared_log
    if isinstance(report_log, (str, os.PathLike)):
        from trustgate.persistence._urls import resolve_url

        resolve_url(report_log)  # a URL of no known database fails here
        url = report_log
        return lambda: shared_log(url)
    raise ConfigurationError(
        "reports_route() takes a ReportHistory, a database URL or True (the database "
        f"TRUSTGATE_DATABASE_URL names), not {type(report_log).__name__}"
    )


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def reports_route(
    report_log: ReportHistory | str | os.PathLike[str] | bool = True,
    *,
    path: str = REPORTS_PATH,
    authorize: Authorize | None = None,
) -> Route:
    """The ``GET`` route serving one thread's reports from ``report_log`` (see the module
    docstring), to add to an app of your own.

    ``authorize``: called with the request and the thread id before anything is read
    (sync or async); ``False`` answers 403. The agent server's own authentication
    covers custom routes only with ``"enable_custom_route_auth": true`` under ``http``
    in ``langgraph.json``, and its thread-level rules not at all: check here who may
    read which thread.

    Example:
        ```python
        from starlette.applications import Starlette
        from trustgate.server import reports_route

        app = Starlette(routes=[reports_route("postgresql://trustgate@db/trust")])
        ```
    """
    find = _log_of(report_log)

    async def reports(request: Request) -> JSONResponse:
        params = request.query_params
        thread = params.get("thread_id")
        if not thread:
            return _error(400, "thread_id is required: GET ...?thread_id=<thread id>")
        if authorize is not None:
            allowed = authorize(request, thread)
            if inspect.isawaitable(allowed):
                allowed = await allowed
            if not allowed:
                return _error(403, "not allowed to read this thread's reports")
        limit: int | None = None
        if params.get("limit"):
            try:
                limit = int(params["limit"])
            except ValueError:
                return _error(400, f"limit must be a whole number, not {params['limit']!r}")
        try:
            log = await asyncio.to_thread(find)
            found = await log.ahistory(
                thread, params.get("gate") or None, params.get("since") or None, limit=limit
            )
        except InputError as exc:
            return _error(400, str(exc))
        except Exception as exc:
            # the detail (a path, a host) stays in the server's log, not in the answer
            logger.warning(
                "GET %s: the report log cannot be read: %s: %s", path, type(exc).__name__, exc
            )
            return _error(503, f"the report log cannot be read ({type(exc).__name__})")
        return JSONResponse(
            {
                "thread_id": thread,
                "reports": [for_stream(r).to_json_dict() for r in found],
                "refused": len(found.refused),
            }
        )

    return Route(path, reports, methods=["GET"], name="trustgate_reports")


def reports_app(
    report_log: ReportHistory | str | os.PathLike[str] | bool = True,
    *,
    path: str = REPORTS_PATH,
    authorize: Authorize | None = None,
) -> Starlette:
    """A Starlette app with the one route of :func:`reports_route`, for ``"http":
    {"app": ...}`` in ``langgraph.json``.

    Example:
        ```python
        # webapp.py, named in langgraph.json as "http": {"app": "./webapp.py:app"}
        from trustgate.server import reports_app

        app = reports_app(authorize=lambda request, thread_id: request.user.is_authenticated)
        ```
    """
    return Starlette(routes=[reports_route(report_log, path=path, authorize=authorize)])


app = reports_app()
"""``GET /trustgate/reports?thread_id=...`` from the log ``TRUSTGATE_DATABASE_URL`` names:
``"http": {"app": "trustgate.server:app"}`` in ``langgraph.json``."""
