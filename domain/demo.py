"""The demo: the registry and four cases that show what the statute does (`tramita seed-demo`).

1. A 1991-1993 creation in the spirit of Acre's Lei 1.036/1992 ("Município de Extrema", from Plácido de
   Castro and Senador Guiomard): it passes every gate of its time, is refused the name "Extrema" (Art. 17:
   Extrema, MG exists), is created as "Vila Extrema", installed, and closes its Art. 22-26 obligations, one
   of them late.
2. A 2026 creation from Feijó, opened by voters, stopped at its law by the federal gate (CF art. 18 §4).
3. A 2026 district creation in Feijó, refused by Art. 38 while case 2 freezes the territory.
4. A 2026 creation from Tarauacá whose requisitions wait: the IBGE refused its own (Art. 10 §1, a breach) and the
   TRE has not answered within 30 days of receipt, so the scheduler has alerts to raise.

Figures the registry seed does not have (1991 figures, Feijó's revenue and buildings) are recorded here as
acts whose source says plainly that they are illustrative demo figures, not verified data.

Case 1's legislative decree, TRE resolution and state law are attached to the acts that cite them when the seeding
passes their stored files (`documents`: audit/demo_files.py renders each as a PDF saying it is an illustrative demo
document, not an official one, and stores it); the demo itself records only what the API would: their SHA-256.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date
from typing import Any

from domain.acts import Actor
from domain.application import Attaching, Tramita
from domain.errors import LegalRuleError, Sentence
from domain.voter_title import make_voter_title
from domain.words import STAGE_NAMES

PLACIDO, GUIOMARD, FEIJO, TARAUACA = "1200385", "1200450", "1200302", "1200609"
ILLUSTRATIVE = "demo: illustrative figure, not verified data"

GOVERNOR = Actor("governor-demo", "governor")
MESA = Actor("mesa-demo", "assembly-mesa")
PRESIDENT = Actor("president-demo", "assembly-president")
CCJ, TRE, IBGE = Actor("ccj-demo", "ccj"), Actor("tre-demo", "tre"), Actor("ibge-demo", "ibge")
SEFAZ, SETOP = Actor("sefaz-demo", "sefaz"), Actor("setop-demo", "setop")
PGE, SECTMA = Actor("pge-demo", "pge"), Actor("sectma-demo", "sectma")


def municipal(role: str, code: str) -> Actor:
    return Actor(f"{role}-{code}-demo", role, code)


CASE_1991 = "LC35-1991-0001"
#: The documents of case 1 attached to the acts that cite them: reference -> (the act, what the document is).
#: Each file is illustrative (audit/demo_files.py says so on its page and in its metadata), never an official text.
DOCUMENTS_1991: dict[str, tuple[str, str]] = {
    "Decreto Legislativo 12/1991": (
        "plebiscite-decreed", "o decreto legislativo da Assembleia Legislativa que convoca o plebiscito sobre a "
                              "criação do Município de Extrema, de 27/12/1991 (Art. 11)"),
    "Resolução TRE-AC 40/1991": (
        "plebiscite-scheduled", "a resolução do Tribunal Regional Eleitoral do Acre que marca o plebiscito para "
                                "05/01/1992, de 30/12/1991 (Art. 12)"),
    "Lei 1.036/1992": (
        "law-enacted", "a lei estadual que cria o Município de Vila Extrema, com sede em Vila Extrema, a partir de "
                       "Plácido de Castro e Senador Guiomard, de 21/01/1992 (Art. 17)"),
}
#: A stored document as the API describes it: {"sha256", "type", "size"} (audit/documents.py StoredDocument).
Stored = Mapping[str, Mapping[str, object]]


def attachment_name(reference: str) -> str:
    """The name a demo document is attached under: it says the file is the demo's illustration of the act."""
    return f"{reference} (ilustrativo, demo).pdf"


def _citing(app: Tramita, documents: Stored | None, reference: str, record: Callable[[], Any]) -> Any:
    """Record an act; when `documents` holds the file of `reference`, attach it in the act's own save, as the
    API does for an act whose body names it in `attachments`."""
    stored = (documents or {}).get(reference)
    if stored is None or reference not in DOCUMENTS_1991:
        return record()
    attached = {"sha256": stored["sha256"], "name": attachment_name(reference), "type": stored["type"],
                "size": stored["size"]}
    return app.idempotently(None, record, Attaching(DOCUMENTS_1991[reference][0], [attached]))


def seed_demo(app: Tramita, say: Callable[[Sentence], None] = print, documents: Stored | None = None) -> bool:
    """Seed the registry and the four demo cases; False (and nothing done) when already seeded.

    `documents`: reference -> the stored file (sha256, type, size) of those of DOCUMENTS_1991 to attach."""
    seeded = app.seed_registry(IBGE, app.context(IBGE, date(1991, 12, 18)).today)
    say(Sentence("registry: %(count)s municipalities seeded", count=len(seeded)) if seeded
        else Sentence("registry: already seeded"))
    if app.case_exists(CASE_1991):
        say(Sentence("demo cases: already seeded"))
        return False
    extrema = creation_1992(app, say, documents)
    feijo = creation_2026(app, say)
    district_2026(app, say, blocking=feijo)
    waiting = awaiting_answers_2026(app, say)
    say(Sentence("demo cases: %(extrema)s, %(feijo)s, a district case refused by art-38, and %(waiting)s awaiting "
                 "answers", extrema=extrema, feijo=feijo, waiting=waiting))
    return True


def _refused(say: Callable[[Sentence], None], action: Callable[[], Any]) -> None:
    try:
        action()
    except LegalRuleError as refusal:
        say(Sentence("  refused as expected: %(article)s: %(reason)s", article=refusal.article,
                     reason=refusal.sentence))
    else:
        raise AssertionError("the demo expected a refusal")


#: The 1991 figures of the two origins (illustrative, recorded by their competent bodies).
FIGURES_1991: dict[str, dict[str, Any]] = {
    PLACIDO: {"population": 14000, "voters": 6000, "revenue": "400000.00", "buildings": 900, "area_km2": "2000"},
    GUIOMARD: {"population": 16000, "voters": 7000, "revenue": "450000.00", "buildings": 1100, "area_km2": "2300"},
}
FIGURE_BODY = {"voters": TRE, "revenue": SEFAZ}  # every other registry figure is IBGE's
ART_9_DOCUMENTS = {item: f"Ofício GG {n}/1991" for n, item in enumerate(
    ("art-4-I", "art-4-II", "art-4-III", "art-4-IV", "art-4-V", "art-4-VI"), start=1)}
#: Art. 4's findings of the 1991 creation: (body, item, value, share of each origin, State tax revenue).
FINDINGS_1991: tuple[tuple[Actor, str, Any, dict[str, Any] | None, str | None], ...] = (
    (IBGE, "art-4-I", 2400, {PLACIDO: 1600, GUIOMARD: 800}, None),
    (TRE, "art-4-II", 900, {PLACIDO: 600, GUIOMARD: 300}, None),
    (SEFAZ, "art-4-III", "95000.00", {PLACIDO: "60000.00", GUIOMARD: "35000.00"}, "30000000.00"),
    (IBGE, "art-4-IV", 80, {PLACIDO: 50, GUIOMARD: 30}, None),
    (SETOP, "art-4-V", True, None, None),
    (PGE, "art-4-VI", True, None, None),
    (SECTMA, "art-4-VI", True, None, None),
)


def record_figure_1991(app: Tramita, code: str, figure: str, value: Any, day: date = date(1991, 12, 19),
                       as_of: date = date(1991, 12, 1)) -> None:
    app.record_figure(code, FIGURE_BODY.get(figure, IBGE), day, figure=figure, value=value, as_of=as_of,
                      source=ILLUSTRATIVE)


def creation_1992(app: Tramita, say: Callable[[Sentence], None], documents: Stored | None = None) -> str:
    """Case 1: a creation under LC 35/1991 before the federal gate, from petition to conclusion."""
    for code, figures in FIGURES_1991.items():
        for figure, value in figures.items():
            record_figure_1991(app, code, figure, value)
    opened = app.open_case(GOVERNOR, date(1991, 12, 19), kind="creation", municipalities=[PLACIDO, GUIOMARD],
                           areas=[{"municipality": PLACIDO, "area_km2": "420.5", "description": "Vila Extrema"},
                                  {"municipality": GUIOMARD, "area_km2": "180", "description": "Nova Califórnia"}],
                           proposed_name="Extrema", documents=ART_9_DOCUMENTS)
    case = opened.number
    say(Sentence("%(case)s: creation petition filed by the Governor (Art. 8, 9); Plácido de Castro and Senador "
                 "Guiomard frozen", case=case))
    instruct_and_vote_1992(app, case, documents)
    law = dict(law="Lei 1.036/1992", seat_origin=PLACIDO, limits="descritos no anexo I",
               comarca="Plácido de Castro", districts=["Vila Extrema (sede)", "Nova Califórnia"],
               living_person_declaration=True)
    _refused(say, lambda: app.enact_law(case, GOVERNOR, date(1992, 1, 21), name="Extrema", **law))
    _citing(app, documents, law["law"], lambda: app.enact_law(case, GOVERNOR, date(1992, 1, 21), name="Vila Extrema",
                                                              **law))
    say(Sentence("%(case)s: Lei 1.036/1992 enacted (Art. 17); freeze lifted; Art. 26 documents due at installation",
                 case=case))
    if documents:
        say(Sentence("%(case)s: the decree, the TRE's resolution and the law attached as illustrative PDFs (by "
                     "SHA-256)", case=case))
    install_1993(app, case)
    say(Sentence("%(case)s: installed on 01/01/1993 (Art. 19); Art. 22, 23 and 24 deadlines open", case=case))
    close_obligations_1993(app, case)
    say(Sentence("%(case)s: Senador Guiomard's books delivered late (Art. 22 par. ún.); the case is %(stage)s",
                 case=case, stage=Sentence(STAGE_NAMES[app.ask_case(case, lambda current: current.stage)])))
    return case


def instruct_and_vote_1992(app: Tramita, case: str, documents: Stored | None = None) -> None:
    """Art. 4 findings and Art. 5 verification, the plebiscite (Art. 11-15) and the CCJ's bill (Art. 16)."""
    for n, (actor, item, value, by_origin, tax) in enumerate(FINDINGS_1991, start=1):
        app.record_finding(case, actor, date(1991, 12, 20), item=item, value=value, by_origin=by_origin,
                           state_tax_revenue=tax, document=f"Laudo {n}/1991")
    _plebiscite_to_bill(app, case, {"area": {"registered": 900, "turnout": 700, "yes": 600, "no": 80, "blank": 12,
                                             "void": 8}},
                        decreed=(date(1991, 12, 27), "Decreto Legislativo 12/1991"),
                        scheduled=(date(1991, 12, 30), "Resolução TRE-AC 40/1991", date(1992, 1, 5)),
                        homologated=date(1992, 1, 7), communicated=date(1992, 1, 8), registered=date(1992, 1, 9),
                        bill=(date(1992, 1, 10), "Projeto de Lei 3/1992"), documents=documents)


def _plebiscite_to_bill(app: Tramita, case: str, populations: dict[str, Any], *, decreed: tuple[date, str],
                        scheduled: tuple[date, str, date], homologated: date, communicated: date, registered: date,
                        bill: tuple[date, str], documents: Stored | None = None) -> None:
    """Art. 11-16: decree, TRE resolution, homologation, communication, plenary registration, the CCJ's bill."""
    _citing(app, documents, decreed[1], lambda: app.decree_plebiscite(case, PRESIDENT, decreed[0], decree=decreed[1]))
    _citing(app, documents, scheduled[1], lambda: app.schedule_plebiscite(
        case, TRE, scheduled[0], resolution=scheduled[1], plebiscite_date=scheduled[2]))
    app.homologate_result(case, TRE, homologated, voted_on=scheduled[2], populations=populations)
    app.communicate_result(case, TRE, communicated)
    app.register_in_plenary(case, PRESIDENT, registered)
    app.draft_bill(case, CCJ, bill[0], bill=bill[1])


def install_1993(app: Tramita, case: str) -> None:
    """Art. 40 (creation), Art. 20 (Administrator), Art. 26 (personnel documents), Art. 19 (installation)."""
    _communicate(app, case, "creation", date(1992, 1, 25))
    app.send_administrator_list(case, GOVERNOR, date(1992, 2, 3), names=["Ana Souza", "Bento Lima", "Carla Reis"])
    app.appoint_administrator(case, PRESIDENT, date(1992, 2, 10), administrator="Bento Lima")
    for code, day in ((PLACIDO, date(1992, 12, 15)), (GUIOMARD, date(1992, 12, 20))):
        app.send_personnel_documents(case, municipal("municipality", code), day, origin=code,
                                     document=f"Ofício {code} pessoal")
    app.install_municipality(case, PRESIDENT, date(1993, 1, 1), mayor="Prefeito Eleito", vice_mayor="Vice Eleita",
                             councillors=[f"Vereador {n}" for n in range(1, 10)])


def close_obligations_1993(app: Tramita, case: str) -> None:
    """Art. 25, Art. 40 (installation), then Art. 22-24 in date order (Senador Guiomard's books late)."""
    new = app.ask_case(case, lambda current: current.new_municipality)
    mayor, council = municipal("mayor", new), municipal("council", new)
    app.fix_remuneration(case, council, date(1993, 1, 5), act="Resolução 1/1993")
    _communicate(app, case, "installation", date(1993, 1, 10))
    app.submit_prefect_bill(case, mayor, date(1993, 1, 28), item="art-23-I", bill="Projeto de Lei 1/1993")
    app.transfer_ledger(case, municipal("municipality", PLACIDO), date(1993, 2, 20), origin=PLACIDO,
                        document="Termo de entrega 1/1993")
    app.submit_prefect_bill(case, mayor, date(1993, 2, 26), item="art-23-II", bill="Projeto de Lei 2/1993")
    app.transfer_ledger(case, municipal("municipality", GUIOMARD), date(1993, 3, 20), origin=GUIOMARD,
                        document="Termo de entrega 2/1993")
    app.submit_prefect_bill(case, mayor, date(1993, 3, 30), item="art-23-III", bill="Projeto de Lei 3/1993")
    app.submit_prefect_bill(case, mayor, date(1993, 4, 28), item="art-23-IV", bill="Projeto de Lei 4/1993")
    app.promulgate_organic_law(case, council, date(1993, 6, 15), organic_law="Lei Orgânica 1993")


def _communicate(app: Tramita, case: str, subject: str, day: date) -> None:
    """Art. 40: the Assembly sends the law to every recipient due."""
    ctx = app.context(PRESIDENT, day)
    due = app.ask_case(case, lambda current: [item for item in current.communications_due(ctx)
                                              if item.startswith(f"{subject}:") and item not in current.communications])
    for n, item in enumerate(due, start=1):
        recipient = item.split(":", 1)[1]
        app.send_communication(case, PRESIDENT, day, subject=subject, recipient=recipient,
                               document=f"Ofício {day.month * 10 + n}/{day.year}")


def voters_creation(app: Tramita, on: date, code: str, name: str, *, area_km2: str, voters: int, first_title: int,
                    zone: str) -> str:
    """Art. 8: the Mesa files a voters' representation for a creation from one municipality; the case number."""
    signatures = [{"title": make_voter_title(f"{first_title + n:08d}", "24"), "zone": zone,
                   "section": str(n % 7 + 1), "area": code} for n in range(voters)]
    return app.open_case(MESA, on, kind="creation", municipalities=[code], proposed_name=name, signatures=signatures,
                         areas=[{"municipality": code, "area_km2": area_km2, "description": name}]).number


def creation_2026(app: Tramita, say: Callable[[Sentence], None]) -> str:
    """Case 2: a voters' creation petition from Feijó in 2026, stopped at its law by the federal gate."""
    app.record_figure(FEIJO, SEFAZ, date(2026, 3, 2), figure="revenue", value="9000000.00",
                      as_of=date(2025, 12, 31), source=ILLUSTRATIVE)
    app.record_figure(FEIJO, IBGE, date(2026, 3, 2), figure="buildings", value=4200,
                      as_of=date(2025, 12, 31), source=ILLUSTRATIVE)
    case = voters_creation(app, date(2026, 3, 2), FEIJO, "Vila Tarumã", area_km2="1900", voters=32,
                           first_title=10000000, zone="5")
    say(Sentence("%(case)s: voters' representation (32 signatures, Art. 8) opened; Feijó frozen (Art. 38); "
                 "impediment: cf-art-18-par-4", case=case))
    answers = {"ibge": date(2026, 3, 20), "tre": date(2026, 3, 23), "sefaz": date(2026, 3, 25),
               "setop": date(2026, 4, 20), "pge": date(2026, 4, 1), "sectma": date(2026, 4, 2)}
    requisitions = [app.issue_requisition(case, MESA, date(2026, 3, 5), body=body, items=["art-4"]).result
                    for body in answers]
    for requisition in requisitions:
        app.receive_requisition(case, MESA, date(2026, 3, 9), requisition=requisition)
    bodies = {"ibge": IBGE, "tre": TRE, "sefaz": SEFAZ, "setop": SETOP, "pge": PGE, "sectma": SECTMA}
    findings = (("ibge", "art-4-I", 3100, None), ("ibge", "art-4-IV", 140, None), ("tre", "art-4-II", 1800, None),
                ("sefaz", "art-4-III", "600000.00", "210000000.00"), ("pge", "art-4-VI", True, None),
                ("sectma", "art-4-VI", True, None), ("setop", "art-4-V", True, None))
    for n, (body, item, value, tax) in enumerate(sorted(findings, key=lambda f: answers[f[0]]), start=1):
        app.record_finding(case, bodies[body], answers[body], item=item, value=value, state_tax_revenue=tax,
                           document=f"Ofício {body.upper()} {n}/2026")
    say(Sentence("%(case)s: SETOP answered its requisition late (Art. 10: 30 days from receipt)", case=case))
    _plebiscite_to_bill(app, case, {"area": {"registered": 1800, "turnout": 1300, "yes": 1000, "no": 250,
                                             "blank": 30, "void": 20}},
                        decreed=(date(2026, 5, 5), "Decreto Legislativo 7/2026"),
                        scheduled=(date(2026, 5, 12), "Resolução TRE-AC 1.900/2026", date(2026, 8, 16)),
                        homologated=date(2026, 8, 20), communicated=date(2026, 8, 27), registered=date(2026, 8, 31),
                        bill=(date(2026, 9, 15), "Projeto de Lei Complementar 22/2026"))
    _refused(say, lambda: app.enact_law(case, GOVERNOR, date(2026, 10, 1), law="Lei Complementar 400/2026",
                                        name="Vila Tarumã", seat_origin=FEIJO,
                                        limits="anexo I", comarca="Feijó", districts=["Vila Tarumã (sede)"],
                                        living_person_declaration=True))
    return case


def district_2026(app: Tramita, say: Callable[[Sentence], None], blocking: str) -> str:
    """Case 3: Feijó creates a district while case 2 freezes it: the municipal law is refused (Art. 38)."""
    mayor = municipal("mayor", FEIJO)
    opened = app.open_case(mayor, date(2026, 10, 5), kind="district_creation", municipalities=[FEIJO],
                           district="Vila Jurupari")
    case = opened.number
    for n, (actor, item, value) in enumerate(((IBGE, "art-31-I", 45), (IBGE, "art-31-II", 620),
                                              (PGE, "art-31-III", True), (SECTMA, "art-31-III", True)), start=1):
        app.record_finding(case, actor, date(2026, 10, 20), item=item, value=value, document=f"Laudo {n}/2026")
    _refused(say, lambda: app.enact_law(case, municipal("council", FEIJO), date(2026, 11, 10),
                                        law="Lei Municipal 300/2026", living_person_declaration=True))
    say(Sentence("%(case)s: district law refused while %(blocking)s freezes Feijó (Art. 38)", case=case,
                 blocking=blocking))
    return case


def awaiting_answers_2026(app: Tramita, say: Callable[[Sentence], None]) -> str:
    """Case 4: a voters' creation from Tarauacá whose requisitions were received on Thu 2026-10-08 (answers due
    Mon 2026-11-09: 30 days end on Sat 11-07) and never answered; the IBGE refused its requisition (Art. 10 §1)."""
    case = voters_creation(app, date(2026, 10, 1), TARAUACA, "Foz do Muru", area_km2="2100", voters=31,
                           first_title=30000000, zone="9")
    ibge, tre = (app.issue_requisition(case, MESA, date(2026, 10, 5), body=body, items=["art-4"]).result
                 for body in ("ibge", "tre"))
    for requisition in (ibge, tre):
        app.receive_requisition(case, MESA, date(2026, 10, 8), requisition=requisition)
    app.refuse_requisition(case, MESA, date(2026, 10, 13), requisition=ibge,
                           reason="the IBGE answers the Mesa only after the census (demo)")
    say(Sentence("%(case)s: Tarauacá's requisitions received on 08/10/2026; the IBGE refused (Art. 10 §1), the TRE "
                 "has not answered: the scheduler alerts both", case=case))
    return case
