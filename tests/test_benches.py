"""Every benchmark of `make bench` still starts: its imports follow the code when modules move (a bench is run by
hand, not by the tests, so without this a moved import is found only at the next measurement)."""

from __future__ import annotations

import shutil
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


def run_bench(name: str, *options: str) -> list[str]:
    ran = subprocess.run([sys.executable, str(REPO / "bench" / name), *options], cwd=REPO, capture_output=True,
                         text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.strip().splitlines()


def test_the_pages_benchmark_reads_a_small_case_both_ways_and_ends_with_its_ratio():
    """A run on a case of a dozen acts: both reads answer (the bench asserts it) and the last line is the ratio."""
    lines = run_bench("pages.py", "--acts", "12", "--others", "1", "--repeat", "1")
    assert lines[-2] == "ratio goal: <= 3" and lines[-1].startswith("ratio: ")
    assert float(lines[-1].removeprefix("ratio: ")) > 0
    assert any(line.startswith("GET /processos/") for line in lines), lines


def test_the_alert_scan_benchmark_raises_the_alerts_due_in_proportion_to_the_open_and_ends_with_the_per_due_ratio():
    """The bench writes its filler deadlines with the projection's own row functions, which read a case: when
    those change, this run fails here rather than at the next measurement (it asserts the alerts it raises)."""
    lines = run_bench("alert_scan.py", "--repeat", "1", "--sizes", "1000,10000")
    assert lines[-2] == "ratio goal: <= 1.5" and float(lines[-1].removeprefix("ratio: ")) > 0
    assert any(line.startswith("10,000 open deadlines, 100 due, 1,000 overdue") for line in lines), lines
    assert [line.split(":")[0] for line in lines if " open: per due deadline" in line] == [
        "1,000 open", "10,000 open"]


def test_the_record_acts_benchmark_alternates_its_sides_on_sqlite_and_prints_the_read_first_and_growth_lines():
    """A small run: two cases in two rounds, the long case grown to 40 events, the series to its 22nd case, the
    cold first act in two rounds of fresh processes."""
    lines = run_bench("record_acts.py", "--cases", "2", "--rounds", "2", "--long-case", "40",
                      "--municipality-cases", "22", "--samples", "2", "--cold-samples", "2")
    assert lines[0] == ("store: sqlite, creation cases: 2, in 2 rounds alternating the two sides, "
                        "each in its own process")
    assert any(line.startswith("tramita CPU per act: ") for line in lines), lines
    read_first = [line for line in lines if line.startswith("ratio of the raw read-then-save to the raw save")]
    assert len(read_first) == 1 and float(read_first[0].rsplit(": ", 1)[1]) > 0, lines
    assert [line.split(":")[0] for line in lines if line.startswith("growth ")] == [
        "growth case-length-40-vs-30 goal", "growth case-length-40-vs-30",
        "growth municipality-case-22-vs-20 goal", "growth municipality-case-22-vs-20",
        "growth cold-40 goal", "growth cold-40"]
    assert float(lines[-3].removeprefix("growth cold-40: ")) > 0
    assert lines[-2] == "ratio goal: >= 0.5" and float(lines[-1].removeprefix("ratio: ")) > 0


def test_the_record_acts_benchmark_prints_the_memory_store_for_information_without_a_goal():
    lines = run_bench("record_acts.py", "--store", "memory", "--cases", "1", "--rounds", "1")
    assert lines[0].startswith("store: memory, ")
    assert not any(line.startswith("growth ") for line in lines), lines
    assert lines[-2].startswith("ratio goal: none") and float(lines[-1].removeprefix("ratio: ")) > 0


def test_the_record_acts_benchmark_on_postgres_runs_on_a_throwaway_cluster_or_says_why_not():
    """Without the server's programs the bench says so in one line and succeeds (make goes on)."""
    lines = run_bench("record_acts.py", "--store", "postgres", "--cases", "1", "--rounds", "1")
    if lines[0].startswith("store: postgres skipped: "):
        return
    assert lines[0].startswith("store: postgres (PostgreSQL "), lines
    assert lines[-2] == "ratio goal: >= 0.5" and float(lines[-1].removeprefix("ratio: ")) > 0


def test_the_record_acts_counted_sides_store_the_same_events_in_the_same_saves():
    """What `--instructions` runs under callgrind, run here without it: tramita records a case, then the raw
    library saves exactly as many events in as many saves (the difference of the two counts compares the same
    work only if they do)."""
    tramita = run_bench("record_acts.py", "--count-side", "tramita", "--count-store", "memory://", "1")
    acts, events = map(int, tramita[-1].split())
    assert acts > 30 and events > acts
    raw = run_bench("record_acts.py", "--count-side", "raw", "--count-store", "memory://", str(acts), str(events), "1")
    assert raw[-1] == f"{acts} {events}"


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_the_record_acts_benchmark_counts_both_sides_instructions_and_ends_with_their_ratio():
    lines = run_bench("record_acts.py", "--instructions", "1", "--store", "memory")
    assert lines[-2] == "instructions ratio goal: >= 0.5"
    assert 0 < float(lines[-1].removeprefix("instructions ratio: ")) < 5
    assert lines[1].startswith("tramita: ") and lines[2].startswith("raw library: ")


def test_the_api_load_benchmark_alternates_act_requests_the_floor_and_the_in_process_acts_and_ends_with_the_ratio():
    """A small run: 2 clients, 2 rounds of 1 s per side, against gunicorn on loopback; each side does work (the
    bench refuses an HTTP error) and the CPU of each is read."""
    lines = run_bench("api_load.py", "--seconds", "1", "--rounds", "2", "--clients", "2", "--workers", "1")
    assert [line.split(":")[0] for line in lines if line.startswith("round ")] == ["round 1", "round 2"]
    assert "HTTP errors: none" in lines
    cpu = {line.split(" (ms): ")[0]: line.split(" (ms): ")[1] for line in lines if " (ms): " in line}
    assert set(cpu) == {"server CPU per act request", "server CPU per floor request, GET /whoami",
                        "in-process act CPU"}
    assert all(0 < float(value) for spread in cpu.values() for value in spread.split("-")), cpu
    assert lines[-2] == "overhead ratio goal: <= 1.5" and lines[-1].startswith("overhead ratio: ")
    assert float(lines[-1].removeprefix("overhead ratio: ")) > 0
