"""Arbitrary argv thrown at ``trustgate.cli.main`` in process: never a traceback, always a
documented exit code, and no read command creates or changes a file.

The arguments are what a shell can hand over: any text, bytes that are not UTF-8 (as
Python receives them, surrogate-escaped), numbers of any size and spelling, and the
paths of a small world of files (a trustgate database, one with a forged row, one with
a damaged row, a SQLite file of someone else's, a text file, paths that do not exist,
an unreachable PostgreSQL URL). Each example runs with the logging of a plain process
(no handler on the root logger), so a record that would reach Python's last-resort
handler shows up on stderr here as it would for a user.

Write commands are left out where they would legitimately write: ``--reconcile``, and
``demo`` while a ledger key is configured (without one it must refuse, creating
nothing). ``audit`` targets are never importable (their module part starts with a
digit), so no installed module is imported as a side effect.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli_support import bare_logging, make_log_db, snapshot, sql
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from trustgate.cli import main

EXIT_CODES = {0, 1, 2, 3, 4}  # docs/cli.md (141 is a closed pipe, 130 an interrupt)
TRACEBACK = "Traceback (most recent call last)"

FILES = [
    "good.db",
    "forged.db",
    "damaged.db",
    "other.db",
    "text.db",
    "empty.db",
    "missing.db",
    "no/such/dir/x.db",
    "sqlite:///good.db",
    "postgresql://nobody@127.0.0.1:9/none",
    "record.txt",
    "draft.md",
    "brief.json",
    "manifest.json",
    ".",
    "",
]
NUMBERS = [
    "9999999999999999999999999",
    "-9999999999999999999999999",
    "9" * 5000,
    "-1",
    "0",
    "1",
    "1e3",
    "0x10",
    " 7 ",
    "1_000",
    "\u0663",
    "nan",
    "inf",
    "1000000001",
]
OPTIONS = {
    "history": ["--thread", "--gate", "--since", "--limit", "--database"],
    "replay": ["--root", "--base", "--window"],
    "acquire": ["--root", "--rev", "--scope"],
    "check-draft": ["--record"],
    "check-contract": ["--brief", "--evidence"],
    "audit": ["--input", "--context", "--config", "--resume"],
    "demo": ["--database-url", "--model"],
}
SWITCHES = {
    "history": ["--json"],
    "replay": ["--json"],
    "acquire": ["--json"],
    "check-draft": ["--json"],
    "check-contract": ["--json"],
    "audit": ["--json"],
    "demo": ["--json", "--honest", "--all-findings"],
}
NO_POSITIONAL = {"history"}

raw_bytes = st.binary(max_size=24).map(lambda b: b.decode("utf-8", "surrogateescape"))
token = st.one_of(
    st.sampled_from(FILES),
    st.sampled_from(NUMBERS),
    st.integers().map(str),
    st.text(max_size=24),
    raw_bytes,
    st.sampled_from(FILES).map(lambda f: "@" + f),
)


databases = st.sampled_from([f for f in FILES if f.endswith(".db") or "://" in f])
numbers = st.one_of(st.sampled_from(NUMBERS), st.integers().map(str))
times = st.one_of(
    numbers.map(lambda n: n + "d"),
    st.sampled_from(["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00", "2h", "7d"]),
)
VALUES = {  # what each option mostly gets; any token otherwise
    "--database": databases,
    "--database-url": databases,
    "--limit": numbers,
    "--window": numbers,
    "--since": times,
    "--thread": raw_bytes,
    "--gate": raw_bytes,
}


@st.composite
def command_argv(draw: st.DrawFn, commands: list[str]) -> list[str]:
    command = draw(st.sampled_from(commands))
    argv = [command]
    if command == "audit":  # never an importable module: it starts with a digit
        argv.append("0" + draw(st.text(max_size=12)) + ":" + draw(st.text(max_size=12)))
    elif command == "demo":
        argv.append(draw(st.sampled_from(["all", "code-review", "compliance", "nope"])))
    elif command not in NO_POSITIONAL:
        argv.append(draw(token))
    for _ in range(draw(st.integers(0, 5))):
        flag = draw(st.sampled_from(OPTIONS[command] + SWITCHES[command]))
        argv.append(flag)
        if flag in OPTIONS[command]:
            argv.append(draw(st.one_of(VALUES.get(flag, token), token)))
    if command == "history" and draw(st.booleans()):  # most reads name a database
        argv += ["--database", draw(databases)]
    return argv


def _writes(argv: list[str]) -> bool:
    """Would argparse read one of these tokens as a write option (even abbreviated)?"""
    writers = ("--reconcile", "--run-tools", "--otlp-endpoint")
    return any(
        len(t) >= 3 and t.startswith("--") and any(w.startswith(t.split("=")[0]) for w in writers)
        for t in argv
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("world")
    make_log_db(str(root / "good.db"))
    for name in ("forged.db", "damaged.db"):
        shutil.copy(root / "good.db", root / name)
    sql(str(root / "forged.db"), "UPDATE trustgate_reports SET decision = 'pass'")
    sql(str(root / "damaged.db"), "UPDATE trustgate_reports SET body = '{x' WHERE thread_id = 'ok'")
    conn = sqlite3.connect(root / "other.db")
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    (root / "text.db").write_text("not a database\n")
    (root / "empty.db").write_bytes(b"")
    (root / "record.txt").write_text("14:02 latency 9.2s\n14:03 alert fired\n")
    (root / "draft.md").write_text("Latency rose at 14:02. [[1]]\n")
    (root / "brief.json").write_text(json.dumps({"citations": ["ISO/IEC 27001:2022 clause 9.2"]}))
    (root / "manifest.json").write_text(json.dumps({"items": []}))
    return root


@pytest.fixture
def in_world(world: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(world)
    monkeypatch.delenv("TRUSTGATE_DATABASE_URL", raising=False)
    yield world


def _check(argv: list[str], world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assume(not _writes(argv))
    capsys.readouterr()
    before = snapshot(world)
    with bare_logging():
        try:
            code = main(argv)
        except SystemExit as exc:  # --help / -h: argparse prints and exits, as for any command
            code = exc.code if isinstance(exc.code, int) else 0
    _, err = capsys.readouterr()
    assert TRACEBACK not in err, (argv, err)
    assert code in EXIT_CODES, (argv, code, err)
    assert snapshot(world) == before, argv


FUZZ = settings(
    max_examples=250,
    deadline=None,
    database=None,  # no .hypothesis directory in the world this test checks
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
READ_COMMANDS = ["history", "replay", "acquire", "check-draft", "check-contract", "audit"]


@FUZZ
@given(argv=st.one_of(command_argv(READ_COMMANDS), st.lists(token, max_size=6)))
@example(argv=["history", "--database", "other.db"])
@example(argv=["history", "--database", "empty.db"])
@example(argv=["history", "--database", "damaged.db"])
@example(argv=["history", "--database", "good.db", "--thread", "\udcff"])
@example(argv=["history", "--database", "good.db", "--limit", "9999999999999999999999999"])
@example(argv=["history", "--database", "good.db", "--since", "0001-01-01T00:00:00+01:00"])
def test_any_argv_with_a_key(
    argv: list[str], in_world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _check(argv, in_world, capsys)


@FUZZ
@given(argv=command_argv(["history", "demo"]))
@example(argv=["demo", "code-review"])
@example(argv=["history", "--database", "good.db"])
def test_any_argv_without_a_key(
    argv: list[str],
    in_world: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without a ledger key nothing can be sealed or verified: every command that would
    need one refuses (one line, exit 2) before creating anything."""
    monkeypatch.delenv("TRUSTGATE_LEDGER_KEY", raising=False)
    monkeypatch.delenv("TRUSTGATE_LEDGER_KEY_FILE", raising=False)
    _check(argv, in_world, capsys)
