"""The acts the four demo cases do not reach, recorded after them so that every act of the API has been recorded
once, valid, by its competent body (the API's request examples are taken from these and the demo's acts).

5. A 2026 dismemberment of a strip of Xapuri into Capixaba: both councils approve it (Art. 28-29) and, the area
   being within Art. 1-I's brackets, the Mesa dispenses the plebiscite.
6. A 2026 creation from Bujari whose Art. 4 findings arrive before the registry has Bujari's revenue and
   buildings: once they are recorded, the Mesa verifies the requirements (Art. 4, 5). Its plebiscite is
   unfavourable, so the case is archived (Art. 16 par. ún.) and Bujari's freeze is lifted.
7. A 2026 extinction of Jordão requested by its voters: the TRE certifies the request's signatures (Art. 37-II).
8. An amendment of the statute recorded by the Mesa: an illustrative federal complementary law (not a real one)
   opening a period for creations in 2027 (CF art. 18 §4).
9. The IBGE records Boa Esperança do Norte (MT), installed on 2025-01-01 after the shipped list of names, so that no
   new municipality may take its name (Art. 17 par. ún.).

Figures, results and the amending law are illustrative demo data, not verified data, as the demo's are.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

from domain.application import Tramita
from domain.errors import Sentence
from domain.demo import (
    GOVERNOR, IBGE, ILLUSTRATIVE, MESA, PGE, PRESIDENT, SECTMA, SEFAZ, SETOP, TRE, municipal,
)

XAPURI, CAPIXABA, BUJARI, JORDAO = "1200708", "1200179", "1200138", "1200328"
GATE = "cf-art-18-par-4.federal-period"
#: The illustrative federal law of part 8: a period open from 2027-01-01 to 2027-06-30.
FEDERAL_LAW = "Lei Complementar federal nº 999, de 20 de novembro de 2026 (ilustrativa, demo)"


def further_acts(app: Tramita, say: Callable[[Sentence], None] = print) -> None:
    """Record parts 5 to 8 on a store where the demo (`seed_demo`) has been recorded."""
    dismemberment_dispensed_2026(app, say)
    creation_verified_then_archived_2026(app, say)
    extinction_requested_2026(app, say)
    federal_period_amendment_2026(app, say)
    name_added_2026(app, say)
    if app.subscription_keys is not None:  # subscriptions need the deployment's subscription key
        alerts_subscribed(app, say)


def dismemberment_dispensed_2026(app: Tramita, say: Callable[[Sentence], None]) -> str:
    """Part 5: Art. 1-I dispenses the plebiscite of a strip of 480 km² of Xapuri's 5,250 km² (under 10%)."""
    app.record_figure(XAPURI, IBGE, date(2026, 5, 4), figure="area_km2", value="5250", as_of=date(2025, 12, 31),
                      source=ILLUSTRATIVE)
    case = app.open_case(GOVERNOR, date(2026, 5, 11), kind="dismemberment", municipalities=[XAPURI],
                         receiving=CAPIXABA, areas=[{"municipality": XAPURI, "area_km2": "480",
                                                     "description": "faixa à margem do rio Acre (demo)"}]).number
    for code, decree in ((XAPURI, "Decreto Legislativo 3/2026"), (CAPIXABA, "Decreto Legislativo 5/2026")):
        app.record_council_decree(case, municipal("council", code), date(2026, 5, 20), municipality=code,
                                  decree=decree, seats=11, yes_votes=7)
    app.dispense_plebiscite(case, MESA, date(2026, 6, 2),
                            justification="Art. 1-II: limites naturais (o rio Acre) e acesso pela margem direita")
    say(Sentence("%(case)s: dismemberment from Xapuri into Capixaba; both councils approved; plebiscite dispensed "
                 "(Art. 1-I)", case=case))
    return case


def creation_verified_then_archived_2026(app: Tramita, say: Callable[[Sentence], None]) -> str:
    """Part 6: the findings complete before Bujari's figures are known; the Mesa's verification, then the archive."""
    documents = {item: f"Ofício GG {n}/2026" for n, item in enumerate(
        ("art-4-I", "art-4-II", "art-4-III", "art-4-IV", "art-4-V", "art-4-VI"), start=11)}
    case = app.open_case(GOVERNOR, date(2026, 6, 1), kind="creation", municipalities=[BUJARI],
                         proposed_name="Vila Antimary", documents=documents,
                         areas=[{"municipality": BUJARI, "area_km2": "640", "description": "Vila Antimary"}]).number
    for n, (actor, item, value, tax) in enumerate(((IBGE, "art-4-I", 3200, None), (TRE, "art-4-II", 1900, None),
                                                   (SEFAZ, "art-4-III", "620000.00", "210000000.00"),
                                                   (IBGE, "art-4-IV", 150, None), (SETOP, "art-4-V", True, None),
                                                   (PGE, "art-4-VI", True, None), (SECTMA, "art-4-VI", True, None)),
                                                  start=11):
        app.record_finding(case, actor, date(2026, 6, 16), item=item, value=value, state_tax_revenue=tax,
                           document=f"Laudo {n}/2026")
    app.record_figure(BUJARI, SEFAZ, date(2026, 6, 22), figure="revenue", value="8500000.00",
                      as_of=date(2025, 12, 31), source=ILLUSTRATIVE)
    app.record_figure(BUJARI, IBGE, date(2026, 6, 22), figure="buildings", value=3900, as_of=date(2025, 12, 31),
                      source=ILLUSTRATIVE)
    app.verify_requirements(case, MESA, date(2026, 6, 24))
    app.decree_plebiscite(case, PRESIDENT, date(2026, 7, 1), decree="Decreto Legislativo 9/2026")
    app.schedule_plebiscite(case, TRE, date(2026, 7, 6), resolution="Resolução TRE-AC 1.950/2026",
                            plebiscite_date=date(2026, 9, 13))
    app.homologate_result(case, TRE, date(2026, 9, 17), voted_on=date(2026, 9, 13), populations={
        "area": {"registered": 1900, "turnout": 1400, "yes": 500, "no": 850, "blank": 30, "void": 20}})
    app.archive_case(case, MESA, date(2026, 10, 1),
                     reason="Art. 16 par. ún.: resultado desfavorável no plebiscito de 2026-09-13")
    say(Sentence("%(case)s: requirements verified by the Mesa (Art. 4, 5); unfavourable plebiscite; archived, "
                 "Bujari's freeze lifted (Art. 16 par. ún.)", case=case))
    return case


def extinction_requested_2026(app: Tramita, say: Callable[[Sentence], None]) -> str:
    """Part 7: the Mesa files the voters' extinction request; the TRE certifies its signatures (Art. 37-II)."""
    case = app.open_case(MESA, date(2026, 8, 3), kind="extinction", municipalities=[JORDAO]).number
    app.certify_extinction_request(case, TRE, date(2026, 9, 1), valid_signatures=3928, registered_voters=5892)
    say(Sentence("%(case)s: Jordão's extinction request; the TRE certified %(valid)s of %(registered)s voters "
                 "(Art. 37-II)", case=case, valid=3928, registered=5892))
    return case


def federal_period_amendment_2026(app: Tramita, say: Callable[[Sentence], None]) -> None:
    """Part 8: the Mesa records an (illustrative) federal law opening a period in 2027 (CF art. 18 §4)."""
    app.amend_statute(MESA, date(2026, 11, 20), law=FEDERAL_LAW, parameters=[
        {"id": GATE, "article": "cf-art-18-par-4", "effective_from": date(2027, 1, 1), "value": "open",
         "source": "LC federal 999/2026 (ilustrativa, demo), art. 1º: o período para criação de municípios"},
        {"id": GATE, "article": "cf-art-18-par-4", "effective_from": date(2027, 7, 1), "value": "closed",
         "source": "LC federal 999/2026 (ilustrativa, demo), art. 1º: o período termina em 2027-06-30"},
    ])
    say(Sentence(
        "statute: %(law)s recorded; a federal period from 01/01/2027 to 30/06/2027", law=FEDERAL_LAW))


def name_added_2026(app: Tramita, say: Callable[[Sentence], None]) -> None:
    """Part 9: a municipality installed elsewhere in Brazil after the shipped IBGE list joins the existing names."""
    app.add_toponym(IBGE, date(2026, 11, 23), name="Boa Esperança do Norte", uf="MT", ibge_code="5101837",
                    source="IBGE: município de Mato Grosso instalado em 2025-01-01 (demo)")
    say(Sentence("names: Boa Esperança do Norte (MT), installed on 01/01/2025, added to the existing names (Art. 17 "
                 "par. ún.)"))


def alerts_subscribed(app: Tramita, say: Callable[[Sentence], None]) -> None:
    """Part 10: the TRE has its missed deadlines sent to its own webhook; Xapuri's mayor follows the municipality's
    open deadlines in a calendar feed; the TRE later ends its subscription (an address of the demo, illustrative)."""
    webhook = app.subscribe(TRE, token_id=None, url="https://alertas.tre-ac.jus.br/tramita",
                            kinds=["missed"])
    mayor = municipal("mayor", XAPURI)
    app.subscribe(mayor, token_id=None, channel="calendar", municipality=XAPURI)
    app.remove_subscription(TRE, str(webhook.subscription.id), reason="endereço substituído (demo)")
    say(Sentence("subscriptions: the TRE's webhook for missed deadlines (then ended) and Xapuri's mayor's calendar "
                 "feed"))
