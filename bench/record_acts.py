"""Benchmark: how fast tramita records acts, compared with the bare eventsourcing library on the same store, and
whether an act's cost grows with the history behind it.

Usage: python bench/record_acts.py [--cases N] [--store sqlite|postgres|memory] [--rounds R] [--long-case EVENTS]
       [--municipality-cases N] [--samples S] [--cold-samples R] [--no-growth]
       python bench/record_acts.py --instructions [CASES] [--store memory|sqlite]

What is measured
----------------
1. tramita. A `Tramita` application with a fixed clock (2026-11-30 12:00 UTC, so every run records the
   same acts) is seeded with Acre's registry, and the 1991 figures of Plácido de Castro and Senador
   Guiomard that the demo records (`domain.demo.creation_1992`) are recorded once. What a process loads once
   whatever it records, the shipped IBGE list of names and the holidays library's calendars (its first holiday
   looked up imports every country it knows, about 50 ms, which the raw library never pays), is loaded then too.
   None of this is timed.
   On SQLite the audit log's tables are made too, and every act checks the aggregates it reads against their hash
   chains and the tree's leaves (docs/audit.md, section 10), as a deployment's API does; the tree takes in each
   round's events before the next round, untimed (in a deployment the projector appends it, in its own process).
   Then N creation cases are recorded through the application service, each with the demo's valid
   sequence of acts and competent bodies: the Governor's petition with the Art. 9 documents, the seven
   Art. 4 findings, the verification, the plebiscite (decree, schedule, homologation, communication,
   plenary), the CCJ's bill, the law (named "Vila Bench <n>"), the Art. 40 communications, the
   Administrator, the Art. 26 personnel documents, the installation, the remuneration, the books, the
   Mayor's bills and the organic law, which concludes the case. Every call to the service is one act, but
   for the demo's three questions about each case between its acts (which Art. 40 communications are still
   due, twice, and the new municipality's code: `ask_case`) and the contexts they take: those are timed on
   tramita's side and not counted as acts. A round's cases are **interleaved** as a real docket's are: all
   their petitions and findings, then each one's vote and law, then each one's installation, then each one's
   closing acts, so the log alternates between the cases and the application holds all of them at once.

   Each creation law moves population, voters, revenue, buildings and area out of the two origins. After a
   few cases a figure would fall below the share the next case takes from it (the registry refuses a
   negative figure), or leave less than Art. 4 asks of the origin (the law judges Art. 5 again on its day),
   so the competent body then restates that figure at its 1991 value, dated on the law's day. These
   restatements are acts too, and are timed and counted like the others.

2. The raw library. A plain `eventsourcing.application.Application` on the same kind of store (a fresh
   one) stores the same number of events in the same number of saves as tramita's acts: one
   `app.save(aggregate)` per act, with tramita's average number of events per save, spread evenly. One
   aggregate per case, the saves going to the round's aggregates in turn (interleaved, as tramita's cases);
   each event carries an ISO date string, a small dict (the actor) and a 64-character string (like tramita's
   hash).

2b. For information, without a goal: the raw library again, on a third store, reading each aggregate before
   each of its saves after the first (`repository.get` with the library's aggregate cache on: the cached
   aggregate brought up to date from the store, one read, then copied), as any command must when several
   processes write the store. Its ratio to the raw save is the most an act that reads what it changes can reach
   against the goal's baseline; tramita's ratio against it is printed too.

The two sides run in R rounds (default 10): tramita records the next N/R cases, then the raw library saves as
many events in as many saves as that round of tramita took (then 2b), and so on. Each side lives in its own process,
started and built before the first round, so neither side's objects weigh on the other's memory and garbage
collector, and a slower spell of the machine falls on both sides rather than on the one measured in it.
(Run one after the other in one process, three runs of the same code on the development machine read 0.27,
0.47 and 0.51; in rounds, 0.40-0.45.)

Events are counted as the growth of the store's notification log (`recorder.max_notification_id()`)
over the timed part. Times come from `time.perf_counter`, summed over the rounds. The goal is a ratio >= 0.5 on
SQLite and on PostgreSQL; the memory store (`--store memory`), which no deployment runs, is printed for
information without a goal. Each side's CPU time over the same parts (`time.process_time` in its own process,
which the machine's other work moves less than the wall clock) is printed too, per act and per save, with their
ratio. The stores: SQLite files in a temporary folder (default); with `--store postgres`, new databases on a
throwaway PostgreSQL cluster started from the server programs found on the machine as the tests start one
(tests/pgcluster.py: loopback, fsync off), both sides through tramita's recorder (`persistence_env`, its
insert function), and one line saying so when the programs are missing; or the memory store. On SQLite and
PostgreSQL tramita's acts check what they read against the audit log, as a deployment's do.

3. Growth lines (on SQLite only; same run, set-up untimed; goal <= 1.2 each). Each line compares two stores,
   one grown to the short (or early) point and one to the long (or late) point, both fresh, both alive in the
   same process; their timed samples are then taken alternately (short then long, then long then short), so a
   slower spell of the machine falls on both sides alike instead of on whichever was being measured. A sample
   is the process's CPU time (`time.process_time`): the development machine has 2 CPUs shared with other
   work, which moves wall times by several times; the commit's disk wait, left out, is the same at both points.

   - case length. 13 voters' creation cases (the Mesa's petition with 32 voter titles, one registry
     municipality each, opened on 2014-01-02) are grown together, round-robin, by Art. 10 cycles of three
     acts: the Mesa requisitions a body (IBGE, TRE, SEFAZ, IBGE in turn), the body records the receipt the next
     day (its 30-day answer deadline opens), and the body records its Art. 4 finding (I, II, III, IV; never V or
     VI, so Art. 4 stays incomplete and requisitions stay admissible) 5 days later, every sixth one 40 days
     later, past the deadline; the next cycle starts on the finding's day. A cycle stores five events. On both
     stores the cases are grown this way to 30 events. On the long store, the first case alone is then grown to
     EVENTS events (default 1,000; about 6 years of legal dates), each of its cycles followed by one on the
     next of the other twelve, so the log interleaves them and they grow too. Then S cycles (default 20) are
     timed on each store: on the short one, one cycle on each case in turn (on cases of 31 or 36 events); on
     the long one, a cycle of the long case, each followed by an untimed one on another case.
     Printed: the median per act at each length, and `growth case-length-<EVENTS>-vs-30: <long ÷ short>`.
   - one municipality. A series of Governor's creation petitions, all on Plácido de Castro and Senador
     Guiomard (each opening freezes both, Art. 38, and takes the year's next case number), each followed by
     the IBGE's, the TRE's and the SEFAZ's Art. 4 findings (which read both origins' figures). Nine cases in
     ten are then archived by the Mesa (Art. 16 par. ún.: the freezes lift); every tenth takes the demo's
     instruction and vote (the seven findings again, as Art. 32 allows, the plebiscite and the CCJ's bill)
     and its law, which moves the origins' figures, lifts the freezes and adds its name to the toponyms
     (restating a figure when it runs low, as in part 1). The early store records cases 1 to 19 of the
     series, the late one cases 1 to N-1 (default N = 400). Then S/2 cases more are recorded on each
     (default S = 20: cases 20-29 against 400-409), and the opening and its three findings are timed; the
     median per act of each is compared: `growth municipality-case-<N>-vs-20: <late ÷ early>`.
   - cold. The long store of the case-length line, as it ends, is copied (SQLite's backup API, untimed) for
     each of R rounds (`--cold-samples`, default 10) and each side: in a fresh process (spawned, so nothing of
     the case is in memory) opened as a deployment's (the audit log's tree caught up, each act checked against
     it) and made ready by an act on a sibling case (untimed: what a process loads once), the first act on the
     long case (the Mesa's requisition) is timed; against, in a fresh process made ready alike, the raw
     library's `repository.get` of the long case (an application without the aggregate cache, decoding with
     the same transcoder) plus a warm act (the case's second act in that process). The two sides alternate,
     the first of a round taking turns; printed: the CPU and wall times min-median-max and
     `growth cold-<EVENTS>: <median CPU of the cold act ÷ that of the get plus the warm act>`.

The growth lines are printed as `growth <name> goal: <= 1.2` then `growth <name>: <ratio>`. The last line
printed is `ratio: <tramita events/s ÷ raw library events/s>`.

4. Instructions (`--instructions [CASES]`, instead of 1-3; needs valgrind). The wall-clock rates of the
   development machine move by up to two times between runs of the same code, so the same comparison can also
   be counted in instructions executed, which do not move with the machine. Each side runs twice, each time in
   a fresh process under `valgrind --tool=callgrind` (PYTHONHASHSEED=0) on a fresh store: tramita recording the
   first 10 creation cases, then the first 10 + CASES (default 20); the raw library saving exactly as many events
   in as many saves, over as many aggregates, as each tramita run did. The difference of the two runs of a side
   is its count for the CASES cases alone (set-up, imports and the first acts' one-off costs cancel out). Printed:
   instructions per act and per save, and last `instructions ratio: <raw library's ÷ tramita's instructions for
   the same events>` (the same goal, >= 0.5). It says how much work an act does against the raw save; what the
   machine makes of that work in seconds is the wall-clock ratio's business (docs/benchmarks.md)."""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from domain.acts import Actor
from domain.application import Tramita
from infrastructure.persistence import persistence_env
from domain.demo import (
    ART_9_DOCUMENTS, FIGURES_1991, FINDINGS_1991, GOVERNOR, GUIOMARD, IBGE, MESA, PLACIDO, SEFAZ, TRE,
    close_obligations_1993, install_1993, instruct_and_vote_1992, record_figure_1991, voters_creation,
)
from domain.names import ToponymList, date_in_name
from domain.parameters import shipped_statute
from domain.rules import Judgement, judge_figures

NOW = datetime(2026, 11, 30, 12, tzinfo=timezone.utc)
#: Settings giving an application the library's own JSON transcoder (tramita's transcodings still registered), so
#: that it reads stored events as the bare library does: the baselines that read what tramita stored use them,
#: since tramita's own transcoder reads faster than the library's (domain/application/transcoder.py).
LIBRARY_DECODING = {"TRANSCODER_TOPIC": "eventsourcing.persistence:JSONTranscoder"}
SEED_ACTOR = Actor("ibge-bench", "ibge")
SEED_DAY = date(1991, 12, 18)
LAW_DAY = date(1992, 1, 21)
#: The registry's figures that are whole counts (the others, revenue and area, are decimals).
COUNTED_FIGURES = ("population", "voters", "buildings")
#: The State's tax revenue the demo's Art. 4-III finding gives (Art. 5 judges each origin's revenue against it).
STATE_TAX_REVENUE = next(tax for _, item, _, _, tax in FINDINGS_1991 if item == "art-4-III")

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


def spread(values: list[float], scale: float = 1.0, digits: int = 2) -> str:
    """`min-median-max` of the values (times `scale`), as the benches print a repeated measurement."""
    low, middle, high = (scale * v for v in (min(values), statistics.median(values), max(values)))
    return f"{low:.{digits}f}-{middle:.{digits}f}-{high:.{digits}f}"


@dataclass
class Run:
    """One timed part: how many acts (saves) and events, how long it took and the CPU time its process spent."""

    acts: int
    events: int
    seconds: float
    cpu: float = 0.0

    def per_second(self, count: int) -> float:
        return count / self.seconds if self.seconds else math.inf

    @staticmethod
    def total(runs: list[Run]) -> Run:
        """The runs' acts, events, seconds and CPU seconds summed."""
        return Run(sum(run.acts for run in runs), sum(run.events for run in runs), sum(run.seconds for run in runs),
                   sum(run.cpu for run in runs))


class ActCounter:
    """Wraps the application so that every call to one of its act methods counts as an act (reads do not)."""

    READS = frozenset({"get_case", "ask_case", "context"})

    def __init__(self, app: Tramita) -> None:
        self.app, self.acts = app, 0

    def __getattr__(self, name: str) -> Callable[..., Any]:
        """The application's method, counting its calls unless it is a read; kept, so that each name is looked up
        and wrapped once (the wrapping is the bench's, not tramita's, work)."""
        method = getattr(self.app, name)

        def act(*args: Any, **kwargs: Any) -> Any:
            self.acts += 1
            return method(*args, **kwargs)

        kept = method if name in self.READS else act
        setattr(self, name, kept)
        return kept


# ---------------------------------------------------------------------------------------------- tramita


def store_url(store: str, folder: str, name: str) -> str:
    return "memory://" if store == "memory" else f"sqlite:///{folder}/{name}.sqlite"


class Stores:
    """Fresh stores of one kind: the memory store, SQLite files in a folder, or new databases on a throwaway
    PostgreSQL cluster (tests/pgcluster.py, started as the tests start one)."""

    def __init__(self, kind: str, folder: str, cluster: Any = None) -> None:
        self.kind, self.folder, self.cluster = kind, folder, cluster

    def url(self, name: str) -> str:
        """A fresh store's URL (`name` names the SQLite file)."""
        if self.kind == "postgres":
            return self.cluster.url(self.cluster.create_database(), pool_size=2)
        return store_url(self.kind, self.folder, name)


def build_tramita(database_url: str) -> tuple[Tramita, list[str]]:
    """The application with the registry seeded and the demo's 1991 figures recorded (untimed); the codes seeded."""
    app = Tramita(persistence_env(database_url), clock=lambda: NOW)
    seeded = app.seed_registry(SEED_ACTOR, SEED_DAY)
    for code, figures in FIGURES_1991.items():
        for figure, value in figures.items():
            record_figure_1991(app, code, figure, value)
    ToponymList.shipped()  # the shipped IBGE list is loaded once per process, not per act
    app.calendar.holiday_name(SEED_DAY)  # so is the holidays library's table of countries (about 50 ms)
    return app, seeded


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
        """Restate, at its 1991 value, each figure the next law could not take from (it would go negative) or
        whose remainder the law would judge short of Art. 4 under Art. 5 (the law judges it on its day)."""
        for code, figures in self.left.items():
            remainder = {figure: left - self.taken[code][figure] for figure, left in figures.items()}
            counts = {figure: int(value) for figure, value in remainder.items() if figure in COUNTED_FIGURES}
            verdicts = judge_figures(shipped_statute(), LAW_DAY, {**remainder, **counts}, Decimal(STATE_TAX_REVENUE),
                                     Judgement(True), "")
            if all(verdicts.values()) and all(left >= self.taken[code][f] for f, left in figures.items()):
                continue
            for figure, left in figures.items():  # all of them: a share (voters of the population) weighs two
                if left < Decimal(str(FIGURES_1991[code][figure])):
                    record_figure_1991(app, code, figure, FIGURES_1991[code][figure], LAW_DAY, LAW_DAY)
                    figures[figure] = Decimal(str(FIGURES_1991[code][figure]))

    def law_enacted(self) -> None:
        for code, figures in self.left.items():
            for figure in figures:
                figures[figure] -= self.taken[code][figure]


def vote_and_enact(app: Any, case: str, n: int, origins: OriginFigures) -> None:
    """The demo's instruction and vote, then the creation law of case n (restating a figure that runs low)."""
    instruct_and_vote_1992(app, case)
    origins.restate_if_low(app)
    app.enact_law(case, GOVERNOR, LAW_DAY, law=f"Lei {n}/1992", name=bench_name(n), seat_origin=PLACIDO,
                  limits="descritos no anexo I", comarca="Plácido de Castro",
                  districts=[f"{bench_name(n)} (sede)"], living_person_declaration=True)
    origins.law_enacted()


def record_creation_cases(app: Any, numbers: range, origins: OriginFigures) -> None:
    """Creation cases from petition to conclusion, with the demo's acts, dates and bodies, interleaved: every
    case's petition (with its findings), then every case's vote and law, installation, closing acts in turn."""
    opened = [(n, open_petition(app, n)) for n in numbers]
    for n, case in opened:
        vote_and_enact(app, case, n, origins)
    for _, case in opened:
        install_1993(app, case)
    for _, case in opened:
        close_obligations_1993(app, case)


def open_petition(app: Any, n: int) -> str:
    areas = [{"municipality": code, "area_km2": km2, "description": f"Área {n} de {code}"}
             for code, km2 in AREAS_KM2.items()]
    return app.open_case(GOVERNOR, date(1991, 12, 19), kind="creation", municipalities=[PLACIDO, GUIOMARD],
                         areas=areas, proposed_name=bench_name(n), documents=ART_9_DOCUMENTS).number


def notifications(app: Application) -> int:
    return app.recorder.max_notification_id() or 0


class TramitaSide:
    """The tramita side: one application on its own store, recording creation cases in chunks."""

    def __init__(self, database_url: str) -> None:
        app, _ = build_tramita(database_url)
        self.app, self.counter, self.origins, self.cases = app, ActCounter(app), OriginFigures(), 0
        self.tree = audit_log_of(app, database_url)

    def record(self, cases: int) -> Run:
        """Record the next `cases` creation cases; the acts, the events stored and the seconds. First (untimed) the
        audit log's tree takes in the events of the rounds before, as the projector does in a deployment."""
        if self.tree is not None:
            self.tree.catch_up()
        acts, first = self.counter.acts, notifications(self.app)
        start, cpu = time.perf_counter(), time.process_time()
        record_creation_cases(self.counter, range(self.cases + 1, self.cases + cases + 1), self.origins)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        self.cases += cases
        return Run(self.counter.acts - acts, notifications(self.app) - first, seconds, cpu)


def audit_log_of(app: Tramita, database_url: str) -> Any:
    """On SQLite and PostgreSQL, as a deployment runs: the audit log's tables made and its tree holding every event
    so far, and each act checking the aggregates it reads against the tree's leaves (tramita/bootstrap.py
    `build_audit`); None in memory, where there is no log (the acts check their hash chains only)."""
    if database_url.startswith("memory"):
        return None
    from audit.log import AuditLog
    from audit.logged import LoggedHashes
    from infrastructure.store import open_store

    store = open_store(database_url)
    tree = AuditLog(app, store)
    tree.migrate()
    tree.catch_up()
    app.check_against(LoggedHashes(store, app.recorder))
    return tree


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


class RawSide:
    """The raw library's side: a plain application on its own store, saving Dockets in chunks.

    `read_first`: each save but an aggregate's first is preceded by `repository.get` of its aggregate, with the
    library's aggregate cache on (`AGGREGATE_CACHE_MAXSIZE`: the cached aggregate brought up to date from the
    store, one read, and copied), as a command of an application run by several processes must read what it
    changes; printed for information."""

    ACTOR = {"principal": "governor-bench", "role": "governor", "municipality": None}
    DIGEST = "0123456789abcdef" * 4

    def __init__(self, database_url: str, read_first: bool = False) -> None:
        env = persistence_env(database_url)
        if read_first:
            env["AGGREGATE_CACHE_MAXSIZE"] = "10000"
        self.app, self.saves, self.read_first = RawApplication(env), 0, read_first

    def record(self, saves: int, events: int, aggregates: int) -> Run:
        """`saves` saves storing `events` events in all, over `aggregates` new aggregates (one per case)."""
        app, sizes = self.app, save_sizes(saves, events)
        first = notifications(app)
        start, cpu = time.perf_counter(), time.process_time()
        dockets: list[Docket] = []
        for i, size in enumerate(sizes):
            day = date.fromordinal(date(1991, 12, 19).toordinal() + (self.saves + i) % 500).isoformat()
            if i < aggregates:  # each aggregate's first save opens it; then the saves go to them in turn
                dockets.append(Docket(day, self.ACTOR, self.DIGEST))
                size -= 1
            elif self.read_first:
                dockets[i % aggregates] = app.repository.get(dockets[i % aggregates].id)
            docket = dockets[i % aggregates]
            for _ in range(size):
                docket.note(day, self.ACTOR, self.DIGEST)
            app.save(docket)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        self.saves += saves
        return Run(saves, notifications(app) - first, seconds, cpu)


# ---------------------------------------------------------------------------------------------- both sides


def make_side(side: str, database_url: str) -> TramitaSide | RawSide:
    """The side named ("tramita", "raw" or "raw-read") on its store, built."""
    return TramitaSide(database_url) if side == "tramita" else RawSide(database_url, read_first=side == "raw-read")


def serve(side: str, database_url: str, connection: Connection) -> None:
    """A side's process: build the side (untimed), then record each chunk it is sent until it is sent None."""
    recorder = make_side(side, database_url)
    connection.send("ready")
    while (chunk := connection.recv()) is not None:
        connection.send(recorder.record(*chunk))


class Side:
    """A side running in its own process (so neither side's objects weigh on the other's memory and garbage
    collector), recording the chunks it is sent."""

    def __init__(self, side: str, database_url: str) -> None:
        context = multiprocessing.get_context("spawn")
        self.connection, theirs = context.Pipe()
        self.process = context.Process(target=serve, args=(side, database_url, theirs), daemon=True)
        self.process.start()
        if self.connection.recv() != "ready":
            raise RuntimeError(f"the {side} side did not start")

    def record(self, *chunk: int) -> Run:
        self.connection.send(chunk)
        return self.connection.recv()

    def close(self) -> None:
        """Let the process end (one that has already stopped, on an error it printed, is only waited for)."""
        try:
            self.connection.send(None)
        except OSError:
            pass  # its end of the pipe closed with it
        self.process.join()


def chunks(total: int, rounds: int) -> list[int]:
    """`total` cases split into `rounds` chunks as even as possible."""
    return [n for n in save_sizes(rounds, total) if n]


def compare(stores: Stores, cases: int, rounds: int) -> tuple[Run, Run, Run]:
    """The sides, each in its own process on its own store, in rounds: tramita records a chunk of the cases, then
    the raw library saves as many events in as many saves as that chunk took, then does so again reading each
    aggregate before its save (for information); the totals of each side."""
    tramita, raw = Side("tramita", stores.url("bench")), Side("raw", stores.url("raw"))
    reading = Side("raw-read", stores.url("rawread"))
    ours: list[Run] = []
    theirs: list[Run] = []
    read_first: list[Run] = []
    try:
        for chunk in chunks(cases, rounds):
            ours.append(tramita.record(chunk))
            theirs.append(raw.record(ours[-1].acts, ours[-1].events, chunk))
            read_first.append(reading.record(ours[-1].acts, ours[-1].events, chunk))
    finally:
        tramita.close()
        raw.close()
        reading.close()
    return Run.total(ours), Run.total(theirs), Run.total(read_first)


# ---------------------------------------------------------------------------------------------- instructions

#: Cases (or their saves) recorded before the counted ones, so that the set-up and the first acts' one-off costs
#: are in both counts and cancel out.
INSTRUCTIONS_BEFORE = 10
_COLLECTED = re.compile(r"^==\d+== Collected : (\d+)$", re.MULTILINE)


def count_side(side: str, database_url: str, numbers: list[int]) -> None:
    """A counted side's process (run under callgrind): build the side, record (tramita: `cases`; raw: `saves
    events aggregates`), print what it stored as `<acts or saves> <events>`."""
    run = make_side(side, database_url).record(*numbers)
    print(run.acts, run.events)


def callgrind_runs(store: str, folder: str, side: str, records: list[list[int]]) -> list[tuple[int, int, int]]:
    """Each record (the arguments of the side's `record`) made by a fresh process of `side` under `valgrind
    --tool=callgrind` (all at once, each on a store of its own); per record the instructions the whole process
    executed, and its acts (saves) and events."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # the same dict and set orders in every run
    processes = []
    for n, numbers in enumerate(records):
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/callgrind.{side}.{n}",
                   sys.executable, __file__, "--count-side", side, "--store", store, "--count-store",
                   store_url(store, folder, f"{side}-counted-{n}"), *map(str, numbers)]
        processes.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                          env=env))
    results = []
    for process in processes:
        out, err = process.communicate()
        collected = _COLLECTED.search(err)
        if process.returncode != 0 or collected is None:
            raise RuntimeError(f"the counted {side} run failed ({process.returncode}):\n{err[-2000:]}")
        acts, events = map(int, out.split())
        results.append((int(collected.group(1)), acts, events))
    return results


def instructions(store: str, folder: str, cases: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Instructions, acts and events of `cases` creation cases recorded after INSTRUCTIONS_BEFORE, and of the raw
    library saving as many events in as many saves: each side counted twice, over the first cases and over the
    first cases plus the counted ones, the difference taken."""
    counted = callgrind_runs(store, folder, "tramita", [[INSTRUCTIONS_BEFORE], [INSTRUCTIONS_BEFORE + cases]])
    raw = callgrind_runs(store, folder, "raw", [[acts, events, INSTRUCTIONS_BEFORE + n * cases]
                                                for n, (_, acts, events) in enumerate(counted)])
    if [run[1:] for run in raw] != [run[1:] for run in counted]:
        raise RuntimeError(f"the raw library stored {raw} where tramita stored {counted}")
    ours, theirs = (tuple(b - a for a, b in zip(*runs, strict=True)) for runs in (counted, raw))
    return ours, theirs


def print_instructions(store: str, cases: int, ours: tuple[int, int, int], theirs: tuple[int, int, int]) -> None:
    (instructions_ours, acts, events), (instructions_theirs, _, _) = ours, theirs
    print(f"store: {store}, instructions executed over creation cases {INSTRUCTIONS_BEFORE + 1}-"
          f"{INSTRUCTIONS_BEFORE + cases} (callgrind, each side's process counted after {INSTRUCTIONS_BEFORE} "
          "cases and after all, the difference taken)")
    print(f"tramita: {acts} acts, {events} events, {instructions_ours / acts:,.0f} instructions per act")
    print(f"raw library: {acts} saves, {events} events, {instructions_theirs / acts:,.0f} instructions per save")
    print("instructions ratio goal: >= 0.5")
    print(f"instructions ratio: {instructions_theirs / instructions_ours:.4f}")


# ---------------------------------------------------------------------------------------------- growth lines

GROWTH_GOAL = "<= 1.2"
SHORT_CASE, EARLY_CASE, SIBLINGS = 30, 20, 12
#: Art. 10 in turn: the body requisitioned, its actor, the Art. 4 item it answers with, its value, the State tax.
CYCLE = ((IBGE, "art-4-I", 3100, None), (TRE, "art-4-II", 1800, None),
         (SEFAZ, "art-4-III", "600000.00", "210000000.00"), (IBGE, "art-4-IV", 140, None))


class GrowingCase:
    """A voters' creation grown by Art. 10 cycles: the Mesa's requisition, its receipt by the body the next day,
    the body's finding 5 days later (every sixth one 40 days later, past the 30-day deadline)."""

    def __init__(self, app: Tramita, code: str, n: int, opened_on: date) -> None:
        self.app, self.day, self.cycles = app, opened_on, 0
        self.number = voters_creation(app, opened_on, code, f"Vila Longa {n}", area_km2="10", voters=32,
                                      first_title=40000000 + n * 1000, zone="5")

    def cycle(self) -> float:
        """Record one cycle (three acts); the CPU seconds it took."""
        actor, item, value, tax = CYCLE[self.cycles % len(CYCLE)]
        issued_on, self.day = self.day, self.day + timedelta(days=40 if self.cycles % 6 == 5 else 5)
        self.cycles += 1
        start = time.process_time()
        requisition = self.app.issue_requisition(self.number, MESA, issued_on, body=actor.role,
                                                 items=["art-4"]).result
        self.app.receive_requisition(self.number, actor, issued_on + timedelta(days=1), requisition=requisition)
        self.app.record_finding(self.number, actor, self.day, item=item, value=value, state_tax_revenue=tax,
                                document=f"Ofício {actor.role.upper()} {self.cycles}")
        return time.process_time() - start

    def length(self) -> int:
        return self.app.get_case(self.number).version


def alternately(first: Callable[[], float], second: Callable[[], float],
                samples: int) -> tuple[list[float], list[float]]:
    """`samples` timings of each, taken in turn (first then second, then second then first), so that a slower
    spell of the machine falls on both sides alike rather than on the one measured in it."""
    timed: tuple[list[float], list[float]] = ([], [])
    for k in range(samples):
        pair = ((first, timed[0]), (second, timed[1]))
        for measure, times in pair if k % 2 == 0 else pair[::-1]:
            times.append(measure())
    return timed


def growth_case_length(short_url: str, long_url: str, long: int, short: int, samples: int,
                       siblings: int) -> tuple[float, float, ColdCase]:
    """Median seconds of one Art. 10 cycle (3 acts) on cases of about `short` events, then on one case grown to
    about `long` events, every cycle of it followed by one on a sibling case (so the log interleaves them). Each
    length has its own store, grown untimed; the two are then timed alternately. With them, where the long case
    stands at the end (for the cold line, which reads copies of its store)."""

    def grown_together(database_url: str) -> list[GrowingCase]:
        app, seeded = build_tramita(database_url)
        codes = [code for code in seeded if code not in FIGURES_1991]
        cases = [GrowingCase(app, codes[n % len(codes)], n, date(2014, 1, 2)) for n in range(siblings + 1)]
        while cases[0].length() < short:
            for case in cases:
                case.cycle()
        return cases

    short_cases, (target, *others) = grown_together(short_url), grown_together(long_url)
    turns = itertools.count()
    while target.length() < long:
        target.cycle()
        others[next(turns) % len(others)].cycle()
    shorts = itertools.cycle(short_cases)

    def on_long() -> float:
        seconds = target.cycle()
        others[next(turns) % len(others)].cycle()
        return seconds

    at_short, at_long = alternately(lambda: next(shorts).cycle(), on_long, samples)
    sibling = others[0]
    cold = ColdCase(str(target.app.resolve_case(target.number)), target.number, target.day, sibling.number,
                    sibling.day, target.length())
    return statistics.median(at_short) / 3, statistics.median(at_long) / 3, cold


# ---------------------------------------------------------------------------------------------- the cold line


@dataclass(frozen=True)
class ColdCase:
    """The long case of the case-length line as its store holds it at the end: its id, number, the day its next
    act may bear and its events; and a sibling case (another case of the store) with its next day."""

    case_id: str
    number: str
    day: date
    sibling: str
    sibling_day: date
    events: int


def open_deployed(database_url: str) -> Tramita:
    """A `Tramita` on an existing store as a deployment's process opens it (the audit log's tree caught up, every
    act checking what it reads against it), with what a process loads once (the names, the calendars) loaded."""
    app = Tramita(persistence_env(database_url), clock=lambda: NOW)
    ToponymList.shipped()
    app.calendar.holiday_name(SEED_DAY)
    audit_log_of(app, database_url)
    return app


def requisition(app: Tramita, number: str, day: date) -> None:
    """One act: the Mesa requisitions the IBGE's Art. 4 figures on the case."""
    app.issue_requisition(number, MESA, day, body=IBGE.role, items=["art-4"])


def clocked(work: Callable[[], Any]) -> tuple[float, float]:
    """The CPU and wall seconds `work` took."""
    start, cpu = time.perf_counter(), time.process_time()
    work()
    return time.process_time() - cpu, time.perf_counter() - start


def cold_act(database_url: str, case: ColdCase) -> tuple[float, float]:
    """In a fresh process, nothing of the long case in memory: the CPU and wall seconds of the first act on it.
    An act on the sibling first (untimed) loads what a process loads once for any case (topics, the registry)."""
    app = open_deployed(database_url)
    requisition(app, case.sibling, case.sibling_day)
    return clocked(lambda: requisition(app, case.number, case.day))


def raw_get_and_warm_act(database_url: str, case: ColdCase) -> tuple[float, float]:
    """In a fresh process made ready as `cold_act`'s: the library's `repository.get` of the long case (an
    application on the same store without the aggregate cache, decoding with the same transcoder), plus an act
    on the case once it is held in memory (a first act untimed, then one timed): the CPU and wall seconds."""
    app = open_deployed(database_url)
    requisition(app, case.sibling, case.sibling_day)
    raw = Tramita({**persistence_env(database_url), "AGGREGATE_CACHE_MAXSIZE": ""}, clock=lambda: NOW)
    get = clocked(lambda: raw.repository.get(UUID(case.case_id)))
    requisition(app, case.number, case.day)
    act = clocked(lambda: requisition(app, case.number, case.day))
    return get[0] + act[0], get[1] + act[1]


def copy_sqlite(source: str, target: str) -> None:
    """A copy of a SQLite store through SQLite's backup API (consistent while the source is open)."""
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


def growth_cold(long_url: str, case: ColdCase, samples: int) -> tuple[list[tuple[float, float]],
                                                                        list[tuple[float, float]]]:
    """`samples` rounds of the cold first act and of the raw get plus a warm act, each in a fresh process on its
    own fresh copy of the long store, the first of a round taking turns."""
    source = long_url.removeprefix("sqlite:///")
    context = multiprocessing.get_context("spawn")

    def in_fresh_process(measure: Callable[[str, ColdCase], tuple[float, float]]) -> Callable[[], Any]:
        def run() -> tuple[float, float]:
            target = f"{source}.cold.sqlite"
            copy_sqlite(source, target)
            try:
                with ProcessPoolExecutor(max_workers=1, mp_context=context) as process:
                    return process.submit(measure, f"sqlite:///{target}", case).result()
            finally:
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{target}{suffix}").unlink(missing_ok=True)
        return run

    return alternately(in_fresh_process(cold_act), in_fresh_process(raw_get_and_warm_act), samples)


def print_cold(long: int, case: ColdCase, cold: list[tuple[float, float]],
               baseline: list[tuple[float, float]]) -> None:
    cpu = [c for c, _ in cold], [c for c, _ in baseline]
    print(f"first act on a {case.events}-event case in a fresh process: CPU {spread(cpu[0], 1000)} ms, wall "
          f"{spread([w for _, w in cold], 1000)} ms; the raw library's repository.get of it plus a warm act: CPU "
          f"{spread(cpu[1], 1000)} ms, wall {spread([w for _, w in baseline], 1000)} ms (min-median-max of "
          f"{len(cold)} rounds, each side in a fresh process on a fresh copy)")
    print(f"growth cold-{long} goal: {GROWTH_GOAL}")
    print(f"growth cold-{long}: {statistics.median(cpu[0]) / statistics.median(cpu[1]):.4f}")


class MunicipalitySeries:
    """Governor's creation petitions all opened on Plácido de Castro and Senador Guiomard, on one store: each
    followed by three Art. 4 findings; every tenth case goes on to its law (the origins' figures move and their
    freezes lift), the others are archived by the Mesa (their freezes lift)."""

    def __init__(self, database_url: str) -> None:
        (self.app, _), self.origins, self.cases = build_tramita(database_url), OriginFigures(), 0

    def next_case(self) -> float:
        """Record the next case of the series; the CPU seconds per act of its opening and three findings."""
        app, n = self.app, self.cases + 1
        start = time.process_time()
        case = open_petition(app, n)
        for actor, item, value, by_origin, tax in FINDINGS_1991[:3]:
            app.record_finding(case, actor, date(1991, 12, 20), item=item, value=value, by_origin=by_origin,
                               state_tax_revenue=tax, document=f"Laudo {item} 1991")
        seconds = (time.process_time() - start) / 4
        self.cases = n
        if n % 10:
            app.archive_case(case, MESA, date(1991, 12, 21), reason="Desistência dos autores")
        else:
            vote_and_enact(app, case, n, self.origins)
        return seconds


def growth_municipality(early_url: str, late_url: str, early: int, late: int, window: int) -> tuple[float, float]:
    """Median seconds per act of the opening and first three findings of cases `early`.. and `late`.. (`window`
    each) of a municipality series, each on its own store grown untimed to the case before, then timed
    alternately."""
    at_early, at_late = MunicipalitySeries(early_url), MunicipalitySeries(late_url)
    for series, before in ((at_early, early - 1), (at_late, late - 1)):
        while series.cases < before:
            series.next_case()
    early_times, late_times = alternately(at_early.next_case, at_late.next_case, window)
    return statistics.median(early_times), statistics.median(late_times)


def print_growth(name: str, first: float, then: float, what: str) -> None:
    print(f"{what}: {first * 1000:.2f} ms, then {then * 1000:.2f} ms of CPU per act (medians)")
    print(f"growth {name} goal: {GROWTH_GOAL}")
    print(f"growth {name}: {then / first:.4f}")


# ---------------------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200, help="creation cases to record (default 200)")
    parser.add_argument("--store", choices=("sqlite", "postgres", "memory"), default="sqlite",
                        help="event store (default sqlite; postgres: a throwaway cluster; memory: for information)")
    parser.add_argument("--long-case", type=int, default=1000, metavar="EVENTS",
                        help="events the long case grows to (default 1000; its short length is 30)")
    parser.add_argument("--municipality-cases", type=int, default=400, metavar="N",
                        help="the later case of the municipality series (default 400; the earlier is the 20th)")
    parser.add_argument("--samples", type=int, default=20, help="timed samples of each growth length (default 20)")
    parser.add_argument("--rounds", type=int, default=10,
                        help="rounds the cases are recorded in, alternating the two sides (default 10)")
    parser.add_argument("--cold-samples", type=int, default=10,
                        help="rounds of the cold line, each side in a fresh process (default 10)")
    parser.add_argument("--no-growth", action="store_true", help="skip the growth lines (measured on SQLite only)")
    parser.add_argument("--instructions", type=int, nargs="?", const=20, metavar="CASES",
                        help="instead of timing, count with valgrind's callgrind the instructions both sides execute "
                             f"over CASES creation cases (default 20) after the first {INSTRUCTIONS_BEFORE}")
    parser.add_argument("--count-side", choices=("tramita", "raw"), help=argparse.SUPPRESS)
    parser.add_argument("--count-store", help=argparse.SUPPRESS)
    parser.add_argument("numbers", nargs="*", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.numbers and args.count_side is None:
        parser.error(f"unexpected arguments: {' '.join(map(str, args.numbers))}")
    if args.instructions is not None and (args.instructions < 1 or shutil.which("valgrind") is None):
        parser.error("--instructions counts at least 1 case, with valgrind (the Debian package valgrind)")
    if args.cases < 1 or args.rounds < 1 or args.cold_samples < 1:
        parser.error("--cases, --rounds and --cold-samples must be at least 1")
    if args.instructions is not None and args.store == "postgres":
        parser.error("--instructions counts on the memory or SQLite store (a server's work is not in the count)")
    if args.long_case <= SHORT_CASE or args.municipality_cases <= EARLY_CASE or args.samples < 1:
        parser.error(f"--long-case must be over {SHORT_CASE}, --municipality-cases over {EARLY_CASE}, "
                     "--samples at least 1")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.count_side is not None:
        count_side(args.count_side, args.count_store, args.numbers)
        return
    if args.instructions is not None:
        with tempfile.TemporaryDirectory(prefix="tramita-bench-") as folder:
            print_instructions(args.store, args.instructions, *instructions(args.store, folder, args.instructions))
        return
    cluster = None
    if args.store == "postgres":
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from tests.pgcluster import NoServerBinaries, start_cluster

        try:
            cluster = start_cluster()
        except NoServerBinaries as missing:
            print(f"store: postgres skipped: {missing}")
            return
    growth = args.store == "sqlite" and not args.no_growth
    try:
        with tempfile.TemporaryDirectory(prefix="tramita-bench-") as folder:
            stores = Stores(args.store, folder, cluster)
            tramita, raw, read_first = compare(stores, args.cases, args.rounds)
            if growth:
                *length, cold_case = growth_case_length(stores.url("short"), stores.url("long"), args.long_case,
                                                        SHORT_CASE, args.samples, SIBLINGS)
                cold = growth_cold(stores.url("long"), cold_case, args.cold_samples)
                series = growth_municipality(stores.url("early"), stores.url("late"), EARLY_CASE,
                                             args.municipality_cases, args.samples // 2 or 1)
    finally:
        if cluster is not None:
            cluster.stop()
    tramita_rate, raw_rate = tramita.per_second(tramita.events), raw.per_second(raw.events)
    server = f" ({cluster.version}, a throwaway cluster, fsync off)" if cluster is not None else ""
    print(f"store: {args.store}{server}, creation cases: {args.cases}, in {min(args.rounds, args.cases)} rounds "
          "alternating the two sides, each in its own process")
    print(f"tramita: {tramita.acts} acts, {tramita.events} events in {tramita.seconds:.3f} s "
          f"({tramita.events / tramita.acts:.2f} events per act)")
    print(f"tramita acts/s: {tramita.per_second(tramita.acts):.1f}")
    print(f"tramita events/s: {tramita_rate:.1f}")
    print(f"tramita CPU per act: {tramita.cpu / tramita.acts * 1e6:.1f} µs")
    print(f"raw library: {raw.acts} saves, {raw.events} events in {raw.seconds:.3f} s")
    print(f"raw library events/s: {raw_rate:.1f}")
    print(f"raw library CPU per save: {raw.cpu / raw.acts * 1e6:.1f} µs")
    print(f"ratio of the CPU times (for information): {raw.cpu / raw.events / (tramita.cpu / tramita.events):.4f}")
    read_rate = read_first.per_second(read_first.events)
    print(f"raw library reading each aggregate before its save (its aggregate cache, brought up to date from the "
          f"store): {read_first.acts} saves in {read_first.seconds:.3f} s, CPU per save "
          f"{read_first.cpu / read_first.acts * 1e6:.1f} µs")
    print(f"ratio of the raw read-then-save to the raw save (for information: what the goal leaves an act that "
          f"reads what it changes): {read_rate / raw_rate:.4f}")
    print(f"ratio against the raw read-then-save (for information): {tramita_rate / read_rate:.4f}")
    if growth:
        print_growth(f"case-length-{args.long_case}-vs-{SHORT_CASE}", *length,
                     f"Art. 10 cycles on cases of {SHORT_CASE} events, then on one of {args.long_case}")
        print_growth(f"municipality-case-{args.municipality_cases}-vs-{EARLY_CASE}", *series,
                     f"opening and first findings of cases {EARLY_CASE}.., then {args.municipality_cases}.. "
                     "on one municipality")
        print_cold(args.long_case, cold_case, *cold)
    if args.store == "memory":
        print("ratio goal: none (no one runs the memory store; printed for information)")
    else:
        print("ratio goal: >= 0.5")
    print(f"ratio: {tramita_rate / raw_rate:.4f}")


if __name__ == "__main__":
    main()
