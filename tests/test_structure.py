"""The house a newcomer can live in: no module of the packages over 450 lines, packages that import one way (each
only the packages below it in LAYERS, so none in a circle and the domain none of the others), no import circle
between the project's modules, and the command line importable without the web app."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: The packages, lowest first: each may import only those before it (docs/architecture.md, "Layout").
LAYERS = ("domain", "infrastructure", "audit", "projections", "scheduler", "api", "tramita")
PACKAGES = LAYERS
MAX_LINES = 450


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports_of(name: str, path: Path, known: set[str], *, typing: bool = False) -> set[str]:
    """The project modules `name` imports, at any depth of its code (a lazy import inside a function counts;
    an import for annotations only, under `if TYPE_CHECKING:`, counts only with `typing`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    typing_only = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and getattr(block.test, "id", None) == "TYPE_CHECKING" for node in ast.walk(block)}
    for node in ast.walk(tree):
        if id(node) in typing_only and not typing:  # `if TYPE_CHECKING:` imports are for annotations, never run
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def test_no_module_of_the_packages_is_over_450_lines():
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"over {MAX_LINES} lines: {long}"


def package_imports() -> dict[tuple[str, str], str]:
    """(importing package, imported package) -> the first module that imports so; every import counts, those for
    annotations only too."""
    found = modules()
    edges: dict[tuple[str, str], str] = {}
    for name, path in sorted(found.items()):
        for target in sorted(imports_of(name, path, set(found), typing=True)):
            pair = (name.split(".")[0], target.split(".")[0])
            if pair[0] != pair[1]:
                edges.setdefault(pair, name)
    return edges


def test_the_packages_import_one_way_each_only_those_below_it():
    upward = {f"{a} -> {b}": where for (a, b), where in package_imports().items() if LAYERS.index(b) > LAYERS.index(a)}
    assert not upward, f"imports against the layers {' < '.join(LAYERS)}: {upward}"


def test_the_domain_imports_none_of_the_other_packages():
    assert not {b: where for (a, b), where in package_imports().items() if a == "domain"}


def test_every_package_of_the_distribution_is_in_the_layers():
    on_disk = {path.parent.name for path in REPO.glob("*/__init__.py")}
    assert on_disk - {"tests", "bench", "docs"} == set(LAYERS)


def test_no_two_modules_of_the_project_import_each_other_in_a_circle():
    found = modules()
    graph = {name: imports_of(name, path, set(found)) for name, path in found.items()}
    for name in graph:  # a package imports its __init__: edges into a parent package are not circles of code
        graph[name] = {target for target in graph[name] if not name.startswith(target + ".")}
    circles, state = [], {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = "open"
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                circles.append(trail[trail.index(target):] + [target] if target in trail else [node, target])
            elif target not in state:
                visit(target, [*trail, target])
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not circles, "import circles: " + "; ".join(" -> ".join(c) for c in circles)


@pytest.mark.parametrize("package", ["domain", "projections", "audit", "scheduler"])
def test_the_domain_and_the_back_end_processes_never_import_the_web_app(package):
    offenders = {name: sorted(t for t in imports_of(name, path, set(modules())) if t.split(".")[0] == "api")
                 for name, path in modules().items() if name.split(".")[0] == package}
    assert not {k: v for k, v in offenders.items() if v}


def test_the_domain_reads_no_database_url_and_imports_no_wiring():
    offenders = {name: sorted(t for t in imports_of(name, path, set(modules())) if t.split(".")[0] == "tramita")
                 for name, path in modules().items() if name.split(".")[0] == "domain"}
    assert not {k: v for k, v in offenders.items() if v}
    assert not any("TRAMITA_DATABASE_URL" in path.read_text(encoding="utf-8")
                   for name, path in modules().items() if name.split(".")[0] == "domain")


def test_the_command_line_starts_without_importing_flask():
    code = ("import sys, tramita.cli; tramita.cli.parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('flask', 'api', 'gunicorn')))")
    printed = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert printed.stdout.strip() == "[]"
