"""Start and stop a real Arize Phoenix server (from ``.phoenix-venv``) on 127.0.0.1.

Phoenix lives in its own virtual environment (``scripts/phoenix-venv.sh``; ``make
test`` creates it) because its pins must not mix with trustgate's. Its OTLP gRPC
server binds ``[::]`` with no setting to change that, so the launcher rewrites the
bind address to loopback before Phoenix starts; :func:`listening_addresses` lets the
test check the result from ``/proc/net``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("PHOENIX_VENV", ROOT / ".phoenix-venv"))
PYTHON = VENV / "bin" / "python"

LAUNCHER = """
import sys
import grpc.aio

_server = grpc.aio.server

def _loopback_server(*args, **kwargs):
    server = _server(*args, **kwargs)
    add_insecure, add_secure = server.add_insecure_port, server.add_secure_port
    server.add_insecure_port = lambda a: add_insecure(a.replace("[::]", "127.0.0.1", 1))
    server.add_secure_port = lambda a, c: add_secure(a.replace("[::]", "127.0.0.1", 1), c)
    return server

grpc.aio.server = _loopback_server
from phoenix.server.main import main
sys.argv = ["phoenix", "serve"]
sys.exit(main())
"""


def available() -> bool:
    return PYTHON.is_file()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Phoenix:
    url: str
    grpc_port: int
    process: subprocess.Popen[bytes]
    started_in: float
    log: Path

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=10) as resp:
            return json.load(resp)

    def spans(self, project: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        cursor = ""
        while True:
            try:
                page = self.get(f"/v1/projects/{project}/spans?limit=1000{cursor}")
            except urllib.error.HTTPError as exc:
                if exc.code == 404:  # the project appears with its first span
                    return []
                raise
            out.extend(page["data"])
            if not page.get("next_cursor"):
                return out
            cursor = f"&cursor={page['next_cursor']}"


def listening_addresses(port: int) -> list[str]:
    """Local addresses (hex, as in /proc/net/tcp*) with a LISTEN socket on ``port``."""
    found: list[str] = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            addr, hexport = fields[1].split(":")
            if int(hexport, 16) == port and fields[3] == "0A":
                found.append(addr)
    return found


LOOPBACK = {
    "0100007F",  # 127.0.0.1
    "0000000000000000FFFF00000100007F",  # ::ffff:127.0.0.1
    "00000000000000000000000001000000",  # ::1
}


@contextmanager
def phoenix_server(workdir: Path, timeout: float = 120.0) -> Iterator[Phoenix]:
    port, grpc_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}
    env.update(
        PHOENIX_HOST="127.0.0.1",
        PHOENIX_PORT=str(port),
        PHOENIX_GRPC_PORT=str(grpc_port),
        PHOENIX_WORKING_DIR=str(workdir),
        PHOENIX_TELEMETRY_ENABLED="false",
    )
    log = workdir / "phoenix.log"
    started = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(PYTHON), "-c", LAUNCHER],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"Phoenix exited with {proc.returncode}:\n{log.read_text()}")
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() - started > timeout:
                raise RuntimeError(f"Phoenix did not start in {timeout:g}s:\n{log.read_text()}")
            time.sleep(0.25)
        server = Phoenix(url, grpc_port, proc, time.monotonic() - started, log)
        print(f"phoenix started in {server.started_in:.1f}s", file=sys.stderr)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
