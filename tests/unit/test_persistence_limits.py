"""Every PostgreSQL connection trustgate opens carries its bounds, and they are configurable.

No server here: these tests read the connection string trustgate hands to libpq (the
same one LangGraph's savers and stores receive through the pool) and the limits it
derived, and the typed errors' classes. The behaviour against a frozen server is in
tests/integration/test_persistence_outage.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import PoolTimeout

from trustgate.errors import ConfigurationError, DatabaseUnavailable, TrustgateError
from trustgate.persistence import _postgres, connect
from trustgate.persistence._pglimits import (
    PgConnectionLost,
    PgDeadlineExceeded,
    PgFailingFast,
    PgLimits,
    PgPoolTimeout,
    PgStatementCanceled,
    PgTarget,
    pg_target,
)

URL = "postgresql://app:secret@db.example.com:5432/trust"


@pytest.fixture(autouse=True)
def _no_libpq_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    monkeypatch.delenv("PGOPTIONS", raising=False)


def _params(target: PgTarget) -> dict[str, Any]:
    return dict(conninfo_to_dict(target.conninfo))


def test_the_defaults_bound_connect_statements_the_pool_and_the_tcp_connection() -> None:
    target = pg_target(URL)
    params = _params(target)
    assert params["connect_timeout"] == "5"
    assert params["options"] == "-c statement_timeout=5000"
    assert params["keepalives"] == "1"
    assert {"keepalives_idle", "keepalives_interval", "keepalives_count"} <= set(params)
    assert params["tcp_user_timeout"] == "10000"
    # the URL's own parts are kept
    assert (params["host"], params["port"], params["dbname"], params["user"]) == (
        "db.example.com",
        "5432",
        "trust",
        "app",
    )
    assert params["password"] == "secret"
    assert target.limits == PgLimits(connect_timeout=5, statement_timeout=5, pool_timeout=5)
    assert target.limits.deadline == 6.0  # the client gives up one second after the server
    assert "secret" not in target.guard.where


def test_arguments_win_over_the_url_and_the_url_over_the_defaults() -> None:
    in_url = (
        f"{URL}?connect_timeout=9&keepalives_idle=30"
        "&options=-c%20search_path%3Dapp%20-c%20statement_timeout%3D30s"
    )
    from_url = pg_target(in_url)
    params = _params(from_url)
    assert params["connect_timeout"] == "9" and params["keepalives_idle"] == "30"
    assert params["options"] == "-c search_path=app -c statement_timeout=30s"  # as given
    assert from_url.limits.statement_timeout == 30.0 and from_url.limits.deadline == 31.0

    explicit = pg_target(in_url, connect_timeout=3, statement_timeout=2.5, pool_timeout=7)
    params = _params(explicit)
    assert params["connect_timeout"] == "3"
    # ours last: PostgreSQL applies the last setting of a name
    assert params["options"].endswith("-c statement_timeout=2500")
    assert "search_path=app" in params["options"]
    assert explicit.limits == PgLimits(connect_timeout=3, statement_timeout=2.5, pool_timeout=7)


def test_libpq_environment_is_honoured_and_merged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "12")
    monkeypatch.setenv("PGOPTIONS", "-c search_path=env")
    target = pg_target(URL)
    params = _params(target)
    assert params["connect_timeout"] == "12" and target.limits.connect_timeout == 12
    # libpq ignores PGOPTIONS once the conninfo has options: they are carried over
    assert params["options"] == "-c search_path=env -c statement_timeout=5000"

    monkeypatch.setenv("PGOPTIONS", "--statement-timeout=1min")
    assert pg_target(URL).limits.statement_timeout == 60.0


@pytest.mark.parametrize(
    ("value", "seconds"), [("250", 0.25), ("250ms", 0.25), ("2s", 2.0), ("1min", 60.0)]
)
def test_statement_timeout_units_in_the_url(value: str, seconds: float) -> None:
    target = pg_target(f"{URL}?options=-c%20statement_timeout%3D{value}")
    assert target.limits.statement_timeout == seconds


def test_statement_timeout_zero_turns_the_statement_bounds_off() -> None:
    target = pg_target(URL, statement_timeout=0)
    assert _params(target)["options"] == "-c statement_timeout=0"
    assert target.limits.deadline is None
    assert _params(target)["connect_timeout"] == "5"  # the other bounds stay


def test_connect_timeout_is_whole_seconds_and_at_least_two() -> None:
    # libpq's unit and minimum: a fractional limit is rounded up, never to "no limit"
    assert _params(pg_target(URL, connect_timeout=0.5))["connect_timeout"] == "2"
    assert _params(pg_target(URL, connect_timeout=2.2))["connect_timeout"] == "3"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"connect_timeout": 0},
        {"connect_timeout": -1},
        {"statement_timeout": -1},
        {"statement_timeout": float("nan")},
        {"pool_timeout": float("inf")},
        {"pool_timeout": 0},
        {"statement_timeout": "5"},
        {"connect_timeout": True},
    ],
)
def test_a_limit_that_waits_for_ever_or_is_no_number_is_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        pg_target(URL, **kwargs)


@pytest.mark.parametrize(
    "url",
    [
        f"{URL}?connect_timeout=0",
        f"{URL}?connect_timeout=soon",
        f"{URL}?options=-c%20statement_timeout%3Dlater",
        "postgresql://host/db?nonsense=1",
    ],
)
def test_bad_settings_in_the_url_are_configuration_errors(url: str) -> None:
    with pytest.raises(ConfigurationError):
        pg_target(url)


def test_connect_hands_its_arguments_to_the_postgres_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[PgTarget] = []

    def fake(target: PgTarget, key: Any) -> Any:
        seen.append(target)
        return "db"

    monkeypatch.setattr(_postgres, "connect_postgres", fake)
    assert connect(URL, connect_timeout=4, statement_timeout=20, pool_timeout=8) == "db"
    (target,) = seen
    assert target.limits == PgLimits(connect_timeout=4, statement_timeout=20, pool_timeout=8)
    assert _params(target)["options"] == "-c statement_timeout=20000"


@pytest.mark.parametrize(
    ("typed", "psycopg_class"),
    [
        (PgDeadlineExceeded, pg_errors.OperationalError),
        (PgStatementCanceled, pg_errors.QueryCanceled),
        (PgConnectionLost, pg_errors.OperationalError),
        (PgFailingFast, pg_errors.OperationalError),
        (PgPoolTimeout, PoolTimeout),
    ],
)
def test_the_typed_errors_are_also_the_psycopg_errors_they_replace(
    typed: type[Exception], psycopg_class: type[Exception]
) -> None:
    # trustgate's callers catch DatabaseUnavailable; code written for psycopg (LangGraph's
    # savers, psycopg_pool) still sees the error class it handles
    assert issubclass(typed, DatabaseUnavailable) and issubclass(typed, TrustgateError)
    assert issubclass(typed, psycopg_class)
    err = typed("the message")
    assert str(err) == "the message"


def test_after_a_missed_deadline_the_database_fails_fast_until_it_answers() -> None:
    guard = pg_target(URL).guard
    guard.check()  # nothing missed yet: no error

    class Conn:
        class pgconn:
            finished = False

            @classmethod
            def finish(cls) -> None:
                cls.finished = True

    err = guard.expired(Conn)  # type: ignore[arg-type]
    assert isinstance(err, DatabaseUnavailable) and "did not answer within 6 s" in str(err)
    assert Conn.pgconn.finished  # a connection cut off mid-protocol is not reused
    with pytest.raises(PgFailingFast, match="did not answer within 6 s"):
        guard.check()
    guard.answered()  # a round trip that succeeded ends the window
    guard.check()
