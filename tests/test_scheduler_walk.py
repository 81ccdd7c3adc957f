"""A creation case walked from its plebiscite to its organic law while the scheduler scans once a day at 09:00
in Rio Branco, with the alert clock moving day by day: the exact alerts on the exact days, none twice.

The acts of a day are recorded at 17:00, after that day's scan. Due dates (docs/law/deadlines.md, `lei-9784-art-66`: the
start day excluded, the last day included, calendar days; months to the same day number; a last day without
office hours moves to the next business day), counted by hand:

- Art. 14 result-communication: homologated Thu 1992-12-10 + 15 days = Fri 12-25 (Natal) -> Sat, Sun -> Mon 12-28.
  Communicated on 12-29, one day late.
- Art. 15 plenary-registration: communicated Tue 12-29 + 5 days = Sun 1993-01-03 -> Mon 01-04 (across the month
  and year end and 1 January). Registered on its due day.
- Art. 16 creation-bill: 12-29 + 30 days = Thu 1993-01-28. Drafted on 01-25.
- Art. 26 personnel-documents: due on the installation day, Mon 1993-02-08; not sent by then, so the
  installation records it missed. Sent on 02-15.
- Art. 22 ledger-transfer: installed Mon 02-08 + 60 days = Fri 04-09 (Sexta-feira Santa) -> Sat, Sun -> Mon 04-12.
  Delivered on 04-20, eight days late.
- Art. 23-I budget-proposal: 02-08 + 30 days = Wed 03-10 (across the end of February). Sent on its due day.
- Art. 23-II administrative-organization-bill: + 60 days = Mon 04-12 (as the ledger). Sent on 04-08.
- Art. 23-III civil-service-regime-bill: + 90 days = Sun 05-09 -> Mon 05-10. Sent on its due day.
- Art. 23-IV staff-framework-bill: + 120 days = Tue 06-08. Sent on 06-02, before any alert was due.
- Art. 24 organic-law: + 6 months = Sun 08-08 -> Mon 08-09. Promulgated on its due day.

Thresholds 5 and 1: "due in 5 days" when 5 to 2 days are left, "due in 1 day" when 1 or 0 are left, "missed" from
the day after the due day while no closing act exists.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from domain.acts import Actor
from domain.alerts import Alert
from domain.application import Tramita
from infrastructure.persistence import persistence_env
from domain.demo import CCJ, GOVERNOR, PRESIDENT, TRE, municipal
from projections import queries
from projections.projector import Projector
from infrastructure.store import open_store
from scheduler.scan import scan
from tests.stores import SEEDED_ON
from tests.test_article_rules import FAVOURABLE, LAW, XAPURI, creation_verified

RIO_BRANCO = ZoneInfo("America/Rio_Branco")
THRESHOLDS = (5, 1)
FIRST, LAST = date(1992, 12, 10), date(1993, 8, 20)
PERSONNEL, LEDGER = f"personnel-documents:{XAPURI}", f"ledger-transfer:{XAPURI}"
IN_5, IN_1, MISSED = "due-in-5-days", "due-in-1-day", "missed"

#: deadline -> {day of the scan: the alert it raises}; every other day raises nothing for it.
EXPECTED: dict[str, dict[date, str]] = {
    "result-communication": {date(1992, 12, 23): IN_5, date(1992, 12, 27): IN_1, date(1992, 12, 29): MISSED},
    "plenary-registration": {date(1992, 12, 30): IN_5, date(1993, 1, 3): IN_1},
    "creation-bill": {date(1993, 1, 23): IN_5},
    PERSONNEL: {date(1993, 2, 9): MISSED},
    "budget-proposal": {date(1993, 3, 5): IN_5, date(1993, 3, 9): IN_1},
    "administrative-organization-bill": {date(1993, 4, 7): IN_5},
    LEDGER: {date(1993, 4, 7): IN_5, date(1993, 4, 11): IN_1, date(1993, 4, 13): MISSED},
    "civil-service-regime-bill": {date(1993, 5, 5): IN_5, date(1993, 5, 9): IN_1},
    "staff-framework-bill": {},
    "organic-law": {date(1993, 8, 4): IN_5, date(1993, 8, 8): IN_1},
}
DUE = {"result-communication": date(1992, 12, 28), "plenary-registration": date(1993, 1, 4),
       "creation-bill": date(1993, 1, 28), PERSONNEL: date(1993, 2, 8), "budget-proposal": date(1993, 3, 10),
       "administrative-organization-bill": date(1993, 4, 12), LEDGER: date(1993, 4, 12),
       "civil-service-regime-bill": date(1993, 5, 10), "staff-framework-bill": date(1993, 6, 8),
       "organic-law": date(1993, 8, 9)}
CLOSED = {"result-communication": ("met-late", 1), "plenary-registration": ("met-on-time", 0),
          "creation-bill": ("met-on-time", 0), PERSONNEL: ("met-late", 7), "budget-proposal": ("met-on-time", 0),
          "administrative-organization-bill": ("met-on-time", 0), LEDGER: ("met-late", 8),
          "civil-service-regime-bill": ("met-on-time", 0), "staff-framework-bill": ("met-on-time", 0),
          "organic-law": ("met-on-time", 0)}


class Clock:
    """The alert clock, moved by the test: a local time in Rio Branco on a legal day."""

    def __init__(self) -> None:
        self.now = datetime(1992, 11, 30, 12, tzinfo=RIO_BRANCO)

    def at(self, day: date, hour: int) -> None:
        self.now = datetime.combine(day, time(hour), RIO_BRANCO)

    def __call__(self) -> datetime:
        return self.now


def acts_of_the_walk(case: str) -> dict[date, Callable[[Tramita], object]]:
    """The acts recorded at 17:00 on each day of the walk."""
    origin = municipal("municipality", XAPURI)

    def new(role: str, app: Tramita) -> Actor:  # the new municipality's bodies, once its law has given its code
        return municipal(role, app.get_case(case).new_municipality)

    bill = lambda item, day: lambda app: app.submit_prefect_bill(  # noqa: E731
        case, new("mayor", app), day, item=item, bill=f"Projeto {item}")
    return {
        date(1992, 12, 10): lambda app: app.homologate_result(case, TRE, date(1992, 12, 10),
                                                              voted_on=date(1992, 12, 6),
                                                              populations={"area": FAVOURABLE}),
        date(1992, 12, 29): lambda app: app.communicate_result(case, TRE, date(1992, 12, 29)),
        date(1993, 1, 4): lambda app: app.register_in_plenary(case, PRESIDENT, date(1993, 1, 4)),
        date(1993, 1, 25): lambda app: app.draft_bill(case, CCJ, date(1993, 1, 25), bill="Projeto de Lei 9/1993"),
        date(1993, 1, 29): lambda app: app.enact_law(case, GOVERNOR, date(1993, 1, 29), name="Vila Nova", **LAW),
        date(1993, 2, 1): lambda app: app.send_administrator_list(case, GOVERNOR, date(1993, 2, 1),
                                                                  names=["Ana", "Bento", "Carla"]),
        date(1993, 2, 3): lambda app: app.appoint_administrator(case, PRESIDENT, date(1993, 2, 3),
                                                                administrator="Bento"),
        date(1993, 2, 8): lambda app: app.install_municipality(case, PRESIDENT, date(1993, 2, 8), mayor="Prefeita",
                                                               vice_mayor="Vice", councillors=["Vereador 1"]),
        date(1993, 2, 15): lambda app: app.send_personnel_documents(case, origin, date(1993, 2, 15), origin=XAPURI,
                                                                    document="Ofício pessoal"),
        date(1993, 3, 10): bill("art-23-I", date(1993, 3, 10)),
        date(1993, 4, 8): bill("art-23-II", date(1993, 4, 8)),
        date(1993, 4, 20): lambda app: app.transfer_ledger(case, origin, date(1993, 4, 20), origin=XAPURI,
                                                           document="Termo de entrega"),
        date(1993, 5, 10): bill("art-23-III", date(1993, 5, 10)),
        date(1993, 6, 2): bill("art-23-IV", date(1993, 6, 2)),
        date(1993, 8, 9): lambda app: app.promulgate_organic_law(case, new("council", app), date(1993, 8, 9),
                                                                 organic_law="Lei Orgânica"),
    }


@pytest.fixture(scope="module")
def walk():
    """Run the walk once: {day: [(deadline, kind) raised by that day's scan]}, the alerts, the app and store."""
    clock = Clock()
    app = Tramita(persistence_env("memory://"), clock=clock)
    app.seed_registry(Actor("ibge-seed", "ibge"), SEEDED_ON)
    store = open_store("memory://")
    projector = Projector(app, store)
    projector.migrate()
    clock.at(date(1992, 11, 30), 17)
    case = creation_verified(app, date(1992, 11, 3))
    app.decree_plebiscite(case, PRESIDENT, date(1992, 11, 20), decree="Decreto Legislativo 30/1992")
    app.schedule_plebiscite(case, TRE, date(1992, 11, 23), resolution="Resolução TRE-AC 9/1992",
                            plebiscite_date=date(1992, 12, 6))
    acts, raised, repeated = acts_of_the_walk(case), {}, []
    day = FIRST
    while day <= LAST:
        clock.at(day, 9)
        result = scan(app, store, thresholds=THRESHOLDS, projector=projector)
        if result.raised:
            raised[day] = [(alert.deadline, alert.kind) for alert in result.raised]
        repeated += scan(app, store, thresholds=THRESHOLDS, projector=projector).raised  # the same day again
        clock.at(day, 17)
        if day in acts:
            acts[day](app)
        day += timedelta(days=1)
    projector.catch_up()
    alerts = [a for i in app.aggregate_ids() if isinstance(a := app.repository.get(i), Alert)]
    yield {"case": app.get_case(case), "raised": raised, "repeated": repeated, "alerts": alerts, "store": store}
    store.close()
    app.close()


def raised_on_each_day(expected: dict[str, dict[date, str]]) -> dict[date, list[tuple[str, str]]]:
    days: dict[date, list[tuple[str, str]]] = {}
    for deadline, kinds in expected.items():
        for day, kind in kinds.items():
            days.setdefault(day, []).append((deadline, kind))
    return {day: sorted(alerts) for day, alerts in sorted(days.items())}


def test_each_alert_of_the_walk_is_raised_on_its_exact_day_and_on_no_other(walk):
    assert {day: sorted(alerts) for day, alerts in walk["raised"].items()} == raised_on_each_day(EXPECTED)


def test_no_alert_is_raised_twice_by_a_second_scan_of_the_same_day_or_by_a_later_day(walk):
    assert walk["repeated"] == []
    every = [alert for alerts in walk["raised"].values() for alert in alerts]
    assert len(every) == len(set(every)) == sum(len(kinds) for kinds in EXPECTED.values())
    rows = queries.alerts(walk["store"], case_id=str(walk["case"].id))
    assert len(rows) == len({row["alert_id"] for row in rows}) == len(every)


def test_the_walk_s_due_dates_are_those_counted_by_hand_across_christmas_new_year_good_friday_and_month_ends(walk):
    assert {key: d["due_on"] for key, d in walk["case"].deadlines.items()} == DUE


def test_each_deadline_ends_met_on_time_or_late_as_its_closing_act_was_dated(walk):
    assert {key: (d["status"], d["days_late"]) for key, d in walk["case"].deadlines.items()} == CLOSED


def test_the_tre_is_alerted_five_days_and_one_day_before_the_art_14_communication_is_due_and_once_when_missed(walk):
    assert days_of(walk, "result-communication") == {date(1992, 12, 23): IN_5, date(1992, 12, 27): IN_1,
                                                    date(1992, 12, 29): MISSED}


def test_a_deadline_closed_late_is_met_late_and_raises_no_alert_after_its_missed_alert(walk):
    for deadline in ("result-communication", PERSONNEL, LEDGER):
        # the missed alert is raised at 09:00, the closing act recorded at 17:00 (the same day or later)
        assert max(days_of(walk, deadline)) <= walk["case"].deadlines[deadline]["closed_on"]
        assert list(days_of(walk, deadline).values())[-1] == MISSED


def test_a_deadline_closed_on_time_raises_no_alert_after_its_closing_act(walk):
    for deadline, (status, _) in CLOSED.items():
        if status == "met-on-time":
            closed_on = walk["case"].deadlines[deadline]["closed_on"]
            assert all(day <= closed_on for day in days_of(walk, deadline)), deadline
    assert days_of(walk, "staff-framework-bill") == {}  # sent before its first alert was due


def test_art_26_documents_recorded_missed_at_the_installation_are_alerted_missed_the_next_morning(walk):
    alert = next(a for a in walk["alerts"] if a.deadline == PERSONNEL)
    assert (alert.kind, alert.article, alert.who, alert.municipality) == (
        MISSED, "art-26-par-unico", "origin-municipality", XAPURI)
    assert (alert.due_on, alert.days_overdue, alert.raised_on) == (date(1993, 2, 8), 1, date(1993, 2, 9))


def test_the_ledger_missed_alert_names_the_case_the_article_who_must_act_the_due_date_and_the_days_overdue(walk):
    alert = next(a for a in walk["alerts"] if a.deadline == LEDGER and a.kind == MISSED)
    assert (alert.case_number, alert.article, alert.who, alert.municipality) == (
        walk["case"].number, "art-22-par-unico", "origin-municipality", XAPURI)
    assert (alert.due_on, alert.days_overdue) == (date(1993, 4, 12), 1)
    assert alert.raised_at == datetime(1993, 4, 13, 9, tzinfo=RIO_BRANCO)


def days_of(walk, deadline: str) -> dict[date, str]:
    return {day: kind for day, alerts in walk["raised"].items() for key, kind in alerts if key == deadline}
