"""The example notebooks run as written (nbclient), and are stored without outputs.

The tracing notebook exports to ``PHOENIX_ENDPOINT``; here that is an OTLP/HTTP
receiver on 127.0.0.1 started by the test, which records what arrives.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import nbformat
import pytest
from nbclient import NotebookClient

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))


class _Receiver(BaseHTTPRequestHandler):
    posts: ClassVar[list[tuple[str, int]]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        type(self).posts.append((self.path, len(body)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def otlp_receiver() -> Iterator[tuple[str, list[tuple[str, int]]]]:
    _Receiver.posts = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", _Receiver.posts
    finally:
        server.shutdown()
        server.server_close()


def test_the_three_notebooks_exist() -> None:
    assert [p.stem for p in NOTEBOOKS] == [
        "postmortem_with_gaps",
        "tracing_to_phoenix",
        "wrap_an_existing_agent",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(
    path: Path,
    otlp_receiver: tuple[str, list[tuple[str, int]]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    endpoint, posts = otlp_receiver
    monkeypatch.setenv("PHOENIX_ENDPOINT", endpoint)
    monkeypatch.setenv("TRUSTGATE_DATABASE_URL", str(tmp_path / "nb.db"))
    monkeypatch.delenv("TRUSTGATE_MODEL", raising=False)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    if path.stem == "tracing_to_phoenix":
        assert any(p == "/v1/traces" and size > 0 for p, size in posts), posts
