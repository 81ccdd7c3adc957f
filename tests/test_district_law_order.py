"""Art. 31, 32 and 38: a district's municipal law is judged in the order our reading gives, its findings (Art. 31
I-III), its date (Art. 31-IV), the freeze of its municipality (Art. 38), then its name (Art. 32 par. ún.); a law
that fails several is refused under the first, and nothing is recorded."""

from __future__ import annotations

from datetime import date, datetime, timezone

from domain.application import Tramita
from domain.demo import MESA
from tests.test_article_rules import TARAUACA, district_case, enact_district, open_creation, refused
from tests.test_statute_amendments import new_app

FROZEN_ON = date(2026, 6, 1)


#: Late enough for the laws dated in 2027 and 2028 below (an act is never dated after today in Rio Branco).
LATER = datetime(2028, 6, 30, 15, tzinfo=timezone.utc)


def frozen_district_case(district: str = "Vila Jurupari", buildings: int = 45) -> tuple[Tramita, str, str]:
    """A creation case freezes Tarauacá from 2026-06-01; the Mayor's district petition follows on 2026-07-01."""
    app = new_app(clock=lambda: LATER)
    blocking = open_creation(app, FROZEN_ON, (TARAUACA,))
    return app, blocking, district_case(app, TARAUACA, date(2026, 7, 1), district=district, buildings=buildings)


def enact(app, case: str, on: date = date(2026, 7, 10), declaration: bool = True):  # noqa: ANN001, ANN201
    return enact_district(app, case, TARAUACA, on, living_person_declaration=declaration)


def test_a_frozen_municipality_s_district_named_after_a_municipality_is_refused_under_the_freeze_first():
    app, blocking, case = frozen_district_case(district="Xapuri")
    refused(app, case, lambda: enact(app, case), article="art-38", contains=(blocking,))


def test_a_frozen_municipality_s_district_law_without_the_living_person_declaration_is_refused_under_the_freeze():
    app, blocking, case = frozen_district_case()
    refused(app, case, lambda: enact(app, case, declaration=False), article="art-38", contains=(blocking,))


def test_once_the_freeze_lifts_the_same_district_name_is_judged_under_art_32():
    app, blocking, case = frozen_district_case(district="Xapuri")
    app.archive_case(blocking, MESA, date(2026, 7, 5), reason="desistência")
    refused(app, case, lambda: enact(app, case), article="art-32-par-unico", contains=("Xapuri",))


def test_a_frozen_municipality_s_district_law_dated_in_a_municipal_election_year_is_refused_under_art_31_iv():
    """Art. 31-IV (the law's date) comes before the freeze, as our reading orders them."""
    app, _, case = frozen_district_case()
    refused(app, case, lambda: enact(app, case, on=date(2028, 1, 1)), article="art-31-IV")


def test_a_frozen_municipality_s_district_law_dated_the_last_day_before_the_election_year_is_refused_as_frozen():
    app, blocking, case = frozen_district_case()
    refused(app, case, lambda: enact(app, case, on=date(2027, 12, 31)), article="art-38", contains=(blocking,))


def test_a_frozen_municipality_s_district_with_too_few_buildings_is_refused_under_art_31_i():
    app, _, case = frozen_district_case(buildings=19)
    refused(app, case, lambda: enact(app, case), article="art-31-I")
