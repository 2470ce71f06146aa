"""docs/compatibility.md lists the third-party packages the tests run against with the
versions they accept; this test holds the table to what is really installed.

Each row's versions must be the requirement ``pyproject.toml`` (or the backend venv
script) gives for that package, every requirement of the core, the extras users install
and every ``==`` pin of the test dependencies must have a row, and every installed
package must be a version its row accepts. A new pin, a changed range or a drifted
install fails here, not silently in the docs.
"""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "compatibility.md"
ROW = re.compile(r"^\| `(?P<name>[^`]+)` \| `(?P<spec>[^`]+)` \| (?P<where>[^|]+) \|")
SCRIPTS = {"arize-phoenix": "phoenix-venv.sh", "mlflow": "mlflow-venv.sh"}


def _rows() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            rows[m["name"]] = (m["spec"], m["where"].strip())
    return rows


def _key(requirement: Requirement) -> str:
    extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
    return requirement.name.lower() + extras


def _declared() -> dict[str, tuple[str, str]]:
    """Every requirement of pyproject.toml by package: (specifier, where)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    out = {}
    for text in project["dependencies"]:
        r = Requirement(text)
        out[_key(r)] = (str(r.specifier), "core")
    for extra, items in project["optional-dependencies"].items():
        for text in items:
            r = Requirement(text)
            out.setdefault(_key(r), (str(r.specifier), "tests" if extra == "dev" else extra))
    return out


def _script_spec(script: str) -> str:
    text = (ROOT / "scripts" / script).read_text(encoding="utf-8")
    m = re.search(r'SPEC="\$\{\w+:-[a-z-]+(?P<spec>[^}"]+)\}"', text)
    assert m, f"no default SPEC in scripts/{script}"
    return m["spec"]


def test_every_row_is_the_requirement_the_tests_install() -> None:
    declared = _declared()
    rows = _rows()
    assert len(rows) >= 20, "the table was not read"
    for name, (spec, where) in rows.items():
        if name in SCRIPTS:
            assert SpecifierSet(spec) == SpecifierSet(_script_spec(SCRIPTS[name])), name
            assert where == f"`scripts/{SCRIPTS[name]}`", name
            continue
        assert name in declared, f"{name} is in the table but not in pyproject.toml"
        want, source = declared[name]
        assert SpecifierSet(spec) == SpecifierSet(want), (name, spec, want)
        assert where == (
            "tests" if source == "tests" else source if source == "core" else f"`{source}` extra"
        ), (name, where, source)


def test_every_dependency_users_install_and_every_test_pin_has_a_row() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    wanted = [*project["dependencies"]]
    for extra in ("postgres", "otlp", "agents", "agent-server"):
        wanted += extras[extra]
    wanted += [r for r in extras["dev"] if "==" in r]
    missing = sorted({_key(Requirement(r)) for r in wanted} - set(_rows()))
    assert missing == [], f"not in docs/compatibility.md: {missing}"


def test_every_installed_package_is_a_version_its_row_accepts() -> None:
    checked = 0
    for name, (spec, _where) in _rows().items():
        try:
            version = importlib.metadata.version(name.split("[")[0])
        except importlib.metadata.PackageNotFoundError:
            continue  # an extra this venv does not hold (the agent server, a backend's venv)
        assert version in SpecifierSet(spec), f"{name} {version} is outside {spec}"
        checked += 1
    assert checked >= 15
