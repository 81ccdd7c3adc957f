"""Art. 37 par. ún.: an extinct municipality is reintegrated into the municipality or municipalities it came from,
"observando-se ... a mesma proporção territorial originariamente existente". When the registry knows its origins
(a creation recorded here made it), the law's shares must be theirs; otherwise they are recorded as the law
states them (a seeded municipality: tests/test_article_rules.py's extinction of Jordão)."""

from __future__ import annotations

from datetime import date
from fractions import Fraction

from domain.demo import GOVERNOR, GUIOMARD, IBGE, MESA, PLACIDO, TRE, creation_1992
from tests.test_article_rules import XAPURI, new_app, refused

#: Extrema (case LC35-1991-0001) took 420.5 km² from Plácido de Castro and 180 km² from Senador Guiomard.
ORIGINAL = {PLACIDO: Fraction("420.5") / Fraction("600.5"), GUIOMARD: Fraction(180) / Fraction("600.5")}


def extinction_ready_for_law(app, code: str) -> str:  # noqa: ANN001
    case = app.open_case(MESA, date(1995, 3, 1), kind="extinction", municipalities=[code]).number
    app.certify_extinction_request(case, TRE, date(1995, 3, 2), valid_signatures=700, registered_voters=900)
    app.record_finding(case, IBGE, date(1995, 3, 3), item="art-4-I", value=1400, document="Laudo art-4-I")
    return case


def extrema(app) -> str:  # noqa: ANN001
    creation = creation_1992(app, say=lambda _: None)
    return app.get_case(creation).new_municipality


def test_an_extinct_municipality_made_here_returns_to_its_origins_in_the_proportion_they_gave_it():
    app = new_app()
    code = extrema(app)
    case = extinction_ready_for_law(app, code)
    app.enact_law(case, GOVERNOR, date(1995, 4, 1), law="Lei 2/1995",
                  reintegration={PLACIDO: str(ORIGINAL[PLACIDO]), GUIOMARD: str(ORIGINAL[GUIOMARD])})
    assert app.get_case(case).law["contents"]["reintegration"] == {c: str(s) for c, s in ORIGINAL.items()}
    assert sorted(app.municipality(code).ceased["into"]) == sorted([PLACIDO, GUIOMARD])


def test_a_law_that_states_no_shares_is_given_the_original_proportion():
    app = new_app()
    case = extinction_ready_for_law(app, extrema(app))
    app.enact_law(case, GOVERNOR, date(1995, 4, 1), law="Lei 2/1995")
    assert app.get_case(case).law["contents"]["reintegration"] == {c: str(s) for c, s in ORIGINAL.items()}


def test_reintegrating_a_municipality_made_here_into_another_than_its_origins_is_refused():
    app = new_app()
    case = extinction_ready_for_law(app, extrema(app))
    refused(app, case, lambda: app.enact_law(case, GOVERNOR, date(1995, 4, 1), law="Lei 2/1995",
                                             reintegration={XAPURI: "1"}), article="art-37-par-unico",
            contains=(PLACIDO, GUIOMARD))


def test_reintegrating_a_municipality_made_here_in_halves_is_refused_naming_the_original_proportion():
    app = new_app()
    case = extinction_ready_for_law(app, extrema(app))
    refusal = refused(app, case, lambda: app.enact_law(case, GOVERNOR, date(1995, 4, 1), law="Lei 2/1995",
                                                       reintegration={PLACIDO: "1/2", GUIOMARD: "1/2"}),
                      article="art-37-par-unico", contains=("841/1201",))
    assert refusal.figures["original"] == {c: str(s) for c, s in ORIGINAL.items()}
