"""Benchmark: the case file page (`GET /processos/<número>`) of a 200-act case, against the JSON timeline of the
same case (`GET /cases/{id}/events`), both read by one signed-in session through the Flask app in-process.

Usage: python bench/pages.py [--acts A] [--others K] [--repeat R]

What is measured
----------------
0. Set-up (untimed). A fresh SQLite file in a temporary folder; a `Tramita` application whose events are signed
   (a key made for the run), with a fixed clock (2026-11-30 12:00 UTC), the registry seeded, the read models and
   the audit tree migrated. 1 + K voters' creation cases (default K = 12) are grown together, round-robin, by
   `bench/record_acts.py`'s Art. 10 cycle (the Mesa's requisition, its receipt the next day, which opens the
   body's 30-day deadline, and the body's finding 5 days later, every sixth one 40 days later, past the
   deadline), so the log interleaves the cases, until the first case holds A acts (default 200; its events also
   count the deadlines opened and met). Each case then has one more requisition received and never answered: a
   deadline open and overdue on the clock's day. The projector catches up, a checkpoint is signed over the whole
   log, and an auditor's token signs in to the pages (`POST /sessao`): every request below carries that session's
   cookie and no `Authorization` header.

1. The JSON timeline (the baseline): `GET /cases/{number}/events`, the read the page's timeline is made of.

2. The case file page: `GET /processos/{number}`, what a reader opens: the case, its timeline, its deadlines
   on their axis, its Art. 38 freezes, its next acts, the audit's verdict on the case and the latest signed
   checkpoint, laid out as HTML (api/pages/casefile.py gathers the reads, api/templates/case.html lays them out).

Each is timed R times (default 20), alternating the two within each round, the first of a round taking turns;
the median CPU times (`time.process_time`: the machine's other work moves wall times by several times) and wall
times (`time.perf_counter`) are printed, then the page's parts timed on their own once each (the case, the
timeline, the verdict, the rest of the gathering, the template), the ratio of the wall medians, and last
`ratio: <page median CPU ÷ events median CPU>` (goal <= 3: the issue asks that a 200-act case's file render in
under three times its JSON timeline).
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from record_acts import GrowingCase

from tramita.web import create_app
from audit.notes import Signer
from domain.acts import Actor
from domain.application import Tramita
from domain.demo import MESA, SEFAZ
from projections.projector import Projector
from infrastructure.store import open_store
from infrastructure.persistence import persistence_env

NOW = datetime(2026, 11, 30, 12, tzinfo=timezone.utc)
SEED_ACTOR, SEED_DAY = Actor("ibge-bench", "ibge"), date(1991, 12, 18)
OPENED_ON = date(2014, 1, 2)
ADMIN = Actor("bench-admin@cli", "token-administrator")
#: Events of the timeline that are not acts (the deadlines' own, a case's conclusion, an act's attachments).
NOT_ACTS = ("Case.DeadlineOpened", "Case.DeadlineMet", "Case.DeadlineMissed", "Case.DeadlineDueDateSet",
            "Case.CaseConcluded", "Case.RequirementsLapsed", "Case.DocumentsAttached")


def acts_of(app: Tramita, number: str) -> int:
    return sum(1 for row in app.timeline(number) if row["type"] not in NOT_ACTS)


class Clock:
    """The application's clock, moved by the set-up so that acts are recorded soon after their legal dates."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now

    def on(self, day: date) -> None:
        self.now = datetime(day.year, day.month, day.day, 18, tzinfo=timezone.utc)


def grow(app: Tramita, clock: Clock, acts: int, others: int) -> list[GrowingCase]:
    """The case of `acts` acts, grown round-robin with `others` cases, each left with an overdue deadline; each
    cycle is recorded on the day after its finding (so one cycle in six, whose finding comes 40 days after the
    requisition, has its requisition and receipt marked recorded late: past the pages' 30 days), and the clock is
    NOW when they are done."""
    clock.on(OPENED_ON)
    codes = app.seed_registry(SEED_ACTOR, SEED_DAY)
    cases = [GrowingCase(app, codes[n % len(codes)], n, OPENED_ON) for n in range(others + 1)]
    while acts_of(app, cases[0].number) < acts - 2:  # the unanswered requisition below adds two
        clock.on(cases[0].day + timedelta(days=41 if cases[0].cycles % 6 == 5 else 6))  # the finding's day + 1
        for case in cases:
            case.cycle()
    clock.on(cases[0].day + timedelta(days=1))
    for case in cases:  # requisitioned and received, never answered: its 30-day deadline is overdue on NOW
        requisition = app.issue_requisition(case.number, MESA, case.day, body="sefaz", items=["art-4"]).result
        app.receive_requisition(case.number, SEFAZ, case.day + timedelta(days=1), requisition=requisition)
    clock.now = NOW
    return cases


def medians(reads: dict[str, Callable[[], object]], repeat: int) -> dict[str, tuple[float, float]]:
    """Each read's median CPU and wall seconds over `repeat` rounds, the reads alternating within each round and
    the first of a round taking turns."""
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in reads}
    names = list(reads)
    for n in range(repeat):
        for name in names if n % 2 == 0 else names[::-1]:
            start, cpu = time.perf_counter(), time.process_time()
            reads[name]()
            times[name][0].append(time.process_time() - cpu)
            times[name][1].append(time.perf_counter() - start)
    return {name: (statistics.median(cpu), statistics.median(wall)) for name, (cpu, wall) in times.items()}


def once(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--acts", type=int, default=200, help="acts of the case read (default 200)")
    parser.add_argument("--others", type=int, default=12, help="other cases interleaved with it (default 12)")
    parser.add_argument("--repeat", type=int, default=20, help="timed requests of each kind (default 20)")
    args = parser.parse_args(argv)
    if args.acts < 10 or args.others < 0 or args.repeat < 1:
        parser.error("--acts must be at least 10, --others at least 0, --repeat at least 1")
    return args


def sign_in(client, token: str) -> None:  # noqa: ANN001
    csrf = re.search(rb'name="csrf" value="([^"]+)"', client.get("/").data).group(1).decode()
    answer = client.post("/sessao", data={"csrf": csrf, "token": token, "proximo": "/processos"})
    assert answer.status_code == 303, answer.get_data(as_text=True)[:300]


def parts(flask, number: str) -> dict[str, float]:  # noqa: ANN001
    """The page's costs, each once, inside a request of the signed-in reader (as the page makes them)."""
    from flask import render_template

    from api.pages.casefile import case_file
    from domain.acts import Actor as Reader

    app, audit = flask.extensions["tramita"], flask.extensions["tramita.audit"]
    reader = Reader("bench-auditor", "auditor")
    with flask.test_request_context(f"/processos/{number}"):
        found: dict[str, object] = {}
        costs = {"case (GET /cases/{id})": once(lambda: app.case_view(number)),
                 "timeline (GET /cases/{id}/events)": once(lambda: app.timeline(number)),
                 "verdict (GET /cases/{id}/verify)": once(lambda: audit.verify_case(number)),
                 "the whole gathering (casefile.case_file)": once(
                     lambda: found.setdefault("file", case_file(number, reader)))}
        costs["the template (case.html)"] = once(lambda: render_template("case.html", f=found["file"]))
    return costs


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tramita-bench-pages-") as folder:
        url = f"sqlite:///{folder}/pages.sqlite"
        clock = Clock()
        app = Tramita(persistence_env(url), clock=clock, signer=Signer.generate("bench.tramita/acre"))
        store = open_store(url)
        projector = Projector(app, store)
        projector.migrate()
        case = grow(app, clock, args.acts, args.others)[0]
        projector.catch_up()
        flask = create_app({"TRAMITA_DATABASE_URL": url, "TRAMITA_SESSION_KEY": str(Path(folder) / "session.key")},
                           application=app)
        flask.extensions["tramita.audit"].sign_checkpoint()
        token = app.issue_token(ADMIN, name="bench-auditor", role="auditor", municipality=None).token
        client = flask.test_client()
        try:
            sign_in(client, token)
            events = client.get(f"/cases/{case.number}/events")
            page = client.get(f"/processos/{case.number}")
            for answer, kind in ((events, "application/json"), (page, "text/html")):
                assert answer.status_code == 200 and answer.mimetype == kind, answer.get_data(as_text=True)[:300]
            shown = page.get_data(as_text=True)
            rows, overdue = shown.count("data-sequence="), len(re.findall(r'class="deadline missed', shown))
            late = shown.count('class="mark late-recording"')
            logged, acts = app.recorder.max_notification_id() or 0, acts_of(app, case.number)
            timed = medians({"events": lambda: client.get(f"/cases/{case.number}/events"),
                             "page": lambda: client.get(f"/processos/{case.number}")}, args.repeat)
            costs = parts(flask, case.number)
        finally:
            flask.extensions["tramita.store"].close()
            flask.extensions["tramita.documents"].store.close()
            store.close()
            app.close()
    print(f"store: sqlite (temporary file), log: {logged} events, {args.others + 1} cases interleaved, signed, "
          "checkpointed; one signed-in session (cookie) reads both")
    print(f"case {case.number}: {acts} acts, {len(events.get_json())} events; the page shows {rows} timeline rows "
          f"({late} marked recorded late) and {overdue} overdue deadline(s) on its axis")
    print(f"GET /cases/{{id}}/events: {len(events.data)} bytes, median CPU {timed['events'][0] * 1000:.1f} ms, "
          f"wall {timed['events'][1] * 1000:.1f} ms over {args.repeat}")
    print(f"GET /processos/{{número}}: {len(page.data)} bytes, median CPU {timed['page'][0] * 1000:.1f} ms, "
          f"wall {timed['page'][1] * 1000:.1f} ms over {args.repeat}")
    print("the page's parts, once each: " + ", ".join(f"{name} {seconds * 1000:.1f} ms"
                                                      for name, seconds in costs.items()))
    print(f"ratio of the wall medians: {timed['page'][1] / timed['events'][1]:.2f}")
    print("ratio goal: <= 3")
    print(f"ratio: {timed['page'][0] / timed['events'][0]:.2f}")


if __name__ == "__main__":
    main()
