"""Art. 17 par. ún. (and Art. 32 par. ún. for districts): the new name may not repeat "outro já existente no País".
A municipality that has ceased (incorporated, merged, extinguished) no longer exists, and a fusion's origins cease
by the very law that names their successor: neither blocks the name. Any other existing one still does."""

from __future__ import annotations

from datetime import date

import pytest

from domain.demo import CCJ, GOVERNOR, IBGE, PRESIDENT, TRE, municipal
from domain.errors import InvalidActError
from tests.test_article_rules import (
    ACRELANDIA, CAPIXABA, FAVOURABLE, LAW, new_app, open_creation, plebiscite, record_findings, record_origin,
    refused,
)
from tests.test_unknown_figures_after_a_law import incorporate_bujari  # Bujari ceases on 1993-05-01

CONTENTS = {key: value for key, value in LAW.items() if key != "law"}


def fusion_voted(app, seat: str) -> str:  # noqa: ANN001
    """Capixaba and Acrelândia merge (1993); the plebiscite chooses `seat`."""
    case = app.open_case(GOVERNOR, date(1993, 3, 1), kind="fusion", municipalities=[CAPIXABA, ACRELANDIA]).number
    for code in (CAPIXABA, ACRELANDIA):
        app.record_council_decree(case, municipal("council", code), date(1993, 3, 5), municipality=code,
                                  decree="DL 1/1993", seats=9, yes_votes=5)
    app.decree_plebiscite(case, PRESIDENT, date(1993, 3, 10), decree="DL 2/1993")
    app.schedule_plebiscite(case, TRE, date(1993, 3, 11), resolution="Res. 1/1993", plebiscite_date=date(1993, 4, 4))
    app.homologate_result(case, TRE, date(1993, 4, 6), voted_on=date(1993, 4, 4),
                          populations={CAPIXABA: FAVOURABLE, ACRELANDIA: FAVOURABLE},
                          seat_votes={seat: 900, "Vila Outra": 500})
    app.communicate_result(case, TRE, date(1993, 4, 7))
    app.register_in_plenary(case, PRESIDENT, date(1993, 4, 8))
    app.draft_bill(case, CCJ, date(1993, 4, 9), bill="PL 1/1993")
    return case


def test_a_fusion_named_after_its_seat_the_seat_of_one_of_its_origins_is_enacted():
    app = new_app()
    case = fusion_voted(app, "Capixaba")
    app.enact_law(case, GOVERNOR, date(1993, 5, 1), law="Lei 1/1993", name="Capixaba", **CONTENTS)
    assert app.get_case(case).law["name"] == "Capixaba"
    assert app.municipality(CAPIXABA).ceased["on"] == date(1993, 5, 1)


def test_a_fusion_named_after_a_municipality_that_is_not_one_of_its_origins_is_refused():
    app = new_app()
    case = fusion_voted(app, "Xapuri")
    refused(app, case, lambda: app.enact_law(case, GOVERNOR, date(1993, 5, 1), law="Lei 1/1993", name="Xapuri",
                                             **CONTENTS), article="art-17-par-unico", contains=("Xapuri",))


def creation_from_capixaba_ready_for_law(app, opened: date) -> str:  # noqa: ANN001
    record_origin(app, CAPIXABA, date(1993, 1, 1), area_km2="1700", population=60000, voters=35000,
                  revenue="2000000", buildings=4000)
    case = open_creation(app, opened, (CAPIXABA,))
    record_findings(app, case, opened)
    plebiscite(app, case, opened)
    return case


def test_a_creation_named_after_a_municipality_that_ceased_before_its_law_is_enacted():
    app = new_app()
    incorporate_bujari(app, voters=3000, revenue="100000.00", buildings=300)
    case = creation_from_capixaba_ready_for_law(app, date(1995, 1, 10))
    app.enact_law(case, GOVERNOR, date(1995, 3, 1), name="Bujari", **LAW)
    assert app.get_case(case).law["name"] == "Bujari"


def test_a_creation_named_after_a_municipality_still_existing_on_its_law_s_day_is_refused():
    """The day before Bujari's incorporation law, its name is that of an existing municipality."""
    app = new_app()
    case = creation_from_capixaba_ready_for_law(app, date(1993, 1, 4))
    incorporate_bujari(app, voters=3000, revenue="100000.00", buildings=300)
    refused(app, case, lambda: app.enact_law(case, GOVERNOR, date(1993, 4, 30), name="Bujari", **LAW),
            article="art-17-par-unico", contains=("Bujari",))


def test_a_creation_named_after_an_origin_that_goes_on_existing_is_refused():
    app = new_app()
    case = creation_from_capixaba_ready_for_law(app, date(1995, 1, 10))
    refused(app, case, lambda: app.enact_law(case, GOVERNOR, date(1995, 3, 1), name="Capixaba", **LAW),
            article="art-17-par-unico", contains=("Capixaba",))


def test_a_creation_named_after_a_municipality_that_ceases_the_same_day_by_another_law_is_enacted():
    app = new_app()
    case = creation_from_capixaba_ready_for_law(app, date(1993, 1, 4))
    incorporate_bujari(app, voters=3000, revenue="100000.00", buildings=300)
    app.enact_law(case, GOVERNOR, date(1993, 5, 1), name="Bujari", **LAW)
    assert app.get_case(case).law["name"] == "Bujari"


@pytest.mark.parametrize(("name", "said"), [
    ("Ex\u200btrema", "U+200B"),  # a zero-width space inside Extrema (MG)
    ("Extrema\u00ad", "U+00AD"),  # a soft hyphen after it
    ("\u0415xtrema", "U+0415"),  # a Cyrillic capital Ie for the E
    ("\u200b", "visible"),  # nothing to see at all
    ("\u3164", "U+1160"),  # a Hangul filler, a "letter" that shows nothing
], ids=["zero-width space", "soft hyphen", "cyrillic look-alike", "only invisible", "hangul filler"])
def test_a_creation_law_whose_name_hides_a_repeated_name_behind_invisible_or_look_alike_characters_is_refused(
        name, said):
    app = new_app()
    case = creation_from_capixaba_ready_for_law(app, date(1995, 1, 10))
    refused(app, case, lambda: app.enact_law(case, GOVERNOR, date(1995, 3, 1), name=name, **LAW),
            article="art-17-par-unico", error=InvalidActError, contains=(said,))


def test_a_creation_law_named_in_full_width_latin_letters_is_compared_as_the_plain_name():
    app = new_app()
    case = creation_from_capixaba_ready_for_law(app, date(1995, 1, 10))
    refused(app, case, lambda: app.enact_law(case, GOVERNOR, date(1995, 3, 1), name="\uff25xtrema", **LAW),
            article="art-17-par-unico", contains=("Extrema",))


@pytest.mark.parametrize("name", ["Ex\u200btrema", "\u0415xtrema"])
def test_the_ibge_cannot_add_a_name_with_invisible_or_look_alike_characters_to_the_list(name):
    app = new_app()
    refused(app, None, lambda: app.add_toponym(IBGE, date(2026, 3, 1), name=name, uf="MT", ibge_code=None,
                                               source="IBGE"), article="art-17-par-unico", error=InvalidActError)


def test_every_deadline_of_the_statute_has_a_name_in_words_and_its_portuguese():
    """A deadline a page, an alert's e-mail or a feed shows is named by what is due, in pt-BR, never by its key."""
    import tomllib
    from pathlib import Path

    from api.i18n import compiled_catalogue
    from domain.words import DEADLINE_NAMES

    statute = tomllib.loads((Path(__file__).resolve().parents[1] / "domain/statute/lc35.toml").read_text("utf-8"))
    rules = {p["id"].removeprefix("deadline.") for p in statute["parameter"]
             if p["id"].startswith("deadline.") and isinstance(p["value"], dict)}
    assert rules and rules == set(DEADLINE_NAMES)
    portuguese = compiled_catalogue("pt_BR")
    for name in DEADLINE_NAMES.values():
        assert portuguese.gettext(name) != name, name
