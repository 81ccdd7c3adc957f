"""The clerk's desk through plain HTTP: the forms of the case page and of `/processos/novo`, posted form-encoded with
a session cookie and the CSRF token, as a browser without script would post them (api/pages/forms.py)."""

from __future__ import annotations

import hashlib
import re
from io import BytesIO

import pytest

from api.acts import ACTS
from api.pages import form_fields, form_labels
from api.schemas import PetitionSchema
from domain.demo import FEIJO
from marshmallow import fields
from tests.api_client import ApiHarness
from tests.test_api import signatures
from tests.test_pages import csrf_of, sign_in, text

NUMBER = "LC35-2026-0001"


def tiny_pdf() -> bytes:
    """A small valid PDF of one empty page (its cross-reference offsets computed)."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    start = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, start)
    return bytes(out)


@pytest.fixture
def api(tmp_path):  # noqa: ANN201
    harness = ApiHarness(f"sqlite:///{tmp_path / 'forms.sqlite'}",
                         config={"TRAMITA_SESSION_KEY": str(tmp_path / "session.key")})
    yield harness
    harness.close()


def drawn(client, path: str) -> tuple[dict[str, str], str]:  # noqa: ANN001
    """The hidden fields of the form at `path` (CSRF token, one-time key, version) and the page."""
    answer = client.get(path)
    assert answer.status_code == 200, text(answer)
    page = answer.get_data(as_text=True)
    hidden = dict(re.findall(r'<input type="hidden" name="(csrf|chave|versao|kind)" value="([^"]*)"', page))
    return hidden, page


def voters_lines(count: int = 32) -> str:
    return "\n".join(f"{s['title']}; {s['zone']}; {s['section']}; {s['area']}" for s in signatures(count))


def file_creation(client, **overrides: str):  # noqa: ANN001, ANN201
    hidden, _ = drawn(client, "/processos/novo?tipo=creation")
    form = {**hidden, "occurred_on": "02/03/2026", "municipalities": [FEIJO], "proposed_name": "Vila Tarumã",
            "areas": f"{FEIJO}; ; 1.900,5; Vila Tarumã", "signatures": voters_lines(), **overrides}
    return client.post("/processos/novo", data=form)


def version(api: ApiHarness) -> int:
    return api.get(f"/cases/{NUMBER}").get_json()["version"]


def events_after(api: ApiHarness, before: int) -> list[str]:
    return [e["type"] for e in api.get(f"/cases/{NUMBER}/events").get_json() if e["sequence"] > before]


def record(api: ApiHarness, act: str, **values):  # noqa: ANN003, ANN201
    hidden, _ = drawn(api.client, f"/processos/{NUMBER}/atos/{act}")
    return api.client.post(f"/processos/{NUMBER}/atos/{act}", data={**hidden, **values},
                           content_type="multipart/form-data")


def refusals(answer) -> list[str]:  # noqa: ANN001
    return [re.sub(r"\s+", " ", m).strip() for m in re.findall(
        r'<p class="field-error" role="alert">(.*?)</p>', answer.get_data(as_text=True), re.S)]


def field_errors(answer, name: str) -> list[str]:  # noqa: ANN001
    """The refusals shown inside the input of field `name`."""
    page = answer.get_data(as_text=True)
    found = re.search(rf'data-field="{name}">(.*?)\n</div>', page, re.S)
    return re.findall(r'class="field-error" role="alert">(.*?)</p>', found.group(1)) if found else []


@pytest.fixture
def mesa(api):  # noqa: ANN201
    sign_in(api.client, api.token("assembly-mesa"))
    return api


def test_a_creation_filed_and_three_acts_recorded_through_forms_move_the_case_by_exactly_their_events(mesa):
    api = mesa
    filed = file_creation(api.client)
    assert filed.status_code == 303 and filed.headers["Location"] == \
        f"/processos/{NUMBER}?registrado=petition-filed#ato-registrado"
    case = api.get(f"/cases/{NUMBER}").get_json()
    assert (case["version"], case["kind"], case["proposed_name"]) == (1, "creation", "Vila Tarumã")
    assert case["areas"][0]["area_km2"] == "1900.5"  # "1.900,5" in Brazilian notation
    page = api.client.get(filed.headers["Location"])
    assert "Registrado: petição" in text(page)
    assert f'href="/processos/{NUMBER}/atos/requisition-issued"' in page.get_data(as_text=True)

    walk = [("requisition-issued", {"occurred_on": "05/03/2026", "body": "ibge", "items": "art-4"}, {},
             ["Case.RequisitionIssued"]),
            ("requisition-received", {"occurred_on": "09/03/2026", "requisition": "R1"},
             {"anexos": "pdf"}, ["Case.RequisitionReceived", "Case.DeadlineOpened", "Case.DocumentsAttached"]),
            ("case-archived", {"occurred_on": "10/03/2026", "reason": "desistência dos peticionários"}, {},
             None)]
    for act, values, files, expected in walk:
        before = version(api)
        if files:
            values = {**values, "anexos": (BytesIO(tiny_pdf()), "Ofício 12-2026.pdf", "application/pdf")}
        answer = record(api, act, **values)
        assert answer.status_code == 303, (act, refusals(answer), text(answer)[:600])
        assert answer.headers["Location"] == f"/processos/{NUMBER}?registrado={act}#ato-registrado"
        after, recorded = version(api), events_after(api, before)
        assert after - before == len(recorded) >= 1, act
        if expected is not None:
            assert recorded == expected, act
        else:
            assert recorded[0] == "Case.CaseArchived"
    assert api.get(f"/cases/{NUMBER}").get_json()["stage"] == "archived"


def test_a_pdf_attached_in_a_form_is_stored_and_cited_by_its_sha256(mesa):
    api = mesa
    file_creation(api.client)
    record(api, "requisition-issued", occurred_on="05/03/2026", body="ibge", items="art-4")
    pdf = tiny_pdf()
    answer = record(api, "requisition-received", occurred_on="09/03/2026", requisition="R1",
                    anexos=(BytesIO(pdf), "Ofício 12-2026.pdf", "application/pdf"))
    assert answer.status_code == 303
    digest = hashlib.sha256(pdf).hexdigest()
    attached = [e for e in api.get(f"/cases/{NUMBER}/events").get_json() if e["type"] == "Case.DocumentsAttached"]
    assert [(d["sha256"], d["name"]) for d in attached[0]["payload"]["documents"]] == [
        (digest, "Ofício 12-2026.pdf")]
    assert attached[0]["payload"]["act"] == "requisition-received"
    served = api.client.get(f"/documents/{digest}")  # the session's reader follows the link
    assert served.status_code == 200 and served.data == pdf and served.mimetype == "application/pdf"
    assert f'href="/documents/{digest}"' in api.client.get(f"/processos/{NUMBER}").get_data(as_text=True)


def test_a_stale_form_is_refused_showing_what_changed_and_keeping_what_was_entered(mesa):
    api = mesa
    file_creation(api.client)
    stale, _ = drawn(api.client, f"/processos/{NUMBER}/atos/requisition-issued")
    record(api, "requisition-issued", occurred_on="05/03/2026", body="ibge", items="art-4")  # another clerk's
    before = version(api)
    answer = api.client.post(f"/processos/{NUMBER}/atos/requisition-issued",
                             data={**stale, "occurred_on": "06/03/2026", "body": "tre", "items": "art-4-V"})
    assert answer.status_code == 412
    shown = text(answer)
    assert "nada foi registrado" in shown and "versão 1" in shown and "versão 2" in shown
    assert re.search(r"2\. requisição da Mesa — 05/03/2026 — Assembleia Legislativa", shown)
    page = answer.get_data(as_text=True)
    assert 'value="06/03/2026"' in page and '<option value="tre" selected>' in page
    assert 'value="art-4-V" checked' in page
    assert 'name="versao" value="2"' in page
    assert version(api) == before  # nothing recorded


def test_a_double_submit_records_once_and_both_answers_lead_to_the_case(mesa):
    api = mesa
    file_creation(api.client)
    hidden, _ = drawn(api.client, f"/processos/{NUMBER}/atos/requisition-issued")
    form = {**hidden, "occurred_on": "05/03/2026", "body": "ibge", "items": "art-4"}
    first = api.client.post(f"/processos/{NUMBER}/atos/requisition-issued", data=form)
    again = api.client.post(f"/processos/{NUMBER}/atos/requisition-issued", data=form)
    assert first.status_code == again.status_code == 303
    assert first.headers["Location"] == again.headers["Location"]
    assert events_after(api, 1) == ["Case.RequisitionIssued"] and version(api) == 2


def test_a_refusal_under_the_law_is_shown_beside_its_field_with_its_article(mesa):
    api = mesa
    answer = file_creation(api.client, **{"documents.art-99": "Certidão 1/2026"})  # a key no input offers
    assert answer.status_code == 422
    beside = field_errors(answer, "documents")
    assert beside and beside[0].startswith("Art. 9:") and "não é um item do Art. 4" in beside[0]
    assert "nada foi registrado" in text(answer).lower()
    assert 'value="Vila Tarumã"' in answer.get_data(as_text=True)  # what was entered is kept
    assert api.get(f"/cases/{NUMBER}").status_code == 404


def test_too_few_signatures_are_refused_beside_the_signatures_under_art_8(mesa):
    api = mesa
    api.projector.catch_up()  # the registry's read model, whose names the form shows
    answer = file_creation(api.client, signatures="\n".join(voters_lines().splitlines()[:3]))
    assert answer.status_code == 422
    beside = field_errors(answer, "signatures")
    assert beside and beside[0].startswith("Art. 8:") and "3 assinaturas válidas" in beside[0]
    assert f"Feijó ({FEIJO})" in beside[0]  # the area by its municipality's name, the code beside it
    assert api.get(f"/cases/{NUMBER}").status_code == 404


def test_the_requisition_offers_the_competent_bodies_by_name_and_the_items_of_art_4_as_the_law_writes_them(mesa):
    api = mesa
    file_creation(api.client)
    page = api.client.get(f"/processos/{NUMBER}/atos/requisition-issued").get_data(as_text=True)
    assert '<option value="sefaz">SEFAZ</option>' in page
    assert '<option value="tre">Tribunal Regional Eleitoral (TRE)</option>' in page
    assert re.search(r'value="art-4-VI"> Art\. 4, VI</label>', page)
    assert "art-4-VI<" not in page and ">sefaz<" not in page
    petition = api.client.get("/processos/novo?tipo=creation").get_data(as_text=True)
    assert re.search(r'<label for="campo-documents-1">Art\. 4, I</label>\s*<input type="text" id="campo-documents-1" '
                     r'name="documents\.art-4-I"', petition)


def test_dates_and_figures_are_read_in_brazilian_notation_and_a_day_that_does_not_exist_is_refused(mesa):
    api = mesa
    assert form_fields.number_text("1.234,56", True) == "1234.56"
    assert form_fields.number_text("1.234", True) == "1234" and form_fields.number_text("420.5", True) == "420.5"
    assert form_fields.number_text("1,234.56", False) == "1234.56"
    assert form_fields.day_text("09/03/2026", "occurred_on") == "2026-03-09"
    file_creation(api.client)
    answer = record(api, "requisition-issued", occurred_on="31/02/2026", body="ibge", items="art-4")
    assert answer.status_code == 422
    assert field_errors(answer, "occurred_on") == ["31/02/2026 não é um dia do calendário (dd/mm/aaaa)."]
    assert version(api) == 1


def test_a_post_without_the_csrf_token_is_403_and_records_nothing(mesa):
    api = mesa
    file_creation(api.client)
    hidden, _ = drawn(api.client, f"/processos/{NUMBER}/atos/requisition-issued")
    answer = api.client.post(f"/processos/{NUMBER}/atos/requisition-issued",
                             data={**hidden, "csrf": "forged", "occurred_on": "05/03/2026", "body": "ibge",
                                   "items": "art-4"})
    assert answer.status_code == 403 and version(api) == 1
    hidden.pop("csrf")
    assert api.client.post("/processos/novo", data={**hidden, "kind": "creation"}).status_code == 403


def test_an_auditor_sees_no_form_link_and_gets_403_on_every_form(mesa):
    api = mesa
    file_creation(api.client)
    auditor = api.flask.test_client()
    sign_in(auditor, api.token("auditor"))
    assert "data-write" not in auditor.get(f"/processos/{NUMBER}").get_data(as_text=True)
    csrf = csrf_of(auditor.get("/processos").data)
    for path in (f"/processos/{NUMBER}/atos/requisition-issued", "/processos/novo", "/processos/novo?tipo=creation"):
        assert auditor.get(path).status_code == 403, path
        answer = auditor.post(path.split("?")[0], data={"csrf": csrf, "occurred_on": "05/03/2026", "kind": "creation"})
        assert answer.status_code == 403 and "<form method=\"post\" action=\"/processos" not in answer.get_data(
            as_text=True), path
    assert version(api) == 1


def test_a_body_the_statute_does_not_name_for_the_act_gets_403_naming_the_article(mesa):
    api = mesa
    file_creation(api.client)
    tre = api.flask.test_client()
    sign_in(tre, api.token("tre"))
    answer = tre.get(f"/processos/{NUMBER}/atos/requisition-issued")
    assert answer.status_code == 403 and "Art. 10" in text(answer)


def schema_fields(schema) -> set[str]:  # noqa: ANN001
    names = set()
    for name, field in schema.fields.items():
        names.add(name)
        for inner in (getattr(field, "inner", None), getattr(field, "value_field", None), field):
            if isinstance(inner, fields.Nested):
                names |= schema_fields(inner.schema)
    return names


def test_every_field_of_every_act_schema_has_a_label_and_a_help_in_the_one_table():
    names = schema_fields(PetitionSchema())
    for act in ACTS:
        names |= schema_fields(act.schema())
    assert not sorted(names - set(form_labels.FIELDS))
    assert all(label and help_ for label, help_ in form_labels.FIELDS.values())


def test_every_act_has_a_form_drawn_from_its_schema_with_an_input_for_each_field(mesa):
    from domain.access import bodies_competent_for

    api = mesa
    file_creation(api.client)
    for act in ACTS:
        _, competent = bodies_competent_for(api.app.statute, api.app.today(), act.name)
        role = next(r for r in competent if r != "auditor")
        client = api.flask.test_client()
        sign_in(client, api.token(role, FEIJO if role in ("council", "mayor", "municipality") else None))
        hidden, page = drawn(client, f"/processos/{NUMBER}/atos/{act.name}")
        assert set(hidden) == {"csrf", "chave", "versao"} and hidden["versao"] == "1", act.name
        for name in act.schema().fields:
            if name != "attachments":
                assert f'name="{name}"' in page, (act.name, name)
        assert 'name="anexos"' in page and 'enctype="multipart/form-data"' in page, act.name


def test_a_mapping_of_records_is_read_one_key_a_line_with_its_fields_in_the_schemas_order():
    from api.schemas import PlebisciteResultHomologatedSchema
    from werkzeug.datastructures import MultiDict

    schema = PlebisciteResultHomologatedSchema()
    form = MultiDict({"voted_on": "05/01/1992", "populations": "area: 1.900; 700; 600; 80; 12; 8",
                      "seat_votes": "1200302: 1.234"})
    body = form_fields.read_form(schema, form_fields.widgets(schema), form, True)
    assert body == {"voted_on": "1992-01-05", "seat_votes": {"1200302": "1234"}, "populations": {"area": {
        "registered": "1900", "turnout": "700", "yes": "600", "no": "80", "blank": "12", "void": "8"}}}
    with pytest.raises(form_fields.FormError) as refused:
        form_fields.read_form(schema, form_fields.widgets(schema), MultiDict({"populations": "area 900"}), True)
    assert list(refused.value.errors) == ["populations"]


def test_the_kinds_offered_for_a_new_case_are_those_the_body_may_petition_for(api):
    mayor = api.flask.test_client()
    sign_in(mayor, api.token("mayor", FEIJO))
    page = mayor.get("/processos/novo").get_data(as_text=True)
    assert re.findall(r'data-kind="([^"]+)"', page) == ["district_creation", "district_suppression"]
    assert mayor.get("/processos/novo?tipo=creation").status_code == 403
    assert mayor.get("/processos/novo?tipo=district_creation").status_code == 200
    sign_in(api.client, api.token("assembly-mesa"))
    offered = re.findall(r'data-kind="([^"]+)"', api.client.get("/processos/novo").get_data(as_text=True))
    assert offered == ["creation", "incorporation", "fusion", "dismemberment", "extinction"]
