"""Benchmark: the writer ceiling on PostgreSQL, with the library's insert statements and with tramita's function.

Usage: python bench/pg_writers.py [--url postgresql://...] [--seconds S] [--writers 1,2,4,8]

What is measured
----------------
Every save takes the events table's lock (`LOCK TABLE ... IN EXCLUSIVE MODE`) so that notifications commit in
the order they are numbered; while one save holds it, every other save waits. How long a save holds it sets a
ceiling on saves per second, whatever the number of writers.

1. Raw saves. N writer processes (default 1, 2, 4 and 8), each with its own library `Application` on the same
   database and its own aggregate, save one event per save (an ISO date string, a small dict and a 64-character
   string, like tramita's events) for S seconds (default 5) after a common start. Saves per second are counted
   from what every writer saved. This is done twice, each on a fresh database:
   - `statements`: the library's default recorder (several statements, pipelined, inside the locked transaction);
   - `function`: tramita's recorder (`tramita/postgres.py`): one call of a database function that takes the same
     lock, then inserts (the settings `tramita serve` runs with).
2. tramita acts. N writer processes, each with a `Tramita` application on one fresh database (function mode), each
   growing its own voters' creation case by Art. 10 requisitions issued and received, for S seconds: acts per
   second.

Without `--url`, a throwaway cluster is started from the PostgreSQL server binaries found on the machine (as the
tests do: fsync and synchronous_commit off, so a save's lock is held for its statements and round trips, not for a
disk flush; with synchronous commits on a real server, each commit's flush is held under the lock too and the
ceiling is lower). The last line printed is
`ratio: <raw saves/s of the function ÷ of the statements, at the largest N>` (goal >= 1: the function is not worse).
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from datetime import date, datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from eventsourcing.application import Application  # noqa: E402
from eventsourcing.domain import Aggregate  # noqa: E402

from domain.acts import Actor  # noqa: E402
from domain.application import Tramita  # noqa: E402
from infrastructure.persistence import persistence_env  # noqa: E402

NOW = datetime(2026, 11, 30, 15, tzinfo=timezone.utc)
OPENED = date(2026, 3, 2)
SEED_ACTOR, SEED_DAY = Actor("ibge-bench", "ibge"), date(1991, 12, 18)


class Item(Aggregate):
    def __init__(self) -> None:
        self.count = 0

    def touch(self, on: str, actor: dict[str, str], digest: str) -> None:
        self.trigger_event(self.Touched, on=on, actor=actor, digest=digest)

    class Touched(Aggregate.Event):
        on: str
        actor: dict[str, str]
        digest: str

        def apply(self, item: "Item") -> None:
            item.count += 1


def statement_env(url: str) -> dict[str, str]:
    """The library's own recorder: tramita's settings less its insert function."""
    env = persistence_env(url)
    env.pop("APPLICATION_RECORDER_TOPIC")
    env["POSTGRES_ENABLE_DB_FUNCTIONS"] = "n"
    return env


def raw_writer(env: dict[str, str], start_at: float, seconds: float, results: "multiprocessing.Queue[int]") -> None:
    # The tables and the function exist already: writers starting together would replace the function at once.
    app = Application({**env, "CREATE_TABLE": "n"})
    item = Item()
    app.save(item)
    while time.time() < start_at:
        time.sleep(0.001)
    saves, stop = 0, time.perf_counter() + seconds
    while time.perf_counter() < stop:
        item.touch(on="2026-03-02", actor={"principal": "bench", "role": "assembly-mesa"}, digest="0" * 64)
        app.save(item)
        saves += 1
    app.close()
    results.put(saves)


def act_writer(url: str, n: int, start_at: float, seconds: float, results: "multiprocessing.Queue[int]") -> None:
    from domain.demo import FEIJO, MESA, voters_creation

    app = Tramita(persistence_env(url, create_table=False), clock=lambda: NOW)
    case = voters_creation(app, OPENED, FEIJO, f"Vila Escritora {n}", area_km2="1900", voters=40,
                           first_title=100_000 * (n + 1), zone="5")
    while time.time() < start_at:
        time.sleep(0.001)
    acts, stop = 0, time.perf_counter() + seconds
    while time.perf_counter() < stop:
        issued = app.issue_requisition(case, MESA, OPENED, body="ibge", items=["art-4"])
        app.receive_requisition(case, MESA, OPENED, requisition=issued.result)
        acts += 2
    app.close()
    results.put(acts)


def run_writers(target, args_of, writers: int, seconds: float) -> float:
    """Start `writers` processes together; the rate of what they did in `seconds`."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    start_at = time.time() + 3.0 + 0.3 * writers  # every process is up and has saved its first event by then
    processes = [context.Process(target=target, args=(*args_of(n), start_at, seconds, results))
                 for n in range(writers)]
    for process in processes:
        process.start()
    done = sum(results.get(timeout=120 + seconds) for _ in processes)
    for process in processes:
        process.join()
    return done / seconds


def fresh_database(cluster, url: str | None) -> str:
    """A new database on the throwaway cluster, or the one given (then every measurement adds to it)."""
    if cluster is None:
        return url
    return cluster.url(cluster.create_database(), pool_size=2)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a PostgreSQL database to use (its tables are written); default: a "
                                      "throwaway cluster, one fresh database per measurement")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds each measurement runs (default 5)")
    parser.add_argument("--writers", default="1,2,4,8", help="writer process counts (default 1,2,4,8)")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.writers.split(",")]
    cluster = None
    if args.url is None:
        from tests.pgcluster import NoServerBinaries, start_cluster

        try:
            cluster = start_cluster()
        except NoServerBinaries as missing:
            sys.exit(f"no PostgreSQL server to measure: {missing} (or give --url)")
    try:
        rows = {}
        for mode in ("statements", "function"):
            for writers in counts:
                url = fresh_database(cluster, args.url)
                env = statement_env(url) if mode == "statements" else persistence_env(url)
                Application(env).close()  # the tables and the function, once, before the writers start
                rows[mode, writers] = run_writers(raw_writer, lambda n, env=env: (env,), writers, args.seconds)
                print(f"raw saves, {mode:10}, {writers} writers: {rows[mode, writers]:8.1f} saves/s", flush=True)
        for writers in counts:
            url = fresh_database(cluster, args.url)
            seeding = Tramita(persistence_env(url), clock=lambda: NOW)
            seeding.seed_registry(SEED_ACTOR, SEED_DAY)
            seeding.close()
            rate = run_writers(act_writer, lambda n, url=url: (url, n), writers, args.seconds)
            print(f"tramita acts, function, {writers} writers: {rate:8.1f} acts/s", flush=True)
    finally:
        if cluster is not None:
            cluster.stop()
    largest = counts[-1]
    print(f"ceiling (raw saves/s at {largest} writers): statements {rows['statements', largest]:.1f}, "
          f"function {rows['function', largest]:.1f}")
    print("ratio goal: >= 1")
    print(f"ratio: {rows['function', largest] / rows['statements', largest]:.4f}")


if __name__ == "__main__":
    main()
