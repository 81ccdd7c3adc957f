"""The pages through Flask's test client: the session's rules (cookie flags, lifetime, CSRF, a revoked token), the
roles, the case file as of a date, and the JSON API's problem details in Portuguese when asked."""

from __future__ import annotations

import base64
import json
import re
import zlib
from datetime import timedelta

import pytest

from domain.access import AccessToken
from domain.demo import DOCUMENTS_1991, attachment_name
from tests.api_client import ADMIN, ApiHarness
from tests.stores import NOW
from audit.demo_files import demo_files, seed_demo_with_documents

CASE_1991 = "LC35-1991-0001"
WAITING = "LC35-2026-0003"
PAGES = ["/processos", f"/processos/{CASE_1991}", f"/processos/{CASE_1991}?data=1992-01-08", "/prazos",
         "/alertas", "/municipios", "/municipios/1200302"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):  # noqa: ANN201
    folder = tmp_path_factory.mktemp("pages")
    harness = ApiHarness(f"sqlite:///{folder / 'tramita.sqlite'}",
                         config={"TRAMITA_SESSION_KEY": str(folder / "session.key")})
    seed_demo_with_documents(harness.app, harness.flask.extensions["tramita.documents"], say=lambda _: None)
    harness.projector.catch_up()
    yield harness
    harness.close()


@pytest.fixture
def api(demo):  # noqa: ANN201
    demo.clock.now = NOW
    demo.client = demo.flask.test_client()  # a fresh browser: no cookie
    return demo


def csrf_of(page: bytes) -> str:
    return re.search(rb'name="csrf" value="([^"]+)"', page).group(1).decode()


def sign_in(client, token: str, proximo: str = "/processos", **kwargs):  # noqa: ANN001, ANN201
    csrf = csrf_of(client.get("/", **kwargs).data)
    return client.post("/sessao", data={"csrf": csrf, "token": token, "proximo": proximo}, **kwargs)


def text(response) -> str:  # noqa: ANN001
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.get_data(as_text=True)))


def session_cookie(response) -> str:  # noqa: ANN001
    return next(h for h in response.headers.getlist("Set-Cookie") if h.startswith("tramita_sessao="))


# ------------------------------------------------------------------------------------------ the session


def test_a_page_without_a_session_redirects_to_sign_in_keeping_the_page_asked(api):
    for path in PAGES:
        answer = api.client.get(path)
        assert answer.status_code == 303, path
        assert answer.headers["Location"].startswith("/?proximo=/"), path
    assert "Entrar" in text(api.client.get("/"))


def test_signing_in_sets_an_httponly_samesite_strict_cookie_not_secure_over_http(api):
    answer = sign_in(api.client, api.token("auditor"))
    assert (answer.status_code, answer.headers["Location"]) == (303, "/processos")
    cookie = session_cookie(answer)
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Secure" not in cookie
    assert api.client.get("/processos").status_code == 200


def test_the_session_cookie_is_secure_when_the_request_came_over_https(api):
    answer = sign_in(api.client, api.token("auditor"), base_url="https://tramita.example")
    assert "; Secure" in session_cookie(answer)


def test_the_session_cookie_does_not_hold_the_token_readably(api):
    token = api.token("auditor")
    payload = session_cookie(sign_in(api.client, token)).split("=", 1)[1].split(";")[0]
    compressed, body = payload.startswith("."), payload.lstrip(".").split(".")[0]
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    document = json.loads(zlib.decompress(raw) if compressed else raw)
    secret = AccessToken.parse(token)[1]  # the secret is URL-safe base64, which may itself hold "_"
    assert secret not in json.dumps(document) and token not in json.dumps(document)
    assert set(document) == {"token", "signed_in_at", "id", "ends_at", "csrf", "_permanent"}


@pytest.mark.parametrize(("after", "signed_in"), [
    (timedelta(hours=8) - timedelta(seconds=1), True),   # the last second of the session
    (timedelta(hours=8), False),                          # its lifetime has passed
    (timedelta(hours=8, seconds=1), False),
])
def test_a_session_lasts_its_lifetime_from_the_sign_in_however_active(api, after, signed_in):
    sign_in(api.client, api.token("auditor"))
    api.clock.now = NOW + timedelta(hours=4)
    assert api.client.get("/processos").status_code == 200  # activity does not extend it
    api.clock.now = NOW + after
    answer = api.client.get("/processos")
    assert answer.status_code == (200 if signed_in else 303)
    if not signed_in:
        assert "motivo=encerrada" in answer.headers["Location"]
        assert "Sua sessão terminou" in text(api.client.get(answer.headers["Location"]))


def test_a_revoked_token_loses_its_session_at_once(api):
    issued = api.app.issue_token(ADMIN, name="Tribunal de Contas (revogado)", role="auditor")
    sign_in(api.client, issued.token)
    assert api.client.get(f"/processos/{CASE_1991}").status_code == 200
    api.app.revoke_token(ADMIN, str(issued.id), reason="fim do mandato")
    answer = api.client.get(f"/processos/{CASE_1991}")
    assert answer.status_code == 303 and "motivo=encerrada" in answer.headers["Location"]
    assert api.client.get("/processos").status_code == 303  # the session itself was ended


def test_an_unknown_token_is_refused_in_portuguese_and_opens_no_session(api):
    answer = sign_in(api.client, "trm_" + "0" * 32 + "_nope")
    assert answer.status_code == 401 and "Este token não foi aceito" in text(answer)
    assert api.client.get("/processos").status_code == 303


def test_a_form_without_its_csrf_token_is_refused_and_changes_nothing(api):
    token = api.token("auditor")
    api.client.get("/")
    refused = api.client.post("/sessao", data={"csrf": "forged", "token": token})
    assert refused.status_code == 403 and "Este formulário expirou" in text(refused)
    assert api.client.get("/processos").status_code == 303  # nobody signed in
    sign_in(api.client, token)
    assert api.client.post("/sessao/sair", data={}).status_code == 403
    assert api.client.get("/processos").status_code == 200  # still signed in
    page = api.client.get("/processos").data
    assert api.client.post("/sessao/sair", data={"csrf": csrf_of(page)}).status_code == 303
    assert api.client.get("/processos").status_code == 303


def test_after_signing_in_only_a_path_of_this_site_is_followed(api):
    for target in ("//evil.example/x", "https://evil.example/", "/\\evil.example", "processos",
                   "/processos\r\nSet-Cookie: x=y", "/processos\x00", "/processos\x7f"):
        api.client = api.flask.test_client()
        assert sign_in(api.client, api.token("auditor"), proximo=target).headers["Location"] == "/processos"
    api.client = api.flask.test_client()
    assert sign_in(api.client, api.token("auditor"), proximo="/prazos?situacao=missed").headers["Location"] == \
        "/prazos?situacao=missed"


def test_the_json_api_writes_never_take_the_session_only_a_bearer_token(api):
    sign_in(api.client, api.token("assembly-mesa"))
    answer = api.client.post(f"/cases/{WAITING}/acts/requisition-issued", headers={"If-Match": "*"},
                             json={"occurred_on": "2026-11-30", "body": "ibge", "items": ["art-4-I"]})
    assert answer.status_code == 401
    assert api.client.get("/deadlines").status_code == 401  # a read not linked from the pages neither


def test_the_export_the_case_file_links_to_is_read_with_the_session(api):
    assert api.client.get(f"/cases/{CASE_1991}/export").status_code == 401
    sign_in(api.client, api.token("auditor"))
    answer = api.client.get(f"/cases/{CASE_1991}/export")
    assert answer.status_code == 200 and json.loads(answer.data.splitlines()[0])["number"] == CASE_1991


def test_the_documents_the_case_file_links_to_are_read_with_the_session_byte_for_byte(api):
    sign_in(api.client, api.token("auditor"))
    page = api.client.get(f"/processos/{CASE_1991}").get_data(as_text=True)
    links = {name: sha256 for sha256, name in re.findall(
        r'<a class="document" href="/documents/([0-9a-f]{64})">([^<]+)</a>', page)}
    assert set(links) == {attachment_name(reference) for reference in DOCUMENTS_1991}
    for reference, content in demo_files().items():
        answer = api.client.get(f"/documents/{links[attachment_name(reference)]}")
        assert answer.status_code == 200 and answer.mimetype == "application/pdf"
        assert answer.data == content, reference
    signed_out = api.client.post("/sessao/sair", data={"csrf": csrf_of(api.client.get("/processos").data)})
    assert signed_out.status_code == 303
    assert api.client.get(f"/documents/{links[attachment_name('Lei 1.036/1992')]}").status_code == 401


# ------------------------------------------------------------------------------------------ roles and pages


@pytest.mark.parametrize(("role", "municipality"), [("auditor", None), ("tre", None), ("mayor", "1200302")])
def test_every_page_reads_for_every_body_as_the_api_does(api, role, municipality):
    sign_in(api.client, api.token(role, municipality))
    for path in PAGES:
        assert api.client.get(path).status_code == 200, path


def test_an_auditor_sees_no_write_control_on_the_case_file(api):
    sign_in(api.client, api.token("auditor"))
    for path in (*PAGES, f"/processos/{WAITING}"):
        page = api.client.get(path).get_data(as_text=True)
        assert "data-write" not in page, path
        assert re.findall(r'<form method="post" action="([^"]+)"', page) == ["/sessao/sair"], path


def test_a_case_the_federal_gate_holds_shows_it_as_an_open_impediment_and_a_concluded_1992_case_does_not(api):
    """CF art. 18 §4: the 2026 creation waits on the gate; the 1992 one was enacted before it."""
    sign_in(api.client, api.token("auditor"))
    held = text(api.client.get(f"/processos/{WAITING}"))
    assert "Impedimentos em aberto" in held and "CF, Art. 18, § 4 : nenhuma lei complementar federal fixa" in held
    assert "Impedimentos em aberto" not in text(api.client.get(f"/processos/{CASE_1991}"))


def test_the_mesa_sees_which_next_acts_it_may_record(api):
    sign_in(api.client, api.token("assembly-mesa"))
    page = api.client.get(f"/processos/{WAITING}").get_data(as_text=True)
    assert set(re.findall(r'data-write="([^"]+)"', page)) == {"requisition-issued", "requisition-refused",
                                                             "case-archived"}


def test_the_case_file_as_of_a_legal_date_shows_the_stage_then_and_what_changed_since(api):
    sign_in(api.client, api.token("auditor"))
    now = text(api.client.get(f"/processos/{CASE_1991}"))
    assert "Fase concluído" in now and "criação de município" in now
    then = api.client.get(f"/processos/{CASE_1991}?data=1992-01-08")
    shown = text(then)
    assert "Fase resultado comunicado" in shown
    assert "Fase então: resultado comunicado; hoje: concluído." in shown
    assert "Mostrado na data legal 08/01/1992" in shown
    rows = re.findall(r'data-sequence="(\d+)" data-in-view="(yes|no)"', then.get_data(as_text=True))
    dated_by_then = [e["sequence"] for e in api.app.timeline(CASE_1991) if e["occurred_on"] <= "1992-01-08"]
    assert [int(s) for s, v in rows if v == "yes"] == dated_by_then and len(rows) > len(dated_by_then)


def test_the_case_file_marks_late_recordings_and_an_act_that_closed_its_deadline_late(api):
    sign_in(api.client, api.token("auditor"))
    shown = text(api.client.get(f"/processos/{CASE_1991}"))
    assert "registro tardio" in shown  # the demo recorded 1991's acts in 2026
    assert "encerrou o prazo com" in shown and "cumprido com atraso" in shown


def test_before_its_first_act_the_case_file_says_the_case_did_not_exist_yet(api):
    sign_in(api.client, api.token("auditor"))
    shown = text(api.client.get(f"/processos/{CASE_1991}?data=1991-12-18"))
    assert "o processo ainda não existia" in shown


@pytest.mark.parametrize("query", ["data=1992-13-01", "data=1992-01-08&registrado_antes=2026-11-30T10:00",
                                   "registrado_antes=ontem", "registrado_antes=9999-12-31T23:59",
                                   "registrado_antes=0001-01-01T00:00%2B14:00", "data=0001-01-01",
                                   "data=9999-12-31"])
def test_a_view_asked_with_a_value_it_cannot_read_says_so_in_portuguese(api, query):
    sign_in(api.client, api.token("auditor"))
    answer = api.client.get(f"/processos/{CASE_1991}?{query}")
    assert answer.status_code == 400 and "Esta página não pode ser mostrada" in text(answer)


def test_the_pages_are_in_english_when_asked_and_keep_the_choice(api):
    sign_in(api.client, api.token("auditor"))
    english = api.client.get("/processos?lang=en")
    assert "Cases" in text(english) and "tramita_lang=en" in ";".join(english.headers.getlist("Set-Cookie"))
    assert english.headers["Content-Language"] == "en"
    assert "Stage concluded" in text(api.client.get(f"/processos/{CASE_1991}"))
    assert "Processos" in text(api.client.get("/processos?lang=pt_BR"))


# ------------------------------------------------------------------------------------------ problem details


def problems(api, request: dict) -> tuple[dict, dict]:  # noqa: ANN001
    """The same request answered in English (no Accept-Language) and in Portuguese."""
    method, path = request.pop("method", "GET"), request.pop("path")
    headers = request.pop("headers", {})
    answers = []
    for language in ({}, {"Accept-Language": "pt-BR,pt;q=0.9,en;q=0.5"}):
        answer = api.client.open(path, method=method, headers={**headers, **language}, **request)
        assert answer.mimetype == "application/problem+json"
        answers.append(answer.get_json())
    return answers[0], answers[1]


@pytest.mark.parametrize(("status", "title", "request_"), [
    (401, "Não autenticado", {"path": "/cases"}),
    (403, "Proibido", {"method": "POST", "path": f"/cases/{WAITING}/acts/requisition-issued", "role": "auditor",
                       "json": {"occurred_on": "2026-11-30", "body": "ibge", "items": ["art-4-I"]}}),
    (404, "Não encontrado", {"path": "/municipalities/1299999", "role": "auditor"}),
    (409, "Conflito", {"method": "POST", "path": f"/cases/{CASE_1991}/acts/requisition-issued",
                       "role": "assembly-mesa", "if_match": "*",
                       "json": {"occurred_on": "2026-11-30", "body": "ibge", "items": ["art-4-I"]}}),
    (412, "Pré-condição falhou", {"method": "POST", "path": f"/cases/{WAITING}/acts/requisition-issued",
                                  "role": "assembly-mesa", "if_match": '"1"',
                                  "json": {"occurred_on": "2026-11-30", "body": "ibge", "items": ["art-4-I"]}}),
    (413, "Corpo da requisição grande demais", {"method": "POST", "role": "assembly-mesa", "if_match": "*",
                                                "path": f"/cases/{WAITING}/acts/requisition-issued",
                                                "data": b"[" + b"1," * 600_000 + b"1]",
                                                "content_type": "application/json"}),
    (415, "Tipo de mídia não suportado", {"method": "POST", "role": "assembly-mesa", "if_match": "*",
                                          "path": f"/cases/{WAITING}/acts/requisition-issued", "data": b"x",
                                          "content_type": "text/plain"}),
    (422, "Entidade não processável", {"method": "POST", "path": f"/cases/{WAITING}/acts/requisition-issued",
                                       "role": "assembly-mesa", "if_match": "*",
                                       "json": {"occurred_on": "never", "body": "ibge", "items": ["art-4-I"]}}),
    (428, "Pré-condição exigida", {"method": "POST", "path": f"/cases/{WAITING}/acts/requisition-issued",
                                   "role": "assembly-mesa",
                                   "json": {"occurred_on": "2026-11-30", "body": "ibge", "items": ["art-4-I"]}}),
])
def test_problem_details_are_in_portuguese_when_accept_language_asks_and_english_otherwise(
        api, status, title, request_):
    request_ = dict(request_)
    headers = api.headers(request_.pop("role")) if "role" in request_ else {}
    if "if_match" in request_:
        headers["If-Match"] = request_.pop("if_match")
    english, portuguese = problems(api, {**request_, "headers": headers})
    assert english["status"] == portuguese["status"] == status
    assert portuguese["title"] == title and english["title"] != title
    assert english["detail"] != portuguese["detail"]  # refusals too: the domain's sentences are translated
    for member in ("type", "article", "field", "competent", "figures"):
        assert english.get(member) == portuguese.get(member), member


def test_the_fixed_parts_of_the_details_are_translated_and_the_article_ids_kept(api):
    mesa = {**api.headers("assembly-mesa"), "Accept-Language": "pt-BR"}
    stale = api.client.post(f"/cases/{WAITING}/acts/requisition-issued", headers={**mesa, "If-Match": '"1"'},
                            json={"occurred_on": "2026-11-30", "body": "ibge", "items": ["art-4-I"]}).get_json()
    assert stale["detail"].startswith("If-Match: esperada a versão 1, o processo está na versão ")
    malformed = api.client.post(f"/cases/{WAITING}/acts/requisition-issued", headers={**mesa, "If-Match": "*"},
                                json={"occurred_on": "never", "body": "ibge", "items": ["art-4-I"]}).get_json()
    assert malformed["detail"].startswith("a requisição está malformada: json.occurred_on: ")
    assert malformed["field"] == "occurred_on"
    refused = api.client.post(f"/cases/{CASE_1991}/acts/requisition-issued", headers={**mesa, "If-Match": "*"},
                              json={"occurred_on": "2026-11-30", "body": "ibge", "items": ["art-4-I"]}).get_json()
    assert refused["article"] == "art-10" and refused["detail"].startswith("art-10: ")
    missing = api.client.get("/cases", headers={"Accept-Language": "pt-BR"}).get_json()
    assert missing["detail"] == "é necessário um token bearer (Authorization: Bearer trm_…)"


# ------------------------------------------------------------------------------------------ marks and the axis


@pytest.mark.parametrize(("days_after", "marked"), [(29, False), (30, False), (31, True)])
def test_an_act_is_marked_recorded_late_only_past_the_setting_s_days_after_its_legal_date(api, days_after, marked):
    from datetime import date, datetime, time

    from api.pages.casefile import timeline_rows
    from domain.application import LEGAL_TIMEZONE

    legal = date(1992, 1, 8)
    recorded = datetime.combine(legal + timedelta(days=days_after), time(23, 30), LEGAL_TIMEZONE)  # late evening
    event = {"sequence": 1, "type": "Case.ResultCommunicated", "occurred_on": legal.isoformat(),
             "recorded_at": recorded.astimezone(NOW.tzinfo).isoformat(), "payload": {}}
    with api.flask.test_request_context("/processos"):
        row, = timeline_rows([event], {}, in_view=1)
    assert (row["late_recording"], row["recorded_days_after"]) == (marked, days_after)


@pytest.mark.parametrize(("lang", "day", "sole"), [("pt_BR", "08/01/1992", "parágrafo único"),
                                                    ("en", "1992-01-08", "sole paragraph")])
def test_the_case_file_writes_each_date_role_article_and_status_as_every_other_page_does(api, lang, day, sole):
    """The case file writes its long tables with `Words` (each word translated once per page): the same words as
    the format functions the other pages use and the same sentences as a template's _(), in either language,
    however often a word is asked for."""
    from datetime import date, datetime, timezone

    from api.pages import format as fmt

    with api.flask.test_request_context(f"/processos?lang={lang}"):
        words = fmt.Words()
        for _ in range(2):  # the second time from the page's memo
            assert words.day("1992-01-08") == words.day(date(1992, 1, 8)) == fmt.day("1992-01-08") == day
            assert words.day(None) == words.day("") == ""
            for moment in ("1992-01-09T02:30:00+00:00", datetime(2026, 11, 30, 15, tzinfo=timezone.utc), None):
                assert words.moment(moment) == fmt.moment(moment)
            assert [words.role(r) for r in (*fmt.ROLES, "no-such-body", None)] == \
                [fmt.role(r) for r in (*fmt.ROLES, "no-such-body", None)]
            assert [words.deadline_status(s) for s in (*fmt.DEADLINE_STATUSES, None)] == \
                [fmt.deadline_status(s) for s in (*fmt.DEADLINE_STATUSES, None)]
            articles = ("art-4-par-unico", "art-10-par-1", "art-23-I", "art-38", "statute", None)
            assert [words.article(a) for a in articles] == [fmt.article(a) for a in articles]
            assert words.article("art-4-par-unico") == f"Art. 4, {sole}"
            assert words.gettext("closed on %(day)s", day=day) == fmt._("closed on %(day)s", day=day)
            assert words.gettext("sole paragraph") == sole
            template = api.flask.jinja_env.from_string("{{ _('closed on %(day)s', day=d) }}")  # autoescaped
            assert str(words.markup("closed on %(day)s", day="<i>1992</i>")) == template.render(d="<i>1992</i>")


def test_the_deadline_axis_draws_each_deadline_with_its_status_in_words(api):
    sign_in(api.client, api.token("auditor"))
    page = api.client.get(f"/processos/{CASE_1991}").get_data(as_text=True)
    svg = page[page.index("<svg"):page.index("</svg>")]
    drawn = re.findall(r'<g class="deadline ([a-z-]+)" data-deadline="([^"]+)"', svg)
    deadlines = api.client.get(f"/cases/{CASE_1991}/deadlines", headers=api.headers("auditor")).get_json()
    assert sorted(drawn) == sorted((d["status"], d["deadline"]) for d in deadlines)
    assert svg.count('class="closing"') == len(deadlines)  # every deadline of the 1991 case was closed
    assert "cumprido com atraso" in svg and 'class="delay"' in svg


def test_a_case_altered_in_the_database_shows_its_timeline_and_a_verdict_naming_the_altered_event(tmp_path):
    """The timeline is made of the events the verification checked; when the chain fails it is read on its own."""
    from datetime import date

    from tests.test_api_walk import open_1991_petition
    from tests.test_chain import StoredEvents

    api = ApiHarness(f"sqlite:///{tmp_path / 'tramita.sqlite'}",
                     config={"TRAMITA_SESSION_KEY": str(tmp_path / "session.key")})
    try:
        opened = open_1991_petition(api)
        api.act(opened["case_id"], "finding-recorded", "ibge", date(1991, 12, 20), item="art-4-I", value=2100,
                by_origin={"1200385": 1000, "1200450": 1100}, document="Laudo IBGE 7/1991")
        api.projector.catch_up()
        sign_in(api.client, api.token("auditor"))
        intact = api.client.get(f"/processos/{opened['number']}").get_data(as_text=True)
        assert 'id="verdict" class="intact"' in intact and "Laudo IBGE 7/1991" in intact
        case_id = api.app.resolve_case(opened["case_id"])
        with StoredEvents(api.url) as stored:
            [(state,)] = stored.execute("SELECT state FROM {table} WHERE originator_id = ? AND "
                                        "originator_version = 2", stored.id_of(case_id))
            stored.set_state(stored.id_of(case_id), 2, bytes(state).replace(b"Laudo IBGE 7/1991",
                                                                            b"Laudo IBGE 8/1991"))
        altered = api.client.get(f"/processos/{opened['number']}").get_data(as_text=True)
        assert 'id="verdict" class="altered"' in altered
        assert "Laudo IBGE 8/1991" in altered and len(re.findall(r"data-sequence=", altered)) == len(
            re.findall(r"data-sequence=", intact))
    finally:
        api.close()


@pytest.mark.parametrize("lang, kind, days, shown", [
    ("pt-BR", "due-in-5-days", 2, ("vence em 5 dias", "2 dias de atraso")),
    ("pt-BR", "due-in-1-days", 1, ("vence em 1 dia", "1 dia de atraso")),
    ("en", "due-in-1-days", 1, ("due in 1 day", "1 day overdue")),
    ("en", "due-in-5-days", 3, ("due in 5 days", "3 days overdue")),
])
def test_a_warning_before_the_due_day_and_the_days_overdue_are_said_in_words_singular_or_plural(
        api, lang, kind, days, shown):
    """`/alertas` showed the slug `due-in-5-days` and "(1 dias de atraso)"."""
    from flask import render_template_string

    from api.pages import format as fmt

    with api.flask.test_request_context(f"/alertas?lang={lang}"):
        said = (fmt.alert_kind(kind), render_template_string(
            "{{ ngettext('%(num)s day overdue', '%(num)s days overdue', n) }}", n=days))
    assert said == shown


@pytest.mark.parametrize("kind, shown", [("projection-failure", "uma projeção não conseguiu aplicar um evento"),
                                         ("tamper-alarm", "alarme de adulteração"),
                                         ("document-altered", "um documento guardado foi alterado")])
def test_a_system_alert_s_kind_is_said_in_portuguese_not_by_its_identifier(api, kind, shown):
    from api.pages import format as fmt

    with api.flask.test_request_context("/alertas"):
        assert fmt.alert_kind(kind).startswith(shown)


def test_deadlines_are_named_by_what_is_due_and_municipalities_by_name_never_by_their_keys(api):
    sign_in(api.client, api.token("auditor"), headers={"Accept-Language": "pt-BR"})
    case = text(api.client.get(f"/processos/{CASE_1991}", headers={"Accept-Language": "pt-BR"}))
    assert "livros de escrituração enviados por Senador Guiomard" in case
    assert "projeto de lei do quadro de pessoal" in case and "lei orgânica" in case
    listed = text(api.client.get("/prazos", headers={"Accept-Language": "pt-BR"}))
    assert "registro do resultado em sessão plenária" in listed and "resposta à requisição" in listed
    alerts = text(api.client.get("/alertas", headers={"Accept-Language": "pt-BR"}))
    for page in (case, listed, alerts):
        for key in ("ledger-transfer", "plenary-registration", "requisition-answer:", "budget-proposal",
                    "organic-law", "(1200450)", "not yet delivered"):
            assert key not in page, key


def test_the_registry_pages_write_figures_in_brazilian_notation_and_no_code_for_a_municipality_the_ibge_has_not_coded(
        api):
    sign_in(api.client, api.token("auditor"), headers={"Accept-Language": "pt-BR"})
    listed = text(api.client.get("/municipios", headers={"Accept-Language": "pt-BR"}))
    assert "new:" not in listed and "ainda sem código IBGE (criado pelo processo LC35-1991-0001)" in listed
    for code in ("1200385", "1200450", "1200302"):
        page = text(api.client.get(f"/municipios/{code}", headers={"Accept-Language": "pt-BR"}))
        assert not re.search(r"\d{4,}\.\d", page), code  # 27975.427 is written 27.975,427
        assert re.search(r"\d\.\d{3}", page), code  # thousands are grouped with a dot
    case = text(api.client.get(f"/processos/{CASE_1991}", headers={"Accept-Language": "pt-BR"}))
    assert "Art. 4, I: Ofício GG 1/1991" in case and "art-4-I:" not in case
