"""A real, throwaway PostgreSQL server for the tests and the load bench.

Why a real server: the guarantees of issue 7 (put-if-absent across processes, a
review resumed by another worker, a SIGKILLed worker leaving the run resumable) are
properties of PostgreSQL's transactions and conditional inserts; a mock proves
nothing about them.

How: ``initdb`` into a temporary directory, ``pg_ctl start`` listening on
127.0.0.1 on a free port with the unix socket inside that directory, and ``pg_ctl
stop`` plus removal afterwards. PostgreSQL refuses to run as root, so when the
tests run as root (CI on a fresh machine) the server runs as the unprivileged
system user ``trustgate-pg``, created on first use.

Usage (outside pytest, e.g. the bench):

```python
from pg import temp_postgres

with temp_postgres() as server:
    url = server.create_database("bench")
```

In the tests, ask for the ``pg_url`` fixture (a fresh database per test); with
``CI`` set a server that cannot be started fails the test instead of skipping it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["PG_USER", "PgUnavailable", "TempPostgres", "pg_server", "pg_url", "temp_postgres"]

logger = logging.getLogger(__name__)

PG_USER = "trustgate-pg"
_BIN_DIRS = ("/usr/local/bin", "/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin")


class PgUnavailable(RuntimeError):
    """No PostgreSQL server could be started on this machine (the reason says why)."""


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for d in _BIN_DIRS:
        candidate = Path(d) / name
        if candidate.exists():
            return str(candidate)
    raise PgUnavailable(f"{name} not found on PATH or in {', '.join(_BIN_DIRS)}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ensure_user() -> str | None:
    """The user to run the server as: ``trustgate-pg`` when we are root, else ourselves."""
    if os.geteuid() != 0:
        return None
    try:
        import pwd

        pwd.getpwnam(PG_USER)
    except KeyError:
        useradd = shutil.which("useradd") or "/usr/sbin/useradd"
        if not Path(useradd).exists():
            useradd = "useradd"
        try:
            proc = subprocess.run(
                [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER],
                capture_output=True,
                text=True,
            )
        except OSError as exc:
            proc = subprocess.CompletedProcess([useradd], 127, "", str(exc))
        if proc.returncode not in (0, 9):  # 9: already exists (a concurrent creator)
            try:  # no useradd on this machine: any unprivileged account will do
                pwd.getpwnam("nobody")
            except KeyError:
                raise PgUnavailable(
                    f"cannot create user {PG_USER} ({proc.stderr.strip()}) and no 'nobody'"
                ) from None
            return "nobody"
    return PG_USER


@dataclass
class TempPostgres:
    """A running throwaway server; ``url`` is its admin database."""

    root: Path
    port: int
    user: str | None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def create_database(self, name: str | None = None) -> str:
        """A new empty database on the server; returns its URL."""
        import psycopg

        name = name or f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"


def _run(cmd: list[str], user: str | None, cwd: Path, timeout: float = 120) -> None:
    proc = subprocess.run(
        cmd,
        user=user,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "LC_ALL": "C", "LANG": "C"},
    )
    if proc.returncode != 0:
        raise PgUnavailable(f"{Path(cmd[0]).name} failed: {(proc.stderr or proc.stdout).strip()}")


@contextlib.contextmanager
def temp_postgres() -> Iterator[TempPostgres]:
    """Start a throwaway PostgreSQL server; stop it and delete its files on exit."""
    initdb, pg_ctl = _tool("initdb"), _tool("pg_ctl")
    user = _ensure_user()
    # as root, a directory the unprivileged user can traverse (TMPDIR may be private)
    base = "/tmp" if user is not None and Path("/tmp").is_dir() else None
    root = Path(tempfile.mkdtemp(prefix="trustgate-pg-", dir=base))
    started = False
    try:
        os.chmod(root, 0o700)
        if user is not None:
            shutil.chown(root, user=user)
        data = root / "data"
        _run(
            [initdb, "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
             "--locale=C", "--no-sync"],
            user,
            root,
        )  # fmt: skip
        last: PgUnavailable | None = None
        for _ in range(5):  # a free port can be taken between probing and binding
            port = _free_port()
            options = (
                f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c synchronous_commit=off "
                "-c full_page_writes=off -c max_connections=200"
            )
            try:
                _run(
                    [pg_ctl, "-D", str(data), "-l", str(root / "server.log"), "-o", options,
                     "-w", "-t", "60", "start"],
                    user,
                    root,
                )  # fmt: skip
            except PgUnavailable as exc:
                last = exc
                continue
            started = True
            break
        if not started:
            log = (root / "server.log").read_text(errors="replace")[-2000:]
            raise PgUnavailable(f"{last}\n{log}")
        yield TempPostgres(root=root, port=port, user=user)
    finally:
        if started:
            try:
                _run(
                    [pg_ctl, "-D", str(root / "data"), "-m", "immediate", "-w", "stop"], user, root
                )
            except (PgUnavailable, OSError, subprocess.SubprocessError) as exc:
                # Stopping is cleanup: the data directory is removed below either way,
                # and a server that would not stop must not hide the test's own result.
                logger.warning("throwaway PostgreSQL on port %s did not stop: %s", port, exc)
        shutil.rmtree(root, ignore_errors=True)


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"PostgreSQL tests must run under CI: {reason}", pytrace=False)
    pytest.skip(f"no PostgreSQL server: {reason}")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[TempPostgres]:
    """One server for the whole session, started on first use, stopped at the end."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("psycopg is not installed (install the 'postgres' extra)")
    try:
        cm = temp_postgres()
        server = cm.__enter__()
    except (PgUnavailable, OSError, subprocess.SubprocessError) as exc:
        _unavailable(str(exc))
        raise  # unreachable: skip/fail raise
    try:
        yield server
    finally:
        cm.__exit__(None, None, None)


@pytest.fixture
def pg_url(pg_server: TempPostgres) -> str:
    """A fresh, empty database on the session's server."""
    return pg_server.create_database()
