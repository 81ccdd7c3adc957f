"""`next_acts` reaches the people who act: `GET /cases/{id}` lists what the case's lifecycle admits now (with the
article and the competent bodies), the OpenAPI document links the case to each act's operation, an act outside
the list is refused naming the article that orders it, and `tramita replay` prints the same list."""

from __future__ import annotations

from datetime import date

import pytest

from tests.api_client import ApiHarness
from tests.test_api_walk import open_1991_petition
from tramita.cli import main


@pytest.fixture
def api(tmp_path):
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}")
    yield harness
    harness.close()


def test_a_case_answers_the_acts_its_lifecycle_admits_now_and_refuses_one_it_does_not(api, monkeypatch, capsys):
    case = open_1991_petition(api)["case_id"]
    answer = api.get(f"/cases/{case}").get_json()
    offered = {entry["act"]: entry for entry in answer["next_acts"]}
    assert offered == {entry["act"]: entry for entry in api.app.next_acts(api.app.get_case(case))}
    assert offered["finding-recorded"]["article"] == "art-4-par-unico"
    assert "plebiscite-scheduled" not in offered  # Art. 12: the TRE schedules a plebiscite the Assembly decreed
    links = api.client.get("/openapi.json").get_json()["paths"]["/cases/{case_ref}"]["get"]["responses"]["200"]["links"]
    assert set(offered) <= set(links)
    refused = api.act(case, "plebiscite-scheduled", "tre", date(1991, 12, 30), expect=409,
                      resolution="Resolução TRE-AC 40/1991", plebiscite_date="1992-01-05")
    assert refused["article"] == "art-12"

    monkeypatch.setenv("TRAMITA_DATABASE_URL", api.url)
    assert main(["replay", answer["number"]]) == 0
    printed = capsys.readouterr().out.split("próximos atos:", 1)[1].splitlines()[1:]
    assert [line.split()[0] for line in printed] == [entry["act"] for entry in answer["next_acts"]]
    assert all(entry["article"] in line for entry, line in zip(answer["next_acts"], printed))




def test_a_case_read_as_of_a_legal_date_answers_the_acts_admitted_on_that_date(api):
    case = open_1991_petition(api)["case_id"]
    then = api.get(f"/cases/{case}?as_of=1991-12-19").get_json()
    assert then["next_acts"] == api.app.next_acts(api.app.get_case(case), date(1991, 12, 19))
    assert {entry["act"] for entry in then["next_acts"]} >= {"finding-recorded"}
