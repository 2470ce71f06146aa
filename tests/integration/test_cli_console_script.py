"""The installed ``trustgate`` console script, in its own process: no traceback for any
of the inputs that used to print one, and reads that leave the files as they were.

A real process has no logging configured, which is where the tracebacks came from
(Python's last-resort handler printing a warning logged with its exception); the
in-process tests reproduce that with ``bare_logging``, this one does not need to.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from _cli_support import TEST_LEDGER_KEY, make_log_db, snapshot, sql

SCRIPT = Path(sys.executable).with_name("trustgate")


def trustgate(
    *argv: str | bytes, cwd: Path, key: bool = True
) -> subprocess.CompletedProcess[bytes]:
    assert SCRIPT.is_file(), f"the console script is not installed at {SCRIPT}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRUSTGATE_")}
    if key:
        env["TRUSTGATE_LEDGER_KEY"] = TEST_LEDGER_KEY
    return subprocess.run(
        [str(SCRIPT), *argv], cwd=cwd, env=env, capture_output=True, timeout=300, check=False
    )


def lines(err: bytes) -> list[str]:
    text = err.decode("utf-8", "backslashreplace")
    assert "Traceback" not in text, text
    found = text.splitlines()
    assert all(line.startswith("trustgate: ") for line in found), text
    return found


@pytest.fixture
def world(tmp_path: Path) -> Path:
    make_log_db(str(tmp_path / "trust.db"))
    conn = sqlite3.connect(tmp_path / "other.db")
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    return tmp_path


def test_a_damaged_row_is_one_warning_and_the_rest_still_show(world: Path) -> None:
    sql(str(world / "trust.db"), "UPDATE trustgate_reports SET body = '{x' WHERE thread_id = 'ok'")
    proc = trustgate("history", "--database", "trust.db", cwd=world)
    assert proc.returncode == 1
    (warning,) = lines(proc.stderr)
    assert warning.startswith("trustgate: warning: 1 of 3 report-log row(s) are not shown")
    out = proc.stdout.decode()
    assert "thread=mod" in out and "thread=halt" in out and "NOT SEALED" in out
    assert "2 crossing(s); 1 row(s) NOT SEALED" in out


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--limit", "9999999999999999999999999"], "must be between 0 and"),
        ([b"--thread", b"\xff\xfe"], "is not valid UTF-8"),
        (["--database", "other.db"], "holds no trustgate report log"),
        (["--since", "0001-01-01T00:00:00+05:00"], "out of range"),
    ],
)
def test_bad_input_is_one_line(argv: list[str | bytes], said: str, world: Path) -> None:
    before = snapshot(world)
    full = (
        ["history", *argv] if "--database" in argv else ["history", "--database", "trust.db", *argv]
    )
    proc = trustgate(*full, cwd=world)
    assert proc.returncode == 2 and proc.stdout == b""
    (line,) = lines(proc.stderr)
    assert said in line
    assert snapshot(world) == before


def test_without_a_key_nothing_is_created(world: Path) -> None:
    before = snapshot(world)
    for argv in (["demo", "code-review"], ["history", "--database", "trust.db"]):
        proc = trustgate(*argv, cwd=world, key=False)
        assert proc.returncode == 2
        (line,) = lines(proc.stderr)
        assert "no ledger key" in line and "TRUSTGATE_LEDGER_KEY_FILE" in line
    assert snapshot(world) == before and not (world / ".trustgate").exists()
