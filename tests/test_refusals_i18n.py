"""Every refusal the API gives is in Portuguese when `Accept-Language` asks for it and in English otherwise: the
domain's sentences (their templates and terms through the catalogue, their values kept), marshmallow's and the
fields' messages; `type`, `article`, `field`, `figures`, `competent` and the keys of `errors` never change. The
catalogue covers every template of the domain and of the fields, with the same placeholders."""

from __future__ import annotations

import ast
import re
from datetime import date
from typing import Any

import pytest
from babel.messages.pofile import read_po

from domain.errors import Listing, Sentence, Term
from tests.api_client import ApiHarness, Clock
from tests.refusal_templates import (
    field_templates, message_arguments, domain_templates, run_time_terms, wordless,
)
from tests.test_api import FEIJO, two_districts_petition, voters_petition
from tests.test_pages_i18n import CATALOGUE
from tests.test_statute_amendments import LATER, PERIOD, _body

PORTUGUESE = {"Accept-Language": "pt-BR"}
KEPT = ("type", "status", "article", "field", "figures", "competent")


@pytest.fixture
def api(tmp_path):  # noqa: ANN201
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}")
    yield harness
    harness.close()


def both(api: ApiHarness, method: str, path: str, headers: dict[str, str], **kwargs: Any) -> tuple[dict, dict]:
    """The same request answered in English (no Accept-Language) and in Portuguese; nothing recorded by either."""
    before = api.notifications()
    english = api.client.open(path, method=method, headers=headers, **kwargs)
    portuguese = api.client.open(path, method=method, headers={**headers, **PORTUGUESE}, **kwargs)
    assert english.status_code == portuguese.status_code, (english.get_json(), portuguese.get_json())
    assert api.notifications() == before
    english, portuguese = english.get_json(), portuguese.get_json()
    for member in KEPT:
        assert english.get(member) == portuguese.get(member), member
    assert (english.get("errors") or {}).keys() == (portuguese.get("errors") or {}).keys()
    return english, portuguese


def test_an_act_out_of_order_is_refused_409_in_portuguese_when_asked_and_in_english_otherwise(api):
    """Art. 12: the TRE's resolution follows the plebiscite's decree; the act names follow as codes."""
    case = api.open_case("assembly-mesa", date(2026, 3, 2), **voters_petition())["case_id"]
    english, portuguese = both(api, "POST", f"/cases/{case}/acts/plebiscite-scheduled",
                               api.headers("tre", **{"If-Match": "*"}),
                               json={"occurred_on": "2026-03-05", "resolution": "Res. TRE-AC 1/2026",
                                     "plebiscite_date": "2026-06-07"})
    assert english["status"] == 409 and english["title"] == "Conflict" and portuguese["title"] == "Conflito"
    article = english["article"]
    assert english["detail"].startswith(f"{article}: plebiscite-scheduled follows plebiscite-decreed")
    assert "none was recorded in case" in english["detail"]
    assert portuguese["detail"].startswith(f"{article}: plebiscite-scheduled sucede plebiscite-decreed")
    assert "nenhum foi registrado no processo LC35-2026-" in portuguese["detail"]


def test_an_act_by_a_body_the_law_does_not_name_is_refused_403_naming_the_competent_bodies_in_both_languages(api):
    case = api.open_case("assembly-mesa", date(2026, 3, 2), **voters_petition())["case_id"]
    english, portuguese = both(api, "POST", f"/cases/{case}/acts/requisition-issued",
                               api.headers("ibge", **{"If-Match": "*"}),
                               json={"occurred_on": "2026-03-05", "body": "ibge", "items": ["art-4-I"]})
    assert english["status"] == 403 and english["competent"]
    competent = english["competent"]
    assert english["detail"] == (f"{english['article']}: requisition-issued is recorded by {' or '.join(competent)}; "
                                 "ibge is not the competent body")
    assert portuguese["detail"] == (f"{english['article']}: requisition-issued é registrado por "
                                    f"{' ou '.join(competent)}; ibge não é o órgão competente")
    assert portuguese["title"] == "Proibido"


def test_a_threshold_refused_under_art_8_par_unico_keeps_its_figures_and_says_the_comparison_in_portuguese(api):
    """Art. 8 par. ún.: 29 signatures in the Envira district, 30 required: the figures are the same in both answers;
    the comparison ("at least") is a term of the catalogue."""
    english, portuguese = both(api, "POST", "/cases", api.headers("assembly-mesa"),
                               json=two_districts_petition(30, 29))
    assert english["status"] == 422 and english["article"] == "art-8-par-unico"
    assert english["figures"] == {"area": f"{FEIJO}/Envira", "required": 30, "found": 29}
    assert english["detail"] == (f"art-8-par-unico: area {FEIJO}/Envira has 29 valid signatures; at least 30 are "
                                 "required per district or area (Art. 8 par. ún.)")
    assert portuguese["detail"] == (f"art-8-par-unico: a área {FEIJO}/Envira tem 29 assinaturas válidas; exigem-se "
                                    "pelo menos 30 por distrito ou área (art. 8, parágrafo único)")


def test_a_malformed_field_is_refused_422_with_marshmallows_and_the_fields_messages_translated(api):
    english, portuguese = both(api, "POST", "/cases", api.headers("assembly-mesa"),
                               json={"occurred_on": "never", "municipalities": [FEIJO], "surplus": 1})
    assert english["status"] == 422 and english["field"] == portuguese["field"]
    errors, erros = english["errors"]["json"], portuguese["errors"]["json"]
    assert errors["occurred_on"] == ["Not a valid date: give YYYY-MM-DD."]
    assert erros["occurred_on"] == ["Não é uma data válida: use AAAA-MM-DD."]
    assert errors["kind"] == ["Missing data for required field."]
    assert erros["kind"] == ["Falta o dado de um campo obrigatório."]
    assert errors["surplus"] == ["Unknown field."] and erros["surplus"] == ["Campo desconhecido."]
    assert portuguese["detail"].startswith("a requisição está malformada: json.")
    assert "Não é uma data válida: use AAAA-MM-DD." in portuguese["detail"]


def test_a_field_message_with_values_keeps_them_in_portuguese(api):
    """A count out of range: marshmallow's Range message, its bounds kept."""
    english, portuguese = both(api, "GET", "/cases?limit=0", api.headers("auditor"))
    assert english["status"] == 422
    (message,) = english["errors"]["query"]["limit"]
    (mensagem,) = portuguese["errors"]["query"]["limit"]
    bounds = re.findall(r"\d+", message)
    assert message.startswith("Must be greater than or equal to") and mensagem.startswith("Deve ser maior ou igual")
    assert re.findall(r"\d+", mensagem) == bounds


def test_an_amendment_refused_by_entry_names_each_entry_in_both_languages(tmp_path):
    harness = ApiHarness(f"sqlite:///{tmp_path / 'api.sqlite'}", clock=Clock(LATER))
    try:
        body = _body(PERIOD)
        body["parameters"].append({"id": "art-99.anything", "article": "art-99", "effective_from": "2027-03-01",
                                   "value": 1, "source": "x"})
        english, portuguese = both(harness, "POST", "/statute/amendments", harness.headers("assembly-mesa"),
                                   json=body)
    finally:
        harness.close()
    assert english["status"] == 422 and english["type"].endswith("statute-amendment-refused")
    assert english["field"] == "parameters[2]"
    assert english["errors"]["parameters[2]"] == [
        "the statute has no parameter 'art-99.anything': an amendment gives new versions to the parameters the "
        "domain applies (GET /statute lists them)"]
    assert portuguese["errors"]["parameters[2]"] == [
        "o estatuto não tem o parâmetro 'art-99.anything': uma alteração dá novas versões aos parâmetros que o "
        "domínio aplica (GET /statute os lista)"]
    assert english["detail"].startswith("parameters[2]: the amendment is refused and nothing was recorded: "
                                        "parameters[2]: the statute has no parameter")
    assert portuguese["detail"].startswith("parameters[2]: a alteração foi recusada e nada foi registrado: "
                                           "parameters[2]: o estatuto não tem o parâmetro")


def test_a_missing_bearer_token_and_an_unknown_municipality_are_refused_in_both_languages(api):
    english, portuguese = both(api, "GET", "/cases", {})
    assert english["detail"] == "a bearer token is required (Authorization: Bearer trm_…)"
    assert portuguese["detail"] == "é necessário um token bearer (Authorization: Bearer trm_…)"
    english, portuguese = both(api, "POST", "/municipalities/9999999/figures",
                               api.headers("ibge", **{"If-Match": "*"}),
                               json={"occurred_on": "2026-03-05", "figure": "population", "value": 1,
                                     "as_of": "2026-03-01", "source": "IBGE"})
    assert english["status"] == 422, english
    assert english["detail"] == "no municipality 9999999 in the registry"
    assert portuguese["detail"] == "não há município 9999999 no cadastro"


# ------------------------------------------------------------------------------------------ the sentences


def test_a_sentence_renders_in_english_by_default_and_through_a_catalogue_with_its_terms_and_numbers():
    said = Sentence("%(act)s must be recorded by %(roles)s; %(count)s %(kind)s", act="law-enacted",
                    roles=Listing(["assembly-mesa", "tre"], Term("or")), count=1500, kind=Term("creation"))
    assert str(said) == "law-enacted must be recorded by assembly-mesa or tre; 1,500 creation"
    words = {"%(act)s must be recorded by %(roles)s; %(count)s %(kind)s": "%(act)s por %(roles)s; %(count)s %(kind)s",
             "or": "ou", "creation": "criação"}
    assert said.render(lambda text: words.get(text, text), lambda n: f"{n:,}".replace(",", ".")) == \
        "law-enacted por assembly-mesa ou tre; 1.500 criação"


def test_no_refusal_of_the_domain_is_built_as_an_f_string_so_each_is_a_template_for_the_catalogue():
    built = [(path, line, name) for path, line, name, argument in message_arguments()
             if isinstance(argument, (ast.JoinedStr, ast.BinOp))
             or (isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute)
                 and argument.func.attr in ("join", "format"))]
    assert not built, built
    assert len(domain_templates()) > 200  # the scan found the domain's messages


def placeholders(text: str) -> list[str]:
    return sorted(re.findall(r"%\((\w+)\)[sr]|\{(\w+)\}", text))


def test_every_template_of_the_refusals_and_the_fields_has_a_portuguese_translation_with_its_placeholders():
    with CATALOGUE.open("rb") as po:
        translated = {m.id: m.string for m in read_po(po, locale="pt_BR") if m.id}
    templates = {t for t in domain_templates() | run_time_terms() | field_templates() if not wordless(t)}
    missing = sorted(t for t in templates if not translated.get(t))
    assert not missing, "untranslated (add them to api/translations/pt_BR/LC_MESSAGES/messages.po): " + repr(missing)
    different = sorted(t for t in templates if placeholders(t) != placeholders(translated[t]))
    assert not different, different
