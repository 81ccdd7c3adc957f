"""Benchmark: how fast tramita records acts, compared with the bare eventsourcing library on the same store.

Usage: python bench/record_acts.py [--cases N] [--store memory|sqlite]

What is measured
----------------
1. tramita. A `Tramita` application with a fixed clock (2026-11-30 12:00 UTC, so every run records the
   same acts) is seeded with Acre's registry, and the 1991 figures of Plácido de Castro and Senador
   Guiomard that the demo records (`domain.demo.creation_1992`) are recorded once. None of this is timed.
   Then N creation cases are recorded through the application service, each with the demo's valid
   sequence of acts and competent bodies: the Governor's petition with the Art. 9 documents, the seven
   Art. 4 findings, the verification, the plebiscite (decree, schedule, homologation, communication,
   plenary), the CCJ's bill, the law (named "Vila Bench <n>"), the Art. 40 communications, the
   Administrator, the Art. 26 personnel documents, the installation, the remuneration, the books, the
   Mayor's bills and the organic law, which concludes the case. Every call to the service is one act.

   Each creation law moves population, voters, revenue, buildings and area out of the two origins. After a
   few cases a figure would fall below the share the next case takes from it (the registry refuses a
   negative figure), so the competent body then restates that figure at its 1991 value, dated on the
   law's day. These restatements are acts too, and are timed and counted like the others.

2. The raw library. A plain `eventsourcing.application.Application` on the same kind of store (a fresh
   one) stores the same number of events in the same number of saves as tramita's acts: one
   `app.save(aggregate)` per act, with tramita's average number of events per save, spread evenly. One
   aggregate per case; each event carries an ISO date string, a small dict (the actor) and a 64-character
   string (like tramita's hash).

Events are counted as the growth of the store's notification log (`recorder.max_notification_id()`)
over the timed part. Times come from `time.perf_counter`. The last line printed is
`ratio: <tramita events/s ÷ raw library events/s>`.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from domain.acts import Actor
from domain.application import Tramita
from tramita.persistence import persistence_env
from domain.demo import (
    ART_9_DOCUMENTS, FIGURES_1991, FINDINGS_1991, GOVERNOR, GUIOMARD, PLACIDO, close_obligations_1993,
    install_1993, instruct_and_vote_1992, record_figure_1991,
)
from domain.names import ToponymList, date_in_name

NOW = datetime(2026, 11, 30, 12, tzinfo=timezone.utc)
SEED_ACTOR = Actor("ibge-bench", "ibge")
SEED_DAY = date(1991, 12, 18)
LAW_DAY = date(1992, 1, 21)

# What each case's petition takes from each origin (smaller than the demo's areas, so figures last longer).
AREAS_KM2 = {PLACIDO: "42.05", GUIOMARD: "18"}
FINDING_FIGURE = {"art-4-I": "population", "art-4-II": "voters", "art-4-III": "revenue", "art-4-IV": "buildings"}


def shares_taken() -> dict[str, dict[str, Decimal]]:
    """Per origin and figure, what one creation law moves out of it (from the findings and the areas)."""
    taken = {code: {"area_km2": Decimal(AREAS_KM2[code])} for code in FIGURES_1991}
    for _actor, item, _value, by_origin, _tax in FINDINGS_1991:
        if item in FINDING_FIGURE:
            for code, share in (by_origin or {}).items():
                taken[code][FINDING_FIGURE[item]] = Decimal(str(share))
    return taken


@dataclass
class Run:
    """One timed part: how many acts (saves) and events, and how long it took."""

    acts: int
    events: int
    seconds: float

    def per_second(self, count: int) -> float:
        return count / self.seconds if self.seconds else math.inf


class ActCounter:
    """Wraps the application so that every call to one of its act methods counts as an act (reads do not)."""

    READS = frozenset({"get_case", "context"})

    def __init__(self, app: Tramita) -> None:
        self.app, self.acts = app, 0

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.app, name)
        if name in self.READS:
            return method

        def act(*args: Any, **kwargs: Any) -> Any:
            self.acts += 1
            return method(*args, **kwargs)

        return act


# ---------------------------------------------------------------------------------------------- tramita


def store_url(store: str, folder: str, name: str) -> str:
    return "memory://" if store == "memory" else f"sqlite:///{folder}/{name}.sqlite"


def build_tramita(database_url: str) -> Tramita:
    """The application with the registry seeded and the demo's 1991 figures recorded (untimed)."""
    app = Tramita(persistence_env(database_url), clock=lambda: NOW)
    app.seed_registry(SEED_ACTOR, SEED_DAY)
    for code, figures in FIGURES_1991.items():
        for figure, value in figures.items():
            record_figure_1991(app, code, figure, value)
    ToponymList.shipped()  # the shipped IBGE list is loaded once per process, not per act
    return app


def bench_name(n: int) -> str:
    """The new municipality's name: it must not repeat an existing one nor designate a date (Art. 17)."""
    name = f"Vila Bench {n}"
    if date_in_name(name) is not None or ToponymList.shipped().same_name(name):
        raise ValueError(f"{name!r} cannot name a new municipality; change bench_name")
    return name


class OriginFigures:
    """What is left of each origin's figures after the laws so far; restates a figure before it runs out."""

    def __init__(self) -> None:
        self.taken = shares_taken()
        self.left = {code: {f: Decimal(str(v)) for f, v in figures.items()} for code, figures in FIGURES_1991.items()}

    def restate_if_low(self, app: Any) -> None:
        for code, figures in self.left.items():
            for figure, left in figures.items():
                if left < self.taken[code][figure]:
                    record_figure_1991(app, code, figure, FIGURES_1991[code][figure], LAW_DAY, LAW_DAY)
                    figures[figure] = Decimal(str(FIGURES_1991[code][figure]))

    def law_enacted(self) -> None:
        for code, figures in self.left.items():
            for figure in figures:
                figures[figure] -= self.taken[code][figure]


def record_creation_case(app: Any, n: int, origins: OriginFigures) -> None:
    """One creation case from petition to conclusion, with the demo's acts, dates and bodies."""
    case = open_petition(app, n)
    instruct_and_vote_1992(app, case)
    origins.restate_if_low(app)
    app.enact_law(case, GOVERNOR, LAW_DAY, law=f"Lei {n}/1992", name=bench_name(n), seat_origin=PLACIDO,
                  limits="descritos no anexo I", comarca="Plácido de Castro",
                  districts=[f"{bench_name(n)} (sede)"], living_person_declaration=True)
    origins.law_enacted()
    install_1993(app, case)
    close_obligations_1993(app, case)


def open_petition(app: Any, n: int) -> str:
    areas = [{"municipality": code, "area_km2": km2, "description": f"Área {n} de {code}"}
             for code, km2 in AREAS_KM2.items()]
    return app.open_case(GOVERNOR, date(1991, 12, 19), kind="creation", municipalities=[PLACIDO, GUIOMARD],
                         areas=areas, proposed_name=bench_name(n), documents=ART_9_DOCUMENTS).number


def notifications(app: Application) -> int:
    return app.recorder.max_notification_id() or 0


def bench_tramita(database_url: str, cases: int) -> Run:
    app = build_tramita(database_url)
    counter, origins = ActCounter(app), OriginFigures()
    first = notifications(app)
    start = time.perf_counter()
    for n in range(1, cases + 1):
        record_creation_case(counter, n, origins)
    seconds = time.perf_counter() - start
    return Run(counter.acts, notifications(app) - first, seconds)


# ---------------------------------------------------------------------------------------------- raw library


class Docket(Aggregate):
    """A bare aggregate whose events carry a payload comparable to an act's."""

    @event("Opened")
    def __init__(self, occurred_on: str, actor: dict[str, Any], digest: str) -> None:
        self.notes = 0

    @event("Noted")
    def note(self, occurred_on: str, actor: dict[str, Any], digest: str) -> None:
        self.notes += 1


class RawApplication(Application):
    name = "rawbench"


def save_sizes(saves: int, events: int) -> list[int]:
    """`events` spread as evenly as possible over `saves` (same total, same average per save)."""
    return [(i + 1) * events // saves - i * events // saves for i in range(saves)]


def bench_raw(database_url: str, saves: int, events: int, aggregates: int) -> Run:
    app = RawApplication(persistence_env(database_url))
    sizes = save_sizes(saves, events)
    saves_per_aggregate = math.ceil(saves / aggregates)
    actor = {"principal": "governor-bench", "role": "governor", "municipality": None}
    digest = "0123456789abcdef" * 4
    first = notifications(app)
    start = time.perf_counter()
    docket = None
    for i, size in enumerate(sizes):
        occurred_on = date.fromordinal(date(1991, 12, 19).toordinal() + i % 500).isoformat()
        if docket is None or i % saves_per_aggregate == 0:
            docket, size = Docket(occurred_on, actor, digest), size - 1
        for _ in range(size):
            docket.note(occurred_on, actor, digest)
        app.save(docket)
    seconds = time.perf_counter() - start
    return Run(saves, notifications(app) - first, seconds)


# ---------------------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200, help="creation cases to record (default 200)")
    parser.add_argument("--store", choices=("memory", "sqlite"), default="memory", help="event store (default memory)")
    args = parser.parse_args(argv)
    if args.cases < 1:
        parser.error("--cases must be at least 1")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tramita-bench-") as folder:
        tramita = bench_tramita(store_url(args.store, folder, "bench"), args.cases)
        raw = bench_raw(store_url(args.store, folder, "raw"), tramita.acts, tramita.events, args.cases)
    tramita_rate, raw_rate = tramita.per_second(tramita.events), raw.per_second(raw.events)
    print(f"store: {args.store}, creation cases: {args.cases}")
    print(f"tramita: {tramita.acts} acts, {tramita.events} events in {tramita.seconds:.3f} s "
          f"({tramita.events / tramita.acts:.2f} events per act)")
    print(f"tramita acts/s: {tramita.per_second(tramita.acts):.1f}")
    print(f"tramita events/s: {tramita_rate:.1f}")
    print(f"raw library: {raw.acts} saves, {raw.events} events in {raw.seconds:.3f} s")
    print(f"raw library events/s: {raw_rate:.1f}")
    print(f"ratio: {tramita_rate / raw_rate:.4f}")


if __name__ == "__main__":
    main()
