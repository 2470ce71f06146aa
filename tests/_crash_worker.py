"""Worker processes for the crash-consistency test (tests/integration/test_crash_consistency.py).

One attempt of one run is :func:`attempt`: it opens the shared database with
:func:`trustgate.persistence.connect` (or ``aconnect``), compiles ``writer`` (guarded,
the "model") → ``act`` → END on a :class:`KillingSaver`, and either starts the run or
resumes it. A :class:`Tripwire` SIGKILLs the process at the one point the attempt's
plan names: inside the verifier, just before or just after the gate's write beside its
task (and between the saver's write and the report log's), just before or after a
checkpoint ``put``, inside ``act``, or at the first save after ``act`` returned.

Everything that "acts" on a released output records, outside the database (an
append-only file), what it acted on and whether the crossing's report was
already in the report log, read through a separate read-only connection: ``act`` (the
successor) and the stream consumer (the caller reading ``updates``).

Why a zygote: importing LangGraph and trustgate costs seconds in a fresh interpreter,
and a SIGKILL necessarily ends the process, so a few hundred attempts cannot each be a
``spawn``. :func:`serve` (``python tests/_crash_worker.py``) imports everything once and
warms up with one whole run (then drops what a process keeps for itself: its random
keys, its verifier threads), then forks one child per attempt it reads on stdin and
answers with the child's exit status; it holds no connection and runs no thread, so
every child starts as clean as a spawned worker would (which :func:`attempt` also
supports: it takes one picklable dict and opens its own connections).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import operator
import os
import resource
import select
import signal
import subprocess
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from trustgate import Finding, FunctionVerifier, GateHalted, Halt, Override, TrustGate, guard
from trustgate.graph import TrustReports, reports_from_state
from trustgate.persistence import ReportHistory, ReportingSaver, aconnect, connect, open_report_log

__all__ = [
    "ATTEMPT_TIMEOUT",
    "HONEST",
    "LIE",
    "LIE_MARK",
    "POINTS",
    "RELEASE_CHANNEL",
    "REMOVED",
    "KillingSaver",
    "State",
    "Tripwire",
    "attempt",
    "build_graph",
    "cfg",
    "serve",
]

HONEST = "the fix is in a.py"
LIE = "LIE: the fix is already merged"
LIE_MARK = "already merged"  # found nowhere a released output can reach
REMOVED = "[removed]"
RELEASE_CHANNEL = "__trustgate_release__"  # the sealed release record beside the task
BESIDE = "~trustgate~"  # the gate's task ids beside the guarded task
ATTEMPT_TIMEOUT = 90.0  # one attempt; a child still running then is killed (a hang)

# Where an attempt can be killed (the order is the order they come in a run).
POINTS = (
    "verify",  # inside the verifier, the gate deciding
    "beside-before",  # the gate's beside write not started
    "beside-logless",  # the saver stored it, the report log not yet
    "beside-after",  # both stored, nothing released yet
    "put-before",  # LangGraph's checkpoint put not started
    "put-after",  # the checkpoint stored
    "act",  # the successor acted, its writes not saved
    "after-act",  # the successor returned, its save not started
)


class State(TypedDict, total=False):
    lying: bool
    text: str
    acted: Annotated[list[str], operator.add]
    log: Annotated[list[str], operator.add]
    trust_reports: TrustReports


def cfg(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}}


def _append(path: str, record: dict[str, Any]) -> None:
    """One JSON line, appended with one ``write``: it is the kernel's once the call
    returns, so it survives the SIGKILL that follows (what is killed is the process,
    not the machine: no fsync needed)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (json.dumps(record, sort_keys=True) + "\n").encode())
    finally:
        os.close(fd)


class Tripwire:
    """Counts the events of one attempt and SIGKILLs the process at the planned one.

    ``spec["kill"]`` names a point of :data:`POINTS` (or is ``None``), ``spec["n"]``
    which occurrence of it. Also records, outside the database, every release record
    the gate saved (``deliveries`` file) and every act (``acted`` file)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.point: str | None = spec.get("kill")
        self.n = int(spec.get("n") or 1)
        self.seen: Counter[str] = Counter()
        self.act_returned = False
        self.reader: ReportHistory | None = None

    def hit(self, point: str) -> None:
        self.seen[point] += 1
        if point == self.spec.get("fill") and self.seen[point] == int(self.spec.get("fill_n", 1)):
            _fill_disk(self.spec)
        if point == self.point and self.seen[point] == self.n:
            _append(self.spec["kills"], {"point": point, "attempt": self.spec["attempt"]})
            os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(60)  # never reached: SIGKILL cannot be caught

    def logged(self, report_id: str | None, thread: str) -> bool:
        """Whether the report log holds the report, as another reader sees it now."""
        assert self.reader is not None
        if report_id is None:
            return False
        return any(r.id == report_id for r in self.reader.history(thread=thread))

    def acted(self, where: str, text: Any, reports: Sequence[Any]) -> None:
        """Something acts on the writer's released output: say on what, and whether
        the report of that crossing was durable at that moment."""
        mine = [r for r in reports if r.node == "writer" and r.released]
        report = mine[-1] if mine else None
        rid = None if report is None else report.id
        _append(
            self.spec["acted"],
            {
                "where": where,
                "text": text,
                "report": rid,
                "crossing": None if report is None else report.crossing,
                "claims": None if report is None else report.claims,
                "durable": self.logged(rid, self.spec["thread"]),
                "attempt": self.spec["attempt"],
            },
        )

    def before_writes(self, task_id: str) -> None:
        if self.act_returned:
            self.hit("after-act")
        if BESIDE in task_id:
            self.hit("beside-before")

    def after_writes(self, task_id: str) -> None:
        if BESIDE in task_id:
            self.hit("beside-after")

    def saved(self, task_id: str, writes: Sequence[tuple[str, Any]]) -> None:
        """The wrapped saver stored a write beside the guarded task: a released report
        there is one delivery of its crossing, recorded before it is released (the
        release record of the first, the report alone of a delivery again); then the
        report log is written."""
        if BESIDE not in task_id:
            return
        for channel, value in writes:
            if channel != "trust_reports":
                continue
            for r in value:
                if r.get("released"):
                    _append(
                        self.spec["deliveries"],
                        {
                            "report": r["id"],
                            "crossing": r.get("crossing"),
                            "deliveries": r.get("deliveries", 1),
                            "recorded": any(c == RELEASE_CHANNEL for c, _v in writes),
                            "attempt": self.spec["attempt"],
                        },
                    )
        self.hit("beside-logless")

    def before_put(self) -> None:
        if self.act_returned:
            self.hit("after-act")
        self.hit("put-before")


class KillingSaver(ReportingSaver):
    """The database's own ReportingSaver, with the tripwire on every write.

    The wrapped saver's ``put_writes`` is wrapped too (on the instance), so an attempt
    can die between the saver's write and the report log's."""

    def __init__(
        self, saver: BaseCheckpointSaver[Any], report_log: ReportHistory, wire: Tripwire
    ) -> None:
        super().__init__(saver, report_log)
        self.wire = wire
        sync_writes, async_writes = saver.put_writes, saver.aput_writes

        def inner_put_writes(
            config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
        ) -> None:
            sync_writes(config, writes, task_id, task_path)
            wire.saved(task_id, writes)

        async def inner_aput_writes(
            config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
        ) -> None:
            await async_writes(config, writes, task_id, task_path)
            wire.saved(task_id, writes)

        saver.put_writes = inner_put_writes  # type: ignore[method-assign]
        saver.aput_writes = inner_aput_writes  # type: ignore[method-assign]

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.wire.before_writes(task_id)
        super().put_writes(config, writes, task_id, task_path)
        self.wire.after_writes(task_id)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.wire.before_writes(task_id)
        await super().aput_writes(config, writes, task_id, task_path)
        self.wire.after_writes(task_id)

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        self.wire.before_put()
        stored = super().put(config, checkpoint, metadata, new_versions)
        self.wire.hit("put-after")
        return stored

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        self.wire.before_put()
        stored = await super().aput(config, checkpoint, metadata, new_versions)
        self.wire.hit("put-after")
        return stored

    def with_allowlist(self, extra_allowlist: Any) -> KillingSaver:
        return self


def build_graph(wire: Tripwire, policy: str) -> StateGraph[Any, Any, Any, Any]:
    """writer (the model: honest, or lying when asked to) → act → END, writer guarded."""

    def writer(state: State) -> dict[str, Any]:
        # a fresh draft each execution: a redelivery shows which one was released
        base = LIE if state.get("lying") else HONEST
        return {"text": f"{base} (draft {os.getpid()})", "log": [f"writer@{os.getpid()}"]}

    def act(state: State) -> dict[str, Any]:
        wire.acted("act", state.get("text"), reports_from_state(state))
        wire.hit("act")
        wire.act_returned = True
        return {"acted": [str(state.get("text"))]}

    def no_lies(claims: Any, evidence: Any) -> list[Finding]:
        wire.hit("verify")
        if isinstance(claims, str) and claims.startswith("LIE"):
            return [Finding.failed("no_lies", "invented", "the claim is not supported")]
        return [Finding.ok("no_lies")]

    g = StateGraph(State)
    g.add_node("writer", writer)
    g.add_node("act", act)
    g.add_edge(START, "writer")
    g.add_edge("writer", "act")
    g.add_edge("act", END)
    gate = TrustGate(
        "checker",
        reads="text",
        verifiers=[FunctionVerifier(no_lies, name="no_lies", timeout=60.0)],
        policy=Halt() if policy == "halt" else Override("text", REMOVED),
        passthrough=["log"],
    )
    return guard(g, {"writer": gate})


def _consume(wire: Tripwire, chunk: Any) -> None:
    """The caller reading ``updates`` acts on the writer's update when it sees it."""
    if isinstance(chunk, dict) and isinstance(chunk.get("writer"), dict):
        update = chunk["writer"]
        wire.acted("stream", update.get("text"), reports_from_state(update))


def _decide(spec: dict[str, Any], state: Any) -> Any:
    """What this attempt sends: the request (a start, or a retry of a run that left no
    checkpoint), else ``None``, resuming the thread wherever it stopped (a thread at its
    end just returns its state). Not decided on ``state.next``: LangGraph shows no next
    task for an input checkpoint whose start writes are saved, and resumes it anyway."""
    if spec["mode"] == "start" or state.created_at is None:
        return {"lying": spec["lying"], "log": []}
    return None


def _plain(spec: dict[str, Any], wire: Tripwire, saver: BaseCheckpointSaver[Any]) -> Any:
    # the thread read around the ReportingSaver: deciding reconciles nothing the run
    # itself would not
    return build_graph(wire, spec["policy"]).compile(checkpointer=saver)


def _outcome(spec: dict[str, Any], outcome: str, exc: BaseException | None = None) -> None:
    record: dict[str, Any] = {"outcome": outcome, "attempt": spec["attempt"]}
    if exc is not None:
        record["error"] = f"{type(exc).__name__}: {exc}"
        record["notes"] = list(getattr(exc, "__notes__", []))
    _append(spec["result"], record)


def _sync(spec: dict[str, Any], wire: Tripwire) -> None:
    config = cfg(spec["thread"])
    with connect(spec["url"]) as db, open_report_log(spec["url"]) as reader:
        wire.reader = reader
        saver = KillingSaver(db.checkpointer.saver, db.report_log, wire)
        app = build_graph(wire, spec["policy"]).compile(checkpointer=saver)
        inputs = _decide(spec, _plain(spec, wire, db.checkpointer.saver).get_state(config))
        try:
            for chunk in app.stream(
                inputs, config, stream_mode="updates", durability=spec["durability"]
            ):
                _consume(wire, chunk)
        except GateHalted:
            _outcome(spec, "halted")
            return
        except Exception as exc:  # the disk-full runs: what the caller gets
            _outcome(spec, "error", exc)
            return
        _outcome(spec, "done")


async def _async(spec: dict[str, Any], wire: Tripwire) -> None:
    config = cfg(spec["thread"])
    async with aconnect(spec["url"]) as db:
        with open_report_log(spec["url"]) as reader:
            wire.reader = reader
            saver = KillingSaver(db.checkpointer.saver, db.report_log, wire)
            app = build_graph(wire, spec["policy"]).compile(checkpointer=saver)
            plain = _plain(spec, wire, db.checkpointer.saver)
            inputs = _decide(spec, await plain.aget_state(config))
            try:
                async for chunk in app.astream(
                    inputs,
                    config,
                    stream_mode="updates",
                    durability=spec["durability"],
                ):
                    _consume(wire, chunk)
            except GateHalted:
                _outcome(spec, "halted")
                return
            except Exception as exc:
                _outcome(spec, "error", exc)
                return
            _outcome(spec, "done")


def _fill_disk(spec: dict[str, Any]) -> None:
    """The disk-full runs: from this moment the database cannot grow. Every write goes
    to the end of the SQLite write-ahead log (a fresh file is never checkpointed within
    one run), so no file of this process may grow past the log's present size; a write
    that would fails with EFBIG (SIGXFSZ is ignored from the start of the attempt: a
    handler can only be set on the main thread), as on a full disk."""
    wal = Path(spec["url"] + "-wal")
    limit = wal.stat().st_size if wal.exists() else 0
    assert limit > 0, "the disk fills after the run's first write"
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    _append(spec["kills"], {"full": spec["fill"], "limit": limit, "attempt": spec["attempt"]})


def attempt(spec: dict[str, Any]) -> int:
    """One attempt of one run, in this (fresh) process; the exit code is 0 when the
    attempt finished (done, halted, or failed with the error the caller gets)."""
    out = os.open(spec["stderr"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    os.environ["TRUSTGATE_LEDGER_KEY"] = spec["key"]
    if spec.get("fill"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    wire = Tripwire(spec)
    try:
        if spec["api"] == "async":
            asyncio.run(_async(spec, wire))
        else:
            _sync(spec, wire)
    except BaseException:
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return 0


# -- the zygote ----------------------------------------------------------------------


def _wait(pid: int, timeout: float) -> tuple[int, bool]:
    """The child's exit status (negative: the signal that ended it) and whether it had
    to be killed for running past ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), False
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _done, status = os.waitpid(pid, 0)
            return os.waitstatus_to_exitcode(status), True
        time.sleep(0.005)


# imported on first use by connect()/aconnect() for a postgresql:// URL
_PG_MODULES = (
    "psycopg",
    "psycopg_pool",
    "trustgate.persistence._postgres",
    "langgraph.checkpoint.postgres",
    "langgraph.checkpoint.postgres.aio",
    "langgraph.store.postgres",
    "langgraph.store.postgres.aio",
)


def _warm(workdir: Path) -> None:
    """What the first attempt in a fresh interpreter does once (the lazy imports of the
    backends, LangGraph's compile and pydantic's schemas), done here once, so that a
    child spends its time on its attempt: a whole run, sync and async, on a throwaway
    SQLite file, and the PostgreSQL modules imported.

    Then what the warm-up made that belongs to one process is dropped (the random
    review key, the report key resolved from the environment), so every child makes its
    own, as a spawned worker would: a shared random key would hide a record the next
    worker cannot read. The zygote keeps no connection and no thread."""
    import importlib
    import shutil
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="warm", dir=workdir))
    for api in ("sync", "async"):
        spec: dict[str, Any] = {
            "url": str(tmp / "warm.db"),
            "thread": f"warm-{api}",
            "lying": False,
            "policy": "override",
            "durability": "sync",
            "api": api,
            "mode": "start",
            "kill": None,
            "n": 1,
            "attempt": 0,
            **{
                name: str(tmp / f"{api}.{name}")
                for name in ("kills", "acted", "deliveries", "result")
            },
        }
        wire = Tripwire(spec)
        if api == "async":
            asyncio.run(_async(spec, wire))
        else:
            _sync(spec, wire)
        results = [json.loads(line) for line in Path(spec["result"]).read_text().splitlines()]
        assert [r["outcome"] for r in results] == ["done"], results
    shutil.rmtree(tmp)
    for name in _PG_MODULES:
        importlib.import_module(name)
    _forget_process_keys()
    # the warm-up's verifier threads stay: a forked child starts with empty books of
    # its own (trustgate's executor resets them at a fork)


def _forget_process_keys() -> None:
    """Drop the keys a process makes or resolves once and keeps (where this version of
    trustgate has them)."""
    from trustgate.graph import _seal

    _seal._random_key = None
    _seal._warned = False
    with contextlib.suppress(ImportError):  # a version without gate-sealed reports
        from trustgate import _report_seal

        _report_seal._keys.clear()


def serve() -> None:
    """Read one JSON attempt per stdin line, fork a child for it, answer one JSON line
    ``{"status": exit code, "hung": bool}`` per attempt. Ends at end of input."""
    _warm(Path.cwd())
    ready = {"ready": os.getpid()}
    print(json.dumps(ready), flush=True)
    for line in sys.stdin:
        spec = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the child: one attempt, then out without running parent cleanup
            code = 1
            try:
                code = attempt(spec)
            finally:
                os._exit(code)
        status, hung = _wait(pid, float(spec.get("timeout", ATTEMPT_TIMEOUT)))
        print(json.dumps({"status": status, "hung": hung, "pid": pid}), flush=True)


class Zygote:
    """The test's handle on a running :func:`serve` process (every wait bounded)."""

    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.log = workdir / "zygote.log"
        self._err = self.log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            env=env,
            cwd=str(workdir),
        )
        first = self._read(120.0)
        if "ready" not in first:
            raise RuntimeError(f"the worker zygote did not start: {first}")

    def _read(self, timeout: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _w, _x = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError(f"the worker zygote gave no answer in {timeout:.0f} s")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker zygote ended: {self.log.read_text()[-2000:]}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def run(self, spec: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(spec) + "\n").encode())
        self.proc.stdin.flush()
        return self._read(float(spec.get("timeout", ATTEMPT_TIMEOUT)) + 30.0)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:  # a zygote that will not end is killed
            self.proc.kill()
            self.proc.wait(30)
        self._err.close()


@contextlib.contextmanager
def zygote(workdir: Path, env: dict[str, str]) -> Iterator[Zygote]:
    z = Zygote(workdir, env)
    try:
        yield z
    finally:
        z.close()


if __name__ == "__main__":
    serve()
