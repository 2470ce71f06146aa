"""A real, throwaway PostgreSQL server for the tests and the load bench.

Why a real server: the guarantees of issue 7 (put-if-absent across processes, a
review resumed by another worker, a SIGKILLed worker leaving the run resumable) are
properties of PostgreSQL's transactions and conditional inserts; a mock proves
nothing about them.

How: ``initdb`` into a temporary directory, then ``postgres`` listening on
127.0.0.1 on a free port with the unix socket inside that directory, stopped and
removed afterwards. PostgreSQL refuses to run as root, so when the tests run as
root (CI on a fresh machine) the server runs as the unprivileged system user
``trustgate-pg``, created on first use.

The server dies with the test process however that ends (a timeout, ``kill -9``):
it is not started with ``pg_ctl start``, which detaches it, but as the child of a
small supervisor (``tests/_pg_supervisor.py``) that stops it and removes its
directory when this process closes the supervisor's stdin or dies, and that takes
the server with it (``PR_SET_PDEATHSIG``) if it is killed itself.

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
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["PG_USER", "PgUnavailable", "TempPostgres", "pg_server", "pg_url", "temp_postgres"]

logger = logging.getLogger(__name__)

PG_USER = "trustgate-pg"
SUPERVISOR = Path(__file__).with_name("_pg_supervisor.py")
START_TIMEOUT = 60.0
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
    supervisor: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        """The postmaster's process id."""
        return int((self.root / "data" / "postmaster.pid").read_text().split()[0])

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


# What the tests' server skips: they test transactions, not the disk. A benchmark of
# what durability costs asks for a server that syncs (``durable=True``).
NOT_DURABLE = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")


def _start(
    postgres: str, data: Path, root: Path, port: int, user: str | None, durable: bool = False
) -> subprocess.Popen[bytes]:
    """``postgres`` under the supervisor, once it accepts connections (or PgUnavailable)."""
    log = root / "server.log"
    settings = [*(() if durable else NOT_DURABLE), "max_connections=200"]
    cmd = [
        sys.executable, str(SUPERVISOR), str(root), str(log), user or "-", "--",
        postgres, "-D", str(data), "-h", "127.0.0.1", "-p", str(port), "-k", str(root),
        *(arg for s in settings for arg in ("-c", s)),
    ]  # fmt: skip
    sup = subprocess.Popen(cmd, stdin=subprocess.PIPE, cwd=root)
    deadline = time.monotonic() + START_TIMEOUT
    pidfile = data / "postmaster.pid"
    while time.monotonic() < deadline:
        if sup.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise PgUnavailable(f"postgres exited with status {sup.returncode}: {tail}")
        with contextlib.suppress(OSError):
            lines = pidfile.read_text().splitlines()
            # line 8 is the postmaster's status, "ready" once it accepts connections
            if len(lines) >= 8 and lines[7].strip() == "ready" and lines[3].strip() == str(port):
                return sup
        time.sleep(0.05)
    _stop(sup)
    raise PgUnavailable(f"postgres did not start within {START_TIMEOUT:.0f} s")


def _stop(sup: subprocess.Popen[bytes]) -> None:
    """Close the supervisor's stdin: it stops the server and removes its directory."""
    if sup.stdin is not None:
        with contextlib.suppress(OSError):
            sup.stdin.close()
    try:
        sup.wait(30)
    except subprocess.TimeoutExpired:
        sup.terminate()
        sup.wait(10)


@contextlib.contextmanager
def temp_postgres(*, durable: bool = False) -> Iterator[TempPostgres]:
    """Start a throwaway PostgreSQL server; stop it and delete its files on exit.

    ``durable``: PostgreSQL's own defaults (every commit synced to disk) instead of the
    tests' fsync=off, synchronous_commit=off and full_page_writes=off.
    """
    initdb, postgres = _tool("initdb"), _tool("postgres")
    user = _ensure_user()
    # as root, a directory the unprivileged user can traverse (TMPDIR may be private)
    base = "/tmp" if user is not None and Path("/tmp").is_dir() else None
    root = Path(tempfile.mkdtemp(prefix="trustgate-pg-", dir=base))
    sup: subprocess.Popen[bytes] | None = None
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
            try:
                sup = _start(postgres, data, root, port, user, durable)
            except PgUnavailable as exc:
                last = exc
                continue
            break
        if sup is None:
            raise PgUnavailable(str(last))
        yield TempPostgres(root=root, port=port, user=user, supervisor=sup)
    finally:
        if sup is not None:
            try:
                _stop(sup)
            except (OSError, subprocess.SubprocessError) as exc:
                # Stopping is cleanup: the data directory is removed below either way,
                # and a server that would not stop must not hide the test's own result.
                logger.warning("throwaway PostgreSQL in %s did not stop: %s", root, exc)
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
