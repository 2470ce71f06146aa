"""Start and stop a real MLflow tracking server (from ``.mlflow-venv``) on 127.0.0.1.

MLflow accepts OTLP/HTTP traces at ``/v1/traces`` (the experiment named by the
``x-mlflow-experiment-id`` header) and has no OTLP metrics endpoint (404). It lives in its
own virtual environment (``scripts/mlflow-venv.sh``; ``make test`` creates it) because
its pins must not mix with trustgate's; traces are read back with MLflow's own client,
run in that venv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _phoenix import free_port

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("MLFLOW_VENV", ROOT / ".mlflow-venv"))
PYTHON = VENV / "bin" / "python"
EXPERIMENT = "0"  # the default experiment

READER = r"""
import json, sys
import mlflow

client = mlflow.MlflowClient(tracking_uri=sys.argv[1])
out = []
for info in client.search_traces(locations=[sys.argv[2]], max_results=500):
    trace = client.get_trace(info.info.trace_id)
    for s in trace.data.spans:
        out.append({
            "trace_id": trace.info.trace_id,
            "name": s.name,
            "span_id": s.span_id,
            "parent_id": s.parent_id,
            "start_ns": s.start_time_ns,
            "end_ns": s.end_time_ns,
            "status": s.status.status_code.value,
            "status_message": s.status.description,
            "attributes": s.attributes,
            "events": [{"name": e.name, "attributes": e.attributes} for e in s.events],
        })
print(json.dumps(out, default=str))
"""


def available() -> bool:
    return PYTHON.is_file()


@dataclass
class MLflow:
    url: str
    process: subprocess.Popen[bytes]
    started_in: float
    log: Path

    def spans(self) -> list[dict[str, Any]]:
        proc = subprocess.run(
            [str(PYTHON), "-c", READER, self.url, EXPERIMENT],
            capture_output=True,
            text=True,
            timeout=120,
            env=_env(),
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"reading MLflow traces failed:\n{proc.stderr}")
        data: list[dict[str, Any]] = json.loads(proc.stdout.strip().splitlines()[-1])
        return data


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "OTEL_"))}
    env.update(MLFLOW_DISABLE_TELEMETRY="true", DO_NOT_TRACK="true")
    return env


@contextmanager
def mlflow_server(workdir: Path, timeout: float = 180.0) -> Iterator[MLflow]:
    port = free_port()
    log = workdir / "mlflow.log"
    started = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(VENV / "bin" / "mlflow"),
                "server",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                "1",
                "--backend-store-uri",
                f"sqlite:///{workdir}/mlflow.db",
                "--default-artifact-root",
                str(workdir / "artifacts"),
            ],
            env=_env(),
            cwd=workdir,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"MLflow exited with {proc.returncode}:\n{log.read_text()}")
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() - started > timeout:
                raise RuntimeError(f"MLflow did not start in {timeout:g}s:\n{log.read_text()}")
            time.sleep(0.25)
        server = MLflow(url, proc, time.monotonic() - started, log)
        print(f"mlflow started in {server.started_in:.1f}s", file=sys.stderr)
        yield server
    finally:
        # the server forks a uvicorn worker: stop the whole session it leads
        import signal

        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
