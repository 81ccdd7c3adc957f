"""Every benchmark of `make bench` still starts: its imports follow the code when modules move (a bench is run by
hand, not by the tests, so without this a moved import is found only at the next measurement)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCHES = sorted((REPO / "bench").glob("*.py"))


def test_make_bench_runs_every_benchmark_of_the_folder():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert BENCHES and all(f"bench/{bench.name}" in makefile for bench in BENCHES)


@pytest.mark.parametrize("bench", BENCHES, ids=lambda path: path.name)
def test_each_benchmark_imports_and_explains_its_options(bench):
    shown = subprocess.run([sys.executable, str(bench), "--help"], cwd=REPO, capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "usage:" in shown.stdout


def test_the_pages_benchmark_reads_a_small_case_both_ways_and_ends_with_its_ratio():
    """A run on a case of a dozen acts: both reads answer (the bench asserts it) and the last line is the ratio."""
    ran = subprocess.run([sys.executable, str(REPO / "bench" / "pages.py"), "--acts", "12", "--others", "1",
                          "--repeat", "1"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.strip().splitlines()
    assert lines[-2] == "ratio goal: <= 3" and lines[-1].startswith("ratio: ")
    assert float(lines[-1].removeprefix("ratio: ")) > 0
    assert any(line.startswith("GET /processos/") for line in lines), ran.stdout
