"""Run one throwaway PostgreSQL server for as long as the process that started us lives.

Why: ``pg_ctl start`` detaches the server (it is re-parented to init), so a test run
stopped by a timeout or ``kill -9`` left its server running, with its data directory.
``tests/pg.py`` starts this script instead; it starts ``postgres`` as its own child and
stops it, then removes the server's directory, when any of these happens:

* the starter closes our stdin (a normal stop) or dies, which closes it too;
* our parent process changes (the starter died and we were re-parented), checked
  twice a second in case a forked child of the starter still holds the pipe;
* we get SIGTERM, SIGINT or SIGHUP.

If this script itself is killed with SIGKILL, the server still dies: on Linux it is
started with ``PR_SET_PDEATHSIG`` = SIGKILL (set after it switched to the unprivileged
user, since a change of user clears it).

Usage: ``python _pg_supervisor.py ROOT LOG USER -- postgres ARGS...`` (``USER`` is ``-``
to keep ours). Exits with the server's status when it stops on its own.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType

PR_SET_PDEATHSIG = 1
_stop = False


def _die_with(parent: int) -> None:
    """In the forked child, after the switch of user: die with SIGKILL when we die."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # we died between the fork and the prctl
        os._exit(1)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    global _stop
    _stop = True


def main(argv: list[str]) -> int:
    root, log, user, sep, *cmd = argv
    if sep != "--" or not cmd:
        print(__doc__, file=sys.stderr)
        return 2
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    parent, me = os.getppid(), os.getpid()
    with open(log, "ab") as out:
        server = subprocess.Popen(
            cmd,
            user=None if user == "-" else user,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "LC_ALL": "C", "LANG": "C"},
            preexec_fn=lambda: _die_with(me),  # safe here: this process has one thread
        )
    code: int | None = None
    try:
        while not _stop:
            with contextlib.suppress(InterruptedError):
                ready, _, _ = select.select([sys.stdin], [], [], 0.5)
                if ready and not os.read(sys.stdin.fileno(), 1024):
                    break  # EOF: the starter stopped us, or died
            if os.getppid() != parent:
                break  # the starter died (re-parented)
            if (code := server.poll()) is not None:
                return code  # the server stopped on its own (e.g. its port was taken)
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGQUIT)  # immediate shutdown: the data is thrown away
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        if code is None:
            shutil.rmtree(Path(root), ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
