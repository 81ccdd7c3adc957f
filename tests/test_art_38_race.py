"""Art. 38 under concurrency: openings and a district law racing on one territory never violate the freeze."""

from __future__ import annotations

import threading
import time
from datetime import date

import pytest

from domain.demo import GOVERNOR, IBGE, PGE, SECTMA, municipal
from domain.errors import LegalRuleError
from tests.conftest import make_app

XAPURI = "1200708"
OPENED_ON, LAW_ON = date(2026, 11, 20), date(2026, 11, 25)


def district_case_ready_for_its_law(app) -> str:
    case = app.open_case(municipal("mayor", XAPURI), date(2026, 10, 1), kind="district_creation",
                         municipalities=[XAPURI], district="Vila Seringueira").number
    for actor, item, value in ((IBGE, "art-31-I", 30), (IBGE, "art-31-II", 400), (PGE, "art-31-III", True),
                               (SECTMA, "art-31-III", True)):
        app.record_finding(case, actor, date(2026, 10, 15), item=item, value=value, document="laudo")
    return case


def district_acts_inside_a_freeze(municipality) -> list[str]:
    """Every district act whose legal date a freeze covers: Art. 38 forbids them all."""
    return [act["law"] for act in municipality.district_acts if municipality.freezes_on(act["on"])]


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(8))
def test_two_openings_racing_a_district_law_on_one_territory_never_violate_art_38(database_url, round_):
    app = make_app(database_url)
    district_case = district_case_ready_for_its_law(app)
    barrier = threading.Barrier(3)
    outcomes: dict[str, str] = {}

    def open_case(name: str) -> None:
        barrier.wait()
        time.sleep((0, 0.01, 0.05, 0.2)[round_ % 4])  # shift the interleaving from round to round
        try:
            outcomes[name] = app.open_case(GOVERNOR, OPENED_ON, kind="creation", municipalities=[XAPURI],
                                           areas=[{"municipality": XAPURI, "area_km2": "10"}],
                                           documents={f"art-4-{i}": "doc" for i in
                                                      ("I", "II", "III", "IV", "V", "VI")}).number
        except LegalRuleError as refusal:
            outcomes[name] = refusal.article

    def enact_district_law() -> None:
        barrier.wait()
        try:
            app.enact_law(district_case, municipal("council", XAPURI), LAW_ON, law="Lei Municipal 9/2026",
                          living_person_declaration=True)
            outcomes["district"] = "enacted"
        except LegalRuleError as refusal:
            outcomes["district"] = refusal.article

    threads = [threading.Thread(target=open_case, args=(f"case-{n}",)) for n in (1, 2)]
    threads.append(threading.Thread(target=enact_district_law))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert not any(thread.is_alive() for thread in threads)
    xapuri = make_app(database_url).municipality(XAPURI)
    assert district_acts_inside_a_freeze(xapuri) == []
    assert set(outcomes) == {"case-1", "case-2", "district"}
    if outcomes["district"] == "enacted":
        assert outcomes["case-1"] == outcomes["case-2"] == "art-38"
        assert xapuri.freezes == []
    else:
        assert outcomes["district"] == "art-38"
        assert sorted(f["case_number"] for f in xapuri.freezes) == sorted([outcomes["case-1"], outcomes["case-2"]])
    assert make_app(database_url).verify_all()[-1].ok
