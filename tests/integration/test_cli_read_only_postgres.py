"""``trustgate history`` against PostgreSQL reads and changes nothing: no DDL, read-only
connections.
"""

from __future__ import annotations

import pytest
from _cli_support import bare_logging, make_log_db, sql

from trustgate.cli import main
from trustgate.errors import ConfigurationError


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with bare_logging():
        code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback (most recent call last)" not in err, err
    return code, out, err


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("trustgate: "), err
    return err


def test_a_postgres_read_runs_no_ddl(pg_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A database without a report log stays without one; a read's connections are
    read-only, so the server itself would refuse a write."""
    code, _, err = run(["history", "--database", pg_url], capsys)
    assert code == 2 and "holds no trustgate report log" in one_line(err)
    assert sql(pg_url, "SELECT to_regclass('trustgate_reports')") == [(None,)]
    make_log_db(pg_url)
    code, out, _ = run(["history", "--database", pg_url], capsys)
    assert code == 0 and "3 crossing(s)" in out

    from trustgate.persistence import PostgresReportHistory

    log = PostgresReportHistory(pg_url, read_only=True)
    try:
        with pytest.raises(ConfigurationError, match="read-only"):
            from trustgate._report_seal import seal

            log.record([seal(log.history()[0].model_copy(update={"id": "x" * 32}).to_json_dict())])
        import psycopg

        with log._pool.connection() as c, pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            c.execute("CREATE TABLE trustgate_probe (x int)")
    finally:
        log.close()
