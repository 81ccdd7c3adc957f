"""End to end over HTTP only: a 1991-93 creation from petition to installation and its Art. 22/23/24 deadlines,
each act recorded with the token of the body the law names, then audited (timeline, chain, offline export)."""

from __future__ import annotations

import hashlib
import json
from datetime import date

import pytest

from domain.demo import ART_9_DOCUMENTS, FIGURE_BODY, FIGURES_1991, FINDINGS_1991, GUIOMARD, IBGE, PLACIDO
from tests.api_client import ApiHarness
from tests.conftest import BACKENDS


@pytest.fixture(params=BACKENDS)
def api(request, new_database_url):  # noqa: ANN001, ANN201
    harness = ApiHarness(new_database_url(request.param))
    yield harness
    harness.close()


def record_1991_figures(api: ApiHarness) -> None:
    """Art. 4 par. ún.: IBGE, the TRE and SEFAZ record the origins' figures in force in 1991 (Art. 5 needs them)."""
    for code, figures in FIGURES_1991.items():
        for figure, value in figures.items():
            role = FIGURE_BODY.get(figure, IBGE).role
            response = api.client.post(
                f"/municipalities/{code}/figures", headers=api.headers(role),
                json={"occurred_on": "1991-12-19", "figure": figure, "value": value, "as_of": "1991-12-01",
                      "source": "test: illustrative 1991 figure"})
            assert response.status_code == 201, response.get_json()


def open_1991_petition(api: ApiHarness) -> dict:
    """Art. 8, 9 over HTTP: the registry's 1991 figures, then the Governor's petition; the answer."""
    record_1991_figures(api)
    return api.open_case(
        "governor", date(1991, 12, 19), kind="creation", municipalities=[PLACIDO, GUIOMARD],
        areas=[{"municipality": PLACIDO, "area_km2": "420.5", "description": "Vila Extrema"},
               {"municipality": GUIOMARD, "area_km2": "180", "description": "Nova Califórnia"}],
        proposed_name="Vila Extrema", documents=ART_9_DOCUMENTS)


def petition_to_law(api: ApiHarness) -> str:
    """Art. 8-17 over HTTP: petition, findings, plebiscite, communication, plenary, bill, law. The case id."""
    opened = open_1991_petition(api)
    case = opened["case_id"]
    assert [e["type"] for e in opened["events"]] == ["Case.PetitionFiled"]
    assert api.get(f"/cases/{case}").get_json()["frozen"] == [PLACIDO, GUIOMARD]
    for actor, item, value, by_origin, tax in FINDINGS_1991:
        api.act(case, "finding-recorded", actor.role, date(1991, 12, 20), item=item, value=value,
                by_origin=by_origin, state_tax_revenue=tax, document=f"Laudo {item} 1991")
    api.act(case, "plebiscite-decreed", "assembly-president", date(1991, 12, 27), decree="Decreto Legislativo 12/1991")
    api.act(case, "plebiscite-scheduled", "tre", date(1991, 12, 30), resolution="Resolução TRE-AC 40/1991",
            plebiscite_date="1992-01-05")
    homologated = api.act(case, "plebiscite-result-homologated", "tre", date(1992, 1, 7), voted_on="1992-01-05",
                          populations={"area": {"registered": 900, "turnout": 700, "yes": 600, "no": 80,
                                                "blank": 12, "void": 8}})
    assert [e["type"] for e in homologated["events"]] == ["Case.PlebisciteResultHomologated", "Case.DeadlineOpened"]
    assert [e["sequence"] for e in homologated["events"]] == [homologated["version"] - 1, homologated["version"]]
    assert api.get(f"/cases/{case}").get_json()["result"]["favourable"] is True
    api.act(case, "result-communicated", "tre", date(1992, 1, 8))
    api.act(case, "result-registered-in-plenary", "assembly-president", date(1992, 1, 9))
    api.act(case, "creation-bill-drafted", "ccj", date(1992, 1, 10), bill="Projeto de Lei 3/1992")
    law = api.act(case, "law-enacted", "governor", date(1992, 1, 21), law="Lei 1.036/1992", name="Vila Extrema",
                  seat_origin=PLACIDO, limits="descritos no anexo I", comarca="Plácido de Castro",
                  districts=["Vila Extrema (sede)", "Nova Califórnia"], living_person_declaration=True)
    assert law["version"] == api.get(f"/cases/{case}").get_json()["version"]
    assert api.get(f"/cases/{case}").get_json()["frozen"] == []
    return case


def install(api: ApiHarness, case: str) -> str:
    """Art. 40 (the creation's communications), Art. 20, Art. 26, Art. 19 over HTTP. The new municipality."""
    due = api.get(f"/cases/{case}").get_json()["obligations"]["communications"]
    for item in due:
        subject, recipient = item.split(":", 1)
        api.act(case, "communication-sent", "assembly-president", date(1992, 1, 25), subject=subject,
                recipient=recipient, document=f"Ofício {item}")
    api.act(case, "administrator-list-sent", "governor", date(1992, 2, 3),
            names=["Ana Souza", "Bento Lima", "Carla Reis"])
    api.act(case, "administrator-appointed", "assembly-president", date(1992, 2, 10), administrator="Bento Lima")
    for code, day in ((PLACIDO, date(1992, 12, 15)), (GUIOMARD, date(1992, 12, 20))):
        api.act(case, "personnel-documents-sent", "municipality", day, municipality=code, origin=code,
                document=f"Ofício {code} pessoal")
    installed = api.act(case, "municipality-installed", "assembly-president", date(1993, 1, 1),
                        mayor="Prefeito Eleito", vice_mayor="Vice Eleita",
                        councillors=[f"Vereador {n}" for n in range(1, 10)])
    document = api.get(f"/cases/{case}").get_json()
    assert document["stage"] == "installed" and document["version"] == installed["version"]
    return document["new_municipality"]


def deadlines(api: ApiHarness, case: str) -> dict[str, dict]:
    response = api.get(f"/cases/{case}/deadlines")
    assert response.status_code == 200
    return {row["deadline"]: row for row in response.get_json()}


def test_a_creation_is_driven_over_http_from_petition_to_installation_and_its_art_22_23_deadlines(api):
    case = petition_to_law(api)
    new = install(api, case)

    # Installed Fri 1993-01-01 (docs/law/deadlines.md: start day excluded, calendar days, moved to the next business
    # day): Art. 23-I 30 days -> Sun 01-31 -> Mon 02-01; Art. 22 and 23-II 60 days -> Tue 03-02; 23-III 90 days
    # -> Thu 04-01; 23-IV 120 days -> Sat 05-01 (also Labour Day) -> Mon 05-03; Art. 24 six months -> Thu 07-01.
    due = {key: row["due_on"] for key, row in deadlines(api, case).items()}
    assert due == {
        "result-communication": "1992-01-22", "plenary-registration": "1992-01-13", "creation-bill": "1992-02-07",
        f"personnel-documents:{PLACIDO}": "1993-01-01", f"personnel-documents:{GUIOMARD}": "1993-01-01",
        f"ledger-transfer:{PLACIDO}": "1993-03-02", f"ledger-transfer:{GUIOMARD}": "1993-03-02",
        "budget-proposal": "1993-02-01", "administrative-organization-bill": "1993-03-02",
        "civil-service-regime-bill": "1993-04-01", "staff-framework-bill": "1993-05-03", "organic-law": "1993-07-01",
    }

    # Art. 22: an origin delivers only its own books (a token of another municipality is refused).
    refused = api.client.post(f"/cases/{case}/acts/ledger-transferred", headers=api.headers(
        "municipality", GUIOMARD, **{"If-Match": api.etag(case)}),
        json={"occurred_on": "1993-02-20", "origin": PLACIDO, "document": "Termo 1/1993"})
    assert refused.status_code == 403 and refused.get_json()["competent"] == ["mayor", "municipality"]

    api.act(case, "prefect-bill-submitted", "mayor", date(1993, 1, 28), municipality=new, item="art-23-I",
            bill="Projeto art-23-I")
    api.act(case, "ledger-transferred", "municipality", date(1993, 2, 20), municipality=PLACIDO, origin=PLACIDO,
            document="Termo de entrega 1/1993")
    api.act(case, "prefect-bill-submitted", "mayor", date(1993, 2, 26), municipality=new, item="art-23-II",
            bill="Projeto art-23-II")
    api.act(case, "ledger-transferred", "municipality", date(1993, 3, 20), municipality=GUIOMARD, origin=GUIOMARD,
            document="Termo de entrega 2/1993")
    api.act(case, "prefect-bill-submitted", "mayor", date(1993, 3, 30), municipality=new, item="art-23-III",
            bill="Projeto art-23-III")
    api.act(case, "prefect-bill-submitted", "mayor", date(1993, 4, 28), municipality=new, item="art-23-IV",
            bill="Projeto art-23-IV")

    rows = deadlines(api, case)
    assert {k: (r["status"], r["days_late"]) for k, r in rows.items() if k.startswith(("ledger", "budget",
            "administrative", "civil", "staff"))} == {
        f"ledger-transfer:{PLACIDO}": ("met-on-time", 0), f"ledger-transfer:{GUIOMARD}": ("met-late", 18),
        "budget-proposal": ("met-on-time", 0), "administrative-organization-bill": ("met-on-time", 0),
        "civil-service-regime-bill": ("met-on-time", 0), "staff-framework-bill": ("met-on-time", 0)}
    # Art. 24's organic law is still open, and on the pinned day (2026) long missed.
    assert (rows["organic-law"]["status"], rows["organic-law"]["recorded_status"]) == ("missed", "open")

    events = api.get(f"/cases/{case}/events").get_json()
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["type"] == "Case.PetitionFiled" and events[0]["actor"]["role"] == "governor"
    assert all(e["prev_hash"] == p["hash"] for p, e in zip(events, events[1:]))
    assert api.get(f"/cases/{case}/verify").get_json()["ok"] is True


def test_an_exported_case_file_verifies_offline_with_the_documented_hash_recipe(api):
    case = petition_to_law(api)
    response = api.get(f"/cases/{case}/export")
    assert response.status_code == 200 and response.mimetype == "application/jsonl"
    previous = "0" * 64
    *lines, closing = response.get_data(as_text=True).splitlines()
    for line in lines:  # docs/audit.md, "The export", with nothing but hashlib and json
        document = json.loads(line)
        stored = document.pop("hash")
        document.pop("signature", None), document.pop("proof")  # the other unhashed members
        encoded = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        assert hashlib.sha256(encoded).hexdigest() == stored
        assert document["prev_hash"] == previous
        previous = stored
    assert len(lines) == len(api.get(f"/cases/{case}/events").get_json())
    assert set(json.loads(closing)) == {"checkpoint", "case_head", "not_yet_covered"}
