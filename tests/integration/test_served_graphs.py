"""Guarded graphs served by LangGraph's agent server, read back through ``langgraph_sdk``.

The real ``langgraph dev`` (``langgraph-cli[inmem]``, the ``agent-server`` extra) serves
``tests/_served_graphs.py`` with ``"http": {"app": "trustgate.server:app"}``, offline, on
a free port of 127.0.0.1, with the server's own checkpointer (it refuses a graph that
brings one). The gates write the report log ``TRUSTGATE_DATABASE_URL`` names
(``guard(..., report_log=True)``), and a client reads:

* every crossing's report, the halted one included, from ``GET /trustgate/reports``,
  whatever the graph's schema declares; the same reports on the ``custom`` stream
  (``stream_passes=True``: passes too);
* nothing of the lie: not in any stream mode the API offers, nor thread state, history,
  the thread, the run list, the run's error, nor the served reports (content-free).

Each window is first shown to see the lie when the same graph runs unguarded on the
same server, so a clean guarded run means the gate stopped something.

The server is its own process group, killed at teardown whatever happens, and dies
with the test process (``PR_SET_PDEATHSIG``) if that is killed; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from _cli_support import TEST_LEDGER_KEY

pytestmark = [pytest.mark.timeout(180)]

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parent
REPO_CONFIG = ROOT / "langgraph.json"
GRAPHS = HERE / "_served_graphs.py"
TEST_GRAPHS = ("graph", "plain", "agent", "plain_agent")
LANGGRAPH = Path(sys.executable).with_name("langgraph")
START_TIMEOUT = 60.0
CALL_TIMEOUT = 30.0
LIE = "ledger entry ZX-4417"  # tests/_served_graphs.py's lie
MODES = [
    "values",
    "updates",
    "messages-tuple",
    "custom",
    "debug",
    "tasks",
    "checkpoints",
    "events",
]
"""Every stream mode a client can ask the server for, at once."""
STREAMED = {f"stream:{m.split('-')[0]}" for m in MODES}
"""The windows those modes arrive in (``messages-tuple`` parts are ``messages``)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(url: str) -> bool:
    """Whether the server answers ``url`` with 200 now (a refused connection: not yet)."""
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def _die_with_us() -> None:
    """In the server's process, before it runs: die when the test process dies."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


@dataclass
class Served:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    database: Path

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-6000:]


def _config() -> dict[str, Any]:
    """The repository's ``langgraph.json`` (the reference graphs, the report route) with
    its paths made absolute, and this module's graphs beside them."""
    spec = json.loads(REPO_CONFIG.read_text())
    graphs = {
        name: f"{(ROOT / path).resolve()}:{attr}"
        for name, (path, _, attr) in ((n, g.partition(":")) for n, g in spec["graphs"].items())
    }
    graphs.update({name: f"{GRAPHS}:{name}" for name in TEST_GRAPHS})
    return {"dependencies": [str(ROOT)], "graphs": graphs, "http": spec["http"]}


@contextlib.contextmanager
def langgraph_dev(workdir: Path) -> Iterator[Served]:
    if not LANGGRAPH.is_file():
        pytest.fail(
            f"{LANGGRAPH} is missing: install the test extra, "
            "pip install -e '.[agent-server]' (make test does)"
        )
    config = workdir / "langgraph.json"
    config.write_text(json.dumps(_config()))
    database = workdir / "reports.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    env.update(
        TRUSTGATE_DATABASE_URL=str(database),
        LANGSMITH_TRACING="false",
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        DO_NOT_TRACK="1",
    )
    env.pop("TRUSTGATE_CAPTURE_CONTENT", None)
    env.pop("TRUSTGATE_MODEL", None)  # the reference graphs' scripted models: no network
    if not (env.get("TRUSTGATE_LEDGER_KEY") or env.get("TRUSTGATE_LEDGER_KEY_FILE")):
        env["TRUSTGATE_LEDGER_KEY"] = TEST_LEDGER_KEY  # what the tests read the log with
    port = _free_port()
    log = workdir / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(LANGGRAPH),
                "dev",
                "--no-browser",
                "--no-reload",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--config",
                str(config),
            ],
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_us,
        )
    url = f"http://127.0.0.1:{port}"
    served = Served(url, proc, log, database)
    try:
        started = time.monotonic()
        while True:
            if proc.poll() is not None:
                pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{served.tail()}")
            if _answers(url + "/ok"):
                break
            if time.monotonic() - started > START_TIMEOUT:
                pytest.fail(f"langgraph dev did not start in {START_TIMEOUT:g}s:\n{served.tail()}")
            time.sleep(0.25)
        print(f"langgraph dev started in {time.monotonic() - started:.1f}s", file=sys.stderr)
        yield served
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with langgraph_dev(tmp_path_factory.mktemp("served")) as server:
        yield server


# --- what a client can read -----------------------------------------------------------


@dataclass
class Seen:
    """Everything one client read of one thread, by window."""

    windows: dict[str, list[Any]] = field(default_factory=dict)
    errors: list[Any] = field(default_factory=list)
    custom_reports: list[dict[str, Any]] = field(default_factory=list)
    served_reports: list[dict[str, Any]] = field(default_factory=list)
    served_refused: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)

    def add(self, window: str, value: Any) -> None:
        self.windows.setdefault(window, []).append(value)
        if window == "stream:messages" and isinstance(value, list) and value:
            # a message streamed token by token: the lie split across chunks is a lie
            chunk = value[0] if isinstance(value[0], dict) else {}
            key = str(chunk.get("id"))
            self.tokens[key] = self.tokens.get(key, "") + str(chunk.get("content") or "")

    def with_lie(self) -> list[str]:
        found = {w for w, v in self.windows.items() if LIE in json.dumps(v, default=str)}
        if any(LIE in text for text in self.tokens.values()):
            found.add("stream:messages")
        return sorted(found)


async def _bounded(coro: Any) -> Any:
    return await asyncio.wait_for(coro, CALL_TIMEOUT)


async def _read_thread(url: str, assistant: str, inputs: list[Any]) -> Seen:
    """Run ``inputs`` one after another on one new thread, streaming every mode, then
    read the thread every way the API offers."""
    from langgraph_sdk import get_client

    client = get_client(url=url, api_key=None, timeout=CALL_TIMEOUT)
    seen = Seen()
    thread = (await _bounded(client.threads.create()))["thread_id"]
    for value in inputs:

        async def stream(value: Any = value) -> None:
            async for part in client.runs.stream(
                thread, assistant, input=value, stream_mode=MODES, stream_subgraphs=True
            ):
                mode = part.event.split("|", 1)[0]
                seen.add(f"stream:{mode}", part.data)
                if mode == "error":
                    seen.errors.append(part.data)
                if mode == "custom" and isinstance(part.data, dict) and "trustgate" in part.data:
                    seen.custom_reports.append(part.data["trustgate"])

        await _bounded(stream())
    state = await _bounded(client.threads.get_state(thread, subgraphs=True))
    seen.state = state["values"]
    seen.add("thread state", state)
    seen.add("history", await _bounded(client.threads.get_history(thread, limit=100)))
    seen.add("thread", await _bounded(client.threads.get(thread)))
    runs = await _bounded(client.runs.list(thread, limit=100))
    seen.add("runs", runs)
    for run in runs:
        seen.add("run", await _bounded(client.runs.get(thread, run["run_id"])))
    served = await _bounded(client.http.get("/trustgate/reports", params={"thread_id": thread}))
    seen.add("served reports", served)
    seen.served_reports = served["reports"]
    seen.served_refused = served["refused"]
    return seen


def _read(url: str, assistant: str, inputs: list[Any]) -> Seen:
    return asyncio.run(asyncio.wait_for(_read_thread(url, assistant, inputs), 120))


def _log_rows(database: Path, ids: list[str]) -> list[Any]:
    """The full reports, as the log keeps them (read here, in another process)."""
    from trustgate.persistence import SqliteReportHistory

    log = SqliteReportHistory(database, read_only=True)
    try:
        return [r for r in log.history() if r.id in ids]
    finally:
        log.close()


QUESTIONS = [{"question": q} for q in ("pass one", "override two", "halt three")]


def test_a_served_state_graph_gives_the_client_every_report_and_no_lie(served: Served) -> None:
    control = _read(served.url, "plain", QUESTIONS)
    assert {"thread state", "history", "stream:values", "stream:messages"} <= set(
        control.with_lie()
    ), control.with_lie()

    seen = _read(served.url, "graph", QUESTIONS)
    assert seen.with_lie() == [], (seen.with_lie(), served.tail())
    assert set(seen.windows) >= STREAMED, sorted(seen.windows)  # every mode was read
    # every crossing, the halted one included, through the endpoint
    decisions = [r["decision"] for r in seen.served_reports]
    assert decisions == ["pass", "modified", "halted"], served.tail()
    assert seen.served_refused == 0  # every row sealed under the deployment's key
    assert {r["gate"] for r in seen.served_reports} == {"facts"}
    # and on the custom stream, passes too
    assert [r["id"] for r in seen.custom_reports] == [r["id"] for r in seen.served_reports]
    # the halt reached the client as the run's error, naming the gate, not the lie
    assert len(seen.errors) == 1 and "gate 'facts' on 'agent' halted" in json.dumps(seen.errors)
    # the schema does not declare trust_reports: thread state shows none of them
    assert "trust_reports" not in seen.state and seen.state["answer"] == "withheld"
    # the log keeps the full reports: the overridden claim is on the record
    full = _log_rows(served.database, [r["id"] for r in seen.served_reports])
    assert [r.decision for r in full] == decisions
    assert LIE in json.dumps([r.to_json_dict() for r in full])


AGENT_INPUTS = [
    {"messages": [{"role": "user", "content": "pass: is the refund approved?"}]},
    {"messages": [{"role": "user", "content": "lie: is the refund approved?"}]},
]


def test_a_served_create_agent_without_the_channel_gives_every_report(served: Served) -> None:
    control = _read(served.url, "plain_agent", AGENT_INPUTS)
    assert {"thread state", "history", "stream:messages"} <= set(control.with_lie()), (
        control.with_lie()
    )

    seen = _read(served.url, "agent", AGENT_INPUTS)
    assert seen.with_lie() == [], (seen.with_lie(), served.tail())
    assert set(seen.windows) >= STREAMED, sorted(seen.windows)
    assert "trust_reports" not in seen.state  # create_agent's schema has no such channel
    assert [(r["gate"], r["node"], r["decision"]) for r in seen.served_reports] == [
        ("text", "model", "pass"),
        ("text", "model", "halted"),
    ], served.tail()
    assert [r["decision"] for r in seen.custom_reports] == ["halted"]  # a pass is silent
    assert len(seen.errors) == 1


# --- the reference graphs, as the repository's langgraph.json serves them ---------------


def _answer(pipeline: str, asked: dict[str, Any]) -> Any:
    """What a person answers when a reference graph waits (the bundled answers)."""
    from trustgate.pipelines._common import load_json

    if pipeline == "investigation":  # the grounding gate asks for a review
        return load_json("investigation", "review.json")
    answers = load_json("postmortem", "answers.json")  # the gaps of the postmortem
    ids = {g["id"] for g in asked.get("gaps") or []}
    return {
        "answers": {k: v for k, v in answers["answers"].items() if k in ids},
        "by": answers["by"],
    }


@dataclass
class Driven:
    """One reference graph run to its end over the API, and what a client reads of it."""

    errors: list[Any]
    asked: int
    state: dict[str, Any]
    served: dict[str, Any]


async def _drive(url: str, pipeline: str) -> Driven:
    """Run ``pipeline`` on its bundled data, answering what it asks a person, until it
    ends or halts; then read the thread's state and the served reports."""
    from langgraph_sdk import get_client

    client = get_client(url=url, api_key=None, timeout=CALL_TIMEOUT)
    thread = (await _bounded(client.threads.create()))["thread_id"]
    errors: list[Any] = []
    asked = 0
    run: dict[str, Any] = {"input": {}}
    for _ in range(5):

        async def stream(run: dict[str, Any] = run) -> None:
            async for part in client.runs.stream(thread, pipeline, stream_mode="updates", **run):
                if part.event == "error":
                    errors.append(part.data)

        await _bounded(stream())
        state = await _bounded(client.threads.get_state(thread))
        waiting = [i["value"] for t in state["tasks"] for i in t.get("interrupts") or ()]
        if errors or not waiting:
            break
        asked += 1
        run = {"command": {"resume": _answer(pipeline, waiting[0])}}
    served = await _bounded(client.http.get("/trustgate/reports", params={"thread_id": thread}))
    return Driven(errors, asked, state["values"], served)


REFERENCE = {
    "code_review": (0, ["modified", "pass"]),
    "investigation": (1, ["reviewed", "pass"]),
    "postmortem": (1, ["modified"]),
    "compliance": (0, ["rerendered", "caveated", "rerendered", "pass", "halted"]),
}
"""How often each reference graph asks a person, and its crossings' decisions."""


@pytest.mark.parametrize("pipeline", sorted(REFERENCE))
def test_a_served_reference_graph_gives_the_client_every_crossing(
    served: Served, pipeline: str
) -> None:
    """The reference graphs declare ``trust_reports``, so thread state shows their
    released crossings; the route shows those and the halted ones, and nothing else."""
    assert json.loads(REPO_CONFIG.read_text())["http"] == {"app": "trustgate.server:app"}
    driven = asyncio.run(asyncio.wait_for(_drive(served.url, pipeline), 120))
    asked, decisions = REFERENCE[pipeline]
    assert driven.asked == asked, served.tail()
    reports = driven.served["reports"]
    assert [r["decision"] for r in reports] == decisions, (driven.errors, served.tail())
    assert driven.served["refused"] == 0
    in_state = [r["id"] for r in driven.state.get("trust_reports") or []]
    assert in_state == [r["id"] for r in reports if r["decision"] != "halted"]
    halted = [r for r in reports if r["decision"] == "halted"]
    assert len(driven.errors) == len(halted)  # a halt reaches the client as the run's error
    for r in halted:
        assert f"gate {r['gate']!r} on {r['node']!r} halted" in json.dumps(driven.errors)
