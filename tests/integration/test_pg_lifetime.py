"""The tests' PostgreSQL server dies with the test process, however that process ends.

A ``make test`` stopped by a timeout, or a pytest process killed with ``kill -9``,
used to leave its server running (``pg_ctl start`` detaches it) with its data
directory. Here a pytest subprocess starts the session server through
``tests/pg.py`` and is killed with SIGKILL while a test holds it; the server must be
gone within a few seconds, its port closed and its directory removed. And if the
supervisor that owns the server is the one killed, the server goes with it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parents[1]
GONE_WITHIN = 10.0  # seconds; the supervisor notices within half a second

HOLDER = textwrap.dedent(
    """
    import json, os, time
    from pathlib import Path

    from pg import pg_server  # noqa: F401  (the session fixture of the real suite)


    def test_hold(pg_server):
        info = {
            "pid": pg_server.pid,
            "supervisor": pg_server.supervisor.pid,
            "port": pg_server.port,
            "root": str(pg_server.root),
        }
        Path(os.environ["PG_INFO"]).write_text(json.dumps(info))
        time.sleep(600)  # until killed
    """
)


def _dead(pid: int) -> bool:
    """No such process, or a zombie nobody reaps (it holds no port, no files)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in {"Z", "X"}


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _wait(condition: Callable[[], bool], within: float) -> float:
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > within:
            pytest.fail(f"not within {within:.0f} s")
        time.sleep(0.1)
    return time.monotonic() - started


def _hold_a_server(tmp_path: Path) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    """A pytest process holding the session's PostgreSQL server; returns it and the info."""
    (tmp_path / "test_hold.py").write_text(HOLDER)
    info_file = tmp_path / "info.json"
    env = {**os.environ, "PG_INFO": str(info_file), "PYTHONPATH": str(TESTS)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_hold.py"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not info_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            out = proc.communicate()[0]
            if "no PostgreSQL server" in out and not os.environ.get("CI"):
                pytest.skip(f"no PostgreSQL server: {out[-500:]}")
            pytest.fail(f"the holding pytest did not start its server:\n{out[-3000:]}")
        time.sleep(0.1)
    time.sleep(0.2)  # the file is written in one call; let it be complete
    return proc, json.loads(info_file.read_text())


def test_a_killed_pytest_takes_its_server_and_its_files_with_it(tmp_path: Path) -> None:
    proc, info = _hold_a_server(tmp_path)
    try:
        assert not _dead(info["pid"]) and _accepts(info["port"])
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        took = _wait(lambda: _dead(info["pid"]), GONE_WITHIN)
        print(f"server gone {took:.2f} s after kill -9 of pytest")
        _wait(lambda: not _accepts(info["port"]), GONE_WITHIN)
        _wait(lambda: not Path(info["root"]).exists(), GONE_WITHIN)
        _wait(lambda: _dead(info["supervisor"]), GONE_WITHIN)
    finally:
        if proc.poll() is None:
            proc.kill()
        _reap(info)


def test_a_killed_supervisor_takes_its_server_with_it(tmp_path: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    proc, info = _hold_a_server(tmp_path)
    try:
        os.kill(info["supervisor"], signal.SIGKILL)
        took = _wait(lambda: _dead(info["pid"]), GONE_WITHIN)
        print(f"server gone {took:.2f} s after kill -9 of its supervisor")
        _wait(lambda: not _accepts(info["port"]), GONE_WITHIN)
    finally:
        proc.kill()
        proc.wait(10)
        _reap(info)
        # with its supervisor and its starter both killed, nobody is left to remove it
        shutil.rmtree(info["root"], ignore_errors=True)


def _reap(info: dict[str, Any]) -> None:
    """Whatever the outcome, leave no server of this test behind."""
    for pid in (info["supervisor"], info["pid"]):
        if not _dead(pid):
            os.kill(pid, signal.SIGKILL)
