"""The four top-level packages are this distribution's (`scheduler` is also a PyPI name)."""

from __future__ import annotations

import importlib
from importlib.metadata import distribution
from pathlib import Path

import pytest

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
