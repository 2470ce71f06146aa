"""What starting trustgate costs: imports, the CLI, the pytest plugin.

Every figure is measured in fresh interpreters, interleaved round by round with its
baseline from the same run, and reported as the median (and best) of ``ROUNDS`` runs:

* ``import trustgate`` against ``import langgraph.graph`` (target: at most +10%), and
  the families: ``trustgate.drafts`` (must load no LangGraph), the full gate;
* ``trustgate --help`` and ``trustgate check-draft`` on a one-line draft, wall time of
  the installed command (targets: under 0.5 s and under 1 s), against ``python -c
  pass`` (the interpreter's own start);
* a pytest run of one trivial test with trustgate's plugin against the same run with
  the plugin disabled (``-p no:trustgate``): what having trustgate installed costs
  every pytest run.

Run: ``.venv/bin/python bench/startup.py`` (``ROUNDS=15`` for steadier figures). On a
shared machine the absolute times move with the load; the ratios, taken round by
round, move much less.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROUNDS = int(os.environ.get("ROUNDS", "9"))
PY = sys.executable
BIN = Path(PY).parent
ROOT = Path(__file__).resolve().parent.parent

_IMPORT = (
    "import sys, time, json\n"
    "t = time.perf_counter()\n"
    "{stmt}\n"
    "dt = time.perf_counter() - t\n"
    "heavy = sorted({{m.split('.')[0] for m in sys.modules}} & "
    "{{'langgraph', 'langchain_core', 'langchain', 'pydantic', 'opentelemetry'}})\n"
    "print(json.dumps([dt, heavy]))\n"
)


def import_time(stmt: str) -> tuple[float, list[str]]:
    """Seconds ``stmt`` takes in a fresh interpreter, and the heavy packages it loaded."""
    out = subprocess.run(
        [PY, "-c", _IMPORT.format(stmt=stmt)], capture_output=True, text=True, check=True
    ).stdout
    dt, heavy = json.loads(out)
    return float(dt), list(heavy)


def wall(cmd: list[str], cwd: Path | None = None) -> float:
    """Wall seconds of a whole command, interpreter start included."""
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=False, cwd=cwd)
    return time.perf_counter() - t


def summary(name: str, samples: list[float], base: list[float] | None = None) -> str:
    med, best = statistics.median(samples), min(samples)
    line = f"  {name:<46} median {med * 1000:7.1f} ms  best {best * 1000:7.1f} ms"
    if base is not None:
        ratios = [s / b for s, b in zip(samples, base, strict=True)]
        line += f"  ratio {statistics.median(ratios):5.2f}"
    return line


def main() -> None:
    trustgate_cmd = shutil.which("trustgate", path=str(BIN)) or str(BIN / "trustgate")
    work = Path(tempfile.mkdtemp(prefix="trustgate-startup-"))
    draft, record = work / "draft.md", work / "record.txt"
    draft.write_text("Latency rose at 14:02 [[1]]. The deploy caused it.\n")
    record.write_text("14:02 p99 9.2s\n")
    (work / "test_one.py").write_text("def test_one():\n    assert True\n")
    pytest_cmd = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_one.py"]

    imports = {
        "import langgraph.graph (baseline)": "import langgraph.graph",
        "import trustgate": "import trustgate",
        "from trustgate.drafts import verify_draft": "from trustgate.drafts import verify_draft",
        "from trustgate import TrustGate (the gate)": "from trustgate import TrustGate",
    }
    walls = {
        "python -c pass (baseline)": [PY, "-c", "pass"],
        "trustgate --help": [trustgate_cmd, "--help"],
        "trustgate check-draft (one line)": [
            trustgate_cmd,
            "check-draft",
            str(draft),
            "--record",
            str(record),
        ],
    }
    plugin = {
        "pytest, plugin disabled (baseline)": [*pytest_cmd, "-p", "no:trustgate"],
        "pytest, with trustgate's plugin": pytest_cmd,
    }
    times: dict[str, list[float]] = {k: [] for k in [*imports, *walls, *plugin]}
    loaded: dict[str, list[str]] = {}
    for _ in range(ROUNDS):  # interleaved: each round measures everything once
        for name, stmt in imports.items():
            dt, heavy = import_time(stmt)
            times[name].append(dt)
            loaded[name] = heavy
        for name, cmd in walls.items():
            times[name].append(wall(cmd))
        for name, cmd in plugin.items():
            times[name].append(wall(cmd, cwd=work))
    shutil.rmtree(work, ignore_errors=True)

    print(f"startup, {ROUNDS} rounds (fresh interpreters, median and best)")
    print("imports (in-process time of the statement):")
    base = times["import langgraph.graph (baseline)"]
    for name in imports:
        print(summary(name, times[name], None if "baseline" in name else base))
        print(f"  {'':<46} loads: {', '.join(loaded[name]) or 'nothing heavy'}")
    print("commands (wall time, interpreter start included):")
    base = times["python -c pass (baseline)"]
    for name in walls:
        print(summary(name, times[name], None if "baseline" in name else base))
    print("pytest in a project with trustgate installed (wall time):")
    base = times["pytest, plugin disabled (baseline)"]
    for name in plugin:
        print(summary(name, times[name], None if "baseline" in name else base))
    print("targets:")
    imp = statistics.median(
        a / b
        for a, b in zip(
            times["import trustgate"], times["import langgraph.graph (baseline)"], strict=True
        )
    )
    helps = statistics.median(times["trustgate --help"])
    check = statistics.median(times["trustgate check-draft (one line)"])
    print(
        f"  import trustgate <= import langgraph.graph + 10%: ratio {imp:.2f} "
        f"({'met' if imp <= 1.10 else 'MISSED'})"
    )
    print(f"  trustgate --help < 0.5 s: {helps:.3f} s ({'met' if helps < 0.5 else 'MISSED'})")
    print(f"  check-draft < 1 s: {check:.3f} s ({'met' if check < 1.0 else 'MISSED'})")
    drafts_heavy = set(loaded["from trustgate.drafts import verify_draft"])
    ok = not drafts_heavy & {"langgraph", "langchain", "langchain_core"}
    print(f"  trustgate.drafts loads no LangGraph/LangChain: {'met' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()
