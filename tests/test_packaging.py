"""The distribution: the four top-level packages are this distribution's (`scheduler` is also a PyPI name), and
every dependency, each package the code imports among them, is pinned to a range whose ends CI tests (the lowest
versions in .ci/run's second environment, the newest admitted in the first)."""

from __future__ import annotations

import ast
import importlib
import sys
import tomllib
from importlib.metadata import distribution, packages_distributions, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("package", ["domain", "api", "projections", "scheduler"])
def test_each_top_level_package_resolves_to_this_repository(package):
    module = importlib.import_module(package)
    assert Path(module.__file__).resolve().parent == REPO / package


def test_the_tramita_distribution_declares_the_four_packages_and_the_console_script():
    dist = distribution("tramita")
    assert any(ep.name == "tramita" and ep.value == "tramita.cli:main" for ep in dist.entry_points)
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    for package in ("domain", "api", "projections", "scheduler"):
        assert f'"{package}"' in pyproject


def test_no_other_installed_distribution_provides_a_scheduler_package():
    from importlib.metadata import packages_distributions

    owners = packages_distributions().get("scheduler", [])
    assert set(owners) <= {"tramita"}


# ---------------------------------------------------------------------- dependencies

def declared() -> tuple[list[Requirement], list[Requirement]]:
    """pyproject.toml's runtime dependencies and its `test` extra."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return ([Requirement(line) for line in project["dependencies"]],
            [Requirement(line) for line in project["optional-dependencies"]["test"]])


def test_every_dependency_has_a_lower_and_an_upper_bound():
    runtime, test = declared()
    unbounded = [str(r) for r in runtime + test
                 if sorted(s.operator for s in r.specifier) != ["<", ">="]]
    assert unbounded == [], "each dependency needs >= (a version CI tests) and < (below the next release line)"


def test_the_environment_running_the_tests_is_within_the_declared_ranges():
    """The suite's results speak for the ranges only if the versions it runs on are inside them."""
    runtime, test = declared()
    outside = [f"{r.name} {version(r.name)} not in {r.specifier}" for r in runtime + test
               if not r.specifier.contains(version(r.name), prereleases=True)]
    assert outside == []


def third_party_imports(paths: list[Path]) -> dict[str, str]:
    """Top-level names the files import that are neither the standard library's nor this repository's: each with
    one place importing it."""
    first_party = {p.name for p in REPO.iterdir() if p.is_dir()} | {
        p.stem for folder in ("tests", "bench") for p in (REPO / folder).glob("*.py")}
    found: dict[str, str] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in (n.split(".")[0] for n in names):
                if name not in sys.stdlib_module_names and name not in first_party and name != "__future__":
                    found.setdefault(name, f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def undeclared(imports: dict[str, str], requirements: list[Requirement]) -> list[str]:
    names = {canonicalize_name(r.name) for r in requirements}
    providers = packages_distributions()
    return [f"{where} imports {module} ({', '.join(providers.get(module, ['no installed distribution']))})"
            for module, where in sorted(imports.items())
            if not names & {canonicalize_name(d) for d in providers.get(module, [])}]


def test_every_package_the_code_imports_is_a_declared_dependency():
    """Installed only because another dependency needs it (webargs, apispec, Werkzeug, Jinja2, ...) is not enough:
    that one may drop it, or allow a version the code was never tested on."""
    runtime, test = declared()
    packages = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"]
    shipped = sorted(p for package in {p.split(".")[0] for p in packages} for p in (REPO / package).rglob("*.py"))
    assert undeclared(third_party_imports(shipped), runtime) == []
    rest = sorted([*(REPO / "tests").glob("*.py"), *(REPO / "bench").glob("*.py"), *(REPO / "docs").rglob("*.py")])
    assert undeclared(third_party_imports(rest), runtime + test) == []


# ---------------------------------------------------------------------- the distribution as built

def test_tramita_version_prints_the_version_pyproject_declares(capsys):
    from tramita.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"tramita {project['version']}"


@pytest.mark.slow
def test_the_wheel_builds_without_a_setuptools_warning_and_carries_every_template_catalogue_and_static_file(tmp_path):
    import subprocess
    import zipfile

    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp_path), str(REPO)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    said = built.stdout + built.stderr
    assert "Warning" not in said and "deprecated" not in said, said[said.find("Warning") - 500:][:1500]
    (wheel,) = tmp_path.glob("tramita-*.whl")
    inside = set(zipfile.ZipFile(wheel).namelist())
    data = [path.relative_to(REPO).as_posix() for folder in ("api/templates", "api/static", "api/translations")
            for path in (REPO / folder).rglob("*") if path.is_file() and path.suffix in (".html", ".css", ".js", ".po")]
    assert data and set(data) <= inside, sorted(set(data) - inside)
